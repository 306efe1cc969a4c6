#!/usr/bin/env python3
"""Times the builds of bench/hgemm-probe.cu against torch.mm and a Triton matmul in bf16/f16, in one PyTorch
process (issue 22).

Each cubin (one build of the probe, named by its compile-time settings, e.g. hgemm_BM128_BN256_S4_P1.cubin) is
loaded through the driver API with bench/torch-matmul.py's Driver and launched on PyTorch's tensors and stream.
Every kernel, torch.mm and Triton's included, is checked against a float64 product of the same 16-bit inputs on
two fresh random input sets (outputs poisoned with NaN first): the relative error ||C - ref|| / ||ref|| must be
under the 16-bit bound (rounding the output to the format, 2^-8 for bf16 and 2^-11 for f16, plus the f32
accumulation's k·2^-23), and is reported beside torch.mm's on the same inputs. Then everything is timed
interleaved: several rounds, each launch once per round on a rotating input set that exceeds twice the L2,
CUDA events around each launch, each round behind a GPU sleep, the median kept. Writes a JSON report.

    python3 bench/hgemm-probe.py --cubins DIR --out probe.json [--shapes 4096x4096x4096,...] [--no-triton]

Cubin names: BM, BN (the block tile), S (stages), BT (1: the kernel takes Bᵀ), SW (exchanged descriptor offsets),
G (tile rows a group), P (1: persistent grid of one block a multiprocessor), F (1: f16, else bf16), and any
other letters+digits are recorded as settings. P is a launch choice: one build can appear under two names.
A cubin named lang_*.cubin is a build of a language rung (examples/hgemm-wgmma-ws.ts): a JSON file beside it
with the same stem gives its function, dynamicSharedBytes, BM and BN; it takes the matmul arguments and then
the tensor maps of A, B and C as device buffers (createTensorMap's bytes, made here the same way).
"""

import argparse
import ctypes
import importlib.util
import json
import math
import os
import re
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("torch_matmul", os.path.join(HERE, "torch-matmul.py"))
tm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tm)

UNIT_ROUNDOFF = {"bf16": 2.0**-8, "f16": 2.0**-11}


def settings(name):
    """The compile-time settings a cubin's name carries: hgemm_BM128_BN256_S4_P1.cubin -> {BM: 128, ...}."""
    out = {}
    for part in os.path.splitext(os.path.basename(name))[0].split("_")[1:]:
        match = re.fullmatch(r"([A-Z]+)(\d+)", part)
        if match:
            out[match.group(1)] = int(match.group(2))
    return out


def bound16(dtype, k):
    """The normwise error a 16-bit product with f32 accumulation may have: the output's rounding to the format
    (at most its unit roundoff per element, so normwise too) plus the FP32 bound of the accumulation."""
    return UNIT_ROUNDOFF[dtype] + tm.fp32_bound(k)


def shared_bytes(s):
    """The dynamic shared memory a build needs: its stages, its epilogue buffers (E1: BM x BN, E2: half), the
    mbarriers, and 1024 bytes to align the start."""
    stage = (s["BM"] + s["BN"]) * 64 * 2
    epilogue = {0: 0, 1: s["BM"] * s["BN"] * 2, 2: s["BM"] * s["BN"]}[s.get("E", 0)]
    return s["S"] * stage + epilogue + 1024 + 16 * s["S"]


def active_clusters(driver, fn, cluster, smem):
    """How many clusters of `cluster` CTAs of 384 threads can run at once (cuOccupancyMaxActiveClusters): a
    persistent grid of clusters must not exceed it, or the last clusters wait for a whole wave."""

    class LaunchConfig(ctypes.Structure):
        _fields_ = [("gx", ctypes.c_uint), ("gy", ctypes.c_uint), ("gz", ctypes.c_uint), ("bx", ctypes.c_uint), ("by", ctypes.c_uint),
                    ("bz", ctypes.c_uint), ("shared", ctypes.c_uint), ("stream", ctypes.c_void_p), ("attrs", ctypes.c_void_p), ("nattrs", ctypes.c_uint)]

    config = LaunchConfig(cluster * 64, 1, 1, 384, 1, 1, smem, None, None, 0)
    count = ctypes.c_int()
    driver.check("cuOccupancyMaxActiveClusters", driver.cuda.cuOccupancyMaxActiveClusters(ctypes.byref(count), fn, ctypes.byref(config)))
    return count.value


def triton_matmul():
    """Triton's plain tiled matmul (bench/triton_matmul.py), autotuned over four Hopper-sized configurations with
    64-wide k-steps (16-bit inputs)."""
    sys.path.insert(0, HERE)
    from triton_matmul import config, tiled_matmul

    return tiled_matmul([config(128, 256, 64, 3, 8), config(128, 256, 64, 4, 8), config(256, 128, 64, 3, 8), config(128, 128, 64, 4, 4)])


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--cubins", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192,4096x4096x1024,2048x2048x2048")
    parser.add_argument("--no-triton", action="store_true")
    parser.add_argument("--rounds", type=int, default=25)
    parser.add_argument("--profile", action="store_true", help="one launch of each between cudaProfilerStart/Stop (Nsight Compute), no timing")
    args = parser.parse_args(argv)
    import torch

    device = torch.device("cuda")
    torch.zeros(1, device=device)
    props = torch.cuda.get_device_properties(device)
    sms = props.multi_processor_count
    l2 = getattr(props, "L2_cache_size", 50 * 2**20)
    driver = tm.Driver()
    stream = torch.cuda.current_stream().cuda_stream
    cubins = sorted(f for f in os.listdir(args.cubins) if f.endswith(".cubin"))
    def dtype_of(name):
        if name.startswith("lang_"):
            with open(os.path.join(args.cubins, name[: -len(".cubin")] + ".json")) as handle:
                return json.load(handle).get("dtype", "bf16")
        return "f16" if settings(name).get("F") else "bf16"

    dtypes = sorted({dtype_of(f) for f in cubins} | {"bf16"})
    triton_run, triton_chosen = (None, None) if args.no_triton else triton_matmul()
    report = {
        "generator": "bench/hgemm-probe.py",
        "source": "bench/hgemm-probe.cu",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": props.name,
        "multiprocessors": sms,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "method": "CUDA events around each launch on PyTorch's stream; probe builds, torch.mm and Triton in the same dtype interleaved, "
        "one launch each per round on a rotating input set (> 2x L2), each round behind a GPU sleep, the median; float64 checks of "
        "the same 16-bit inputs on two input sets with C poisoned (NaN) first",
        "shapes": [],
    }
    torch_type = {"bf16": torch.bfloat16, "f16": torch.float16}
    for label in args.shapes.split(","):
        m, n, k = (int(x) for x in label.split("x"))
        per_set = 2 * (m * k + k * n + m * n) + (2 * k * n if any(settings(f).get("BT") for f in cubins) else 0)
        sets_count = max(2, min(8, math.ceil(2 * l2 / per_set) + 1))
        gen = torch.Generator(device=device).manual_seed(7 * m + k + int(time.time()))
        launch, info, kinds = {}, {}, {}
        sets = {}
        for dtype in dtypes:
            sets[dtype] = []
            for _ in range(sets_count):
                a = (torch.rand(m, k, device=device, generator=gen) * 2 - 1).to(torch_type[dtype])
                b = (torch.rand(k, n, device=device, generator=gen) * 2 - 1).to(torch_type[dtype])
                sets[dtype].append((a, b, b.t().contiguous(), torch.empty(m, n, device=device, dtype=torch_type[dtype])))
        for f in cubins:
            lang = f.startswith("lang_")
            if lang:
                with open(os.path.join(args.cubins, f[: -len(".cubin")] + ".json")) as handle:
                    spec_json = json.load(handle)
                s = {"BM": spec_json["BM"], "BN": spec_json["BN"], "F": 1 if spec_json.get("dtype") == "f16" else 0, "LANG": 1}
            else:
                s = settings(f)
            dtype = "f16" if s.get("F") else "bf16"
            if m % s["BM"] or n % s["BN"] or k % 64:
                continue
            smem = spec_json["dynamicSharedBytes"] if lang else shared_bytes(s)
            fn = driver.function(os.path.join(args.cubins, f), spec_json["function"] if lang else "hgemm_probe", smem)
            tiles = (m // s["BM"]) * (n // s["BN"])
            cluster = s.get("CL", 1)
            if (m // s["BM"]) % cluster:
                continue
            resident = sms if cluster == 1 else cluster * active_clusters(driver, fn, cluster, smem)
            grid = (min(tiles, resident) if s.get("P", 1) else tiles, 1, 1)
            packed = []
            for a, b, bt, c in sets[dtype]:
                values = [("i32", m), ("i32", n), ("i32", k), ("f32", 1.0), ("ptr", a.data_ptr()), ("ptr", b.data_ptr()), ("f32", 0.0), ("ptr", c.data_ptr())]
                array, storage = tm.pack_arguments(values)
                # The two tensor maps by value (__grid_constant__): pointers to 64-byte-aligned copies of their 128 bytes.
                maps = [driver.tensor_map(a.data_ptr(), m, k, s["BM"], 64, dtype)]
                if s.get("BT"):
                    maps.append(driver.tensor_map(bt.data_ptr(), n, k, s["BN"], 64, dtype))
                else:
                    maps.append(driver.tensor_map(b.data_ptr(), k, n, 64, 64, dtype))
                # C's map for the TMA-store epilogue: boxes of a consumer's rows × 64 columns.
                maps.append(driver.tensor_map(c.data_ptr(), m, n, s["BM"] // 2, 64, dtype))
                if lang:
                    # The maps in device memory, after C (the runtime's createTensorMap).
                    images = [torch.frombuffer(bytearray(image), dtype=torch.uint8).to(device) for image in maps]
                    array, storage = tm.pack_arguments(values + [("ptr", x.data_ptr()) for x in images])
                    packed.append((array, storage + images))
                    continue
                holders = []
                for image in maps:
                    holder = ctypes.create_string_buffer(256)
                    address = (ctypes.addressof(holder) + 63) & ~63
                    ctypes.memmove(address, image, 128)
                    holders.append((holder, address))
                array = (ctypes.c_void_p * (len(values) + 3))(*list(array), *(h[1] for h in holders))
                packed.append((array, storage + holders))

            def ours(i, fn=fn, grid=grid, smem=smem, packed=packed):
                driver.launch(fn, grid, (384, 1, 1), smem, stream, packed[i][0])

            launch[f], kinds[f] = ours, dtype
            info[f] = {"settings": s, "dtype": dtype, "grid": list(grid), "residentBlocks": resident, "block": [384, 1, 1], "dynamicSharedBytes": smem, "registers": driver.attribute(fn, tm.CU_FUNC_ATTRIBUTE_NUM_REGS)}
        for dtype in dtypes:
            def mm(i, dtype=dtype):
                a, b, _, c = sets[dtype][i]
                torch.mm(a, b, out=c)

            launch[f"torch.mm {dtype}"], kinds[f"torch.mm {dtype}"] = mm, dtype
            if triton_run:
                def tr(i, dtype=dtype):
                    a, b, _, c = sets[dtype][i]
                    triton_run(a, b, c)

                launch[f"triton {dtype}"], kinds[f"triton {dtype}"] = tr, dtype
        names = sorted(launch, key=lambda x: (not x.startswith("torch"), not x.startswith("triton"), x))
        if args.profile:
            for name in names:
                launch[name](0)
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStart()
            for name in names:
                launch[name](0)
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()
            print(f"profiled {label}: {', '.join(names)}", flush=True)
            continue
        # Checks: two input sets, C poisoned, against float64 products of the same 16-bit inputs.
        errors = {}
        for dtype in dtypes:
            refs = [sets[dtype][i][0].double() @ sets[dtype][i][1].double() for i in range(2)]
            for name in [x for x in names if kinds[x] == dtype]:
                found = []
                for i, ref in enumerate(refs):
                    sets[dtype][i][3].fill_(float("nan"))
                    launch[name](i)
                    torch.cuda.synchronize()
                    found.append(tm.relative_error(sets[dtype][i][3], ref))
                errors[name] = tm.worst_error(found)
            del refs
        for name in names:
            for i in range(2):
                launch[name](i)
        torch.cuda.synchronize()
        times = tm.time_interleaved(torch, launch, names, args.rounds, sets_count)
        rows = []
        for name in names:
            dtype = kinds[name]
            ms = tm.median(times[name])
            torch_ms = tm.median(times[f"torch.mm {dtype}"])
            err, nonfinite = errors[name]
            torch_err = errors[f"torch.mm {dtype}"][0]
            bound = bound16(dtype, k)
            ok = not nonfinite and err < bound
            row = {"id": name, "dtype": dtype, "ms": ms, "msMin": min(times[name]), "msMax": max(times[name]), "tflops": tm.tflops(m, n, k, ms),
                   "percentOfTorch": 100.0 * torch_ms / ms, "relativeError": err, "torchRelativeError": torch_err, "bound": bound, "pass": ok,
                   "nonFinite": nonfinite, "samples": len(times[name])}
            row.update(info.get(name, {}))
            rows.append(row)
            flag = "pass" if ok else f"FAIL ({nonfinite} non-finite)" if nonfinite else "FAIL (over bound)"
            print(f"{label}: {row['tflops']:7.1f} TFLOP/s {row['percentOfTorch']:6.1f} % of torch.mm {dtype}  err {err:.3e} (torch {torch_err:.3e}) {flag}  {name}", flush=True)
        entry = {"m": m, "n": n, "k": k, "inputSets": sets_count, "rounds": args.rounds, "rows": rows}
        if triton_chosen:
            entry["tritonConfigs"] = triton_chosen()
        report["shapes"].append(entry)
        del sets
        torch.cuda.empty_cache()
    if args.profile:
        return 0
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
