#!/usr/bin/env bash
# Stages a release of every published module into a local folder, signed with a throwaway key, and
# checks it as the Central Portal would. Nothing is uploaded anywhere.
#
#   scripts/stage-release.sh [VERSION]      (default: the project's version without -SNAPSHOT)
#
# The working tree (tracked and untracked files, not ignored ones) is copied to target/stage-release/src
# with the version set to VERSION, and built there with `mvn -Prelease deploy -DskipUpload=true
# -Dmaven.install.skip=true` (nothing reaches ~/.m2 or the network; tests are not compiled: ./test runs
# them): sources and javadoc jars, flattened POMs, .asc signatures made with an ed25519 key generated in
# a temporary GNUPGHOME (deleted afterwards), and central-publishing-maven-plugin's bundle with .md5
# and .sha1 files. scripts/StageCheck.java then checks every staged artifact (see there).
# The staged folder is target/stage-release/src/target/central-staging; the bundle, the zip beside it.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

. scripts/ensure-etcd.sh
ensure_etcd stage-release gpg:gnupg gpg-agent:gnupg

project_version=$(sed -n '/<artifactId>disco-parent<\/artifactId>/{n;s/.*<version>\(.*\)<\/version>.*/\1/p;q}' pom.xml)
version=${1:-${project_version%-SNAPSHOT}}
case $version in *SNAPSHOT*|'') echo "stage-release: '$version' is not a release version" >&2; exit 1 ;; esac
# The tools the release leaves out: excludeArtifacts of the release profile, but the parent itself.
tools=$(sed -n '/<excludeArtifacts>/,/<\/excludeArtifacts>/s/.*<artifact>\(.*\)<\/artifact>.*/\1/p' pom.xml \
  | grep -v '^disco-parent$' | tr '\n' ' ')

work=$root/target/stage-release
rm -rf "$work"
mkdir -p "$work/src"
git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | tar -C "$root" --null -T - -cf - | tar -C "$work/src" -xf -
find "$work/src" -name pom.xml -exec sed -i "s#<version>$project_version</version>#<version>$version</version>#" {} +

export GNUPGHOME
GNUPGHOME=$(mktemp -d)
cleanup() {
  gpgconf --kill gpg-agent >/dev/null 2>&1 || true   # the agent of this GNUPGHOME only
  rm -rf "$GNUPGHOME"
}
trap cleanup EXIT
gpg --batch --quiet --pinentry-mode loopback --passphrase '' \
  --quick-generate-key 'disco stage-release (throwaway key) <stage-release@disco.invalid>' ed25519 sign 1d 2>/dev/null
key=$(gpg --batch --with-colons --list-secret-keys 2>/dev/null | awk -F: '/^fpr:/ {print $10; exit}')

excluded=""
for t in $tools; do excluded="$excluded,!$t"; done
echo "stage-release: building $version of the published modules (not: $tools) into $work/src/target/central-staging"
start=$SECONDS
# Not offline (-o): the publish goal refuses to run offline, even to only make the bundle. Every
# dependency and plugin is a release already in the local repository, so nothing is fetched.
(cd "$work/src" && mvn -B -q -Prelease -Dmaven.test.skip=true -Dmaven.install.skip=true -DskipUpload=true \
  -Dgpg.keyname="$key" -pl "${excluded#,}" deploy) >"$work/build.log" 2>&1 || {
  tail -50 "$work/build.log" >&2; echo "stage-release: the release build failed (log: $work/build.log)" >&2; exit 1; }
echo "stage-release: built and signed in $((SECONDS - start)) s"

java "$root/scripts/StageCheck.java" "$work/src/target/central-staging" "$work/src/disco-bom/pom.xml" "$version" "$tools"
