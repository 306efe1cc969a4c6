/**
 * The page: two galaxies colliding, simulated by the all-pairs N-body kernel (nbody.kernel.ts) on buffers of
 * `Particle` structs and drawn by two compute kernels into RGBA8 bytes (draw.kernel.ts) that go onto a canvas
 * with putImageData: no render pipeline. All three kernels are compiled to WGSL at build time by the tskernel
 * bundler plugin and launched on `tskernel/webgpu`.
 *
 * Query: `n` bodies (default 4096), `seed` (1), `size` of the square image in pixels (512), `steps` per
 * frame (2). With `run=K` the page runs K steps, draws once and stops (for tests/particles.test.ts): then
 * document.body.dataset.status ends as "done" (or "error"), and window.particles holds the seed, the
 * bodies' bytes after K steps and the drawn pixels, base64. Otherwise it animates until the tab closes.
 */

import { createWebGpuDevice, launcher, layoutOf } from "tskernel/webgpu";
import { shade, splat } from "./draw.kernel.ts";
import { step } from "./nbody.kernel.ts";
import { makeScene } from "./scene.ts";

const query = new URLSearchParams(location.search);
const number = (name: string, fallback: number) => (query.has(name) ? Number(query.get(name)) : fallback);
const n = number("n", 4096);
const seed = number("seed", 1);
const size = number("size", 512);
const run = query.has("run") ? number("run", 0) : undefined;
const stepsPerFrame = number("steps", 2);
const status = document.querySelector("#status")!;

const base64 = (bytes: Uint8Array) => {
  let text = "";
  for (let i = 0; i < bytes.length; i += 0x8000) text += String.fromCharCode(...bytes.subarray(i, i + 0x8000));
  return btoa(text);
};

async function main(): Promise<void> {
  const device = await createWebGpuDevice();
  const scene = makeScene(seed, n, size, size);
  const particle = layoutOf(step, "Particle");
  // Two buffers of bodies: each step reads one and writes the other.
  let bodies = device.createBuffer(particle, scene.bodies);
  let next = device.createBuffer(particle, n);
  const pixelCount = size * size;
  const density = device.createBuffer(new Uint32Array(pixelCount));
  const heat = device.createBuffer(new Uint32Array(pixelCount));
  const pixels = device.createBuffer("u8", pixelCount * 4);
  const stepKernel = launcher(device, step);
  // Each block steps BLOCK · BODIES bodies (the default build's constants).
  const { BLOCK, BODIES } = stepKernel.handle.description.specialization as { BLOCK: number; BODIES: number };
  const bodiesPerBlock = BLOCK * BODIES;
  const splatKernel = launcher(device, splat);
  const shadeKernel = launcher(device, shade);
  const canvas = document.querySelector("canvas")!;
  canvas.width = size;
  canvas.height = size;
  const context = canvas.getContext("2d")!;

  const advance = async (steps: number) => {
    for (let s = 0; s < steps; s++) {
      await stepKernel({ grid: Math.ceil(n / bodiesPerBlock), args: [next, bodies, scene.params] });
      [bodies, next] = [next, bodies];
    }
  };
  const draw = async (): Promise<Uint8Array> => {
    await splatKernel({ grid: Math.ceil(n / 64), args: [density, heat, bodies, scene.view, n] });
    await shadeKernel({ grid: Math.ceil(pixelCount / 256), args: [pixels, density, heat, scene.view] });
    const bytes = (await device.read(pixels)) as Uint8Array;
    context.putImageData(new ImageData(new Uint8ClampedArray(bytes), size, size), 0, 0);
    return bytes;
  };

  if (run !== undefined) {
    await advance(run);
    const drawn = await draw();
    const state = (await device.read(bodies)) as Uint8Array;
    (window as unknown as { particles: object }).particles = { n, seed, size, steps: run, state: base64(state), pixels: base64(drawn) };
    status.textContent = `${n} bodies, ${run} steps: done`;
    document.body.dataset.status = "done";
    device.dispose();
    return;
  }

  let steps = 0;
  let last = performance.now();
  const frame = async () => {
    await advance(stepsPerFrame);
    await draw();
    steps += stepsPerFrame;
    const now = performance.now();
    const interactions = (stepsPerFrame * n * n) / ((now - last) / 1000);
    last = now;
    status.textContent = `${n} bodies, step ${steps}: ${(interactions / 1e9).toFixed(2)} G interactions/s (frame included)`;
    requestAnimationFrame(() => void frame().catch(fail));
  };
  await frame();
}

function fail(error: unknown): void {
  const text = error instanceof Error ? error.message : String(error);
  (window as unknown as { particlesError: string }).particlesError = text;
  status.textContent = `error: ${text}`;
  document.body.dataset.status = "error";
}

main().catch(fail);

