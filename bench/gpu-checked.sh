#!/usr/bin/env bash
# Checked GPU builds on the GPU machine (issue 24 §1), in one call: what `bash bench/gpu-prep.sh --checked`
# put in the device folder (TSK_DEVICE_DIR, default .device-checked) and .gl/, run as
#   TSK_DEVICE_DIR=.device-checked bash .device-checked/gpu-checked.sh > $OUT/log.txt 2>&1
# Unpacks Node and the Vulkan loader, then runs bench/gpu-checked.ts on CUDA and on WebGPU (Dawn): the seeded
# bugs, the examples' checked builds (0 reports expected) and the cost of checking (plain and checked builds
# in alternate rounds). Leaves checked-h100.json, the environment and the script's own log in $OUT; the whole
# run has a time limit (TSK_CHECKED_SECONDS, default 220 s) so that it ends within 4 minutes.
# TSK_CHECKED_ARGS passes options to gpu-checked.ts, for a shorter run of some of it: e.g.
#   TSK_CHECKED_ARGS="--backends webgpu --cases blur-rgba8,blur-rgba8-wave,saxpy --rungs none"
# (one backend, those cases of the suite, no matmul rung; the corpus and the atomics and subgroup examples run).
set -uo pipefail
HERE=$(cd "$(dirname "$0")" && pwd)
cd "$HERE/.."
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd"; break; fi
done
export __EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json}
NODE_XZ=$HERE/node.xz
[ -f "$NODE_XZ" ] || NODE_XZ=.device-shared/node.xz
mkdir -p /tmp/node && xz -dc "$NODE_XZ" > /tmp/node/node && chmod +x /tmp/node/node
export PATH=/tmp/node:$PATH
export TSKERNEL_CACHE_DIR=/tmp/tskernel-cache
xz -dc "$HERE/runner.tar.xz" | tar -C "$HERE" -xf -
{
  date -u +"%Y-%m-%d %H:%M:%S UTC"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  nvcc --version | tail -n 1
  node --version
} 2>&1 | tee "$OUT/checked-env.txt"
cd "$HERE" && timeout -k 5 "${TSK_CHECKED_SECONDS:-220}" node gpu-checked.mjs --dir "$HERE" --out "$OUT/checked-h100.json" ${TSK_CHECKED_ARGS:-} 2>&1 | tee "$OUT/checked-h100-log.txt"
echo "gpu-checked exit ${PIPESTATUS[0]}"
