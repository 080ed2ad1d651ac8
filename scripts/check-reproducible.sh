#!/usr/bin/env bash
# Reproducible builds: builds the committed tree (HEAD, or the commit given) twice, each time clean in
# its own folder, and compares every jar of the published modules byte for byte (sha256): the main,
# sources and javadoc jars of `mvn -o -Prelease package -Dmaven.test.skip=true`. On a mismatch it
# prints the entries that differ (scripts/JarDiff.java) and exits 1.
#
#   scripts/check-reproducible.sh [COMMIT]
#
# What makes them equal: project.build.outputTimestamp in the parent POM (every archive entry gets that
# time, in a fixed order), javadoc without its generation date. The two folders have different paths,
# so a build that writes its own path into a jar fails here too. Uses target/reproducible/.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
commit=$(git rev-parse --verify "${1:-HEAD}^{commit}")
tools=$(sed -n '/<excludeArtifacts>/,/<\/excludeArtifacts>/s/.*<artifact>\(.*\)<\/artifact>.*/\1/p' pom.xml \
  | grep -v '^disco-parent$' | tr '\n' ' ')
excluded=""
for t in $tools; do excluded="$excluded,!$t"; done

work=$root/target/reproducible
rm -rf "$work"
start=$SECONDS
for build in first second-build; do
  mkdir -p "$work/$build"
  git archive "$commit" | tar -x -C "$work/$build"
  (cd "$work/$build" && mvn -B -o -q -Prelease -Dmaven.test.skip=true -pl "${excluded#,}" package) \
    >"$work/$build.log" 2>&1 || { tail -40 "$work/$build.log" >&2; echo "check-reproducible: build '$build' failed" >&2; exit 1; }
done

passed=0 failed=0
while IFS= read -r jar; do
  other=$work/second-build/$jar
  if [ ! -f "$other" ]; then
    echo "check-reproducible: $jar is missing from the second build"; failed=$((failed + 1)); continue
  fi
  a=$(sha256sum "$work/first/$jar" | cut -d' ' -f1)
  b=$(sha256sum "$other" | cut -d' ' -f1)
  if [ "$a" = "$b" ]; then
    passed=$((passed + 1))
  else
    echo "check-reproducible: $jar differs ($a vs $b):"
    java "$root/scripts/JarDiff.java" "$work/first/$jar" "$other" | sed 's/^/    /'
    failed=$((failed + 1))
  fi
done < <(cd "$work/first" && find . -path '*/target/*' -maxdepth 3 -name '*.jar' | sed 's#^\./##' | sort)

echo "check-reproducible: commit ${commit:0:12}, two clean builds in $((SECONDS - start)) s, jars of: $(cd "$work/first" && find . -maxdepth 3 -path '*/target/*' -name '*.jar' | cut -d/ -f2 | sort -u | tr '\n' ' ')"
echo "check-reproducible: $passed passed, $failed failed"
[ "$passed" -gt 0 ] && [ "$failed" -eq 0 ]
