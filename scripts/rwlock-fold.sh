#!/usr/bin/env bash
# Measures, with etcd's own Go client against a throwaway local etcd, whether an uncontended reader of
# the read/write lock can be admitted in one Txn instead of two (disco-benchmarks/src/main/go/rwlockfold).
# Needs etcd-server, golang-go and golang-etcd-server-dev (installed when missing and run as root).
set -euo pipefail
cd "$(dirname "$0")/.."
. scripts/ensure-etcd.sh
ensure_etcd rwlock-fold etcd:etcd-server go:golang-go \
  /usr/share/gocode/src/go.etcd.io/etcd/clientv3/client.go:golang-etcd-server-dev
work=$(mktemp -d -p "$( [ -d /dev/shm ] && echo /dev/shm || echo /tmp )") # tmpfs, like the benchmarks' etcd
trap 'kill "$etcd_pid" 2>/dev/null || true; wait 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/src"
cp -r disco-benchmarks/src/main/go/rwlockfold "$work/src/"
GO111MODULE=off GOPATH="/usr/share/gocode:$work" GOFLAGS= GOCACHE="$work/cache" go build -o "$work/rwlockfold" rwlockfold
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
peer=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
etcd --data-dir "$work/data" --listen-client-urls "http://127.0.0.1:$port" --advertise-client-urls "http://127.0.0.1:$port" \
  --listen-peer-urls "http://127.0.0.1:$peer" --initial-advertise-peer-urls "http://127.0.0.1:$peer" \
  --initial-cluster "default=http://127.0.0.1:$peer" >"$work/etcd.log" 2>&1 &
etcd_pid=$!
for _ in $(seq 100); do
  curl -sf "http://127.0.0.1:$port/health" >/dev/null 2>&1 && break
  sleep 0.1 # waiting for etcd to answer its health endpoint
done
etcd --version | head -1
"$work/rwlockfold" "127.0.0.1:$port"
