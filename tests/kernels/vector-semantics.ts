// Integer vectors and structs through what the CPU's scalarization has to get right, for
// tests/vector-runtime.test.ts: a shared array of vectors, a private array of structs, helpers taking and
// returning structs and vectors (called in a loop's condition, on the right of &&, in a choice between
// structs), assignments of lanes read from the vector they write, and stores to parts of buffer elements.
// Every value is an integer, so every backend must give the same bytes.
import { add, all, any, blockIdx, gt, kernel, local, lt, neg, shared, syncThreads, threadIdx, vec2i, vec3i, vec4i, type i32, type u32 } from "tskernel";

export interface Cell {
  id: u32;
  pos: vec3i;
  weight: i32;
  tag: vec2i;
}

function rotate(v: vec3i): vec3i {
  return v.yzx;
}

function advance(cell: Cell, by: i32): Cell {
  return { id: cell.id + 1, pos: add(cell.pos, by), weight: cell.weight * 3 - by, tag: cell.tag.yx };
}

function facing(cell: Cell): vec3i {
  return cell.weight > 0 ? cell.pos : neg(cell.pos);
}

export const vectorSemantics = kernel({ block: [32] }, (cells: Cell[], out: vec4i[], n: i32) => {
  const tile = shared.vec3i(32);
  const history = local.array<Cell>(3);
  const tid = threadIdx.x;
  const i = blockIdx.x * 32 + tid;
  const empty: Cell = { id: 0, pos: vec3i(0), weight: 0, tag: vec2i(0) };
  let cell = empty;
  if (i < n) cell = cells[i];
  tile[tid] = cell.pos;
  syncThreads();
  if (i >= n) return;
  for (let k = 0; k < 3; k++) {
    history[k] = cell;
    cell = advance(cell, k + 1);
  }
  let v = tile[(tid + 1) % 32];
  v.zyx = v;
  v.xy = rotate(v).xy;
  let count = 0;
  while (count < 4 && all(lt(facing(history[count % 3]), vec3i(1000)))) {
    count++;
  }
  const inside = any(gt(v, vec3i(0))) && facing(cell).x > 0;
  const chosen = inside ? advance(cell, 2) : history[1];
  out[i] = vec4i(add(chosen.pos, v), count);
  cells[i] = chosen;
  cells[i].tag.y = chosen.tag.x + i;
});
