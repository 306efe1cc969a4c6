// Structs: a nested struct in a buffer element, a uniform struct whose nested struct WGSL's uniform rules
// lay out otherwise (a Name_uniform form), a private array of structs, helpers that take and return structs
// and vectors (the CPU returns their lanes through its results array), a choice between two structs, and
// a helper returning a vector called where the CPU must keep it conditional (the right of &&, a loop's condition).
import { add, dot, kernel, length, local, mul, threadIdx, vec2f, vec3f, f32, u32, type i32 } from "tskernel";

interface Range {
  low: f32;
  high: f32;
}

interface Cell {
  center: vec3f;
  id: u32;
  range: Range;
  weights: vec2f;
}

interface Settings {
  offset: vec3f;
  limits: Range;
  count: i32;
}

function widen(range: Range, by: f32): Range {
  return { low: range.low - by, high: range.high + by };
}

function direction(cell: Cell): vec3f {
  return mul(cell.center, 1 / (1 + dot(cell.center, cell.center)));
}

export const updateCells = kernel({ block: [32] }, (cells: Cell[], settings: Settings) => {
  const i = threadIdx.x;
  if (i >= settings.count) return;
  const history = local.array<Cell>(4);
  let cell = cells[i];
  for (let k = 0; k < 4; k++) {
    history[k] = cell;
    cell.center = add(cell.center, settings.offset);
    cell.range = widen(cell.range, 0.5);
  }
  const first = history[0];
  const chosen = cell.range.high > settings.limits.high ? first : cell;
  let steps = 0;
  // The helper runs before each test of the condition, and only where `steps < 8` holds.
  while (steps < 8 && length(direction(chosen)) > 0.001 * f32(steps)) {
    steps++;
  }
  cells[i] = chosen;
  cells[i].id = chosen.id + u32(steps);
  cells[i].range.low -= 1;
  cells[i].weights = vec2f(history[3].range.low, f32(steps));
});
