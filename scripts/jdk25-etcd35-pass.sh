#!/usr/bin/env bash
# The second pass of `./test`: the core suites once more, on JDK 25 and against etcd 3.5, while the main
# suite runs on the build's JDK (17) and the system's etcd (3.4 on Debian bookworm). Each axis is
# covered on its own (JDK 17 x etcd 3.4 everything, JDK 25 x etcd 3.5 the core), which costs one extra
# pass instead of three.
#
#   scripts/jdk25-etcd35-pass.sh [path/to/etcd]
#
# The etcd binary is the argument, else DISCO_ETCD35_BINARY, else the one scripts/etcd-3.5.sh fetches
# from Debian trixie (cached after the first run). Any etcd works (`scripts/jdk25-etcd35-pass.sh
# ~/etcd-v3.6.5/etcd` runs the same pass on 3.6); etcdctl is taken from beside it, else from PATH.
# The JDK is DISCO_JDK25, else /usr/lib/jvm/temurin-25-jdk-amd64 (the build's own JDK 25 setting).
#
# What it runs, in one Maven build and one fault run (about 4 minutes on 2 idle cores):
#   - the API modules' and the guard's tests (disco-fencing, disco-core, disco-guard: on JDK 25; none
#     of them starts etcd);
#   - the provider contract (Etcd*ContractTest: lock, fenced lock, read/write lock, semaphore, election,
#     leadership runner, owner, and the same through the client), the guard against real etcd
#     (IssuedBoundEtcdTest) and a member killed under a held lock (ClusterFaultTest);
#   - the interop tests (*InteropTest: etcd's Go recipes through `go run`, and etcdctl; among them every
#     etcdctl recipe of docs/operations.md, run with the etcdctl beside the 3.5 binary: OperationsRunbookInteropTest);
#   - a 40 s fault run of the lock workload with a fixed seed, its owners on JDK 25, dealing the faults
#     whose handling is the server's (leader killed and frozen, compaction, split cluster, a frozen
#     owner whose lease must expire); it fails on any safety violation, and when no fault was dealt.
# Extra arguments for Maven go in MAVEN_ARGS (e.g. MAVEN_ARGS=-o).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/etcd-3.5.sh

etcd=${1:-${DISCO_ETCD35_BINARY:-}}
if [ -z "$etcd" ]; then
  etcd=$(etcd35_binary)
fi
# The whole output, then its first line: with pipefail, `| head -1` failed whenever head closed the pipe
# before etcd had written its later lines (SIGPIPE), and a good binary was reported as not etcd.
if ! version=$("$etcd" --version 2>&1) || version=${version%%$'\n'*} && [ "${version#etcd Version:}" = "$version" ]; then
  echo "jdk25-etcd35-pass: $etcd does not run as etcd: $version" >&2
  exit 2
fi
jdk=${DISCO_JDK25:-/usr/lib/jvm/temurin-25-jdk-amd64}
if ! jversion=$("$jdk/bin/java" -version 2>&1) || jversion=${jversion%%$'\n'*} && [[ "$jversion" != *'"25'* ]]; then
  echo "jdk25-etcd35-pass: no JDK 25 at $jdk ($jversion); install one (Eclipse Temurin 25) or set DISCO_JDK25" >&2
  exit 2
fi
export DISCO_ETCD_BINARY=$etcd
unset DISCO_ETCD_ENDPOINTS
echo "[jdk25-etcd35-pass] $version at $etcd; $jversion at $jdk" >&2

start=$SECONDS
# shellcheck disable=SC2086 # MAVEN_ARGS is word-split on purpose
mvn -B ${MAVEN_ARGS:-} -pl disco-provider-etcd -am test -Djavadoc.skip=true \
  -Djvm="$jdk/bin/java" -Dsurefire.failIfNoSpecifiedTests=false \
  -Dtest='io/disco/fencing/**/*Test,io/disco/core/**/*Test,Etcd*ContractTest,*InteropTest,IssuedBoundEtcdTest,ClusterFaultTest'
echo "[jdk25-etcd35-pass] suites passed on $version and $jversion in $((SECONDS - start)) s" >&2

start=$SECONDS
log=$(mktemp)
trap 'rm -f "$log"' EXIT
DISCO_JAVA="$jdk/bin/java" ./chaos --workload lock --seconds 40 --seed 20261205 --faults freeze-owner,kill-member,freeze-member,compact,split-cluster \
  | tee "$log"
# A run that dealt no fault proves nothing (a loaded machine deals fewer): count the table's fault rows.
dealt=$(awk '/^faults: / { sub(/ \([0-9]+\)$/, ""); n += $NF } END { print n + 0 }' "$log")
if [ "$dealt" -eq 0 ]; then
  echo "jdk25-etcd35-pass: the fault run dealt no fault" >&2
  exit 1
fi
echo "[jdk25-etcd35-pass] fault run passed on $version in $((SECONDS - start)) s, $dealt faults dealt" >&2
