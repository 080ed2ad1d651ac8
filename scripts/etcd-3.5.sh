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
# (default http://deb.debian.org/debian) choose the source.

etcd35_binary() {
  local suite=${DISCO_ETCD35_SUITE:-trixie}
  local root=${DISCO_ETCD35_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/disco/apt-$suite}
  local mirror=${DISCO_ETCD35_MIRROR:-http://deb.debian.org/debian}
  local keyring=/usr/share/keyrings/debian-archive-keyring.gpg
  local etcd=$root/root/usr/bin/etcd
  if [ -x "$etcd" ] && [ -x "$root/root/usr/bin/etcdctl" ] && "$etcd" --version >/dev/null 2>&1; then
    echo "$etcd"
    return 0
  fi
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
