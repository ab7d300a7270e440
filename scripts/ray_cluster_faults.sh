#!/usr/bin/env bash
# Faults on a Ray cluster, simulated on one machine: a head and two worker nodes (`ray start`,
# one CPU each, own ports), the smoke suite run against it, a worker node's raylet SIGKILLed
# in the middle of a training cell, then the head killed and started again mid-run. Each run
# is compared with a local one (`--jobs 1`): results.csv without its timing rows.
#
#   scripts/ray_cluster_faults.sh [WORK]     (default /tmp/robustbnn-ray-faults; ~10 min on 2 cores)
#
# Only the smoke suite: the default suite on a cluster is too long for a 2-core machine.
# Every process it starts is killed on exit by its temp folder; `ray stop` is never used
# (it stops every Ray on the machine).
set -euo pipefail
ROOT=$(cd "$(dirname "$0")/.." && pwd)
BIN=${BIN:-$ROOT/.venv/bin}
WORK=${1:-/tmp/robustbnn-ray-faults}
PORT=${PORT:-6390}
RAYDIR=$WORK/ray
ADDRESS=127.0.0.1:$PORT
export RAY_AUTH_MODE=token RAY_DISABLE_USAGE_STATS=1 PYTHONUNBUFFERED=1
# Token authentication needs a token before `ray start --head` (Ray 2.60 does not create one
# there): the cluster's own, unless the caller gives one; every process below inherits it.
RAY_AUTH_TOKEN=${RAY_AUTH_TOKEN:-$("$BIN/python" -c 'import secrets; print(secrets.token_hex(32))')}
export RAY_AUTH_TOKEN
# One long training cell (mlp, ~30 s alone on this machine), so a node dies in the middle of it.
BENCH=("$BIN/robustbnn" bench --suite smoke --device cpu --threads 1 --set mlp.epochs=3000)
CLUSTER=(--executor ray --ray-address "$ADDRESS")

stop_cluster() { "$BIN/python" -I "$ROOT/robustbnn/run/ray_cluster.py" kill "$RAYDIR/" || true; }
trap stop_cluster EXIT

start_head() {
  "$BIN/ray" start --head --node-ip-address=127.0.0.1 --port="$PORT" --num-cpus=1 \
    --object-store-memory=100000000 --include-dashboard=false --disable-usage-stats \
    --temp-dir="$RAYDIR" --node-manager-port=$((PORT + 1)) --object-manager-port=$((PORT + 2)) \
    --min-worker-port=20000 --max-worker-port=20099 --dashboard-agent-listen-port=$((PORT + 4)) \
    --dashboard-agent-grpc-port=$((PORT + 5)) --runtime-env-agent-port=$((PORT + 6)) \
    --metrics-export-port=$((PORT + 7)) >>"$WORK/head.log" 2>&1
}
start_worker() {  # node N (1, 2): its own ports
  local base=$((PORT + 10 * $1))
  "$BIN/ray" start --address="$ADDRESS" --node-ip-address=127.0.0.1 --num-cpus=1 \
    --object-store-memory=100000000 --disable-usage-stats \
    --node-manager-port=$((base + 1)) --object-manager-port=$((base + 2)) \
    --min-worker-port=$((20000 + 1000 * $1)) --max-worker-port=$((20099 + 1000 * $1)) \
    --dashboard-agent-listen-port=$((base + 4)) --dashboard-agent-grpc-port=$((base + 5)) \
    --runtime-env-agent-port=$((base + 6)) --metrics-export-port=$((base + 7)) \
    >>"$WORK/worker$1.log" 2>&1
}
start_cluster() { start_head; start_worker 1; start_worker 2; }
kill_pid_tree() {  # SIGKILL a process and its descendants
  [ -n "$1" ] && "$BIN/python" -I -c "import sys; sys.path.insert(0, '$ROOT/robustbnn/run')
from ray_cluster import descendants, kill_tree; kill_tree(descendants([$1]))"
  return 0
}
raylet() { pgrep -f -- "raylet.*--node_manager_port=$1( |$)" || true; }
busy_worker_node() {  # a worker node's raylet whose worker runs a cell, else nothing
  local n r
  for n in 1 2; do
    r=$(raylet $((PORT + 10 * n + 1)))
    if [ -n "$r" ] && pgrep -P "$r" -f '^ray::execute_cell' >/dev/null; then echo "$r"; return; fi
  done
}
compare() {  # run folder against the local run, without timing rows
  if cmp -s <(grep -v seconds_per_1000_predictions "$WORK/local/results.csv") \
            <(grep -v seconds_per_1000_predictions "$1/results.csv"); then
    echo "$1: results.csv identical to the local run (timing rows aside)"
  else
    echo "$1: results.csv DIFFERS from the local run"; return 1
  fi
}
summary() { grep -E '^cells:|robustbnn: error|trained mlp' "$1" | sed 's/^(.*pid=[0-9]*[^)]*) //'; }

rm -rf "$WORK" && mkdir -p "$WORK"
echo "== local reference (--jobs 1)"
"${BENCH[@]}" --jobs 1 --out "$WORK/local" --cache-dir "$WORK/cache-local" >"$WORK/local.log" 2>&1
summary "$WORK/local.log"

echo "== cluster: head + 2 worker nodes; SIGKILL a worker node's raylet mid-cell"
start_cluster
"${BENCH[@]}" "${CLUSTER[@]}" --out "$WORK/node" --cache-dir "$WORK/cache-node" \
  >"$WORK/node.log" 2>&1 &
run=$!
victim=""
for _ in $(seq 600); do  # a cell that is still running 5 s after it was seen (training)
  victim=$(busy_worker_node)
  if [ -n "$victim" ]; then sleep 5; [ "$(busy_worker_node)" = "$victim" ] && break; fi
  victim=""; sleep 0.5
done
[ -n "$victim" ] || { echo "no cell ran on a worker node"; exit 1; }
echo "kill -9 raylet $victim ($(tr '\0' ' ' </proc/"$victim"/cmdline | grep -o 'node_manager_port=[0-9]*'))"
kill -9 "$victim"
rc=0; wait "$run" || rc=$?
echo "exit $rc"; summary "$WORK/node.log"
compare "$WORK/node"

echo "== cluster: kill the head mid-run and start it again"
stop_cluster; sleep 2; start_cluster
"${BENCH[@]}" "${CLUSTER[@]}" --out "$WORK/head" --cache-dir "$WORK/cache-head" \
  >"$WORK/head-run1.log" 2>&1 &
run=$!
until grep -q '^\[8/' "$WORK/head-run1.log"; do sleep 1; done  # some cells are finished
gcs=$(pgrep -f -- "gcs_server.*$RAYDIR/" || true)
echo "kill -9 the head (gcs_server $gcs, raylet $(raylet $((PORT + 1)))) and start it again"
kill_pid_tree "$gcs"; kill_pid_tree "$(raylet $((PORT + 1)))"
# `ray start --head` refuses while it still sees the old GCS (its process or its address file)
while pgrep -f -- "gcs_server.*$RAYDIR/" >/dev/null; do sleep 0.5; done
rm -f "$RAYDIR/ray_current_cluster"; sleep 2; start_head
# A restarted head is a new cluster: the old worker nodes' raylets are refused and exit.
# Start them again (killed first, so no old raylet waits out its 60 s reconnect timeout).
for n in 1 2; do kill_pid_tree "$(raylet $((PORT + 10 * n + 1)))"; start_worker "$n"; done
rc=0; wait "$run" || rc=$?
echo "exit $rc"; summary "$WORK/head-run1.log"
echo "== rerun the same command"
rc=0
"${BENCH[@]}" "${CLUSTER[@]}" --out "$WORK/head" --cache-dir "$WORK/cache-head" \
  >"$WORK/head-run2.log" 2>&1 || rc=$?
echo "exit $rc"; summary "$WORK/head-run2.log"
compare "$WORK/head"
