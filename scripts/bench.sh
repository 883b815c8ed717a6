#!/usr/bin/env bash
# Builds in release mode and runs Offload's benchmarks; each prints our figure beside a
# baseline measured in the same run.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --workspace --bins >&2
target="${CARGO_TARGET_DIR:-target}"
"$target/release/offload-bench" latency "$@"
