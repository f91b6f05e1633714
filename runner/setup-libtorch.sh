#!/usr/bin/env bash
# Installs libtorch for tch 0.26 (libtorch 2.13.0) from the PyPI wheels into PREFIX.
#
#   runner/setup-libtorch.sh PREFIX [--cuda]
#   eval "$(runner/setup-libtorch.sh /work/libtorch)"     # sets LIBTORCH, LD_LIBRARY_PATH
#
# libtorch cannot be downloaded from pytorch.org here; the wheel torch==2.13.0 (cp311,
# manylinux_2_28, x86_64, ~527 MB) carries it. PyPI only has the CUDA build for Linux.
#
# Default (CPU-only tree, ~490 MB on disk): from the torch wheel only `include/`,
# `libtorch_cpu.so`, `libc10.so`, `libgomp.so.1`, plus `libcudart.so.13` and `libcupti.so.13`
# from the small nvidia wheels (libtorch_cpu.so needs them loadable even without a GPU; its
# RPATH has $ORIGIN, so next to it is enough). The wheel's `libtorch.so` is a shim needing
# `libtorch_cuda.so` and the whole CUDA stack, so here `lib/libtorch.so` -> `libtorch_cpu.so`
# (torch-sys always links -ltorch) and `lib/libgomp.so` -> `libgomp.so.1`.
#
# --cuda: the whole torch wheel's lib/ and include/ plus every shared library of its nvidia-*
# dependencies (pip download with deps, several GB), all flat in PREFIX/lib, and their headers
# merged into PREFIX/include/nvidia (the c10d shim's NCCL part needs them), for GPU machines.
#
# Idempotent: if PREFIX holds a complete tree (stamp file with the same versions and variant,
# key files present) nothing is downloaded. The tree is assembled in a staging folder beside
# PREFIX and moved in place at the end, so an interrupted run leaves no half tree behind.
# Progress goes to stderr; stdout carries only the `export` lines.
set -euo pipefail

TORCH_VERSION=2.13.0
CUDART_SPEC='nvidia-cuda-runtime==13.0.96.*'
CUPTI_SPEC='nvidia-cuda-cupti==13.0.85.*'
# --cuda only: headers the CUDA runtime's own headers include (crt/, nv/target), which torch's
# dependencies do not carry; the versions of that CUDA 13.0 (nvrtc 13.0.88, cupti 13.0.85).
CRT_SPEC='nvidia-cuda-crt==13.0.88'
CCCL_SPEC='nvidia-cuda-cccl==13.0.85'
PY_VERSION=3.11
STAMP_NAME=.mlbench-libtorch-stamp

usage() {
    echo "usage: $0 PREFIX [--cuda]" >&2
    echo "  installs libtorch $TORCH_VERSION (from the PyPI wheel) into PREFIX/{include,lib}" >&2
    exit 2
}

PREFIX=
VARIANT=cpu
for arg in "$@"; do
    case "$arg" in
        --cuda) VARIANT=cuda ;;
        -h|--help) usage ;;
        -*) echo "unknown option: $arg" >&2; usage ;;
        *) [[ -z "$PREFIX" ]] || usage; PREFIX=$arg ;;
    esac
done
[[ -n "$PREFIX" ]] || usage

log() { echo "setup-libtorch: $*" >&2; }

# Absolute path (PREFIX need not exist yet).
mkdir -p "$(dirname -- "$PREFIX")"
PREFIX="$(cd -- "$(dirname -- "$PREFIX")" && pwd)/$(basename -- "$PREFIX")"
STAMP_TEXT="torch=$TORCH_VERSION variant=$VARIANT cudart=$CUDART_SPEC cupti=$CUPTI_SPEC"
[[ "$VARIANT" == cpu ]] || STAMP_TEXT="$STAMP_TEXT crt=$CRT_SPEC cccl=$CCCL_SPEC headers=nvidia"

print_exports() {
    echo "export LIBTORCH=$PREFIX"
    echo "export LD_LIBRARY_PATH=$PREFIX/lib\${LD_LIBRARY_PATH:+:\$LD_LIBRARY_PATH}"
    # build-version is written as $TORCH_VERSION, so torch-sys's version check passes and
    # LIBTORCH_BYPASS_VERSION_CHECK is not needed.
}

complete_tree() {
    local dir=$1
    [[ -f "$dir/$STAMP_NAME" ]] && [[ "$(cat "$dir/$STAMP_NAME")" == "$STAMP_TEXT" ]] || return 1
    local f
    for f in include/torch/csrc/api/include/torch/torch.h lib/libtorch.so lib/libtorch_cpu.so \
        lib/libc10.so lib/libgomp.so.1 lib/libcudart.so.13 lib/libcupti.so.13 build-version; do
        [[ -e "$dir/$f" ]] || return 1
    done
    if [[ "$VARIANT" == cuda ]]; then
        for f in lib/libtorch_cuda.so include/nvidia/nccl.h include/nvidia/crt/host_config.h \
            include/nvidia/nv/target; do
            [[ -e "$dir/$f" ]] || return 1
        done
    fi
}

if complete_tree "$PREFIX"; then
    log "$PREFIX already holds libtorch $TORCH_VERSION ($VARIANT); nothing to do"
    print_exports
    exit 0
fi

if [[ -e "$PREFIX" ]]; then
    if [[ -f "$PREFIX/$STAMP_NAME" ]]; then
        log "$PREFIX holds another libtorch install ($(cat "$PREFIX/$STAMP_NAME")); replacing it"
    elif [[ -n "$(ls -A -- "$PREFIX" 2>/dev/null)" ]]; then
        log "error: $PREFIX exists, is not empty and was not made by this script; refusing to touch it"
        exit 1
    fi
fi

for tool in unzip python3; do
    command -v "$tool" >/dev/null || { log "error: $tool is required"; exit 1; }
done

start=$SECONDS
WORK=$(mktemp -d "${TMPDIR:-/tmp}/setup-libtorch.XXXXXX")
STAGE="$PREFIX.partial.$$"
cleanup() { rm -rf -- "$WORK" "$STAGE"; }
trap cleanup EXIT

# pip matches --platform tags exactly, so name every manylinux tag a wheel may carry
# (nvidia-cuda-runtime is manylinux_2_17, nvidia-cuda-cupti manylinux_2_25).
PIP_TARGET=(--only-binary=:all: --python-version "$PY_VERSION" --implementation cp
    --dest "$WORK/wheels" --progress-bar off --platform manylinux2014_x86_64)
for glibc_minor in $(seq 17 28); do
    PIP_TARGET+=(--platform "manylinux_2_${glibc_minor}_x86_64")
done

log "downloading torch==$TORCH_VERSION ($VARIANT) wheels into $WORK (about 540 MB for CPU)"
if [[ "$VARIANT" == cpu ]]; then
    python3 -m pip download --no-deps "${PIP_TARGET[@]}" \
        "torch==$TORCH_VERSION" "$CUDART_SPEC" "$CUPTI_SPEC" >&2
else
    # With dependencies: the nvidia-* wheels torch pins (cuBLAS, cuDNN, NCCL, ...).
    python3 -m pip download "${PIP_TARGET[@]}" "torch==$TORCH_VERSION" >&2
    python3 -m pip download --no-deps "${PIP_TARGET[@]}" "$CRT_SPEC" "$CCCL_SPEC" >&2
fi

shopt -s nullglob
torch_whl=("$WORK"/wheels/torch-"$TORCH_VERSION"*.whl)
[[ ${#torch_whl[@]} -eq 1 ]] || { log "error: expected one torch wheel, found ${#torch_whl[@]}"; exit 1; }
nvidia_whls=("$WORK"/wheels/nvidia_*.whl)
[[ ${#nvidia_whls[@]} -ge 1 ]] || { log "error: no nvidia-* wheels downloaded"; exit 1; }
log "downloaded $(du -sh "$WORK/wheels" | cut -f1) in $((SECONDS - start)) s"

rm -rf -- "$STAGE"
mkdir -p "$STAGE/lib" "$WORK/x"

log "extracting"
if [[ "$VARIANT" == cpu ]]; then
    unzip -q "${torch_whl[0]}" 'torch/include/*' 'torch/lib/libtorch_cpu.so' \
        'torch/lib/libc10.so' 'torch/lib/libgomp.so.1' -d "$WORK/x"
else
    unzip -q "${torch_whl[0]}" 'torch/include/*' 'torch/lib/*' 'torch/share/*' -d "$WORK/x"
    mv "$WORK/x/torch/share" "$STAGE/share"
fi
mv "$WORK/x/torch/include" "$STAGE/include"
mv "$WORK/x/torch/lib/"* "$STAGE/lib/"

# Shared libraries of the nvidia wheels, flat into lib/ (libtorch's RPATH has $ORIGIN).
for whl in "${nvidia_whls[@]}"; do
    rm -rf -- "$WORK/n" && mkdir -p "$WORK/n"
    if [[ "$VARIANT" == cpu ]]; then
        unzip -q -j "$whl" '*/libcudart.so.13' '*/libcupti.so.13' -d "$WORK/n" 2>/dev/null || true
    else
        unzip -q "$whl" '*.so*' '*/include/*' -d "$WORK/n" 2>/dev/null || true
        # Their headers (CUDA runtime, cuBLAS, NCCL, ...), merged into include/nvidia, for
        # the runner's c10d shim: ProcessGroupNCCL.hpp includes them. Only each wheel's own
        # nvidia/<package>/include: folders named include deeper down (libcu++'s) must not
        # land on top, where their <ratio> would shadow the C++ library's.
        while IFS= read -r -d '' inc; do
            mkdir -p "$STAGE/include/nvidia"
            cp -rn -- "$inc/." "$STAGE/include/nvidia/"
        done < <(find "$WORK/n/nvidia" -mindepth 2 -maxdepth 2 -type d -name include -print0 2>/dev/null)
    fi
    while IFS= read -r -d '' so; do
        mv -f -- "$so" "$STAGE/lib/"
    done < <(find "$WORK/n" -type f -name '*.so*' -not -path '*/include/*' -print0)
done

if [[ "$VARIANT" == cpu ]]; then
    ln -sf libtorch_cpu.so "$STAGE/lib/libtorch.so"
fi
[[ -e "$STAGE/lib/libgomp.so" ]] || ln -sf libgomp.so.1 "$STAGE/lib/libgomp.so"
echo "$TORCH_VERSION" > "$STAGE/build-version"
echo "$STAMP_TEXT" > "$STAGE/$STAMP_NAME"

if ! complete_tree "$STAGE"; then
    log "error: the assembled tree in $STAGE is incomplete:"
    ls -la "$STAGE/lib" >&2
    exit 1
fi

# Swap in place.
if [[ -e "$PREFIX" ]]; then
    rm -rf -- "$PREFIX.old.$$"
    mv -- "$PREFIX" "$PREFIX.old.$$"
    mv -- "$STAGE" "$PREFIX"
    rm -rf -- "$PREFIX.old.$$"
else
    mv -- "$STAGE" "$PREFIX"
fi

log "installed libtorch $TORCH_VERSION ($VARIANT) in $PREFIX: $(du -sh "$PREFIX" | cut -f1) in $((SECONDS - start)) s"
print_exports
