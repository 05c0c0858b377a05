#!/usr/bin/env bash
# Requests per subscription through the App Store Server API, first night and a quiet second night, and
# whether the per-endpoint limits held at the simulator: a throwaway PostgreSQL seeded from the
# simulator's export, the simulator serving on loopback with per-endpoint limits, `renewal-reconciler run`
# (first night, every row never verified) then `backfill --all` at the same instant (every row asked again,
# nothing changed at Apple since).
#
# Usage: Benchmarks/server-api.sh [options]
#   --subscriptions N     subscriptions to create (default 5000)
#   --limit L             the simulator's per-endpoint limit in production (sandbox a tenth) and the run's
#                         --statuses-rate/--history-rate/--notifications-rate (default 200; Apple's is 50)
#   --concurrency C       --concurrency of the runs (default 64)
#   --seed S              population seed (default 7)
#   --no-build            do not run `swift build -c release` first
#   --bin-dir DIR         use the binaries in DIR (implies --no-build)
# Prints one `key=value` line per figure. Request counts do not depend on the build (debug or release).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BIN="" N=5000 LIMIT=200 CONC=64 SEED=7 BUILD=1
while [ $# -gt 0 ]; do
    case "$1" in
        --subscriptions) N=$2; shift 2 ;;
        --limit) LIMIT=$2; shift 2 ;;
        --concurrency) CONC=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin-dir) BIN=$2; BUILD=0; shift 2 ;;
        -h|--help) sed -n '2,17p' "$0"; exit 0 ;;
        *) echo "server-api.sh: unknown option $1" >&2; exit 64 ;;
    esac
done

# shellcheck source=lib.sh
source Benchmarks/lib.sh

# shellcheck source=../scripts/lib/throwaway-pg.sh
source scripts/lib/throwaway-pg.sh
throwaway_pg_start
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rr-bench-api.XXXXXX")
chmod 755 "$WORK"
SIM_PID=""
cleanup() {
    [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true
    [ -n "$SIM_PID" ] && wait "$SIM_PID" 2>/dev/null || true
    rm -rf "$WORK"
    throwaway_pg_stop
}
trap cleanup EXIT

echo "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$RR" migrate --sql-dir "$ROOT/sql" >/dev/null
"$SIM" export --seed "$SEED" --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --out "$WORK/export" 2>/dev/null
"$RR" import --file "$WORK/export/purchases.jsonl" >/dev/null

"$SIM" serve --seed "$SEED" --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --port 0 --port-file "$WORK/port" \
    --max-rps-statuses "$LIMIT" --max-rps-history "$LIMIT" --max-rps-notification-history "$LIMIT" \
    >"$WORK/sim.out" 2>&1 &
SIM_PID=$!
for _ in $(seq 1 600); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")

API=$WORK/export/server-api
APP_APPLE_ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["app_apple_id"])' "$API/api.json")
export APPLE_SOURCE=server-api APPLE_BUNDLE_ID=$BUNDLE APPLE_PRIVATE_KEY_FILE=$API/key.p8
export APPLE_KEY_ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["key_id"])' "$API/api.json")
export APPLE_ISSUER_ID=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["issuer_id"])' "$API/api.json")
export APPLE_APP_APPLE_ID=$APP_APPLE_ID
export APPLE_SERVER_API_URL=http://127.0.0.1:$PORT APPLE_SERVER_API_SANDBOX_URL=http://127.0.0.1:$PORT/sandbox
COMMON=(--now "$NOW" --concurrency "$CONC" --rate 100000 --root-ca "$API/root.pem" --root-ca-only
    --statuses-rate "$LIMIT" --history-rate "$LIMIT" --notifications-rate "$LIMIT" --report-dir "$WORK/reports"
    --max-unresolved 1)

# One night: the simulator's counters are reset first; prints the figures of that night.
night() {
    local name=$1; shift
    curl -sf -X POST "http://127.0.0.1:$PORT/_stats/reset" >/dev/null
    local t0 t1
    t0=$(date +%s.%N)
    "$RR" "$@" "${COMMON[@]}" >"$WORK/$name.out" 2>"$WORK/$name.err" || {
        echo "$name failed (exit $?):" >&2; tail -20 "$WORK/$name.err" >&2; exit 1; }
    t1=$(date +%s.%N)
    curl -sf "http://127.0.0.1:$PORT/_stats" >"$WORK/$name.stats"
    python3 - "$name" "$WORK/$name.stats" "$(echo "$t1 - $t0" | bc)" "$N" <<'PY'
import json, sys
name, path, wall, n = sys.argv[1], sys.argv[2], float(sys.argv[3]), int(sys.argv[4])
s = json.load(open(path))
paths = s["paths"]
def count(prefix):
    return sum(v["requests"] for k, v in paths.items() if k.replace("/sandbox", "").startswith(prefix))
statuses, history = count("/inApps/v1/subscriptions"), count("/inApps/v2/history")
notifications = count("/inApps/v1/notifications/history")
total = sum(v["requests"] for v in paths.values())
print(f"{name}_wall_seconds={wall:.1f}")
print(f"{name}_requests={total} statuses={statuses} history={history} notification_history={notifications}")
print(f"{name}_requests_per_subscription={total / n:.3f} (statuses {statuses / n:.3f}, history {history / n:.3f})")
held = True
for key, lim in sorted(s.get("server_api_limits", {}).items()):
    peak, limited, limit = lim["peak_admitted_per_second"], lim["rate_limited"], lim["limit_per_second"]
    print(f"{name}_limit {key}: limit {limit}/s, peak admitted {peak}/s, answered 429: {limited}")
    held = held and (limit is None or peak <= limit)
# Held: no endpoint served more than its limit in any one-second window. A request that arrives in a window
# already full is answered 429 (counted above) and retried after its Retry-After, as with Apple.
print(f"{name}_limits_held={'yes' if held else 'NO'}")
PY
}

night first run
night second backfill --all
