/**
 * Functions that the JS backend's output calls for atomics on global buffers and for subgroup operations,
 * printed into a generated module only when one of its kernels needs them (so that modules stay
 * self-contained, for worker threads and for `new Function`).
 *
 * Atomics: blocks run one at a time on the calling thread, where a plain read-modify-write is atomic; with
 * worker threads the buffers live in shared memory and `Atomics` does the work (f32 through a
 * compare-exchange loop on the Int32 view of the same bytes). Shared arrays are never seen by another
 * worker, so the kernel functions update them in place.
 *
 * Subgroups: a collective runs once per block, after every thread has computed its arguments into per-thread
 * slots; threads s·size … s·size + size − 1 form subgroup s. f32 sums and scans add in the order of the CUDA
 * helpers (cuda-subgroups.ts). A shuffle from a lane outside the subgroup returns the lane's own value; in
 * checked mode it returns a poison value (NaN, 0xdeadbeef) so that a result depending on it shows.
 */

export const atomicsRuntime = String.raw`
// Atomics on global buffers: Atomics when worker threads share the buffer, plain operations otherwise.
const atomicBitViews = new WeakMap();
const atomicF32 = new Float32Array(1), atomicBits = new Int32Array(atomicF32.buffer);
function atomicShared(a) { return typeof SharedArrayBuffer !== "undefined" && a.buffer instanceof SharedArrayBuffer; }
function atomicBitsOf(a) {
  let view = atomicBitViews.get(a);
  if (!view) atomicBitViews.set(a, (view = new Int32Array(a.buffer, a.byteOffset, a.length)));
  return view;
}
function atomicUpdate(a, i, next) {
  if (!atomicShared(a)) { const old = a[i]; a[i] = next(old); return old; }
  const bits = a instanceof Float32Array ? atomicBitsOf(a) : a;
  for (;;) {
    const before = Atomics.load(bits, i);
    atomicBits[0] = before;
    const old = a instanceof Float32Array ? atomicF32[0] : before;
    let after = next(old);
    if (a instanceof Float32Array) { atomicF32[0] = after; after = atomicBits[0]; }
    if (Atomics.compareExchange(bits, i, before, after) === before) return old;
  }
}
const atomics = {
  add: (a, i, v) => (atomicShared(a) && !(a instanceof Float32Array) ? Atomics.add(a, i, v) : atomicUpdate(a, i, (old) => old + v)),
  sub: (a, i, v) => (atomicShared(a) ? Atomics.sub(a, i, v) : atomicUpdate(a, i, (old) => old - v)),
  and: (a, i, v) => (atomicShared(a) ? Atomics.and(a, i, v) : atomicUpdate(a, i, (old) => old & v)),
  or: (a, i, v) => (atomicShared(a) ? Atomics.or(a, i, v) : atomicUpdate(a, i, (old) => old | v)),
  xor: (a, i, v) => (atomicShared(a) ? Atomics.xor(a, i, v) : atomicUpdate(a, i, (old) => old ^ v)),
  min: (a, i, v) => atomicUpdate(a, i, (old) => Math.min(old, v)),
  max: (a, i, v) => atomicUpdate(a, i, (old) => Math.max(old, v)),
  exchange: (a, i, v) => atomicUpdate(a, i, () => v),
  compareExchange: (a, i, e, v) => atomicUpdate(a, i, (old) => (old === e ? v : old)),
  load: (a, i) => {
    if (!atomicShared(a)) return a[i];
    if (!(a instanceof Float32Array)) return Atomics.load(a, i);
    atomicBits[0] = Atomics.load(atomicBitsOf(a), i);
    return atomicF32[0];
  },
  store: (a, i, v) => {
    if (!atomicShared(a)) a[i] = v;
    else if (!(a instanceof Float32Array)) Atomics.store(a, i, v);
    else { atomicF32[0] = v; Atomics.store(atomicBitsOf(a), i, atomicBits[0]); }
  },
};
`.trim().split("\n");

export const subgroupRuntime = String.raw`
// Subgroup operations: a[t] and b[t] hold thread t's arguments, r[t] receives its result; threads that
// returned (done[t]) take no part. chk (checked mode) reports subgroups that only some lanes reached.
// One set of lane arrays (up to 128 lanes) serves every call: allocating them per subgroup cost more than
// the operation itself.
const subgroupPoison = { f32: NaN, i32: -559038737, u32: 3735928559 };
const sgV = new Float64Array(128), sgW = new Float64Array(128), sgNext = new Float64Array(128);
const sgLive = new Uint8Array(128), sgHas = new Uint8Array(128), sgNextHas = new Uint8Array(128);
function subgroupWrap(type, x) { return type === "f32" ? Math.fround(x) : type === "i32" ? x | 0 : x >>> 0; }
function subgroup(op, type, a, b, r, threads, size, done, chk, where, first = 0) {
  const v = sgV, live = sgLive;
  for (let base = first; base < threads; base += size) {
    let count = 0;
    for (let lane = 0; lane < size; lane++) {
      live[lane] = base + lane < threads && !(done && done[base + lane]) ? 1 : 0;
      if (live[lane]) count++;
      v[lane] = live[lane] ? a[base + lane] : 0;
    }
    if (count === 0) continue;
    if (count < size && chk) chk.partialSubgroup(base, size, Array.from(live.subarray(0, size), Boolean), where);
    switch (op) {
      case "add":
      case "min":
      case "max": {
        // A butterfly from the widest distance down: lane l adds l ^ d, as the CUDA helpers do. has[l]:
        // the lanes l stands for include a live one (lanes that returned take no part).
        if (count === size) {
          // Every lane live: lanes l and l ^ d add the same two values (in either order, which addition,
          // min and max do not see), so all lanes end with lane 0's value, and lane 0 needs at distance d
          // only lanes l < d, each adding lane l + d (= l ^ d): size − 1 operations instead of size · log2(size).
          const w = sgW;
          for (let lane = 0; lane < size; lane++) w[lane] = v[lane];
          for (let d = size >> 1; d > 0; d >>= 1) {
            for (let lane = 0; lane < d; lane++) w[lane] = op === "add" ? subgroupWrap(type, w[lane] + w[lane + d]) : op === "min" ? Math.min(w[lane], w[lane + d]) : Math.max(w[lane], w[lane + d]);
          }
          const total = w[0];
          for (let lane = 0; lane < size; lane++) r[base + lane] = total;
          break;
        }
        const w = sgW, has = sgHas, next = sgNext, nextHas = sgNextHas;
        for (let lane = 0; lane < size; lane++) { w[lane] = v[lane]; has[lane] = live[lane]; }
        for (let d = size >> 1; d > 0; d >>= 1) {
          for (let lane = 0; lane < size; lane++) { next[lane] = w[lane]; nextHas[lane] = has[lane]; }
          for (let lane = 0; lane < size; lane++) {
            const other = lane ^ d;
            if (!has[other]) continue;
            nextHas[lane] = 1;
            if (!has[lane]) { next[lane] = w[other]; continue; }
            next[lane] = op === "add" ? subgroupWrap(type, w[lane] + w[other]) : op === "min" ? Math.min(w[lane], w[other]) : Math.max(w[lane], w[other]);
          }
          for (let lane = 0; lane < size; lane++) { w[lane] = next[lane]; has[lane] = nextHas[lane]; }
        }
        for (let lane = 0; lane < size; lane++) if (live[lane]) r[base + lane] = w[lane];
        break;
      }
      case "inclusiveAdd":
      case "exclusiveAdd": {
        // Doubling distances (Hillis–Steele), lane l adding lane l − d, as the CUDA helper does.
        const w = sgW, next = sgNext;
        for (let lane = 0; lane < size; lane++) w[lane] = v[lane];
        for (let d = 1; d < size; d <<= 1) {
          for (let lane = 0; lane < size; lane++) next[lane] = w[lane];
          for (let lane = d; lane < size; lane++) next[lane] = subgroupWrap(type, w[lane] + w[lane - d]);
          for (let lane = 0; lane < size; lane++) w[lane] = next[lane];
        }
        for (let lane = 0; lane < size; lane++) if (live[lane]) r[base + lane] = op === "inclusiveAdd" ? w[lane] : lane === 0 ? 0 : w[lane - 1];
        break;
      }
      case "shuffle":
      case "shuffleXor":
      case "shuffleUp":
      case "shuffleDown":
        for (let lane = 0; lane < size; lane++) {
          if (!live[lane]) continue;
          const k = b[base + lane];
          const source = op === "shuffle" ? k : op === "shuffleXor" ? lane ^ k : op === "shuffleUp" ? lane - k : lane + k;
          const inside = source >= 0 && source < size && live[source];
          r[base + lane] = inside ? v[source] : chk ? subgroupPoison[type] : v[lane];
        }
        break;
      case "ballot": {
        // Bit l for lane l < 32: with more lanes, the ballot holds the first 32 lanes' bits.
        let bits = 0;
        for (let lane = 0; lane < Math.min(size, 32); lane++) if (live[lane] && v[lane]) bits |= 1 << lane;
        for (let lane = 0; lane < size; lane++) if (live[lane]) r[base + lane] = bits >>> 0;
        break;
      }
      case "all":
      case "any": {
        let all = 1, any = 0;
        for (let lane = 0; lane < size; lane++) {
          if (!live[lane]) continue;
          if (v[lane]) any = 1;
          else all = 0;
        }
        for (let lane = 0; lane < size; lane++) if (live[lane]) r[base + lane] = op === "all" ? all : any;
        break;
      }
    }
  }
}
`.trim().split("\n");

/** The operation name the `subgroup` function takes for each collective. */
export const subgroupRuntimeOps = {
  subgroupAdd: "add",
  subgroupMin: "min",
  subgroupMax: "max",
  subgroupInclusiveAdd: "inclusiveAdd",
  subgroupExclusiveAdd: "exclusiveAdd",
  subgroupBroadcast: "shuffle",
  subgroupShuffle: "shuffle",
  subgroupShuffleXor: "shuffleXor",
  subgroupShuffleUp: "shuffleUp",
  subgroupShuffleDown: "shuffleDown",
  subgroupBallot: "ballot",
  subgroupAll: "all",
  subgroupAny: "any",
} as const;

/**
 * Matrix operations: `roundTf32` is ir/matrix.ts's (cvt.rna.tf32.f32; tests/matrix.test.ts checks through a kernel that the
 * two agree), and `mmaM16n8k8` runs one `mma` for every warp of the block (threads 32·w … 32·w + 31, whatever
 * the subgroup size): it gathers the warp's A (16×8), B (8×8) and accumulator (16×8) from the lanes' slices
 * of the fragment arrays (thread t's fragment i at t·size + i·perLane, laid out as ir/matrix.ts says), and
 * computes each element as docs/language.md defines it: starting from the accumulator, add the eight products
 * A[r][k]·B[k][c] for k = 0 … 7 in order, rounding to f32 after each addition (the products of tf32 values are
 * exact in f32).
 */
export const matrixRuntime = String.raw`
// Matrix operations on warps of 32 threads: tf32 rounding and mma.sync m16n8k8 (see docs/language.md).
const tf32Scratch = new Float32Array(1), tf32Bits = new Uint32Array(tf32Scratch.buffer);
function roundTf32(x) {
  tf32Scratch[0] = x;
  const bits = tf32Bits[0];
  if ((bits & 0x7f800000) === 0x7f800000) return tf32Scratch[0];
  tf32Bits[0] = (bits + 0x1000) & 0xffffe000;
  return tf32Scratch[0];
}
const mmaA = new Float32Array(128), mmaB = new Float32Array(64), mmaC = new Float32Array(128);
function mmaM16n8k8(acc, accSize, accAt, a, aSize, aAt, b, bSize, bAt, threads, first = 0) {
  if (threads % 32 !== 0) throw new Error("tskernel: mma needs blocks of whole warps (32 threads); this block has " + threads);
  for (let w = first; w < threads; w += 32) {
    for (let lane = 0; lane < 32; lane++) {
      const g = lane >> 2, q = lane & 3, t = w + lane;
      const ai = t * aSize + aAt * 4, bi = t * bSize + bAt * 2, ci = t * accSize + accAt * 4;
      mmaA[g * 8 + q] = a[ai]; mmaA[(g + 8) * 8 + q] = a[ai + 1]; mmaA[g * 8 + q + 4] = a[ai + 2]; mmaA[(g + 8) * 8 + q + 4] = a[ai + 3];
      mmaB[q * 8 + g] = b[bi]; mmaB[(q + 4) * 8 + g] = b[bi + 1];
      mmaC[g * 8 + 2 * q] = acc[ci]; mmaC[g * 8 + 2 * q + 1] = acc[ci + 1]; mmaC[(g + 8) * 8 + 2 * q] = acc[ci + 2]; mmaC[(g + 8) * 8 + 2 * q + 1] = acc[ci + 3];
    }
    for (let r = 0; r < 16; r++) {
      for (let c = 0; c < 8; c++) {
        let sum = mmaC[r * 8 + c];
        for (let k = 0; k < 8; k++) sum = fround(sum + mmaA[r * 8 + k] * mmaB[k * 8 + c]);
        mmaC[r * 8 + c] = sum;
      }
    }
    for (let lane = 0; lane < 32; lane++) {
      const g = lane >> 2, q = lane & 3, ci = (w + lane) * accSize + accAt * 4;
      acc[ci] = mmaC[g * 8 + 2 * q]; acc[ci + 1] = mmaC[g * 8 + 2 * q + 1]; acc[ci + 2] = mmaC[(g + 8) * 8 + 2 * q]; acc[ci + 3] = mmaC[(g + 8) * 8 + 2 * q + 1];
    }
  }
}
`.trim().split("\n");

/**
 * `mmaM16n8k16`, for kernels with an m16n8k16 `mma` (after matrixRuntime, whose accumulator scratch it shares):
 * the same for the 16-bit shape (A 16×16, B 16×8, the sixteen products in order; products of bf16 or f16
 * values are exact in f32), ir/matrix.ts's mmaM16n8k16Reference, which tests/mma16.test.ts compares it with
 * through a kernel.
 */
export const matrix16Runtime = String.raw`
// mma.sync m16n8k16 (bf16 or f16 inputs, held as f32 values): A 16×16 a0 (g, 2q), a1 (g, 2q+1), a2 (g+8, 2q),
// a3 (g+8, 2q+1), a4…a7 8 columns on; B 16×8 b0 (2q, g), b1 (2q+1, g), b2 (2q+8, g), b3 (2q+9, g).
const mma16A = new Float32Array(256), mma16B = new Float32Array(128);
function mmaM16n8k16(acc, accSize, accAt, a, aSize, aAt, b, bSize, bAt, threads, first = 0) {
  if (threads % 32 !== 0) throw new Error("tskernel: mma needs blocks of whole warps (32 threads); this block has " + threads);
  for (let w = first; w < threads; w += 32) {
    for (let lane = 0; lane < 32; lane++) {
      const g = lane >> 2, q = lane & 3, t = w + lane;
      const ai = t * aSize + aAt * 8, bi = t * bSize + bAt * 4, ci = t * accSize + accAt * 4;
      for (let e = 0; e < 8; e++) mma16A[(g + ((e >> 1) & 1) * 8) * 16 + 2 * q + (e & 1) + (e >> 2) * 8] = a[ai + e];
      for (let e = 0; e < 4; e++) mma16B[(2 * q + (e & 1) + (e >> 1) * 8) * 8 + g] = b[bi + e];
      mmaC[g * 8 + 2 * q] = acc[ci]; mmaC[g * 8 + 2 * q + 1] = acc[ci + 1]; mmaC[(g + 8) * 8 + 2 * q] = acc[ci + 2]; mmaC[(g + 8) * 8 + 2 * q + 1] = acc[ci + 3];
    }
    for (let r = 0; r < 16; r++) {
      for (let c = 0; c < 8; c++) {
        let sum = mmaC[r * 8 + c];
        for (let k = 0; k < 16; k++) sum = fround(sum + mma16A[r * 16 + k] * mma16B[k * 8 + c]);
        mmaC[r * 8 + c] = sum;
      }
    }
    for (let lane = 0; lane < 32; lane++) {
      const g = lane >> 2, q = lane & 3, ci = (w + lane) * accSize + accAt * 4;
      acc[ci] = mmaC[g * 8 + 2 * q]; acc[ci + 1] = mmaC[g * 8 + 2 * q + 1]; acc[ci + 2] = mmaC[(g + 8) * 8 + 2 * q]; acc[ci + 3] = mmaC[(g + 8) * 8 + 2 * q + 1];
    }
  }
}
`.trim().split("\n");

/**
 * `bitcastU32` and `bitcastF32` (docs/language.md §5): the bits pass through one f32 slot that a Uint32Array
 * views too. A NaN comes back as a JavaScript number, whose payload the engine need not keep: bitcastF32 of a
 * NaN pattern gives a NaN, not necessarily the same bits again (the language leaves NaN payloads unspecified).
 */
export const bitcastRuntime = String.raw`
// Bit casts between f32 and u32 through one shared 4-byte slot.
const bitcastSlot = new Float32Array(1), bitcastSlotBits = new Uint32Array(bitcastSlot.buffer);
function bitcastU32(x) { bitcastSlot[0] = x; return bitcastSlotBits[0]; }
function bitcastF32(x) { bitcastSlotBits[0] = x; return bitcastSlot[0]; }
`.trim().split("\n");

/**
 * Warpgroup matrix operations, for kernels that use `wgmma` (after matrixRuntime, whose tf32 scratch they share):
 * `truncateTf32` is ir/matrix.ts's, and `wgmmaM64k8` runs one `wgmma` for every warpgroup of the block (threads
 * 128·w … 128·w + 127) with A (64×8) from the fragments, B (8×n) read from the block's shared array through the
 * 128-byte swizzle and truncated to tf32 (ir/matrix.ts's swizzle128 and truncateTf32), adding in the order
 * `mmaM16n8k8` does; it checks the offset as the validator does for constant ones.
 */
export const warpgroupRuntime = String.raw`
// wgmma m64nNk8 on warpgroups of 128 threads: B (8×n) from the shared array in the 128-byte swizzle, each
// element truncated to tf32 (the low 13 bits dropped, as the tensor cores read it; NaN stays NaN).
function truncateTf32(x) {
  if (x !== x) return x;
  tf32Scratch[0] = x;
  tf32Bits[0] = tf32Bits[0] & 0xffffe000;
  return tf32Scratch[0];
}
const wgmmaA = new Float32Array(64 * 8), wgmmaB = new Float32Array(8 * 256), wgmmaC = new Float32Array(64 * 256);
function wgmmaM64k8(n, acc, accSize, accAt, a, aSize, aAt, b, offset, threads, first = 0) {
  if (threads % 128 !== 0) throw new Error("tskernel: wgmma needs blocks of whole warpgroups (128 threads); this block has " + threads);
  if (offset % 8 !== 0 || offset % 256 >= 32 || offset < 0) throw new Error("tskernel: wgmma reads B at element offset " + offset + ": it must be a multiple of 8 with offset % 256 < 32");
  if (offset + 32 * (n - 1) + 8 > b.length) throw new Error("tskernel: wgmma reads B up to element " + (offset + 32 * (n - 1) + 7) + " of a shared array of " + b.length);
  for (let c = 0; c < n; c++) {
    for (let k = 0; k < 8; k++) {
      const i = offset + 32 * c + k;
      wgmmaB[k * n + c] = truncateTf32(b[i ^ (((i >> 5) & 7) << 2)]);
    }
  }
  for (let w = first; w < threads; w += 128) {
    for (let lane = 0; lane < 128; lane++) {
      const row = 16 * (lane >> 5) + ((lane & 31) >> 2), q = lane & 3, ai = (w + lane) * aSize + aAt * 4;
      wgmmaA[row * 8 + q] = a[ai]; wgmmaA[(row + 8) * 8 + q] = a[ai + 1]; wgmmaA[row * 8 + q + 4] = a[ai + 2]; wgmmaA[(row + 8) * 8 + q + 4] = a[ai + 3];
    }
    wgmmaAccumulate(n, acc, accSize, accAt, w, wgmmaA, wgmmaB, 8);
  }
}
// One warpgroup's (threads w … w + 127) accumulators plus A (64×depth, row-major) times B (depth×n): the
// accumulator fragments gathered into wgmmaC, each sum taken in k order with one f32 rounding an addition, then
// scattered back (every shape's order: ir/matrix.ts's references).
function wgmmaAccumulate(n, acc, accSize, accAt, w, A, B, depth) {
  const per = n / 2;
  for (let lane = 0; lane < 128; lane++) {
    const row = 16 * (lane >> 5) + ((lane & 31) >> 2), q = lane & 3, ci = (w + lane) * accSize + accAt * per;
    for (let j = 0; j < n / 8; j++) {
      const col = 8 * j + 2 * q;
      wgmmaC[row * n + col] = acc[ci + 4 * j]; wgmmaC[row * n + col + 1] = acc[ci + 4 * j + 1];
      wgmmaC[(row + 8) * n + col] = acc[ci + 4 * j + 2]; wgmmaC[(row + 8) * n + col + 1] = acc[ci + 4 * j + 3];
    }
  }
  for (let r = 0; r < 64; r++) {
    for (let c = 0; c < n; c++) {
      let sum = wgmmaC[r * n + c];
      for (let k = 0; k < depth; k++) sum = fround(sum + A[r * depth + k] * B[k * n + c]);
      wgmmaC[r * n + c] = sum;
    }
  }
  for (let lane = 0; lane < 128; lane++) {
    const row = 16 * (lane >> 5) + ((lane & 31) >> 2), q = lane & 3, ci = (w + lane) * accSize + accAt * per;
    for (let j = 0; j < n / 8; j++) {
      const col = 8 * j + 2 * q;
      acc[ci + 4 * j] = wgmmaC[row * n + col]; acc[ci + 4 * j + 1] = wgmmaC[row * n + col + 1];
      acc[ci + 4 * j + 2] = wgmmaC[(row + 8) * n + col]; acc[ci + 4 * j + 3] = wgmmaC[(row + 8) * n + col + 1];
    }
  }
}
`.trim().split("\n");

/**
 * The 8-bit warpgroup shapes (after warpgroupRuntime and the 8-bit float runtime of js-float8.ts, whose tables of
 * values it is passed): `wgmmaM64k32` runs one `wgmma` m64nNk32 for every warpgroup of the block, A (64×32) and
 * B (32×n) read K-major from shared arrays of e4m3 or e5m2 codes through ir/matrix.ts's wgmmaOperandIndex (one
 * byte an element: 128 in a row) and decoded by their tables. The products are exact in f32 and the sums go in
 * the order of ir/matrix.ts's wgmmaM64k32Reference (k in order, rounded after each addition), as the 16-bit
 * shapes'. It checks the offsets as the validator does for constant ones.
 */
export const warpgroup8Runtime = String.raw`
// wgmma m64nNk32: A (64×32) and B (32×n) from shared arrays of 8-bit float codes, both K-major in the 128-byte
// swizzle, decoded by the tables aValues and bValues (e4m3Values or e5m2Values).
function wgmma8Swizzle(i) { return i ^ (((i >> 7) & 7) << 4); }
const wgmmaA8 = new Float64Array(64 * 32), wgmmaB8 = new Float64Array(32 * 256);
function wgmmaM64k32(n, acc, accSize, accAt, a, aOffset, aValues, b, bOffset, bValues, threads, first = 0) {
  if (threads % 128 !== 0) throw new Error("tskernel: wgmma needs blocks of whole warpgroups (128 threads); this block has " + threads);
  for (const [name, offset, length, reach] of [["A", aOffset, a.length, 128 * 63 + 32], ["B", bOffset, b.length, 128 * (n - 1) + 32]]) {
    if (offset % 32 !== 0 || offset % 1024 >= 128 || offset < 0) throw new Error("tskernel: wgmma reads " + name + " at element offset " + offset + ": it must be a multiple of 32 with offset % 1024 < 128");
    if (offset + reach > length) throw new Error("tskernel: wgmma reads " + name + " up to element " + (offset + reach - 1) + " of a shared array of " + length);
  }
  for (let r = 0; r < 64; r++) for (let k = 0; k < 32; k++) wgmmaA8[r * 32 + k] = aValues[a[wgmma8Swizzle(aOffset + 128 * r + k)]];
  for (let c = 0; c < n; c++) for (let k = 0; k < 32; k++) wgmmaB8[k * n + c] = bValues[b[wgmma8Swizzle(bOffset + 128 * c + k)]];
  for (let w = first; w < threads; w += 128) wgmmaAccumulate(n, acc, accSize, accAt, w, wgmmaA8, wgmmaB8, 32);
}
`.trim().split("\n");

/**
 * The 16-bit warpgroup shapes (after warpgroupRuntime, whose accumulator scratch they share): `wgmmaM64k16` runs
 * one `wgmma` m64nNk16 for every warpgroup of the block with A and B decoded from the 16-bit encodings that bf16
 * and f16 shared arrays hold, read through ir/matrix.ts's wgmmaOperandIndex; `wgmmaM64k16r` the same with A
 * from each warpgroup's A fragments (per-thread f32 slots that already hold bf16 or f16 values, in the layout of
 * ir/matrix.ts's 16-bit A). The products are exact in f32 and the sums go in the order of wgmmaM64k8
 * (docs/language.md §25). They check the offsets as the validator does for constant ones.
 */
export const warpgroup16Runtime = String.raw`
// wgmma m64nNk16: A (64×16) and B (16×n) from shared arrays of 16-bit encodings (half 0: bf16, 1: f16), A
// K-major, B K-major (bMajor 0) or N-major in boxes of bBoxRows rows (1), 128-byte swizzle (ir/matrix.ts's
// wgmmaOperandIndex); or A from registers (wgmmaM64k16r). Products of 16-bit values are exact in f32; the sums
// go in the order of wgmmaM64k8.
const wgmma16Slot = new Float32Array(1), wgmma16Bits = new Uint32Array(wgmma16Slot.buffer);
const wgmma16Scales = new Float64Array(32);
for (let e = 0; e < 32; e++) wgmma16Scales[e] = 2 ** (e - 25);
function wgmma16Decode(h, half) {
  if (half === 0) { wgmma16Bits[0] = h << 16; return wgmma16Slot[0]; }
  const e = (h >>> 10) & 31, f = h & 1023;
  const v = e === 0 ? f * 5.960464477539063e-8 : e === 31 ? (f === 0 ? Infinity : NaN) : (1024 + f) * wgmma16Scales[e];
  return (h & 0x8000) !== 0 ? -v : v;
}
function wgmma16Swizzle(i) { return i ^ (((i >> 6) & 7) << 3); }
const wgmmaA16 = new Float64Array(64 * 16), wgmmaB16 = new Float64Array(16 * 256);
// B (16×n) into wgmmaB16[k·n + col].
function wgmma16LoadB(n, b, bOffset, bMajor, bBoxRows, half) {
  if (bMajor === 0) {
    if (bOffset % 16 !== 0 || bOffset % 512 >= 64 || bOffset < 0) throw new Error("tskernel: wgmma reads B at element offset " + bOffset + ": it must be a multiple of 16 with offset % 512 < 64");
    if (bOffset + 64 * (n - 1) + 16 > b.length) throw new Error("tskernel: wgmma reads B up to element " + (bOffset + 64 * (n - 1) + 15) + " of a shared array of " + b.length);
    for (let c = 0; c < n; c++) for (let k = 0; k < 16; k++) wgmmaB16[k * n + c] = wgmma16Decode(b[wgmma16Swizzle(bOffset + 64 * c + k)], half);
  } else {
    if (bOffset % 512 !== 0 || bOffset < 0 || bBoxRows % 8 !== 0 || bBoxRows < 16) throw new Error("tskernel: wgmma reads an N-major B at element offset " + bOffset + " in boxes of " + bBoxRows + " rows: the offset must be a multiple of 512 and the rows a multiple of 8, at least 16");
    const last = bOffset + ((n >> 6) - 1) * 64 * bBoxRows + 64 * 16;
    if (last > b.length) throw new Error("tskernel: wgmma reads B up to element " + (last - 1) + " of a shared array of " + b.length);
    for (let c = 0; c < n; c++) for (let k = 0; k < 16; k++) wgmmaB16[k * n + c] = wgmma16Decode(b[bOffset + (c >> 6) * 64 * bBoxRows + wgmma16Swizzle(64 * k + (c & 63))], half);
  }
}
// acc += A · B for each warpgroup (wgmmaAccumulate, in warpgroupRuntime, which comes first).
function wgmmaM64k16(n, acc, accSize, accAt, a, aOffset, b, bOffset, bMajor, bBoxRows, half, threads, first = 0) {
  if (threads % 128 !== 0) throw new Error("tskernel: wgmma needs blocks of whole warpgroups (128 threads); this block has " + threads);
  if (aOffset % 16 !== 0 || aOffset % 512 >= 64 || aOffset < 0) throw new Error("tskernel: wgmma reads A at element offset " + aOffset + ": it must be a multiple of 16 with offset % 512 < 64");
  if (aOffset + 64 * 63 + 16 > a.length) throw new Error("tskernel: wgmma reads A up to element " + (aOffset + 64 * 63 + 15) + " of a shared array of " + a.length);
  for (let r = 0; r < 64; r++) for (let k = 0; k < 16; k++) wgmmaA16[r * 16 + k] = wgmma16Decode(a[wgmma16Swizzle(aOffset + 64 * r + k)], half);
  wgmma16LoadB(n, b, bOffset, bMajor, bBoxRows, half);
  for (let w = first; w < threads; w += 128) wgmmaAccumulate(n, acc, accSize, accAt, w, wgmmaA16, wgmmaB16, 16);
}
// A from each warpgroup's A fragments: element e of thread lane at row 16·(lane >> 5) + g + 8·((e >> 1) & 1),
// column 2q + (e & 1) + 8·(e >> 2) (g = (lane & 31) >> 2, q = lane & 3).
function wgmmaM64k16r(n, acc, accSize, accAt, a, aSize, aAt, b, bOffset, bMajor, bBoxRows, half, threads, first = 0) {
  if (threads % 128 !== 0) throw new Error("tskernel: wgmma needs blocks of whole warpgroups (128 threads); this block has " + threads);
  wgmma16LoadB(n, b, bOffset, bMajor, bBoxRows, half);
  for (let w = first; w < threads; w += 128) {
    for (let lane = 0; lane < 128; lane++) {
      const row = 16 * (lane >> 5) + ((lane & 31) >> 2), q = lane & 3, ai = (w + lane) * aSize + aAt * 8;
      for (let e = 0; e < 8; e++) wgmmaA16[(row + 8 * ((e >> 1) & 1)) * 16 + 2 * q + (e & 1) + 8 * (e >> 2)] = a[ai + e];
    }
    wgmmaAccumulate(n, acc, accSize, accAt, w, wgmmaA16, wgmmaB16, 16);
  }
}
`.trim().split("\n");

/**
 * mbarriers and warpgroup roles, for kernels that use `shared.barriers` or `warpgroupIdx` (js.ts runs each
 * warpgroup of a block as a generator). A barrier is five words of an Int32Array: the arrivals a phase expects,
 * those still missing, the phases completed, 1 once initialized, and the bytes of copies still missing. `mbarrierClock` counts arrivals and
 * passed waits, so that `runWarpgroups` can tell a round in which no warpgroup could move (a deadlock: every
 * one waits for a phase that no arrival will complete) from one that made progress. The scheduler resumes
 * the warpgroups from the last to the first, each until it waits: consumers (usually the higher warpgroups)
 * then run before the producer has filled anything, and the producer runs as far ahead as its waits let it,
 * so a missing wait on either side shows in the results.
 */
export const barrierRuntime = String.raw`
// mbarriers: [expected, missing, completed phases, initialized, bytes missing] per barrier; waits yield until
// their phase completes, which needs the phase's arrivals and the bytes arriveExpectBytes announced.
const mbarrierClock = [0];
function mbarrierFault(message, chk, where) {
  throw new Error("tskernel: " + message + (where ? " at " + where : ""));
}
function mbarrierAt(b, n, i, chk, where) {
  if (!(i >= 0 && i < n)) mbarrierFault("barrier " + i + " is outside an array of " + n + " barriers", chk, where);
  if (b[5 * i + 3] === 0) mbarrierFault("barrier " + i + " is used before initBarrier()", chk, where);
  return 5 * i;
}
function mbarrierInit(b, n, i, count, chk, t, where) {
  if (!(i >= 0 && i < n)) mbarrierFault("barrier " + i + " is outside an array of " + n + " barriers", chk, where);
  if (!(count >= 1)) mbarrierFault("initBarrier() expects at least 1 arrival a phase, found " + count, chk, where);
  b[5 * i] = count; b[5 * i + 1] = count; b[5 * i + 2] = 0; b[5 * i + 3] = 1; b[5 * i + 4] = 0;
}
// Completes the phase once its arrivals and bytes are all in.
function mbarrierStep(b, at, chk) {
  mbarrierClock[0]++;
  if (b[at + 1] !== 0 || b[at + 4] !== 0) return;
  b[at + 2]++;
  b[at + 1] = b[at];
  // A completed phase orders the arrivals' writes (and the copies it counted) before the waiters' reads.
  if (chk) chk.sync();
}
function mbarrierArrive(b, n, i, copies, chk, t, where) {
  const at = mbarrierAt(b, n, i, chk, where);
  // The copies are plain stores here, complete at once; checked mode counts them complete with the arrival.
  if (copies && chk) { chk.asyncCommit(t); chk.asyncWait(0, t); }
  if (b[at + 1] === 0) mbarrierFault("more arrivals at barrier " + i + " than its phase expects", chk, where);
  b[at + 1]--;
  mbarrierStep(b, at, chk);
}
function mbarrierArriveExpect(b, n, i, bytes, chk, t, where) {
  const at = mbarrierAt(b, n, i, chk, where);
  if (!(bytes >= 0)) mbarrierFault("arriveExpectBytes() takes a number of bytes, found " + bytes, chk, where);
  b[at + 4] += bytes;
  b[at + 1]--;
  mbarrierStep(b, at, chk);
}
function mbarrierDone(b, n, i, parity, chk, t, where) {
  const at = mbarrierAt(b, n, i, chk, where);
  if (parity !== 0 && parity !== 1) mbarrierFault("waitBarrier() takes a parity of 0 or 1, found " + parity, chk, where);
  if ((b[at + 2] & 1) === parity) return false;
  mbarrierClock[0]++;
  return true;
}
// The tensor map's shape: rows, columns, box rows, box columns, element bytes (4 in maps without them) and
// whether the copy rounds to TF32 (createTensorMap's roundToTf32).
function tileMap(map, src, what, chk, where) {
  if (map.length < 8 || map[0] !== 0x4d4b5354) mbarrierFault(what + " takes a tensor map made by createTensorMap() for this device", chk, where);
  const rows = map[1], cols = map[2];
  if (src.length < rows * cols) mbarrierFault(what + ": the tensor map describes " + rows + "×" + cols + " elements, but the buffer has " + src.length, chk, where);
  return [rows, cols, map[3], map[4], map[5] || 4, map[6] === 1];
}
// An f32 rounded to TF32 as the tensor memory accelerator rounds through a TFLOAT32 map (compiler/lang/tf32.ts's
// roundTf32Even): to nearest, ties to even; infinities and NaN unchanged.
const tileTf32 = new Float32Array(1), tileTf32Bits = new Uint32Array(tileTf32.buffer);
function tileRoundTf32(x) {
  tileTf32[0] = x;
  const bits = tileTf32Bits[0];
  if ((bits & 0x7f800000) === 0x7f800000) return tileTf32[0];
  tileTf32Bits[0] = (bits + 0xfff + ((bits >>> 13) & 1)) & 0xffffe000;
  return tileTf32[0];
}
// copyTile: the box (x, y) of the tensor map describes, 128-byte swizzle, zeros outside; its bytes complete on
// barrier i. A row of the box is 128 bytes (128 / bytes elements); 16-bit elements are copied as their encodings,
// f32 ones rounded to TF32 where the map says so.
function tileCopy(dst, dstName, dstSize, offset, src, map, x, y, b, n, i, chk, t, where) {
  const [rows, cols, boxRows, boxCols, bytes, tf32] = tileMap(map, src, "copyTile()", chk, where);
  const perRow = 128 / bytes, perPiece = 16 / bytes, atom = 8 * perRow;
  if (offset % atom !== 0 || offset < 0 || offset + perRow * boxRows > dstSize) mbarrierFault("copyTile() writes " + dstName + " from element " + offset + ": it must be a multiple of " + atom + ", with the box's " + perRow * boxRows + " elements inside the array of " + dstSize, chk, where);
  const at = mbarrierAt(b, n, i, chk, where);
  for (let r = 0; r < boxRows; r++) {
    for (let c = 0; c < perRow; c++) {
      const row = y + r, col = x + c;
      const inside = c < boxCols && row >= 0 && row < rows && col >= 0 && col < cols;
      const value = inside ? (tf32 ? tileRoundTf32(src[row * cols + col]) : src[row * cols + col]) : 0;
      const e = perRow * r + c, place = offset + (e ^ (((e / perRow) & 7) * perPiece));
      if (chk) chk.sts1(dst, dstName, place, dstSize, value, t, where);
      else dst[place] = value;
    }
  }
  b[at + 4] -= bytes * boxRows * boxCols;
  mbarrierStep(b, at, chk);
}
// Clusters: the blocks in a multicast mask (bit r for rank r), and the block of one rank, checked.
function clusterPeers(blocks, mask) {
  const out = [];
  if (!(mask >= 0 && mask < (1 << blocks.length))) throw new Error("tskernel: copyTile()'s multicast mask " + mask + " names blocks outside the cluster of " + blocks.length);
  for (let r = 0; r < blocks.length; r++) if ((mask >> r) & 1) out.push(blocks[r]);
  return out;
}
function clusterPeer(blocks, rank) {
  if (!(rank >= 0 && rank < blocks.length)) throw new Error("tskernel: arriveBarrier()'s block " + rank + " is outside the cluster of " + blocks.length);
  return blocks[rank];
}
// What a waitFlag on a shared buffer sleeps on between looks (nothing ever wakes it: it times out); where
// SharedArrayBuffer is missing no buffer is shared, and where Atomics.wait may not block (a browser's main
// thread) the pause spins.
const flagPause = typeof SharedArrayBuffer === "undefined" ? undefined : new Int32Array(new SharedArrayBuffer(4));
// Runs a block's warpgroups (generators that yield 0 at syncThreads(), 1 at syncCluster() and a location at a
// wait) to the end; with blockOf (the block of each warpgroup), a cluster's blocks' warpgroups together.
function runWarpgroups(groups, chk, kernel, blockOf) {
  const n = groups.length, state = new Int8Array(n).fill(1), at = new Array(n);
  let live = n, stuckSince = 0;
  while (live > 0) {
    const clock = mbarrierClock[0];
    let moved = false;
    for (let k = n - 1; k >= 0; k--) {
      if (state[k] !== 1) continue;
      const step = groups[k].next();
      if (step.done) { state[k] = 0; live--; moved = true; }
      else if (step.value === 0) { state[k] = 2; moved = true; }
      else if (step.value === 1) { state[k] = 3; moved = true; }
      else at[k] = step.value;
    }
    // syncThreads() (2) waits for the running warpgroups of the same block (all of them without clusters),
    // syncCluster() (3) for every running warpgroup.
    if (moved) stuckSince = 0;
    let released = false;
    const blocks = blockOf === undefined ? 1 : blockOf[n - 1] + 1;
    for (let b = 0; b < blocks; b++) {
      let running = 0, synced = 0;
      for (let k = 0; k < n; k++) if ((blockOf === undefined || blockOf[k] === b) && state[k] !== 0) { running++; if (state[k] === 2) synced++; }
      if (synced > 0 && synced === running) {
        for (let k = 0; k < n; k++) if ((blockOf === undefined || blockOf[k] === b) && state[k] === 2) state[k] = 1;
        released = true;
      }
    }
    let clustered = 0;
    for (let k = 0; k < n; k++) if (state[k] === 3) clustered++;
    if (clustered > 0 && clustered === live) {
      for (let k = 0; k < n; k++) if (state[k] === 3) state[k] = 1;
      released = true;
    }
    if (released) {
      if (chk) chk.sync();
      continue;
    }
    if (!moved && clock === mbarrierClock[0]) {
      // A waitFlag on a buffer that worker threads share (a location in an array) may be set by a block another
      // thread runs: wait a millisecond at a time, for up to 10 s, before calling it a deadlock.
      let shared = false;
      for (let k = 0; k < n; k++) if (state[k] === 1 && Array.isArray(at[k])) shared = true;
      if (shared) {
        const now = Date.now();
        if (stuckSince === 0) stuckSince = now;
        if (now - stuckSince < 10000) {
          try { Atomics.wait(flagPause, 0, 0, 1); } catch { const until = Date.now() + 1; while (Date.now() < until); }
          continue;
        }
      }
      const waits = [];
      // In a cluster the blocks have the same number of warpgroups: name each by its block and its index there.
      const per = blockOf === undefined ? n : n / (blockOf[n - 1] + 1);
      const name = (k) => (blockOf === undefined ? "" : "block " + blockOf[k] + " ") + "warpgroup " + (k % per);
      for (let k = 0; k < n; k++) if (state[k] === 1) waits.push(name(k) + " waits at " + at[k]);
      else if (state[k] === 2) waits.push(name(k) + " stands at syncThreads()");
      else if (state[k] === 3) waits.push(name(k) + " stands at syncCluster()");
      throw new Error("tskernel: deadlock in '" + kernel + "': no warpgroup can move (" + waits.join("; ") + "): a phase waited for never completes");
    }
  }
}
`.trim().split("\n");

/** `storeTile`, for kernels that use it (after barrierRuntime, whose tileMap and mbarrierFault it calls). */
export const tileStoreRuntime = String.raw`
// storeTile: the box at (x, y) of the tensor map describes, from shared memory in the layout copyTile writes;
// elements outside the tensor are not written. Complete at once here (waitTileStores has nothing to wait for).
function tileStore(dst, map, x, y, src, srcName, srcSize, offset, chk, t, where) {
  const [rows, cols, boxRows, boxCols, bytes, tf32] = tileMap(map, dst, "storeTile()", chk, where);
  if (tf32) mbarrierFault("storeTile() takes a tensor map without roundToTf32 (that rounding is the copy into shared memory's)", chk, where);
  const perRow = 128 / bytes, perPiece = 16 / bytes, atom = 8 * perRow;
  if (offset % atom !== 0 || offset < 0 || offset + perRow * boxRows > srcSize) mbarrierFault("storeTile() reads " + srcName + " from element " + offset + ": it must be a multiple of " + atom + ", with the box's " + perRow * boxRows + " elements inside the array of " + srcSize, chk, where);
  for (let r = 0; r < boxRows; r++) {
    for (let c = 0; c < boxCols; c++) {
      const row = y + r, col = x + c;
      if (row < 0 || row >= rows || col < 0 || col >= cols) continue;
      const e = perRow * r + c, place = offset + (e ^ (((e / perRow) & 7) * perPiece));
      dst[row * cols + col] = chk ? chk.lds1(src, srcName, place, srcSize, t, where) : src[place];
    }
  }
}
`.trim().split("\n");
