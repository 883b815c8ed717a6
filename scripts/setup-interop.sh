#!/usr/bin/env bash
# Installs the published MCP peers the interop tests use into tests/interop:
# @modelcontextprotocol/sdk and server-everything (npm), and the Python SDK `mcp` (PyPI, venv).
# Re-running is cheap: nothing is installed again unless the lock files changed.
set -euo pipefail
cd "$(dirname "$0")/../tests/interop"

stamp() { cat "$@" 2>/dev/null | sha256sum | cut -d' ' -f1; }

if [ ! -d node_modules ] || [ "$(cat node_modules/.offload-stamp 2>/dev/null)" != "$(stamp package-lock.json)" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  stamp package-lock.json > node_modules/.offload-stamp
fi

if [ ! -x .venv/bin/python ] || [ "$(cat .venv/.offload-stamp 2>/dev/null)" != "$(stamp requirements.txt)" ]; then
  rm -rf .venv
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  stamp requirements.txt > .venv/.offload-stamp
fi
