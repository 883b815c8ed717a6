#!/usr/bin/env bash
# Builds the Debian package of the desktop app with the `offload` and `offload-script-worker`
# binaries inside (Tauri sidecars: installed in /usr/bin beside /usr/bin/offload-app)
# and the search's sentence model (/usr/share/offload, where `offload` looks for it), and prints
# its path.
# The release profile already strips the binaries (Cargo.toml); `scripts/bench.sh size` prints
# the package's size beside the binaries'.
set -euo pipefail
cd "$(dirname "$0")/.."
scripts/setup.sh
target="${CARGO_TARGET_DIR:-target}"
triple="$(rustc -vV | sed -n 's/^host: //p')"
tauri=ui/node_modules/.bin/tauri
cargo build --release --locked -p offload-cli >&2
mkdir -p binaries
cp "$target/release/offload" "binaries/offload-$triple"
cp "$target/release/offload-script-worker" "binaries/offload-script-worker-$triple"
scripts/setup-model.sh binaries/offload-search-model.onnx >&2
$tauri build --no-bundle --config src-tauri/bundle.conf.json >&2
$tauri bundle --bundles deb --config src-tauri/bundle.conf.json >&2
ls "$target"/release/bundle/deb/*.deb
