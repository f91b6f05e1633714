#!/usr/bin/env bash
# Times `mlbench report` (release build) against a bare Python parse of the same report
# files, on one large generated submission written in two layouts (scripts/large-tree.sh):
# - legacy:   20 vendor folders × 10 run folders (output0..9, as run_10.sh left them)
#             × 8 GPU streams = 1,600 files;
# - appended: 20 vendor folders × 8 GPU streams, each holding the 10 runs one after
#             another (the suite run 10 times into one folder) = 160 files;
# - repr:     the legacy layout with losses as Python's repr writes real ones
#             (`3.2247762793424783e-10`, `-0.0625`, `7e-05`, `12.0`), bench by bench.
# All hold 26,200 entries (~94 MB; 19 benches of the fast profile).
# Per layout it times `mlbench report --reports TREE --name fast --gpu-model RTX
# --format json` with classic and score scoring, and scripts/python-parse.py (every file
# read in one process as the suite's last report tool read it, nothing computed), then
# prints the ratio Python / mlbench. With hyperfine: 2 warm-ups and RUNS runs each; else
# one warm-up and RUNS runs each, timed here, medians shown.
# Usage: scripts/bench-report.sh [WORKDIR]   (default: a temporary folder; the trees are
#        made once, in WORKDIR/large and WORKDIR/appended, and reused)
#        RUNS=10 scripts/bench-report.sh …   (timed runs per command; default 10 with
#        hyperfine, 5 without)
set -euo pipefail
export LC_ALL=C  # a decimal point in $EPOCHREALTIME and awk
source "$(dirname "$0")/large-tree.sh" "$@"
python=${PYTHON:-python3}

# Prints the median wall time (s) of $runs runs of the command, after one warm-up that
# must not fail with an error (exit status ≥ 2: a usage or input error is no timing),
# and records it in `last`; shows the median CPU (user + sys) and peak RSS beside it.
measure() {
    local label=$1 status=0
    shift
    "$@" >/dev/null 2>"$work/stderr" || status=$?
    if [ "$status" -ge 2 ]; then
        echo "$label: exits $status:" >&2
        cat "$work/stderr" >&2
        exit 1
    fi
    local rows=""
    for ((i = 0; i < runs; i++)); do
        local t0=$EPOCHREALTIME
        /usr/bin/time -o "$work/time" -f "%U %S %M" "$@" >/dev/null 2>&1 || true
        local t1=$EPOCHREALTIME
        rows+="$t0 $t1 $(tail -1 "$work/time")"$'\n'
    done
    last=$(printf '%s' "$rows" | awk -v label="$label" '
        { wall[NR] = $2 - $1; cpu[NR] = $3 + $4; rss[NR] = $5 }
        function median(a, n,    i, j, t) {
            for (i = 2; i <= n; i++) for (j = i; j > 1 && a[j-1] > a[j]; j--) {
                t = a[j]; a[j] = a[j-1]; a[j-1] = t
            }
            return n % 2 ? a[(n + 1) / 2] : (a[n / 2] + a[n / 2 + 1]) / 2
        }
        END {
            n = NR; lo = hi = wall[1]
            for (i = 1; i <= n; i++) { if (wall[i] < lo) lo = wall[i]; if (wall[i] > hi) hi = wall[i] }
            w = median(wall, n); c = median(cpu, n); r = median(rss, n)
            printf "  %-24s %7.3f s (%.3f–%.3f)  CPU %6.2f s  RSS %5.0f MB\n", label, w, lo, hi, c, r / 1024 > "/dev/stderr"
            printf "%.6f\n", w
        }')
}

# hyperfine's median of the command named `label` in its JSON export.
hyperfine_median() {
    "$python" -c 'import json, sys
for r in json.load(open(sys.argv[1]))["results"]:
    if r["command"] == sys.argv[2]:
        print("%.6f" % r["median"])' "$1" "$2"
}

if command -v hyperfine >/dev/null; then runs=${RUNS:-10}; else runs=${RUNS:-5}; fi
summary=""
for layout in legacy appended repr; do
    # The same command on both: `report` tells the appended runs apart by `run_id` (200
    # runs, as in legacy). A build without that counted each vendor folder as one run
    # (20, still enough for the default --min-runs 4).
    dir=$(tree_of $layout)
    report="$bin report --reports $dir --name fast --gpu-model RTX --format json"
    parse="$python scripts/python-parse.py $dir fast"
    echo
    echo "== $layout: $dir ($($parse))"
    { $report --scoring score 2>&1 >/dev/null || true; } | sed -n '1,2s/^/  /p'
    declare -A median=()
    if command -v hyperfine >/dev/null; then
        hyperfine --warmup 2 --runs "$runs" -i --export-json "$work/hyperfine-$layout.json" \
            -n classic "$report --scoring classic" -n score "$report --scoring score" \
            -n python "$parse"
        for name in classic score python; do
            median[$name]=$(hyperfine_median "$work/hyperfine-$layout.json" "$name")
        done
    else
        echo "  (hyperfine not found: median of $runs runs, warm page cache)"
        for scoring in classic score; do
            measure "report --scoring $scoring" $report --scoring "$scoring"
            median[$scoring]=$last
        done
        measure "python-parse.py" $parse
        median[python]=$last
    fi
    summary+=$(awk -v l="$layout" -v c="${median[classic]}" -v s="${median[score]}" \
        -v p="${median[python]}" 'BEGIN {
            printf "%-9s %8.3f s %8.3f s %8.3f s   %5.1f×   %5.1f×\n", l, c, s, p, p / c, p / s
        }')$'\n'
    unset median
done
echo
echo "Medians; ratio = Python parse / mlbench report (classic, score):"
printf '%-9s %10s %10s %10s   %6s   %6s\n' layout classic score python classic score
printf '%s' "$summary"
