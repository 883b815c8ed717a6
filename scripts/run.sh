#!/usr/bin/env bash
# Sets up and runs Offload: builds the `offload` binary (release) and serves MCP on stdio
# (`offload mcp`), which is what an MCP client launches. Extra arguments are passed on, e.g.
# allowed directories: scripts/run.sh ~/Offload ~/datasets
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
cargo build --release --locked -p offload-cli >&2
exec target/release/offload mcp "$@"
