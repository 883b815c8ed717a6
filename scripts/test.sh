#!/usr/bin/env bash
# Sets up and runs every Offload test: formatting, lints, the engine's GUI-free check, the
# TypeScript types' drift check, unit and end-to-end tests of the engine and CLI, interop with
# published MCP SDKs and servers, the front end's component tests, the user guide's build and
# links, and the desktop app driven through WebDriver.
set -euo pipefail
cd "$(dirname "$0")/.."

scripts/setup.sh
scripts/setup-interop.sh
scripts/setup-model.sh
scripts/setup-model.sh --candidate

echo "== format and lints" >&2
cargo fmt --all -- --check
cargo clippy --workspace --all-targets --locked -- -D warnings

echo "== the user guide builds and its links hold" >&2
scripts/guide.sh

echo "== the engine stays GUI-free" >&2
if cargo tree -p offload-engine -e normal --locked | grep -qi tauri; then
  echo "offload-engine depends on tauri: the engine must stay GUI-free" >&2
  exit 1
fi
if cargo tree -p offload-engine -e normal --locked | grep -qi rquickjs; then
  echo "offload-engine links the JavaScript engine: scripts run in the worker (offload-script without its runtime feature)" >&2
  exit 1
fi

echo "== the fuzz targets still build against the parsers (own workspace; scripts/fuzz.sh runs them)" >&2
CARGO_TARGET_DIR=${CARGO_TARGET_DIR:-$HOME/.cache/offload/target}-fuzz \
  cargo check --manifest-path crates/fuzz/Cargo.toml --bins --locked

echo "== front end: types, component tests" >&2
npm --prefix ui run --silent check
npm --prefix ui test --silent

echo "== build and test" >&2
cargo build --workspace --bins --locked
cargo test --workspace --locked -- --include-ignored

echo "== desktop app end to end" >&2
scripts/e2e.sh
