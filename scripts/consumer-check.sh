#!/usr/bin/env bash
# Builds consumer projects outside the reactor the way the README's "Use it" tells a user to, and runs
# each against a throwaway etcd: each takes a lock and prints its token.
#
#   scripts/consumer-check.sh [VERSION]      (VERSION: the staged release's, default the project's
#                                             version without -SNAPSHOT; scripts/stage-release.sh first)
#
# First the README's install step: a copy of this working tree (tracked and untracked files, as
# scripts/stage-release.sh copies it) built with the README's command (install_args below: `mvn -B
# install -Dmaven.test.skip=true -pl <all but the tools>`, -T 2 added) into the consumers' local repository; the consumers then use the README's
# coordinates, io.disco:disco-bom at the poms' version (0.1.0-SNAPSHOT).
#
# - scripts/consumer/plain: disco-bom and Netty's BOM imported (as the README says), disco-client and
#   disco-provider-etcd, no parent; EtcdProvider.disco(...), a lock, its token. Every Netty artifact on
#   its classpath must be the Netty BOM's version and gRPC one version (jetcd's). Built twice: on the
#   installed 0.1.0-SNAPSHOT, and on the staged release VERSION (what Maven Central will serve: the
#   flattened POMs; -Ddisco.version=VERSION).
# - scripts/consumer/boot: spring-boot-starter-parent, disco-bom imported, disco-spring-boot-starter
#   without a version or a type, actuator, nothing of Boot's overridden; pom-without-bom.xml: the same
#   without disco-bom (the starter with its version). Each built on every Boot of BOOT_VERSIONS (default:
#   the newest 4.0.x, 4.1.x and 4.2.x that Maven Central serves, below). disco.etcd.endpoints on the command
#   line: the context starts, the Disco bean takes a lock, the disco health contributor is UP. The Netty
#   and gRPC on the classpath must be Boot's (its spring-boot-dependencies' netty.version and
#   grpc-java.version; a Boot that manages no gRPC, 4.0: one version), with and without disco-bom.
#
# The io.disco jars on each classpath are checked to be byte-identical to the ones built (the installed
# copy's target/ or the staged folder). Nothing is written to ~/.m2: the consumers build with their own
# local repository, kept between runs (DISCO_CONSUMER_REPO, default ~/.cache/disco/consumer-repo; its
# io/disco is emptied at every run), where every other artifact is copied from ~/.m2/repository, read as a
# file:// repository after the staged one; only what is not there comes from Maven Central, once (the
# verdict says how many files so far). Each consumer build runs offline (-o) first, online only if that
# fails. Prints one verdict line per consumer; exits non-zero when any fails. DISCO_ETCD_BINARY picks the
# etcd binary; DISCO_ETCD_ENDPOINTS uses a running cluster instead of starting one.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

project_version=$(sed -n '/<artifactId>disco-parent<\/artifactId>/{n;s/.*<version>\(.*\)<\/version>.*/\1/p;q}' pom.xml)
version=${1:-${project_version%-SNAPSHOT}}
# The newest Spring Boot 4.0.x, 4.1.x and 4.2.x on Maven Central (checked 2026-12-06 by fetching
# spring-boot-starter-parent's POM: 4.0.10, 4.1.3 and 4.2.0 resolve; 4.0.11, 4.1.4 and 4.2.1 do not).
# Not found in ~/.m2/repository, a Boot is fetched from Maven Central by the consumer's online build, once.
boot_versions=${BOOT_VERSIONS:-4.0.10 4.1.3 4.2.0}
staging=$root/target/stage-release/src/target/central-staging
if [ ! -f "$staging/io/disco/disco-bom/$version/disco-bom-$version.pom" ]; then
  echo "consumer-check: no staged release $version in $staging: run scripts/stage-release.sh first" >&2
  exit 1
fi
m2=${DISCO_M2_REPOSITORY:-$HOME/.m2/repository}

work=$root/target/consumer-check
repo=${DISCO_CONSUMER_REPO:-$HOME/.cache/disco/consumer-repo}
rm -rf "$work" "$repo/io/disco"
mkdir -p "$work" "$repo"
# Repositories in this order: the staged release, ~/.m2/repository read as a remote file:// repository
# (what the reactor's build already fetched, copied without any network), then Maven Central for
# anything else (on this machine nothing: the verdict says how many).
cat >"$work/settings.xml" <<EOF
<settings>
  <profiles>
    <profile>
      <id>consumer-check</id>
      <repositories>
        <repository><id>disco-staging</id><url>file://$staging</url><snapshots><enabled>false</enabled></snapshots></repository>
        <repository><id>local-m2</id><url>file://$m2</url></repository>
      </repositories>
      <pluginRepositories>
        <pluginRepository><id>local-m2</id><url>file://$m2</url></pluginRepository>
      </pluginRepositories>
    </profile>
  </profiles>
  <activeProfiles><activeProfile>consumer-check</activeProfile></activeProfiles>
</settings>
EOF

# The README's install step, in a copy of the working tree (what `git clone` of it would hold).
clone=$work/clone
mkdir -p "$clone"
git ls-files -z --cached --others --exclude-standard \
  | while IFS= read -r -d '' f; do [ -e "$f" ] && printf '%s\0' "$f"; done \
  | tar -C "$root" --null -T - -cf - | tar -C "$clone" -xf -
# The README's command, word for word (README.md, "Use it"): the library modules, not the tools.
install_line="mvn -B install -Dmaven.test.skip=true -pl '!disco-examples,!disco-chaos,!disco-benchmarks,!disco-cli,!disco-spring-boot-example'"
grep -qxF "$install_line" README.md || { echo "consumer-check: README.md no longer says $install_line" >&2; exit 1; }
eval "install_args=(${install_line#mvn -B })"
# ... and the coordinates it says, the ones scripts/consumer/ builds with
grep -qF "<artifactId>disco-bom</artifactId><version>$project_version</version>" README.md \
  || { echo "consumer-check: README.md's disco-bom is not at $project_version, the POMs' version" >&2; exit 1; }
start=$SECONDS
if ! (cd "$clone" && mvn -B -T 2 -s "$work/settings.xml" -Dmaven.repo.local="$repo" "${install_args[@]}") \
    >"$work/install.log" 2>&1; then
  grep -E '^\[ERROR\]' "$work/install.log" | head -10 >&2 || true
  echo "consumer-check: the README's install step (mvn -B ${install_args[*]}) failed (log: $work/install.log)"
  exit 1
fi
echo "consumer-check: the README's install step: $project_version installed in $((SECONDS - start)) s"

etcd_pid=""
cleanup() {
  if [ -n "$etcd_pid" ]; then
    kill "$etcd_pid" 2>/dev/null || true
    wait "$etcd_pid" 2>/dev/null || true
  fi
}
trap cleanup EXIT

free_port() {
  local p
  for _ in $(seq 100); do
    p=$((20000 + RANDOM % 30000))
    if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then echo "$p"; return 0; fi
  done
  return 1
}

if [ -n "${DISCO_ETCD_ENDPOINTS:-}" ]; then
  endpoint=${DISCO_ETCD_ENDPOINTS%%,*}
else
  for attempt in 1 2 3; do
    client_port=$(free_port); peer_port=$(free_port)
    endpoint=http://127.0.0.1:$client_port
    rm -rf "$work/etcd"
    "${DISCO_ETCD_BINARY:-etcd}" --name consumer-check --data-dir "$work/etcd" \
      --listen-client-urls "$endpoint" --advertise-client-urls "$endpoint" \
      --listen-peer-urls "http://127.0.0.1:$peer_port" --initial-advertise-peer-urls "http://127.0.0.1:$peer_port" \
      --initial-cluster "consumer-check=http://127.0.0.1:$peer_port" >"$work/etcd.log" 2>&1 &
    etcd_pid=$!
    for _ in $(seq 100); do
      curl -sf "$endpoint/health" >/dev/null 2>&1 && break
      kill -0 "$etcd_pid" 2>/dev/null || break
      sleep 0.1
    done
    curl -sf "$endpoint/health" >/dev/null 2>&1 && break
    cleanup; etcd_pid=""
  done
  if [ -z "$etcd_pid" ]; then
    tail -20 "$work/etcd.log" >&2
    echo "consumer-check: could not start etcd (log: $work/etcd.log)" >&2
    exit 1
  fi
fi

failed=0
# By its full name (no plugin prefix lookup: ~/.m2 read as a repository has no group metadata), at a
# version that is in this machine's ~/.m2.
dependency_plugin=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
pom_property() { sed -n "/<$1>/{s#.*<$1>\(.*\)</$1>.*#\1#p;q}" "$2"; }
# check NAME SOURCE_DIR POM DISCO_VERSION BOOT_VERSION (empty: no Boot parent) NETTY GRPC (empty: Boot's,
# or one version) MAIN_CLASS ARGS...
check() {
  local name=$1 source=$2 pom=$3 dversion=$4 boot=$5 want_netty=$6 want_grpc=$7 main=$8; shift 8
  local dir=$work/$name log=$work/$name.log start=$SECONDS problem="" mode=offline
  cp -r "$root/scripts/consumer/$source" "$dir"
  [ "$pom" = pom.xml ] || mv "$dir/$pom" "$dir/pom.xml"
  rm -f "$dir"/pom-*.xml
  if [ -n "$boot" ]; then
    # the parent's version: the first <version> of the POM
    sed -i "0,/<version>[^<]*<\/version>/s##<version>$boot</version>#" "$dir/pom.xml"
  fi
  local build=(mvn -B -s "$work/settings.xml" -Dmaven.repo.local="$repo" -Ddisco.version="$dversion"
    compile "$dependency_plugin:build-classpath" -Dmdep.outputFile=classpath.txt
    "$dependency_plugin:list" -DoutputFile=dependencies.txt)
  if ! (cd "$dir" && "${build[@]}" -o) >"$log" 2>&1; then
    mode=online
    if ! (cd "$dir" && "${build[@]}") >>"$log" 2>&1; then
      # The starter brings disco-provider-redis and with it Boot's Lettuce. This machine's registry serves no
      # Lettuce 7.8.0.RELEASE (Boot 4.2.0's; checked 2026-12-06): when the build failed on Lettuce alone, it is
      # built again with the newest Lettuce ~/.m2 holds, and says so. These consumers run on etcd: Lettuce is on
      # their class path only.
      local newest=""
      if grep -q 'lettuce-core:jar' "$log"; then
        newest=$(cd "$m2/io/lettuce/lettuce-core" 2>/dev/null && ls -d */ | tr -d / | sort -V \
          | while read -r v; do if [ -f "$v/lettuce-core-$v.jar" ]; then echo "$v"; fi; done | tail -1) || true
      fi
      if [ -n "$newest" ] && (cd "$dir" && "${build[@]}" -Dlettuce.version="$newest") >>"$log" 2>&1; then
        echo "consumer-check: $name: Boot $boot's Lettuce is not served here: built with Lettuce $newest" >&2
      else
        grep -E '^\[ERROR\]' "$log" | head -5 >&2 || true
        problem="the build failed (log: $log)"
      fi
    fi
  fi
  if [ -z "$problem" ] && [ -n "$boot" ]; then
    local bom=$repo/org/springframework/boot/spring-boot-dependencies/$boot/spring-boot-dependencies-$boot.pom
    want_netty=$(pom_property netty.version "$bom")
    want_grpc=$(pom_property grpc-java.version "$bom")
    [ -n "$want_netty" ] || problem="no netty.version in $bom"
  fi
  local netty grpcs token health output=""
  if [ -z "$problem" ]; then
    netty=$({ grep -oE 'io\.netty:[^:]+:jar:[^:]+' "$dir/dependencies.txt" || true; } | cut -d: -f4 | sort -u | tr '\n' ' ')
    grpcs=$({ grep -oE 'io\.grpc:[^:]+:jar:[^:]+' "$dir/dependencies.txt" || true; } | cut -d: -f4 | sort -u | tr '\n' ' ')
    if [ "$netty" != "$want_netty " ]; then
      problem="Netty on the classpath: ${netty:-none}(want ${boot:+Boot $boot\'s }$want_netty only; $dir/dependencies.txt)"
    elif [ -n "$want_grpc" ] && [ "$grpcs" != "$want_grpc " ]; then
      problem="gRPC on the classpath: ${grpcs:-none}(want ${boot:+Boot $boot\'s }$want_grpc only; $dir/dependencies.txt)"
    elif [ -z "$want_grpc" ] && [ "$(echo $grpcs | wc -w)" != 1 ]; then
      problem="gRPC on the classpath: ${grpcs:-none}(want one version; $dir/dependencies.txt)"
    fi
  fi
  if [ -z "$problem" ]; then
    local jar built n=0 rel artifact
    for jar in $(tr ':' '\n' <"$dir/classpath.txt" | grep '/io/disco/'); do
      rel=${jar#"$repo/"}
      if [ "$dversion" = "$project_version" ]; then
        artifact=$(echo "$rel" | cut -d/ -f3)
        built=$clone/$artifact/target/$(basename "$jar")
      else
        built=$staging/$rel
      fi
      if ! cmp -s "$jar" "$built"; then problem="$jar is not the one built, $built"; break; fi
      n=$((n + 1))
    done
    [ -n "$problem" ] || [ "$n" -gt 0 ] || problem="no io.disco jar on the classpath"
  fi
  if [ -z "$problem" ]; then
    if ! output=$(timeout 120 java -cp "$dir/target/classes:$(cat "$dir/classpath.txt")" "$main" "$@" 2>&1); then
      problem="$main failed (output: $work/$name.out)"
    fi
    printf '%s\n' "$output" >"$work/$name.out"
  fi
  token=$(printf '%s\n' "$output" | sed -n 's/^token //p' | tail -1)
  health=$(printf '%s\n' "$output" | sed -n 's/^health //p' | tail -1)
  if [ -z "$problem" ] && [ -z "$token" ]; then problem="no token printed (output: $work/$name.out)"; fi
  if [ -z "$problem" ] && [ -n "$boot" ] && [ "$health" != UP ]; then
    problem="disco health is '${health:-none}', not UP (output: $work/$name.out)"
  fi
  if [ -n "$problem" ]; then
    printf '%s\n' "$output" | tail -30 >&2
    echo "consumer-check: $name: FAILED: $problem"
    failed=1
  else
    local fetched
    fetched=$({ grep -rl '>central=' --include=_remote.repositories "$repo" 2>/dev/null || true; } | wc -l)
    echo "consumer-check: $name: OK in $((SECONDS - start)) s ($mode): disco $dversion${boot:+ on Boot $boot}, lock token $token, Netty ${netty% }, gRPC ${grpcs% }${health:+, health $health}; files from Maven Central in $repo: $fetched"
  fi
}

plain_netty=$(sed -n '/<artifactId>netty-bom<\/artifactId>/{n;s/.*<version>\(.*\)<\/version>.*/\1/p;q}' scripts/consumer/plain/pom.xml)
grep -qF "<artifactId>netty-bom</artifactId><version>$plain_netty</version>" README.md \
  || { echo "consumer-check: README.md's netty-bom is not $plain_netty, scripts/consumer/plain's" >&2; exit 1; }
check plain plain pom.xml "$project_version" "" "$plain_netty" "" com.example.consumer.Main "$endpoint"
check plain-release plain pom.xml "$version" "" "$plain_netty" "" com.example.consumer.Main "$endpoint"
for boot in $boot_versions; do
  check "boot-$boot" boot pom.xml "$project_version" "$boot" "" "" com.example.consumer.Application --disco.etcd.endpoints="$endpoint"
  check "boot-$boot-without-bom" boot pom-without-bom.xml "$project_version" "$boot" "" "" com.example.consumer.Application --disco.etcd.endpoints="$endpoint"
done
exit $failed
