#!/usr/bin/env bash
# Throughput benchmark of the App Store simulator (release build, loopback, keep-alive).
# Usage: Benchmarks/simulator/run.sh [wrk args...]   (default: -t2 -c64 -d10s)
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --product appstore-simulator >/dev/null
BIN=.build/release/appstore-simulator
WORK=${TMPDIR:-/tmp}/appstore-sim-bench
rm -rf "$WORK"; mkdir -p "$WORK"
NOW=2026-11-21T03:00:00Z
"$BIN" export --seed 1 --subscriptions 1000 --now "$NOW" --out "$WORK/export" 2>/dev/null
# A small, ordinary receipt: the first active_not_renewed production subscription.
python3 - "$WORK" <<'PY'
import json, sys
work = sys.argv[1]
truth = {}
for line in open(work + "/export/truth.jsonl"):
    t = json.loads(line); truth[t["original_transaction_id"]] = t
for line in open(work + "/export/purchases.jsonl"):
    p = json.loads(line)
    t = truth[p["original_transaction_id"]]
    if t["scenario"] == "active_not_renewed" and t["environment"] == "Production":
        body = json.dumps({"receipt-data": p["latest_receipt"], "password": "sim-shared-secret",
                           "exclude-old-transactions": False})
        open(work + "/body.json", "w").write(body)
        print("receipt chars:", len(p["latest_receipt"]), file=sys.stderr)
        break
PY
"$BIN" serve --seed 1 --subscriptions 1000 --now "$NOW" --port 0 --port-file "$WORK/port" >"$WORK/serve.out" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
ARGS=("$@"); [ ${#ARGS[@]} -eq 0 ] && ARGS=(-t2 -c64 -d10s)
VERIFY_BODY="$WORK/body.json" wrk "${ARGS[@]}" -s Benchmarks/simulator/verify.lua "http://127.0.0.1:$PORT/verifyReceipt"
curl -s "http://127.0.0.1:$PORT/_stats"; echo
