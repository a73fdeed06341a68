#!/usr/bin/env bash
# run.sh: build and run perfsim's CUDA calibration suite on one GPU (and
# the NCCL collectives across all visible GPUs, where built); the CSV goes
# to stdout, progress and build output to stderr.
#
#   kernels/run.sh > h200.csv           the full grid, about 1.5 minutes on an H100/H200
#   kernels/run.sh --quick > smoke.csv  a smoke run, under a minute
#   kernels/run.sh --flush write ...    how membw and gemm flush the L2 (read, write
#                                       or none; common.h says what each costs)
#   CUDA_DEVICE=1 kernels/run.sh ...    another GPU (default 0)
#
# Environment passed to the programs: PERFSIM_DRIVER and PERFSIM_CLOCKS
# (the driver version and clock state for the driver and clocks columns,
# queried with nvidia-smi unless already set).
set -euo pipefail

here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
quick=""
flush="read"
while [[ $# -gt 0 ]]; do
  case "$1" in
    --quick) quick="--quick" ;;
    --flush)
      flush="${2:-}"; shift
      case "$flush" in read|write|none) ;; *) echo "run.sh: --flush $flush: want read, write or none" >&2; exit 2 ;; esac ;;
    -h|--help) awk 'NR > 1 && !/^#/ { exit } NR > 1 { sub(/^# ?/, ""); print }' "$0"; exit 0 ;;
    *) echo "run.sh: unknown argument $1 (want --quick or --flush MODE)" >&2; exit 2 ;;
  esac
  shift
done
dev="${CUDA_DEVICE:-0}"

make -s -C "$here" >&2

if command -v nvidia-smi >/dev/null 2>&1; then
  if [[ -z "${PERFSIM_DRIVER:-}" ]]; then
    PERFSIM_DRIVER="$(nvidia-smi --query-gpu=driver_version --format=csv,noheader -i "$dev" 2>/dev/null | head -n1 || true)"
  fi
  if [[ -z "${PERFSIM_CLOCKS:-}" ]]; then
    PERFSIM_CLOCKS="$(nvidia-smi --query-gpu=clocks.max.sm,clocks.max.mem,clocks.applications.graphics,power.limit \
      --format=csv,noheader -i "$dev" 2>/dev/null | head -n1 |
      awk -F', ' '{printf "sm max %s; mem max %s; sm application %s; power limit %s", $1, $2, $3, $4}' || true)"
  fi
fi
export PERFSIM_DRIVER="${PERFSIM_DRIVER:-}" PERFSIM_CLOCKS="${PERFSIM_CLOCKS:-}"

start=$SECONDS
echo "run.sh: launch overhead" >&2
"$here/bin/launch" $quick --device "$dev"
echo "run.sh: memory bandwidth" >&2
"$here/bin/membw" $quick --device "$dev" --no-header --flush "$flush"
echo "run.sh: GEMMs" >&2
"$here/bin/gemm" $quick --device "$dev" --no-header --flush "$flush" --shapes "$here/shapes.txt"
if [[ -x "$here/bin/nccl" ]]; then
  echo "run.sh: NCCL collectives" >&2
  "$here/bin/nccl" $quick --no-header
else
  echo "run.sh: NCCL collectives skipped: bin/nccl not built (nccl.h not found)" >&2
fi
echo "run.sh: done in $((SECONDS - start)) s" >&2
