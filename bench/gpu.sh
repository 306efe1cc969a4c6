#!/usr/bin/env bash
# Runs on the GPU machine (bare, CUDA 13, no Node) with what bench/gpu-prep.sh put in .device/ (or the folder
# named by TSK_DEVICE_DIR) and .gl/: unpacks Node and the Vulkan loader, then runs the whole GPU part
# (bench/gpu-run.ts) and leaves its results in $OUT. Prints the GPU, driver and toolkit first so the record
# says where it ran. `--only kernels` runs the memory-bound suite instead: the plan, PyTorch beside our cubins
# (torch-reference.py), `bench kernels` on CUDA and WebGPU, `tune kernels` on CUDA, then Nsight Compute on
# one launch of each of our kernels and of PyTorch's. `--only launch` runs the launch benchmark (gpu-prep.sh --launch).
set -uo pipefail
cd "$(dirname "$0")/.."
ROOT=$PWD
DEVICE_DIR=${TSK_DEVICE_DIR:-.device}
for f in .gl/*.deb; do dpkg -x "$f" /; done
ldconfig
# Node: the device folder's own copy, else the shared one.
NODE_XZ=$DEVICE_DIR/node.xz
[ -f "$NODE_XZ" ] || NODE_XZ=.device-shared/node.xz
mkdir -p /tmp/node && xz -dc "$NODE_XZ" > /tmp/node/node && chmod +x /tmp/node/node
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
if [ -f "$DEVICE_DIR/runner.tar.xz" ]; then xz -dc "$DEVICE_DIR/runner.tar.xz" | tar -C "$DEVICE_DIR" -xf -; fi

if [ "$*" = "--only kernels" ]; then
  cd "$DEVICE_DIR"
  nvidia-smi --query-gpu=clocks.sm,clocks.mem,clocks.max.sm,temperature.gpu,power.draw --format=csv
  python3 -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda)'
  stage() { date -u +"%H:%M:%S $*"; }
  stage "== plan"
  # TSK_KERNEL_CASES: the suite's cases to run (comma-separated ids; default all; TSK_NODE_CASES, when set, for the Node bench alone); TSK_NCU_SECONDS=0 skips ncu.
  node gpu-run.mjs --cubin-kernels kernels-cubin --out "$OUT" --only kernels-plan --cases "${TSK_KERNEL_CASES:-all}"
  stage "== PyTorch beside our cubins (torch-reference.py)"
  # TSK_TORCH_ARGS: more options for torch-reference.py (--solo: ours also timed alone, and a copy of each case's bytes).
  PYTHONUNBUFFERED=1 timeout -k 5 "${TSK_TORCH_SECONDS:-90}" python3 torch-reference.py --plan "$OUT/kernels-plan.json" --out "$OUT/torch.json" ${TSK_TORCH_ARGS:-}
  echo "torch-reference exit $?"
  if command -v ncu >/dev/null && [ "${TSK_NCU_SECONDS:-100}" != 0 ]; then
    stage "== ncu (Nsight Compute): one launch of each of our kernels and of PyTorch's, inside NVTX range 'profile'"
    timeout -k 5 "${TSK_NCU_SECONDS:-100}" ncu --nvtx --nvtx-include "profile/" --section SpeedOfLight --section Occupancy --section LaunchStats --metrics dram__bytes_read.sum,dram__bytes_write.sum \
      python3 torch-reference.py --plan "$OUT/kernels-plan.json" --profile > "$OUT/ncu-kernels.txt" 2>&1
    echo "ncu exit $?; report in ncu-kernels.txt"
  fi
  stage "== bench kernels and tune kernels (Node)"
  timeout -k 5 "${TSK_NODE_SECONDS:-400}" node gpu-run.mjs --kernels kernels --cubin-kernels kernels-cubin --out "$OUT" --only kernels \
    --torch "$OUT/torch.json" --root "$PWD" --tune-seconds "${TSK_TUNE_SECONDS:-120}" --tune-cases "${TSK_TUNE_CASES:-all}" \
    --cases "${TSK_NODE_CASES:-${TSK_KERNEL_CASES:-all}}"
  echo "gpu-run exit $?"
  stage "done"
  exit 0
fi

# Launch throughput (bench/gpu-launch.ts): PyTorch's per-op overhead first, then the checks of asynchronous
# launches and `tskernel bench launch` on CUDA and Dawn, then a fault in a process of its own.
if [ "$*" = "--only launch" ]; then
  cd "$DEVICE_DIR"
  python3 -c 'import torch; print("PyTorch", torch.__version__, "CUDA", torch.version.cuda)'
  PYTHONUNBUFFERED=1 timeout -k 5 120 python3 torch-launch.py --out "$OUT/torch-launch.json"
  echo "torch-launch exit $?"
  # The CUDA runtime's own launch cost, the floor (bench/launch-probe.cu, built by gpu-prep.sh --launch).
  if [ -x launch-probe ]; then timeout -k 5 60 ./launch-probe > "$OUT/launch-probe.json"; echo "launch-probe exit $?"; cat "$OUT/launch-probe.json"; fi
  timeout -k 5 "${TSK_NODE_SECONDS:-300}" node gpu-run.mjs --kernels kernels --out "$OUT" --only launch --torch "$OUT/torch-launch.json"
  echo "gpu-run launch exit $?"
  timeout -k 5 60 node gpu-run.mjs --kernels kernels --out "$OUT" --only launch-fault
  echo "gpu-run launch-fault exit $?"
  exit 0
fi

# The torch.mm comparison: our cubins launched in a PyTorch process on its tensors, timed interleaved with
# torch.mm (bench/torch-matmul.py). `--only torch-matmul` runs it alone, with Nsight Compute on what matmul()
# and torch.mm run for each shape.
if [ -f "$DEVICE_DIR/torch-plan.json" ] && { [ -z "$*" ] || [ "$*" = "--only cuda" ] || [ "$*" = "--only torch-matmul" ]; }; then
  echo "== torch-matmul (bench/torch-matmul.py)"
  python3 -c "import torch; print('PyTorch', torch.__version__, 'CUDA', torch.version.cuda)"
  PYTHONUNBUFFERED=1 python3 "$DEVICE_DIR"/torch-matmul.py --plan "$DEVICE_DIR"/torch-plan.json --out "$OUT/torch-matmul.json" 2>&1 | tee "$OUT/torch-matmul.log"
  if [ "$*" = "--only torch-matmul" ]; then
    if command -v ncu >/dev/null; then
      ncu --profile-from-start off --section SpeedOfLight --section Occupancy --section LaunchStats --section WarpStateStats \
        python3 "$DEVICE_DIR"/torch-matmul.py --plan "$DEVICE_DIR"/torch-plan.json --profile --only NONE > "$OUT/ncu-torch-matmul.txt" 2>&1
      echo "ncu exit $?; report in ncu-torch-matmul.txt"
      grep -E "^  [A-Za-z_0-9]+.*\(|Duration|Compute \(SM\) Throughput|Registers Per Thread  " "$OUT/ncu-torch-matmul.txt" | head -60
    fi
    exit 0
  fi
fi
if [ -x "$DEVICE_DIR/nvcc-app" ] && [ "$*" != "--only webgpu" ]; then
  echo "== nvcc-app (examples/nvcc-app, built with nvcc for sm_90)"
  { "$DEVICE_DIR/nvcc-app"; echo "exit $?"; "$DEVICE_DIR/nvcc-app" 1000 1000 1000; echo "exit $?"; } 2>&1 | tee "$OUT/nvcc-app.txt"
fi
if [ -x "$DEVICE_DIR/cmake-app" ] && [ "$*" != "--only webgpu" ]; then
  echo "== cmake-app (examples/cmake-app, built with CMake for architecture 90)"
  { "$DEVICE_DIR/cmake-app"; echo "exit $?"; "$DEVICE_DIR/cmake-app" 1000 1000 1000; echo "exit $?"; } 2>&1 | tee "$OUT/cmake-app.txt"
fi
# The differential fuzzer's CUDA leg alone: random programs on CUDA against the CPU and the reference.
# TSK_FUZZ_SECONDS bounds its time (the device tool stops a call at 600 s).
if [ "$*" = "--only fuzz-cuda" ]; then
  cd "$DEVICE_DIR" && node fuzz-cuda.mjs --out "$OUT" --seconds "${TSK_FUZZ_SECONDS:-1500}" 2>&1 | tee "$OUT/fuzz-cuda.log"
  exit "${PIPESTATUS[0]}"
fi
# Both fuzzers at once, spread over the machine's cores: the differential CUDA leg in TSK_FUZZ_CUDA_JOBS
# processes (seeds 1, 2, …; TSK_FUZZ_CUDA_COUNT programs each) and the robustness fuzzer in TSK_FUZZ_JOBS
# processes (seeds 20261201, 20261202, …; nvcc and Dawn check samples of the accepted outputs; the CLI sample
# is left to the runs on the CI machine, since the checkout here has no dist/). Each writes its own summary
# under $OUT; each stops after TSK_FUZZ_SECONDS.
if [ "$*" = "--only fuzz" ]; then
  cd "$DEVICE_DIR"
  seconds=${TSK_FUZZ_SECONDS:-480}
  pids=()
  # Failing inputs go to a scratch folder and come back as one archive: the device tool returns a limited
  # number of files.
  scratch=/tmp/fuzz-out && mkdir -p "$scratch"
  for s in $(seq 1 "${TSK_FUZZ_CUDA_JOBS:-4}"); do
    node fuzz-cuda.mjs --out "$scratch/fuzz-cuda-seed$s" --seed "$s" --count "${TSK_FUZZ_CUDA_COUNT:-700}" --seconds "$seconds" > "$OUT/fuzz-cuda-seed$s.log" 2>&1 &
    pids+=($!)
  done
  for j in $(seq 1 "${TSK_FUZZ_JOBS:-10}"); do
    seed=$((20261200 + j))
    node fuzz.mjs --seed "$seed" --seconds "$seconds" --cli-rate 0 --out "$scratch/fuzz-robustness-seed$seed" \
      --json "$OUT/fuzz-robustness-seed$seed.json" > "$OUT/fuzz-robustness-seed$seed.log" 2>&1 &
    pids+=($!)
  done
  status=0
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  for d in "$scratch"/fuzz-cuda-seed*; do cp "$d/fuzz-cuda.json" "$OUT/$(basename "$d").json" 2>/dev/null; done
  tar -C "$scratch" -czf "$OUT/fuzz-failures.tar.gz" .
  tail -n 3 "$OUT"/fuzz-*.log
  exit "$status"
fi
cd "$DEVICE_DIR" && node gpu-run.mjs --kernels kernels --out "$OUT" --torch-matmul "$OUT/torch-matmul.json" "$@" 2>&1 | tee "$OUT/gpu-run.log"

# Nsight Compute on what matmul() runs at 4096³ and 1000³ and on cuBLAS at 4096³ (speed of light, occupancy,
# launch statistics), when the machine has ncu and the full run was asked for.
if command -v ncu >/dev/null && [ -z "$*" ]; then
  echo "== ncu (Nsight Compute)"
  (cd "$ROOT/$DEVICE_DIR" && ncu --target-processes all --section SpeedOfLight --section Occupancy --section LaunchStats \
    node gpu-run.mjs --kernels kernels --out "$OUT/profile" --only profile) > "$OUT/ncu.txt" 2>&1
  echo "ncu exit $?; report in ncu.txt"
  grep -E "^  [A-Za-z_0-9]+.*\(|SM Throughput|Memory Throughput|Achieved Occupancy|Registers Per Thread|Duration|Compute \(SM\) Throughput" "$OUT/ncu.txt" | head -60
fi
