# Sourced by the bench scripts (scripts/bench-report.sh, scripts/bench-validate.sh), from
# any folder, with the work folder as its first argument (default: a new temporary one).
# Leaves the shell in the repository root, builds the release binary (`bin`) and makes,
# once, the large generated submission `tree` = WORKDIR/large: 20 vendor folders ×
# 10 runs × 8 GPUs × 19 benches of the fast profile in run_10.sh's layout,
# vendorNN/outputR/fast_G.json (1,600 streams, 26,200 entries, ~94 MB), and the same
# entries in the appended layout, `appended` = WORKDIR/appended (160 streams), and the
# legacy layout again with losses shaped as Python's repr writes real ones (exponents,
# signs, integer-valued and short floats: gen_submission --numbers repr), `repr` =
# WORKDIR/repr (1,600 streams).
# `tree_of LAYOUT` prints the tree of a layout (legacy, appended, repr).
# `large_tree LAYOUT DIR` makes the same submission (same entries) in another layout of
# gen_submission, once: `large_tree appended DIR` gives 160 streams vendorNN/fast_G.json,
# each holding the 10 runs one after another.
work=$(realpath -m "${1:-$(mktemp -d)}")
cd "$(dirname "${BASH_SOURCE[0]}")/.."
large_tree() {
    local layout=$1 dir=$2
    shift 2
    if [ ! -d "$dir" ]; then
        cargo run -q --release -p mlbench-schema --example gen_submission -- \
            --out "$dir" --vendors 20 --runs 10 --gpus 8 --suite fast --layout "$layout" "$@"
    fi
}
tree="$work/large"
large_tree legacy "$tree"
appended="$work/appended"
large_tree appended "$appended"
repr="$work/repr"
large_tree legacy "$repr" --numbers repr
tree_of() {
    case $1 in
    legacy) echo "$tree" ;;
    appended) echo "$appended" ;;
    repr) echo "$repr" ;;
    esac
}
cargo build -q --release --bin mlbench
bin=target/release/mlbench
du -sh "$tree" "$appended" "$repr"
