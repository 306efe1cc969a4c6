#!/usr/bin/env bash
# Prepares the tensor-core run of issue 22 for the GPU machine (bench/gpu-tensor.sh): everything there is
# Python (PyTorch), so no Node travels. Into TSK_DEVICE_DIR (default .device-tensor, git-ignored):
#   kernels-cubin/      the files the package builds for itself (runtime/package-kernels.ts: the matmul rungs and
#                       the attention kernels) for CUDA with nvcc cubins (sm_90; sm_90a where wgmma), and the
#                       {head dim: [function, dynamic shared bytes]} tables bench/torch-attention.py reads; also
#                       the forward variants below (not in the package) and their tables, forward-NAME.json
#   torch-plan.json     bench/torch-matmul.py's launch plan over them (what matmul() picks per shape and type)
#   torch-matmul.py, torch-attention.py, gpu-tensor.sh
# Then, on the device tool: carry [".device-tensor"], command
#   TSK_DEVICE_DIR=.device-tensor bash .device-tensor/gpu-tensor.sh > $OUT/log.txt 2>&1
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICE_DIR=${TSK_DEVICE_DIR:-.device-tensor}
npm run build >/dev/null
FILES=$(node --input-type=module -e "const { packageKernelFiles } = await import('./dist/runtime/package-kernels.js'); console.log(packageKernelFiles.join(' '));")
# Forward variants measured beside the package's forward (bench/torch-attention.py --variant): name, kernel, file,
# and which of the kernel's builds (a number of consumers: fold's builds of 2 and of 3 are two variants; fold3 has
# D 64 only). Each table entry is [function, dynamic shared bytes, query rows a block, threads].
VARIANTS="regp:flashAttentionRegP:examples/flash-attention-regp.ts:2 fold:flashAttentionFold:examples/flash-attention-fold.ts:2 fold3:flashAttentionFold:examples/flash-attention-fold.ts:3 pingpong:flashAttentionPingPong:examples/flash-attention-pingpong.ts:2 overlap:flashAttentionOverlap:examples/flash-attention-overlap.ts:2"
for variant in $VARIANTS; do file=${variant%:*}; file=${file##*:}; case " $FILES " in *" $file "*) ;; *) FILES="$FILES $file" ;; esac; done
# The shared-P forward (examples/flash-attention.ts) is the "tskernel flash-attention" row every variant is read
# against; the package ships attention()'s (fold), timed as a variant like the others.
FILES="$FILES examples/flash-attention.ts"
rm -rf "$DEVICE_DIR" && mkdir -p "$DEVICE_DIR"
# shellcheck disable=SC2086
node bin/tskernel.js build $FILES --target cuda,js --cubin --arch sm_90 --out "$DEVICE_DIR/kernels-cubin" >/dev/null
node dist/bench/torch-matmul-plan.js --kernels "$DEVICE_DIR/kernels-cubin" --out "$DEVICE_DIR/torch-plan.json" >/dev/null
# The functions tables: each specialization's entry name and dynamic shared bytes, by head dim.
node -e '
const fs = require("node:fs");
const dir = process.argv[1];
const manifest = JSON.parse(fs.readFileSync(`${dir}/manifest.json`, "utf8"));
const forward = {}, backward = {};
const roles = { flashAttentionBackwardPre: "pre", flashAttentionBackwardKV: "kv", flashAttentionBackwardQ: "q" };
for (const k of manifest.kernels) {
  const d = String(k.specialization.D);
  if (k.name === "flashAttention") forward[d] = [k.entryName, k.sharedBytes];
  else if (roles[k.name]) (backward[d] ??= {})[roles[k.name]] = [k.entryName, k.sharedBytes];
}
for (const [d, entries] of Object.entries(backward)) if (Object.keys(entries).length !== 3) throw new Error(`head dim ${d}: backward kernels ${Object.keys(entries)}`);
if (!forward["64"] || !forward["128"]) throw new Error("the forward lacks a head dim");
fs.writeFileSync(`${dir}/forward.json`, JSON.stringify(forward, null, 1));
fs.writeFileSync(`${dir}/backward.json`, JSON.stringify(backward, null, 1));
for (const variant of process.argv[2].split(" ").filter(Boolean)) {
  const [name, kernel, file, consumers] = variant.split(":");
  const table = { cubin: file.replace(/^examples\//, "").replace(/\.ts$/, ".sm_90.cubin") };
  for (const k of manifest.kernels) {
    if (k.name !== kernel || (k.specialization.CONSUMERS ?? 2) !== Number(consumers)) continue;
    table[String(k.specialization.D)] = [k.entryName, k.sharedBytes, 64 * Number(consumers), 128 * (Number(consumers) + 1)];
  }
  if (!table["64"] || (consumers === "2" && !table["128"])) throw new Error(`variant ${name}: ${kernel} lacks a head dim`);
  fs.writeFileSync(`${dir}/forward-${name}.json`, JSON.stringify(table, null, 1));
}
' "$DEVICE_DIR/kernels-cubin" "$VARIANTS"
cp bench/torch-matmul.py bench/torch-attention.py bench/gpu-tensor.sh "$DEVICE_DIR/"
du -sh "$DEVICE_DIR"
