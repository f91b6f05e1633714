#!/usr/bin/env bash
# Coverage-guided fuzzing of mlbench's readers with libFuzzer (the targets in fuzz/,
# docs/fuzzing.md), on the stable toolchain: the instrumentation flags cargo-fuzz would
# pass, given here; no sanitizer (safe Rust; a panic or a failed assertion is the crash).
#
#   scripts/fuzz.sh TARGET [libFuzzer flags…]     TARGET: report, jobs, telemetry, zip, targets
#   scripts/fuzz.sh report -runs=10000000 -jobs=2 -workers=2
#   scripts/fuzz.sh zip -max_total_time=600
#
# The corpus grows in fuzz/corpus/TARGET (not committed), from the seeds committed in
# fuzz/seeds/TARGET (the hostile-input reproducers among them); crashes go to
# fuzz/artifacts/TARGET/. The seeds are replayed by the ordinary tests
# (schema/tests/fuzz_seeds.rs, validator/tests/fuzz_seeds.rs) on every `cargo test`.
set -euo pipefail
target=${1:?usage: scripts/fuzz.sh TARGET [libFuzzer flags]}
shift
cd "$(dirname "$0")/../fuzz"
export RUSTFLAGS="-Cpasses=sancov-module -Cllvm-args=-sanitizer-coverage-level=4 \
-Cllvm-args=-sanitizer-coverage-inline-8bit-counters -Cllvm-args=-sanitizer-coverage-pc-table \
-Cllvm-args=-sanitizer-coverage-trace-compares --cfg fuzzing -Cdebug-assertions -Coverflow-checks"
# With the host named as the target, the flags reach the targets' code, not the build
# scripts and proc-macros (which would not link without libFuzzer), as cargo-fuzz does.
host=$(rustc -vV | sed -n 's/^host: //p')
cargo build --release --target "$host" --bin "$target"
mkdir -p "corpus/$target" "artifacts/$target"
exec "target/$host/release/$target" -artifact_prefix="artifacts/$target/" -max_len=16384 "$@" \
    "corpus/$target" "seeds/$target"
