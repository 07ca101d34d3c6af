#!/usr/bin/env bash
# Jetson detection: L4T release, JetPack stack and board, read under a root prefix so
# tests can feed recorded files. Source it and call venus_detect ROOT, or run it:
#   deploy/jetson/detect.sh [ROOT]     prints KEY=value lines; exit 3 when unsupported
#   deploy/jetson/detect.sh --tag [ROOT]   the l4t-jetpack base tag for this release (r36.4.0)

# "# R36 (release), REVISION: 4.3, GCID: ..." -> 36.4.3 (empty when absent or unreadable)
venus_l4t_release() {
  local f="${1:-}/etc/nv_tegra_release"
  # image builds name the release of their base image
  if [ -n "${VENUS_L4T_RELEASE:-}" ]; then echo "$VENUS_L4T_RELEASE"; return 0; fi
  [ -r "$f" ] || return 0
  sed -n 's/^# R\([0-9][0-9]*\) (release), REVISION: \([0-9][0-9.]*\),.*/\1.\2/p' "$f" | head -n1
}

# The device tree strings are NUL-terminated; compatible holds several joined by NUL.
venus_dt_string() {
  local f="${1:-}/proc/device-tree/$2"
  [ -r "$f" ] || return 0
  tr '\0' ' ' <"$f" | sed 's/ *$//'
}

venus_mem_gib() {
  local f="${1:-}/proc/meminfo"
  [ -r "$f" ] || { echo 0; return 0; }
  awk '/^MemTotal:/ { printf "%d\n", $2 / 1048576 + 0.5 }' "$f"
}

# Module part numbers (p3701: AGX Orin, p3767: Orin NX/Nano) name the board exactly;
# the model string plus MemTotal is the fallback for custom device trees.
venus_board() {
  local root="${1:-}" compat model mem board=""
  compat="$(venus_dt_string "$root" compatible)"
  model="$(venus_dt_string "$root" model)"
  mem="$(venus_mem_gib "$root")"
  case "$compat" in
    *p3701-0005*|*p3701-0008*) board=orin-agx-64 ;;
    *p3701-0000*|*p3701-0004*) board=orin-agx-32 ;;
    *p3767-0000*) board=orin-nx-16 ;;
    *p3767-0001*) board=orin-nx-8 ;;
    *p3767-0003*|*p3767-0005*) board=orin-nano-8 ;;
    *p3767-0004*) board=orin-nano-4 ;;
  esac
  if [ -z "$board" ]; then
    case "$model" in
      *"AGX Orin"*) if [ "$mem" -gt 40 ]; then board=orin-agx-64; else board=orin-agx-32; fi ;;
      *"Orin NX"*) if [ "$mem" -gt 10 ]; then board=orin-nx-16; else board=orin-nx-8; fi ;;
      *"Orin Nano"*) if [ "$mem" -gt 5 ]; then board=orin-nano-8; else board=orin-nano-4; fi ;;
    esac
  fi
  # JetPack 6.2 adds the Super mode (102 GB/s instead of 68); its profile assumes the higher bandwidth.
  if [ "$board" = orin-nano-8 ]; then
    case "$compat $model" in
      *-super*|*Super*) board=orin-nano-8-super ;;
      *) grep -qs 'NAME=MAXN_SUPER' "$root/etc/nvpmodel.conf" && board=orin-nano-8-super ;;
    esac
  fi
  echo "$board"
}

# Prints JETPACK CUDA TENSORRT PIP_INDEX for a supported release; otherwise one sentence on stderr, exit 3.
venus_stack() {
  local rel="$1" major minor
  major="${rel%%.*}"; minor="${rel#*.}"; minor="${minor%%.*}"
  case "$major" in
    "") echo "This is not a Jetson running L4T (no /etc/nv_tegra_release): use scripts/setup.sh on other machines." >&2; return 3 ;;
    36)
      case "$minor" in
        4) echo "6.1+ 12.6 10.3 https://pypi.jetson-ai-lab.io/jp6/cu126" ;;
        3) echo "6.0 12.2 8.6 https://pypi.jetson-ai-lab.io/jp6/cu122" ;;
        *) echo "L4T R$rel is a JetPack 6 preview that venus-edge does not support: flash JetPack 6.1 or newer (L4T R36.4)." >&2; return 3 ;;
      esac ;;
    35|34) echo "L4T R$rel is JetPack 5 (Ubuntu 20.04, Python 3.8), which venus-edge does not support: flash JetPack 6.1 or newer (L4T R36.4)." >&2; return 3 ;;
    32) echo "L4T R$rel is JetPack 4 for Jetson Nano/TX/Xavier, not an Orin: venus-edge needs a Jetson Orin with JetPack 6.x." >&2; return 3 ;;
    *)
      if [ "$major" -gt 36 ] 2>/dev/null; then
        echo "L4T R$rel (JetPack 7 or later) is not supported by venus-edge on Orin yet: use JetPack 6.x (L4T R36.3 or R36.4)." >&2
      else
        echo "L4T release '$rel' is not one venus-edge knows: use JetPack 6.x (L4T R36.3 or R36.4)." >&2
      fi
      return 3 ;;
  esac
}

# The l4t-jetpack base tag for a release: NVIDIA publishes one image per minor release (r36.3.0, r36.4.0)
# and an image runs on every patch release of that minor one (R36.4.3 -> r36.4.0). Refuses what venus_stack refuses.
venus_container_tag() {
  local rel="$1" major minor
  venus_stack "$rel" >/dev/null || return 3
  major="${rel%%.*}"; minor="${rel#*.}"; minor="${minor%%.*}"
  echo "r$major.$minor.0"
}

# KEY=value lines for setup.sh, the profile picker and the README's troubleshooting.
venus_detect() {
  local root="${1:-}" rel board stack jetpack cuda trt index
  rel="$(venus_l4t_release "$root")"
  board="$(venus_board "$root")"
  echo "L4T_RELEASE=$rel"
  echo "MODULE=$(venus_dt_string "$root" model)"
  echo "BOARD=$board"
  if [ -z "$rel" ] && [ -z "${VENUS_L4T_RELEASE:-}" ] && [ -e "$root/etc/nv_tegra_release" ]; then
    echo "/etc/nv_tegra_release does not name an L4T release ('$(head -n1 "$root/etc/nv_tegra_release" | cut -c1-60)'): reinstall nvidia-l4t-core." >&2
    return 3
  fi
  stack="$(venus_stack "$rel")" || return 3
  read -r jetpack cuda trt index <<<"$stack"
  echo "JETPACK=$jetpack"
  echo "CUDA=$cuda"
  echo "TENSORRT=$trt"
  echo "PIP_INDEX=$index"
  echo "L4T_TAG=$(venus_container_tag "$rel")"
  # No board inside a container build (no device tree): the profile is picked at run time.
  if [ -z "$board" ] && [ -e "$root/proc/device-tree/model" ]; then
    echo "This module ('$(venus_dt_string "$root" model)') is not an Orin that venus-edge has a profile for." >&2
    return 3
  fi
}

if [ "${BASH_SOURCE[0]}" = "$0" ]; then
  set -uo pipefail
  # --tag [ROOT]: only the container base tag (for docker build --build-arg L4T_TAG=...)
  if [ "${1:-}" = --tag ]; then
    venus_container_tag "$(venus_l4t_release "${2:-}")"
  else
    venus_detect "${1:-}"
  fi
fi
