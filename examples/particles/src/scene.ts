// The simulation's starting state and settings, from a seed: two disk galaxies, each a heavy core with stars
// on near-circular orbits around it, falling towards each other. Plain TypeScript (no kernels), so that the
// page and tests/particles.test.ts (which reruns the same steps on the CPU backend and in float64) start from
// the same bodies.

/** A body as the host packs it into a `Particle` (examples/particles/src/nbody.kernel.ts). */
export interface Body {
  pos: [number, number, number];
  mass: number;
  vel: [number, number, number];
  speed: number;
}

export interface Scene {
  bodies: Body[];
  params: { dt: number; softening2: number; n: number };
  view: { center: [number, number]; tilt: [number, number]; scale: number; width: number; height: number; hotSpeed: number; gain: number };
}

/** mulberry32: a small seeded generator, the same numbers in every JavaScript engine. */
export function random(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** n bodies (n ≥ 2) in two galaxies, drawn in a width × height image (width · height a multiple of 4). */
export function makeScene(seed: number, n: number, width = 256, height = 256): Scene {
  const next = random(seed);
  const softening = 0.05;
  const bodies: Body[] = [];
  const galaxies = [
    { center: [-0.9, 0.25, 0], drift: [0.28, -0.05, 0], normal: 1, count: Math.ceil(n / 2) },
    { center: [0.9, -0.25, 0.1], drift: [-0.28, 0.05, 0], normal: -1, count: Math.floor(n / 2) },
  ];
  for (const galaxy of galaxies) {
    const core = 1;
    const stars = galaxy.count - 1;
    const starMass = 0.25 / Math.max(stars, 1);
    const add = (offset: number[], velocity: number[], mass: number) => {
      const vel = velocity.map((v, i) => v + galaxy.drift[i]!) as Body["vel"];
      bodies.push({ pos: offset.map((p, i) => p + galaxy.center[i]!) as Body["pos"], mass, vel, speed: Math.hypot(...vel) });
    };
    add([0, 0, 0], [0, 0, 0], core);
    for (let s = 0; s < stars; s++) {
      // Radius between 0.08 and 0.6, denser inwards; a thin disk; the speed of a circular orbit around the
      // softened core plus the stars inside it, rotating one way in one galaxy and the other way in the other.
      const r = 0.08 + 0.52 * Math.sqrt(next()) * next();
      const angle = 2 * Math.PI * next();
      const z = (next() - 0.5) * 0.02;
      const inside = core + 0.25 * (r / 0.6);
      const v = Math.sqrt((inside * r * r) / (r * r + softening * softening) ** 1.5) * (0.97 + 0.06 * next());
      const [c, s2] = [Math.cos(angle), Math.sin(angle)];
      add([r * c, r * s2, z], [-v * s2 * galaxy.normal, v * c * galaxy.normal, 0], starMass);
    }
  }
  return {
    bodies: bodies.slice(0, n),
    params: { dt: 0.004, softening2: softening * softening, n },
    view: { center: [0, 0], tilt: [Math.cos(0.9), Math.sin(0.9)], scale: width / 3.2, width, height, hotSpeed: 4, gain: 0.08 },
  };
}
