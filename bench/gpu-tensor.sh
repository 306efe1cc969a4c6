#!/usr/bin/env bash
# The tensor-core run of issue 22 on the GPU machine, from what bench/tensor-prep.sh put in TSK_DEVICE_DIR:
# 1. bench/torch-matmul.py on the plan: every rung matmul() picks, FP32, TF32 and the 16-bit ones (bf16, f16),
#    against torch.mm in the same type, interleaved, checked against float64;
# 2. bench/torch-attention.py: our FlashAttention forward and backward beside F.scaled_dot_product_attention's
#    backends (cuDNN, flash, efficient) on the four shapes, bf16, checked against float64; the forward
#    variants that tensor-prep.sh built (kernels-cubin/forward-NAME.json: regp, P in registers; fold, also the scale folded into the exponentials; pingpong, also the consumers' multiplies in turns; overlap, each consumer's softmax behind its previous P·V) in the same rounds.
# Every stage has a time limit; the reports go to $OUT. TSK_SKIP_MATMUL=1 leaves out stage 1.
set -uo pipefail
DEVICE_DIR=${TSK_DEVICE_DIR:-.device-tensor}
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
cd "$DEVICE_DIR"
nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.sm,clocks.max.sm --format=csv,noheader
python3 -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda, "cuDNN", torch.backends.cudnn.version())'
stage() { date -u +"%H:%M:%S $*"; }
if [ -n "${TSK_SKIP_MATMUL:-}" ]; then
  stage "== torch-matmul skipped (TSK_SKIP_MATMUL)"
else
  stage "== torch-matmul"
  PYTHONUNBUFFERED=1 timeout -k 5 "${TSK_MATMUL_SECONDS:-240}" python3 torch-matmul.py --plan torch-plan.json --out "$OUT/torch-matmul.json" ${TSK_MATMUL_ARGS:-} > "$OUT/torch-matmul.log" 2>&1
  echo "torch-matmul exit $?"
  tail -n 40 "$OUT/torch-matmul.log"
fi
stage "== torch-attention (forward and backward)"
VARIANT_ARGS=()
for table in kernels-cubin/forward-*.json; do
  [ -e "$table" ] || continue
  name=${table#kernels-cubin/forward-}
  name=${name%.json}
  cubin=$(python3 -c 'import json, sys; print(json.load(open(sys.argv[1]))["cubin"])' "$table")
  VARIANT_ARGS+=(--variant "$name=kernels-cubin/$cubin:$table")
done
# shellcheck disable=SC2086
PYTHONUNBUFFERED=1 timeout -k 5 "${TSK_ATTENTION_SECONDS:-240}" python3 torch-attention.py --out "$OUT/torch-attention.json" \
  --cubin kernels-cubin/flash-attention.sm_90.cubin --functions kernels-cubin/forward.json \
  --backward-cubin kernels-cubin/flash-attention-backward.sm_90.cubin --backward-functions kernels-cubin/backward.json ${VARIANT_ARGS[@]+"${VARIANT_ARGS[@]}"} ${TSK_ATTENTION_ARGS:-} > "$OUT/torch-attention.log" 2>&1
echo "torch-attention exit $?"
tail -n 40 "$OUT/torch-attention.log"
stage "done"
