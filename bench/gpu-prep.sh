#!/usr/bin/env bash
# Prepares what the GPU machine needs, here (it has no Node and no network): the example kernels built for
# CUDA, WGSL and JS, the GPU runner bundled into one file (with the compiler, for the tuner), Node itself,
# koffi and Dawn's native module, and the Vulkan loader packages. Everything goes to .device/ (or the folder
# TSK_DEVICE_DIR names) and .gl/ (TSK_GL_DIR), both git-ignored; name both in the device tool's `carry`, then
# run `bash bench/gpu.sh` there (with TSK_DEVICE_DIR set the same way).
# `bash bench/gpu-prep.sh --kernels` prepares the memory-bound suite's run (`bash gpu.sh --only kernels`)
# instead: the suite's kernels only, PyTorch's script, and gpu.sh, the examples, the language declarations
# and package.json beside the runner (so that its tuner compiles these sources, whatever tree it runs in).
# `bash bench/gpu-prep.sh --launch` prepares the launch benchmark's run (`bash gpu.sh --only launch`): its
# kernels for CUDA (NVRTC there), WGSL and JS, bench/torch-launch.py and gpu.sh beside the runner.
# `TSK_DEVICE_DIR=.device-checked bash bench/gpu-prep.sh --checked` prepares the checked builds' run
# (bench/gpu-checked.sh): the memory-bound suite's, the matmul rungs' and the atomics and subgroup examples'
# files built plain and checked (cubins for sm_90, WGSL, JS), the seeded bugs of tests/checked/corpus.ts built
# checked, and bench/gpu-checked.ts bundled.
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICE_DIR=${TSK_DEVICE_DIR:-.device}
GL_DIR=${TSK_GL_DIR:-.gl}
KERNELS_ONLY=$([ "${1:-}" = "--kernels" ] && echo 1 || echo 0)
LAUNCH_ONLY=$([ "${1:-}" = "--launch" ] && echo 1 || echo 0)
CHECKED_ONLY=$([ "${1:-}" = "--checked" ] && echo 1 || echo 0)
# The launch benchmark's files (cli/bench/launch.ts, launchBenchFiles).
LAUNCH="examples/elementwise.ts examples/elementwise-vec4.ts examples/layer-norm.ts examples/softmax.ts examples/transpose-vec4.ts examples/transpose-aligned.ts examples/transpose.ts examples/sum-vec4.ts examples/sgemm-warptiling.ts"
SUITE="examples/elementwise-vec4.ts examples/transpose-vec4.ts examples/transpose-aligned.ts examples/sum-vec4.ts examples/sum-vec4-subgroups.ts examples/softmax.ts examples/softmax-vec4-subgroups.ts examples/layer-norm.ts examples/layer-norm-subgroups.ts examples/scan.ts examples/scan-lookback.ts examples/scan-lookback-subgroups.ts examples/histogram-vec4.ts examples/layer-norm-bf16.ts examples/rms-norm-bf16.ts examples/softmax-bf16.ts examples/elementwise-bf16.ts examples/blur-rgba8.ts examples/copy-vec4.ts"
# The WGSL builds skip the kernels whose `targets` leave out wgsl (those that call threadFence() or use matrix
# operations, which WebGPU lacks): the manifest lists them, built for CUDA and JS.

npm run build >/dev/null
rm -rf "$DEVICE_DIR" && mkdir -p "$DEVICE_DIR/node_modules/@koromix" "$DEVICE_DIR/node_modules/webgpu/dist"
BANNER="import { createRequire as __tskCreateRequire } from 'node:module'; import { fileURLToPath as __tskPath } from 'node:url'; const require = __tskCreateRequire(import.meta.url); const __filename = __tskPath(import.meta.url); const __dirname = __tskPath(new URL('.', import.meta.url));"
if [ "$CHECKED_ONLY" = 1 ]; then
  # The files of the suite's cases, of the matmul rungs and of the atomics and subgroup examples (bench/gpu-checked.ts).
  # TSK_CHECKED_FILES (a list of kernel files) builds only those, for a run of some cases (--parts cost --cases …).
  CHECKED_FILES=${TSK_CHECKED_FILES:-}
  [ -n "$CHECKED_FILES" ] || CHECKED_FILES=$(node --input-type=module -e "
    const { suiteFiles } = await import('./dist/cli/kernels-bench/cases.js');
    const { variantFiles } = await import('./dist/cli/demo/variants.js');
    const { collectiveExampleFiles } = await import('./dist/cli/demo/collective-examples.js');
    console.log([...new Set([...suiteFiles, ...variantFiles, ...collectiveExampleFiles])].join(' '));")
  # Both builds at once (nvcc's progress lines go to a log each, shown where a build fails).
  LOGS=$(mktemp -d)
  node bin/tskernel.js build $CHECKED_FILES --target cuda,wgsl,js --cubin --arch sm_90 --out "$DEVICE_DIR/kernels" > "$LOGS/plain.log" 2>&1 &
  plain=$!
  node bin/tskernel.js build $CHECKED_FILES --target cuda,wgsl,js --cubin --arch sm_90 --checked --out "$DEVICE_DIR/kernels-checked" > "$LOGS/checked.log" 2>&1 &
  checked=$!
  wait $plain || { cat "$LOGS/plain.log"; exit 1; }
  wait $checked || { cat "$LOGS/checked.log"; exit 1; }
  node bin/tskernel.js build tests/checked/corpus.ts --target cuda,wgsl,js --cubin --arch sm_90 --checked --out "$DEVICE_DIR/kernels-corpus" > "$LOGS/corpus.log" 2>&1 || { cat "$LOGS/corpus.log"; exit 1; }
  # The CPU's checked mode (the corpus's reference reports) compiles the corpus there: its source and the package's declarations.
  mkdir -p "$DEVICE_DIR/tests/checked" "$DEVICE_DIR/compiler/lang"
  cp tests/checked/corpus.ts "$DEVICE_DIR/tests/checked/"
  cp compiler/lang/*.ts "$DEVICE_DIR/compiler/lang/"
  rm -f "$DEVICE_DIR"/compiler/lang/*.test.ts
  cp package.json bench/gpu-checked.sh "$DEVICE_DIR/"
  npx esbuild bench/gpu-checked.ts --bundle --platform=node --format=esm --target=node20 \
    --external:koffi --external:webgpu --outfile="$DEVICE_DIR/gpu-checked.mjs" --log-level=warning --banner:js="$BANNER"
elif [ "$LAUNCH_ONLY" = 1 ]; then
  node bin/tskernel.js build $LAUNCH --target cuda,wgsl,js --out "$DEVICE_DIR/kernels"
  cp bench/torch-launch.py "$DEVICE_DIR/"
  cp bench/gpu.sh "$DEVICE_DIR/gpu.sh"
  nvcc -O2 -arch=sm_90 -o "$DEVICE_DIR/launch-probe" bench/launch-probe.cu
elif [ "$KERNELS_ONLY" = 1 ]; then
  node bin/tskernel.js build $SUITE --target wgsl,js --out "$DEVICE_DIR/kernels"
  node bin/tskernel.js build $SUITE --target cuda,js --cubin --arch sm_90 --out "$DEVICE_DIR/kernels-cubin"
  mkdir -p "$DEVICE_DIR/examples" "$DEVICE_DIR/compiler/lang"
  cp examples/*.ts "$DEVICE_DIR/examples/"
  cp compiler/lang/index.ts compiler/lang/vectors.ts compiler/lang/float16.ts compiler/lang/manifest.ts "$DEVICE_DIR/compiler/lang/"
  cp package.json bench/torch-reference.py bench/triton_kernels.py "$DEVICE_DIR/"
  cp bench/gpu.sh "$DEVICE_DIR/gpu.sh"
  # The half-precision bit checks (bench/types-gpu.ts) and the bf16 run's script (bench/gpu-bf16.sh).
  node bin/tskernel.js build codegen-tests/{half-conversions,half-precision,double-precision,narrow-integers,vector-narrow,element-type-specialization}/kernel.ts --target cuda,js --out "$DEVICE_DIR/kernels-types" >/dev/null
  cp bench/gpu-bf16.sh "$DEVICE_DIR/"
  # The f16 builds of the same row kernels (copies with their `T: "bf16"` specializations made `T: "f16"`:
  # cli/kernels-bench/f16-sources.ts, as tests/half-row-kernels.test.ts builds them) and torch-reference.py's
  # plan over them (cases-bf16.ts, f16Cases), which gpu-bf16.sh runs after the suite.
  F16_SOURCES=$(mktemp -d)
  node --input-type=module -e "const { writeF16Sources } = await import('./dist/cli/kernels-bench/f16-sources.js'); writeF16Sources('examples', '$F16_SOURCES');"
  node bin/tskernel.js build "$F16_SOURCES"/*.ts --target cuda --cubin --arch sm_90 --out "$DEVICE_DIR/kernels-cubin-f16" >/dev/null
  node --input-type=module -e "
    const { loadKernelLibrary } = await import('./dist/runtime/index.js');
    const { makePlan, writePlan } = await import('./dist/cli/kernels-bench/torch.js');
    const { f16Cases } = await import('./dist/cli/kernels-bench/cases-bf16.js');
    writePlan('$DEVICE_DIR/kernels-plan-f16.json', makePlan(loadKernelLibrary('$DEVICE_DIR/kernels-cubin-f16'), 'kernels-cubin-f16', { cases: f16Cases() }));"
else
  node bin/tskernel.js build examples/*.ts --target cuda,wgsl,js --out "$DEVICE_DIR/kernels"
  # The same kernels with build-time cubins (nvcc here), to check the no-NVRTC path there.
  node bin/tskernel.js build examples/*.ts --target cuda,js --cubin --arch sm_90 --out "$DEVICE_DIR/kernels-cubin"
  # The torch.mm comparison (bench/torch-matmul.py, run by PyTorch there): its launch plan over those cubins,
  # made here from the rung table (what matmul() picks on an H100, and the other builds of the fast rungs).
  node dist/bench/torch-matmul-plan.js --kernels "$DEVICE_DIR/kernels-cubin" --out "$DEVICE_DIR/torch-plan.json" >/dev/null
  cp bench/torch-matmul.py "$DEVICE_DIR/"
  # `gpu.sh --only kernels` runs the kernel tuner, which compiles the examples' sources there.
  mkdir -p "$DEVICE_DIR/examples" "$DEVICE_DIR/compiler/lang"
  cp examples/*.ts "$DEVICE_DIR/examples/"
  cp compiler/lang/index.ts compiler/lang/vectors.ts compiler/lang/float16.ts compiler/lang/manifest.ts "$DEVICE_DIR/compiler/lang/"
  cp package.json bench/torch-reference.py "$DEVICE_DIR/"
fi
if [ "$CHECKED_ONLY" = 0 ]; then
# The tuning step compiles in-process, so the bundle carries the compiler (ts-morph and TypeScript, which are
# CommonJS and expect require, __filename and __dirname: the banner gives an ES module all three).
npx esbuild bench/gpu-run.ts --bundle --platform=node --format=esm --target=node20 \
  --external:koffi --external:webgpu --outfile="$DEVICE_DIR/gpu-run.mjs" --log-level=warning \
  --banner:js="import { createRequire as __tskCreateRequire } from 'node:module'; import { fileURLToPath as __tskPath } from 'node:url'; const require = __tskCreateRequire(import.meta.url); const __filename = __tskPath(import.meta.url); const __dirname = __tskPath(new URL('.', import.meta.url));"
# The differential fuzzer's CUDA leg (bench/fuzz-cuda.ts; `gpu.sh --only fuzz-cuda`): it compiles the programs it
# generates, so it carries the compiler too.
npx esbuild bench/fuzz-cuda.ts --bundle --platform=node --format=esm --target=node20 \
  --external:koffi --external:webgpu --outfile="$DEVICE_DIR/fuzz-cuda.mjs" --log-level=warning \
  --banner:js="import { createRequire as __tskCreateRequire } from 'node:module'; import { fileURLToPath as __tskPath } from 'node:url'; const require = __tskCreateRequire(import.meta.url); const __filename = __tskPath(import.meta.url); const __dirname = __tskPath(new URL('.', import.meta.url));"
# The half types' bit checks on CUDA against the CPU (bench/types-gpu.ts), run by gpu-bf16.sh.
npx esbuild bench/types-gpu.ts --bundle --platform=node --format=esm --target=node20 \
  --external:koffi --external:webgpu --outfile="$DEVICE_DIR/types-gpu.mjs" --log-level=warning \
  --banner:js="import { createRequire as __tskCreateRequire } from 'node:module'; import { fileURLToPath as __tskPath } from 'node:url'; const require = __tskCreateRequire(import.meta.url); const __filename = __tskPath(import.meta.url); const __dirname = __tskPath(new URL('.', import.meta.url));"
# The robustness fuzzer (tests/fuzz/run.ts; `gpu.sh --only fuzz` runs many seeds at once on that machine's
# cores). It judges each input in a child process of itself and reads its corpus (examples, codegen-tests,
# regressions) from the package root, which there is the shipped checkout around this folder.
npx esbuild tests/fuzz/run.ts --bundle --platform=node --format=esm --target=node20 \
  --external:koffi --external:webgpu --outfile="$DEVICE_DIR/fuzz.mjs" --log-level=warning \
  --banner:js="import { createRequire as __tskCreateRequire } from 'node:module'; import { fileURLToPath as __tskPath } from 'node:url'; const require = __tskCreateRequire(import.meta.url); const __filename = __tskPath(import.meta.url); const __dirname = __tskPath(new URL('.', import.meta.url));"
fi
if [ "$KERNELS_ONLY" = 0 ] && [ "$LAUNCH_ONLY" = 0 ] && [ "$CHECKED_ONLY" = 0 ]; then
  # The nvcc toolchain path: the C++ example, built here for sm_90, run there.
  make -s -C examples/nvcc-app KERNELS="$PWD/$DEVICE_DIR/nvcc-app-build" BIN="$PWD/$DEVICE_DIR/nvcc-app" >/dev/null
  rm -rf "$DEVICE_DIR/nvcc-app-build"
  # The CMake path: examples/cmake-app configured and built here (CUDA architecture 90), its program run there.
  cmake -S examples/cmake-app -B "$DEVICE_DIR/cmake-app-build" -DCMAKE_CUDA_ARCHITECTURES=90 >/dev/null
  cmake --build "$DEVICE_DIR/cmake-app-build" >/dev/null
  cp "$DEVICE_DIR/cmake-app-build/cmake-app" "$DEVICE_DIR/cmake-app" && rm -rf "$DEVICE_DIR/cmake-app-build"
fi
cp -r node_modules/koffi "$DEVICE_DIR/node_modules/"
cp -r node_modules/@koromix/koffi-linux-x64 "$DEVICE_DIR/node_modules/@koromix/"
cp node_modules/webgpu/package.json node_modules/webgpu/index.js "$DEVICE_DIR/node_modules/webgpu/"
cp -r node_modules/webgpu/dist/linux-x64 "$DEVICE_DIR/node_modules/webgpu/dist/"
rm -rf "$DEVICE_DIR/node_modules/koffi/vendor" "$DEVICE_DIR/node_modules/koffi/doc"
# TSK_SHARED_NODE=1: the device gets Node from .device-shared/node.xz instead (gpu.sh looks there too).
if [ "${TSK_SHARED_NODE:-0}" != 1 ]; then xz -T2 -c "$(command -v node)" > "$DEVICE_DIR/node.xz"; fi

if [ ! -d "$GL_DIR" ]; then
  mkdir -p "$GL_DIR" /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update -qq
  # The Vulkan loader and the GL vendor-neutral libraries that NVIDIA's Vulkan ICD (libGLX_nvidia) needs.
  (cd "$GL_DIR" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null)
fi
# The device tool carries at most 64 MB: the runner (with the compiler inside) and the native modules travel
# as one xz archive, which gpu.sh unpacks.
BUNDLES="gpu-run.mjs fuzz-cuda.mjs fuzz.mjs types-gpu.mjs"
# The checked run's builds (53 MB, cubins mostly) travel in the archive too, to stay within the 64 MB.
[ "$CHECKED_ONLY" = 1 ] && BUNDLES="gpu-checked.mjs kernels kernels-checked kernels-corpus"
tar -C "$DEVICE_DIR" -cf - $BUNDLES node_modules | xz -T2 -6 > "$DEVICE_DIR/runner.tar.xz"
(cd "$DEVICE_DIR" && rm -rf $BUNDLES node_modules)
du -sh "$DEVICE_DIR" "$GL_DIR"
