# Sourced by ./demo, ./test and ./bench: makes sure the etcd binaries they need are there (and, for
# ./test, the other servers its suites start: PostgreSQL, Redis's redis-server and redis-cli).
#
# ensure_etcd WHO BINARY:PACKAGE...
#   BINARY is a command name, or an absolute path that the package installs (for packages without
#   a command, such as Go sources); a path may be a glob (PostgreSQL's initdb lies under
#   /usr/lib/postgresql/<version>/bin).
#   For each missing binary (unless DISCO_ETCD_ENDPOINTS or DISCO_ETCD_BINARY points elsewhere),
#   installs its Debian package when running as root with apt-get; otherwise says how to install it
#   and returns 1.
ensure_etcd() {
  local who=$1; shift
  local missing=()
  local pair
  for pair in "$@"; do
    local bin=${pair%%:*} pkg=${pair#*:}
    if [ "$bin" = etcd ] && { [ -n "${DISCO_ETCD_ENDPOINTS:-}" ] || [ -n "${DISCO_ETCD_BINARY:-}" ]; }; then
      continue
    fi
    if [ "${bin#/}" != "$bin" ]; then
      compgen -G "$bin" >/dev/null || missing+=("$pkg")
    else
      command -v "$bin" >/dev/null 2>&1 || missing+=("$pkg")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "$who: installing the Debian packages ${missing[*]}" >&2
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
  else
    echo "$who: missing ${missing[*]}. Install them (Debian/Ubuntu: sudo apt-get install ${missing[*]})," >&2
    echo "      or set DISCO_ETCD_BINARY to an etcd binary, or DISCO_ETCD_ENDPOINTS to a running cluster." >&2
    return 1
  fi
}
