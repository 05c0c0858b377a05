#!/usr/bin/env bash
# CPU cost of the App Store simulator in the nightly run's situation, without the reconciler or PostgreSQL:
# every purchase's stored receipt of a 20,000-subscription population POSTed once to /verifyReceipt (distinct
# receipts, the malformed ones included), sandbox families' receipts once more to /sandbox/verifyReceipt (the
# run's 21007 hop), over 64 keep-alive connections. Prints the simulator's CPU seconds and microseconds per
# request (from /proc, so other load on the machine does not count).
# Usage: Benchmarks/simulator/replay.sh [--bin-dir DIR] [--subscriptions N] [--perf FILE] [--keep DIR]
set -euo pipefail
cd "$(dirname "$0")/../.."
BIN=.build/release N=20000 PERF="" KEEP=""
while [ $# -gt 0 ]; do
    case "$1" in
        --bin-dir) BIN=$2; shift 2 ;;
        --subscriptions) N=$2; shift 2 ;;
        --perf) PERF=$2; shift 2 ;;
        --keep) KEEP=$2; shift 2 ;;
        *) echo "replay.sh: unknown option $1" >&2; exit 64 ;;
    esac
done
SIM=$BIN/appstore-simulator
NOW=2026-11-21T03:00:00Z
BUNDLE=com.example.renewals
WORK=$(mktemp -d "${TMPDIR:-/tmp}/sim-replay.XXXXXX")
SERVER="" PERF_PID=""
cleanup() {
    [ -n "$PERF_PID" ] && kill -INT "$PERF_PID" 2>/dev/null && wait "$PERF_PID" 2>/dev/null || true
    [ -n "$SERVER" ] && kill "$SERVER" 2>/dev/null || true
    if [ -n "$KEEP" ]; then rm -rf "$KEEP"; mv "$WORK" "$KEEP"; else rm -rf "$WORK"; fi
}
trap cleanup EXIT
"$SIM" export --seed 7 --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --out "$WORK/export" 2>/dev/null
python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
sandbox = set()
for line in open(work + "/export/truth.jsonl"):
    t = json.loads(line)
    if t.get("environment") == "Sandbox":
        sandbox.add(t["original_transaction_id"])
seen = set()
with open(work + "/requests.tsv", "w") as out:
    for line in open(work + "/export/purchases.jsonl"):
        p = json.loads(line)
        receipt = p["latest_receipt"]
        if receipt in seen:
            continue
        seen.add(receipt)
        body = json.dumps({"receipt-data": receipt, "password": "sim-shared-secret",
                           "exclude-old-transactions": False}, separators=(",", ":"))
        out.write("/verifyReceipt\t" + body + "\n")
        if p["original_transaction_id"] in sandbox:
            out.write("/sandbox/verifyReceipt\t" + body + "\n")
PY
REQUESTS=$(wc -l <"$WORK/requests.tsv")
"$SIM" serve --seed 7 --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --port 0 --port-file "$WORK/port" \
    >"$WORK/serve.out" 2>&1 &
SERVER=$!
for _ in $(seq 1 600); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
ticks() { awk '{print $14 + $15}' "/proc/$1/stat"; }
if [ -n "$PERF" ]; then
    perf record -g -o "$PERF" -p "$SERVER" 2>"$WORK/perf.err" &
    PERF_PID=$!
    sleep 1
fi
t0=$(ticks "$SERVER")
served() { curl -sf "http://127.0.0.1:$PORT/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests_total"])'; }
REPLAY_FILE=$WORK/requests.tsv REPLAY_THREADS=2 wrk -t2 -c64 -d300s -s Benchmarks/simulator/replay.lua \
    "http://127.0.0.1:$PORT/" >"$WORK/wrk.out" &
WRK=$!
# wrk runs for its whole -d even when every thread has stopped: end it once every request was answered.
while kill -0 "$WRK" 2>/dev/null && [ "$(served)" -lt "$REQUESTS" ]; do sleep 0.2; done
sleep 0.5
kill -INT "$WRK" 2>/dev/null || true
wait "$WRK" || true
t1=$(ticks "$SERVER")
if [ -n "$PERF_PID" ]; then kill -INT "$PERF_PID"; wait "$PERF_PID" 2>/dev/null || true; PERF_PID=""; fi
SENT=$(served)
HZ=$(getconf CLK_TCK)
echo "requests_listed=$REQUESTS requests_served=$SENT"
echo "simulator_cpu_seconds=$(echo "scale=2; ($t1 - $t0) / $HZ" | bc) us_per_request=$(echo "($t1 - $t0) * 1000000 / $HZ / $SENT" | bc)"
echo "simulator_peak_rss_kb=$(awk '/^VmHWM/ {print $2}' "/proc/$SERVER/status")"
curl -sf "http://127.0.0.1:$PORT/_stats" >"$WORK/stats.json"
