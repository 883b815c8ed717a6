#!/usr/bin/env bash
# Builds in release mode and runs Offload's benchmarks; each prints our figure beside a
# baseline measured in the same run. With no argument: all of them. Otherwise the arguments go
# to offload-bench, e.g. `scripts/bench.sh latency --calls 5000` or `scripts/bench.sh files --gigabytes 10`.
set -euo pipefail
cd "$(dirname "$0")/.."
cargo build --release --locked --workspace --bins >&2
bench="${CARGO_TARGET_DIR:-target}/release/offload-bench"
if [ "$#" -eq 0 ]; then
  "$bench" latency
  echo
  "$bench" store
  echo
  "$bench" file-content
  echo
  "$bench" files
else
  "$bench" "$@"
fi
