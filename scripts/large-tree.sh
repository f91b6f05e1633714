# Sourced by the bench scripts: makes (once) the large generated tree in $work/large and
# the release binary. 20 vendor folders × 10 runs × 8 GPUs × 19 benches (~26,000 entries).
cd "$(dirname "${BASH_SOURCE[0]}")/.."
work=${1:-$(mktemp -d)}
tree="$work/large"
if [ ! -d "$tree" ]; then
    cargo run -q --release -p mlbench-schema --example gen_submission -- \
        --out "$tree" --vendors 20 --runs 10 --gpus 8 --suite fast
fi
cargo build -q --release --bin mlbench
bin=target/release/mlbench
du -sh "$tree"
