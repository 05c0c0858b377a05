# shellcheck shell=bash
# ensure_system_packages: installs the Debian packages this project builds and tests with, when they
# are missing. As root it runs apt-get itself; otherwise it prints the exact command and fails.
#
#   libpq-dev            libpq headers + pkg-config file (the CLibpq target)
#   libcurl4-openssl-dev libcurl headers + pkg-config file (the CCurl target)
#   zlib1g-dev           zlib headers + pkg-config file (the CZlib target: gzip report files)
#   postgresql           initdb/pg_ctl for the throwaway cluster used by tests and the demo
#   pkg-config           how SwiftPM finds the two libraries
#   wrk                  HTTP load generator (benchmarks only; see BENCHMARKS.md)
#   python3              the TLS tests' HTTPS server on loopback (Tests/TLS/https_server.py, Python's ssl)
#   curl                 the TLS tests' witness that a TLS 1.1 server is refused by our minimum, not by curl

_rr_missing_packages() {
    local missing=()
    command -v pkg-config >/dev/null 2>&1 || missing+=(pkg-config)
    if command -v pkg-config >/dev/null 2>&1; then
        pkg-config --exists libpq 2>/dev/null || missing+=(libpq-dev)
        pkg-config --exists libcurl 2>/dev/null || missing+=(libcurl4-openssl-dev)
        pkg-config --exists zlib 2>/dev/null || missing+=(zlib1g-dev)
    else
        missing+=(libpq-dev libcurl4-openssl-dev zlib1g-dev)
    fi
    if ! command -v initdb >/dev/null 2>&1 && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
        missing+=(postgresql)
    fi
    command -v python3 >/dev/null 2>&1 || missing+=(python3)
    command -v curl >/dev/null 2>&1 || missing+=(curl)
    local extra
    for extra in "$@"; do
        dpkg -s "$extra" >/dev/null 2>&1 || missing+=("$extra")
    done
    echo "${missing[@]}"
}

# apt_install PACKAGE...: installs Debian packages. As root it runs apt-get itself (updating the package
# list once when an install fails on a stale one); otherwise it prints the exact command and fails.
apt_install() {
    [ $# -eq 0 ] && return 0
    if [ "$(id -u)" -ne 0 ]; then
        echo "error: missing system packages: $*" >&2
        echo "install them with:  sudo apt-get install -y $*" >&2
        return 1
    fi
    echo "==> installing missing system packages: $*" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get install -y -q "$@" >/dev/null 2>&1 && return 0
    apt-get update -q >/dev/null
    apt-get install -y -q "$@" >/dev/null
}

# ensure_system_packages [extra-package ...]: the packages this project builds and tests with.
ensure_system_packages() {
    local missing
    missing=$(_rr_missing_packages "$@")
    [ -z "$missing" ] && return 0
    # shellcheck disable=SC2086
    apt_install $missing || return 1
    missing=$(_rr_missing_packages "$@")
    if [ -n "$missing" ]; then
        echo "error: still missing after apt-get install: $missing" >&2
        return 1
    fi
}
