#!/usr/bin/env bash
# The desktop app end to end: builds the app, `offload` and the fixture server, then drives the
# real app through WebDriver under Xvfb and a private D-Bus session with a Secret Service, with a real MCP client
# (Python SDK) launching `offload mcp`. Screenshots land in docs/guide/screenshots/, the window's
# figures (Responses with 10,000 files, the live log under 200 calls/s) in
# <target>/<profile>/e2e-figures.json.
set -euo pipefail
cd "$(dirname "$0")/.."

driver="$(scripts/setup-e2e.sh)"
scripts/setup-interop.sh
# OFFLOAD_E2E_PROFILE=release runs it on release builds (what `scripts/bench.sh ui` does for the
# figures); debug builds otherwise.
profile="${OFFLOAD_E2E_PROFILE:-debug}"
flag=(); [ "$profile" = release ] && flag=(--release)
cargo build --locked "${flag[@]}" -p offload-app -p offload-cli -p offload-testkit --bins
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')/$profile"
# Inside the private D-Bus session, a real Secret Service (gnome-keyring, unlocked with a
# throwaway password) holds the keychain secrets the test saves.
xvfb-run -a dbus-run-session -- bash -c \
  'eval "$(printf e2e | gnome-keyring-daemon --unlock --components=secrets)"; exec "$@"' _ \
  tests/interop/.venv/bin/python tests/e2e/app_e2e.py \
  "$target/offload-app" "$target/offload" "$target/offload-fixture" \
  "$driver" docs/guide/screenshots "$target/e2e-figures.json"
