#!/usr/bin/env bash
# No package mirror's or registry's host name in the repository (issue 51, item 9): what the build and the
# scripts download comes from where the machine is configured to get it (apt's sources, Maven's settings),
# never from a host written here. Run by ./test before Maven (about a second); exits 1 naming each file, line
# and host found.
#
# Then it checks that scripts/etcd-3.5.sh takes its Debian mirror from apt's configuration: its
# etcd35_system_mirror against made-up configurations in a temporary folder (deb822 .sources files, one-line
# .list files, disabled and foreign sources), and that DISCO_ETCD35_MIRROR still overrides it.
#
# Placeholders are fine: example.com-style names (example.com, .org, .net, *.example, *.test, *.invalid) and
# loopback. Container image references (a registry host in an image name) are not checked here.
set -euo pipefail
cd "$(dirname "$0")/.."

# Host names of package mirrors and registries, as extended regular expressions (matched case-insensitively).
# The dots are escaped, so this file itself names none of them.
hosts=(
  '([a-z0-9-]+\.)*debian\.(org|net)'                         # Debian's archive, its CDN, mirrors, security, snapshots
  '([a-z0-9-]+\.)*ubuntu\.com'                               # Ubuntu's archive and ports
  '([a-z0-9-]+\.)*(alpinelinux|archlinux|fedoraproject|centos|rockylinux|almalinux|opensuse)\.org'
  '(^|[^a-z0-9.-])(mirror|mirrors|ftp)[0-9]*\.([a-z0-9-]+\.)+[a-z]{2,}'   # mirror.<anything>, ftp.<anything>
  'repo[0-9]*\.maven\.(org|apache\.org)'                     # Maven Central
  '([a-z0-9-]+\.)*(oss\.)?sonatype\.(org|com)'               # Central's publishing hosts
  '(repository\.apache\.org|repo\.spring\.io|jitpack\.io|plugins\.gradle\.org|maven\.google\.com|jcenter\.bintray\.com)'
  '(proxy|sum)\.golang\.org|goproxy\.(io|cn)'                # Go module proxies
  '(registry\.npmjs\.org|registry\.yarnpkg\.com|pypi\.org|files\.pythonhosted\.org|rubygems\.org|([a-z]+\.)?crates\.io)'
  '(download\.docker\.com|packages\.cloud\.google\.com|deb\.nodesource\.com|apt\.postgresql\.org|packages\.adoptium\.net|apt\.corretto\.aws)'
)
# apt source lines with a URL, whatever the host
sources='^[[:space:]]*(deb|deb-src)[[:space:]]+(\[[^]]*\][[:space:]]+)?[a-z+]+:[^[:space:]]+|^[[:space:]]*URIs:[[:space:]]*[a-z+]+:[^[:space:]]+'
placeholder='example\.(com|org|net)|\.example([^a-z0-9-]|$)|\.(test|invalid)([^a-z0-9-]|$)|localhost|127\.0\.0\.1|\[::1\]'

if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  mapfile -t files < <(git ls-files -co --exclude-standard)
else
  mapfile -t files < <(find . -type f -not -path '*/target/*' -not -path './.git/*' | sed 's#^\./##')
fi
found=0
for pattern in "${hosts[@]}" "$sources"; do
  while IFS= read -r hit; do
    [ -n "$hit" ] || continue
    if grep -Eqi -- "$placeholder" <<<"$hit"; then
      continue
    fi
    echo "check-hosts: $hit" >&2
    found=1
  done < <(printf '%s\0' "${files[@]}" | xargs -0 grep -EnoiI -- "$pattern" 2>/dev/null || true)
done
if [ "$found" -ne 0 ]; then
  echo "check-hosts: a package mirror's or registry's host name is written in the repository (above: file:line:match)." >&2
  echo "             Take it from the machine instead (apt's sources, Maven's settings, an environment variable)." >&2
  exit 1
fi

# ---- scripts/etcd-3.5.sh takes its mirror from apt's configuration
. scripts/etcd-3.5.sh
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
expect() { # expect NAME WANTED: etcd35_system_mirror on $work/NAME prints WANTED ('' for: finds none, exit 1)
  local got rc=0
  got=$(etcd35_system_mirror "$work/$1") || rc=$?
  if [ -z "$2" ] && [ "$rc" -ne 0 ] && [ -z "$got" ]; then
    return 0
  fi
  if [ "$rc" -ne 0 ] || [ "$got" != "$2" ]; then
    echo "check-hosts: etcd35_system_mirror on the $1 configuration: got '$got' (exit $rc), wanted '${2:-nothing, exit 1}'" >&2
    failures=$((failures + 1))
  fi
}
mkdir -p "$work"/{deb822,oneline,order,disabled,foreign,none}/sources.list.d

# deb822, as Debian 12 writes it: a comment, the main archive with -updates, then the security archive
cat >"$work/deb822/sources.list.d/debian.sources" <<'EOF'
Types: deb
# the snapshot this image was built from
URIs: http://apt.example.com/debian
Suites: bookworm bookworm-updates
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg

Types: deb
URIs: http://security.example.com/debian-security
Suites: bookworm-security
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
EOF
# a third-party deb822 source sorted first (its suite is no Debian release), and a disabled copy apt ignores
cat >"$work/deb822/sources.list.d/000-vendor.sources" <<'EOF'
Types: deb
URIs: https://vendor.example.com/node_20.x
Suites: nodistro
Components: main
EOF
cat >"$work/deb822/sources.list.d/000-old.sources.disabled" <<'EOF'
Types: deb
URIs: http://old.example.com/debian
Suites: bookworm
Components: main
EOF
expect deb822 http://apt.example.com/debian

# one-line sources.list: comments, deb-src, options in brackets, a trailing slash
cat >"$work/oneline/sources.list" <<'EOF'
# deb http://commented.example.com/debian bookworm main
deb-src http://src.example.com/debian bookworm main
deb http://security.example.com/debian-security bookworm-security main
deb [arch=amd64 signed-by=/usr/share/keyrings/debian-archive-keyring.gpg] http://apt.example.org/debian/ bookworm main contrib
EOF
expect oneline http://apt.example.org/debian

# apt's order: sources.list first, then sources.list.d/ by name, .list and .sources alike; Enabled: no skipped
printf 'deb https://vendor.example.com/apt cloud-sdk main\n' >"$work/order/sources.list"
printf 'Types: deb\nURIs: http://off.example.com/debian\nSuites: trixie\nComponents: main\nEnabled: no\n' \
  >"$work/order/sources.list.d/10-off.sources"
printf 'deb http://first.example.com/debian trixie main\n' >"$work/order/sources.list.d/20-first.list"
printf 'Types: deb\nURIs: http://second.example.com/debian\nSuites: trixie\nComponents: main\n' \
  >"$work/order/sources.list.d/30-second.sources"
expect order http://first.example.com/debian

# an archive without main, and a machine whose apt knows no Debian release (another distribution): none
printf 'deb http://apt.example.com/debian bookworm contrib\n' >"$work/disabled/sources.list"
printf 'deb http://archive.example.com/ubuntu jammy main\n' >"$work/foreign/sources.list"
expect disabled ''
expect foreign ''
expect none ''

# DISCO_ETCD35_MIRROR overrides apt's configuration; without it, etcd35_binary fetches from apt's mirror
if [ "$(DISCO_ETCD35_MIRROR=http://127.0.0.1:9/debian etcd35_mirror)" != http://127.0.0.1:9/debian ]; then
  echo "check-hosts: DISCO_ETCD35_MIRROR does not override the mirror" >&2
  failures=$((failures + 1))
fi
if [ "$(DISCO_ETCD35_MIRROR='' etcd35_mirror 2>/dev/null)" != "$(etcd35_system_mirror)" ]; then
  echo "check-hosts: without DISCO_ETCD35_MIRROR, etcd35_mirror is not apt's mirror" >&2
  failures=$((failures + 1))
fi
if ! grep -q 'mirror=$(etcd35_mirror)' scripts/etcd-3.5.sh; then
  echo "check-hosts: etcd35_binary does not take its mirror from etcd35_mirror" >&2
  failures=$((failures + 1))
fi
if [ "$failures" -ne 0 ]; then
  exit 1
fi
system=$(etcd35_system_mirror) || system="none (set DISCO_ETCD35_MIRROR for scripts/etcd-3.5.sh)"
echo "check-hosts: no mirror or registry host in ${#files[@]} files; apt's Debian mirror here: $system" >&2
