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
#   --second-night        after the first night, run again with --now one day later (same simulator world):
#                         the quiet night's requests per due subscription and database cost (= --nights 2)
#   --nights N            N nights in all, each one day after the one before (figures prefixed nightK_)
#   --history K           after the second night (needs --nights 3 or more), K copies of its run and items
#                         dated 2..K+1 days before it (before the first night): a history of K quiet nights
#   --pg-stats            record pg_stat_statements and print each night's top statements by time
#   --pg-cpu              log each statement's CPU (log_statement_stats) and print each night's top statements by
#                         PostgreSQL CPU (Benchmarks/statement-cpu.py); the logging costs some CPU of its own
#   --run-args "ARGS"     extra arguments for both runs (e.g. "--sweep-days 0")
#   --hold FILE           after the last night, write DATABASE_URL to FILE and keep PostgreSQL and the simulator
#                         up until FILE is removed (to EXPLAIN the night's statements by hand)
# Prints one `key=value` line per figure and a final `RESULT ...` line per night (figures of the second
# night prefixed `night2_`). Run as root or a normal user (scripts/lib/throwaway-pg.sh handles both).
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

HOLD="" BIN="" N=10000 LATENCY=0 RATE=1000000 CONC=64 BATCH="" SEED=7 PERF="" BUILD=1 KEEP="" NIGHTS=1 HISTORY=0 PGSTATS=0 PGCPU=0 EXTRA=""
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
        --second-night) NIGHTS=2; shift ;;
        --nights) NIGHTS=$2; shift 2 ;;
        --history) HISTORY=$2; shift 2 ;;
        --pg-stats) PGSTATS=1; shift ;;
        --pg-cpu) PGCPU=1; shift ;;
        --run-args) EXTRA=$2; shift 2 ;;
        --hold) HOLD=$2; shift 2 ;;
        -h|--help) sed -n '2,30p' "$0"; exit 0 ;;
        *) echo "pipeline.sh: unknown option $1" >&2; exit 64 ;;
    esac
done

# shellcheck source=lib.sh
source Benchmarks/lib.sh

# shellcheck source=../scripts/lib/throwaway-pg.sh
source scripts/lib/throwaway-pg.sh
[ "$PGSTATS" = 1 ] && export THROWAWAY_PG_EXTRA_CONF="shared_preload_libraries = 'pg_stat_statements'
pg_stat_statements.track = all
pg_stat_statements.track_planning = on"
[ "$PGCPU" = 1 ] && export THROWAWAY_PG_EXTRA_CONF="${THROWAWAY_PG_EXTRA_CONF:-}
log_statement = 'all'
log_statement_stats = on
log_parameter_max_length = 0"
throwaway_pg_start
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rr-bench.XXXXXX")
chmod 755 "$WORK"
SIM_PID=""
cleanup() {
    [ -n "$SIM_PID" ] && kill "$SIM_PID" 2>/dev/null || true
    [ -n "$SIM_PID" ] && wait "$SIM_PID" 2>/dev/null || true
    # With --keep, PostgreSQL's log goes with the rest (auto_explain plans, through THROWAWAY_PG_EXTRA_CONF).
    [ -n "$KEEP" ] && cp "$THROWAWAY_PG_DIR/server.log" "$WORK/postgres.log" 2>/dev/null || true
    if [ -n "$KEEP" ]; then rm -rf "$KEEP"; mv "$WORK" "$KEEP"; else rm -rf "$WORK"; fi
    throwaway_pg_stop
}
trap cleanup EXIT

SECRET_FILE=$WORK/secret
printf 'bench-shared-secret' >"$SECRET_FILE"
export APPSTORE_SIM_SHARED_SECRET=bench-shared-secret

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
"$RR" migrate --sql-dir "$ROOT/sql" >/dev/null
[ "$PGSTATS" = 1 ] && psql -X -q "$DATABASE_URL" -c "CREATE EXTENSION IF NOT EXISTS pg_stat_statements" >/dev/null

t0=$(date +%s.%N)
"$SIM" export --seed "$SEED" --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --out "$WORK/export" 2>/dev/null
t1=$(date +%s.%N)
/usr/bin/time -f '%e %U %S %M' -o "$WORK/import.time" "$RR" import --file "$WORK/export/purchases.jsonl" >"$WORK/import.out"
read -r imp_wall _ _ imp_rss <"$WORK/import.time"
echo "export_seconds=$(echo "$t1 - $t0" | bc)"
echo "import_seconds=$imp_wall import_rate=$(echo "$N / $imp_wall" | bc) import_peak_rss_kb=$imp_rss"

# Simulator on loopback.
SIM_ARGS=(serve --seed "$SEED" --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --port 0 --port-file "$WORK/port")
[ "$LATENCY" != 0 ] && SIM_ARGS+=(--latency-ms "$LATENCY")
"$SIM" "${SIM_ARGS[@]}" >"$WORK/sim.out" 2>&1 &
SIM_PID=$!
for _ in $(seq 1 600); do [ -s "$WORK/port" ] && break; sleep 0.1; done
PORT=$(cat "$WORK/port")

# CPU (clock ticks) of a process, plus its reaped children (PostgreSQL backends are children of the postmaster).
ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat" 2>/dev/null || echo 0; }
pg_ticks() {
    local pm total=0 c
    pm=$(head -1 "$THROWAWAY_PG_DIR/data/postmaster.pid")
    total=$(ticks "$pm")
    for c in $(ps -o pid= --ppid "$pm"); do total=$((total + $(ticks "$c"))); done
    echo "$total"
}
# pg_sample FILE: one line per PostgreSQL child process, "pid ticks kind" (kind: the process title's first
# word after "postgres:", "backend" for a client connection). Sampled every 0.2 s during a run, the last
# sample of each pid tells where PostgreSQL's CPU went. A lower bound per kind: what a process spent after
# its last sample (a connection closing at the end of the run, one opened and closed between two samples)
# is missing here, though counted in postgres_cpu_seconds (the postmaster's reaped children).
pg_sample() {
    local pm c title kind
    pm=$(head -1 "$THROWAWAY_PG_DIR/data/postmaster.pid")
    for c in $(ps -o pid= --ppid "$pm"); do
        title=$(tr '\0' ' ' <"/proc/$c/cmdline" 2>/dev/null || true)
        case "$title" in
            "postgres: autovacuum worker"*) kind=autovacuum ;;
            "postgres: checkpointer"* | "postgres: background writer"* | "postgres: walwriter"*) kind=writers ;;
            "postgres: autovacuum launcher"* | "postgres: logical"* | "postgres: stats"* | "postgres: archiver"*) kind=other ;;
            *) kind=backend ;;
        esac
        echo "$c $(ticks "$c") $kind"
    done >>"$1"
}
HZ=$(getconf CLK_TCK)
q() { psql -X -qAt "$DATABASE_URL" -c "$1"; }

# night LABEL NOW PREFIX: one measured run as of NOW; figures printed with PREFIX.
night() {
    local LABEL=$1 RUN_NOW=$2 P=$3
    curl -sf -X POST "http://127.0.0.1:$PORT/_stats/reset" >/dev/null
    # The previous night's dead rows vacuumed first, then a second for the postmaster to reap that backend,
    # so its CPU is not counted as the run's.
    q "VACUUM ANALYZE" >/dev/null
    [ "$PGSTATS" = 1 ] && q "SELECT pg_stat_statements_reset()" >/dev/null
    local log0
    log0=$(wc -l <"$THROWAWAY_PG_DIR/server.log")
    sleep 1
    local RUN_ARGS=(run --now "$RUN_NOW" --rate "$RATE" --concurrency "$CONC" --bundle-id "$BUNDLE"
        --verify-url "http://127.0.0.1:$PORT/verifyReceipt" --sandbox-verify-url "http://127.0.0.1:$PORT/sandbox/verifyReceipt"
        --shared-secret-file "$SECRET_FILE" --report-dir "$WORK/reports-$LABEL" --max-unresolved 1)
    [ -n "$BATCH" ] && RUN_ARGS+=(--batch-size "$BATCH")
    # shellcheck disable=SC2206
    [ -n "$EXTRA" ] && RUN_ARGS+=($EXTRA)
    local CMD=("$RR" "${RUN_ARGS[@]}")
    [ -n "$PERF" ] && CMD=(perf record -g -o "$PERF.$LABEL" -- "${CMD[@]}")

    local sim0 pg0 sim1 pg1 wal0 upd0 hot0
    # The write-ahead log's position and the app table's update counters (pg_stat_user_tables; flushed by the
    # run's backends when they end) before the run.
    wal0=$(q "SELECT pg_current_wal_lsn()")
    read -r upd0 hot0 < <(q "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'subscriptions'" | tr '|' ' ')
    sim0=$(ticks "$SIM_PID"); pg0=$(pg_ticks)
    : >"$WORK/pg-$LABEL.samples"
    pg_sample "$WORK/pg-$LABEL.samples"
    sed -i 's/^/start /' "$WORK/pg-$LABEL.samples"
    /usr/bin/time -f '%e %U %S %M' -o "$WORK/run-$LABEL.time" "${CMD[@]}" >"$WORK/run-$LABEL.out" 2>"$WORK/run-$LABEL.err" &
    local TIME_PID=$!
    # RSS sampler: the peak before the run logs its completion (scan + pipeline) is kept apart from the
    # peak of the whole process (which includes writing the reports, after the pipeline).
    (
        peak=0 rr=""
        while kill -0 "$TIME_PID" 2>/dev/null; do
            # The run is the child of /usr/bin/time; matching the command line would also find
            # /usr/bin/time itself (about 1.4 MB).
            [ -n "$rr" ] || rr=$(pgrep -P "$TIME_PID" | head -1 || true)
            if [ -n "$rr" ] && ! grep -q " completed: \| partial: \| interrupted: " "$WORK/run-$LABEL.err" 2>/dev/null; then
                kb=$(awk '/^VmRSS/ {print $2}' "/proc/$rr/status" 2>/dev/null || echo 0)
                [ "${kb:-0}" -gt "$peak" ] && peak=$kb && echo "$peak" >"$WORK/pipeline-$LABEL.rss"
            fi
            pg_sample "$WORK/pg-$LABEL.samples"
            sleep 0.2
        done
    ) &
    local SAMPLER=$!
    # Request counter of the simulator once a second, for the steady rate (ramp-up and retry tail excluded).
    (
        while kill -0 "$TIME_PID" 2>/dev/null; do
            n=$(curl -sf "http://127.0.0.1:$PORT/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests_total"])' 2>/dev/null || echo "")
            [ -n "$n" ] && echo "$(date +%s.%N) $n" >>"$WORK/requests-$LABEL.series"
            sleep 1
        done
    ) &
    local POLLER=$!
    wait "$TIME_PID" || { echo "run $LABEL failed (exit $?):" >&2; tail -20 "$WORK/run-$LABEL.err" >&2; exit 1; }
    wait "$SAMPLER" "$POLLER" 2>/dev/null || true
    sim1=$(ticks "$SIM_PID"); pg1=$(pg_ticks)
    sleep 1  # the run's backends report their table counters as they exit
    local wal_bytes upd1 hot1
    wal_bytes=$(q "SELECT pg_wal_lsn_diff(pg_current_wal_lsn(), '$wal0')::bigint")
    read -r upd1 hot1 < <(q "SELECT n_tup_upd, n_tup_hot_upd FROM pg_stat_user_tables WHERE relname = 'subscriptions'" | tr '|' ' ')
    # PostgreSQL's CPU by kind of process: the last sample of each pid less its sample at the start.
    local pg_kinds
    pg_kinds=$(awk -v hz="$HZ" '
        $1 == "start" { base[$2] = $3; next }
        { last[$1] = $2; kind[$1] = $3 }
        END {
            for (p in last) sum[kind[p]] += last[p] - (p in base ? base[p] : 0)
            out = ""
            for (k in sum) out = out sprintf("%s%s=%.2fs", out == "" ? "" : " ", k, sum[k] / hz)
            print out
        }' "$WORK/pg-$LABEL.samples")
    # Steady rate: requests between the moments 10% and 90% of them had arrived, over that time.
    local steady
    steady=$(python3 - "$WORK/requests-$LABEL.series" <<'PY'
import sys
try:
    pts = [tuple(map(float, l.split())) for l in open(sys.argv[1]) if l.strip()]
except FileNotFoundError:
    pts = []
total = pts[-1][1] if pts else 0
lo = next((p for p in pts if p[1] >= 0.1 * total), None)
hi = next((p for p in pts if p[1] >= 0.9 * total), None)
print(f"{(hi[1] - lo[1]) / (hi[0] - lo[0]):.1f}" if lo and hi and hi[0] > lo[0] else "?")
PY
)
    local pipeline_rss wall user sys rss
    pipeline_rss=$(cat "$WORK/pipeline-$LABEL.rss" 2>/dev/null || echo "?")
    read -r wall user sys rss <"$WORK/run-$LABEL.time"

    # The run's own figures, from its row.
    local due done_count elapsed requests achieved retries sweep stats peak sim_requests
    read -r due done_count elapsed requests achieved retries sweep < <(q "SELECT due_count, done_count,
        apple_stats->>'elapsed_seconds', apple_stats->>'requests', apple_stats->>'achieved_rate', apple_stats->>'retries',
        COALESCE(sweep_quota, 0) FROM reconciliation_runs ORDER BY id DESC LIMIT 1" | tr '|' ' ')
    stats=$(curl -sf "http://127.0.0.1:$PORT/_stats")
    peak=$(echo "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["peak_requests_per_second"])')
    sim_requests=$(echo "$stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests_total"])')
    local per_due="n/a" cpu_us pg_us pg_us_world
    [ "$done_count" -gt 0 ] && per_due=$(echo "scale=3; $sim_requests / $done_count" | bc)
    cpu_us=$(echo "($user + $sys) * 1000000 / ($done_count + ($done_count == 0))" | bc)
    pg_us=$(echo "($pg1 - $pg0) * 1000000 / $HZ / ($done_count + ($done_count == 0))" | bc)
    pg_us_world=$(echo "($pg1 - $pg0) * 1000000 / $HZ / $N" | bc)

    echo "${P}due=$due done=$done_count sweep_quota=$sweep requests=$requests retries=$retries sim_requests=$sim_requests requests_per_due=$per_due"
    echo "${P}run_wall_seconds=$wall pipeline_seconds=$(printf '%.2f' "$elapsed")"
    echo "${P}subs_per_second_wall=$(echo "$done_count / $wall" | bc) subs_per_second_pipeline=$(echo "$done_count / ($elapsed + ($elapsed == 0))" | bc)"
    echo "${P}apple_requests_per_second=$(printf '%.1f' "$achieved") steady_requests_per_second=$steady (10%..90% of the requests) sim_peak_1s_window=$peak"
    echo "${P}reconciler_cpu_seconds=$(echo "$user + $sys" | bc) (user $user, sys $sys) cpu_us_per_sub=$cpu_us"
    echo "${P}simulator_cpu_seconds=$(echo "scale=2; ($sim1 - $sim0) / $HZ" | bc) postgres_cpu_seconds=$(echo "scale=2; ($pg1 - $pg0) / $HZ" | bc) postgres_us_per_due_sub=$pg_us postgres_us_per_world_sub=$pg_us_world"
    echo "${P}postgres_cpu_by_process=\"$pg_kinds\" (sampled every 0.2 s, a lower bound per kind; backends are the run's connections)"
    echo "${P}wal_bytes=$wal_bytes wal_bytes_per_item=$(echo "$wal_bytes / ($done_count + ($done_count == 0))" | bc) app_row_updates=$((upd1 - upd0)) (hot $((hot1 - hot0))) (subscriptions; the run's whole night: scan, writes, reports)"
    echo "${P}reconciler_peak_rss_kb=$rss (whole process, reports included) pipeline_peak_rss_kb=$pipeline_rss (sampled every 0.2 s until the run logs its completion)"
    if [ "$PGSTATS" = 1 ]; then
        echo "${P}statements: $(q "SELECT sum(calls) || ' calls, planning ' || round(sum(total_plan_time)) || ' ms, executing ' ||
                  round(sum(total_exec_time)) || ' ms' FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'")"
        echo "${P}top statements (pg_stat_statements, execution + planning ms, calls, rows, first 110 characters):"
        q "SELECT round(total_exec_time)::text || ' + ' || round(total_plan_time)::text || ' ms | ' || calls || ' calls | ' ||
                  rows || ' rows | ' || left(regexp_replace(query, '\s+', ' ', 'g'), 110)
             FROM pg_stat_statements WHERE query NOT LIKE '%pg_stat_statements%'
            ORDER BY total_exec_time + total_plan_time DESC LIMIT 14" | sed "s/^/${P}  /"
    fi
    if [ "$PGCPU" = 1 ]; then
        tail -n +"$((log0 + 1))" "$THROWAWAY_PG_DIR/server.log" >"$WORK/pg-$LABEL.log"
        python3 Benchmarks/statement-cpu.py "$WORK/pg-$LABEL.log" | sed "s/^/${P}/"
    fi
    echo "${P}RESULT n=$N latency_ms=$LATENCY rate=$RATE concurrency=$CONC batch=${BATCH:-default} due=$due done=$done_count wall=$wall pipeline=$(printf '%.2f' "$elapsed") subs_s_wall=$(echo "$done_count / $wall" | bc) req_per_due=$per_due steady_req_s=$steady cpu_us_per_sub=$cpu_us pg_us_per_sub=$pg_us pg_us_per_world_sub=$pg_us_world rss_kb=$rss pipeline_rss_kb=$pipeline_rss wal_per_item=$(echo "$wal_bytes / ($done_count + ($done_count == 0))" | bc) app_updates=$((upd1 - upd0)) peak_window=$peak load=\"$(cut -d' ' -f1-3 /proc/loadavg)\""
}

# history K: K copies of the newest run and its items, dated 2..K+1 days before it, as K earlier nights would have
# left them (completed, not dry).
history() {
    local t0 t1
    t0=$(date +%s.%N)
    q "WITH src AS (SELECT * FROM reconciliation_runs ORDER BY id DESC LIMIT 1),
            copies AS (
              INSERT INTO reconciliation_runs
              SELECT r.* FROM src, generate_series(1, $1) AS k,
                     LATERAL jsonb_populate_record(NULL::reconciliation_runs, to_jsonb(src) || jsonb_build_object(
                        'id', nextval('reconciliation_runs_id_seq'),
                        'as_of', src.as_of - (k + 1) * interval '1 day',
                        'started_at', src.started_at - (k + 1) * interval '1 day',
                        'finished_at', src.finished_at - (k + 1) * interval '1 day')) AS r
              RETURNING id)
       INSERT INTO reconciliation_items
       SELECT x.* FROM copies c, reconciliation_items i,
              LATERAL jsonb_populate_record(NULL::reconciliation_items, to_jsonb(i) || jsonb_build_object('run_id', c.id)) AS x
        WHERE i.run_id = (SELECT id FROM src)" >/dev/null
    t1=$(date +%s.%N)
    echo "history_nights=$1 history_items=$(q "SELECT count(*) FROM reconciliation_items") history_seconds=$(echo "$t1 - $t0" | bc)"
}

if [ "$HISTORY" -gt 0 ] && [ "$NIGHTS" -lt 3 ]; then
    echo "pipeline.sh: --history needs --nights 3 or more (the history is made after the second night)" >&2
    exit 64
fi
night first "$NOW" ""
for k in $(seq 2 "$NIGHTS"); do
    NEXT=$(date -u -d "$NOW + $((k - 1)) day" +%Y-%m-%dT%H:%M:%SZ)
    night "night$k" "$NEXT" "night${k}_"
    if [ "$k" = 2 ] && [ "$HISTORY" -gt 0 ]; then history "$HISTORY"; fi
done
echo "items_after_last_night=$(q "SELECT count(*) FROM reconciliation_items")"
if [ -n "$HOLD" ]; then
    echo "$DATABASE_URL" >"$HOLD"
    echo "holding PostgreSQL and the simulator (port $PORT) until $HOLD is removed" >&2
    while [ -e "$HOLD" ]; do sleep 1; done
fi
