# shellcheck shell=bash
# What every end-to-end benchmark shares: source this file after parsing the options, with BUILD (1: build the
# release binaries first) and BIN (a folder of binaries, or empty for the release build's) set.
#
#   source Benchmarks/lib.sh     # sets RR, SIM, NOW, BUNDLE
#
# The simulator's world is the same in every benchmark: its as-of instant and the app's bundle id.

if [ "${BUILD:-1}" = 1 ]; then
    swift build -c release --product renewal-reconciler >&2
    swift build -c release --product appstore-simulator >&2
fi
[ -n "${BIN:-}" ] || BIN=$(swift build -c release --show-bin-path)
RR=$BIN/renewal-reconciler
SIM=$BIN/appstore-simulator
NOW=2026-11-21T03:00:00Z
BUNDLE=com.example.renewals
for binary in "$RR" "$SIM"; do
    [ -x "$binary" ] || { echo "$(basename "$0"): no binary at $binary (build it, or give --bin-dir)" >&2; exit 66; }
done
