#!/usr/bin/env bash
# ./demo is not silent while it builds (issue 51, item 10): it runs Maven without -q through
# scripts/maven-progress.sh, which prints one line per module as Maven starts it, a notice when Maven downloads
# (the first build on a machine), and the time the build took. Run by ./test before its Maven build (a few
# seconds: one real, short Maven build of two modules through the same filter).
set -euo pipefail
cd "$(dirname "$0")/.."
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
fail() {
  echo "check-demo-progress: $*" >&2
  exit 1
}

# ./demo builds through the filter, and says before it that the first run is slow
grep -q '| scripts/maven-progress.sh demo ' demo || fail "./demo does not build through scripts/maven-progress.sh"
if grep -Eq '^[^#]*mvn [^|]*-q( |$)' demo; then
  fail "./demo runs Maven with -q: its build is silent"
fi
grep -q 'the first run on a machine' demo || fail "./demo does not say that its first run is slow"

# a real Maven build: a line per module, in order, and the time at the end
mvn -B -Dstyle.color=never -pl disco-fencing,disco-core validate 2>&1 \
  | scripts/maven-progress.sh check "$work/maven.log" 2>"$work/progress" || fail "mvn validate failed: $(tail -20 "$work/maven.log")"
grep -Eq '^check: \[1/2\] disco-fencing, [0-9]+ s$' "$work/progress" \
  && grep -Eq '^check: \[2/2\] disco-core, [0-9]+ s$' "$work/progress" \
  && grep -Eq '^check: built in [0-9]+ s' "$work/progress" \
  || fail "no progress of a real Maven build; it printed: $(cat "$work/progress")"
grep -q 'BUILD SUCCESS' "$work/maven.log" || fail "Maven's output is not kept in the log"

# a first build on a machine, in Maven's words: the download notice once, then a count every 100 files
{
  echo '[INFO] Scanning for projects...'
  for i in $(seq 1 100); do
    echo "[INFO] Downloading from central: repository/org/example/a$i/1.0/a$i-1.0.pom"
    echo "[INFO] Downloaded from central: repository/org/example/a$i/1.0/a$i-1.0.pom (2 kB at 10 kB/s)"
  done
  echo '[INFO] BUILD SUCCESS'
} | scripts/maven-progress.sh check "$work/maven.log" 2>"$work/progress"
[ "$(grep -c 'downloading dependencies and plugins' "$work/progress")" -eq 1 ] \
  && grep -Eq '^check:   100 files downloaded, [0-9]+ s$' "$work/progress" \
  && grep -Eq '^check: built in [0-9]+ s \(100 files downloaded\)$' "$work/progress" \
  || fail "no notice of Maven's downloads; it printed: $(cat "$work/progress")"
echo "check-demo-progress: ./demo shows its build's progress" >&2
