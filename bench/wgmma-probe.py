#!/usr/bin/env python3
"""Times the builds of bench/wgmma-probe.cu against torch.mm with TF32 on, in one PyTorch process (issue 13).

Each cubin (one build of the probe, named by its compile-time settings) is loaded through the driver API with
bench/torch-matmul.py's Driver, launched on PyTorch's tensors and stream, checked against a float64 product on
two fresh random input sets (outputs poisoned with NaN first; TF32's bound from torch-matmul.py), then timed
interleaved with torch.mm TF32 (and FP32, for scale): several rounds, each launch once per round on a rotating
input set that exceeds twice the L2, CUDA events, the median kept. Writes a JSON report.

    python3 bench/wgmma-probe.py --cubins DIR --out probe.json [--shapes 4096x4096x4096,...]
"""

import argparse
import ctypes
import importlib.util
import json
import math
import os
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
spec = importlib.util.spec_from_file_location("torch_matmul", os.path.join(HERE, "torch-matmul.py"))
tm = importlib.util.module_from_spec(spec)
spec.loader.exec_module(tm)

BN = 128  # our n per block, fixed in the probe
# The language rungs' builds (examples/sgemm-wgmma-ws.ts, examples/sgemm-wgmma.ts; their .cuh says each
# function's dynamic shared memory), for cubins named lang_ws*.cubin and lang_wgmma*.cubin: function, dynamic
# shared bytes, threads a block, and whether it takes A's tensor map after C.
LANG_BUILDS = {
    "lang_ws": ("sgemmWgmmaWs_STAGES_4_SWIZZLE_8", 200776 + 1024, 384, True),
    "lang_wgmma": ("sgemmWgmma_STAGES_4_SWIZZLE_8", 201728, 256, False),
}


def settings(name):
    """The compile-time settings a cubin's name carries: probe_BM256_S4_W1_R0.cubin -> {BM: 256, ...}."""
    parts = os.path.splitext(os.path.basename(name))[0].split("_")[1:]
    keys = {"BM": "BM", "BK": "BK", "SS": "SS", "WS": "WS", "CPA": "CPA", "NR": "NREG", "P": "PREG", "C": "CREG", "GMAP": "GMAP", "CL": "CLUSTER", "BT": "BTMA", "PS": "PERSIST", "RA": "RNDA", "PF": "PF", "SD": "SD", "SK": "SKIP", "FE": "FENCE", "ON": "ONCE", "LA": "LA", "CO": "COUNT", "PR": "PREROUND", "PA": "PACE", "CM": "CLAIM", "BR": "BATCHREL", "GR": "GROUP", "WSS": "WSS", "S": "STAGES", "W": "WAITN", "R": "ROUNDA"}
    out = {}
    for p in parts:
        for prefix, key in sorted(keys.items(), key=lambda kv: -len(kv[0])):
            if p.startswith(prefix) and p[len(prefix):].isdigit():
                out[key] = int(p[len(prefix):])
                break
    return out


def tensor_map_a(driver, pointer, m, k, bm):
    """The TMA descriptor of row-major A (M x K f32) in boxes of 32 x BM (k x m), 128-byte swizzle: 128 bytes, in a
    64-byte-aligned buffer that must stay alive while launches use it (torch-matmul.py's Driver.tensor_map)."""
    image = driver.tensor_map(pointer, m, k, bm, 32)
    buffer = ctypes.create_string_buffer(256)
    address = (ctypes.addressof(buffer) + 63) & ~63
    ctypes.memmove(address, image, 128)
    return buffer, address


def rounded_tf32(a):
    """A rounded to TF32 as cvt.rna.tf32.f32 does (half an ulp added to the magnitude's bits, the low 13 cleared): the
    scratch copy Ar of the timing-only pre-rounded builds."""
    import torch

    bits = a.view(torch.int32)
    return (((bits & 0x7FFFFFFF) + 0x1000) & 0x7FFFE000 | (bits & -0x80000000)).view(torch.float32)


def triton_tf32():
    """Triton's plain tiled matmul (bench/triton_matmul.py) on the f32 inputs, whose tl.dot runs in TF32 by default,
    autotuned over four Hopper-sized configurations with 32-wide k-steps (so that their stages fit)."""
    sys.path.insert(0, HERE)
    from triton_matmul import config, tiled_matmul

    return tiled_matmul([config(128, 256, 32, 3, 8), config(128, 256, 32, 4, 8), config(256, 128, 32, 4, 8), config(128, 128, 32, 5, 4)])


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--cubins", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--shapes", default="4096x4096x4096,8192x8192x8192")
    parser.add_argument("--rounds", type=int, default=21, help="timing rounds (medians)")
    parser.add_argument("--profile", action="store_true", help="one launch of each between cudaProfilerStart/Stop, for Nsight Compute")
    parser.add_argument("--only", help="time only these cubins (comma-separated file names)")
    parser.add_argument("--triton", action="store_true", help="time a Triton TF32 matmul too (tl.dot, input_precision tf32)")
    parser.add_argument("--smoke-seconds", type=float, default=60.0,
                        help="first run each cubin alone at 1024^3 in a child process with this time limit, and leave out the ones that hang or crash (0: no smoke test)")
    args = parser.parse_args(argv)
    if args.smoke_seconds > 0 and not args.profile:
        # A kernel that deadlocks (a barrier phase that never completes, roles that ask for more registers than
        # the block has) would hang the whole run: each build proves it finishes first, in a process of its own.
        import subprocess

        kept, left_out = [], {}
        for f in sorted(f for f in os.listdir(args.cubins) if f.endswith(".cubin")):
            if args.only and f not in args.only.split(","):
                continue
            child = [sys.executable, os.path.abspath(__file__), "--cubins", args.cubins, "--only", f, "--shapes", "1024x1024x1024",
                     "--smoke-seconds", "0", "--rounds", "1", "--out", os.devnull]
            try:
                done = subprocess.run(child, capture_output=True, text=True, timeout=args.smoke_seconds)
                if done.returncode == 0:
                    kept.append(f)
                else:
                    left_out[f] = f"exit {done.returncode}: {done.stderr.strip().splitlines()[-1] if done.stderr.strip() else ''}"
            except subprocess.TimeoutExpired:
                left_out[f] = f"no result within {args.smoke_seconds:.0f} s at 1024^3 (a hang?)"
        for f, why in left_out.items():
            print(f"left out {f}: {why}", flush=True)
        args.only = ",".join(kept)
        args.left_out = left_out
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    device = torch.device("cuda")
    torch.zeros(1, device=device)
    props = torch.cuda.get_device_properties(device)
    l2 = getattr(props, "L2_cache_size", 50 * 2**20)
    driver = tm.Driver()
    stream = torch.cuda.current_stream().cuda_stream
    cubins = sorted(f for f in os.listdir(args.cubins) if f.endswith(".cubin") and (args.only is None or f in args.only.split(",")))
    triton_run, triton_chosen = triton_tf32() if args.triton and not args.profile else (None, None)
    report = {
        "generator": "bench/wgmma-probe.py",
        "source": "bench/wgmma-probe.cu",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": props.name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "method": "CUDA events around each launch on PyTorch's stream, probe builds and torch.mm (TF32 on, and FP32) interleaved, "
        "one launch each per round on a rotating input set, each round behind a GPU sleep, the median; float64 checks on two input sets with C poisoned (NaN) first",
        "shapes": [],
        "leftOut": getattr(args, "left_out", {}),
    }
    for label in args.shapes.split(","):
        m, n, k = (int(x) for x in label.split("x"))
        sets_count = tm.input_sets(m, n, k, l2)
        gen = torch.Generator(device=device).manual_seed(7 * m + k + int(time.time()))
        sets = []
        for _ in range(sets_count):
            a = torch.rand(m, k, device=device, generator=gen) * 2 - 1
            b = torch.rand(k, n, device=device, generator=gen) * 2 - 1
            sets.append((a, b, torch.empty(m, n, device=device)))
        launch, registers, info = {}, {}, {}
        # The flags of builds that round A once, which each launch must leave at 0, and of their timing-only
        # pre-rounded forms, with the image restored before each launch.
        lang_scratch, preset = {}, {}
        for f in cubins:
            s = settings(f)
            lang = f.startswith("lang_")
            if lang:
                # A build of a language rung's generated CUDA (edited by hand where its name says so): the
                # rung's launch, grid (N / 128, M / 256).
                sidecar = os.path.join(args.cubins, os.path.splitext(f)[0] + ".json")
                persistent = False
                if os.path.exists(sidecar):
                    # Another build: {"function", "shared", "threads", "persistent", "boxRows"} beside the cubin.
                    with open(sidecar) as j:
                        meta = json.load(j)
                    function, smem, threads, takes_map = meta["function"], meta["shared"], meta.get("threads", 384), True
                    persistent = meta.get("persistent", False)
                    box_rows = meta.get("boxRows", 256)
                    takes_map_b = meta.get("mapB", False)
                    # A build that rounds A once into a scratch copy Ar (examples/sgemm-wgmma-rounded.ts, in git history:
                    # tensor maps that round as they copy replaced it): A's map describes Ar, and Ar and the flags
                    # follow the maps; the kernel leaves its flags at 0.
                    rounds_a = meta.get("roundsA", False)
                else:
                    function, smem, threads, takes_map = next(v for key, v in LANG_BUILDS.items() if f.startswith(key + "_") or f == key + ".cubin")
                    box_rows, takes_map_b, rounds_a = 256, False, False
                bm, ws = 256, 0
                fn = driver.function(os.path.join(args.cubins, f), function, smem)
                grid = (n // BN, m // bm, 1)
                if persistent:
                    grid = (min((n // BN) * (m // bm), props.multi_processor_count), 1, 1)
                block = (threads, 1, 1)
            else:
                bm, bk, stages = s["BM"], s.get("BK", 32), s["STAGES"]
                ws = s.get("WS", 0)
                # B's k-tile: padded rows for cp.async, or four dense 32-column boxes by TMA (BT1).
                b_tile = bk * BN * 4 if s.get("BTMA") else bk * (BN + 8) * 4
                smem = stages * (bm * bk * 4 + b_tile) + 1024 + (256 if ws else 0)
                if s.get("RNDA") == 3:
                    # Staging slots of half an A k-tile (WS_SD, 4 unless the name says).
                    smem += s.get("SD", 4) * bm * bk * 2
                fn = driver.function(os.path.join(args.cubins, f), "wgmma_probe_ws" if ws else "wgmma_probe", smem)
                grid = ((m // bm) * (n // BN), 1, 1)
                if s.get("PERSIST"):
                    # One block a multiprocessor (a whole number of clusters), each walking tiles.
                    cluster = s.get("CLUSTER", 1)
                    grid = (min(grid[0], props.multi_processor_count // cluster * cluster), 1, 1)
                block = (384 if ws else 256, 1, 1)
            registers[f] = driver.attribute(fn, tm.CU_FUNC_ATTRIBUTE_NUM_REGS)
            packed = []
            for a, b, c in sets:
                values = [("i32", m), ("i32", n), ("i32", k), ("f32", 1.0), ("ptr", a.data_ptr()), ("ptr", b.data_ptr()), ("f32", 0.0), ("ptr", c.data_ptr())]
                array, storage = tm.pack_arguments(values)
                if lang and takes_map:
                    # The rung takes A's tensor map as a buffer after C (createTensorMap's bytes, made here the same way).
                    if rounds_a:
                        scratch = torch.full_like(a, float("nan"))
                        flags = torch.zeros(2 * (m // 128) * (k // 32) + m // 128 + 1, dtype=torch.int32, device=device)
                        if "_PRE" in f:
                            # Timing only: Ar holds A rounded already (cvt.rna's bits), every half k-tile is
                            # claimed and every round and row half counted whole, restored before each launch (the
                            # kernel sets them back to 0): what the checks cost without any rounding.
                            scratch.copy_(rounded_tf32(a))
                            half_tiles, steps = (m // 128) * (k // 32), k // 32
                            claims = meta.get("claims", 8)
                            image = torch.zeros_like(flags)
                            image[:half_tiles] = 1
                            image[half_tiles : 2 * half_tiles] = torch.cat([torch.tensor([max(0, min(claims, steps - r * claims)) for r in range(steps)], dtype=torch.int32)] * (m // 128)).to(device)
                            # Each row half's count, whole (the kernels that read one then skip the claims and waits).
                            image[2 * half_tiles : 2 * half_tiles + m // 128] = steps
                            preset[f] = preset.get(f, []) + [(flags, image)]
                        else:
                            lang_scratch[f] = lang_scratch.get(f, []) + [flags]
                    _, address = tensor_map_a(driver, (scratch if rounds_a else a).data_ptr(), m, k, box_rows)
                    device_maps = [torch.frombuffer(bytearray(ctypes.string_at(address, 128)), dtype=torch.uint8).to(device)]
                    if takes_map_b:
                        # And B's, in boxes of 32 k-rows x 32 columns.
                        image = driver.tensor_map(b.data_ptr(), k, n, 32, 32)
                        device_maps.append(torch.frombuffer(bytearray(image), dtype=torch.uint8).to(device))
                    values = values + [("ptr", d.data_ptr()) for d in device_maps]
                    if rounds_a:
                        values = values + [("ptr", scratch.data_ptr()), ("ptr", flags.data_ptr())]
                        device_maps = device_maps + [scratch, flags]
                    array, storage = tm.pack_arguments(values)
                    storage = storage + device_maps
                elif ws and s.get("GMAP"):
                    # The map's 128 bytes in a device buffer, passed as a pointer (the language's tensor maps).
                    buffer, address = tensor_map_a(driver, a.data_ptr(), m, k, bm)
                    device_map = torch.frombuffer(bytearray(ctypes.string_at(address, 128)), dtype=torch.uint8).to(device)
                    values = values + [("ptr", device_map.data_ptr())]
                    array, storage = tm.pack_arguments(values)
                    storage = storage + [device_map]
                elif ws:
                    # With clusters of two (CL2) each block copies half of A's tile: boxes of BM / 2 rows. A build
                    # that rounds A once (ON1) copies from its scratch copy Ar, which the map then describes.
                    once = s.get("ONCE", 0)
                    if once:
                        scratch = torch.empty_like(a)
                        # A flag a half k-tile, then (CO1) a count a row half.
                        flags = torch.zeros((m // (bm // 2)) * (k // 32 + 1), dtype=torch.int32, device=device)
                        if s.get("PREROUND"):
                            # Timing only (PR1): Ar already holds A rounded to TF32 (as cvt.rna: half an ulp added to
                            # the magnitude's bits, the low 13 cleared), every flag says 2 and every count KT, so the
                            # kernel only checks: what the checks cost without any rounding in the launch.
                            scratch.copy_(rounded_tf32(a))
                            flags.view(-1)[: (m // (bm // 2)) * (k // 32)] = 2
                            flags.view(-1)[(m // (bm // 2)) * (k // 32):] = k // 32
                    buffer, address = tensor_map_a(driver, (scratch if once else a).data_ptr(), m, k, bm // s.get("CLUSTER", 1))
                    storage = storage + [buffer]
                    extra = [address]
                    if s.get("BTMA"):
                        # B (K x N) in boxes of 32 k-rows x 32 columns, 128-byte swizzle.
                        image = driver.tensor_map(b.data_ptr(), k, n, 32, 32)
                        buffer_b = ctypes.create_string_buffer(256)
                        address_b = (ctypes.addressof(buffer_b) + 63) & ~63
                        ctypes.memmove(address_b, image, 128)
                        storage = storage + [buffer_b]
                        extra.append(address_b)
                    if once:
                        # Then Ar and the flags, as pointers; the flags are zeroed before each launch (timed with it).
                        pointers = [ctypes.c_void_p(scratch.data_ptr()), ctypes.c_void_p(flags.data_ptr())]
                        storage = storage + pointers + [scratch, flags]
                        extra += [ctypes.addressof(x) for x in pointers]
                    array = (ctypes.c_void_p * (len(values) + len(extra)))(*list(array), *extra)
                packed.append((array, storage, flags if ws and not lang and s.get("ONCE") and not s.get("PREROUND") else None))
            info[f] = {"settings": s, "grid": grid, "block": list(block), "dynamicSharedBytes": smem}

            def ours(i, fn=fn, grid=grid, block=block, smem=smem, packed=packed, restore=preset.get(f)):
                if packed[i][2] is not None:  # a build that rounds A once: its flags start at 0 each launch
                    packed[i][2].zero_()
                if restore:  # a pre-rounded language build: its flags as if every half k-tile were rounded
                    restore[i][0].copy_(restore[i][1])
                driver.launch(fn, grid, block, smem, stream, packed[i][0])

            launch[f] = ours

        def mm(tf32):
            def run(i):
                a, b, c = sets[i]
                torch.backends.cuda.matmul.allow_tf32 = tf32
                torch.mm(a, b, out=c)
                torch.backends.cuda.matmul.allow_tf32 = False

            return run

        launch[tm.TORCH_TF32] = mm(True)
        launch[tm.TORCH_FP32] = mm(False)
        names = [tm.TORCH_TF32, tm.TORCH_FP32] + cubins
        if triton_run:

            def tr(i):
                a, b, c = sets[i]
                triton_run(a, b, c)

            launch["triton TF32"] = tr
            names.append("triton TF32")
        if args.profile:
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStart()
            for name in [tm.TORCH_TF32] + cubins:
                launch[name](0)
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()
            continue
        refs = [s[0].double() @ s[1].double() for s in sets[:2]]
        errors = {}
        for name in names:
            found = []
            for i, ref in enumerate(refs):
                sets[i][2].fill_(float("nan"))
                launch[name](i)
                torch.cuda.synchronize()
                found.append(tm.relative_error(sets[i][2], ref))
            errors[name] = tm.worst_error(found)
            if any(bool(flags.count_nonzero().item()) for flags in lang_scratch.get(name, [])):
                # A kernel that rounds A once must leave its flags at 0 for the next launch: a wrong result.
                print(f"{name}: flags not left at 0", file=sys.stderr, flush=True)
                errors[name] = (float("nan"), True)
        del refs
        for name in names:
            for i in range(2):
                launch[name](i)
        torch.cuda.synchronize()
        rounds = args.rounds
        times = tm.time_interleaved(torch, launch, names, rounds, len(sets))
        tf32_ms = tm.median(times[tm.TORCH_TF32])
        rows = []
        for name in names:
            ms = tm.median(times[name])
            err, nonfinite = errors[name]
            ok, why = tm.verdict(err, nonfinite, k, "tf32")
            row = {"id": name, "ms": ms, "tflops": tm.tflops(m, n, k, ms), "percentOfTorchTf32": 100.0 * tf32_ms / ms, "relativeError": err if math.isfinite(err) else None, "pass": ok, "samples": len(times[name])}
            if name in info:
                row.update(info[name])
                row["registers"] = registers[name]
            if why:
                row["problem"] = why
            rows.append(row)
            print(f"{label}: {row['tflops']:7.1f} TFLOP/s {row['percentOfTorchTf32']:6.1f} % of torch.mm TF32  err {err:.2e} {'pass' if ok else 'FAIL ' + why}  {name}", flush=True)
        entry = {"m": m, "n": n, "k": k, "inputSets": sets_count, "rounds": rounds, "tf32Bound": tm.tf32_bound(k), "rows": rows}
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
