#!/usr/bin/env bash
# Build the venus-edge container with the l4t-jetpack base that matches the device's L4T release.
#   deploy/jetson/image.sh [--release 36.4.3] [--wheels DIR] [--name venus-edge] [--dry-run]
# On a Jetson the release comes from /etc/nv_tegra_release; on a workstation give the device's
# (`cat /etc/nv_tegra_release` there, or deploy/jetson/detect.sh --tag). The image is NAME:r36.4.0 for
# any R36.4.x. Off an aarch64 machine it is built for linux/arm64 with docker buildx, which needs QEMU's
# binfmt handlers (docker run --privileged --rm tonistiigi/binfmt --install arm64); then pass --wheels
# (wheels.sh --llama) so nothing is compiled under emulation.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SOURCE="$(cd "$HERE/../.." && pwd)"
# shellcheck source-path=SCRIPTDIR source=detect.sh
. "$HERE/detect.sh"
RELEASE="" WHEELS="" NAME="venus-edge" DRY_RUN=0 ARCH="${VENUS_ARCH:-$(uname -m)}"

die() { printf 'image: %s\n' "$1" >&2; exit "${2:-1}"; }

while [ $# -gt 0 ]; do
  case "$1" in
    --release) RELEASE="${2:?--release needs an L4T release such as 36.4.3}"; shift 2 ;;
    --wheels) WHEELS="${2:?--wheels needs a directory}"; shift 2 ;;
    --name) NAME="${2:?--name needs an image name}"; shift 2 ;;
    --dry-run) DRY_RUN=1; shift ;;
    -h|--help) sed -n '2,8p' "$0"; exit 0 ;;
    *) die "unknown option '$1'; see --help." 2 ;;
  esac
done

RELEASE="${RELEASE#R}"
[ -n "$RELEASE" ] || RELEASE="$(venus_l4t_release "${VENUS_ROOT_PREFIX:-}")"
[ -n "$RELEASE" ] || die "no L4T release here (not a Jetson): give the device's with --release, e.g. --release 36.4.3." 2
TAG="$(venus_container_tag "$RELEASE")" || exit 3
[ -z "$WHEELS" ] || [ -d "$WHEELS" ] || die "wheel folder $WHEELS does not exist."

cmd=(docker build)
if [ "$ARCH" != aarch64 ] && [ "$ARCH" != arm64 ]; then
  cmd=(docker buildx build --platform linux/arm64 --load)
  [ -n "$WHEELS" ] || echo "image: warning: no --wheels on $ARCH: llama-cpp-python is compiled under emulation (hours)." >&2
fi
cmd+=(-f "$HERE/Dockerfile" --build-arg "L4T_TAG=$TAG" -t "$NAME:$TAG")
# the staged wheels replace the Dockerfile's empty `wheels` stage (BuildKit named context)
[ -z "$WHEELS" ] || cmd+=(--build-context "wheels=$WHEELS")
cmd+=("$SOURCE")
if [ "$DRY_RUN" -eq 1 ]; then printf '+ %s\n' "${cmd[*]}"; else "${cmd[@]}"; fi
echo "image $NAME:$TAG (base nvcr.io/nvidia/l4t-jetpack:$TAG, for L4T R$RELEASE)" >&2
