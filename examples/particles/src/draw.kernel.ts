// Drawing the particles into RGBA8 pixels, with compute kernels only (no render pipeline): `splat` adds
// each body to a density image and a speed image with integer atomics (so the sums do not depend on the
// order threads run in), and `shade` turns four pixels at a time into RGBA bytes, one 16-byte `store16` of a
// Uint8Array (whole words on every target), clearing the sums for the next frame as it goes. The page puts
// the bytes on a canvas with putImageData.
// Launch: splat with block 64 over the n bodies; shade with block 64 over width · height / 4 threads
// (width · height a multiple of 4).
import { add, atomicAdd, blockIdx, exp, f32, i32, kernel, load4, mix, mul, store16, store4, threadIdx, u32, vec2f, vec3f, vec3u, vec4u, type Const } from "tskernel";
import type { Particle } from "./nbody.kernel.ts";

/** An orthographic camera: x to the right, the y axis tilted towards the viewer by `tilt` (its cos, sin). */
export interface View {
  center: vec2f;
  tilt: vec2f;
  /** Pixels per unit of length. */
  scale: f32;
  width: i32;
  height: i32;
  /** Speed that maps to the hottest colour. */
  hotSpeed: f32;
  /** How fast brightness saturates with density. */
  gain: f32;
}

/** The weight of a body at its pixel; each of the four neighbours gets 1. */
const CENTER: Const<i32> = 4;

export const splat = kernel({ block: [64] }, (density: Uint32Array, heat: Uint32Array, bodies: readonly Particle[], view: View, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i >= n) return;
  const body = bodies[i];
  const screen = vec2f(body.pos.x, body.pos.y * view.tilt.x - body.pos.z * view.tilt.y);
  const x = i32(Math.floor((screen.x - view.center.x) * view.scale + f32(view.width) * 0.5));
  const y = i32(Math.floor((view.center.y - screen.y) * view.scale + f32(view.height) * 0.5));
  if (x < 1 || y < 1 || x >= view.width - 1 || y >= view.height - 1) return;
  // Speed as 0..255, weighted like the density, so that heat / density is the mean.
  const hot = u32(Math.min(body.speed / view.hotSpeed, 1) * 255);
  const at = y * view.width + x;
  atomicAdd(density, at, CENTER);
  atomicAdd(heat, at, hot * CENTER);
  for (let k = 0; k < 4; k++) {
    const near = k === 0 ? at - 1 : k === 1 ? at + 1 : k === 2 ? at - view.width : at + view.width;
    atomicAdd(density, near, 1);
    atomicAdd(heat, near, hot);
  }
});

/** One pixel's colour: a dark background, brightening with density from blue (slow) to orange (fast). */
function colour(density: u32, heat: u32, gain: f32): vec4u {
  const glow = 1 - exp(-f32(density) * gain);
  const t = density === 0 ? 0 : f32(heat) / (f32(density) * 255);
  const hue = mix(vec3f(0.3, 0.55, 1), vec3f(1, 0.6, 0.2), t);
  const rgb = mix(vec3f(0.02, 0.03, 0.07), hue, glow);
  // vec3u(…) truncates (and saturates) each lane: + 0.5 rounds.
  return vec4u(vec3u(add(mul(rgb, 255), 0.5)), 255);
}

export const shade = kernel({ block: [64] }, (pixels: Uint8Array, density: Uint32Array, heat: Uint32Array, view: View) => {
  const first = (blockIdx.x * 64 + threadIdx.x) * 4;
  if (first >= view.width * view.height) return;
  const [d0, d1, d2, d3] = load4(density, first);
  const [h0, h1, h2, h3] = load4(heat, first);
  const a = colour(d0, h0, view.gain);
  const b = colour(d1, h1, view.gain);
  const c = colour(d2, h2, view.gain);
  const d = colour(d3, h3, view.gain);
  store16(pixels, first * 4, a.x, a.y, a.z, a.w, b.x, b.y, b.z, b.w, c.x, c.y, c.z, c.w, d.x, d.y, d.z, d.w);
  store4(density, first, 0, 0, 0, 0);
  store4(heat, first, 0, 0, 0, 0);
});
