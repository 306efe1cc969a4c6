#!/usr/bin/env bash
# The GPU checks of the m16n8k16 warp shape in the language (issue 22 §1), in one command from the repository root:
# bench/mma16-loads-check.cu (every way of loading the fragments, bf16 and f16, against the bound of one mma) and
# bench/hgemm-mma-check.cu (examples/hgemm-mma.ts against a float64 GEMM, and its TFLOP/s). Both compile the
# goldens of the compiler's output with nvcc for sm_90. Success: both print PASS, and the script exits 0.
#   bash bench/mma16-gpu.sh [SEED]      (on the device tool: bash bench/mma16-gpu.sh > $OUT/mma16-gpu.txt 2>&1)
set -euo pipefail
cd "$(dirname "$0")/.."
out=$(mktemp -d)
nvcc -O2 -arch=sm_90 -o "$out/mma16-loads-check" bench/mma16-loads-check.cu
nvcc -O2 -arch=sm_90 -o "$out/hgemm-mma-check" bench/hgemm-mma-check.cu
nvidia-smi --query-gpu=name,clocks.sm,clocks.max.sm --format=csv,noheader || true
status=0
"$out/mma16-loads-check" "$@" || status=1
"$out/hgemm-mma-check" "$@" || status=1
exit $status
