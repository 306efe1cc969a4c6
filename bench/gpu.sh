#!/usr/bin/env bash
# Runs on the GPU machine (bare, CUDA 13, no Node) with what bench/gpu-prep.sh put in .device/ and .gl/:
# unpacks Node and the Vulkan loader, then runs the whole GPU part (bench/gpu-run.ts) and leaves its
# results in $OUT. Prints the GPU, driver and toolkit first so the record says where it ran.
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
mkdir -p /tmp/node && xz -dc .device/node.xz > /tmp/node/node && chmod +x /tmp/node/node
export PATH=/tmp/node:$PATH
# The NVIDIA Vulkan driver's manifest, where the image keeps it.
for icd in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
  if [ -f "$icd" ]; then export VK_DRIVER_FILES="$icd"; break; fi
done
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
nvcc --version | tail -n 1
node --version
export TSKERNEL_CACHE_DIR=/tmp/tskernel-cache
OUT=${OUT:-/tmp/out}
mkdir -p "$OUT"
export __EGL_VENDOR_LIBRARY_FILENAMES=${__EGL_VENDOR_LIBRARY_FILENAMES:-/usr/local/nvidia/share/glvnd/egl_vendor.d/10_nvidia.json}
if [ -x .device/nvcc-app ] && [ "$*" != "--only webgpu" ]; then
  echo "== nvcc-app (examples/nvcc-app, built with nvcc for sm_90)"
  { .device/nvcc-app; echo "exit $?"; .device/nvcc-app 1000 1000 1000; echo "exit $?"; } 2>&1 | tee "$OUT/nvcc-app.txt"
fi
if [ -f .device/runner.tar.xz ]; then xz -dc .device/runner.tar.xz | tar -C .device -xf -; fi
cd .device && node gpu-run.mjs --kernels kernels --out "$OUT" "$@" 2>&1 | tee "$OUT/gpu-run.log"

# Nsight Compute on what matmul() runs at 4096³ and 1000³ and on cuBLAS at 4096³ (speed of light, occupancy,
# launch statistics), when the machine has ncu and the full run was asked for.
if command -v ncu >/dev/null && [ -z "$*" ]; then
  echo "== ncu (Nsight Compute)"
  (cd "$ROOT/.device" && ncu --target-processes all --section SpeedOfLight --section Occupancy --section LaunchStats \
    node gpu-run.mjs --kernels kernels --out "$OUT/profile" --only profile) > "$OUT/ncu.txt" 2>&1
  echo "ncu exit $?; report in ncu.txt"
  grep -E "^  [A-Za-z_0-9]+.*\(|SM Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread|Duration|Compute \(SM\) Throughput" "$OUT/ncu.txt" | head -60
fi
