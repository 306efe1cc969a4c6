#!/usr/bin/env python3
"""Times the language's fp8 GEMM (examples/fp8gemm-wgmma-ws.ts, e4m3 inputs, bf16 output) against
torch._scaled_mm and a Triton fp8 matmul, in one PyTorch process (issue 22 §1 stretch).

Each lang_*.cubin (a `tskernel build --cubin` of the example) comes with a JSON beside it: {"function",
"shared"}. It is loaded through the driver API with bench/torch-matmul.py's Driver and launched on PyTorch's
tensors and stream with the example's arguments: M, N, K, alpha = scale_a·scale_b, A (M×K e4m3), Bᵀ (N×K e4m3,
the K-major layout torch._scaled_mm takes as its second operand's transpose), beta = 0, C (M×N bf16), and the
tensor maps of A (boxes 128×128 bytes), Bᵀ (256×128) and C (64×64 bf16) in device memory. Every kernel,
torch's and Triton's included, is checked against a float64 product of the same e4m3 inputs times the scales on
two fresh random input sets (outputs poisoned with NaN first): the relative error must be under bf16's unit
roundoff plus the f32 accumulation's k·2^-23, and is reported beside torch's. Then everything is timed
interleaved (rounds, a rotating input set that exceeds twice the L2, CUDA events, each round behind a GPU sleep,
the median). torch._scaled_mm runs with use_fast_accum off (its default) and on.

    python3 bench/fp8-probe.py --cubins DIR --out fp8.json [--shapes 4096x4096x4096,...] [--no-triton]
"""

import argparse
import importlib.util
import json
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("torch_matmul", os.path.join(HERE, "torch-matmul.py"))
tm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tm)


def bound(k):
    """The normwise error the bf16 output may have: its rounding (2^-8) plus the f32 accumulation's bound."""
    return 2.0**-8 + tm.fp32_bound(k)


def triton_fp8():
    """A Triton fp8 matmul written for this harness (grouped tile order, a k loop of tl.dot on e4m3, f32
    accumulation, alpha, the output in bf16), autotuned over a few Hopper-sized configurations per shape."""
    import triton
    import triton.language as tl

    configs = [
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "GROUP_M": 8}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 256, "BLOCK_K": 128, "GROUP_M": 8}, num_stages=4, num_warps=8),
        triton.Config({"BLOCK_M": 256, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8}, num_stages=3, num_warps=8),
        triton.Config({"BLOCK_M": 128, "BLOCK_N": 128, "BLOCK_K": 128, "GROUP_M": 8}, num_stages=4, num_warps=4),
    ]

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
            acc += tl.dot(tl.load(pa), tl.load(pb))
            pa += BLOCK_K * sak
            pb += BLOCK_K * sbk
        tl.store(c + rm[:, None] * scm + rn[None, :] * scn, (acc * alpha).to(c.dtype.element_ty))

    def run(a, b, c, alpha):
        m, k = a.shape
        n = b.shape[1]
        grid = lambda meta: (triton.cdiv(m, meta["BLOCK_M"]) * triton.cdiv(n, meta["BLOCK_N"]),)
        kernel[grid](a, b, c, alpha, m, n, k, a.stride(0), a.stride(1), b.stride(0), b.stride(1), c.stride(0), c.stride(1))

    def chosen():
        return {str(key): str(config) for key, config in kernel.cache.items()}

    return run, chosen


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--cubins", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192")
    parser.add_argument("--rounds", type=int, default=21)
    parser.add_argument("--no-triton", action="store_true")
    args = parser.parse_args(argv)
    import torch

    device = torch.device("cuda")
    torch.zeros(1, device=device)
    props = torch.cuda.get_device_properties(device)
    l2 = getattr(props, "L2_cache_size", 50 * 2**20)
    sms = props.multi_processor_count
    driver = tm.Driver()
    stream = torch.cuda.current_stream().cuda_stream
    cubins = sorted(f for f in os.listdir(args.cubins) if f.endswith(".cubin"))
    triton_run, triton_chosen = (None, None) if args.no_triton else triton_fp8()
    report = {
        "generator": "bench/fp8-probe.py",
        "source": "examples/fp8gemm-wgmma-ws.ts",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": props.name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "method": "CUDA events around each launch on PyTorch's stream, ours, torch._scaled_mm and Triton interleaved, one launch each per round on a rotating input set, each round behind a GPU sleep, the median; float64 checks of the same e4m3 inputs times the scales on two input sets with C poisoned (NaN) first",
        "shapes": [],
    }
    for label in args.shapes.split(","):
        m, n, k = (int(x) for x in label.split("x"))
        # e4m3 A and Bᵀ (1 byte each) and a bf16 C: enough sets to exceed twice the L2.
        per_set = m * k + n * k + 2 * m * n
        count = max(2, min(8, -(-2 * l2 // per_set) + 1))
        gen = torch.Generator(device=device).manual_seed(11 * m + k + int(time.time()))
        sets = []
        for _ in range(count):
            a = ((torch.rand(m, k, device=device, generator=gen) * 2 - 1) * 3).to(torch.float8_e4m3fn)
            bt = ((torch.rand(n, k, device=device, generator=gen) * 2 - 1) * 3).to(torch.float8_e4m3fn)
            scale_a = float(torch.rand(1, generator=gen, device=device).item()) + 0.5
            scale_b = float(torch.rand(1, generator=gen, device=device).item()) + 0.5
            sets.append((a, bt, torch.empty(m, n, device=device, dtype=torch.bfloat16), scale_a, scale_b))
        launch, outputs, info = {}, {}, {}
        for f in cubins:
            with open(os.path.join(args.cubins, os.path.splitext(f)[0] + ".json")) as j:
                meta = json.load(j)
            fn = driver.function(os.path.join(args.cubins, f), meta["function"], meta["shared"])
            tiles = -(-m // 128) * -(-n // 256)
            grid = (min(tiles, sms), 1, 1)
            packed = []
            for a, bt, c, sa, sb in sets:
                values = [("i32", m), ("i32", n), ("i32", k), ("f32", sa * sb), ("ptr", a.data_ptr()), ("ptr", bt.data_ptr()), ("f32", 0.0), ("ptr", c.data_ptr())]
                maps = [
                    driver.tensor_map(a.data_ptr(), m, k, 128, 128, "u8"),
                    driver.tensor_map(bt.data_ptr(), n, k, 256, 128, "u8"),
                    driver.tensor_map(c.data_ptr(), m, n, 64, 64, "bf16"),
                ]
                images = [torch.frombuffer(bytearray(image), dtype=torch.uint8).to(device) for image in maps]
                array, storage = tm.pack_arguments(values + [("ptr", x.data_ptr()) for x in images])
                packed.append((array, storage + images))

            def ours(i, fn=fn, grid=grid, smem=meta["shared"], packed=packed):
                driver.launch(fn, grid, (384, 1, 1), smem, stream, packed[i][0])

            launch[f] = ours
            outputs[f] = lambda i: sets[i][2]
            info[f] = {"grid": list(grid), "block": [384, 1, 1], "dynamicSharedBytes": meta["shared"], "registers": driver.attribute(fn, tm.CU_FUNC_ATTRIBUTE_NUM_REGS)}

        results = {}
        # The scales as device tensors made once (as a training loop holds them), not per call.
        scale_tensors = [(torch.tensor(s[3], device=device), torch.tensor(s[4], device=device)) for s in sets]

        def scaled_held(fast):
            def run(i):
                a, bt = sets[i][0], sets[i][1]
                results[(fast, i)] = torch._scaled_mm(a, bt.t(), scale_a=scale_tensors[i][0], scale_b=scale_tensors[i][1], out_dtype=torch.bfloat16, use_fast_accum=fast)

            return run

        launch["torch._scaled_mm"] = scaled_held(False)
        outputs["torch._scaled_mm"] = lambda i: results[(False, i)]
        launch["torch._scaled_mm fast_accum"] = scaled_held(True)
        outputs["torch._scaled_mm fast_accum"] = lambda i: results[(True, i)]
        if triton_run:
            def tr(i):
                a, bt, c, sa, sb = sets[i]
                triton_run(a, bt.t(), c, sa * sb)

            launch["triton fp8"] = tr
            outputs["triton fp8"] = lambda i: sets[i][2]
        names = sorted(launch, key=lambda x: (not x.startswith("torch"), not x.startswith("triton"), x))
        errors = {}
        refs = [(s[0].double() * s[3]) @ (s[1].double() * s[4]).t() for s in sets[:2]]
        for name in names:
            found = []
            for i, ref in enumerate(refs):
                sets[i][2].fill_(float("nan"))
                launch[name](i)
                torch.cuda.synchronize()
                found.append(tm.relative_error(outputs[name](i), ref))
            errors[name] = tm.worst_error(found)
        del refs
        for name in names:
            for i in range(2):
                launch[name](i)
        torch.cuda.synchronize()
        events = []
        for r in range(args.rounds):
            torch.cuda._sleep(3_000_000)
            order = names[r % len(names):] + names[: r % len(names)]
            for i, name in enumerate(order):
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                launch[name]((r + i) % count)
                e1.record()
                events.append((name, e0, e1))
        torch.cuda.synchronize()
        times = {name: [] for name in names}
        for name, e0, e1 in events:
            times[name].append(e0.elapsed_time(e1))
        torch_ms = tm.median(times["torch._scaled_mm"])
        rows = []
        for name in names:
            ms = tm.median(times[name])
            err, nonfinite = errors[name]
            ok = not nonfinite and err < bound(k)
            row = {"id": name, "ms": ms, "tflops": tm.tflops(m, n, k, ms), "percentOfScaledMm": 100.0 * torch_ms / ms, "relativeError": err if err == err else None,
                   "torchRelativeError": errors["torch._scaled_mm"][0], "bound": bound(k), "pass": ok, "nonFinite": nonfinite, "samples": len(times[name])}
            row.update(info.get(name, {}))
            rows.append(row)
            flag = "pass" if ok else f"FAIL ({nonfinite} non-finite)" if nonfinite else "FAIL (over bound)"
            print(f"{label}: {row['tflops']:7.1f} TFLOP/s {row['percentOfScaledMm']:6.1f} % of torch._scaled_mm  err {err:.3e} {flag}  {name}", flush=True)
        entry = {"m": m, "n": n, "k": k, "inputSets": count, "rounds": args.rounds, "rows": rows}
        if triton_chosen:
            entry["tritonConfigs"] = triton_chosen()
        report["shapes"].append(entry)
        del sets, results
        torch.cuda.empty_cache()
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
