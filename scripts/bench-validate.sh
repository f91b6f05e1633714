#!/usr/bin/env bash
# Times `mlbench validate` against `mlbench report` (release build) on the large generated
# submission of scripts/bench-report.sh, in both its layouts: legacy (20 vendor folders ×
# 10 run folders × 8 GPU streams, 1,600 files) and appended (20 vendor folders × 8 GPU
# streams holding the 10 runs in turn, 160 files); 26,200 entries either way. The target
# keeps `validate` at most twice `report`: the ratio of the medians is printed per layout.
# Usage: scripts/bench-validate.sh [WORKDIR]   (default: a temporary folder; the trees are
#        made once and reused)
#        RUNS=20 scripts/bench-validate.sh …   (timed runs per command; default 10)
set -euo pipefail
export LC_ALL=C
source "$(dirname "$0")/large-tree.sh" "$@"
runs=${RUNS:-10}
summary=""
for layout in legacy appended; do
    dir=$(tree_of $layout)
    report="$bin report --reports $dir --name fast --gpu-model RTX --format json"
    validate="$bin validate $dir --format json"
    echo
    echo "== $layout: $dir"
    if command -v hyperfine >/dev/null; then
        hyperfine -N --warmup 2 --runs "$runs" -i --export-json "$work/validate-$layout.json" \
            -n report "$report" -n validate "$validate"
        medians=$(python3 -c 'import json, sys
r = {x["command"]: x["median"] for x in json.load(open(sys.argv[1]))["results"]}
print("%.6f %.6f" % (r["report"], r["validate"]))' "$work/validate-$layout.json")
    else
        # Median wall time of `runs` runs, after one warm-up.
        median() {
            "$@" >/dev/null 2>&1 || true
            for ((i = 0; i < runs; i++)); do
                local t0=$EPOCHREALTIME
                "$@" >/dev/null 2>&1 || true
                echo "$t0 $EPOCHREALTIME"
            done | awk '{ print $2 - $1 }' | sort -n | awk '{ a[NR] = $1 }
                END { print (NR % 2 ? a[(NR + 1) / 2] : (a[NR / 2] + a[NR / 2 + 1]) / 2) }'
        }
        medians="$(median $report) $(median $validate)"
    fi
    summary+=$(echo "$medians" | awk -v l="$layout" '{
        printf "%-9s %8.3f s %8.3f s   %5.2f×\n", l, $1, $2, $2 / $1 }')$'\n'
    MLBENCH_TIMINGS=1 $validate 2>&1 >/dev/null | grep '^timing' | sed 's/^/  /' || true
done
echo
echo "Medians; ratio = validate / report (the target keeps it ≤ 2):"
printf '%-9s %10s %10s   %6s\n' layout report validate ratio
printf '%s' "$summary"
