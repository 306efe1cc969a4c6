/**
 * Subgroup operations on CUDA: a subgroup is a warp of 32 lanes. Shuffles, ballots and votes are CUDA's warp
 * intrinsics; reductions and scans are small device functions printed at the top of the `.cu` when a kernel
 * uses them: `__reduce_*_sync` on sm_80 and later where CUDA has it for the type (add, min and max of int and
 * unsigned), a butterfly of `__shfl_xor_sync` otherwise and for f32, and a Hillis–Steele scan of
 * `__shfl_up_sync`. Every intrinsic takes the full mask: blocks of kernels with subgroup operations are whole
 * warps (the validator checks fixed blocks, the runtime and the `.cuh` launchers the others), and the
 * uniformity rule brings every lane of a warp to each operation. The CPU backend adds f32 values in the same
 * order as these functions do, so that CUDA's and the CPU's f32 results agree bit for bit with 32 lanes.
 */

import type { CollectiveOp, CollectiveStmt, Stmt } from "../ir/ir.ts";
import { exprsOf, walkExpr, walkStmts } from "../ir/rewrite.ts";

const full = "0xffffffffu";

/** The helper families a collective needs. */
type Family = "add" | "min" | "max" | "scan" | "lane" | "warpgroup";

/** Each collective as an expression over its printed arguments ($0, $1), and the helpers it calls. */
const collectives: Readonly<Record<CollectiveOp, { readonly text: string; readonly needs?: Family }>> = {
  subgroupAdd: { text: "tsk_subgroup_add($0)", needs: "add" },
  subgroupMin: { text: "tsk_subgroup_min($0)", needs: "min" },
  subgroupMax: { text: "tsk_subgroup_max($0)", needs: "max" },
  subgroupInclusiveAdd: { text: "tsk_subgroup_inclusive_add($0)", needs: "scan" },
  subgroupExclusiveAdd: { text: "tsk_subgroup_exclusive_add($0)", needs: "scan" },
  subgroupBroadcast: { text: `__shfl_sync(${full}, $0, $1)` },
  subgroupShuffle: { text: `__shfl_sync(${full}, $0, $1)` },
  subgroupShuffleXor: { text: `__shfl_xor_sync(${full}, $0, $1)` },
  subgroupShuffleUp: { text: `__shfl_up_sync(${full}, $0, $1)` },
  subgroupShuffleDown: { text: `__shfl_down_sync(${full}, $0, $1)` },
  subgroupBallot: { text: `__ballot_sync(${full}, $0)` },
  subgroupAll: { text: `(__all_sync(${full}, $0) != 0)` },
  subgroupAny: { text: `(__any_sync(${full}, $0) != 0)` },
  warpgroupBroadcast: { text: "tsk_warpgroup_broadcast($0, $1)", needs: "warpgroup" },
};

/** The CUDA expression of a collective, given its printed arguments. */
export function cudaCollective(stmt: CollectiveStmt, args: readonly string[]): string {
  return collectives[stmt.op].text.replace(/\$(\d)/g, (_, i: string) => args[Number(i)]!);
}

/** The lane of the calling thread in its warp (its linear index in the block modulo 32). */
export const cudaLaneId = "tsk_lane_id()";

/** The helper functions the kernels of a module need, as lines (empty when none). */
export function subgroupHelpers(bodies: readonly (readonly Stmt[])[]): string[] {
  const needed = new Set<Family>();
  for (const body of bodies) {
    walkStmts(body, (stmt) => {
      if (stmt.kind === "collective") {
        const family = collectives[stmt.op].needs;
        if (family) needed.add(family);
        if (family === "scan") needed.add("lane");
      }
      for (const expr of exprsOf(stmt)) walkExpr(expr, (e) => e.kind === "subgroupBuiltin" && e.builtin === "subgroupInvocationId" && needed.add("lane"));
    });
  }
  if (needed.size === 0) return [];
  const lines = ["", "// Subgroup (warp) operations: blocks are whole warps, so every lane takes part (the full mask)."];
  if (needed.has("lane")) lines.push(...laneHelper);
  if (needed.has("add")) lines.push(...reduction("add", "x + y"));
  if (needed.has("min")) lines.push(...reduction("min", "min(x, y)", "fminf(x, y)"));
  if (needed.has("max")) lines.push(...reduction("max", "max(x, y)", "fmaxf(x, y)"));
  if (needed.has("scan")) lines.push(...scans);
  if (needed.has("warpgroup")) lines.push(...warpgroupBroadcast);
  return lines;
}

/**
 * warpgroupBroadcast: the warpgroup's first thread writes the value's bits into its warpgroup's word of the
 * kernel's `words` (a shared array the frontend declares) between two named barriers of the warpgroup (1 + its
 * index, as syncWarpgroup's): the first keeps a fast first thread from overwriting the word that slow threads are
 * still reading from the broadcast before.
 */
const warpgroupBroadcast = [
  "__device__ __forceinline__ int tsk_warpgroup_broadcast(int x, int* words) {",
  "  const unsigned linear = threadIdx.x + blockDim.x * (threadIdx.y + blockDim.y * threadIdx.z);",
  "  const unsigned group = linear >> 7;",
  '  asm volatile("bar.sync %0, 128;" :: "r"(1 + group) : "memory");',
  "  if ((linear & 127u) == 0u) words[group] = x;",
  '  asm volatile("bar.sync %0, 128;" :: "r"(1 + group) : "memory");',
  "  return words[group];",
  "}",
  "__device__ __forceinline__ unsigned tsk_warpgroup_broadcast(unsigned x, int* words) { return (unsigned)tsk_warpgroup_broadcast((int)x, words); }",
  "__device__ __forceinline__ float tsk_warpgroup_broadcast(float x, int* words) { return __int_as_float(tsk_warpgroup_broadcast(__float_as_int(x), words)); }",
];

const laneHelper = [
  "__device__ __forceinline__ int tsk_lane_id() {",
  "  unsigned lane;",
  '  asm("mov.u32 %0, %%laneid;" : "=r"(lane));',
  "  return (int)lane;",
  "}",
];

/**
 * One reduction for unsigned, int and float. Integer adds go through unsigned, whose wrap-around is defined
 * in C++ and gives the same bits as two's complement. The f32 butterfly adds `x + partner` with offsets 16,
 * 8, 4, 2, 1: every lane ends with the same bits, since each step adds the same two values in either order.
 */
function reduction(name: "add" | "min" | "max", intStep: string, floatStep = intStep): string[] {
  const step = (type: string, text: string) => [
    `  for (int offset = 16; offset > 0; offset >>= 1) {`,
    `    const ${type} y = __shfl_xor_sync(${full}, x, offset);`,
    `    x = ${text};`,
    "  }",
    "  return x;",
  ];
  const integer = (type: "unsigned" | "int") =>
    name === "add" && type === "int"
      ? [`__device__ __forceinline__ int tsk_subgroup_add(int x) { return (int)tsk_subgroup_add((unsigned)x); }`]
      : [
          `__device__ __forceinline__ ${type} tsk_subgroup_${name}(${type} x) {`,
          "#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800",
          `  return __reduce_${name}_sync(${full}, x);`,
          "#else",
          ...step(type, intStep),
          "#endif",
          "}",
        ];
  return [...integer("unsigned"), ...integer("int"), `__device__ __forceinline__ float tsk_subgroup_${name}(float x) {`, ...step("float", floatStep), "}"];
}

/** Inclusive scans by doubling distances; the exclusive scan is the inclusive one of the lane below (0 in lane 0). */
const scans = (["unsigned", "int", "float"] as const).flatMap((type) => {
  const zero = type === "float" ? "0.0f" : type === "int" ? "0" : "0u";
  // Integer sums wrap: add as unsigned.
  const add = type === "int" ? "x = (int)((unsigned)x + (unsigned)y);" : "x += y;";
  return [
    `__device__ __forceinline__ ${type} tsk_subgroup_inclusive_add(${type} x) {`,
    "  const int lane = tsk_lane_id();",
    "  for (int offset = 1; offset < 32; offset <<= 1) {",
    `    const ${type} y = __shfl_up_sync(${full}, x, offset);`,
    `    if (lane >= offset) ${add}`,
    "  }",
    "  return x;",
    "}",
    `__device__ __forceinline__ ${type} tsk_subgroup_exclusive_add(${type} x) {`,
    `  const ${type} below = __shfl_up_sync(${full}, tsk_subgroup_inclusive_add(x), 1);`,
    `  return tsk_lane_id() == 0 ? ${zero} : below;`,
    "}",
  ];
});
