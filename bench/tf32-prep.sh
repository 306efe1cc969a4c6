#!/usr/bin/env bash
# Prepares a TF32 GEMM run (issue 22 §4) for the GPU machine: the language's TF32 rungs built with nvcc
# (sm_90a) under the names bench/wgmma-probe.py reads, each with a JSON beside it (function, dynamic shared
# bytes, threads, persistent grid or not), plus the probe's scripts, into TSK_DEVICE_DIR (default .device-tf32,
# git-ignored). Builds: NAME:FILE[:DEFINE,DEFINE…[:persistent]] in TSK_TF32_BUILDS (default below); a
# persistent build is launched on one block a multiprocessor. Then, on the device tool:
# carry [".device-tf32"], command
#   python3 .device-tf32/wgmma-probe.py --cubins .device-tf32/cubins --out $OUT/tf32.json > $OUT/log.txt 2>&1
# (each build first runs alone at 1024³ in a child process, so one that hangs is left out, not the whole run).
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICE_DIR=${TSK_DEVICE_DIR:-.device-tf32}
# The default: the rung, and bench/tf32-feeding.ts's variants as measured on 2026-11-27 (bench/README.md, "Feeding
# TF32 wgmma"): persistent, A rounded in shared memory or through the producer's registers, and the two
# timing-only builds that take copies away. bench/tf32-feeding.ts's builds get a persistent grid.
BUILDS=${TSK_TF32_BUILDS:-"lang_ws:examples/sgemm-wgmma-ws.ts lang_cluster:examples/sgemm-wgmma-cluster.ts lang_p_r0:bench/tf32-feeding.ts:ROUND=0 lang_p_r1_l1:bench/tf32-feeding.ts:ROUND=1,LAG=1 lang_p_r1_l2:bench/tf32-feeding.ts:ROUND=1,LAG=2 lang_p_r2b:bench/tf32-feeding.ts:ROUND=2 lang_p_half:bench/tf32-feeding.ts:FEED=1 lang_p_noload:bench/tf32-feeding.ts:FEED=2"}
npm run build >/dev/null
rm -rf "$DEVICE_DIR" && mkdir -p "$DEVICE_DIR/cubins"
cp bench/wgmma-probe.py bench/torch-matmul.py bench/triton_matmul.py "$DEVICE_DIR/"
for build in $BUILDS; do
  IFS=: read -r name file defines mode <<<"$build"
  work=$(mktemp -d)
  args=()
  for d in ${defines//,/ }; do args+=(--define "$d"); done
  node bin/tskernel.js build "$file" --target cuda --out "$work" "${args[@]}" >/dev/null
  cu=$(ls "$work"/*.cu)
  nvcc -gencode=arch=compute_90a,code=sm_90a -cubin -O3 -Xptxas -v "$cu" -o "$DEVICE_DIR/cubins/$name.cubin" 2>"$work/ptxas.txt"
  grep -E "registers|spill|C75" "$work/ptxas.txt" | sed "s/^/$name: /"
  node -e '
const fs = require("node:fs");
const [dir, out, persistent] = process.argv.slice(1);
const k = JSON.parse(fs.readFileSync(`${dir}/manifest.json`, "utf8")).kernels[0];
// A kernel in clusters along x copies A in boxes of 256 / (cluster size) rows (examples/sgemm-wgmma-cluster.ts).
// A kernel that takes mapB copies B in 32×32 boxes (examples/sgemm-wgmma-cluster.ts).
const mapB = k.params.some((p) => p.name === "mapB");
// A kernel that takes flags rounds A once into the scratch Ar after the maps (examples/sgemm-wgmma-rounded.ts, in git history).
const roundsA = k.params.some((p) => p.name === "flags");
fs.writeFileSync(out, JSON.stringify({ function: k.entryName, shared: k.sharedBytes, threads: 384, persistent: persistent === "1", boxRows: 256 / (k.cluster ? k.cluster[0] : 1), mapB, roundsA, ...(roundsA ? { claims: k.specialization.CLAIMS } : {}) }) + "\n");
' "$work" "$DEVICE_DIR/cubins/$name.json" "$([[ $file == *tf32-feeding* || $mode == persistent ]] && echo 1 || echo 0)"
  rm -rf "$work"
done
du -sh "$DEVICE_DIR"
