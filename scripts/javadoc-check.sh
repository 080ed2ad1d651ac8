#!/usr/bin/env bash
# The aggregated Javadoc of every published module, built offline with every doclint check on and any
# warning failing it (the parent POM's `apidocs` profile: missing comments, @param/@return/@throws,
# broken {@link}s, HTML errors). The tool modules and the consumer projects of the reactor (the
# profile's skippedModules) are left out of the build. On success it prints where the HTML is; on
# failure, the warnings and errors, and it exits 1.
#
#   scripts/javadoc-check.sh [extra Maven arguments]
#
# Takes about 1.5 minutes on 2 cores (it compiles the published modules, then runs javadoc once).
# Output: target/reports/apidocs/index.html; Maven's log in target/javadoc-check.log.
set -euo pipefail
cd "$(dirname "$0")/.."
skipped=$(sed -n 's/.*<skippedModules>\(.*\)<\/skippedModules>.*/\1/p' pom.xml)
[ -n "$skipped" ] || { echo "javadoc-check: no <skippedModules> in pom.xml's apidocs profile" >&2; exit 1; }
excluded=""
for m in ${skipped//,/ }; do excluded="$excluded,!$m"; done

mkdir -p target
log=target/javadoc-check.log
start=$SECONDS
if ! mvn -B -o -Papidocs -pl "${excluded#,}" "$@" javadoc:aggregate >"$log" 2>&1; then
  grep -E '\.java:[0-9]+: (warning|error)|^\[ERROR\]' "$log" | sed 's/^\[[A-Z]*\] //' | head -200 >&2 || true
  echo "javadoc-check: the aggregated Javadoc has warnings or errors (above; the whole log: $log)" >&2
  exit 1
fi
echo "javadoc-check: no warnings ($((SECONDS - start)) s); the API documentation: $(pwd)/target/reports/apidocs/index.html"
