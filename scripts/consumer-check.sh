#!/usr/bin/env bash
# Builds two consumer projects outside the reactor against the staged release (scripts/stage-release.sh
# first) and runs each against a throwaway etcd: each takes a lock and prints its token.
#
#   scripts/consumer-check.sh [VERSION]      (default: the project's version without -SNAPSHOT)
#
# - scripts/consumer/plain: disco-bom imported, disco-client and disco-provider-etcd, no parent;
#   EtcdProvider.disco(...), a lock, its token. Every Netty artifact on its classpath must be the BOM's
#   (the parent's netty.version, 4.2.18.Final) and every gRPC artifact the BOM's (grpc.version, 1.76.0).
# - scripts/consumer/boot41: spring-boot-starter-parent 4.1.2 (netty.version 4.2.18.Final), disco-bom
#   imported, disco-spring-boot-starter without a version or a type, actuator; disco.etcd.endpoints on
#   the command line: the context starts, the Disco bean takes a lock, the disco health contributor is UP.
#   Netty must be netty.version everywhere, gRPC one version (Boot's when it manages one, else the BOM's).
#
# disco's artifacts come only from the staged folder, a file:// repository (disco-staging); the io.disco
# jars on each classpath are checked to be byte-identical to the staged ones. Nothing is written to
# ~/.m2: the consumers build with their own local repository under target/consumer-check, and every
# other artifact is copied from ~/.m2/repository, read as a file:// repository after the staged one;
# only what is not there comes from Maven Central (the verdict says how many files, normally none).
# Prints one verdict line per consumer; exits non-zero when either fails. DISCO_ETCD_BINARY picks the
# etcd binary; DISCO_ETCD_ENDPOINTS uses a running cluster instead of starting one.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)

project_version=$(sed -n '/<artifactId>disco-parent<\/artifactId>/{n;s/.*<version>\(.*\)<\/version>.*/\1/p;q}' pom.xml)
version=${1:-${project_version%-SNAPSHOT}}
# The versions the BOM converges on: the parent's properties (scripts/consumer/boot41 sets netty.version too).
parent_property() { sed -n "/<$1>/{s#.*<$1>\(.*\)</$1>.*#\1#p;q}" pom.xml; }
netty_version=$(parent_property netty.version)
grpc_version=$(parent_property grpc.version)
staging=$root/target/stage-release/src/target/central-staging
if [ ! -f "$staging/io/disco/disco-bom/$version/disco-bom-$version.pom" ]; then
  echo "consumer-check: no staged release $version in $staging: run scripts/stage-release.sh first" >&2
  exit 1
fi
m2=${DISCO_M2_REPOSITORY:-$HOME/.m2/repository}

work=$root/target/consumer-check
rm -rf "$work"
mkdir -p "$work"
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
# version that is in this machine's ~/.m2 (Boot 4.1.2 manages 3.10.0).
dependency_plugin=org.apache.maven.plugins:maven-dependency-plugin:3.8.1
# check NAME MAIN_CLASS GRPC_VERSION (empty: one version, whichever) ARGS...
check() {
  local name=$1 main=$2 grpc=$3; shift 3
  local dir=$work/$name log=$work/$name.log start=$SECONDS problem=""
  cp -r "$root/scripts/consumer/$name" "$dir"
  if ! (cd "$dir" && mvn -B -s "$work/settings.xml" -Dmaven.repo.local="$work/repo" \
      -Ddisco.version="$version" -Ddisco.staging="file://$staging" \
      compile "$dependency_plugin:build-classpath" -Dmdep.outputFile=classpath.txt \
      "$dependency_plugin:list" -DoutputFile=dependencies.txt) >"$log" 2>&1; then
    grep -E '^\[ERROR\]' "$log" | head -5 >&2 || true
    problem="the build failed (log: $log)"
  fi
  local netty grpcs token health output=""
  if [ -z "$problem" ]; then
    netty=$({ grep -oE 'io\.netty:[^:]+:jar:[^:]+' "$dir/dependencies.txt" || true; } | cut -d: -f4 | sort -u | tr '\n' ' ')
    grpcs=$({ grep -oE 'io\.grpc:[^:]+:jar:[^:]+' "$dir/dependencies.txt" || true; } | cut -d: -f4 | sort -u | tr '\n' ' ')
    if [ "$netty" != "$netty_version " ]; then
      problem="Netty on the classpath: ${netty:-none}(want $netty_version only; $dir/dependencies.txt)"
    elif [ -n "$grpc" ] && [ "$grpcs" != "$grpc " ]; then
      problem="gRPC on the classpath: ${grpcs:-none}(want $grpc only; $dir/dependencies.txt)"
    elif [ -z "$grpc" ] && [ "$(echo $grpcs | wc -w)" != 1 ]; then
      problem="gRPC on the classpath: ${grpcs:-none}(want one version; $dir/dependencies.txt)"
    fi
  fi
  if [ -z "$problem" ]; then
    local jar staged n=0
    for jar in $(tr ':' '\n' <"$dir/classpath.txt" | grep '/io/disco/'); do
      staged=$staging/${jar#"$work/repo/"}
      if ! cmp -s "$jar" "$staged"; then problem="$jar is not the staged $staged"; break; fi
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
  if [ -z "$problem" ] && [ "$name" = boot41 ] && [ "$health" != UP ]; then
    problem="disco health is '${health:-none}', not UP (output: $work/$name.out)"
  fi
  if [ -n "$problem" ]; then
    printf '%s\n' "$output" | tail -30 >&2
    echo "consumer-check: $name: FAILED: $problem"
    failed=1
  else
    local fetched
    fetched=$({ grep -rl '>central=' --include=_remote.repositories "$work/repo" 2>/dev/null || true; } | wc -l)
    echo "consumer-check: $name: OK in $((SECONDS - start)) s: disco $version from the staged release, lock token $token, Netty ${netty% }, gRPC ${grpcs% }${health:+, health $health}; files from Maven Central so far: $fetched"
  fi
}

check plain com.example.consumer.Main "$grpc_version" "$endpoint"
check boot41 com.example.consumer.Application "" --disco.etcd.endpoints="$endpoint"
exit $failed
