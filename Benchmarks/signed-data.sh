#!/usr/bin/env bash
# Benchmark of AppStoreSignedData's JWS verification: N distinct signed transactions from one test chain
# (made at run time), verified by one SignedDataVerifier (the chain cache at work), then a sample verified
# with a fresh cache each (the full chain every time). Release build.
#
# Usage: Benchmarks/signed-data.sh [--count N] [--threads T] [--uncached N] [--no-build]
#   --count N      payloads to verify (default 100000)
#   --threads T    verifying threads sharing the verifier (default 1)
#   --uncached N   payloads verified without the cache, for comparison (default 300)
# Prints key=value lines and a final `RESULT ...` line; exit 1 when a payload failed to verify.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=1
ARGS=()
while [ $# -gt 0 ]; do
    case "$1" in
        --no-build) BUILD=0; shift ;;
        --count|--threads|--uncached) ARGS+=("$1" "${2:?$1 needs a number}"); shift 2 ;;
        -h|--help) sed -n '2,11p' "$0"; exit 0 ;;
        *) echo "signed-data.sh: unknown option $1" >&2; exit 64 ;;
    esac
done
[ "$BUILD" = 1 ] && swift build -c release --product signed-data-benchmark >&2
BIN=$(swift build -c release --show-bin-path)
echo "machine: $(nproc) cores, $(uname -r), load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
/usr/bin/time -f 'process: %e s wall, %U s user, %S s sys, %M KB peak RSS' "$BIN/signed-data-benchmark" "${ARGS[@]}"
