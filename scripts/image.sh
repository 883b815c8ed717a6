#!/usr/bin/env bash
# Builds Offload's OCI image from scratch with buildah: no base image is downloaded. It holds
# `offload` and `offload-script-worker`, the search's sentence model
# (/usr/local/share/offload, when installed beside the binaries or by scripts/setup-model.sh),
# the few C libraries they link (copied from this machine), the CA certificates, and a user that is not root; `/data` is its home (config,
# tokens, records), meant for a volume.
#
#   scripts/image.sh [--bin-dir DIR] [--tag NAME] [--archive FILE]
#
# --bin-dir: where the binaries are (default: the release build, built first when missing);
# --tag: the image's name in local storage (default offload:latest); --archive: also write it
# as an OCI archive (`podman load -i FILE`, or push it with skopeo). Needs buildah (Debian:
# `apt-get install buildah`); run it as root or under `buildah unshare`.
set -euo pipefail
cd "$(dirname "$0")/.."
target="${CARGO_TARGET_DIR:-target}"
bin_dir="" tag="offload:latest" archive=""
while [ $# -gt 0 ]; do
  case "$1" in
    --bin-dir) bin_dir="$2"; shift 2 ;;
    --tag) tag="$2"; shift 2 ;;
    --archive) archive="$2"; shift 2 ;;
    *) echo "unknown argument: $1" >&2; exit 2 ;;
  esac
done
if [ -z "$bin_dir" ]; then
  bin_dir="$target/release"
  if [ ! -x "$bin_dir/offload" ] || [ ! -x "$bin_dir/offload-script-worker" ]; then
    cargo build --release --locked -p offload-cli --bins >&2
  fi
fi
for bin in offload offload-script-worker; do
  [ -x "$bin_dir/$bin" ] || { echo "no $bin in $bin_dir" >&2; exit 1; }
done
command -v buildah >/dev/null || { echo "buildah is missing (apt-get install buildah)" >&2; exit 1; }

stage="$(mktemp -d)"
trap 'rm -rf "$stage"; [ -n "${ctr:-}" ] && buildah rm "$ctr" >/dev/null 2>&1 || true' EXIT
mkdir -p "$stage/usr/local/bin" "$stage/usr/local/share/offload" "$stage/etc/ssl/certs" "$stage/data" "$stage/tmp"
cp "$bin_dir/offload" "$bin_dir/offload-script-worker" "$stage/usr/local/bin/"
# The search's sentence model where `offload` looks for it (../share/offload from its folder).
model="$stage/usr/local/share/offload/offload-search-model.onnx"
if [ -f "$bin_dir/offload-search-model.onnx" ]; then
  cp "$bin_dir/offload-search-model.onnx" "$model"
else
  scripts/setup-model.sh "$model" >&2 || echo "image: no sentence model; the search ranks without it" >&2
fi
# The C libraries they link and the dynamic loader, at the paths the binaries name.
ldd "$bin_dir/offload" "$bin_dir/offload-script-worker" |
  grep -o '/[^ ]*\.so[^ ]*' | sort -u | while read -r lib; do
    mkdir -p "$stage$(dirname "$lib")"
    cp -L "$lib" "$stage$lib"
  done
cp -L /etc/ssl/certs/ca-certificates.crt "$stage/etc/ssl/certs/"
printf 'root:x:0:0::/root:/sbin/nologin\noffload:x:65532:65532::/data:/sbin/nologin\n' >"$stage/etc/passwd"
printf 'root:x:0:\noffload:x:65532:\n' >"$stage/etc/group"
chown 65532:65532 "$stage/data"
chmod 1777 "$stage/tmp"

ctr="$(buildah from scratch)"
buildah copy --quiet "$ctr" "$stage" / >/dev/null
version="$("$bin_dir/offload" --version | awk '{print $2}')"
buildah config \
  --user 65532:65532 \
  --workingdir /data \
  --env HOME=/data \
  --env OFFLOAD_LOG=info \
  --port 8765 \
  --volume /data \
  --entrypoint '["/usr/local/bin/offload"]' \
  --cmd 'serve --http 0.0.0.0:8765' \
  --label org.opencontainers.image.title=offload \
  --label "org.opencontainers.image.version=$version" \
  --label org.opencontainers.image.description="Offload: an MCP gateway that keeps big data out of the context window" \
  "$ctr"
buildah commit --quiet --rm "$ctr" "$tag" >/dev/null
ctr=""
if [ -n "$archive" ]; then
  rm -f "$archive"
  buildah push --quiet "$tag" "oci-archive:$archive:$tag" >/dev/null
fi
echo "built $tag (offload $version) from scratch${archive:+, archive $archive}"
