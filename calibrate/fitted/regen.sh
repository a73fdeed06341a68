#!/bin/sh
# regen.sh: fit the catalog's calibrated devices to the third-party
# measurements in ../shared/validation and merge the fits into the
# catalog. See README.md in this directory.
#
#   calibrate/fitted/regen.sh               fit and merge every device
#   calibrate/fitted/regen.sh -merge-only   merge the fitted files as they are
#   calibrate/fitted/regen.sh -check        fail if the catalog overlays differ
#                                           from the fitted files (writes nothing)
#   calibrate/fitted/regen.sh -kernels      refit only the MoE and MLA kernel
#                                           classes on top of the fitted files
#                                           (the second stage of a full fit)
#   calibrate/fitted/regen.sh [MODE] STEM...  the same for these devices only
#                                           (a100-sxm-80gb, h100-sxm, h200-sxm, b200)
#
# For each device it writes
#   calibrate/fitted/<stem>.toml       the hand-written catalog device with the
#                                      fitted [efficiency] tables and link keys
#   calibrate/fitted/<stem>.fit.txt    the fit's per-class errors, in-sample and
#                                      5-fold held out
#   hardware/devices/fitted/<stem>.toml  the overlay the catalog applies
#
# DATE (default: today, UTC) is the provenance date written into every
# fitted table. The fit is seeded: the same DATE and the same measurement
# files give byte-identical output.
set -eu
cd "$(dirname "$0")/../.."

mode=fit
case ${1:-} in
-merge-only | -check | -kernels)
	mode=$1
	shift
	;;
-*)
	echo "usage: calibrate/fitted/regen.sh [-merge-only | -check | -kernels] [STEM...]" >&2
	exit 2
	;;
esac
only=" $* "
DATE=${DATE:-$(date -u +%Y-%m-%d)}
A=../shared/validation/derived/aiconfigurator

tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
go build -o "$tmp/perfsim" ./cmd/perfsim

# measurements FILE... prints the files under $A as --measurements takes
# them (comma-separated), and exits when one is missing.
measurements() {
	files=
	for f in "$@"; do
		if [ ! -f "$A/$f" ]; then
			echo "regen.sh: $A/$f not found (../shared/validation is needed to fit)" >&2
			exit 1
		fi
		files=${files:+$files,}$A/$f
	done
	echo "$files"
}

# kernels STEM FILE... fits the MoE and MLA kernel classes of STEM (the
# second stage: on top of the fitted file the first stage wrote, whose
# other tables it keeps) and reports them in <stem>.kernels.fit.txt.
kernels() {
	stem=$1
	shift
	case $only in
	"  " | *" $stem "*) ;;
	*) return 0 ;;
	esac
	if [ "$mode" = fit ] || [ "$mode" = -kernels ]; then
		files=$(measurements "$@")
		echo "regen.sh: fitting the MoE and MLA kernels of $stem" >&2
		"$tmp/perfsim" calibrate fit --hw "calibrate/fitted/$stem.toml" --date "$DATE" \
			--measurements "$files" -o "$tmp/$stem.toml" >"$tmp/$stem.kernels.fit.txt"
		mv "$tmp/$stem.toml" "calibrate/fitted/$stem.toml"
		mv "$tmp/$stem.kernels.fit.txt" "calibrate/fitted/$stem.kernels.fit.txt"
		"$tmp/perfsim" calibrate merge --hw "calibrate/fitted/$stem.toml" -o "hardware/devices/fitted/$stem.toml"
	fi
}

# run STEM FILE... fits the hand-written catalog file of STEM (not the
# catalog device, which carries the previous fit) to the files in $A.
run() {
	stem=$1
	shift
	case $only in
	"  " | *" $stem "*) ;;
	*) return 0 ;;
	esac
	if [ "$mode" = -kernels ]; then
		return 0
	fi
	if [ "$mode" = fit ]; then
		files=$(measurements "$@")
		echo "regen.sh: fitting $stem" >&2
		"$tmp/perfsim" calibrate fit --hw "hardware/devices/$stem.toml" --date "$DATE" \
			--measurements "$files" -o "calibrate/fitted/$stem.toml" >"$tmp/$stem.fit.txt"
		mv "$tmp/$stem.fit.txt" "calibrate/fitted/$stem.fit.txt"
	fi
	check=
	if [ "$mode" = -check ]; then
		check=--check
	fi
	"$tmp/perfsim" calibrate merge $check --hw "calibrate/fitted/$stem.toml" -o "hardware/devices/fitted/$stem.toml"
}

run a100-sxm-80gb \
	a100_sxm_gemm_trtllm_1.0.0_gemm_perf.csv \
	a100_sxm_attention_trtllm_1.0.0_context_attention_perf.csv \
	a100_sxm_attention_trtllm_1.0.0_generation_attention_perf.csv \
	a100_sxm_comm_nccl_2.27.3_nccl_perf.csv \
	a100_sxm_comm_trtllm_1.0.0_custom_allreduce_perf.csv
run h100-sxm \
	h100_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv \
	h100_sxm_attention_trtllm_1.3.0rc20_context_attention_perf.csv \
	h100_sxm_attention_trtllm_1.3.0rc20_generation_attention_perf.csv \
	h100_sxm_comm_nccl_2.29.2_nccl_perf.csv \
	h100_sxm_comm_trtllm_1.3.0rc20_custom_allreduce_perf.csv
run h200-sxm \
	h200_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv \
	h200_sxm_attention_trtllm_1.3.0rc20_context_attention_perf.csv \
	h200_sxm_attention_trtllm_1.3.0rc20_generation_attention_perf.csv \
	h200_sxm_comm_nccl_2.29.2_nccl_perf.csv \
	h200_sxm_comm_trtllm_1.3.0rc20_custom_allreduce_perf.csv
run b200 \
	b200_sxm_gemm_trtllm_1.3.0rc20_gemm_perf.csv \
	b200_sxm_attention_trtllm_1.3.0rc20_context_attention_perf.csv \
	b200_sxm_attention_trtllm_1.3.0rc20_generation_attention_perf.csv \
	b200_sxm_comm_nccl_2.29.2_nccl_perf.csv \
	b200_sxm_comm_trtllm_1.3.0rc20_custom_allreduce_perf.csv

kernels a100-sxm-80gb \
	a100_sxm_mla_trtllm_1.0.0_context_mla_perf.csv \
	a100_sxm_mla_trtllm_1.0.0_generation_mla_perf.csv \
	a100_sxm_moe_trtllm_1.0.0_moe_perf.csv
kernels h100-sxm \
	h100_sxm_mla_trtllm_1.3.0rc20_context_mla_perf.csv \
	h100_sxm_mla_trtllm_1.3.0rc20_generation_mla_perf.csv \
	h100_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv
kernels h200-sxm \
	h200_sxm_mla_trtllm_1.3.0rc20_context_mla_perf.csv \
	h200_sxm_mla_trtllm_1.3.0rc20_generation_mla_perf.csv \
	h200_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv
kernels b200 \
	b200_sxm_mla_trtllm_1.3.0rc20_context_mla_perf.csv \
	b200_sxm_mla_trtllm_1.3.0rc20_generation_mla_perf.csv \
	b200_sxm_moe_trtllm_1.3.0rc20_moe_perf.csv
