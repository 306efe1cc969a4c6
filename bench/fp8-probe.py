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
    """Triton's plain tiled matmul (bench/triton_matmul.py) on e4m3, autotuned over four Hopper-sized
    configurations with 128-wide k-steps (one 128-byte row of e4m3)."""
    sys.path.insert(0, HERE)
    from triton_matmul import config, tiled_matmul

    return tiled_matmul([config(128, 256, 128, 3, 8), config(128, 256, 128, 4, 8), config(256, 128, 128, 3, 8), config(128, 128, 128, 4, 4)])


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
        times = tm.time_interleaved(torch, launch, names, args.rounds, count)
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
