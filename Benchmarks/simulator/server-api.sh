#!/usr/bin/env bash
# Throughput of the simulator's App Store Server API: GET /inApps/v1/subscriptions/{id} with a valid JWT
# (release build, loopback, keep-alive, per-endpoint limit lifted). Answers are signed (ES256) and the
# signed answer is cached per (id, frozen clock), as docs/simulator.md describes.
# Usage: Benchmarks/simulator/server-api.sh [wrk args...]   (default: -t2 -c64 -d10s)
set -euo pipefail
cd "$(dirname "$0")/../.."
swift build -c release --product appstore-simulator >/dev/null
BIN=.build/release/appstore-simulator
WORK=${TMPDIR:-/tmp}/appstore-sim-bench-api
rm -rf "$WORK"; mkdir -p "$WORK"
NOW=2026-11-21T03:00:00Z
"$BIN" export --seed 1 --subscriptions 1000 --now "$NOW" --out "$WORK/export" 2>/dev/null
ID=$(python3 - "$WORK" <<'PY'
import json, sys
for line in open(sys.argv[1] + "/export/truth.jsonl"):
    t = json.loads(line)
    if t["scenario"] == "active_not_renewed" and t["environment"] == "Production":
        print(t["original_transaction_id"]); break
PY
)
"$BIN" serve --seed 1 --subscriptions 1000 --now "$NOW" --port 0 --port-file "$WORK/port" \
    --max-rps-statuses 0 >"$WORK/serve.out" 2>&1 &
SERVER=$!
trap 'kill $SERVER 2>/dev/null || true' EXIT
for _ in $(seq 1 100); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
TOKEN=$("$BIN" token --seed 1)
ARGS=("$@"); [ ${#ARGS[@]} -eq 0 ] && ARGS=(-t2 -c64 -d10s)
wrk "${ARGS[@]}" -H "Authorization: Bearer $TOKEN" "http://127.0.0.1:$PORT/inApps/v1/subscriptions/$ID"
curl -s "http://127.0.0.1:$PORT/_stats" | python3 -c '
import json, sys
s = json.load(sys.stdin)
print("paths:", json.dumps(s["paths"]), "auth_failures:", {k: v for k, v in s["auth_failures"].items() if v})'
