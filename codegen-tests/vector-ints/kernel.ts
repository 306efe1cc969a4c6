// Integer and bool vectors: i32 lanes wrap (CUDA computes them on unsigned bits, as scalars), f32 lanes
// convert to integers lane by lane through the saturating conversion, u32 lanes, comparisons giving bool
// vectors combined with and/or/not/any and picked from with select, and assignments to lanes.
import { abs, and, any, blockIdx, clamp, div, eq, gt, kernel, max, min, mul, ne, neg, not, or, select, sub, threadIdx, vec2i, vec3f, vec3u, vec4i, vec4u, add, type i32, type vec3b } from "tskernel";

export const intLanes = kernel({ block: [32] }, (out: vec4i[], counts: vec4u[], values: readonly vec3f[], n: i32) => {
  const i = blockIdx.x * 32 + threadIdx.x;
  if (i >= n) return;
  const f = values[i];
  const q = vec4i(vec2i(f.xy), i, -i);
  let w = add(mul(q, 65537), vec4i(2147483647));
  w.x += 1;
  w.w++;
  w.yz = sub(w.zy, vec2i(3, -3));
  const positive = gt(q, 0);
  const small = and(not(eq(q, vec4i(0))), or(positive, ne(q.wzyx, q)));
  const picked = select(neg(w), abs(w), small);
  const bounded = clamp(div(picked, vec4i(7, -7, 3, -3)), vec4i(-1000), vec4i(1000));
  out[i] = any(positive) ? bounded : min(bounded, max(q, vec4i(-5)));
  const u = vec3u(vec3f(abs(f.x), f.y * 3, 1e10));
  counts[i] = vec4u(add(u, vec3u(4294967295)), select(0, 1, all3(positive.xyz)));
});

function all3(b: vec3b): boolean {
  return b.x && b.y && b.z;
}
