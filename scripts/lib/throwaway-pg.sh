# shellcheck shell=bash
# Throwaway PostgreSQL for scripts: source this file, then call `throwaway_pg_start`.
#
#   source scripts/lib/throwaway-pg.sh
#   throwaway_pg_start            # exports DATABASE_URL, THROWAWAY_PG_DIR, THROWAWAY_PG_PORT
#   ...                           # the cluster is stopped and removed on EXIT/INT/TERM
#   throwaway_pg_stop             # optional: stop earlier
#
# A private cluster (initdb -A trust -U postgres) in a temp dir, listening on 127.0.0.1 (a free
# port) and on a Unix socket in that dir, fsync off (THROWAWAY_PG_EXTRA_CONF: more postgresql.conf lines,
# e.g. for pg_stat_statements). As root, initdb/pg_ctl run as the
# `postgres` user. Binaries: $PG_BINDIR, `pg_config --bindir`, /usr/lib/postgresql/*/bin, PATH.
# Note: the EXIT/INT/TERM trap replaces any trap the caller set before; set yours afterwards and
# call throwaway_pg_stop from it.

_throwaway_pg_bindir() {
    local dir
    for dir in "${PG_BINDIR:-}" "$(pg_config --bindir 2>/dev/null)" \
        $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -t/ -k4 -n -r); do
        if [ -n "$dir" ] && [ -x "$dir/initdb" ]; then
            echo "$dir"
            return 0
        fi
    done
    if command -v initdb >/dev/null 2>&1; then
        dirname "$(command -v initdb)"
        return 0
    fi
    echo "throwaway-pg: initdb not found: install the PostgreSQL server (apt-get install postgresql) or set PG_BINDIR" >&2
    return 1
}

# Runs a command as the postgres user when we are root, directly otherwise.
_throwaway_pg_as_owner() {
    if [ "$(id -u)" = 0 ]; then
        if command -v runuser >/dev/null 2>&1; then
            runuser -u postgres -- "$@"
        else
            su postgres -s /bin/sh -c "$(printf '%q ' "$@")"
        fi
    else
        "$@"
    fi
}

_throwaway_pg_free_port() {
    if command -v python3 >/dev/null 2>&1; then
        python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1]); s.close()'
    else
        # Fallback: a random high port that nothing is listening on right now.
        local port
        while :; do
            port=$((20000 + RANDOM % 30000))
            if ! (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
                echo "$port"
                return 0
            fi
        done
    fi
}

throwaway_pg_start() {
    local bindir dir port attempt
    bindir=$(_throwaway_pg_bindir) || return 1
    if [ "$(id -u)" = 0 ]; then
        id postgres >/dev/null 2>&1 || {
            echo "throwaway-pg: running as root but there is no 'postgres' user (apt-get install postgresql creates it)" >&2
            return 1
        }
        dir=$(mktemp -d /tmp/throwaway-pg.XXXXXX) || return 1
        chown postgres: "$dir" || return 1
    else
        dir=$(mktemp -d "${TMPDIR:-/tmp}/throwaway-pg.XXXXXX") || return 1
    fi
    THROWAWAY_PG_DIR=$dir
    THROWAWAY_PG_BINDIR=$bindir
    trap 'throwaway_pg_stop' EXIT
    trap 'throwaway_pg_stop; trap - INT; kill -INT $$' INT
    trap 'throwaway_pg_stop; trap - TERM; kill -TERM $$' TERM

    if ! _throwaway_pg_as_owner "$bindir/initdb" -D "$dir/data" -A trust -U postgres --encoding=UTF8 \
        --locale=C --no-sync >"$dir/initdb.log" 2>&1; then
        echo "throwaway-pg: initdb failed:" >&2
        tail -n 20 "$dir/initdb.log" >&2
        throwaway_pg_stop
        return 1
    fi
    for attempt in 1 2 3; do
        port=$(_throwaway_pg_free_port)
        cat >>"$dir/data/postgresql.auto.conf" <<CONF
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = '$dir'
fsync = off
synchronous_commit = off
full_page_writes = off
max_connections = 200
${THROWAWAY_PG_EXTRA_CONF:-}
CONF
        if _throwaway_pg_as_owner "$bindir/pg_ctl" -D "$dir/data" -l "$dir/server.log" -w -t 60 start \
            >>"$dir/pg_ctl.log" 2>&1; then
            export THROWAWAY_PG_DIR THROWAWAY_PG_BINDIR
            export THROWAWAY_PG_PORT=$port
            export DATABASE_URL="postgresql://postgres@127.0.0.1:$port/postgres"
            return 0
        fi
    done
    echo "throwaway-pg: pg_ctl start failed:" >&2
    tail -n 20 "$dir/server.log" "$dir/pg_ctl.log" >&2 2>/dev/null
    throwaway_pg_stop
    return 1
}

throwaway_pg_stop() {
    local dir=${THROWAWAY_PG_DIR:-}
    [ -n "$dir" ] || return 0
    if [ -f "$dir/data/postmaster.pid" ]; then
        _throwaway_pg_as_owner "$THROWAWAY_PG_BINDIR/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop \
            >/dev/null 2>&1 || true
    fi
    rm -rf "$dir"
    unset THROWAWAY_PG_DIR THROWAWAY_PG_PORT
}
