#!/usr/bin/env bash
# Prepares bench/particles-gpu.ts's run on the GPU machine (no Node, no network there): the kernels of
# examples/particles and of the vector and struct cases built for CUDA, WGSL and JS, the script bundled with
# esbuild, Node, koffi and Dawn's native module, and bench/particles-gpu.sh. Everything goes to the folder
# TSK_DEVICE_DIR names (default .device-particles), the Vulkan loader packages to TSK_GL_DIR (.gl); both
# git-ignored: name both in the device tool's `carry`, then run `bash <dir>/particles-gpu.sh` there.
set -euo pipefail
cd "$(dirname "$0")/.."
DEVICE_DIR=${TSK_DEVICE_DIR:-.device-particles}
GL_DIR=${TSK_GL_DIR:-.gl}
FILES="examples/particles/src/nbody.kernel.ts examples/particles/src/draw.kernel.ts examples/struct-bodies.ts examples/vector-geometry.ts tests/kernels/vector-semantics.ts codegen-tests/vectors-half/kernel.ts codegen-tests/inverse-sqrt/kernel.ts"

npm run build >/dev/null
rm -rf "$DEVICE_DIR" && mkdir -p "$DEVICE_DIR/node_modules/@koromix" "$DEVICE_DIR/node_modules/webgpu/dist"
node bin/tskernel.js build $FILES --target cuda,wgsl,js --out "$DEVICE_DIR/kernels"
cp bench/particles-gpu.sh "$DEVICE_DIR/"
npx esbuild bench/particles-gpu.ts --bundle --platform=node --format=esm --target=node20 \
  --external:koffi --external:webgpu --outfile="$DEVICE_DIR/particles-gpu.mjs" --log-level=warning \
  --banner:js="import { createRequire as __tskCreateRequire } from 'node:module'; import { fileURLToPath as __tskPath } from 'node:url'; const require = __tskCreateRequire(import.meta.url); const __filename = __tskPath(import.meta.url); const __dirname = __tskPath(new URL('.', import.meta.url));"
cp -r node_modules/koffi "$DEVICE_DIR/node_modules/"
cp -r node_modules/@koromix/koffi-linux-x64 "$DEVICE_DIR/node_modules/@koromix/"
cp node_modules/webgpu/package.json node_modules/webgpu/index.js "$DEVICE_DIR/node_modules/webgpu/"
cp -r node_modules/webgpu/dist/linux-x64 "$DEVICE_DIR/node_modules/webgpu/dist/"
rm -rf "$DEVICE_DIR/node_modules/koffi/vendor" "$DEVICE_DIR/node_modules/koffi/doc"
tar -C "$DEVICE_DIR" -cf - particles-gpu.mjs node_modules | xz -T2 -6 > "$DEVICE_DIR/runner.tar.xz"
rm -rf "$DEVICE_DIR/particles-gpu.mjs" "$DEVICE_DIR/node_modules"
xz -T2 -c "$(command -v node)" > "$DEVICE_DIR/node.xz"
if [ ! -d "$GL_DIR" ]; then
  mkdir -p "$GL_DIR" /tmp/amd64/partial
  o='-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/amd64'
  apt-get $o update -qq
  (cd "$GL_DIR" && apt-get $o download libvulkan1 libegl1 libglvnd0 libopengl0 libgl1 libglx0 libgles2 >/dev/null)
fi
du -sh "$DEVICE_DIR" "$GL_DIR"
