// Vectors: constructors, swizzles, component-wise arithmetic with broadcast scalars, comparisons and WGSL's
// functions, as locals, a uniform parameter, buffer elements and helper values.
import { add, all, blockDim, blockIdx, clamp, cross, dot, kernel, length, lt, mix, mul, normalize, select, sub, threadIdx, vec2f, vec3f, vec4f, type f32, type i32 } from "tskernel";

function lengthSquared(v: vec3f): f32 {
  return dot(v, v);
}

function scaled(v: vec3f, s: f32): vec3f {
  return mul(v, s);
}

export const vectorMath = kernel({ block: [64] }, (out: vec4f[], points: readonly vec3f[], center: vec3f, n: i32) => {
  const i = blockIdx.x * blockDim.x + threadIdx.x;
  if (i >= n) return;
  const p = points[i];
  const d = sub(p, center);
  let v = vec3f(d.x, d.y, 1);
  v.xy = mul(v.yx, 2);
  v.z = v.z + lengthSquared(d);
  const u = normalize(cross(d, vec3f(0, 0, 1)));
  const w = mix(u, scaled(v, 0.5), clamp(length(d), 0, 1));
  const inside = all(lt(d, vec3f(1)));
  out[i] = vec4f(select(w, add(w, 1), inside), dot(w, u));
  out[i].w = out[i].w + f(p.zyx).x;
});

function f(v: vec3f): vec2f {
  return vec2f(v.x, v.y);
}
