#!/usr/bin/env bash
# The GPU check of `mlbench run` (docs/runner.md, "GPU status"): on a GPU machine, the whole
# fast.json at smoke sizes on one GPU, then real sizes (fast.json's arguments verbatim) of
# the GPU jobs, one at a time, each under a timeout; validate and report the outputs.
#
#   OUT=/some/empty/dir bash scripts/gpu-check.sh      # from the repository root
#
# It takes the binary from .gpu/mlbench.xz (xz-compressed, stripped; .gpu/mlbench.sha256
# beside it) and loads libtorch from the machine's Python torch (`torch/lib`), so the binary
# must be built against that torch's version (docs/runner.md, "GPU status"): for NCCL, against
# a CUDA libtorch (runner/setup-libtorch.sh PREFIX --cuda), whose headers the shim's NCCL part
# needs. Writes into $OUT:
#   log.txt                  every step's output
#   system.json              the smoke run's system.json
#   smoke-report.json        report --format json (classic scoring; results null < 3 runs)
#   smoke-report-score.json  report --scoring score (pooled means)
#   real-report.json         report --scoring score of the real-size jobs
#   telemetry.txt            what the telemetry saw, per source: for docs/runner.md
#   power/                   `mlbench plot power` of the smoke and real-size runs (SVG)
#   outputs.tar.xz           the smoke and real-size output folders (telemetry files included)
# The last lines of standard output are a summary table (bench, items/s).
set -uo pipefail

T0=$(date +%s)
elapsed() { echo $(( $(date +%s) - T0 )); }
REPO=$(pwd)
HERE=$REPO/.gpu
: "${OUT:?set OUT to the output folder}"
mkdir -p "$OUT"
OUT=$(cd -- "$OUT" && pwd)
LOG=$OUT/log.txt
: > "$LOG"
# Everything to the log and to stdout.
exec > >(tee -a "$LOG") 2>&1
TEE_PID=$!

say() { printf '\n===== [%4ss] %s\n' "$(elapsed)" "$*"; }
# run_t SECONDS CMD...: the command under timeout (SIGKILL 5 s after SIGTERM), status logged
# on stderr (so that a command's stdout redirected to a file stays clean JSON).
run_t() {
    local t=$1; shift
    local s
    s=$(date +%s)
    timeout -k 5 "$t" "$@"
    local rc=$?
    echo "-> rc=$rc ($(( $(date +%s) - s )) s)$([[ $rc == 124 || $rc == 137 ]] && echo ' TIMED OUT')" >&2
    return $rc
}

# telemetry_facts LABEL DIR FROM: what the telemetry of the run in DIR saw, into telemetry.txt:
# the facts and energy lines `mlbench run` printed (the log from its line FROM), then
# `mlbench plot power`'s line per device (samples and the rate reached, whether the counter
# moved, per window the energy by counter against the power readings' integral; net of the
# idle baseline where the run measured one) and its charts in power/.
telemetry_facts() {
    local label=$1 dir=$2 from=$3
    say "telemetry of $label ($dir)"
    find "$dir" -path '*/telemetry/*' -type f | sort | head -40
    {
        echo "## $label: $dir"
        tail -n +"$from" "$LOG" | grep -E '^(telemetry: |energy: |idle baseline of )' | sort -u
        run_t 120 "$BIN" plot power "$dir" --format svg --out-dir "$OUT/power/$label" 2>&1 \
            | grep -vE '^(wrote |[0-9]+ files? in )'
        echo
    } | tee -a "$OUT/telemetry.txt"
}

WORK=/tmp/mlbench-gpu
BIN=$WORK/mlbench
rm -rf -- "$WORK" /tmp/smoke /tmp/real
mkdir -p "$WORK" /tmp/smoke /tmp/real

# ---------------------------------------------------------------- 1. set-up
say "1. set-up (repo $REPO)"
PY=${PY:-/opt/torch/.venv/bin/python3}
[[ -x "$PY" ]] || PY=$(command -v python3 || true)
echo "python: $PY"
if command -v xz >/dev/null; then
    xz -dc "$HERE/mlbench.xz" > "$BIN"
else
    "$PY" -c 'import lzma,shutil,sys; shutil.copyfileobj(lzma.open(sys.argv[1]), open(sys.argv[2], "wb"))' \
        "$HERE/mlbench.xz" "$BIN"
fi
chmod +x "$BIN"
ls -la "$BIN"
echo "expected sha256: $(cat "$HERE/mlbench.sha256" 2>/dev/null)"
sha256sum "$BIN"

# The torch package's lib folder, without importing torch (5-10 s).
TORCH_DIR=$("$PY" -c 'import importlib.util,os; print(os.path.dirname(importlib.util.find_spec("torch").origin))' 2>/dev/null)
if [[ -z "$TORCH_DIR" || ! -d "$TORCH_DIR/lib" ]]; then
    TORCH_DIR=$(ls -d /opt/torch/.venv/lib/python3*/site-packages/torch 2>/dev/null | head -1)
fi
echo "torch package: $TORCH_DIR"
# torch/lib first; libtorch_*'s own RPATH ($ORIGIN/../../nvidia/...) finds the CUDA libraries,
# the nvidia/*/lib folders are added after it only as a fallback.
LDP=$TORCH_DIR/lib
for d in "$TORCH_DIR"/../nvidia/*/lib; do [[ -d "$d" ]] && LDP+=":$(cd "$d" && pwd)"; done
export LD_LIBRARY_PATH=$LDP${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
echo "LD_LIBRARY_PATH=$LD_LIBRARY_PATH"
[[ -n "$TORCH_DIR" && -d "$TORCH_DIR/lib" ]] && { ls "$TORCH_DIR/lib" | tr '\n' ' '; echo; } \
    || echo "WARNING: no torch/lib folder found: the binary will not find libtorch"

export DATA_DIRECTORY=$WORK/data TEMP_DIRECTORY=$WORK/tmp XDG_CACHE_HOME=$WORK/cache
mkdir -p "$DATA_DIRECTORY" "$TEMP_DIRECTORY" "$XDG_CACHE_HOME"
export RUST_BACKTRACE=1

say "nvidia-smi"
run_t 30 nvidia-smi
say "ldd (NEEDED of the binary resolved here; 'not found' lines matter)"
ldd "$BIN" | grep -E 'torch|c10|gomp|cuda|cudnn|cublas|not found'
say "mlbench --version"
run_t 30 "$BIN" --version
say "torch (python) check"
run_t 90 "$PY" -c 'import torch; print("torch", torch.__version__, "cuda", torch.version.cuda, "available", torch.cuda.is_available(), "count", torch.cuda.device_count())
print(torch.cuda.get_device_name(0), torch.cuda.get_device_capability(0), (torch.ones(1024, device="cuda") * 2).sum().item())'
say "mlbench run --dry-run (plan; also shows whether libtorch sees the GPU)"
run_t 60 "$BIN" run --jobs "$REPO/baselines/jobs/fast.json" --smoke --devices 1 --repeat-suite 1 \
    --out-dir "$WORK/dry" --dry-run > "$WORK/dry.txt" 2>&1
head -8 "$WORK/dry.txt"
if grep -q 'simulated CPU' "$WORK/dry.txt" || ! "$BIN" --version >/dev/null 2>&1; then
    echo "ERROR: the binary does not start or libtorch sees NO GPU: stopping here (diagnostics below)"
    ldd "$BIN"
    LD_DEBUG=libs "$BIN" --version 2>&1 | grep -iE 'cuda|error|not found' | head -40
    cat "$WORK/dry.txt"
    exit 1
fi

# ---------------------------------------------------------------- 2. smoke
# Sampled at 10 Hz beside every copy, after a 10 s idle baseline (docs/telemetry.md).
say "2. smoke: fast.json --smoke --devices 1 --repeat-suite 1 --sample-hz 10 --idle-baseline 10s"
S0=$(date +%s)
SMOKE_LINE=$(wc -l < "$LOG")
run_t 210 "$BIN" run --jobs "$REPO/baselines/jobs/fast.json" --smoke --devices 1 --repeat-suite 1 \
    --sample-hz 10 --idle-baseline 10s --out-dir /tmp/smoke/out
echo "smoke wall time: $(( $(date +%s) - S0 )) s"
for f in /tmp/smoke/out/output*/summary.txt; do echo "--- $f"; cat "$f"; done
say "validate /tmp/smoke/out (its telemetry too)"
run_t 60 "$BIN" validate /tmp/smoke/out
telemetry_facts smoke /tmp/smoke/out "$SMOKE_LINE"
say "report (classic, json -> smoke-report.json; table below)"
run_t 60 "$BIN" report /tmp/smoke/out --gpu-model RTX --min-runs 1 --format json > "$OUT/smoke-report.json"
run_t 60 "$BIN" report /tmp/smoke/out --gpu-model RTX --min-runs 1 --format table
say "report (score scoring: pooled means)"
run_t 60 "$BIN" report /tmp/smoke/out --gpu-model RTX --min-runs 1 --scoring score \
    --format json > "$OUT/smoke-report-score.json"
run_t 60 "$BIN" report /tmp/smoke/out --gpu-model RTX --min-runs 1 --scoring score --format table

# ---------------------------------------------------------------- 2b. NCCL
# c10d's ProcessGroupNCCL through the shim (built only against a CUDA libtorch with NCCL's
# headers: runner/setup-libtorch.sh --cuda): scaling's DDP at world size 1, and, with two GPUs
# or more, the whole-machine jobs' DataParallel over two (replication and reduction in NCCL).
say "2b. NCCL: scaling at world size 1 (baselines.json --smoke --devices 1)"
run_t 120 "$BIN" run --jobs "$REPO/baselines/jobs/baselines.json" --smoke --devices 1 \
    --repeat-suite 1 --name scaling --out-dir /tmp/smoke/nccl
cat /tmp/smoke/nccl/output0/summary.txt 2>/dev/null
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
if (( GPUS >= 2 )); then
    say "2b. NCCL: scaling over world sizes 1..2, convnet_distributed and dcgan_all on 2 GPUs"
    run_t 150 "$BIN" run --jobs "$REPO/baselines/jobs/baselines.json" --smoke --devices 2 \
        --repeat-suite 1 --name scaling --out-dir /tmp/smoke/nccl2
    for name in convnet_distributed dcgan_all; do
        run_t 120 "$BIN" run --jobs "$REPO/baselines/jobs/fast.json" --smoke --devices 2 \
            --repeat-suite 1 --name "$name" --out-dir /tmp/smoke/nccl2 --append
    done
    cat /tmp/smoke/nccl2/output0/summary.txt 2>/dev/null
else
    echo "one GPU: DataParallel over NCCL needs two (not checked)"
fi

# ---------------------------------------------------------------- 3. real sizes
say "3. real sizes (a subset of fast.json, its arguments verbatim), one job at a time"
REAL_LINE=$(wc -l < "$LOG")
REAL_JOBS=(convnet_fp16 convnet_distributed_fp16 convnet_distributed dcgan_all convnet translator recom reso wlmfp16 dcgan vae wlm ssd fast_style)
"$PY" - "$REPO/baselines/jobs/fast.json" /tmp/real/real.json "${REAL_JOBS[@]}" <<'EOF'
import json, sys
src, dst, names = sys.argv[1], sys.argv[2], sys.argv[3:]
jobs = {j["name"]: j for j in json.load(open(src))}
json.dump([jobs[n] for n in names if n in jobs], open(dst, "w"), indent=4)
print("real.json:", [n for n in names if n in jobs])
EOF
for name in "${REAL_JOBS[@]}"; do
    e=$(elapsed)
    if (( e > 300 )); then
        echo "skip $name: $e s elapsed"
        echo "$name skipped" >> /tmp/real/status.txt
        continue
    fi
    t=$(( 380 - e )); (( t > 45 )) && t=45
    say "real: $name (timeout $t s)"
    s=$(date +%s)
    # No idle baseline per job (30 s each by default, past the timeout): the smoke run
    # measured one; these runs' energies are gross only.
    run_t "$t" "$BIN" run --jobs /tmp/real/real.json --name "$name" --devices 1 --repeat-suite 1 \
        --sample-hz 10 --idle-baseline 0 --out-dir /tmp/real/out --append
    echo "$name rc=$? $(( $(date +%s) - s ))s" >> /tmp/real/status.txt
done
cat /tmp/real/out/output0/summary.txt 2>/dev/null
say "report of the real sizes (score scoring)"
run_t 60 "$BIN" report /tmp/real/out --gpu-model RTX --min-runs 1 --scoring score \
    --format json > "$OUT/real-report.json"
run_t 60 "$BIN" report /tmp/real/out --gpu-model RTX --min-runs 1 --scoring score --format table
say "validate /tmp/real/out (its telemetry too)"
run_t 60 "$BIN" validate /tmp/real/out
telemetry_facts real /tmp/real/out "$REAL_LINE"
say "nvidia-smi -q -d POWER (the limits and readings NVML reports)"
run_t 30 nvidia-smi -q -d POWER

# ---------------------------------------------------------------- 4. outputs
say "4. outputs"
cp /tmp/smoke/out/system.json "$OUT/system.json" 2>/dev/null || cp /tmp/real/out/system.json "$OUT/system.json"
cat "$OUT/system.json"; echo
run_t 60 tar -C /tmp -cJf "$OUT/outputs.tar.xz" smoke real/out
ls -la "$OUT"

say "summary (train_item.avg in items/s, mean over copies; FAIL = an entry with completed false)"
"$PY" - /tmp/smoke/out /tmp/real/out <<'EOF'
import glob, json, os, sys
def entries(root):
    for f in sorted(glob.glob(os.path.join(root, "output*", "*_*.json"))):
        text = open(f).read().strip()
        if text.endswith(","):
            text = text[:-1]
        try:
            yield from json.loads(text + "]")
        except Exception as e:
            print(f"cannot parse {f}: {e}")
def table(root):
    rows = {}
    for e in entries(root):
        r = rows.setdefault(e.get("name", "?"), {"v": [], "fail": 0, "cuda": set(), "bs": e.get("batch_size")})
        avg = (e.get("train_item") or {}).get("avg")
        if e.get("completed") is False:
            r["fail"] += 1
        elif avg is not None:
            r["v"].append(avg)
        r["cuda"].add(e.get("cuda"))
    return rows
smoke, real = table(sys.argv[1]), table(sys.argv[2])
fmt = lambda r: (f"{sum(r['v'])/len(r['v']):12.1f}" if r and r["v"] else f"{'-':>12}") + \
    (f" FAIL{r['fail']}" if r and r["fail"] else "      ")
print(f"{'bench':26} {'smoke it/s':>12}       {'real it/s':>12}       {'real bs':>7} cuda")
for name in sorted(set(smoke) | set(real)):
    s, r = smoke.get(name), real.get(name)
    cuda = sorted(str(c) for c in ((s or r)["cuda"]))
    print(f"{name:26} {fmt(s)} {fmt(r)} {str(r['bs']) if r else '':>7} {','.join(cuda)}")
EOF
echo "real-size jobs (rc 124/137 = timed out): $(tr '\n' ' ' 2>/dev/null < /tmp/real/status.txt)"
echo "smoke: $(tail -qn1 /tmp/smoke/out/output*/summary.txt 2>/dev/null | tr '\n' ' ')"
grep -q 'simulated CPU' "$WORK/dry.txt" && echo "WARNING: libtorch saw NO GPU; everything ran on the CPU"
echo "telemetry, per source (copy into docs/runner.md, \"Telemetry\"): $OUT/telemetry.txt"
grep -E ' copy 0: ' "$OUT/telemetry.txt" 2>/dev/null | sort -u | head -20
echo "total elapsed: $(elapsed) s"
# Let tee finish writing log.txt before the folder is collected.
exec 1>&- 2>&-
wait "$TEE_PID" 2>/dev/null || sleep 1
