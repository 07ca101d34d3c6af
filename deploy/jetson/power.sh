#!/usr/bin/env bash
# Power mode, clocks and swap for the board profile (run by venus-power.service as root).
#   power.sh apply | restore | mode-id NAME [nvpmodel.conf]
# Profile variables: VENUS_NVPMODEL (mode NAMEs from /etc/nvpmodel.conf, e.g. MAXN, 15W,
# MAXN_SUPER; a comma list tries them in order) and VENUS_SWAP_GB (swap for CPU-side
# pages; CUDA memory never swaps).
set -euo pipefail

STATE="${VENUS_STATE_DIR:-/var/lib/venus-edge}"
SWAPFILE="${VENUS_SWAPFILE:-/var/swapfile-venus}"
NVPMODEL_CONF="${VENUS_NVPMODEL_CONF:-/etc/nvpmodel.conf}"

log() { printf '[venus-power] %s\n' "$*" >&2; }

# nvpmodel.conf declares modes as "< POWER_MODEL ID=2 NAME=MAXN_SUPER >"; ids differ per module.
mode_id() {
  local name="$1" conf="${2:-$NVPMODEL_CONF}"
  [ -r "$conf" ] || { log "no $conf: nvpmodel is not installed on this system."; return 1; }
  awk -v want="$name" '
    /<[ \t]*POWER_MODEL/ {
      id = ""; nm = ""
      for (i = 1; i <= NF; i++) {
        if ($i ~ /^ID=/) id = substr($i, 4)
        if ($i ~ /^NAME=/) nm = substr($i, 6)
      }
      if (toupper(nm) == toupper(want)) { print id; found = 1; exit }
    }
    END { exit found ? 0 : 1 }' "$conf" \
    || { log "power mode '$name' is not in $conf; modes there: $(grep 'POWER_MODEL' "$conf" | grep -o 'NAME=[^ >]*' | cut -d= -f2 | tr '\n' ' ')"; return 1; }
}

swap_total_mb() { awk '/^SwapTotal:/ { print int($2 / 1024) }' /proc/meminfo; }

apply_swap() {
  local want_mb=$(( ${VENUS_SWAP_GB:-0} * 1024 ))
  [ "$want_mb" -gt 0 ] || return 0
  if [ "$(swap_total_mb)" -ge "$want_mb" ]; then
    log "swap already $(swap_total_mb) MB (zram counts): nothing to add."
    return 0
  fi
  if [ ! -f "$SWAPFILE" ]; then
    log "creating ${VENUS_SWAP_GB} GB swap file $SWAPFILE"
    fallocate -l "${want_mb}M" "$SWAPFILE" || dd if=/dev/zero of="$SWAPFILE" bs=1M count="$want_mb" status=none
    chmod 600 "$SWAPFILE"
    mkswap "$SWAPFILE" >/dev/null
  fi
  swapon "$SWAPFILE" 2>/dev/null || log "swapon $SWAPFILE failed; continuing without it."
}

# VENUS_NVPMODEL may list names, first choice first (JetPack 6.2 renames some modes, e.g. MAXN_SUPER).
pick_mode() {
  local names name id
  IFS=, read -ra names <<<"$1"
  for name in "${names[@]}"; do
    if id="$(mode_id "$name" 2>/dev/null)"; then echo "$name $id"; return 0; fi
  done
  mode_id "${names[0]}" >/dev/null  # says which modes there are
}

apply() {
  local name id
  if [ -n "${VENUS_NVPMODEL:-}" ] && command -v nvpmodel >/dev/null; then
    if read -r name id < <(pick_mode "$VENUS_NVPMODEL"); then
      if [ "$(nvpmodel -q 2>/dev/null | sed -n 's/^NV Power Mode: *//p')" != "$name" ]; then
        log "power mode $name (id $id)"
        # Some switches ask to reboot; answer no here, the new mode applies after the next boot.
        echo no | nvpmodel -m "$id" || log "nvpmodel -m $id failed; staying in the current mode."
      fi
    fi
  fi
  if command -v jetson_clocks >/dev/null; then
    mkdir -p "$STATE"
    [ -f "$STATE/clocks.conf" ] || jetson_clocks --store "$STATE/clocks.conf" || true
    jetson_clocks || log "jetson_clocks failed; clocks stay dynamic (slower first token)."
  fi
  apply_swap
}

restore() {
  if command -v jetson_clocks >/dev/null && [ -f "$STATE/clocks.conf" ]; then
    jetson_clocks --restore "$STATE/clocks.conf" || true
  fi
  if [ -f "$SWAPFILE" ]; then swapoff "$SWAPFILE" 2>/dev/null || true; fi
}

case "${1:-}" in
  apply) apply ;;
  restore) restore ;;
  mode-id) shift; mode_id "${1:?mode-id needs a NAME}" "${2:-$NVPMODEL_CONF}" ;;
  *) echo "usage: power.sh apply | restore | mode-id NAME [nvpmodel.conf]" >&2; exit 2 ;;
esac
