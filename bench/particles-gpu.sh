#!/usr/bin/env bash
# Runs on the GPU machine with what bench/particles-prep.sh left in this script's folder (and .gl/ at the
# checkout's root): unpacks Node and the Vulkan loader, samples the SM clock with nvidia-smi while
# bench/particles-gpu.ts runs, and leaves the JSON, the log, the clock samples and ptxas's and cuobjdump's view of
# the N-body kernel in $OUT. The environment passes through to bench/particles-gpu.ts: TSK_PARTICLES_SECTIONS and
# TSK_PARTICLES_BUILDS select sections and N-body rows (a short run), TSK_PARTICLES_SECONDS bounds the whole.
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
mkdir -p /tmp/node && xz -dc "$HERE/node.xz" > /tmp/node/node && chmod +x /tmp/node/node
export PATH=/tmp/node:$PATH
export TSKERNEL_CACHE_DIR=/tmp/tskernel-cache
xz -dc "$HERE/runner.tar.xz" | tar -C "$HERE" -xf -
{
  date -u +"%Y-%m-%d %H:%M:%S UTC"
  nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm,clocks.max.mem,power.limit --format=csv
  nvcc --version | tail -n 1
  node --version
} 2>&1 | tee "$OUT/particles-env.txt"
# ptxas's registers and spills and the SASS of the N-body kernels (every build of step, pulls and gather).
(cd /tmp && nvcc -arch=sm_90 -cubin -Xptxas -v -o nbody.cubin "$HERE/kernels/nbody.kernel.cu" > "$OUT/particles-ptxas.txt" 2>&1 \
  && cuobjdump -sass nbody.cubin > /tmp/nbody.sass && grep -oE '(FFMA|FMUL|FADD|MUFU\.[A-Z0-9]+|LDS[.0-9A-Z]*)' /tmp/nbody.sass | sort | uniq -c >> "$OUT/particles-ptxas.txt")
# Each build's tile loop per interaction (bench/particles-sass.py), where the machine has Python.
if command -v python3 >/dev/null; then python3 "$HERE/particles-sass.py" /tmp/nbody.sass "$OUT/particles-ptxas.txt" > "$OUT/particles-sass.txt" 2>&1; fi
# The SM clock every 50 ms while the bench runs (the N-body windows are in the JSON).
nvidia-smi --query-gpu=timestamp,clocks.sm,clocks.mem,power.draw,temperature.gpu,utilization.gpu --format=csv -lms 50 > "$OUT/particles-clocks.csv" 2>&1 &
SMI=$!
cd "$HERE" && timeout -k 5 "${TSK_PARTICLES_SECONDS:-300}" node particles-gpu.mjs kernels "$OUT/particles-gpu.json" 2>&1 | tee "$OUT/particles-gpu-log.txt"
echo "particles-gpu exit ${PIPESTATUS[0]}"
kill "$SMI" 2>/dev/null
