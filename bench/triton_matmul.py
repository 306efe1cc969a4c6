"""The Triton matmul the GEMM harnesses time beside ours (bench/hgemm-probe.py in bf16/f16, bench/fp8-probe.py in
e4m3, bench/wgmma-probe.py --triton in TF32): the plain tiled form a Triton user writes (grouped tile order, a k
loop of tl.dot with f32 accumulation at Triton's default input precision, which is TF32 for f32 inputs, then
alpha and the output in C's type), autotuned per shape over the configurations a harness passes (their k-step
sized so that the stages fit in shared memory for its element size). Not Triton's tuned tutorial kernels.

    run, chosen = tiled_matmul([triton.Config({...}, num_stages=..., num_warps=...), ...])
    run(a, b, c, alpha=1.0)   # c = alpha · a @ b, any strides (a Bᵀ passed as bt.t())
    chosen()                  # {autotune key: the configuration it picked}
"""

import triton
import triton.language as tl


def config(block_m, block_n, block_k, stages, warps, group_m=8):
    return triton.Config({"BLOCK_M": block_m, "BLOCK_N": block_n, "BLOCK_K": block_k, "GROUP_M": group_m}, num_stages=stages, num_warps=warps)


def tiled_matmul(configs):
    @triton.autotune(configs=configs, key=["M", "N", "K"])
    @triton.jit
    def kernel(a, b, c, alpha, M, N, K, sam, sak, sbk, sbn, scm, scn, BLOCK_M: tl.constexpr, BLOCK_N: tl.constexpr, BLOCK_K: tl.constexpr, GROUP_M: tl.constexpr):
        pid = tl.program_id(0)
        tiles_m = tl.cdiv(M, BLOCK_M)
        tiles_n = tl.cdiv(N, BLOCK_N)
        per_group = GROUP_M * tiles_n
        first = (pid // per_group) * GROUP_M
        rows = min(tiles_m - first, GROUP_M)
        pm = first + (pid % per_group) % rows
        pn = (pid % per_group) // rows
        rm = pm * BLOCK_M + tl.arange(0, BLOCK_M)
        rn = pn * BLOCK_N + tl.arange(0, BLOCK_N)
        rk = tl.arange(0, BLOCK_K)
        pa = a + rm[:, None] * sam + rk[None, :] * sak
        pb = b + rk[:, None] * sbk + rn[None, :] * sbn
        acc = tl.zeros((BLOCK_M, BLOCK_N), dtype=tl.float32)
        for _ in range(0, K, BLOCK_K):
            acc = tl.dot(tl.load(pa), tl.load(pb), acc)
            pa += BLOCK_K * sak
            pb += BLOCK_K * sbk
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, (acc * alpha).to(c.dtype.element_ty))

    def run(a, b, c, alpha=1.0):
        m, k = a.shape
        n = b.shape[1]
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
        kernel[grid](a, b, c, alpha, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))

    def chosen():
        return {str(key): str(value) for key, value in kernel.cache.items()}

    return run, chosen
