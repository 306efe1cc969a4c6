// Vector geometry, one ray per thread: each ray from `origins[i]` along `directions[i]` is tested against a
// sphere (a uniform vec4f: center and radius), reflected about the surface normal where it hits, and shaded
// with a light direction (a uniform vec3f). Shows vectors as buffer elements (vec3f, stride 16 like WGSL's;
// vec4f), uniform parameters, locals, swizzles, helper arguments and returns, comparisons giving bool vectors,
// and WGSL's functions: dot, length, normalize, reflect, cross, mix, clamp, smoothstep, select, all.
// Launch: any 1-D block and grid covering n rays; `hits` gets (reflected direction, shade), `normals` the
// normal at the hit point (0 where the ray misses).
import {
  add, all, blockDim, blockIdx, clamp, cross, dot, ge, kernel, length, mix, mul, normalize, reflect, select, smoothstep, sqrt, sub, threadIdx,
  vec3f, vec4f, type f32, type i32,
} from "tskernel";

/** How far along `direction` (a unit vector) the ray from `origin` meets the sphere, or -1 where it misses. */
function hitDistance(origin: vec3f, direction: vec3f, sphere: vec4f): f32 {
  const toOrigin = sub(origin, sphere.xyz);
  const b = dot(toOrigin, direction);
  const c = dot(toOrigin, toOrigin) - sphere.w * sphere.w;
  const discriminant = b * b - c;
  if (discriminant < 0) return -1;
  return -b - sqrt(discriminant);
}

/** A unit vector perpendicular to `n`, from the axis it is least aligned with. */
function tangent(n: vec3f): vec3f {
  const axis = select(vec3f(0, 1, 0), vec3f(1, 0, 0), Math.abs(n.x) < 0.5);
  return normalize(cross(n, axis));
}

export const shadeRays = kernel(
  (hits: vec4f[], normals: vec3f[], origins: readonly vec3f[], directions: readonly vec3f[], sphere: vec4f, light: vec3f, n: i32) => {
    const i = blockIdx.x * blockDim.x + threadIdx.x;
    if (i >= n) return;
    const direction = normalize(directions[i]);
    const t = hitDistance(origins[i], direction, sphere);
    if (t < 0) {
      hits[i] = vec4f(direction, 0);
      normals[i] = vec3f(0);
      return;
    }
    const point = add(origins[i], mul(direction, t));
    const normal = normalize(sub(point, sphere.xyz));
    const lambert = clamp(dot(normal, light), 0, 1);
    // A soft rim where the ray grazes the sphere, blended toward the tangent's direction.
    const rim = smoothstep(0, 0.3, 1 - Math.abs(dot(normal, direction)));
    const bounce = reflect(direction, normal);
    const bent = normalize(mix(bounce, tangent(normal), rim * 0.25));
    let shade = lambert;
    // Bounces into the octant of (-½, -½, -½) and above, lane by lane: a little brighter.
    if (all(ge(bounce, vec3f(-0.5)))) shade = shade + 0.125 * length(bent.xy);
    hits[i].xyz = bent;
    hits[i].w = shade;
    normals[i] = normal;
  },
);
