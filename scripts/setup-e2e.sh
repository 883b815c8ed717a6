#!/usr/bin/env bash
# Installs what the desktop app's end-to-end test needs, skipping whatever is there: Xvfb, a
# D-Bus session, a Secret Service (gnome-keyring), a notification daemon (dunst), WebKitWebDriver (Debian's webkit2gtk-driver), and tauri-driver (crates.io,
# into ~/.cache/offload/tools). Prints the tauri-driver path.
set -euo pipefail

need_apt=()
for p in xvfb xauth webkit2gtk-driver dbus-x11 dbus-daemon gnome-keyring dunst; do
  dpkg -s "$p" >/dev/null 2>&1 || need_apt+=("$p")
done
if ((${#need_apt[@]})); then
  echo "setup-e2e: installing ${need_apt[*]}" >&2
  SUDO=""; [ "$(id -u)" -eq 0 ] || SUDO="sudo"
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq --no-install-recommends "${need_apt[@]}" >/dev/null
fi

tools="$HOME/.cache/offload/tools"
if [ ! -x "$tools/bin/tauri-driver" ]; then
  echo "setup-e2e: installing tauri-driver" >&2
  cargo install tauri-driver --locked --root "$tools" --quiet >&2
fi
echo "$tools/bin/tauri-driver"
