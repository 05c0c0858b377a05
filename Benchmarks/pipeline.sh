#!/usr/bin/env bash
# End-to-end benchmark of the nightly run: a throwaway PostgreSQL seeded from the App Store simulator's
# export, the simulator serving on loopback, and `renewal-reconciler run` (release build) measured with
# /usr/bin/time and /proc.
#
# Usage: Benchmarks/pipeline.sh [options]
#   --subscriptions N     due subscriptions to create (default 10000)
#   --latency-ms L        simulator added latency (default 0)
#   --rate R              --rate of the run (default 1000000: unthrottled)
#   --concurrency C       --concurrency of the run (default 64)
#   --batch-size B        --batch-size of the run (default: the run's default)
#   --seed S              population seed (default 7)
#   --perf FILE           record the run with `perf record -g` into FILE
#   --no-build            do not run `swift build -c release` first
#   --bin-dir DIR         use the binaries in DIR (implies --no-build)
#   --keep DIR            keep the work directory (export, reports, logs) in DIR
# Prints one `key=value` line per figure and a final `RESULT ...` line. Run as root or a normal user
# (scripts/lib/throwaway-pg.sh handles both).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BIN="" N=10000 LATENCY=0 RATE=1000000 CONC=64 BATCH="" SEED=7 PERF="" BUILD=1 KEEP=""
while [ $# -gt 0 ]; do
    case "$1" in
        --subscriptions) N=$2; shift 2 ;;
        --latency-ms) LATENCY=$2; shift 2 ;;
        --rate) RATE=$2; shift 2 ;;
        --concurrency) CONC=$2; shift 2 ;;
        --batch-size) BATCH=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --perf) PERF=$2; shift 2 ;;
        --no-build) BUILD=0; shift ;;
        --bin-dir) BIN=$2; BUILD=0; shift 2 ;;
        --keep) KEEP=$2; shift 2 ;;
        -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
        *) echo "pipeline.sh: unknown option $1" >&2; exit 64 ;;
    esac
done

if [ "$BUILD" = 1 ]; then
    swift build -c release --product renewal-reconciler >&2
    swift build -c release --product appstore-simulator >&2
fi
[ -n "$BIN" ] || BIN=$(swift build -c release --show-bin-path)
RR=$BIN/renewal-reconciler
SIM=$BIN/appstore-simulator
NOW=2026-11-21T03:00:00Z
BUNDLE=com.example.renewals

# shellcheck source=../scripts/lib/throwaway-pg.sh
source scripts/lib/throwaway-pg.sh
throwaway_pg_start
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rr-bench.XXXXXX")
chmod 755 "$WORK"
SIM_PID=""
cleanup() {
    [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true
    [ -n "$SIM_PID" ] && wait "$SIM_PID" 2>/dev/null || true
    if [ -n "$KEEP" ]; then rm -rf "$KEEP"; mv "$WORK" "$KEEP"; else rm -rf "$WORK"; fi
    throwaway_pg_stop
}
trap cleanup EXIT

SECRET_FILE=$WORK/secret
printf 'bench-shared-secret' >"$SECRET_FILE"
export APPSTORE_SIM_SHARED_SECRET=bench-shared-secret

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$RR" migrate --sql-dir "$ROOT/sql" >/dev/null

t0=$(date +%s.%N)
"$SIM" export --seed "$SEED" --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --out "$WORK/export" 2>/dev/null
t1=$(date +%s.%N)
/usr/bin/time -f '%e %U %S %M' -o "$WORK/import.time" "$RR" import --file "$WORK/export/purchases.jsonl" >"$WORK/import.out"
t2=$(date +%s.%N)
read -r imp_wall imp_user imp_sys imp_rss <"$WORK/import.time"
echo "export_seconds=$(echo "$t1 - $t0" | bc)"
echo "import_seconds=$imp_wall import_rate=$(echo "$N / $imp_wall" | bc) import_peak_rss_kb=$imp_rss"

# Simulator on loopback.
SIM_ARGS=(serve --seed "$SEED" --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --port 0 --port-file "$WORK/port")
[ "$LATENCY" != 0 ] && SIM_ARGS+=(--latency-ms "$LATENCY")
"$SIM" "${SIM_ARGS[@]}" >"$WORK/sim.out" 2>&1 &
SIM_PID=$!
for _ in $(seq 1 600); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")
curl -sf -X POST "http://127.0.0.1:$PORT/_stats/reset" >/dev/null

# CPU (clock ticks) of a process, plus its reaped children (PostgreSQL backends are children of the postmaster).
ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat" 2>/dev/null || echo 0; }
pg_ticks() {
    local pm total=0 c
    pm=$(head -1 "$THROWAWAY_PG_DIR/data/postmaster.pid")
    total=$(ticks "$pm")
    for c in $(ps -o pid= --ppid "$pm"); do total=$((total + $(ticks "$c"))); done
    echo "$total"
}
HZ=$(getconf CLK_TCK)

RUN_ARGS=(run --now "$NOW" --rate "$RATE" --concurrency "$CONC" --bundle-id "$BUNDLE"
    --verify-url "http://127.0.0.1:$PORT/verifyReceipt" --sandbox-verify-url "http://127.0.0.1:$PORT/sandbox/verifyReceipt"
    --shared-secret-file "$SECRET_FILE" --report-dir "$WORK/reports" --max-unresolved 1)
[ -n "$BATCH" ] && RUN_ARGS+=(--batch-size "$BATCH")
CMD=("$RR" "${RUN_ARGS[@]}")
[ -n "$PERF" ] && CMD=(perf record -g -o "$PERF" -- "${CMD[@]}")

sim0=$(ticks "$SIM_PID"); pg0=$(pg_ticks)
/usr/bin/time -f '%e %U %S %M' -o "$WORK/run.time" "${CMD[@]}" >"$WORK/run.out" 2>"$WORK/run.err" &
TIME_PID=$!
# RSS sampler: the peak before the run logs its completion (scan + pipeline) is kept apart from the
# peak of the whole process (which includes writing the reports, after the pipeline).
(
    peak=0 rr=""
    while kill -0 "$TIME_PID" 2>/dev/null; do
        # The run is the child of /usr/bin/time (of perf with --perf); matching the command line would
        # also find /usr/bin/time itself, or another benchmark's run.
        [ -n "$rr" ] || rr=$(pgrep -P "$TIME_PID" | head -1 || true)
        if [ -n "$rr" ] && ! grep -q " completed: \| partial: \| interrupted: " "$WORK/run.err" 2>/dev/null; then
            kb=$(awk '/^VmRSS/ {print $2}' "/proc/$rr/status" 2>/dev/null || echo 0)
            [ "${kb:-0}" -gt "$peak" ] && peak=$kb && echo "$peak" >"$WORK/pipeline.rss"
        fi
        sleep 0.2
    done
) &
SAMPLER=$!
# Request counter of the simulator once a second, for the steady rate (ramp-up and retry tail excluded).
(
    while kill -0 "$TIME_PID" 2>/dev/null; do
        n=$(curl -sf "http://127.0.0.1:$PORT/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests_total"])' 2>/dev/null || echo "")
        [ -n "$n" ] && echo "$(date +%s.%N) $n" >>"$WORK/requests.series"
        sleep 1
    done
) &
POLLER=$!
wait "$TIME_PID" || { echo "run failed (exit $?):" >&2; tail -20 "$WORK/run.err" >&2; exit 1; }
wait "$SAMPLER" "$POLLER" 2>/dev/null || true
# Steady rate: requests between the moments 10% and 90% of them had arrived, over that time.
steady=$(python3 - "$WORK/requests.series" <<'PY'
import sys
pts = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
total = pts[-1][1] if pts else 0
lo = next((p for p in pts if p[1] >= 0.1 * total), None)
hi = next((p for p in pts if p[1] >= 0.9 * total), None)
print(f"{(hi[1] - lo[1]) / (hi[0] - lo[0]):.1f}" if lo and hi and hi[0] > lo[0] else "?")
PY
)
pipeline_rss=$(cat "$WORK/pipeline.rss" 2>/dev/null || echo "?")
sim1=$(ticks "$SIM_PID"); pg1=$(pg_ticks)
read -r wall user sys rss <"$WORK/run.time"

# The run's own figures, from its row.
q() { psql -X -qAt "$DATABASE_URL" -c "$1"; }
read -r due done_count elapsed requests achieved retries < <(q "SELECT due_count, done_count,
    apple_stats->>'elapsed_seconds', apple_stats->>'requests', apple_stats->>'achieved_rate', apple_stats->>'retries'
    FROM reconciliation_runs ORDER BY id DESC LIMIT 1" | tr '|' ' ')
stats=$(curl -sf "http://127.0.0.1:$PORT/_stats")
peak=$(echo "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["peak_requests_per_second"])')

echo "due=$due done=$done_count requests=$requests retries=$retries"
echo "run_wall_seconds=$wall pipeline_seconds=$(printf '%.2f' "$elapsed")"
echo "subs_per_second_wall=$(echo "$done_count / $wall" | bc) subs_per_second_pipeline=$(echo "$done_count / $elapsed" | bc)"
echo "apple_requests_per_second=$(printf '%.1f' "$achieved") rate_fraction=$(echo "scale=4; $achieved / $RATE" | bc) steady_requests_per_second=$steady (10%..90% of the requests) steady_fraction=$(echo "scale=4; ${steady/\?/0} / $RATE" | bc) sim_peak_1s_window=$peak"
echo "reconciler_cpu_seconds=$(echo "$user + $sys" | bc) (user $user, sys $sys) cpu_us_per_sub=$(echo "($user + $sys) * 1000000 / $done_count" | bc)"
echo "simulator_cpu_seconds=$(echo "scale=2; ($sim1 - $sim0) / $HZ" | bc) postgres_cpu_seconds=$(echo "scale=2; ($pg1 - $pg0) / $HZ" | bc)"
echo "reconciler_peak_rss_kb=$rss (whole process, reports included) pipeline_peak_rss_kb=$pipeline_rss (sampled every 0.2 s until the run logs its completion)"
echo "RESULT n=$N latency_ms=$LATENCY rate=$RATE concurrency=$CONC batch=${BATCH:-default} done=$done_count wall=$wall pipeline=$(printf '%.2f' "$elapsed") subs_s_wall=$(echo "$done_count / $wall" | bc) req_s=$(printf '%.1f' "$achieved") steady_req_s=$steady cpu_us_per_sub=$(echo "($user + $sys) * 1000000 / $done_count" | bc) rss_kb=$rss pipeline_rss_kb=$pipeline_rss peak_window=$peak import_rate=$(echo "$N / $imp_wall" | bc) load=\"$(cut -d' ' -f1-3 /proc/loadavg)\""
