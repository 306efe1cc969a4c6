#!/usr/bin/env python3
"""PyTorch beside tskernel's memory-bound kernels, in one process, on one GPU (bench/README.md: the method).

The plan (written by `node gpu-run.mjs --only kernels-plan`, from cli/kernels-bench/cases.ts) lists each
case and shape: its buffers, its launches (cubin file, function, grid, block, arguments) and its check. This
script loads our nvcc-built cubins into the PyTorch process through the CUDA driver API (ctypes), launches
them on PyTorch's tensors and current stream, checks our output and PyTorch's against float64 (computed by
PyTorch in float64 on the GPU), then times ours and PyTorch's counterpart alternately, round by round, with
CUDA events, so that clock changes affect both alike; the median of the rounds is kept. The Node bench joins
the JSON this writes with its own rows (`tskernel bench kernels --torch torch.json`).

  python3 torch-reference.py --plan plan.json --out torch.json [--rounds 30]
  python3 torch-reference.py --plan plan.json --profile        # each launch once, inside NVTX ranges, for ncu
  python3 torch-reference.py --plan plan.json --dry-run        # no GPU, no PyTorch: checks the plan, the
                                                               # cubins and the argument packing, and tests
                                                               # the references and checks with numpy
  python3 torch-reference.py --plan plan.json --triton-interpret-test   # no GPU: Triton's kernels (interpreted)
                                                               # and PyTorch's counterparts on CPU tensors
                                                               # against the references and checks

The bf16 cases are also timed against Triton's counterparts (triton_kernels.py, beside this script), where
Triton imports: ours, PyTorch's and Triton's alternately, round by round.
"""

import argparse
import ctypes
import json
import math
import os
import statistics
import sys

UNIT_ROUNDOFF = 2.0 ** -24
U32_POISON = 0xDEADBEEF


def gamma(depth):
    """Worst-case relative error of a summation tree of this depth in f32 (Higham, section 4.2)."""
    return depth * UNIT_ROUNDOFF / (1 - depth * UNIT_ROUNDOFF)


# ---- the CUDA driver, through ctypes ------------------------------------------------------------------------

CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES = 8


class CudaError(RuntimeError):
    pass


class Driver:
    """The few driver calls needed to run a cubin on PyTorch's tensors and stream."""

    def __init__(self, lib=None):
        self.lib = lib or ctypes.CDLL("libcuda.so.1")
        c = ctypes
        sigs = {
            "cuModuleLoadData": [c.POINTER(c.c_void_p), c.c_void_p],
            "cuModuleGetFunction": [c.POINTER(c.c_void_p), c.c_void_p, c.c_char_p],
            "cuFuncSetAttribute": [c.c_void_p, c.c_int, c.c_int],
            "cuLaunchKernel": [c.c_void_p] + [c.c_uint] * 7 + [c.c_void_p, c.POINTER(c.c_void_p), c.POINTER(c.c_void_p)],
            "cuMemcpyDtoDAsync_v2": [c.c_uint64, c.c_uint64, c.c_size_t, c.c_void_p],
            "cuGetErrorName": [c.c_int, c.POINTER(c.c_char_p)],
        }
        for name, argtypes in sigs.items():
            fn = getattr(self.lib, name)
            fn.argtypes = argtypes
            fn.restype = c.c_int
        self.modules = {}

    def check(self, call, code):
        if code != 0:
            name = ctypes.c_char_p()
            self.lib.cuGetErrorName(code, ctypes.byref(name))
            raise CudaError(f"{call} failed with {name.value.decode() if name.value else code} ({code})")

    def function(self, cubin_path, name, dynamic_shared):
        module = self.modules.get(cubin_path)
        if module is None:
            with open(cubin_path, "rb") as f:
                image = f.read()
            self._images = getattr(self, "_images", []) + [image]
            module = ctypes.c_void_p()
            self.check("cuModuleLoadData", self.lib.cuModuleLoadData(ctypes.byref(module), ctypes.c_char_p(image)))
            self.modules[cubin_path] = module
        fn = ctypes.c_void_p()
        self.check(f"cuModuleGetFunction({name})", self.lib.cuModuleGetFunction(ctypes.byref(fn), module, name.encode()))
        if dynamic_shared > 0:
            self.check("cuFuncSetAttribute", self.lib.cuFuncSetAttribute(fn, CU_FUNC_ATTRIBUTE_MAX_DYNAMIC_SHARED_SIZE_BYTES, dynamic_shared))
        return fn

    def launch(self, fn, grid, block, dynamic_shared, stream, params):
        self.check("cuLaunchKernel", self.lib.cuLaunchKernel(fn, *grid, *block, dynamic_shared, stream, params, None))

    def copy(self, destination, source, nbytes, stream):
        self.check("cuMemcpyDtoDAsync", self.lib.cuMemcpyDtoDAsync_v2(destination, source, nbytes, stream))


def pack_arguments(args, pointer_of):
    """cuLaunchKernel's kernelParams: an array of pointers to each argument's value. Returns (array, values),
    and the values must stay alive while the array is used."""
    values = []
    for arg in args:
        if "buffer" in arg:
            values.append(ctypes.c_uint64(pointer_of(arg["buffer"])))
        elif "i32" in arg:
            values.append(ctypes.c_int32(arg["i32"]))
        elif "f32" in arg:
            values.append(ctypes.c_float(arg["f32"]))
        else:
            raise ValueError(f"unknown argument {arg}")
    array = (ctypes.c_void_p * len(values))(*[ctypes.addressof(v) for v in values])
    return array, values


# ---- float64 references and checks (xp: numpy or torch) -------------------------------------------------------

def is_torch(xp):
    return xp.__name__ == "torch"


def row_max(xp, x):
    return xp.amax(x, dim=1, keepdim=True) if is_torch(xp) else xp.amax(x, axis=1, keepdims=True)


def row_sum(xp, x):
    return x.sum(dim=1, keepdim=True) if is_torch(xp) else x.sum(axis=1, keepdims=True)


def cumsum(xp, x):
    return xp.cumsum(x, 0) if is_torch(xp) else xp.cumsum(x)


def exclusive(xp, inclusive):
    zero = inclusive[:1] * 0
    return xp.cat([zero, inclusive[:-1]]) if is_torch(xp) else xp.concatenate([zero, inclusive[:-1]])


def f32(value):
    return float(ctypes.c_float(value).value)


HALF_FORMATS = {"bf16": (8, -126), "f16": (11, -14)}  # significant bits, smallest normal exponent


def ulp(xp, half, x):
    """The spacing of the 16-bit float type's numbers at |x| (float64), as checks.ts's ulpOf: 2^(e - bits + 1)
    for 2^e <= |x| < 2^(e+1), that of the subnormals below."""
    bits, min_exponent = HALF_FORMATS[half]
    _, e = xp.frexp(x)  # x = m * 2^e with 0.5 <= |m| < 1, so floor(log2 |x|) = e - 1
    e = e - 1
    e = e.clamp(min=min_exponent) if is_torch(xp) else xp.maximum(e, min_exponent)
    return xp.ldexp(x * 0 + 1, e - bits + 1) if not is_torch(xp) else torch_ldexp(xp, e - bits + 1)


def torch_ldexp(torch, e):
    return torch.pow(2.0, e.to(torch.float64))


def round_half(xp, half, x):
    """float64 x rounded to bf16 or f16 (to nearest, ties to even) as float64: x is exact in f32 where this is
    used (the dequantization's products), so the f32 is rounded once."""
    if half == "f16":
        return x.to(xp.float16).double() if is_torch(xp) else x.astype(xp.float16).astype(xp.float64)
    if is_torch(xp):
        u = x.float().view(xp.int32).long() & 0xFFFFFFFF
        r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000)
        r = xp.where(r >= 2 ** 31, r - 2 ** 32, r).to(xp.int32)
        return r.view(xp.float32).double()
    u = x.astype(xp.float32).view(xp.uint32).astype(xp.uint64)
    r = ((u + 0x7FFF + ((u >> 16) & 1)) & 0xFFFF0000).astype(xp.uint32)
    return r.view(xp.float32).astype(xp.float64)


def family(case):
    """The operation a case computes (several cases may compute one: sum in two launches and in one pass)."""
    return case.get("family", case["id"])


def bincount_reference(xp, x):
    """The 256 counts of the values' low bytes, in float64, by scatter-adding ones (not by bincount, the
    counterpart under test), in chunks so that 2^28 values need no 2^28-element index array at once."""
    if not is_torch(xp):
        return xp.bincount(x.astype(xp.int64) & 255, minlength=256).astype(xp.float64)
    counts = xp.zeros(256, dtype=xp.float64, device=x.device)
    chunk = 1 << 24
    for start in range(0, x.numel(), chunk):
        part = x[start:start + chunk].long() & 255
        counts.index_add_(0, part, xp.ones(part.numel(), dtype=xp.float64, device=x.device))
    return counts


BLUR_TAPS = [1, 4, 6, 4, 1]


def blur_reference(xp, shape, image):
    """examples/blur-rgba8.ts exactly, in float64 (every sum is a whole number below 2^16): the 5-tap binomial
    along each axis with edges clamped, then (sum + 128) >> 8."""
    height, width = shape
    img = image.reshape(height, width, 4)
    def clamp_take(a, axis, t):
        n = a.shape[axis]
        index = [min(max(i + t, 0), n - 1) for i in range(n)]
        if is_torch(xp):
            return a.index_select(axis, xp.tensor(index, device=a.device))
        return xp.take(a, index, axis=axis)
    horizontal = sum(w * clamp_take(img, 1, t - 2) for t, w in enumerate(BLUR_TAPS))
    total = sum(w * clamp_take(horizontal, 0, t - 2) for t, w in enumerate(BLUR_TAPS))
    return xp.floor((total + 128) / 256).reshape(-1)


def reference(xp, case, inputs):
    """The float64 result of the case (and, for sums, the sum of the terms' magnitudes), from float64 inputs
    (integer inputs, the histogram's, as they are)."""
    kind = family(case)
    shape = case["shape"]
    params = case["parameters"]
    if kind == "saxpy":
        return params["a"] * inputs["x"] + inputs["y"], None
    if kind == "gelu":
        x = inputs["x"]
        return 0.5 * x * (1 + xp.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x ** 3))), None
    if kind == "transpose":
        rows, cols = shape
        return inputs["x"].reshape(rows, cols).T.reshape(-1), None
    if kind == "sum":
        x = inputs["x"]
        return x.sum().reshape(1), xp.abs(x).sum().reshape(1)
    if kind == "softmax":
        rows, cols = shape
        x = inputs["x"].reshape(rows, cols)
        e = xp.exp(x - row_max(xp, x))
        return (e / row_sum(xp, e)).reshape(-1), None
    if kind == "layernorm":
        rows, cols = shape
        x = inputs["x"].reshape(rows, cols)
        mean = row_sum(xp, x) / cols
        variance = row_sum(xp, (x - mean) ** 2) / cols
        y = (x - mean) / xp.sqrt(variance + f32(params["eps"])) * inputs["gamma"] + inputs["beta"]
        return y.reshape(-1), None
    if kind == "rmsnorm":
        rows, cols = shape
        x = inputs["x"].reshape(rows, cols)
        y = x / xp.sqrt(row_sum(xp, x * x) / cols + f32(params["eps"])) * inputs["weight"]
        return y.reshape(-1), None
    if kind == "dequantize":
        rows, cols = shape
        return (inputs["q"].reshape(rows, cols) * inputs["scale"].reshape(rows, 1)).reshape(-1), None
    if kind == "blur":
        return blur_reference(xp, shape, inputs["image"]), None
    if kind == "scan":
        x = inputs["x"]
        return exclusive(xp, cumsum(xp, x)), exclusive(xp, cumsum(xp, xp.abs(x)))
    if kind == "histogram":
        return bincount_reference(xp, inputs["x"]), None
    raise ValueError(f"no reference for case '{kind}'")


def check(xp, spec, out, ref, scale=None):
    """Compares a float64 copy of a result with its reference as cli/kernels-bench/checks.ts does."""
    finite = xp.isfinite(out)
    non_finite = int((~finite).sum())
    diff = xp.abs(xp.where(finite, out, ref) - ref)
    kind = spec["kind"]
    if kind == "exact":
        if spec.get("type"):
            diff = xp.abs(xp.where(finite, out, ref) - round_half(xp, spec["type"], ref))
        failing = (diff != 0) | ~finite
        extra = {}
    elif kind == "rounded":
        magnitude = xp.abs(ref)
        floor = spec["floor"]
        relative = magnitude.clamp(min=floor) if is_torch(xp) else xp.maximum(magnitude, floor)
        allowed = 0.5 * ulp(xp, spec["type"], ref) + spec["maxRelative"] * relative
        score = diff / allowed
        failing = (score > 1) | ~finite
        extra = {"maxOfAllowed": None if non_finite else float(score.max())}
    elif kind == "relative":
        magnitude = xp.abs(ref)
        floor = spec["floor"]
        denominator = magnitude.clamp(min=floor) if is_torch(xp) else xp.maximum(magnitude, floor)
        score = diff / denominator
        failing = (score > spec["maxRelative"]) | ~finite
        extra = {"maxRelative": None if non_finite else float(score.max())}
    elif kind == "bound":
        allowed = gamma(spec["depth"]) * scale
        # Where no term is nonzero (out[0] of an exclusive scan) the result must be exactly 0.
        safe = xp.where(allowed > 0, allowed, allowed * 0 + 1)
        score = xp.where(allowed > 0, diff / safe, xp.where(diff == 0, diff, diff + math.inf))
        failing = (score > 1) | ~finite
        extra = {"maxOfAllowed": None if non_finite else float(score.max())}
    else:
        raise ValueError(f"unknown check '{kind}'")
    failures = int(failing.sum())
    ref_norm = math.sqrt(float((ref * ref).sum()))
    diff_norm = math.sqrt(float((diff * diff).sum()))
    return {"kind": kind, "pass": failures == 0, "failures": failures, "nonFinite": non_finite,
            "normwiseRelative": diff_norm / ref_norm if ref_norm > 0 else diff_norm, **extra}


# ---- the run on the GPU --------------------------------------------------------------------------------------

def torch_counterpart(torch, case, buffers):
    """PyTorch's own way to do the case's work on the same tensors (the expression in the plan's 'torch')."""
    F = torch.nn.functional
    kind = family(case)
    shape = case["shape"]
    if kind == "saxpy":
        a = case["parameters"]["a"]
        return lambda: buffers["y"].add_(buffers["x"], alpha=a)
    if kind == "gelu":
        return lambda: F.gelu(buffers["x"], approximate="tanh")
    if kind == "transpose":
        rows, cols = shape
        return lambda: buffers["x"].view(rows, cols).t().contiguous()
    if kind == "sum":
        return lambda: torch.sum(buffers["x"])
    if kind == "softmax":
        rows, cols = shape
        return lambda: torch.softmax(buffers["x"].view(rows, cols), dim=1)
    if kind == "layernorm":
        rows, cols = shape
        eps = case["parameters"]["eps"]
        return lambda: F.layer_norm(buffers["x"].view(rows, cols), (cols,), buffers["gamma"], buffers["beta"], eps)
    if kind == "rmsnorm":
        rows, cols = shape
        eps = case["parameters"]["eps"]
        return lambda: F.rms_norm(buffers["x"].view(rows, cols), (cols,), buffers["weight"], eps)
    if kind == "dequantize":
        rows, cols = shape
        return lambda: buffers["q"].view(rows, cols).to(buffers["scale"].dtype) * buffers["scale"].view(rows, 1)
    if kind == "blur":
        return None
    if kind == "scan":
        return lambda: torch.cumsum(buffers["x"], 0)
    if kind == "histogram":
        # The u32 values (below 256) sit in an int32 tensor, which bincount takes as it is.
        return lambda: torch.bincount(buffers["x"], minlength=256)
    raise ValueError(f"no PyTorch counterpart for '{kind}'")


U8_POISON = 0xA5


def allocate_buffers(torch, case, device):
    """Inputs random as the plan says, outputs poisoned: NaN for the float types, 0xdeadbeef for u32 buffers,
    0xa5 in every byte of a u8 one. u32 buffers are int32 tensors (the same bits; PyTorch's uint32 does too
    little), with values below 2^31; bf16 and f16 inputs are the random f32 rounded to the type (to nearest
    even, as the Node bench rounds them), i8 and u8 ones whole numbers in [low, high)."""
    floats = {"f32": torch.float32, "bf16": torch.bfloat16, "f16": torch.float16}
    integers = {"u32": torch.int32, "i8": torch.int8, "u8": torch.uint8}
    buffers = {}
    for spec in case["buffers"]:
        kind = spec.get("type", "f32")
        n = spec["length"]
        if spec["role"] in ("input", "inout"):
            if kind in integers:
                low, high = spec.get("low", 0), spec.get("high", 2 ** 31)
                buffers[spec["name"]] = torch.randint(low, high, (n,), device=device, dtype=integers[kind])
            else:
                low, high = spec.get("low", -1), spec.get("high", 1)
                values = torch.rand(n, device=device, dtype=torch.float32) * (high - low) + low
                buffers[spec["name"]] = values.to(floats[kind])
        elif kind == "u32":
            buffers[spec["name"]] = torch.full((n,), U32_POISON - 2 ** 32, device=device, dtype=torch.int32)
        elif kind in integers:
            buffers[spec["name"]] = torch.full((n,), U8_POISON if kind == "u8" else 0, device=device, dtype=integers[kind])
        else:
            buffers[spec["name"]] = torch.full((n,), float("nan"), device=device, dtype=floats[kind])
    return buffers


def torch_result_as_ours(torch, case, result):
    """PyTorch's result in the layout of ours: cumsum is inclusive, ours exclusive."""
    flat = result.reshape(-1)
    if family(case) == "scan":
        return torch.cat([flat[:1] * 0, flat[:-1]])
    return flat


class Runner:
    def __init__(self, torch, driver, plan, plan_dir):
        self.torch = torch
        self.driver = driver
        self.plan = plan
        self.kernels_dir = os.path.join(plan_dir, plan["kernelsDir"])

    def allocate(self, case):
        return allocate_buffers(self.torch, case, "cuda")

    def ours(self, case, buffers):
        """A function that enqueues our launches on PyTorch's current stream."""
        stream = ctypes.c_void_p(self.torch.cuda.current_stream().cuda_stream)
        launches = []
        for step in case["steps"]:
            fn = self.driver.function(os.path.join(self.kernels_dir, step["cubin"]), step["function"], step["dynamicSharedBytes"])
            params, keep = pack_arguments(step["args"], lambda name: buffers[name].data_ptr())
            launches.append((fn, step["grid"], step["block"], step["dynamicSharedBytes"], params, keep))

        def run():
            for fn, grid, block, shared, params, _keep in launches:
                self.driver.launch(fn, grid, block, shared, stream, params)

        return run

    def time(self, fn, inner):
        torch = self.torch
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        for _ in range(inner):
            fn()
        end.record()
        end.synchronize()
        return start.elapsed_time(end) / inner

    def copy_bandwidth(self, elements=2 ** 28, runs=20):
        torch = self.torch
        source = torch.rand(elements, device="cuda")
        destination = torch.empty_like(source)
        stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
        nbytes = elements * 4
        driver_copy = lambda: self.driver.copy(destination.data_ptr(), source.data_ptr(), nbytes, stream)
        torch_copy = lambda: destination.copy_(source)
        for fn in (driver_copy, torch_copy):
            fn()
        times = {"cuMemcpyDtoDAsync": [], "torch copy_": []}
        for _ in range(runs):
            times["cuMemcpyDtoDAsync"].append(self.time(driver_copy, 1))
            times["torch copy_"].append(self.time(torch_copy, 1))
        out = {}
        for name, values in times.items():
            ms = statistics.median(values)
            out[name] = {"bytes": 2 * nbytes, "ms": ms, "gbps": 2 * nbytes / (ms * 1e6)}
        del source, destination
        return out

    def run_case(self, case, rounds, l2_bytes, peers=None, solo=False):
        """Ours, PyTorch's counterpart (where the case has one) and each of `peers` (name → counterpart(torch,
        case, buffers): Triton's), each checked once against float64, then timed alternately, round by round."""
        torch = self.torch
        sets = 1 if case["bytes"] >= 2 * l2_bytes else min(8, math.ceil(3 * l2_bytes / case["bytes"]))
        allocated = [self.allocate(case) for _ in range(sets)]
        first = allocated[0]
        inputs64 = {s["name"]: first[s["name"]] if s.get("type") == "u32" else first[s["name"]].double()
                    for s in case["buffers"] if s["role"] in ("input", "inout")}
        expected, scale = reference(torch, case, inputs64)
        del inputs64
        # Ours once, on poisoned outputs, checked.
        ours = [self.ours(case, b) for b in allocated]
        others = {}
        if torch_counterpart(torch, case, first) is not None:
            others["torch"] = [torch_counterpart(torch, case, b) for b in allocated]
        for name, make in (peers or {}).items():
            if make(torch, case, first) is not None:
                others[name] = [make(torch, case, b) for b in allocated]
        saved = {s["name"]: first[s["name"]].clone() for s in case["buffers"] if s["role"] == "inout"}
        ours[0]()
        torch.cuda.synchronize()
        ours_check = check(torch, case["check"], first[case["output"]].double(), expected, scale)
        # Each other side once, checked the same way (on a copy of any buffer it updates in place).
        checks = {}
        for name, fns in others.items():
            for buffer, value in saved.items():
                first[buffer].copy_(value)
            result = fns[0]()
            torch.cuda.synchronize()
            out = first["y"] if family(case) == "saxpy" else result
            checks[name] = check(torch, case["check"], torch_result_as_ours(torch, case, out).double(), expected, scale)
            del result, out
        del expected, scale, saved
        # Warm-up, then alternate: ours, then each other side, round by round, each over the next set of
        # buffers. A call shorter than 0.5 ms is made several times back to back per timing (the same number for
        # all), so that the event pair's own few microseconds do not weigh on 50-microsecond kernels.
        for fn in ours + [f for fns in others.values() for f in fns]:
            fn()
        torch.cuda.synchronize()
        probe = max([self.time(ours[0], 1)] + [self.time(fns[0], 1) for fns in others.values()])
        inner = max(1, min(32, math.ceil(0.5 / max(probe, 1e-3))))
        times = {"ours": [], **{name: [] for name in others}}
        for r in range(rounds):
            times["ours"].append(self.time(ours[r % sets], inner))
            for name, fns in others.items():
                times[name].append(self.time(fns[r % sets], inner))
        if solo:
            # Diagnostics (--solo): ours again for as many rounds but back to back, with no other side's calls
            # between its timings, and a device-to-device copy of the case's bytes (half read, half written)
            # timed the same way: what the alternation and the transfer's size alone do to the figure.
            times["oursSolo"] = [self.time(ours[r % sets], inner) for r in range(rounds)]
            half = case["bytes"] // 2 // 16 * 16
            source = torch.empty(half, dtype=torch.uint8, device="cuda").random_()
            destination = torch.empty_like(source)
            stream = ctypes.c_void_p(torch.cuda.current_stream().cuda_stream)
            copy = lambda: self.driver.copy(destination.data_ptr(), source.data_ptr(), half, stream)
            copy()
            times["copySameBytes"] = [self.time(copy, inner) for _ in range(rounds)]
            del source, destination
        del allocated, ours, others
        torch.cuda.empty_cache()
        medians = {name: statistics.median(values) for name, values in times.items()}
        o = medians["ours"]
        row = {
            "id": case["id"], "label": case["label"], "shape": case["shape"], "bytes": case["bytes"],
            "torchExpression": case["torch"], "rounds": rounds, "inputSets": sets, "callsPerTiming": inner,
            "ours": {"ms": o, "gbps": case["bytes"] / (o * 1e6), "runsMs": times["ours"], "check": ours_check},
        }
        for name in checks:
            t = medians[name]
            row[name] = {"ms": t, "gbps": case["bytes"] / (t * 1e6), "runsMs": times[name], "check": checks[name]}
        for name in ("oursSolo", "copySameBytes"):
            if name in medians:
                row[name] = {"ms": medians[name], "gbps": case["bytes"] / (medians[name] * 1e6), "runsMs": times[name]}
        if "torch" in row:
            row["speedup"] = medians["torch"] / o
        if "triton" in row:
            row["tritonSpeedup"] = medians["triton"] / o
        return row

    def profile_case(self, case):
        """Each side once inside an NVTX range, for `ncu --nvtx --nvtx-include 'profile/'`."""
        torch = self.torch
        buffers = self.allocate(case)
        ours = self.ours(case, buffers)
        theirs = torch_counterpart(torch, case, buffers)
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_push("profile")
        ours()
        if theirs is not None:
            theirs()
        torch.cuda.synchronize()
        torch.cuda.nvtx.range_pop()
        del buffers
        torch.cuda.empty_cache()


def main_gpu(args, plan, plan_dir):
    import torch

    torch.zeros(1, device="cuda")  # makes PyTorch's (the primary) context current before the driver calls
    runner = Runner(torch, Driver(), plan, plan_dir)
    props = torch.cuda.get_device_properties(0)
    l2_bytes = getattr(props, "L2_cache_size", 50 * 2 ** 20)
    if args.profile:
        for case in plan["cases"]:
            print(f"profile {case['id']} {case['label']}", flush=True)
            runner.profile_case(case)
        return 0
    results = {
        "date": plan.get("date"), "device": torch.cuda.get_device_name(0), "torch": torch.__version__,
        "cuda": torch.version.cuda, "l2Bytes": l2_bytes,
        "method": "CUDA events around each call on PyTorch's current stream (calls under 0.5 ms repeated back to back, "
                  "up to 32 per timing, time per call); ours (cubins through the driver API) and PyTorch's alternately, "
                  "round by round, median of the rounds, after one warm-up call of each",
        "copy": runner.copy_bandwidth(), "cases": [],
    }
    for name, copy in results["copy"].items():
        print(f"copy ({name}): {copy['gbps']:.1f} GB/s", flush=True)
    peers = {}
    try:
        import triton_kernels  # beside this script (bench/triton_kernels.py)

        peers["triton"] = triton_kernels.counterpart
        import triton

        results["triton"] = triton.__version__
    except Exception as error:  # no Triton: PyTorch alone beside ours
        print(f"Triton unavailable ({type(error).__name__}: {error}); PyTorch alone beside ours", flush=True)
    failed = 0
    for case in plan["cases"]:
        if args.only and case["id"] not in args.only.split(","):
            continue
        try:
            row = runner.run_case(case, args.rounds, l2_bytes, peers, solo=args.solo)
        except Exception as error:  # one case's failure is recorded, and the others still run
            row = {"id": case["id"], "label": case["label"], "error": f"{type(error).__name__}: {error}"}
            print(f"{case['id']:<10} {case['label']:<12} FAILED: {row['error']}", flush=True)
            results["cases"].append(row)
            failed += 1
            continue
        results["cases"].append(row)
        failed += 0 if row["ours"]["check"]["pass"] else 1
        line = (f"{case['id']:<10} {case['label']:<12} ours {row['ours']['ms']:8.3f} ms {row['ours']['gbps']:7.1f} GB/s "
                f"{'pass' if row['ours']['check']['pass'] else 'FAIL'}")
        for name, title in (("torch", "PyTorch"), ("triton", "Triton")):
            if name in row:
                line += (f"   {title} {row[name]['ms']:8.3f} ms {row[name]['gbps']:7.1f} GB/s "
                         f"{'pass' if row[name]['check']['pass'] else 'fail'}   {title}/ours {row[name]['ms'] / row['ours']['ms']:.2f}x")
        for name, title in (("oursSolo", "ours alone"), ("copySameBytes", "copy of its bytes")):
            if name in row:
                line += f"   {title} {row[name]['ms']:8.3f} ms {row[name]['gbps']:7.1f} GB/s"
        print(line, flush=True)
        with open(args.out, "w") as f:
            json.dump(results, f, indent=2)
    with open(args.out, "w") as f:
        json.dump(results, f, indent=2)
    print(f"wrote {args.out}")
    return 1 if failed else 0


# ---- the dry run: no GPU, no PyTorch ---------------------------------------------------------------------------

def dry_run(plan, plan_dir):
    """Checks what a GPU run would use: every cubin and function, every argument, and (with numpy) that the
    references and checks accept a correct f32 result and reject a wrong one, on small shapes."""
    import numpy as np

    kernels_dir = os.path.join(plan_dir, plan["kernelsDir"])
    launches = 0
    for case in plan["cases"]:
        names = {b["name"] for b in case["buffers"]}
        for step in case["steps"]:
            path = os.path.join(kernels_dir, step["cubin"])
            with open(path, "rb") as f:
                if step["function"].encode() not in f.read():
                    raise SystemExit(f"{case['id']}: {step['function']} is not in {path}")
            for arg in step["args"]:
                if "buffer" in arg and arg["buffer"] not in names:
                    raise SystemExit(f"{case['id']}: argument buffer '{arg['buffer']}' is not among {sorted(names)}")
            array, values = pack_arguments(step["args"], lambda name: 0x7F0000000000 + 256 * sorted(names).index(name))
            for i, value in enumerate(values):
                if array[i] != ctypes.addressof(value):
                    raise SystemExit("argument packing: pointer mismatch")
            launches += 1
        print(f"{case['id']:<10} {case['label']:<12} {len(case['steps'])} launch(es): "
              + ", ".join(f"{s['function']}<<<{tuple(s['grid'])}, {tuple(s['block'])}>>>" for s in case["steps"]))
    tested = self_test(np, plan)
    print(f"dry run: {len(plan['cases'])} cases, {launches} launches, every cubin and function found; "
          f"references and checks tested on {tested} small cases with numpy")
    return 0


def small_shape(case):
    if len(case["shape"]) == 1:
        return [8 * 1001]
    if case["id"] == "transpose":
        return [36, 70]
    if family(case) == "blur":
        return [37, 100]
    return [6, case["shape"][1]]


def resized(case, shape):
    """The case at another shape: its buffers' lengths recomputed (per row: γ, β, weight; per column of rows:
    the dequantization's scales; four bytes per pixel for the blur; one element per element otherwise)."""
    count = 1
    for side in shape:
        count *= side
    per = {"gamma": shape[-1], "beta": shape[-1], "weight": shape[-1], "scale": shape[0]}
    if family(case) == "blur":
        count *= 4
    buffers = [dict(spec, length=per.get(spec["name"], count)) for spec in case["buffers"]]
    return dict(case, shape=shape, buffers=buffers)


def self_test(np, plan):
    """For each case kind: a result as good as the output type allows (the float64 reference rounded to f32, or
    to bf16 / f16, or the exact integers) passes the plan's check, a corrupted one and a NaN fail."""
    rng = np.random.default_rng()
    tested = 0
    seen = set()
    for case in plan["cases"]:
        if case["id"] in seen:
            continue
        seen.add(case["id"])
        small = resized(case, small_shape(case))
        inputs = {}
        for spec in small["buffers"]:
            if spec["role"] in ("input", "inout"):
                n = spec["length"]
                kind = spec.get("type", "f32")
                if kind in ("u32", "i8", "u8"):
                    inputs[spec["name"]] = rng.integers(spec.get("low", 0), spec.get("high", 2 ** 31), n).astype(np.int64)
                else:
                    values = rng.uniform(spec.get("low", -1), spec.get("high", 1), n).astype(np.float32).astype(np.float64)
                    inputs[spec["name"]] = round_half(np, kind, values) if kind in HALF_FORMATS else values
        expected, scale = reference(np, small, {k: v if v.dtype == np.int64 else v.astype(np.float64) for k, v in inputs.items()})
        output = next(spec for spec in small["buffers"] if spec["name"] == small["output"]).get("type", "f32")
        # What a correct kernel can at best give: the reference rounded to the output's type.
        good = round_half(np, output, expected) if output in HALF_FORMATS else expected.astype(np.float32).astype(np.float64)
        if not check(np, case["check"], good, expected, scale)["pass"]:
            raise SystemExit(f"self-test: {case['id']}: the rounded reference fails its own check")
        wrong = good.copy()
        wrong[len(wrong) // 2] = wrong[len(wrong) // 2] * 1.01 + 1.0
        if check(np, case["check"], wrong, expected, scale)["pass"]:
            raise SystemExit(f"self-test: {case['id']}: a corrupted result passes")
        poisoned = good.copy()
        poisoned[-1] = np.nan
        result = check(np, case["check"], poisoned, expected, scale)
        if result["pass"] or result["nonFinite"] != 1:
            raise SystemExit(f"self-test: {case['id']}: a NaN passes")
        tested += 1
    return tested


def triton_interpret_test(plan):
    """Triton's kernels (triton_kernels.py) and PyTorch's counterparts on the CPU, at small shapes: Triton's
    interpreter (TRITON_INTERPRET=1) runs the kernels on CPU tensors, and each result must pass the case's check
    against the float64 reference, as on the GPU. No GPU needed; PyTorch and Triton are."""
    os.environ["TRITON_INTERPRET"] = "1"
    import torch
    import triton_kernels

    tested = 0
    for case in plan["cases"]:
        small = resized(case, small_shape(case))
        buffers = allocate_buffers(torch, small, "cpu")
        inputs64 = {s["name"]: buffers[s["name"]].double() for s in small["buffers"] if s["role"] in ("input", "inout")}
        expected, scale = reference(torch, small, inputs64)
        output_type = buffers[small["output"]].dtype
        triton_f32 = lambda torch_, case_, buffers_: triton_kernels.counterpart(torch_, case_, buffers_, torch.float32)
        for name, make in (("triton", triton_f32), ("torch", torch_counterpart)):
            run = make(torch, small, buffers)
            if run is None:
                continue
            # Triton's f32 result rounded here (the interpreter truncates; compiled Triton rounds to nearest).
            out = run().to(output_type) if name == "triton" else run()
            result = check(torch, case["check"], torch_result_as_ours(torch, small, out).double(), expected, scale)
            print(f"{case['id']:<16} {'x'.join(map(str, small['shape'])):<10} {name:<7} {'pass' if result['pass'] else 'FAIL'} "
                  f"{result.get('maxOfAllowed', result.get('maxRelative', ''))}")
            if not result["pass"]:
                raise SystemExit(f"{case['id']}: {name} fails the check: {result}")
            tested += 1
    print(f"Triton interpreter test: {tested} results checked")
    return 0


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--plan", required=True)
    parser.add_argument("--out", default="torch.json")
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--only", help="comma-separated case ids")
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--solo", action="store_true", help="also time ours back to back alone, and a copy of each case's bytes")
    parser.add_argument("--dry-run", action="store_true")
    parser.add_argument("--triton-interpret-test", action="store_true")
    args = parser.parse_args()
    with open(args.plan) as f:
        plan = json.load(f)
    plan_dir = os.path.dirname(os.path.abspath(args.plan))
    if args.dry_run:
        return dry_run(plan, plan_dir)
    if args.triton_interpret_test:
        return triton_interpret_test(plan)
    return main_gpu(args, plan, plan_dir)


if __name__ == "__main__":
    sys.exit(main())
