#!/usr/bin/env bash
# Installs what building and testing Offload needs, skipping whatever is already there: Rust
# components, and on Debian/Ubuntu the system libraries of the desktop app (WebKitGTK, GTK, the
# tray), Node.js and npm, Python's venv module; then the front end's npm packages.
set -euo pipefail
cd "$(dirname "$0")/.."

need_apt=()
have_pkg() { dpkg -s "$1" >/dev/null 2>&1; }
command -v node >/dev/null 2>&1 || need_apt+=(nodejs)
command -v npm >/dev/null 2>&1 || need_apt+=(npm)
command -v python3 >/dev/null 2>&1 || need_apt+=(python3)
if command -v python3 >/dev/null 2>&1 && ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
  need_apt+=(python3-venv)
fi
command -v cc >/dev/null 2>&1 || need_apt+=(build-essential)
command -v pkg-config >/dev/null 2>&1 || need_apt+=(pkg-config)
command -v file >/dev/null 2>&1 || need_apt+=(file)
if command -v dpkg >/dev/null 2>&1; then
  # The desktop app: WebKitGTK webview, GTK, the tray (Ayatana), SVG icons, input automation, TLS.
  for p in libwebkit2gtk-4.1-dev libgtk-3-dev libayatana-appindicator3-dev librsvg2-dev libxdo-dev libssl-dev; do
    have_pkg "$p" || need_apt+=("$p")
  done
fi

if ((${#need_apt[@]})); then
  if command -v apt-get >/dev/null 2>&1; then
    echo "setup: installing ${need_apt[*]}" >&2
    SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
    $SUDO apt-get update -qq
    DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
  else
    echo "setup: please install: ${need_apt[*]}" >&2
    exit 1
  fi
fi

if ! command -v cargo >/dev/null 2>&1; then
  echo "setup: Rust is missing; install it with rustup (https://rustup.rs) and run this again" >&2
  exit 1
fi
if command -v rustup >/dev/null 2>&1; then
  for c in rustfmt clippy; do
    rustup component list --installed 2>/dev/null | grep -q "^$c" || rustup component add "$c"
  done
fi

# The front end: npm packages (again only when the lock file changed), then the built files the
# app embeds.
stamp() { cat "$@" 2>/dev/null | sha256sum | cut -d' ' -f1; }
if [ ! -d ui/node_modules ] || [ "$(cat ui/node_modules/.offload-stamp 2>/dev/null)" != "$(stamp ui/package-lock.json)" ]; then
  # `npm install` rather than `npm ci`: the lock file leaves out the other platforms' optional
  # builds of rollup and the Tauri CLI, which `npm ci` insists on; install keeps the locked
  # versions all the same.
  (cd ui && npm install --no-audit --no-fund --loglevel=error)
  stamp ui/package-lock.json > ui/node_modules/.offload-stamp
fi
npm --prefix ui run --silent build >/dev/null
