// One kernel for several element types (docs/language.md §26, "One kernel for several element types"): the
// function's type parameter T names the element type, each specialization gives it one (and the constants
// their values), and each is built with its own entry name (scaleRows_T_bf16_BLOCK_64). The body reads T's
// elements as Elem<T>, converts with cast<T>, and accumulates in f32. tests/element-type-specialization.test.ts
// runs every build against a float64 reference. (An f16 build would make the file's WGSL module enable f16,
// which every kernel of the module would then need: build f16 from a file of its own.)
import { kernel, threadIdx, blockIdx, f32, cast, type Const, type DType, type Elem, type BufferOf, type ReadonlyBufferOf, type i32 } from "tskernel";

export const scaleRows = kernel(
  { block: ["BLOCK"], specializations: [{ T: "f32", BLOCK: 64 }, { T: "bf16", BLOCK: 64 }, { T: "u8", BLOCK: 32 }] },
  <T extends DType>(out: BufferOf<T>, sums: Float32Array, x: ReadonlyBufferOf<T>, n: i32, scale: f32, BLOCK: Const<i32> = 64) => {
    const i = blockIdx.x * BLOCK + threadIdx.x;
    if (i >= n) return;
    const v: Elem<T> = x[i];
    let acc: f32 = 0;
    for (let k = 0; k < 4; k++) {
      acc += f32(v) * scale;
    }
    sums[i] = acc;
    out[i] = cast<T>(acc) + v;
  },
);
