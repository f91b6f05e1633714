#!/usr/bin/env bash
# Times `mlbench report` (release build) on a large generated submission tree:
# 20 vendor folders × 10 runs × 8 GPUs × 19 benches (26,200 entries, ~97 MB).
# Usage: scripts/bench-report.sh [WORKDIR]   (default: a temporary folder)
set -euo pipefail
source "$(dirname "$0")/large-tree.sh" "$@"
for scoring in classic score; do
    cmd="$bin report --reports $tree --name fast --gpu-model RTX --scoring $scoring --format json"
    if command -v hyperfine >/dev/null; then
        hyperfine --warmup 2 --runs 10 "$cmd"
    else
        $cmd 2>/dev/null  # warm the page cache
        for i in 1 2 3 4 5; do
            /usr/bin/time -f "$scoring: %e s, %M KB" $cmd 2>&1 >/dev/null | tail -1
        done
    fi
done
