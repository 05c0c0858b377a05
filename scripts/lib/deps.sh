# shellcheck shell=bash
# ensure_system_packages: installs the Debian packages this project builds and tests with, when they
# are missing. As root it runs apt-get itself; otherwise it prints the exact command and fails.
#
#   libpq-dev            libpq headers + pkg-config file (the CLibpq target)
#   libcurl4-openssl-dev libcurl headers + pkg-config file (the CCurl target)
#   postgresql           initdb/pg_ctl for the throwaway cluster used by tests and the demo
#   pkg-config           how SwiftPM finds the two libraries
#   wrk                  HTTP load generator (benchmarks only; see BENCHMARKS.md)

_rr_missing_packages() {
    local missing=()
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    if command -v pkg-config >/dev/null 2>&1; then
        pkg-config --exists libpq 2>/dev/null || missing+=(libpq-dev)
        pkg-config --exists libcurl 2>/dev/null || missing+=(libcurl4-openssl-dev)
    else
        missing+=(libpq-dev libcurl4-openssl-dev)
    fi
    if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        missing+=(postgresql)
    fi
    local extra
    for extra in "$@"; do
        dpkg -s "$extra" >/dev/null 2>&1 || missing+=("$extra")
    done
    echo "${missing[@]}"
}

# ensure_system_packages [extra-package ...]
ensure_system_packages() {
    local missing
    missing=$(_rr_missing_packages "$@")
    [ -z "$missing" ] && return 0
    if [ "$(id -u)" -eq 0 ]; then
        echo "==> installing missing system packages: $missing" >&2
        export DEBIAN_FRONTEND=noninteractive
        # An install can fail on a stale package list: update once, then install.
        # shellcheck disable=SC2086
        if ! apt-get install -y -q $missing >/dev/null 2>&1; then
            apt-get update -q >/dev/null
            apt-get install -y -q $missing >/dev/null
        fi
        missing=$(_rr_missing_packages "$@")
        if [ -n "$missing" ]; then
            echo "error: still missing after apt-get install: $missing" >&2
            return 1
        fi
    else
        echo "error: missing system packages: $missing" >&2
        echo "install them with:  sudo apt-get install -y $missing" >&2
        return 1
    fi
}
