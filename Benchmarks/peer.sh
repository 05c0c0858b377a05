#!/usr/bin/env bash
# The first night against a Python peer (issue 30, acceptance 2), both measured in one invocation on the same
# world: `renewal-reconciler run` (pipeline.sh's first night) and Benchmarks/peer/peer.py (requests + psycopg,
# 64 threads, one statement per row, no ledger and no reports), each on a fresh database (dropped, migrated,
# imported, VACUUM ANALYZE) and a freshly started simulator of the same seed and world.
#
# Usage: Benchmarks/peer.sh [options]
#   --subscriptions N     subscriptions in the world, all due on a first night (default 20000)
#   --seed S              population seed (default 7)
#   --bin-dir DIR         use the binaries in DIR (else `swift build -c release` first)
#   --keep DIR            keep the work directory (export, logs, per-row states) in DIR
#   --order ORDER         reconciler-peer (default) or peer-reconciler
#   --peer-args "ARGS"    extra arguments for peer.py (e.g. "--plain-update")
#   --schema-upto NNN     migrate with sql/ up to NNN_*.sql only: for a reconciler binary built before the newest
#                         migrations (the peer reads the schema it finds)
# The peer's Python packages (Benchmarks/peer/requirements.txt) go into a venv under
# ${XDG_CACHE_HOME:-~/.cache}/renewal-reconciler-peer (made once, pip); if pip fails, the system python3 with
# Debian's python3-psycopg and python3-requests. Prints `key=value` lines per contender (prefixed `rr_` and
# `peer_`), the rows per state after each and where the two disagree, and a final RESULT line with
# ratio = (peer CPU + PostgreSQL CPU) / (reconciler CPU + PostgreSQL CPU), per due subscription.
set -euo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD

BIN="" N=20000 SEED=7 BUILD=1 KEEP="" ORDER=reconciler-peer PEER_ARGS="" SCHEMA_UPTO=""
# shellcheck disable=SC2034  # BIN and BUILD are read by Benchmarks/lib.sh
while [ $# -gt 0 ]; do
    case "$1" in
        --subscriptions) N=$2; shift 2 ;;
        --seed) SEED=$2; shift 2 ;;
        --bin-dir) BIN=$2; BUILD=0; shift 2 ;;
        --keep) KEEP=$2; shift 2 ;;
        --order) ORDER=$2; shift 2 ;;
        --peer-args) PEER_ARGS=$2; shift 2 ;;
        --schema-upto) SCHEMA_UPTO=$2; shift 2 ;;
        -h|--help) sed -n '2,21p' "$0"; exit 0 ;;
        *) echo "peer.sh: unknown option $1" >&2; exit 64 ;;
    esac
done
case "$ORDER" in
    reconciler-peer) CONTENDERS=(rr peer) ;;
    peer-reconciler) CONTENDERS=(peer rr) ;;
    *) echo "peer.sh: --order is reconciler-peer or peer-reconciler" >&2; exit 64 ;;
esac

# shellcheck source=lib.sh
source Benchmarks/lib.sh

# A binary built before migration 018 fails on its schema mid-run: say so before anything is set up.
if [ -z "$SCHEMA_UPTO" ] && [ -e sql/018_subscription_checks.sql ] && ! grep -q subscription_checks "$RR"; then
    echo "peer.sh: $RR predates sql/018_subscription_checks.sql; rebuild it, or give --schema-upto 017" >&2
    exit 65
fi

# The peer's Python: a cached venv, else the system's with Debian's packages.
VENV=${XDG_CACHE_HOME:-$HOME/.cache}/renewal-reconciler-peer/venv
PY=$VENV/bin/python
if ! "$PY" -c 'import psycopg, requests' 2>/dev/null; then
    rm -rf "$VENV"
    if ! { python3 -m venv "$VENV" && "$VENV/bin/pip" install -q -r Benchmarks/peer/requirements.txt; } >&2; then
        echo "peer.sh: pip failed; trying Debian's python3-psycopg and python3-requests" >&2
        PY=/usr/bin/python3
        if ! "$PY" -c 'import psycopg, requests' 2>/dev/null; then
            [ "$(id -u)" = 0 ] && apt-get install -y -q python3-psycopg python3-requests >&2
            "$PY" -c 'import psycopg, requests' || { echo "peer.sh: no psycopg 3 / requests for the peer" >&2; exit 69; }
        fi
    fi
fi

# shellcheck source=../scripts/lib/throwaway-pg.sh
source scripts/lib/throwaway-pg.sh
throwaway_pg_start
ADMIN_URL=$DATABASE_URL
export DATABASE_URL=${ADMIN_URL%/*}/rr_peer_bench
WORK=$(mktemp -d "${TMPDIR:-/tmp}/rr-peer.XXXXXX")
chmod 755 "$WORK"
SIM_PID=""
stop_sim() {
    if [ -n "$SIM_PID" ]; then
        kill "$SIM_PID" 2>/dev/null || true
        wait "$SIM_PID" 2>/dev/null || true
        SIM_PID=""
    fi
}
cleanup() {
    stop_sim
    if [ -n "$KEEP" ]; then rm -rf "$KEEP"; mv "$WORK" "$KEEP"; else rm -rf "$WORK"; fi
    throwaway_pg_stop
}
trap cleanup EXIT

SQL_DIR=$ROOT/sql
if [ -n "$SCHEMA_UPTO" ]; then
    SQL_DIR=$WORK/sql
    mkdir -p "$SQL_DIR"
    for f in "$ROOT"/sql/[0-9][0-9][0-9]_*.sql; do
        n=$(basename "$f"); n=${n%%_*}
        [ "$((10#$n))" -le "$((10#$SCHEMA_UPTO))" ] && cp "$f" "$SQL_DIR/"
    done
fi
echo "schema=\"$(basename "$(find "$SQL_DIR" -maxdepth 1 -name '[0-9]*.sql' | sort | tail -1)")\" (the newest migration applied)"

SECRET_FILE=$WORK/secret
printf 'bench-shared-secret' >"$SECRET_FILE"
chmod 600 "$SECRET_FILE"

echo "machine: $(nproc) cores, $(awk '/MemTotal/ {printf "%.1f GB", $2/1048576}' /proc/meminfo), $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)"
echo "peer_python=\"$("$PY" -c 'import sys, psycopg, requests; print(sys.version.split()[0], "psycopg", psycopg.__version__, psycopg.pq.__impl__, "requests", requests.__version__)')\""
"$SIM" export --seed "$SEED" --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --out "$WORK/export" 2>/dev/null

ticks() { awk '{print $14 + $15 + $16 + $17}' "/proc/$1/stat" 2>/dev/null || echo 0; }
# PostgreSQL's CPU: the postmaster with its reaped children (the contender's backends, once they end) and its
# live children.
pg_ticks() {
    local pm total c
    pm=$(head -1 "$THROWAWAY_PG_DIR/data/postmaster.pid")
    total=$(ticks "$pm")
    for c in $(ps -o pid= --ppid "$pm"); do total=$((total + $(ticks "$c"))); done
    echo "$total"
}
HZ=$(getconf CLK_TCK)
q() { psql -X -qAt "$DATABASE_URL" -c "$1"; }

# A fresh world: the database dropped and made again, migrated and imported, the simulator started anew.
fresh_world() {
    stop_sim
    psql -X -q "$ADMIN_URL" -c "DROP DATABASE IF EXISTS rr_peer_bench" -c "CREATE DATABASE rr_peer_bench" >/dev/null
    "$RR" migrate --sql-dir "$SQL_DIR" >/dev/null
    "$RR" import --file "$WORK/export/purchases.jsonl" >"$WORK/import-$1.out"
    rm -f "$WORK/port"
    "$SIM" serve --seed "$SEED" --subscriptions "$N" --now "$NOW" --bundle-id "$BUNDLE" --port 0 \
        --port-file "$WORK/port" --shared-secret-file "$SECRET_FILE" >"$WORK/sim-$1.out" 2>&1 &
    SIM_PID=$!
    for _ in $(seq 1 600); do [ -s "$WORK/port" ] && break; sleep 0.1; done
    PORT=$(cat "$WORK/port")
    q "VACUUM ANALYZE" >/dev/null
    sleep 1  # the postmaster reaps the VACUUM's backend, so its CPU is not counted as the contender's
}

# contender NAME: one measured first night of NAME (rr or peer) on a fresh world; figures prefixed NAME_.
contender() {
    local C=$1 P="$1_"
    fresh_world "$C"
    local VERIFY="http://127.0.0.1:$PORT/verifyReceipt" SANDBOX="http://127.0.0.1:$PORT/sandbox/verifyReceipt"
    local CMD
    if [ "$C" = rr ]; then
        CMD=("$RR" run --now "$NOW" --rate 1000000 --concurrency 64 --bundle-id "$BUNDLE"
            --verify-url "$VERIFY" --sandbox-verify-url "$SANDBOX"
            --shared-secret-file "$SECRET_FILE" --report-dir "$WORK/reports" --max-unresolved 1)
    else
        # shellcheck disable=SC2206
        CMD=("$PY" "$ROOT/Benchmarks/peer/peer.py" --now "$NOW" --threads 64 --bundle-id "$BUNDLE"
            --verify-url "$VERIFY" --sandbox-verify-url "$SANDBOX" --shared-secret-file "$SECRET_FILE" $PEER_ARGS)
    fi
    local load0 sim0 pg0 sim1 pg1 wall user sys rss
    load0=$(cut -d' ' -f1-3 /proc/loadavg)
    sim0=$(ticks "$SIM_PID"); pg0=$(pg_ticks)
    /usr/bin/time -f '%e %U %S %M' -o "$WORK/$C.time" "${CMD[@]}" >"$WORK/$C.out" 2>"$WORK/$C.err" \
        || { echo "$C failed (exit $?):" >&2; tail -20 "$WORK/$C.err" >&2; exit 1; }
    sleep 1  # the contender's last backends end and are reaped
    sim1=$(ticks "$SIM_PID"); pg1=$(pg_ticks)
    read -r wall user sys rss <"$WORK/$C.time"

    local due done_count sim_requests
    if [ "$C" = rr ]; then
        read -r due done_count < <(q "SELECT due_count, done_count FROM reconciliation_runs ORDER BY id DESC LIMIT 1" | tr '|' ' ')
        echo "${P}run=\"$(grep -o ' completed: .*\| partial: .*' "$WORK/rr.err" | tail -1 | cut -c1-200)\""
    else
        due=$(grep -o 'due=[0-9]*' "$WORK/peer.out" | cut -d= -f2)
        done_count=$due
        echo "${P}run=\"$(tail -1 "$WORK/peer.out")\""
    fi
    sim_requests=$(curl -sf "http://127.0.0.1:$PORT/_stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["requests_total"])')
    local own pg sim den
    den=$((done_count + (done_count == 0)))
    own=$(echo "$user + $sys" | bc)
    pg=$(echo "scale=2; ($pg1 - $pg0) / $HZ" | bc)
    sim=$(echo "scale=2; ($sim1 - $sim0) / $HZ" | bc)
    echo "${P}due=$due done=$done_count sim_requests=$sim_requests"
    echo "${P}wall_seconds=$wall subs_per_second=$(echo "$done_count / $wall" | bc)"
    echo "${P}own_cpu_seconds=$own (user $user, sys $sys) own_us_per_sub=$(echo "$own * 1000000 / $den" | bc)"
    echo "${P}postgres_cpu_seconds=$pg postgres_us_per_sub=$(echo "$pg * 1000000 / $den" | bc)"
    echo "${P}outside_simulator_us_per_sub=$(echo "($own + $pg) * 1000000 / $den" | bc)"
    echo "${P}simulator_cpu_seconds=$sim simulator_us_per_sub=$(echo "$sim * 1000000 / $den" | bc)"
    echo "${P}peak_rss_kb=$rss load_before=\"$load0\" load_after=\"$(cut -d' ' -f1-3 /proc/loadavg)\""
    local verified_sql="SELECT count(*) FROM subscriptions WHERE last_verified_at IS NOT NULL"
    [ "$(q "SELECT to_regclass('subscription_checks') IS NOT NULL")" = t ] \
        && verified_sql="SELECT count(*) FROM subscription_checks WHERE last_verified_at IS NOT NULL"
    echo "${P}states=\"$(q "SELECT coalesce(state, 'none') || ':' || n FROM (SELECT state, count(*) AS n FROM subscriptions GROUP BY state) t ORDER BY 1" | tr '\n' ' ' | sed 's/ $//')\" rows_with_verification_time=$(q "$verified_sql")"
    # Each row as the contender left it, for the comparison below.
    q "COPY (SELECT original_transaction_id, coalesce(state, 'none'), coalesce(to_char(expires_at AT TIME ZONE 'UTC', 'YYYY-MM-DD\"T\"HH24:MI:SS.MS'), '-'), coalesce(auto_renew::text, '-') FROM subscriptions ORDER BY 1) TO STDOUT" >"$WORK/$C.rows"
    OUTSIDE[$C]=$(echo "$own + $pg" | bc)
    DEN[$C]=$den
}
declare -A OUTSIDE DEN

for c in "${CONTENDERS[@]}"; do contender "$c"; done
stop_sim

# Where the two left different rows: by (reconciler state, peer state), then expiry and auto-renew among rows of
# the same state.
python3 - "$WORK/rr.rows" "$WORK/peer.rows" <<'PY'
import collections, sys
rr = {l.split("\t")[0]: l.rstrip("\n").split("\t")[1:] for l in open(sys.argv[1])}
peer = {l.split("\t")[0]: l.rstrip("\n").split("\t")[1:] for l in open(sys.argv[2])}
pairs = collections.Counter((rr[k][0], peer[k][0]) for k in rr if rr[k][0] != peer.get(k, ["?"])[0])
same = [k for k in rr if rr[k][0] == peer.get(k, ["?"])[0]]
print(f"rows_same_state={len(same)} rows_other_state={sum(pairs.values())} of {len(rr)}")
print("state_differences(rr->peer)=\"" + " ".join(f"{a}->{b}:{n}" for (a, b), n in pairs.most_common()) + "\"")
print(f"same_state_other_expiry={sum(rr[k][1] != peer[k][1] for k in same)} same_state_other_auto_renew={sum(rr[k][2] != peer[k][2] for k in same)}")
PY

rr_us=$(echo "${OUTSIDE[rr]} * 1000000 / ${DEN[rr]}" | bc)
peer_us=$(echo "${OUTSIDE[peer]} * 1000000 / ${DEN[peer]}" | bc)
ratio=$(echo "scale=3; $peer_us / $rr_us" | bc)
echo "RESULT n=$N seed=$SEED order=$ORDER rr_outside_us_per_sub=$rr_us peer_outside_us_per_sub=$peer_us ratio_peer_over_rr=$ratio target_ratio=3 met=$([ "$(echo "$ratio >= 3" | bc)" = 1 ] && echo yes || echo no) load=\"$(cut -d' ' -f1-3 /proc/loadavg)\""
