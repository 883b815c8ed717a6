#!/usr/bin/env bash
# Fuzzes every parser and renderer: each cargo-fuzz target in crates/fuzz runs for a fixed
# budget, starting from the committed seeds (crates/fuzz/seeds/<target>), then prints the runs,
# CPU time and crashes per target. New corpus entries stay in the target directory; crashes are
# written to crates/fuzz/artifacts/<target>/ (reproduce with `cargo fuzz run <target> <file>`).
#
#   scripts/fuzz.sh                 every target, 120 s each
#   scripts/fuzz.sh 600             every target, 10 min each
#   scripts/fuzz.sh 60 csv_input    one target
#
# Needs cargo-fuzz (installed when missing). The machine's stable toolchain builds the
# sanitizer-instrumented targets with RUSTC_BOOTSTRAP=1, so no nightly is needed.
set -euo pipefail
cd "$(dirname "$0")/.."

seconds=${1:-120}
shift || true
export CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/offload/target-fuzz}
export RUSTC_BOOTSTRAP=1
command -v cargo-fuzz >/dev/null || cargo install cargo-fuzz --locked

dir=(--fuzz-dir crates/fuzz)
targets=("$@")
[ ${#targets[@]} -gt 0 ] || mapfile -t targets < <(cargo fuzz list "${dir[@]}")
cargo fuzz build "${dir[@]}" -O

summary=()
status=0
for target in "${targets[@]}"; do
    corpus="$CARGO_TARGET_DIR/fuzz-corpus/$target"
    log="$CARGO_TARGET_DIR/fuzz-logs/$target.log"
    mkdir -p "$corpus" "$(dirname "$log")"
    echo "== $target: ${seconds}s"
    start=$(date +%s)
    # -rss_limit_mb and -timeout turn runaway memory and hangs into findings.
    if cargo fuzz run "${dir[@]}" -O "$target" "$corpus" "crates/fuzz/seeds/$target" -- \
        -max_total_time="$seconds" -rss_limit_mb=2048 -timeout=10 -print_final_stats=1 \
        >"$log" 2>&1; then
        result="0 crashes"
    else
        result="CRASH (see $log and crates/fuzz/artifacts/$target/)"
        status=1
    fi
    runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
    summary+=("$(printf '%-12s %10s runs %6ss  %s' "$target" "$runs" "$(($(date +%s) - start))" "$result")")
done
printf '%s\n' "" "target             runs      time  result" "${summary[@]}"
exit $status
