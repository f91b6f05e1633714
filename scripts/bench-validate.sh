#!/usr/bin/env bash
# Times `mlbench validate` against `mlbench report` (release build) on the large generated
# tree of scripts/bench-report.sh: 20 vendor folders × 10 runs × 8 GPUs × 19 benches.
# Usage: scripts/bench-validate.sh [WORKDIR]   (default: a temporary folder)
set -euo pipefail
source "$(dirname "$0")/large-tree.sh" "$@"
report="$bin report --reports $tree --name fast --gpu-model RTX --format json"
validate="$bin validate $tree --format json"
if command -v hyperfine >/dev/null; then
    hyperfine --warmup 2 --runs 10 -i "$report" "$validate"
else
    $report >/dev/null 2>&1 || true  # warm the page cache
    for cmd in "$report" "$validate"; do
        for i in 1 2 3 4 5; do
            /usr/bin/time -f "${cmd%% --*}: %e s, %U user, %S sys, %M KB" $cmd 2>&1 >/dev/null | tail -1
        done
    done
fi
MLBENCH_TIMINGS=1 $validate >/dev/null
