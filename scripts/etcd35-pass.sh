#!/usr/bin/env bash
# The etcd 3.5 pass: the suites whose tests talk to etcd, run once more on an etcd 3.5 binary while the
# main suite runs on the system's etcd (3.4 on Debian bookworm).
#
#   scripts/etcd35-pass.sh [path/to/etcd]
#
# The binary is the argument, else DISCO_ETCD35_BINARY, else the one scripts/etcd-3.5.sh fetches from
# Debian trixie (cached after the first run). Any etcd works (`scripts/etcd35-pass.sh ~/etcd-v3.6.5/etcd`
# runs the same pass on 3.6); etcdctl is taken from beside it, else from PATH.
#
# What it runs, in one Maven build and one fault run (4 to 6 minutes measured on 2 cores shared with
# other builds, load 20 to 40: about 3 to 4 for Maven, 1.5 for the fault run with its build):
#   - the provider contract (Etcd*ContractTest: lock, fenced lock, read/write lock, semaphore, election,
#     leadership runner, owner, and the same through the client), the guard against real etcd
#     (IssuedBoundEtcdTest) and a member killed under a held lock (ClusterFaultTest);
#   - the interop tests (*InteropTest: etcd's Go recipes through `go run`, and etcdctl);
#   - a 40 s fault run of the lock workload with a fixed seed, dealing the faults whose handling is
#     the server's (leader killed and frozen, compaction, split cluster, a frozen owner whose lease must
#     expire); it fails on any safety violation, and when no fault was dealt.
# disco-fencing, disco-core and disco-guard are not run again: none of their tests starts etcd.
# Extra arguments for Maven go in MAVEN_ARGS (e.g. MAVEN_ARGS=-o).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/etcd-3.5.sh

etcd=${1:-${DISCO_ETCD35_BINARY:-}}
if [ -z "$etcd" ]; then
  etcd=$(etcd35_binary)
fi
if ! version=$("$etcd" --version 2>&1 | head -1) || [ "${version#etcd Version:}" = "$version" ]; then
  echo "etcd35-pass: $etcd does not run as etcd: $version" >&2
  exit 2
fi
export DISCO_ETCD_BINARY=$etcd
unset DISCO_ETCD_ENDPOINTS
echo "[etcd35-pass] $version at $etcd" >&2

start=$SECONDS
# shellcheck disable=SC2086 # MAVEN_ARGS is word-split on purpose
mvn -B ${MAVEN_ARGS:-} -pl disco-provider-etcd -am test -Djavadoc.skip=true \
  -Dtest='Etcd*ContractTest,*InteropTest,IssuedBoundEtcdTest,ClusterFaultTest' -Dsurefire.failIfNoSpecifiedTests=false
echo "[etcd35-pass] suites passed on $version in $((SECONDS - start)) s" >&2

start=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
./chaos --workload lock --seconds 40 --seed 20261205 --faults freeze-owner,kill-member,freeze-member,compact,split-cluster \
  | tee "$log"
# A run that dealt no fault proves nothing (a loaded machine deals fewer): count the table's fault rows.
dealt=$(awk '/^faults: / { sub(/ \([0-9]+\)$/, ""); n += $NF } END { print n + 0 }' "$log")
if [ "$dealt" -eq 0 ]; then
  echo "etcd35-pass: the fault run dealt no fault" >&2
  exit 1
fi
echo "[etcd35-pass] fault run passed on $version in $((SECONDS - start)) s, $dealt faults dealt" >&2
