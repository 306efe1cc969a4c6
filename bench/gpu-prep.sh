#!/usr/bin/env bash
# Prepares what the GPU machine needs, here (it has no Node and no network): the example kernels built for
# CUDA, WGSL and JS, the GPU runner bundled into one file (with the compiler, for the tuner), Node itself,
# koffi and Dawn's native module, and the Vulkan loader packages. Everything goes to .device/ and .gl/ (both git-ignored);
# name both in the device tool's `carry`, then run `bash bench/gpu.sh` there.
set -euo pipefail
cd "$(dirname "$0")/.."

npm run build >/dev/null
rm -rf .device && mkdir -p .device/node_modules/@koromix .device/node_modules/webgpu/dist
node bin/tskernel.js build examples/*.ts --target cuda,wgsl,js --out .device/kernels
# The same kernels with build-time cubins (nvcc here), to check the no-NVRTC path there.
node bin/tskernel.js build examples/*.ts --target cuda,js --cubin --arch sm_90 --out .device/kernels-cubin
# The tuning step compiles in-process, so the bundle carries the compiler (ts-morph and TypeScript, which are
# CommonJS and expect require, __filename and __dirname: the banner gives an ES module all three).
npx esbuild bench/gpu-run.ts --bundle --platform=node --format=esm --target=node20 \
  --external:koffi --external:webgpu --outfile=.device/gpu-run.mjs --log-level=warning \
  --banner:js="import { createRequire as __tskCreateRequire } from 'node:module'; import { fileURLToPath as __tskPath } from 'node:url'; const require = __tskCreateRequire(import.meta.url); const __filename = __tskPath(import.meta.url); const __dirname = __tskPath(new URL('.', import.meta.url));"
# The nvcc toolchain path: the C++ example, built here for sm_90, run there.
make -s -C examples/nvcc-app KERNELS="$PWD/.device/nvcc-app-build" BIN="$PWD/.device/nvcc-app" >/dev/null
rm -rf .device/nvcc-app-build
cp -r node_modules/koffi .device/node_modules/
cp -r node_modules/@koromix/koffi-linux-x64 .device/node_modules/@koromix/
cp node_modules/webgpu/package.json node_modules/webgpu/index.js .device/node_modules/webgpu/
cp -r node_modules/webgpu/dist/linux-x64 .device/node_modules/webgpu/dist/
rm -rf .device/node_modules/koffi/vendor .device/node_modules/koffi/doc
xz -T2 -c "$(command -v node)" > .device/node.xz

if [ ! -d .gl ]; then
  mkdir -p .gl /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update -qq
  # The Vulkan loader and the GL vendor-neutral libraries that NVIDIA's Vulkan ICD (libGLX_nvidia) needs.
  (cd .gl && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null)
fi
# The device tool carries at most 64 MB: the runner (with the compiler inside) and the native modules travel
# as one xz archive, which gpu.sh unpacks.
tar -C .device -cf - gpu-run.mjs node_modules | xz -T2 -6 > .device/runner.tar.xz
rm -rf .device/gpu-run.mjs .device/node_modules
du -sh .device .gl
