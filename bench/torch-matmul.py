#!/usr/bin/env python3
"""tskernel's SGEMM kernels against torch.mm, in one PyTorch process on the GPU machine.

Runs the launch plan that bench/torch-matmul-plan.ts wrote (for each shape: what matmul() picks, and every
other build of the fast rungs that takes the shape): loads each nvcc-built cubin through the CUDA driver API
(ctypes) into PyTorch's context, launches the kernels on PyTorch's tensors and current stream, checks every
result against a float64 product (relative error ||out - ref|| / ||ref||, outputs poisoned with NaN first,
on two input sets), and times them interleaved with torch.mm, FP32 with TF32 off, and for reference with
TF32 on: several rounds, each kernel once per round on a rotating input set, CUDA events around each launch,
the median kept. The 16-bit rungs (bf16, f16) run on the same inputs rounded to their type, beside torch.mm in
that type, checked against float64 of the 16-bit inputs (the output's unit roundoff plus k·2^-23, as
matmulTolerance16). Inputs rotate over enough sets to exceed twice the L2. Each round starts behind a GPU sleep
so that the round's launches queue up and no event times the host. Writes a JSON report and prints a table.

    python3 bench/torch-matmul.py --plan torch-plan.json --out torch-matmul.json [--shapes MxNxK,...]
        [--only ID,...] [--profile]

--profile launches each kernel and torch.mm once per shape between cudaProfilerStart/Stop, for Nsight Compute
(ncu --profile-from-start off). The logic that needs no GPU is tested by bench/test_torch_matmul.py.
"""

from __future__ import annotations

import argparse
import ctypes
import json
import math
import os
import sys
import time

CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES = 3
CU_FUNC_ATTRIBUTE_NUM_REGS = 4
CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8

# The scalar arguments of the matmul rungs (M, N, K, alpha, A, B, beta, C) by parameter name: C = A·B.
SCALARS = {"M": "m", "N": "n", "K": "k", "alpha": 1.0, "beta": 0.0}
MATMUL_PARAMS = ["M", "N", "K", "alpha", "A", "B", "beta", "C"]
# The stream-k rung's further arguments: its scratch buffers (zeros, which it leaves zero) and the number of
# blocks that share the last wave, which the plan gives with the candidate (the grid depends on it).
STREAM_K_PARAMS = ["partials", "arrivals", "streamBlocks"]
TORCH_FP32 = "torch.mm FP32"
TORCH_TF32 = "torch.mm TF32"
# torch.mm in the 16-bit types: the yardstick of the 16-bit rungs (issue 22), on the same inputs rounded to the type.
TORCH_16 = {"bf16": "torch.mm bf16", "f16": "torch.mm f16"}


# ---------------------------------------------------------------------------------------------------------
# The parts that need no GPU.


def median(values):
    ordered = sorted(values)
    if not ordered:
        raise ValueError("median of nothing")
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def input_sets(m, n, k, l2_bytes, cap=8):
    """How many input sets to rotate over: enough that A, B and C together exceed twice the L2 (so each
    launch reads its operands from device memory, as in a real workload), at least 2, at most `cap`."""
    per_set = 4 * (m * k + k * n + m * n)
    return max(2, min(cap, math.ceil(2 * l2_bytes / per_set) + 1))


def rounds_for(estimate_ms, launches_per_round, budget_ms=6000.0, low=7, high=31):
    """Rounds of interleaved launches that fit in a time budget per shape, within [low, high]."""
    per_round = max(estimate_ms, 1e-3) * launches_per_round
    return int(max(low, min(high, budget_ms // per_round)))


def time_interleaved(torch, launch, names, rounds, set_count):
    """The harnesses' timing: `rounds` rounds, each behind about 1.5 ms of GPU sleep (so the round's launches queue
    up behind it), every name launched once per round in an order that rotates by round, on input set (round +
    position) % set_count, CUDA events around each launch. Returns {name: [ms, ...]}."""
    events = []
    for r in range(rounds):
        torch.cuda._sleep(3_000_000)
        order = names[r % len(names) :] + names[: r % len(names)]
        for i, name in enumerate(order):
            e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            e0.record()
            launch[name]((r + i) % set_count)
            e1.record()
            events.append((name, e0, e1))
    torch.cuda.synchronize()
    timings = {name: [] for name in names}
    for name, e0, e1 in events:
        timings[name].append(e0.elapsed_time(e1))
    return timings


def tflops(m, n, k, ms):
    return 2.0 * m * n * k / (ms * 1e9)


def relative_error(out, ref):
    """||out - ref|| / ||ref|| (Frobenius, in float64) and the count of non-finite outputs. Takes PyTorch
    tensors or NumPy arrays; a NaN or infinity anywhere makes the error NaN."""
    if hasattr(out, "double"):  # torch
        import torch

        o = out.double()
        nonfinite = int((~torch.isfinite(o)).sum().item())
        diff = float(torch.linalg.norm(o - ref.double()).item())
        norm = float(torch.linalg.norm(ref.double()).item())
    else:
        import numpy

        o = numpy.asarray(out, dtype=numpy.float64)
        r = numpy.asarray(ref, dtype=numpy.float64)
        nonfinite = int((~numpy.isfinite(o)).sum())
        diff = float(numpy.linalg.norm(o - r))
        norm = float(numpy.linalg.norm(r))
    error = float("nan") if nonfinite else (diff / norm if norm > 0 else diff)
    return error, nonfinite


def worst_error(found):
    """The worst of several (error, non-finite count) checks: any non-finite output, else the largest error."""
    bad = [f for f in found if f[1] or math.isnan(f[0])]
    if bad:
        return bad[0]
    return max(found, key=lambda f: f[0])


def fp32_bound(k):
    """The error an FP32 product of depth k may have (k·2^-23, the bound the bench uses for every rung)."""
    return max(k, 8) * 2.0**-23


def tf32_bound(k):
    """The normwise error a TF32 product may have (runtime/matmul/matmul.ts, matmulTolerance): the FP32 bound
    plus 2^-9, four times the 2^-11 that rounding the inputs to TF32 gives with independent roundings."""
    return fp32_bound(k) + 2.0**-9


def half_bound(k, dtype):
    """The normwise error a 16-bit product may have against float64 of the same 16-bit inputs
    (runtime/matmul/matmul16.ts, matmulTolerance16): the output's unit roundoff (2^-8 bf16, 2^-11 f16) plus k·2^-23."""
    return (2.0**-8 if dtype == "bf16" else 2.0**-11) + max(k, 16) * 2.0**-23


def verdict(error, nonfinite, k, precision="fp32"):
    """Whether a result passes: every element finite, and the relative error under its precision's bound
    ("fp32", "tf32", or a 16-bit type "bf16" / "f16")."""
    if nonfinite:
        return False, f"{nonfinite} non-finite outputs (the NaN poison survived, or the kernel made NaN)"
    if precision in TORCH_16:
        bound, name = half_bound(k, precision), precision
    else:
        bound, name = (tf32_bound(k), "TF32") if precision == "tf32" else (fp32_bound(k), "FP32")
    if not error < bound:
        return False, f"relative error {error:.3e} over the {name} bound {bound:.3e}"
    return True, ""


def validate_plan(plan):
    """Problems with a plan, as sentences (empty: it can run)."""
    problems = []
    dirs = plan.get("kernelDirs", [])
    if not plan.get("shapes"):
        problems.append("the plan has no shapes")
    for shape in plan.get("shapes", []):
        label = f"{shape.get('m')}x{shape.get('n')}x{shape.get('k')}"
        ids = [c["id"] for c in shape.get("candidates", [])]
        if shape.get("matmul") not in ids:
            problems.append(f"{label}: matmul()'s choice {shape.get('matmul')!r} is not among its candidates")
        for c in shape.get("candidates", []):
            if not 0 <= c.get("dir", -1) < len(dirs):
                problems.append(f"{label}: {c['id']} names kernel directory {c.get('dir')}, the plan has {len(dirs)}")
            params = [p["name"] for p in c.get("params", [])]
            # A stream-k rung takes its scratch and block count after C; a rung that takes A's tensor map
            # (copyTile) has it after C, the clustered TF32 rung B's after that, the 16-bit rungs B's and C's.
            expected = MATMUL_PARAMS + ([c["tensorMapA"]["param"]] if c.get("tensorMapA") else [])
            expected += [c["tensorMapB"]["param"]] if c.get("tensorMapB") else []
            expected += [c["tensorMapsBC"][x]["param"] for x in ("B", "C")] if c.get("tensorMapsBC") else []
            if c.get("dtype") not in (None, "bf16", "f16"):
                problems.append(f"{label}: {c['id']} has dtype {c.get('dtype')!r}, not bf16 or f16")
            if params != expected and params != MATMUL_PARAMS + STREAM_K_PARAMS:
                problems.append(f"{label}: {c['id']} has parameters {params}, not a matmul rung's")
            elif params == MATMUL_PARAMS + STREAM_K_PARAMS and not isinstance(c.get("streamK", {}).get("blocks"), int):
                problems.append(f"{label}: {c['id']} is a stream-k kernel without streamK.blocks")
            if len(c.get("grid", [])) != 3 or len(c.get("block", [])) != 3:
                problems.append(f"{label}: {c['id']} needs a 3-D grid and block")
    return problems


def argument_values(params, m, n, k, pointers, stream_blocks=None):
    """Each kernel parameter's (type, value), in order: sizes, alpha and beta from SCALARS, buffers from
    `pointers` (name -> device address), streamBlocks (stream-k) from `stream_blocks`."""
    sizes = {"m": m, "n": n, "k": k, "streamBlocks": stream_blocks}
    values = []
    for p in params:
        if p["kind"] == "buffer":
            values.append(("ptr", pointers[p["name"]]))
        elif p["kind"] == "scalar":
            v = "streamBlocks" if p["name"] == "streamBlocks" else SCALARS[p["name"]]
            values.append((p["type"], sizes[v] if isinstance(v, str) else v))
        else:
            raise ValueError(f"parameter {p['name']} of kind {p['kind']} cannot be passed at launch")
    return values


def pack_arguments(values):
    """The void** array cuLaunchKernel takes (a pointer to each argument's storage), and the storage, which
    must stay alive as long as the array is used."""
    storage = []
    for kind, v in values:
        if kind == "ptr":
            storage.append(ctypes.c_void_p(v))
        elif kind == "i32":
            storage.append(ctypes.c_int32(v))
        elif kind == "u32":
            storage.append(ctypes.c_uint32(v))
        elif kind == "f32":
            storage.append(ctypes.c_float(v))
        else:
            raise ValueError(f"no ctypes type for {kind}")
    array = (ctypes.c_void_p * len(storage))(*[ctypes.addressof(s) for s in storage])
    return array, storage


def summarize_shape(shape, timings, errors, registers):
    """One shape's report from the samples: every candidate's median as a percentage of torch.mm FP32's,
    with the matmul() choice and the fastest passing candidate picked out."""
    m, n, k = shape["m"], shape["n"], shape["k"]
    fp32_ms = median(timings[TORCH_FP32])
    tf32_ms = median(timings[TORCH_TF32]) if timings.get(TORCH_TF32) else None
    half_ms = {dtype: median(timings[name]) for dtype, name in TORCH_16.items() if timings.get(name)}
    rows = []
    for name, samples in timings.items():
        ms = median(samples)
        error, nonfinite = errors.get(name, (float("nan"), 0))
        ours = not name.startswith("torch.mm")
        candidate = next((c for c in shape["candidates"] if c["id"] == name), {})
        torch_dtype = next((dtype for dtype, torch_name in TORCH_16.items() if torch_name == name), None)
        if ours:
            precision = candidate.get("dtype") or candidate.get("precision", "fp32")
        else:
            precision = torch_dtype or ("tf32" if name == TORCH_TF32 else "fp32")
        # torch.mm in a 16-bit type is held to the same bound as ours (it must pass on the same inputs too).
        ok, why = verdict(error, nonfinite, k, precision) if ours or torch_dtype else (True, "")
        row = {
            "id": name,
            "rung": candidate.get("rung", name),
            "precision": precision,
            "function": candidate.get("function"),
            "constants": candidate.get("constants"),
            "grid": candidate.get("grid"),
            "block": candidate.get("block"),
            "registers": registers.get(name),
            "ms": ms,
            "tflops": tflops(m, n, k, ms),
            "percentOfTorchFp32": 100.0 * fp32_ms / ms,
            "percentOfTorchTf32": 100.0 * tf32_ms / ms if tf32_ms else None,
            # A 16-bit row's percentage of torch.mm in its type (the 16-bit rows' yardstick).
            "percentOfTorch16": 100.0 * half_ms[precision] / ms if precision in half_ms else None,
            "relativeError": error if math.isfinite(error) else None,
            "nonFinite": nonfinite,
            "pass": ok,
            "samples": len(samples),
            "isMatmulChoice": name == shape["matmul"],
            "isMatmulTf32Choice": name == shape.get("matmulTf32"),
            "isMatmul16Choice": name in (shape.get("matmulBf16"), shape.get("matmulF16")),
        }
        if why:
            row["problem"] = why
        rows.append(row)
    ours = [r for r in rows if not r["id"].startswith("torch.mm")]
    passing = [r for r in ours if r["pass"] and r["precision"] == "fp32"]
    passing_tf32 = [r for r in ours if r["pass"] and r["precision"] == "tf32"]
    halves = {}
    for dtype, torch_name in TORCH_16.items():
        torch_row = next((r for r in rows if r["id"] == torch_name), None)
        if torch_row is None:
            continue
        passing_16 = [r for r in ours if r["pass"] and r["precision"] == dtype]
        halves[dtype] = {
            "torch": torch_row,
            "matmul": next((r for r in ours if r["isMatmul16Choice"] and r["precision"] == dtype), None),
            "best": min(passing_16, key=lambda r: r["ms"]) if passing_16 else None,
        }
    return {
        "m": m,
        "n": n,
        "k": k,
        # Per 16-bit type: torch.mm in it, matmul(…, { dtype })'s choice and our fastest passing kernel.
        "halves": halves,
        "torchFp32": next(r for r in rows if r["id"] == TORCH_FP32),
        "torchTf32": next((r for r in rows if r["id"] == TORCH_TF32), None),
        "matmul": next((r for r in ours if r["isMatmulChoice"]), None),
        "best": min(passing, key=lambda r: r["ms"]) if passing else None,
        "matmulTf32": next((r for r in ours if r["isMatmulTf32Choice"]), None),
        "bestTf32": min(passing_tf32, key=lambda r: r["ms"]) if passing_tf32 else None,
        "candidates": sorted(ours, key=lambda r: r["ms"]),
    }


def format_table(report):
    """The summary table: per shape, torch.mm (FP32, TF32), matmul()'s choice and our fastest FP32 kernel, in
    TFLOP/s and as a percentage of torch.mm FP32, and our fastest TF32 (tensor-core) kernel as a percentage of
    torch.mm TF32."""
    nan = float("nan")
    lines = [f"{'shape':>16}  {'torch FP32':>10}  {'TF32':>7}  {'matmul()':>8}  {'%':>6}  {'best':>7}  {'%':>6}  {'TF32 best':>9}  {'%TF32':>6}  best kernel"]
    for s in report["shapes"]:
        choice, best, tf32 = s["matmul"] or {}, s["best"] or {}, s["torchTf32"] or {}
        ours_tf32 = s.get("bestTf32") or {}
        lines.append(
            f"{s['m']}x{s['n']}x{s['k']:<5}".rjust(16)
            + f"  {s['torchFp32']['tflops']:10.2f}  {tf32.get('tflops', nan):7.1f}  {choice.get('tflops', nan):8.2f}  {choice.get('percentOfTorchFp32', nan):5.1f}%"
            + f"  {best.get('tflops', nan):7.2f}  {best.get('percentOfTorchFp32', nan):5.1f}%"
            + f"  {ours_tf32.get('tflops', nan):9.1f}  {ours_tf32.get('percentOfTorchTf32') or nan:5.1f}%  {best.get('id', '-')}"
        )
    halves = [(s, dtype, h) for s in report["shapes"] for dtype, h in (s.get("halves") or {}).items()]
    if halves:
        lines.append(f"{'shape':>16}  {'type':>4}  {'torch.mm':>8}  {'matmul()':>8}  {'%':>6}  {'best':>7}  {'%':>6}  best kernel")
        for s, dtype, h in halves:
            choice, best = h["matmul"] or {}, h["best"] or {}
            lines.append(
                f"{s['m']}x{s['n']}x{s['k']:<5}".rjust(16)
                + f"  {dtype:>4}  {h['torch']['tflops']:8.1f}  {choice.get('tflops', nan):8.1f}  {choice.get('percentOfTorch16') or nan:5.1f}%"
                + f"  {best.get('tflops', nan):7.1f}  {best.get('percentOfTorch16') or nan:5.1f}%  {best.get('id', '-')}"
            )
    return "\n".join(lines)


# ---------------------------------------------------------------------------------------------------------
# The GPU part.


class Driver:
    """The few CUDA driver calls the harness needs, in PyTorch's (primary) context."""

    def __init__(self):
        self.cuda = ctypes.CDLL("libcuda.so.1")
        self.modules = {}

    def check(self, name, result):
        if result != 0:
            text = ctypes.c_char_p()
            self.cuda.cuGetErrorString(result, ctypes.byref(text))
            raise RuntimeError(f"{name} failed: {result} {text.value.decode() if text.value else ''}")

    # cuTensorMapEncodeTiled's element types (CUtensorMapDataType) with their sizes in bytes.
    # "tf32" is f32 in memory that the copy rounds to TF32 (CU_TENSOR_MAP_DATA_TYPE_TFLOAT32: to nearest, ties to even).
    TENSOR_MAP_TYPES = {"f32": (7, 4), "f16": (6, 2), "bf16": (9, 2), "u8": (0, 1), "tf32": (11, 4)}

    def tensor_map(self, pointer, rows, cols, box_rows, box_cols, dtype="f32"):
        """The 128 bytes of the TMA descriptor of a row-major rows x cols tensor of `dtype` (f32, f16, bf16) at
        `pointer`, in boxes of box_rows x box_cols, 128-byte swizzle (cuTensorMapEncodeTiled, as the runtime's
        createTensorMap makes it)."""
        code, size = self.TENSOR_MAP_TYPES[dtype]
        buffer = ctypes.create_string_buffer(256)
        address = (ctypes.addressof(buffer) + 63) & ~63
        u64x2, u32x2 = ctypes.c_uint64 * 2, ctypes.c_uint32 * 2
        self.check(
            "cuTensorMapEncodeTiled",
            self.cuda.cuTensorMapEncodeTiled(
                ctypes.c_void_p(address), code, 2, ctypes.c_void_p(pointer),  # rank 2
                u64x2(cols, rows), (ctypes.c_uint64 * 1)(cols * size), u32x2(box_cols, box_rows), u32x2(1, 1),
                0, 3, 3, 0,  # no interleave, 128-byte swizzle, 256-byte L2 promotion, zeros outside
            ),
        )
        return ctypes.string_at(address, 128)

    def function(self, path, name, dynamic_shared):
        context = ctypes.c_void_p()
        self.check("cuCtxGetCurrent", self.cuda.cuCtxGetCurrent(ctypes.byref(context)))
        if not context.value:
            raise RuntimeError("no current CUDA context: PyTorch's CUDA must be initialised first")
        if path not in self.modules:
            with open(path, "rb") as f:
                image = f.read()
            module = ctypes.c_void_p()
            self.check("cuModuleLoadData", self.cuda.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image)))
            self.modules[path] = module
        function = ctypes.c_void_p()
        self.check("cuModuleGetFunction", self.cuda.cuModuleGetFunction(ctypes.byref(function), self.modules[path], name.encode()))
        if dynamic_shared > 0:
            self.check(
                "cuFuncSetAttribute",
                self.cuda.cuFuncSetAttribute(function, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, ctypes.c_int(dynamic_shared)),
            )
        return function

    def attribute(self, function, attribute):
        value = ctypes.c_int()
        self.check("cuFuncGetAttribute", self.cuda.cuFuncGetAttribute(ctypes.byref(value), attribute, function))
        return value.value

    def launch(self, function, grid, block, shared, stream, arguments):
        dims = [ctypes.c_uint(int(x)) for x in (*grid, *block)]
        self.check("cuLaunchKernel", self.cuda.cuLaunchKernel(function, *dims, ctypes.c_uint(shared), ctypes.c_void_p(stream), arguments, None))


def tensor_map_kind(spec, dtype, plain_f32_maps=False):
    """The element type of a rung's tensor map: "tf32" (f32 that the copy rounds to TF32) where the plan says the map
    rounds (the TF32 rungs' A and B), unless `plain_f32_maps` asks for the truncating maps of before; else the
    rung's dtype."""
    return "tf32" if spec.get("roundToTf32") and dtype == "f32" and not plain_f32_maps else dtype


def run(plan, plan_dir, only=None, profile=False, shapes=None, log=print, plain_f32_maps=False):
    import torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    device = torch.device("cuda")
    torch.zeros(1, device=device)
    props = torch.cuda.get_device_properties(device)
    l2 = getattr(props, "L2_cache_size", 50 * 2**20)
    driver = Driver()
    stream = torch.cuda.current_stream().cuda_stream
    report = {
        "generator": "bench/torch-matmul.py",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": props.name,
        "multiprocessors": props.multi_processor_count,
        "l2Bytes": l2,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "method": "CUDA events around each launch on PyTorch's stream; our kernels and torch.mm interleaved, one launch "
        "each per round on a rotating input set, each round behind a GPU sleep; the median per kernel; float64 checks on "
        "two input sets with C poisoned (NaN) first; TF32 off except in the torch.mm TF32 row and our tensor-core (TF32) kernels, which are compared with it "
        "(their tensor maps of the TFLOAT32 type, rounding A and B as they copy, unless plainF32Maps); "
        "the 16-bit rungs on the same inputs rounded to bf16 or f16, compared with torch.mm in that type and checked against float64 of the 16-bit inputs",
        "plainF32Maps": plain_f32_maps,
        "shapes": [],
    }
    for shape in plan["shapes"]:
        m, n, k = shape["m"], shape["n"], shape["k"]
        if shapes is not None and f"{m}x{n}x{k}" not in shapes:
            continue
        candidates = [
            c
            for c in shape["candidates"]
            if only is None or c["id"] in only or c["function"] in only or c["rung"] in only or c["id"] in (shape["matmul"], shape.get("matmulTf32"), shape.get("matmulBf16"), shape.get("matmulF16"))
        ]
        sets_count = 1 if profile else input_sets(m, n, k, l2)
        generator = torch.Generator(device=device).manual_seed(1000 * m + k)
        sets = []
        for _ in range(sets_count):
            a = torch.rand(m, k, device=device, generator=generator) * 2 - 1
            b = torch.rand(k, n, device=device, generator=generator) * 2 - 1
            sets.append((a, b, torch.empty(m, n, device=device)))
        # The 16-bit rungs' inputs: the same values rounded to the type (to nearest even, as the runtime rounds),
        # beside torch.mm in that type.
        torch_types = {"bf16": torch.bfloat16, "f16": torch.float16}
        dtypes = sorted({c["dtype"] for c in candidates if c.get("dtype")})
        half_sets = {dtype: [(a.to(torch_types[dtype]), b.to(torch_types[dtype]), torch.empty(m, n, device=device, dtype=torch_types[dtype])) for a, b, _ in sets] for dtype in dtypes}
        torch_halves = {TORCH_16[dtype]: dtype for dtype in dtypes}

        def sets_of(name):
            """The input sets a launcher runs on: the 16-bit ones for torch.mm in a type and for our 16-bit rungs."""
            dtype = torch_halves.get(name) or (loaded[name][0].get("dtype") if name in loaded else None)
            return half_sets[dtype] if dtype else sets
        loaded = {}
        registers = {}
        for c in candidates:
            path = os.path.join(plan_dir, plan["kernelDirs"][c["dir"]], c["cubin"])
            function = driver.function(path, c["function"], c["dynamicSharedBytes"])
            loaded[c["id"]] = (c, function)
            registers[c["id"]] = driver.attribute(function, CU_FUNC_ATTRIBUTE_NUM_REGS)
            if driver.attribute(function, CU_FUNC_ATTRIBUTE_LOCAL_SIZE_BYTES):
                log(f"warning: {c['function']} uses local memory (spills)")

        scratch = {}

        def launcher(name):
            if name.startswith("torch.mm"):
                tf32 = name == TORCH_TF32
                own = sets_of(name)

                def mm(index):
                    a, b, c = own[index]
                    torch.backends.cuda.matmul.allow_tf32 = tf32
                    torch.mm(a, b, out=c)
                    torch.backends.cuda.matmul.allow_tf32 = False

                return mm
            c, function = loaded[name]
            pointers = {}
            stream_k = c.get("streamK")
            if stream_k:
                # Zeros, shared by the input sets: the kernel leaves them zero, and launches on one stream follow
                # each other.
                scratch[name] = (torch.zeros(stream_k["partials"], device=device), torch.zeros(stream_k["arrivals"], dtype=torch.int32, device=device))
                pointers = {"partials": scratch[name][0].data_ptr(), "arrivals": scratch[name][1].data_ptr()}
            # Each input set's packed arguments, made once: the timed loop only launches.
            packed = []
            dtype = c.get("dtype") or "f32"
            for a, b, out in sets_of(name):
                buffers = {**pointers, "A": a.data_ptr(), "B": b.data_ptr(), "C": out.data_ptr()}
                keep = []

                def device_map(tensor, rows, cols, spec):
                    # A tensor map in device memory (the runtime's createTensorMap), kept alive with the arguments;
                    # the TF32 rungs' maps round to TF32 as they copy (TFLOAT32) unless --plain-f32-maps.
                    kind = tensor_map_kind(spec, dtype, plain_f32_maps)
                    image = driver.tensor_map(tensor.data_ptr(), rows, cols, spec["boxRows"], spec["boxCols"], kind)
                    mapped = torch.frombuffer(bytearray(image), dtype=torch.uint8).to(tensor.device)
                    buffers[spec["param"]] = mapped.data_ptr()
                    keep.append(mapped)

                if c.get("tensorMapA"):
                    device_map(a, m, k, c["tensorMapA"])
                if c.get("tensorMapB"):
                    # The clustered TF32 rung copies B by the tensor memory accelerator too.
                    device_map(b, k, n, c["tensorMapB"])
                if c.get("tensorMapsBC"):
                    # The 16-bit rungs also copy B in and store C out by the tensor memory accelerator.
                    device_map(b, k, n, c["tensorMapsBC"]["B"])
                    device_map(out, m, n, c["tensorMapsBC"]["C"])
                array, storage = pack_arguments(argument_values(c["params"], m, n, k, buffers, stream_k and stream_k["blocks"]))
                packed.append((array, storage + keep))

            def ours(index):
                driver.launch(function, c["grid"], c["block"], c["dynamicSharedBytes"], stream, packed[index][0])

            return ours

        # (Nsight Compute is given the FP32 torch.mm only.)
        names = ([TORCH_FP32] if profile else [TORCH_FP32, TORCH_TF32]) + [TORCH_16[dtype] for dtype in dtypes] + [c["id"] for c in candidates]
        launch = {name: launcher(name) for name in names}
        if profile:
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStart()
            for name in names:
                launch[name](0)
            torch.cuda.synchronize()
            torch.cuda.cudart().cudaProfilerStop()
            log(f"profiled {m}x{n}x{k}: {len(names)} launches")
            continue
        # float64 references of the first two sets; every result checked on both (a race shows as a moving error).
        refs = {id(group): [s[0].double() @ s[1].double() for s in group[:2]] for group in [sets, *half_sets.values()]}
        errors = {}
        for name in names:
            found = []
            own = sets_of(name)
            for index, ref in enumerate(refs[id(own)]):
                own[index][2].fill_(float("nan"))
                launch[name](index)
                torch.cuda.synchronize()
                found.append(relative_error(own[index][2], ref))
            errors[name] = worst_error(found)
            if name in scratch and any(bool(t.count_nonzero().item()) for t in scratch[name]):
                # A stream-k kernel must leave its scratch zero for the next launch, a rounding kernel its flags:
                # count it as a wrong result.
                log(f"{name}: scratch buffers not left zero")
                errors[name] = float("nan")
        del refs
        # Warm-up, and the slowest launch, for the number of rounds.
        start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        estimate = 0.0
        for name in names:
            for i in range(2):
                start.record()
                launch[name](i % len(sets))
                end.record()
            end.synchronize()
            estimate = max(estimate, start.elapsed_time(end))
        rounds = rounds_for(estimate, len(names))
        timings = time_interleaved(torch, launch, names, rounds, len(sets))
        summary = summarize_shape({**shape, "candidates": candidates}, timings, errors, registers)
        summary.update({"inputSets": sets_count, "rounds": rounds})
        report["shapes"].append(summary)
        choice, best = summary["matmul"], summary["best"] or {}
        log(
            f"{m}x{n}x{k}: torch.mm FP32 {summary['torchFp32']['tflops']:.2f} TFLOP/s (TF32 {summary['torchTf32']['tflops']:.1f}, "
            f"error {summary['torchTf32']['relativeError']:.2e}); matmul() {choice['tflops']:.2f} ({choice['percentOfTorchFp32']:.1f} %, "
            f"{'pass' if choice['pass'] else 'FAIL'}); best {best.get('tflops', float('nan')):.2f} ({best.get('percentOfTorchFp32', float('nan')):.1f} %) "
            f"{best.get('id', '-')}; {sets_count} input sets, {rounds} rounds"
        )
        tf32_best = summary.get("bestTf32")
        if tf32_best:
            log(f"  TF32: best {tf32_best['tflops']:.1f} TFLOP/s, {tf32_best['percentOfTorchTf32']:.1f} % of torch.mm TF32, error {tf32_best['relativeError']:.2e}: {tf32_best['id']}")
        for dtype, half in summary["halves"].items():
            best16 = half["best"] or {}
            log(
                f"  {dtype}: torch.mm {half['torch']['tflops']:.1f} TFLOP/s (error {half['torch']['relativeError'] or float('nan'):.2e}); "
                f"best {best16.get('tflops', float('nan')):.1f} ({best16.get('percentOfTorch16') or float('nan'):.1f} %, error {best16.get('relativeError') or float('nan'):.2e}) {best16.get('id', '-')}"
            )
        for row in summary["candidates"]:
            error = row["relativeError"] if row["relativeError"] is not None else float("nan")
            if row["precision"] in TORCH_16:
                vs = f"{row['percentOfTorch16'] or float('nan'):6.1f} % of {row['precision']}"
            else:
                vs = f"{row['percentOfTorchTf32']:6.1f} % of TF32" if row["precision"] == "tf32" else f"{row['percentOfTorchFp32']:6.1f} %"
            log(
                f"    {row['tflops']:7.2f} TFLOP/s {vs}  err {error:.2e}  regs {row['registers']}  "
                f"{'' if row['pass'] else 'FAIL (' + row['problem'] + ') '}{row['id']}"
            )
        del sets, half_sets
        torch.cuda.empty_cache()
    return report


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--plan", required=True)
    parser.add_argument("--out", default="torch-matmul.json")
    parser.add_argument("--only", help="comma-separated candidate ids, function names or rungs (matmul()'s choices always run)")
    parser.add_argument("--shapes", help="comma-separated shapes to run, as MxNxK (default: every shape of the plan)")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument(
        "--plain-f32-maps", action="store_true",
        help="make the TF32 rungs' tensor maps plain f32 (no rounding in the copy: the tensor cores truncate A), for comparison",
    )
    args = parser.parse_args(argv)
    with open(args.plan) as f:
        plan = json.load(f)
    problems = validate_plan(plan)
    if problems:
        print("\n".join(problems), file=sys.stderr)
        return 2
    only = set(args.only.split(",")) if args.only else None
    shapes = set(args.shapes.split(",")) if args.shapes else None
    report = run(plan, os.path.dirname(os.path.abspath(args.plan)), only=only, profile=args.profile, shapes=shapes, log=lambda s: print(s, flush=True), plain_f32_maps=args.plain_f32_maps)
    if args.profile:
        return 0
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    print(format_table(report))
    failed = [r["id"] for s in report["shapes"] for r in s["candidates"] if not r["pass"]]
    failed += [f"{h['torch']['id']} at {s['m']}x{s['n']}x{s['k']}" for s in report["shapes"] for h in (s.get("halves") or {}).values() if not h["torch"]["pass"]]
    if failed:
        print(f"{len(failed)} results failed their float64 check: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
