"""Triton's counterparts of the bf16 cases of the memory-bound suite, our closest peer (bench/torch-reference.py
times them beside ours and PyTorch's, round by round, on the same tensors). Each is the plain Triton way to write
the operation: one program per row for the row kernels (the whole row in registers, f32 inside, one rounding on
the store), and blocks of elements for the elementwise ones. GELU is x·sigmoid(2u), the same function as
0.5·x·(1 + tanh u) (examples/elementwise-bf16.ts writes it x / (1 + exp(−2u))).

`counterpart(torch, case, buffers)` gives a function that launches the case's Triton kernel and returns its
output tensor, or None where there is none (the f32 cases, the blur). With TRITON_INTERPRET=1 set before
Triton is imported, the kernels run on CPU tensors (torch-reference.py --triton-interpret-test), storing f32
that the test rounds on the host (the interpreter truncates to bf16 where compiled Triton rounds).
"""

import triton
import triton.language as tl


@triton.jit
def layer_norm_rows(x_ptr, g_ptr, b_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    mean = tl.sum(x, axis=0) / cols
    d = tl.where(mask, x - mean, 0.0)
    rstd = 1.0 / tl.sqrt(tl.sum(d * d, axis=0) / cols + eps)
    g = tl.load(g_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    b = tl.load(b_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * cols + offs, (d * rstd * g + b).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def rms_norm_rows(x_ptr, w_ptr, y_ptr, cols, eps, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=0.0).to(tl.float32)
    rstd = 1.0 / tl.sqrt(tl.sum(x * x, axis=0) / cols + eps)
    w = tl.load(w_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + row * cols + offs, (x * rstd * w).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def softmax_rows(x_ptr, y_ptr, cols, BLOCK: tl.constexpr):
    row = tl.program_id(0).to(tl.int64)
    offs = tl.arange(0, BLOCK)
    mask = offs < cols
    x = tl.load(x_ptr + row * cols + offs, mask=mask, other=-float("inf")).to(tl.float32)
    e = tl.exp(x - tl.max(x, axis=0))
    tl.store(y_ptr + row * cols + offs, (e / tl.sum(e, axis=0)).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def gelu_tanh(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    x = tl.load(x_ptr + offs, mask=mask, other=0.0).to(tl.float32)
    u = 0.7978845608028654 * (x + 0.044715 * x * x * x)
    tl.store(y_ptr + offs, (x * tl.sigmoid(2.0 * u)).to(y_ptr.dtype.element_ty), mask=mask)


@triton.jit
def dequantize_rows(q_ptr, s_ptr, y_ptr, n, cols, BLOCK: tl.constexpr):
    offs = tl.program_id(0).to(tl.int64) * BLOCK + tl.arange(0, BLOCK)
    mask = offs < n
    q = tl.load(q_ptr + offs, mask=mask, other=0).to(tl.float32)
    s = tl.load(s_ptr + offs // cols, mask=mask, other=0.0).to(tl.float32)
    tl.store(y_ptr + offs, (q * s).to(y_ptr.dtype.element_ty), mask=mask)


def row_warps(block):
    """Warps for a program that holds a row of `block` elements (Triton's own softmax and layer norm tutorials)."""
    return 16 if block >= 8192 else 8 if block >= 2048 else 4


def counterpart(torch, case, buffers, out_dtype=None):
    """`out_dtype` (default: the case's output type) lets the interpreter test take the f32 result and round it
    on the host: Triton's interpreter (3.8) truncates f32 to bf16, where compiled Triton rounds to nearest even."""
    kind = case.get("family", case["id"])
    output = next(spec for spec in case["buffers"] if spec["name"] == case["output"])
    if output.get("type") not in ("bf16", "f16"):
        return None
    shape = case["shape"]
    if kind in ("layernorm", "rmsnorm", "softmax"):
        rows, cols = shape
        block = triton.next_power_of_2(cols)
        warps = row_warps(block)
        x = buffers["x"]
        out = torch.empty_like(x, dtype=out_dtype)
        eps = case["parameters"].get("eps", 0.0)
        if kind == "layernorm":
            def run():
                layer_norm_rows[(rows,)](x, buffers["gamma"], buffers["beta"], out, cols, eps, BLOCK=block, num_warps=warps)
                return out
        elif kind == "rmsnorm":
            def run():
                rms_norm_rows[(rows,)](x, buffers["weight"], out, cols, eps, BLOCK=block, num_warps=warps)
                return out
        else:
            def run():
                softmax_rows[(rows,)](x, out, cols, BLOCK=block, num_warps=warps)
                return out
        return run
    if kind == "gelu":
        x = buffers["x"]
        out = torch.empty_like(x, dtype=out_dtype)
        n = x.numel()

        def run():
            gelu_tanh[(triton.cdiv(n, 1024),)](x, out, n, BLOCK=1024, num_warps=4)
            return out
        return run
    if kind == "dequantize":
        rows, cols = shape
        q, scale = buffers["q"], buffers["scale"]
        out = torch.empty(q.numel(), dtype=out_dtype or scale.dtype, device=q.device)
        n = q.numel()

        def run():
            # 2048 int8 over 128 threads: 16 bytes per load, as ours.
            dequantize_rows[(triton.cdiv(n, 2048),)](q, scale, out, n, cols, BLOCK=2048, num_warps=4)
            return out
        return run
    return None
