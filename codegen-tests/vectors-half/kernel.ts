// f16 vectors and f16 struct fields: a buffer of vec3h (6 bytes, 8-byte stride), a struct mixing f16, vec2h,
// vec3f and u32 fields (WGSL's storage layout: f16 fields 2-aligned), a vec4h uniform parameter, WGSL's
// functions on vec3h, conversions between vec3h and vec3f, comparisons and select. Every f16 operation rounds
// to f16 (docs/language.md §26), lane by lane on every target.
import { add, clamp, dot, f16, f32, floor, gt, kernel, length, local, mix, mul, normalize, select, shared, sub, syncThreads, threadIdx, vec2h, vec3f, vec3h, vec4h, blockIdx, type i32, type u32 } from "tskernel";

export interface Sample {
  weight: f16;
  uv: vec2h;
  pos: vec3f;
  id: u32;
  scale: f16;
}

function blend(a: vec3h, b: vec3h, t: f16): vec3h {
  return mix(a, b, vec3h(t));
}

export const shadeHalf = kernel({ block: [64] }, (points: vec3h[], samples: Sample[], out: Float32Array, tint: vec4h, n: i32) => {
  const i = blockIdx.x * 64 + threadIdx.x;
  if (i >= n) return;
  const p = points[i];
  const s = samples[i];
  const lit = clamp(mul(p, tint.xyz), vec3h(0), vec3h(4));
  const q = blend(lit, normalize(add(p, vec3h(1))), s.weight);
  const bright = gt(q, vec3h(0.5));
  const chosen = select(floor(q), q, bright);
  const wide: vec3f = add(vec3f(chosen), s.pos);
  points[i] = sub(chosen, vec3h(s.uv, s.scale));
  samples[i].uv = mul(s.uv.yx, tint.w);
  samples[i].scale = f16(length(q));
  out[i] = f32(dot(q, lit)) + wide.x + wide.y * f32(s.uv.x);
});

/** A shared array of vec3h (8-byte elements) and a private one of vec2h; launch whole blocks of 64 points. */
export const neighbourHalf = kernel({ block: [64] }, (points: readonly vec3h[], out: vec3h[]) => {
  const tile = shared.vec3h(64);
  const pairs = local.vec2h(2);
  const tid = threadIdx.x;
  const i = blockIdx.x * 64 + tid;
  tile[tid] = points[i];
  syncThreads();
  const next = tile[(tid + 1) % 64];
  pairs[0] = next.xy;
  pairs[1] = tile[tid].zx;
  out[i] = add(vec3h(pairs[0], next.z), vec3h(pairs[1].y, pairs[1]));
});
