#!/usr/bin/env bash
# An etcd 3.5 binary (with its etcdctl beside it) from Debian trixie, for running the suites on 3.5
# while the system keeps its own etcd (3.4 on bookworm). Executed, it prints the path of `etcd`;
# sourced, it defines etcd35_binary, which prints the same path.
#
#   DISCO_ETCD_BINARY=$(scripts/etcd-3.5.sh) mvn -B -o test -pl disco-guard -am
#
# The first run keeps a PRIVATE apt folder (its own sources.list, lists, cache and status file) under
# ${DISCO_ETCD35_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disco/apt-<suite>}, runs `apt-get update` on
# that one suite only (trixie by default), `apt-get download etcd-server etcd-client` and `dpkg-deb -x` into root/ there.
# The system's apt state (/etc/apt/sources.list*, /var/lib/apt, /var/cache/apt, dpkg's status) and
# the installed etcd are never touched. A later run finds the binary in the cache and does no network
# access; delete the folder to fetch again. Fails with a message when apt or the network is missing.
#
# DISCO_ETCD35_SUITE (default trixie; sid carries a later 3.5, in a folder of its own) and DISCO_ETCD35_MIRROR
# choose the source. The mirror defaults to the one this machine's apt already uses for the main Debian
# archive (etcd35_system_mirror: the URIs of /etc/apt/sources.list.d/*.sources, the deb lines of
# /etc/apt/sources.list and sources.list.d/*.list); this repository names no mirror.

# The URI of the first enabled `deb` source of apt's configuration under ${1:-/etc/apt} that serves the main
# Debian archive: component main and a Debian release as suite (bookworm, trixie, sid, stable, ... and their
# -updates/-backports; not -security, which is another archive). apt's own order: sources.list, then
# sources.list.d/ by name; files of other extensions (*.disabled, *.save) are not apt's and are skipped.
etcd35_system_mirror() {
  local etc=${1:-/etc/apt}
  local releases='buster|bullseye|bookworm|trixie|forky|duke|sid|oldoldstable|oldstable|stable|testing|unstable'
  local files=() f
  [ -f "$etc/sources.list" ] && files+=("$etc/sources.list")
  for f in "$etc"/sources.list.d/*.list "$etc"/sources.list.d/*.sources; do
    [ -f "$f" ] && files+=("$f")
  done
  [ ${#files[@]} -gt 0 ] || return 1
  # sort sources.list.d/ by file name across both extensions, as apt reads it
  local sorted
  sorted=$(for f in "${files[@]}"; do
    case $f in "$etc/sources.list") printf '0 %s\n' "$f" ;; *) printf '1 %s\n' "$f" ;; esac
  done | LC_ALL=C sort | cut -d' ' -f2-)
  local uri
  uri=$(while IFS= read -r f; do
    case $f in
      *.sources)
        # deb822: paragraphs of Field: value lines; a continuation line starts with a blank, a comment with #
        awk -v releases="^($releases)(-updates|-backports|-proposed-updates)?\$" '
          function flush() {
            if (!found && types ~ /(^| )deb( |$)/ && comps ~ /(^| )main( |$)/ && enabled !~ /^(no|false)$/ && uris != "") {
              n = split(suites, s, " ")
              for (i = 1; i <= n; i++) if (s[i] ~ releases) { split(uris, u, " "); print u[1]; found = 1; exit }
            }
            types = ""; uris = ""; suites = ""; comps = ""; enabled = ""
          }
          /^[ \t]*$/ { flush(); next }
          /^#/ || /^[ \t]/ { next }
          {
            field = tolower($1); sub(/:$/, "", field); value = $0; sub(/^[^:]*:[ \t]*/, "", value)
            if (field == "types") types = value
            else if (field == "uris") uris = value
            else if (field == "suites") suites = value
            else if (field == "components") comps = value
            else if (field == "enabled") enabled = tolower(value)
          }
          END { flush() }' "$f" ;;
      *)
        # one-line: deb [options] uri suite component...
        awk -v releases="^($releases)(-updates|-backports|-proposed-updates)?\$" '
          { sub(/#.*/, "") }
          $1 == "deb" {
            i = 2
            if ($i ~ /^\[/) { while (i <= NF && $i !~ /\]$/) i++; i++ }
            uri = $i; suite = $(i + 1); main = 0
            for (j = i + 2; j <= NF; j++) if ($j == "main") main = 1
            if (main && suite ~ releases) { print uri; exit }
          }' "$f" ;;
    esac
  done <<<"$sorted" | head -1)
  [ -n "$uri" ] || return 1
  echo "${uri%/}"
}

# The mirror to fetch from: DISCO_ETCD35_MIRROR, else etcd35_system_mirror's (a message and exit 1 when none).
etcd35_mirror() {
  if [ -n "${DISCO_ETCD35_MIRROR:-}" ]; then
    echo "$DISCO_ETCD35_MIRROR"
  elif ! etcd35_system_mirror; then
    echo "etcd-3.5: found no source of the main Debian archive in this machine's apt configuration" >&2
    echo "          (/etc/apt/sources.list, /etc/apt/sources.list.d/*.sources and *.list): set DISCO_ETCD35_MIRROR" >&2
    echo "          to a Debian mirror's URL (its .../debian directory), or bring an etcd 3.5: DISCO_ETCD_BINARY=/path/to/etcd" >&2
    return 1
  fi
}

etcd35_binary() {
  local suite=${DISCO_ETCD35_SUITE:-trixie}
  local root=${DISCO_ETCD35_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disco/apt-$suite}
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  local etcd=$root/root/usr/bin/etcd
  if [ -x "$etcd" ] && [ -x "$root/root/usr/bin/etcdctl" ] && "$etcd" --version >/dev/null 2>&1; then
    echo "$etcd"
    return 0
  fi
  local mirror
  mirror=$(etcd35_mirror) || return 1
  local tool
  for tool in apt-get dpkg-deb; do
    if ! command -v "$tool" >/dev/null 2>&1; then
      echo "etcd-3.5: $tool is missing: this script fetches Debian's etcd-server package with apt." >&2
      echo "          Bring an etcd 3.5 binary of your own instead: DISCO_ETCD_BINARY=/path/to/etcd" >&2
      return 1
    fi
  done
  if [ ! -r "$keyring" ]; then
    echo "etcd-3.5: $keyring is missing (apt-get install debian-archive-keyring)" >&2
    return 1
  fi
  mkdir -p "$root/etc/sources.list.d" "$root/etc/preferences.d" "$root/state/lists/partial" \
    "$root/cache/archives/partial" "$root/debs" || return 1
  echo "deb [signed-by=$keyring] $mirror $suite main" >"$root/etc/sources.list"
  : >"$root/state/status"
  # Every apt path that holds state is redirected into $root; the system's apt.conf.d (proxies,
  # Check-Valid-Until) still applies. Root's apt hands downloads to the _apt user, who cannot write
  # into a private folder under $HOME: the sandbox user stays the caller.
  local apt=(apt-get -q
    -o "Dir::Etc::SourceList=$root/etc/sources.list"
    -o "Dir::Etc::SourceParts=$root/etc/sources.list.d"
    -o "Dir::Etc::Preferences=$root/etc/preferences"
    -o "Dir::Etc::PreferencesParts=$root/etc/preferences.d"
    -o "Dir::State=$root/state"
    -o "Dir::State::Lists=$root/state/lists"
    -o "Dir::State::status=$root/state/status"
    -o "Dir::Cache=$root/cache"
    -o "Dir::Cache::Archives=$root/cache/archives"
    -o "Dir::Cache::pkgcache=" -o "Dir::Cache::srcpkgcache="
    -o "APT::Sandbox::User=$(id -un)"
    -o "Debug::NoLocking=true")
  echo "etcd-3.5: fetching etcd-server and etcd-client from Debian $suite ($mirror) into $root" >&2
  if ! "${apt[@]}" update >"$root/apt-update.log" 2>&1 || grep -q '^[WE]:' "$root/apt-update.log"; then
    echo "etcd-3.5: apt-get update on $mirror $suite failed (no network, or no mirror reachable):" >&2
    sed 's/^/          /' "$root/apt-update.log" >&2
    return 1
  fi
  rm -f "$root"/debs/*.deb
  if ! (cd "$root/debs" && "${apt[@]}" download etcd-server etcd-client) >"$root/apt-download.log" 2>&1; then
    echo "etcd-3.5: apt-get download etcd-server etcd-client failed:" >&2
    sed 's/^/          /' "$root/apt-download.log" >&2
    return 1
  fi
  rm -rf "$root/root.new"
  local deb
  for deb in "$root"/debs/*.deb; do
    dpkg-deb -x "$deb" "$root/root.new" || return 1
  done
  rm -rf "$root/root" && mv "$root/root.new" "$root/root" || return 1
  rm -rf "$root"/state/lists/*_*   # the indexes (about 60 MB) are only needed to download
  if ! "$etcd" --version >/dev/null 2>&1; then
    echo "etcd-3.5: $etcd does not run on this system:" >&2
    "$etcd" --version >&2
    return 1
  fi
  echo "etcd-3.5: $("$etcd" --version | head -1) from $(cd "$root/debs" && ls *.deb | tr '\n' ' ')" >&2
  echo "$etcd"
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -euo pipefail
  etcd35_binary
fi
