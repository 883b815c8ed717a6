#!/usr/bin/env bash
# The desktop app end to end: builds the app, `offload` and the fixture server, then drives the
# real app through WebDriver under Xvfb and a private D-Bus session, with a real MCP client
# (Python SDK) launching `offload mcp`. Screenshots land in docs/screenshots/.
set -euo pipefail
cd "$(dirname "$0")/.."

driver="$(scripts/setup-e2e.sh)"
scripts/setup-interop.sh
cargo build --locked -p offload-app -p offload-cli -p offload-testkit --bins
target="$(cargo metadata --format-version 1 --no-deps | python3 -c 'import json,sys; print(json.load(sys.stdin)["target_directory"])')"
xvfb-run -a dbus-run-session -- tests/interop/.venv/bin/python tests/e2e/app_e2e.py \
  "$target/debug/offload-app" "$target/debug/offload" "$target/debug/offload-fixture" \
  "$driver" docs/screenshots
