#!/usr/bin/env bash
# Several workers on one run, one of them killed with SIGKILL (issue 17, acceptance 2): a throwaway PostgreSQL
# seeded from the App Store simulator's export, the simulator serving on loopback WITHOUT a rate limit (it only
# counts), and W `renewal-reconciler run --worker` processes started together on one run at `--rate R`.
# Once a share of the items is done, one worker gets `kill -9`; the others must finish the run.
#
# Usage: Benchmarks/workers.sh [options]
#   --subscriptions N     due subscriptions to create (default 50000)
#   --rate R              --rate of every worker: the app's limit, shared by the live workers (default 300)
#   --workers W           worker processes started together (default 3)
#   --kill-at FRACTION    kill -9 one worker once this share of the items is done (default 0.4; 0 = no kill)
#   --kill-worker K       which worker (1..W, in start order) gets the kill (default 1)
#   --concurrency C       --concurrency of every worker (default 64)
#   --heartbeat D         --heartbeat of every worker (default 1s)
#   --lease-timeout D     --lease-timeout of every worker (default 10s)
#   --seed S              population seed (default 7)
#   --no-build            do not run `swift build -c release` first
#   --bin-dir DIR         use the binaries in DIR (implies --no-build)
#   --keep DIR            keep the work directory (export, reports, logs, request series) in DIR
# Prints one `key=value` line per figure, a `CHECK ok|FAIL ...` line per check and a final `RESULT ...` line;
# exits 1 if any check failed. The simulator's `peak_requests_per_second` is exact (every arrival, sliding
# one-second window); the per-second counts come from polling its `requests_total` every 50 ms (so a window
# found there can be up to one poll interval narrower than a second: a lower bound of the true peak).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BIN="" N=50000 RATE=300 WORKERS=3 KILL_AT=0.4 KILL_WORKER=1 CONC=64 HEARTBEAT=1s LEASE=10s SEED=7 BUILD=1 KEEP=""
while [ $# -gt 0 ]; do
    case "$1" in
        --subscriptions) N=$2; shift 2 ;;
        --rate) RATE=$2; shift 2 ;;
        --workers) WORKERS=$2; shift 2 ;;
        --kill-at) KILL_AT=$2; shift 2 ;;
        --kill-worker) KILL_WORKER=$2; shift 2 ;;
        --concurrency) CONC=$2; shift 2 ;;
        --heartbeat) HEARTBEAT=$2; shift 2 ;;
        --lease-timeout) LEASE=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin-dir) BIN=$2; BUILD=0; shift 2 ;;
        --keep) KEEP=$2; shift 2 ;;
        -h|--help) sed -n '2,23p' "$0"; exit 0 ;;
        *) echo "workers.sh: unknown option $1" >&2; exit 64 ;;
    esac
done
KILLING=$(python3 -c "print(1 if float('$KILL_AT') > 0 else 0)")
if [ "$KILLING" = 1 ] && { [ "$KILL_WORKER" -lt 1 ] || [ "$KILL_WORKER" -gt "$WORKERS" ] || [ "$WORKERS" -lt 2 ]; }; then
    echo "workers.sh: --kill-worker must be 1..W and a kill needs at least 2 workers" >&2
    exit 64
fi

# shellcheck source=lib.sh
source Benchmarks/lib.sh

# shellcheck source=../scripts/lib/throwaway-pg.sh
source scripts/lib/throwaway-pg.sh
throwaway_pg_start
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rr-workers.XXXXXX")
chmod 755 "$WORK"
SIM_PID="" POLLER="" WATCHER=""
WPIDS=()
# shellcheck disable=SC2317  # called by the EXIT trap
cleanup() {
    local p
    for p in "${WPIDS[@]}" $POLLER $WATCHER $SIM_PID; do kill "$p" 2>/dev/null || true; done
    for p in "${WPIDS[@]}" $POLLER $WATCHER $SIM_PID; do wait "$p" 2>/dev/null || true; done
    if [ -n "$KEEP" ]; then rm -rf "$KEEP"; mv "$WORK" "$KEEP"; else rm -rf "$WORK"; fi
    throwaway_pg_stop
}
trap cleanup EXIT

SECRET_FILE=$WORK/secret
printf 'bench-shared-secret' >"$SECRET_FILE"
export APPSTORE_SIM_SHARED_SECRET=bench-shared-secret
q() { psql -X -qAt "$DATABASE_URL" -c "$1"; }

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$RR" migrate --sql-dir "$ROOT/sql" >/dev/null

t0=$(date +%s.%N)
"$SIM" export --seed "$SEED" --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --out "$WORK/export" 2>/dev/null
t1=$(date +%s.%N)
"$RR" import --file "$WORK/export/purchases.jsonl" >"$WORK/import.out"
t2=$(date +%s.%N)
echo "export_seconds=$(printf '%.1f' "$(echo "$t1 - $t0" | bc)") import_seconds=$(printf '%.1f' "$(echo "$t2 - $t1" | bc)")"
q "VACUUM ANALYZE" >/dev/null

# The simulator on loopback, no --max-rps: it answers everything and counts arrivals.
"$SIM" serve --seed "$SEED" --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --port 0 \
    --port-file "$WORK/port" >"$WORK/sim.out" 2>&1 &
SIM_PID=$!
for _ in $(seq 1 600); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
curl -sf -X POST "http://127.0.0.1:$PORT/_stats/reset" >/dev/null

# requests_total every 50 ms ("epoch count" lines): the per-second counts and where the busiest second was.
python3 - "http://127.0.0.1:$PORT/_stats" "$WORK/requests.series" <<'PY' &
import json, sys, time, urllib.request
url, out = sys.argv[1], sys.argv[2]
with open(out, "w", buffering=1) as f:
    while True:
        try:
            with urllib.request.urlopen(url, timeout=2) as r:
                n = json.load(r)["requests_total"]
            f.write(f"{time.time():.3f} {n}\n")
        except Exception:
            pass
        time.sleep(0.05)
PY
POLLER=$!

# The workers, started together.
RUN_ARGS=(run --worker --heartbeat "$HEARTBEAT" --lease-timeout "$LEASE"
    --now "$NOW" --rate "$RATE" --concurrency "$CONC" --bundle-id "$BUNDLE"
    --verify-url "http://127.0.0.1:$PORT/verifyReceipt" --sandbox-verify-url "http://127.0.0.1:$PORT/sandbox/verifyReceipt"
    --shared-secret-file "$SECRET_FILE" --report-dir "$WORK/reports" --max-unresolved 1)
echo "workers: $WORKERS x $RR ${RUN_ARGS[*]}" >&2
start=$(date +%s.%N)
for i in $(seq 1 "$WORKERS"); do
    "$RR" "${RUN_ARGS[@]}" >"$WORK/worker-$i.out" 2>"$WORK/worker-$i.err" &
    WPIDS+=($!)
done

# Every second: each worker's share and heartbeat as PostgreSQL sees them ("epoch worker_id share heartbeat_age stopped").
(
    while :; do
        q "SELECT extract(epoch FROM clock_timestamp())::numeric(16,3), worker_id, coalesce(share::text, '-'),
                  extract(epoch FROM clock_timestamp() - heartbeat_at)::numeric(8,2), stopped_at IS NOT NULL
             FROM run_workers ORDER BY started_at" 2>/dev/null | tr '|' ' ' >>"$WORK/shares.series" || true
        sleep 1
    done
) &
WATCHER=$!

alive() { local p; for p in "${WPIDS[@]}"; do kill -0 "$p" 2>/dev/null && return 0; done; return 1; }
KILL_PID="" KILL_TIME="" KILL_DONE=""
if [ "$KILLING" = 1 ]; then
    target=$(python3 -c "import math; print(math.ceil($N * float('$KILL_AT')))")
    victim=${WPIDS[$((KILL_WORKER - 1))]}
    while alive; do
        done_now=$(q "SELECT count(*) FROM reconciliation_items WHERE status = 'done'" 2>/dev/null || echo 0)
        if [ "${done_now:-0}" -ge "$target" ]; then
            if kill -0 "$victim" 2>/dev/null; then
                kill -9 "$victim"
                KILL_PID=$victim KILL_TIME=$(date +%s.%N) KILL_DONE=$done_now
                echo "killed worker $KILL_WORKER (pid $victim) with SIGKILL at $done_now items done" >&2
            fi
            break
        fi
        sleep 0.25
    done
fi

# Wait for every worker; exit status per worker (137 = killed by SIGKILL).
declare -a RCS
for i in $(seq 1 "$WORKERS"); do
    rc=0
    wait "${WPIDS[$((i - 1))]}" || rc=$?
    RCS[i]=$rc
done
end=$(date +%s.%N)
kill "$POLLER" "$WATCHER" 2>/dev/null || true
wait "$POLLER" "$WATCHER" 2>/dev/null || true
POLLER="" WATCHER=""
WPIDS=()
wall=$(printf '%.1f' "$(echo "$end - $start" | bc)")

# ---- Figures -------------------------------------------------------------------------------------------------
stats=$(curl -sf "http://127.0.0.1:$PORT/_stats")
sim_peak=$(echo "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["peak_requests_per_second"])')
sim_requests=$(echo "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests_total"])')
sim_limited=$(echo "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["rate_limited"])')
# From the polled series: the busiest polled window of at most 1 s, the whole seconds (aligned on the first
# request) over R, the first and last request, and the steady rate between 10% and 90% of the requests.
read -r polled_peak polled_peak_at seconds_over seconds_total max_second first_req last_req steady over_list < <(
    python3 - "$WORK/requests.series" "$RATE" "${KILL_TIME:-0}" <<'PY'
import sys, bisect
pts = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if len(l.split()) == 2]
rate, kill = float(sys.argv[2]), float(sys.argv[3])
pts = [p for p in pts]
total = pts[-1][1] if pts else 0
first = next((p[0] for p in pts if p[1] > 0), None)
# the first sample at the final count: requests ended at most one poll interval earlier
last = next((p[0] for p in pts if p[1] >= total), None)
ts = [p[0] for p in pts]
peak, peak_at = 0, 0.0
for i, (t, n) in enumerate(pts):
    j = bisect.bisect_left(ts, t - 1.0)
    if n - pts[j][1] > peak:
        peak, peak_at = n - pts[j][1], t
def at_or_before(t):
    i = bisect.bisect_right(ts, t) - 1
    return pts[i][1] if i >= 0 else 0
def at_or_after(t):
    i = bisect.bisect_left(ts, t)
    return pts[i][1] if i < len(pts) else total
# whole seconds [k, k+1) from just before the first request; each counted between the first sample at or
# after its start and the last sample at or before its end (at most one second: a lower bound)
over, secs, maxs, overs = 0, 0, 0, []
if first is not None:
    k = 0
    base = first - 0.05
    while base + k < last:
        c = at_or_before(base + k + 1) - at_or_after(base + k)
        secs += 1
        maxs = max(maxs, c)
        if c > rate:
            over += 1
            overs.append(f"{k}s:{int(c)}")
        k += 1
lo = next((p for p in pts if p[1] >= 0.1 * total), None)
hi = next((p for p in pts if p[1] >= 0.9 * total), None)
steady = f"{(hi[1] - lo[1]) / (hi[0] - lo[0]):.1f}" if lo and hi and hi[0] > lo[0] else "?"
rel = lambda t: f"{t - first:.1f}" if first is not None else "?"
print(int(peak), rel(peak_at), over, secs, int(maxs), rel(first) if first else "?", rel(last) if last else "?",
      steady, ",".join(overs) or "-")
PY
)
# When the survivors' share rose after the kill (the dead worker no longer counted live), from shares.series.
redivided_rel=$(python3 - "$WORK/shares.series" "$WORK/requests.series" "$WORKERS" <<'PY'
import sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 5]
pts = [l.split() for l in open(sys.argv[2]) if len(l.split()) == 2]
first = next((float(t) for t, n in pts if int(n) > 0), None)
w = int(sys.argv[3])
hit = next((float(r[0]) for r in rows if r[2] != "-" and float(r[2]) > 1 / w + 1e-6), None)
print(f"{hit - first:.1f}" if hit is not None and first is not None else "-")
PY
)
kill_rel="-"
[ -n "$KILL_TIME" ] && kill_rel=$(python3 -c "
pts=[l.split() for l in open('$WORK/requests.series')]
first=next(float(t) for t,n in pts if int(n)>0)
print(f'{$KILL_TIME - first:.1f}')")

# The run as PostgreSQL holds it.
runs=$(q "SELECT count(*) FROM reconciliation_runs")
read -r run_id status due done_count run_requests run_retries < <(q "SELECT id, status, due_count, done_count,
    apple_stats->>'requests', apple_stats->>'retries' FROM reconciliation_runs ORDER BY id DESC LIMIT 1" | tr '|' ' ')
subs=$(q "SELECT count(*) FROM subscriptions")
read -r items items_done items_pending items_distinct < <(q "SELECT count(*), count(*) FILTER (WHERE status = 'done'),
    count(*) FILTER (WHERE status = 'pending'), count(DISTINCT subscription_id) FROM reconciliation_items
    WHERE run_id = $run_id" | tr '|' ' ')
# Each reconciler write of a subscription bumps its version (trigger): imported rows are at 1, so after one
# night a row at 3 or more was written more than once (twice as many results as items would show here).
versions=$(q "SELECT string_agg(version || ':' || n, ',' ORDER BY version) FROM (SELECT version, count(*) AS n
    FROM subscriptions GROUP BY version) v")
max_version=$(q "SELECT max(version) FROM subscriptions")
workers_rows=$(q "SELECT count(*) FROM run_workers WHERE run_id = $run_id")
written_sum=$(q "SELECT coalesce(sum(written), 0) FROM run_workers WHERE run_id = $run_id")
outcomes=$(q "SELECT string_agg(outcome || ':' || n, ',' ORDER BY outcome) FROM (SELECT outcome, count(*) AS n
    FROM reconciliation_items WHERE run_id = $run_id GROUP BY outcome) o")
# Report folders: every directory under --report-dir (trends files are plain files beside them).
report_dirs=$(find "$WORK/reports" -mindepth 1 -maxdepth 1 -type d 2>/dev/null | wc -l)
completers=$({ grep -l "run $run_id completed" "$WORK"/worker-*.err 2>/dev/null || true; } | wc -l)
reporters=$({ grep -l "run $run_id report: " "$WORK"/worker-*.err 2>/dev/null || true; } | wc -l)
lost=$({ grep -ho '[0-9]* results not written' "$WORK"/worker-*.err || true; } | awk '{s += $1} END {print s + 0}')
# Truth: the simulator's world against the database.
truth_rc=0
"$RR" compare-truth --truth "$WORK/export/truth.jsonl" --bundle-id "$BUNDLE" --limit 10 >"$WORK/truth.txt" 2>&1 || truth_rc=$?
truth_line=$(tail -1 "$WORK/truth.txt")

per_sub=$(echo "scale=3; $sim_requests / $N" | bc)
per_item=$(echo "scale=3; $sim_requests / ($done_count + ($done_count == 0))" | bc)
achieved=$(echo "scale=1; $sim_requests / $wall" | bc)
active_rate="?"
[ "$first_req" != "?" ] && active_rate=$(echo "scale=1; $sim_requests / ($last_req - $first_req)" | bc)
rcs=""
for i in $(seq 1 "$WORKERS"); do rcs="$rcs${rcs:+,}w$i:${RCS[i]}"; done

echo "subscriptions=$N due=$due items=$items done_count=$done_count items_done=$items_done pending=$items_pending distinct_items=$items_distinct outcomes=$outcomes"
echo "runs=$runs run_id=$run_id status=$status workers_registered=$workers_rows written_by_survivors=$written_sum lost_results_logged=$lost"
echo "worker_exit_codes=$rcs killed=$([ "$KILLING" = 1 ] && echo "worker $KILL_WORKER at ${KILL_DONE:-?} items done, t=${kill_rel}s after the first request; survivors' share raised at t=${redivided_rel}s" || echo none)"
echo "sim_requests=$sim_requests run_requests=$run_requests retries=$run_retries requests_per_subscription=$per_sub requests_per_item=$per_item sim_rate_limited=$sim_limited"
echo "wall_seconds=$wall (workers started to last exit) first_request_at=${first_req}s last_request_at=${last_req}s achieved_rate=$achieved (requests / wall) active_rate=$active_rate (first to last request) steady_rate=$steady (10%..90%)"
echo "sim_peak_1s_window=$sim_peak (exact) polled_peak_window=$polled_peak at ${polled_peak_at}s seconds_over_rate=$seconds_over of $seconds_total whole seconds (max $max_second; over: $over_list)"
echo "subscription_versions=$versions report_folders=$report_dirs completed_by=$completers report_written_by=$reporters"
echo "truth: $truth_line (compare-truth exit $truth_rc)"
echo "load_after=\"$(cut -d' ' -f1-3 /proc/loadavg)\""

# ---- Checks --------------------------------------------------------------------------------------------------
FAILED=0
check() { # check NAME 0|1 DETAIL
    if [ "$2" = 0 ]; then echo "CHECK ok   $1 ($3)"; else echo "CHECK FAIL $1 ($3)"; FAILED=1; fi
}
holds() { if "$@"; then echo 0; else echo 1; fi; }   # 0 if the command succeeds
check "peak one-second window at most --rate" "$(holds [ "$sim_peak" -le "$RATE" ])" "simulator peak $sim_peak, rate $RATE"
for i in $(seq 1 "$WORKERS"); do
    if [ "$KILLING" = 1 ] && [ "$i" = "$KILL_WORKER" ]; then
        check "worker $i killed by SIGKILL" "$(holds [ "${RCS[i]}" = 137 ])" "exit ${RCS[i]}"
    else
        check "worker $i exit 0" "$(holds [ "${RCS[i]}" = 0 ])" "exit ${RCS[i]}"
    fi
done
if [ "$KILLING" = 1 ]; then
    check "the kill happened mid-run" "$(holds [ -n "$KILL_PID" ])" "at ${KILL_DONE:-never} items done"
fi
# Every worker that lived to the end wrote results: the items were shared, not all taken by one worker.
idle_survivors=$(q "SELECT count(*) FROM run_workers WHERE run_id = $run_id AND stopped_at IS NOT NULL AND written = 0")
check "every surviving worker wrote results" "$(holds [ "$idle_survivors" = 0 ])" "$idle_survivors wrote none"
check "exactly one run, completed" "$(( $(holds [ "$runs" = 1 ]) | $(holds [ "$status" = completed ]) ))" "runs=$runs status=$status"
check "items = due subscriptions" \
    "$(( $(holds [ "$items" = "$due" ]) | $(holds [ "$due" = "$subs" ]) | $(holds [ "$items_distinct" = "$items" ]) ))" \
    "items=$items distinct=$items_distinct due=$due subscriptions=$subs"
check "none pending" "$(holds [ "$items_pending" = 0 ])" "pending=$items_pending"
check "done_count = items (one result per item)" \
    "$(( $(holds [ "$done_count" = "$items" ]) | $(holds [ "$items_done" = "$items" ]) ))" \
    "done_count=$done_count items_done=$items_done items=$items"
check "no subscription written twice" "$(holds [ "$max_version" -le 2 ])" "versions $versions"
check "truth matches 100%" "$(holds [ "$truth_rc" = 0 ])" "$truth_line"
check "one report folder, written by one worker" \
    "$(( $(holds [ "$report_dirs" = 1 ]) | $(holds [ "$completers" = 1 ]) | $(holds [ "$reporters" = 1 ]) ))" \
    "folders=$report_dirs completed_by=$completers reported_by=$reporters"

echo "RESULT n=$N rate=$RATE workers=$WORKERS kill_at=$KILL_AT concurrency=$CONC wall=$wall requests=$sim_requests req_per_sub=$per_sub achieved_rate=$achieved active_rate=$active_rate steady_rate=$steady sim_peak=$sim_peak polled_peak=$polled_peak seconds_over=$seconds_over/$seconds_total exits=$rcs done=$done_count items=$items pending=$items_pending truth_rc=$truth_rc report_folders=$report_dirs checks=$([ "$FAILED" = 0 ] && echo pass || echo FAIL) load=\"$(cut -d' ' -f1-3 /proc/loadavg)\""
exit "$FAILED"
