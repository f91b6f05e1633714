#!/usr/bin/env bash
# Times `mlbench history` and `mlbench publish` (release build) on a generated store of
# ROUNDS rounds × VENDORS vendors × the 19 benches of the fast profile (defaults: 100 × 20;
# each submission 4 runs on 1 GPU, by gen_submission, a seed per round), and prints the
# site's size. The store is made once in WORKDIR/store and reused.
# Usage: scripts/bench-site.sh [WORKDIR]       ROUNDS=10 VENDORS=5 scripts/bench-site.sh …
# docs/performance.md ("History and publish") has the figures of this machine.
set -euo pipefail
export LC_ALL=C
work=$(realpath -m "${1:-$(mktemp -d)}")
rounds=${ROUNDS:-100} vendors=${VENDORS:-20}
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# One invocation: built apart, the two would unify features differently and rebuild.
cargo build -q --release -p mlbench -p mlbench-schema --bin mlbench --example gen_submission
bin=$PWD/target/release/mlbench gen=$PWD/target/release/examples/gen_submission
store="$work/store"
mkdir -p "$work"
if [ ! -f "$store/index.sqlite" ]; then
    t0=$EPOCHREALTIME
    for ((r = 1; r <= rounds; r++)); do
        round=$(printf 'r%03d' "$r")
        "$gen" --out "$work/gen/$round" --vendors "$vendors" --runs 4 --gpus 1 --suite fast --seed "$r"
        "$bin" archive --store "$store" add "$round" "$work/gen/$round"/vendor* --allow-errors 2>/dev/null
        rm -rf "${work:?}/gen/$round"
    done
    echo "store: $rounds rounds × $vendors vendors archived in $(echo "$EPOCHREALTIME - $t0" | bc) s"
fi
# Seconds of wall time of one run of the command (its output discarded).
timed() {
    local t0=$EPOCHREALTIME
    "$@" >/dev/null 2>"$work/stderr" || { cat "$work/stderr" >&2; exit 1; }
    echo "$EPOCHREALTIME - $t0" | bc
}
now=2030-01-01
rm -rf "$store/cache"
echo "history, cold (each zip read, its values cached): $(timed "$bin" history --store "$store" --now $now -f json) s"
for i in 1 2 3; do
    echo "history, warm run $i: $(timed "$bin" history --store "$store" --now $now -f json) s"
done
for i in 1 2; do
    echo "publish run $i: $(timed "$bin" publish --store "$store" --now $now --out "$work/site" --force) s"
done
echo "site: $(du -sb "$work/site" | cut -f1) bytes in $(find "$work/site" -type f | wc -l) files ($(du -sh "$work/site" | cut -f1))"
echo "verify: $(timed "$bin" verify "$work/site") s"
