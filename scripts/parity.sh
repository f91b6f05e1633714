#!/usr/bin/env bash
# Parity of `mlbench run` with the Mila suite's own scripts, the same jobs run side by side.
#
# Runs each selected job of a jobs file through the suite's run.py (a checkout of
# mila-iqia/training that you give; it is copied, never changed) and through `mlbench run`,
# alternated suite → mlbench bench by bench and repetition by repetition, same jobs file,
# RUN_ID and seeds; then writes OUT/PARITY.md (items/s, mlbench ÷ suite, first → last
# batch loss, the report fields present on one side only, the jobs that cannot run here and
# why) and OUT/parity.json. Fetches nothing. The harness itself needs only python3; the
# suite's side needs a Python with torch, torchvision, numpy, pillow, tqdm and GitPython (and
# scipy for recom, mlperf_compliance for translator).
#
# Usage:
#   scripts/parity.sh SUITE_CHECKOUT [--python PY] [--mlbench BIN] [--jobs FILE]
#                     [--bench NAME…] [--reps N] [--out DIR]
#                     [--repeat N] [--number N] [--batch-size N] [--set BENCH:FLAG=VALUE]…
#                     [--cpus LIST] [--threads N] [--device cpu|cuda] [--base DIR]
#                     [--fake-images N] [--wlm-eval-lines N] [--list]
#   PARITY_PYTHON and MLBENCH may stand for --python and --mlbench.
# Example (a smoke trial, minutes):
#   scripts/parity.sh ~/training --python ~/venv/bin/python \
#       --mlbench target/release/mlbench --bench toy_reg wlm --reps 1 --repeat 12 --number 2
# `scripts/parity.py --help` lists every option.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
if [[ $# -lt 1 || $1 == -h || $1 == --help ]]; then
    sed -n '2,/^set -euo/p' "$0" | sed '$d' | sed 's/^# \{0,1\}//'
    [[ $# -ge 1 ]] && exec python3 "$here/parity.py" --help
    exit 2
fi
exec python3 "$here/parity.py" "$@"
