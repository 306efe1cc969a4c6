#!/usr/bin/env python3
"""The language's wgmma on the GPU, small to large: the golden warpgroup kernel (codegen-tests/wgmma, nvcc -arch=sm_90a
-cubin expected.cu -o panel.cubin) and the wgmma rung (examples/sgemm-wgmma.ts, `tskernel build --cubin --arch sm_90`,
copied to rung.cubin), each against a float64 product with C poisoned (NaN) first, printing the normwise error of the
finite outputs and where the non-finite ones lie (rows modulo 256, columns modulo 128: which accumulator registers).
Both cubins beside this script on the GPU machine; bench/torch-matmul.py beside its folder's parent (for the Driver).
This found that the rung's accumulator started from whatever the registers held (CUDA does not zero private arrays;
bench/results/2026-11-23-wgmma-check-h100-log.txt is the run after the fix).

    python3 wgmma-check.py
"""
import ctypes, os, sys, importlib.util, math
import torch
HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("tm", os.path.join(HERE, "..", "torch-matmul.py") if os.path.exists(os.path.join(HERE, "..", "torch-matmul.py")) else os.path.join(HERE, "torch-matmul.py")); tm = importlib.util.module_from_spec(spec); spec.loader.exec_module(tm)
torch.zeros(1, device="cuda")
drv = tm.Driver(); stream = torch.cuda.current_stream().cuda_stream
# The golden panel kernel: D = A·B + C (64x16 by 16x64), At given (A transposed).
f = drv.function(os.path.join(HERE, "panel.cubin"), "warpgroupPanel_THREADS_256_STEPS_2", 0)
A = torch.rand(64, 16, device="cuda") * 2 - 1; B = torch.rand(16, 64, device="cuda") * 2 - 1; C = torch.rand(64, 64, device="cuda") * 2 - 1
At = A.t().contiguous(); D = torch.full((64, 64), float("nan"), device="cuda"); Dt = torch.full((64, 64), float("nan"), device="cuda")
args, keep = tm.pack_arguments([("ptr", At.data_ptr()), ("ptr", B.data_ptr()), ("ptr", C.data_ptr()), ("ptr", D.data_ptr()), ("ptr", Dt.data_ptr())])
drv.launch(f, (1, 1, 1), (256, 1, 1), 0, stream, args); torch.cuda.synchronize()
ref = A.double() @ B.double() + C.double()
print("panel D err", (torch.linalg.norm(D.double() - ref) / torch.linalg.norm(ref)).item(), "nan", torch.isnan(D).sum().item(), "Dt err", (torch.linalg.norm(Dt.double().t() - ref) / torch.linalg.norm(ref)).item())
for cubin, fn, smem in [("rung.cubin", "sgemmWgmma_STAGES_4_SWIZZLE_8", 201728), ("rung.cubin", "sgemmWgmma_STAGES_3_SWIZZLE_8", 151552)]:
    g = drv.function(os.path.join(HERE, cubin), fn, smem)
    for (m, n, k) in ([(256, 128, 64), (256, 128, 512), (1024, 1024, 1024), (4096, 4096, 4096)] if cubin == "rung.cubin" else [(4096, 4096, 4096)]):
        a = torch.rand(m, k, device="cuda") * 2 - 1; b = torch.rand(k, n, device="cuda") * 2 - 1; c = torch.full((m, n), float("nan"), device="cuda")
        args, keep = tm.pack_arguments([("i32", m), ("i32", n), ("i32", k), ("f32", 1.0), ("ptr", a.data_ptr()), ("ptr", b.data_ptr()), ("f32", 0.0), ("ptr", c.data_ptr())])
        drv.launch(g, (n // 128, m // 256, 1), (256, 1, 1), smem, stream, args); torch.cuda.synchronize()
        ref = a.double() @ b.double(); bad = ~torch.isfinite(c)
        good = torch.where(bad, torch.zeros_like(c), c).double(); refz = torch.where(bad, torch.zeros_like(ref), ref)
        err = (torch.linalg.norm(good - refz) / torch.linalg.norm(refz)).item()
        rows = torch.nonzero(bad.any(1)).flatten()
        cols = torch.nonzero(bad.any(0)).flatten()
        print(cubin, fn, m, n, k, "nonfinite", bad.sum().item(), "err(finite)", f"{err:.3e}", "bad rows%256", sorted(set((rows % 256).tolist()))[:20], "n", len(rows), "bad cols%128", sorted(set((cols % 128).tolist()))[:20], "n", len(cols), flush=True)
