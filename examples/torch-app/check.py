#!/usr/bin/env python3
"""The one-GPU proof of the PyTorch example: tskernel operators checked, trained, compiled and timed.

Run on a CUDA GPU with PyTorch 2.4 or later, after building the operators here (examples/torch-app/README.md):

    python3 examples/torch-app/check.py --build examples/torch-app/build --out torch-ops.json

Sections (each one's result, or its error, goes into the JSON report; the exit status is 1 if any fails):
- correctness: every operator against float64 (PyTorch's own functions in float64 on the GPU, autograd for
  the gradients), fresh random inputs, each output poisoned with NaN first (the NaN block freed just before the
  call, which PyTorch's caching allocator then hands to the operator: the report says whether it did);
- gradcheck: torch.autograd.gradcheck of each operator with gradients, in float32 (the kernels' type) with
  the tolerance stated in the report; opcheck: torch.library.opcheck of every operator (schema, fake
  implementation, autograd registration, AOT dispatch);
- stream: an operator called under `torch.cuda.stream(s)` runs after the work queued on s before it;
- training: the model of model.py trained from one seed on the same batches with PyTorch's layer norm and GELU
  and with tskernel's: the two loss curves, step by step, within the stated tolerance; the time per step;
- compile: the tskernel model under torch.compile(fullgraph=True) (no graph break, our operators in the graph),
  trained from the same start: its losses against the eager ones;
- overhead: host time per call of a generated operator on a tiny tensor, through PyTorch's dispatcher and
  direct, beside PyTorch's own GELU;
- kernel_time: each operator's GPU time (CUDA events around the call) against the same cubin function launched
  by the bench harness (bench/torch-reference.py's Driver) on the same tensors, interleaved;
- cupy: the same cubin through CuPy's RawModule, as docs/torch.md shows it;
- matmul16: tskernel_torch.matmul in bf16 and f16 (4096³, 1000³, 512³, 8192×1024×2048, 1023×515×257) against a float64
  product of the same inputs within runtime/matmul's bound for 16-bit results, the rung that ran, its GPU time
  against torch.mm's, and its gradients against float64 autograd;
- attention: tskernel_torch.attention (bf16) forward and gradients against float64 on sampled heads and rows
  (small shapes and B4 H16 S4096 D128, causal and not) beside F.scaled_dot_product_attention's errors, GPU times
  of both, and every gradient of a small shape against float64 autograd;
- tensor_ops_compile: matmul and attention under torch.compile(fullgraph=True), forward and backward, against
  eager; torch.library.opcheck of tskernel::matmul16, attention_forward and attention_backward.
These three need the prebuilt kernels in the build (examples/hgemm-wgmma-ws.ts, hgemm-wgmma-small.ts, hgemm-mma-guarded.ts, hgemm-tiled.ts, flash-attention-fold.ts,
flash-attention-backward.ts: examples/torch-app/README.md) and an sm_90 GPU for attention.
- transformer_ops: the bf16 operators of kernels.ts (gelu on bf16, layer_norm_bf16 and their backward kernels)
  against float64 with fresh random inputs and poisoned outputs, their gradients through autograd (both
  routes), PyTorch's own bf16 errors beside them, opcheck; and tskernel_torch.attention's gradients at the
  transformer's shape against float64;
- transformer: the bf16 transformer of model.py trained 300 steps (--transformer-steps) from one seed with
  PyTorch's operators (F.scaled_dot_product_attention, F.layer_norm, F.gelu) and with tskernel's
  (tskernel_torch.attention, layer_norm_bf16, gelu on bf16): the mean loss of the last 50 steps within 2·10⁻²
  relative and the first step's within 10⁻² (model.curve_comparison), another seed's spread beside it for
  scale, tokens per second of both;
- transformer_compile: that model under torch.compile(fullgraph=True), --compile-steps steps against the eager
  run (needs the transformer section in the same run).
`--only transformer_ops,transformer,transformer_compile` runs these three (the prebuilt attention kernels and an
sm_90 GPU needed).
"""

import argparse
import importlib.util
import json
import math
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def log(text):
    print(text, flush=True)


def harness_driver():
    """bench/torch-reference.py's Driver: how the bench launches our cubins in PyTorch's process."""
    spec = importlib.util.spec_from_file_location("torch_reference", os.path.join(ROOT, "bench", "torch-reference.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def poisoned_call(torch, op, args, shapes):
    """Calls `op` after freeing NaN blocks of the outputs' sizes, which the caching allocator hands back for the
    outputs; returns (result, whether every output got a poisoned block)."""
    poison = [torch.full(shape, float("nan"), device="cuda") for shape in shapes]
    addresses = {p.data_ptr() for p in poison}
    del poison
    result = op(*args)
    outputs = result if isinstance(result, tuple) else (result,)
    return result, all(o.data_ptr() in addresses for o in outputs)


def compare(torch, out, ref, atol, rtol):
    """Largest error against a float64 reference, the normwise relative error, and allclose(atol, rtol)."""
    o = out.double()
    finite = bool(torch.isfinite(o).all())
    diff = (o - ref).abs()
    return {
        "maxAbsError": float(diff.max()) if diff.numel() else 0.0,
        "normwiseRelativeError": float(torch.linalg.norm(o - ref) / torch.linalg.norm(ref)) if ref.numel() else 0.0,
        "allFinite": finite,
        "atol": atol,
        "rtol": rtol,
        "pass": finite and bool((diff <= atol + rtol * ref.abs()).all()),
    }


def section_correctness(torch, F, kernels, tsk, generator):
    results = []

    def gelu64(x):
        return F.gelu(x, approximate="tanh")

    for shape in [(4096, 1024), (3, 7, 37)]:
        x = torch.randn(shape, device="cuda", generator=generator) * 3
        out, poisoned = poisoned_call(torch, kernels.gelu, (x,), [shape])
        ref = gelu64(x.double())
        results.append({"op": "gelu", "shape": shape, "poisoned": poisoned, **compare(torch, out, ref, 1e-6, 1e-5)})
        dy = torch.randn(shape, device="cuda", generator=generator)
        grad, poisoned = poisoned_call(torch, kernels.gelu_backward, (x, dy), [shape])
        x64 = x.double().requires_grad_()
        (ref,) = torch.autograd.grad(gelu64(x64), x64, dy.double())
        results.append({"op": "gelu_backward", "shape": shape, "poisoned": poisoned, **compare(torch, grad, ref, 1e-5, 1e-5)})

    for shape in [(4096, 256), (2, 3, 1000), (64, 4096)]:
        cols = shape[-1]
        rows = math.prod(shape[:-1])
        x = torch.randn(shape, device="cuda", generator=generator) * 2 + 0.5
        w = torch.randn(cols, device="cuda", generator=generator)
        b = torch.randn(cols, device="cuda", generator=generator)
        out, poisoned = poisoned_call(torch, kernels.layer_norm, (x, w, b, 1e-5), [shape])
        x64, w64, b64 = (t.double().requires_grad_() for t in (x, w, b))
        y64 = F.layer_norm(x64, (cols,), w64, b64, 1e-5)
        results.append({"op": "layer_norm", "shape": shape, "poisoned": poisoned, **compare(torch, out, y64.detach(), 1e-4, 1e-4)})
        dy = torch.randn(shape, device="cuda", generator=generator)
        (gx, gw, gb), poisoned = poisoned_call(torch, kernels.layer_norm_backward, (x, w, dy, 1e-5), [shape, (cols,), (cols,)])
        rx, rw, rb = torch.autograd.grad(y64, (x64, w64, b64), dy.double())
        # gradGamma and gradBeta are sums over the rows (atomics add each block's share): rows·2^-24 relative.
        sums = rows * 2.0**-24
        for name, ours, ref, atol, rtol in [("gradInput", gx, rx, 1e-4, 1e-4), ("gradGamma", gw, rw, 1e-4, max(1e-4, sums)), ("gradBeta", gb, rb, 1e-4, max(1e-4, sums))]:
            # gradGamma and gradBeta start as zeros (atomics add into them), so only gradInput can be poisoned.
            results.append({"op": f"layer_norm_backward:{name}", "shape": shape, "poisoned": poisoned if name == "gradInput" else None, **compare(torch, ours, ref, atol, rtol)})

    for m, n, k in [(1024, 1024, 1024), (1000, 1000, 1000), (1023, 1021, 1019)]:
        a = torch.rand(m, k, device="cuda", generator=generator) * 2 - 1
        bm = torch.rand(k, n, device="cuda", generator=generator) * 2 - 1
        c, poisoned = poisoned_call(torch, tsk.matmul, (a, bm), [(m, n)])
        ref = a.double() @ bm.double()
        error = float(torch.linalg.norm(c.double() - ref) / torch.linalg.norm(ref))
        bound = max(k, 8) * 2.0**-23
        results.append({"op": "matmul", "shape": (m, n, k), "poisoned": poisoned, "normwiseRelativeError": error, "bound": bound, "allFinite": bool(torch.isfinite(c).all()), "pass": error < bound and bool(torch.isfinite(c).all())})
    for r in results:
        log(f"  {r['op']} {r['shape']}: {'pass' if r['pass'] else 'FAIL'} normwise {r['normwiseRelativeError']:.2e} poisoned {r['poisoned']}")
    return {"cases": results, "pass": all(r["pass"] for r in results)}


def section_gradcheck(torch, kernels, generator):
    settings = {"eps": 1e-3, "atol": 5e-3, "rtol": 1e-2, "nondet_tol": 1e-5}
    cases = []

    def run(name, fn, inputs):
        ok = torch.autograd.gradcheck(fn, inputs, raise_exception=True, **settings)
        cases.append({"op": name, "shapes": [tuple(t.shape) for t in inputs if hasattr(t, "shape")], "pass": bool(ok)})

    x = (torch.randn(4, 9, device="cuda", generator=generator)).requires_grad_()
    run("gelu", kernels.gelu, (x,))
    for shape in [(3, 16), (2, 3, 8)]:
        cols = shape[-1]
        x = (torch.randn(shape, device="cuda", generator=generator) + 0.3).requires_grad_()
        w = torch.randn(cols, device="cuda", generator=generator).requires_grad_()
        b = torch.randn(cols, device="cuda", generator=generator).requires_grad_()
        run("layer_norm", lambda x, w, b: kernels.layer_norm(x, w, b, 1e-5), (x, w, b))
    log(f"  gradcheck: {cases}")
    return {"float32": settings, "cases": cases, "pass": all(c["pass"] for c in cases)}


def section_opcheck(torch, kernels, sgemm, generator):
    cases = []
    x = torch.randn(8, 64, device="cuda", generator=generator)
    w, b, dy = torch.randn(64, device="cuda", generator=generator), torch.randn(64, device="cuda", generator=generator), torch.randn(8, 64, device="cuda", generator=generator)
    a, bm, c = torch.randn(64, 32, device="cuda", generator=generator), torch.randn(32, 128, device="cuda", generator=generator), torch.zeros(64, 128, device="cuda")
    ops = torch.ops.tskernel_kernels
    for name, op, args in [
        ("gelu", ops.gelu.default, (x.clone().requires_grad_(),)),
        ("gelu_backward", ops.gelu_backward.default, (x, dy)),
        ("layer_norm", ops.layer_norm.default, (x.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_(), 1e-5)),
        ("layer_norm_backward", ops.layer_norm_backward.default, (x, w, dy, 1e-5)),
        ("sgemm_multistage", torch.ops.tskernel_sgemm_multistage.sgemm_multistage.default, (1.0, a, bm, 0.0, c)),
    ]:
        result = torch.library.opcheck(op, args)
        cases.append({"op": name, "result": {k: str(v) for k, v in result.items()}, "pass": all(v == "SUCCESS" for v in result.values())})
        log(f"  opcheck {name}: {result}")
    return {"cases": cases, "pass": all(c["pass"] for c in cases)}


def section_stream(torch, kernels):
    """A side stream sleeps, then fills x with 2; gelu on that stream must see the 2s."""
    x = torch.zeros(1 << 20, device="cuda")
    side = torch.cuda.Stream()
    side.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(side):
        torch.cuda._sleep(20_000_000)
        x.fill_(2.0)
        out = kernels.gelu(x)
    torch.cuda.synchronize()
    expected = 0.5 * 2 * (1 + math.tanh(math.sqrt(2 / math.pi) * (2 + 0.044715 * 8)))
    error = float((out.double() - expected).abs().max())
    log(f"  stream: max error {error:.2e}")
    return {"maxAbsError": error, "pass": error < 1e-6}


def train(torch, model_module, ops, data, steps, compiled=False, make=None, lr=2e-3, seed=0):
    device = torch.device("cuda")
    model = (make or model_module.make_model)(ops, device, seed=seed)
    step_model = torch.compile(model, fullgraph=True) if compiled else model
    optimizer = model_module.optimizer_for(model, lr)
    losses, times = [], []
    for step in range(steps):
        windows, targets = data[step]
        torch.cuda.synchronize()
        start = time.perf_counter()
        optimizer.zero_grad(set_to_none=True)
        loss = model_module.loss_of(step_model, windows, targets)
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))  # (synchronizes)
        times.append(time.perf_counter() - start)
    return model, losses, times


def section_training(torch, model_module, kernels, steps):
    batch, positions, context = 64, 64, 4
    data = model_module.batches(steps, batch, positions, context)
    tokens = batch * positions
    _, torch_losses, torch_times = train(torch, model_module, model_module.TorchOps, data, steps)
    _, our_losses, our_times = train(torch, model_module, model_module.TskernelOps(kernels), data, steps)
    difference = model_module.relative_difference(our_losses, torch_losses)
    tolerance = 1e-2
    steady = slice(20, None)
    result = {
        "steps": steps,
        "batch": batch,
        "positions": positions,
        "tokensPerStep": tokens,
        "chainEntropy": model_module.chain_entropy(model_module.markov_chain()),
        "lossTorch": torch_losses,
        "lossTskernel": our_losses,
        "maxRelativeDifference": difference,
        "tolerance": tolerance,
        "msPerStepTorch": 1e3 * statistics.median(torch_times[steady]),
        "msPerStepTskernel": 1e3 * statistics.median(our_times[steady]),
        "pass": difference <= tolerance,
    }
    log(f"  training: loss {torch_losses[0]:.4f} -> torch {torch_losses[-1]:.4f}, tskernel {our_losses[-1]:.4f}; max relative difference {difference:.2e}; ms/step torch {result['msPerStepTorch']:.2f} tskernel {result['msPerStepTskernel']:.2f}")
    return result, data, our_losses


def section_compile(torch, model_module, kernels, data, eager_losses, steps):
    torch._dynamo.reset()
    ops = model_module.TskernelOps(kernels)
    probe = model_module.make_model(ops, torch.device("cuda"))
    explained = torch._dynamo.explain(probe)(data[0][0])
    in_graph = any("tskernel_kernels" in str(g.graph) for g in explained.graphs)
    torch._dynamo.reset()
    start = time.perf_counter()
    _, losses, times = train(torch, model_module, ops, data, steps, compiled=True)
    total = time.perf_counter() - start
    difference = model_module.relative_difference(losses, eager_losses[:steps])
    result = {
        "steps": steps,
        "graphs": explained.graph_count,
        "graphBreaks": explained.graph_break_count,
        "tskernelOpsInGraph": in_graph,
        "firstStepSeconds": times[0],
        "seconds": total,
        "msPerStepCompiled": 1e3 * statistics.median(times[5:]),
        "lossCompiled": losses,
        "maxRelativeDifferenceToEager": difference,
        "tolerance": 1e-2,
        "pass": explained.graph_break_count == 0 and in_graph and difference <= 1e-2,
    }
    log(f"  compile: {explained.graph_count} graph(s), {explained.graph_break_count} break(s), ours in graph {in_graph}; first step {times[0]:.1f} s; max relative difference {difference:.2e}")
    return result


def per_call_us(torch, fn, calls=20000, repeats=5):
    """Host time per call, the GPU kept ahead of nothing: calls back to back, then one synchronize; the best
    of `repeats` runs (the least disturbed)."""
    for _ in range(200):
        fn()
    torch.cuda.synchronize()
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        for _ in range(calls):
            fn()
        torch.cuda.synchronize()
        best = min(best, (time.perf_counter() - start) / calls)
    return 1e6 * best


def section_overhead(torch, F, kernels):
    x = torch.randn(1024, device="cuda")
    xg = x.clone().requires_grad_()
    xs, w, b = torch.randn(16, 64, device="cuda"), torch.randn(64, device="cuda"), torch.randn(64, device="cuda")
    # gelu is built for f32 and bf16: one operator that picks its build by dtype (docs/torch.md §3); `kernel`
    # is its f32 build, whose fast launcher the dispatch calls.
    dispatch = kernels._kernel_gelu
    kernel = dispatch.kernels[0]
    ops = torch.ops.tskernel_kernels
    main = "kernels.gelu(x): the generated operator as Python calls it (eager, no gradient wanted: launched directly)"
    result = {
        "method": "host wall time per call of 20 000 back-to-back calls on a 1024-element tensor (layer norm: 16×64), then one torch.cuda.synchronize(); best of 5 runs; the kernels take about 2 µs of GPU time, less than the host's time per call, so the host's time is what is measured",
        main: per_call_us(torch, lambda: kernels.gelu(x)),
        "torch.ops.tskernel_kernels.gelu(x): the same operator through PyTorch's dispatcher (what torch.compile's graphs call)": per_call_us(torch, lambda: ops.gelu(x)),
        "kernels.gelu(x) with x.requires_grad: through torch.autograd.Function (forward only)": per_call_us(torch, lambda: kernels.gelu(xg)),
        "Dispatch.launch (the choice by dtype, then the f32 build's fast launcher)": per_call_us(torch, lambda: dispatch.launch(x)),
        "Kernel.launch (the fast launcher alone)": per_call_us(torch, lambda: kernel.launch(x)),
        "Kernel.checked_launch (the generic path alone)": per_call_us(torch, lambda: kernel.checked_launch(x)),
        "torch.nn.functional.gelu (PyTorch's own op)": per_call_us(torch, lambda: F.gelu(x, approximate="tanh")),
        "torch.nn.functional.gelu with x.requires_grad": per_call_us(torch, lambda: F.gelu(xg, approximate="tanh")),
        "torch.empty_like (an allocation alone)": per_call_us(torch, lambda: torch.empty_like(x)),
        "kernels.layer_norm(x, w, b, eps)": per_call_us(torch, lambda: kernels.layer_norm(xs, w, b, 1e-5)),
        "torch.ops.tskernel_kernels.layer_norm": per_call_us(torch, lambda: ops.layer_norm(xs, w, b, 1e-5)),
        "torch.nn.functional.layer_norm": per_call_us(torch, lambda: F.layer_norm(xs, (64,), w, b, 1e-5)),
    }
    for k, v in result.items():
        if k != "method":
            log(f"  overhead: {v:6.2f} µs  {k}")
    # Where the time of a call goes (cProfile's own overhead inflates every figure alike).
    import cProfile
    import io
    import pstats

    profiler = cProfile.Profile()
    profiler.enable()
    for _ in range(5000):
        kernels.gelu(x)
    profiler.disable()
    torch.cuda.synchronize()
    text = io.StringIO()
    pstats.Stats(profiler, stream=text).sort_stats("tottime").print_stats(12)
    result["profile of kernels.gelu (cProfile, 5000 calls)"] = text.getvalue()
    log(text.getvalue())
    result["fastLauncherSource"] = kernel._fast.source if kernel._fast else None
    result["limitUs"] = 10.0
    result["pass"] = result[main] <= 10.0
    return result


def section_kernel_time(torch, kernels, sgemm, build, generator, rounds=60):
    ref = harness_driver()
    driver = ref.Driver()
    stream = torch.cuda.current_stream().cuda_stream
    cubin = os.path.join(build, kernels._images.cubins["sm_90"])
    sgemm_cubin = os.path.join(build, sgemm._images.cubins["sm_90"])
    cases = []

    def harness(path, spec, grid, tensors, sizes):
        """The cubin function launched as the bench does: its arguments packed once, then cuLaunchKernel."""
        fn = driver.function(path, spec.function, spec.shared_bytes)
        pointers = {name: t.data_ptr() for name, t in tensors.items()}
        args = [{"buffer": n} if n in tensors else {"i32": sizes[n]} if isinstance(sizes[n], int) else {"f32": sizes[n]} for n in sizes["order"]]
        params, keep = ref.pack_arguments(args, lambda n: pointers[n])
        return lambda: driver.launch(fn, grid, spec.block, spec.shared_bytes, stream, params), keep

    def time_pair(name, op_call, harness_call, details):
        for _ in range(3):
            op_call()
            harness_call()
        torch.cuda.synchronize()
        samples = {"op": [], "harness": []}
        events = []
        for r in range(rounds):
            torch.cuda._sleep(1_000_000)
            order = [("op", op_call), ("harness", harness_call)] if r % 2 == 0 else [("harness", harness_call), ("op", op_call)]
            for which, call in order:
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                call()
                e1.record()
                events.append((which, e0, e1))
        torch.cuda.synchronize()
        for which, e0, e1 in events:
            samples[which].append(e0.elapsed_time(e1))
        op_ms, harness_ms = statistics.median(samples["op"]), statistics.median(samples["harness"])
        case = {"case": name, **details, "opMs": op_ms, "harnessMs": harness_ms, "ratio": op_ms / harness_ms, "rounds": rounds, "pass": op_ms / harness_ms <= 1.05}
        cases.append(case)
        log(f"  kernel time {name}: op {op_ms * 1e3:.1f} µs, harness {harness_ms * 1e3:.1f} µs, ratio {case['ratio']:.3f}")

    n = 1 << 24
    x, dy = torch.randn(n, device="cuda", generator=generator), torch.randn(n, device="cuda", generator=generator)
    out = torch.empty(n, device="cuda")
    spec = kernels._kernel_gelu.specializations[0]
    launch, keep = harness(cubin, spec, spec.grid({"n": n}), {"out": out, "input": x}, {"n": n, "order": ["out", "input", "n"]})
    time_pair("gelu", lambda: kernels.gelu(x), launch, {"function": spec.function, "shape": [n]})
    spec = kernels._kernel_gelu_backward.specializations[0]
    launch, keep2 = harness(cubin, spec, spec.grid({"n": n}), {"gradInput": out, "input": x, "gradOut": dy}, {"n": n, "order": ["gradInput", "input", "gradOut", "n"]})
    time_pair("gelu_backward", lambda: kernels.gelu_backward(x, dy), launch, {"function": spec.function, "shape": [n]})

    rows, cols = 16384, 1024
    xl, w, b, dyl = torch.randn(rows, cols, device="cuda", generator=generator), torch.randn(cols, device="cuda", generator=generator), torch.randn(cols, device="cuda", generator=generator), torch.randn(rows, cols, device="cuda", generator=generator)
    outl = torch.empty(rows, cols, device="cuda")
    sizes = {"rows": rows, "cols": cols}
    spec = next(s for s in kernels._kernel_layer_norm.specializations if s.accepts(sizes))
    launch, keep3 = harness(cubin, spec, spec.grid(sizes), {"out": outl, "input": xl, "gamma": w, "beta": b}, {"rows": rows, "cols": cols, "eps": 1e-5, "order": ["out", "input", "gamma", "beta", "rows", "cols", "eps"]})
    time_pair("layer_norm", lambda: kernels.layer_norm(xl, w, b, 1e-5), launch, {"function": spec.function, "shape": [rows, cols]})
    spec = next(s for s in kernels._kernel_layer_norm_backward.specializations if s.accepts(sizes))
    gw, gb = torch.zeros(cols, device="cuda"), torch.zeros(cols, device="cuda")
    launch, keep4 = harness(cubin, spec, spec.grid(sizes), {"gradInput": outl, "gradGamma": gw, "gradBeta": gb, "input": xl, "gamma": w, "gradOut": dyl}, {"rows": rows, "cols": cols, "eps": 1e-5, "order": ["gradInput", "gradGamma", "gradBeta", "input", "gamma", "gradOut", "rows", "cols", "eps"]})
    time_pair("layer_norm_backward", lambda: kernels.layer_norm_backward(xl, w, dyl, 1e-5), launch, {"function": spec.function, "shape": [rows, cols], "note": "the op also zero-fills gradGamma and gradBeta (two fills of 1024 floats) before the kernel; the harness launches the kernel alone"})

    m = nn = k = 4096
    a, bm, c = torch.rand(m, k, device="cuda", generator=generator), torch.rand(k, nn, device="cuda", generator=generator), torch.empty(m, nn, device="cuda")
    sizes = {"M": m, "N": nn, "K": k}
    spec = next(s for s in sgemm._kernel_sgemm_multistage.specializations if s.accepts(sizes))
    launch, keep5 = harness(sgemm_cubin, spec, spec.grid(sizes), {"A": a, "B": bm, "C": c}, {"M": m, "N": nn, "K": k, "alpha": 1.0, "beta": 0.0, "order": ["M", "N", "K", "alpha", "A", "B", "beta", "C"]})
    time_pair("sgemm_multistage 4096³", lambda: sgemm.sgemm_multistage(1.0, a, bm, 0.0, c), launch, {"function": spec.function, "shape": [m, nn, k]})
    del keep, keep2, keep3, keep4, keep5
    return {
        "method": "CUDA events around each call on PyTorch's current stream (the op: the Python call, its checks, allocations and launch; the harness: bench/torch-reference.py's Driver.launch of the same function from the same cubin with the same grid, block and tensors), alternating which goes first, each round behind a 0.5 ms GPU sleep so that launches queue up; the median of the rounds",
        "cases": cases,
        "pass": all(c["pass"] for c in cases),
    }


def section_cupy(torch, kernels, build, generator):
    """docs/torch.md's CuPy example: the cubin through cupy.RawModule, on CuPy arrays."""
    import cupy

    module = cupy.RawModule(path=os.path.join(build, "kernels.sm_90.cubin"))
    gelu = module.get_function("gelu_T_f32")
    n = 100_003
    x = cupy.random.default_rng(7).standard_normal(n, dtype=cupy.float32)
    out = cupy.full(n, cupy.nan, dtype=cupy.float32)
    gelu(((n + 255) // 256,), (256,), (out, x, cupy.int32(n)))
    cupy.cuda.runtime.deviceSynchronize()
    ours = kernels.gelu(torch.as_tensor(x, device="cuda"))
    torch.cuda.synchronize()
    same = bool(torch.equal(torch.as_tensor(out, device="cuda"), ours))
    log(f"  cupy: RawModule result equals the operator's: {same}")
    return {"cupy": cupy.__version__, "n": n, "bitwiseEqualToOperator": same, "pass": same}


# ---- matmul (bf16, f16) and attention: tskernel_torch's operators on the prebuilt kernels ----------------------


def gpu_times(torch, calls, rounds, warmup=2):
    """Median GPU milliseconds of each call (CUDA events around it), the calls interleaved round by round."""
    for _ in range(warmup):
        for fn in calls.values():
            fn()
    torch.cuda.synchronize()
    events = {name: [] for name in calls}
    for _ in range(rounds):
        for name, fn in calls.items():
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            events[name].append((start, end))
    torch.cuda.synchronize()
    return {name: statistics.median(s.elapsed_time(e) for s, e in pairs) for name, pairs in events.items()}


def normwise(x, ref):
    import torch

    x = x.detach().double()
    if not bool(torch.isfinite(x).all()):
        return float("nan")
    return float(torch.linalg.norm(x - ref) / torch.linalg.norm(ref))


def matmul_bound16(dtype_name, k):
    """runtime/matmul/matmul16.ts's matmulTolerance16: the output's rounding (2^-8 bf16, 2^-11 f16) plus the f32
    accumulation's k·2^-23, normwise against a float64 product of the same 16-bit inputs."""
    return (2.0**-8 if dtype_name == "bf16" else 2.0**-11) + max(k, 16) * 2.0**-23


def section_matmul16(torch, tsk, generator, rounds=20):
    """tskernel_torch.matmul in bf16 and f16 against a float64 product of the same inputs (outputs poisoned with
    NaN first) within matmul_bound16, the rung that ran, its gradients against float64 autograd, and its GPU
    time against torch.mm's on the same inputs (interleaved, CUDA events, the median)."""
    cases = []
    dtypes = {"bf16": torch.bfloat16, "f16": torch.float16}
    kernels = tsk.prebuilt()
    arch = tsk.driver().device(torch.cuda.current_device())[1]
    for name, dtype in dtypes.items():
        for m, n, k in [(4096, 4096, 4096), (1000, 1000, 1000), (512, 512, 512), (8192, 1024, 2048), (1023, 515, 257)]:
            a = ((torch.rand(m, k, device="cuda", generator=generator) * 2 - 1)).to(dtype)
            b = ((torch.rand(k, n, device="cuda", generator=generator) * 2 - 1)).to(dtype)
            poison = torch.full((m, n), float("nan"), dtype=dtype, device="cuda")
            address = poison.data_ptr()
            del poison
            c = tsk.matmul(a, b)
            torch.cuda.synchronize()
            poisoned = c.data_ptr() == address
            ref = a.double() @ b.double()
            error = normwise(c, ref)
            mm_error = normwise(torch.mm(a, b), ref)
            bound = matmul_bound16(name, k)
            rung = tsk.matmul16_rung(kernels, arch, m, n, k, True, dtype == torch.float16, tsk._multiprocessors_of(torch.cuda.current_device()))[0]
            times = gpu_times(torch, {"ours": lambda: tsk.matmul(a, b), "torch.mm": lambda: torch.mm(a, b)}, rounds if m * n * k <= 2**36 else max(5, rounds // 2))
            tflops = {key: 2.0 * m * n * k / (ms * 1e9) for key, ms in times.items()}
            case = {"dtype": name, "shape": (m, n, k), "rung": rung, "poisoned": poisoned, "normwiseRelativeError": error, "torchMmError": mm_error, "bound": bound,
                    "ms": times, "tflops": tflops, "ratioToTorchMm": times["torch.mm"] / times["ours"], "pass": error <= bound}
            cases.append(case)
            log(f"  matmul {name} {m}x{n}x{k} [{rung}]: {'pass' if case['pass'] else 'FAIL'} normwise {error:.2e} (torch.mm {mm_error:.2e}, bound {bound:.2e}) poisoned {poisoned}; "
                f"{times['ours']:.3f} ms {tflops['ours']:.1f} TFLOP/s, torch.mm {times['torch.mm']:.3f} ms {tflops['torch.mm']:.1f}: {100 * case['ratioToTorchMm']:.1f} % of torch.mm's speed")
            del a, b, c, ref
    # Host time per call on a small product on the wgmma rung (three tensor maps): the maps cached (a hit each
    # call), and made per call (TENSOR_MAP_CACHE 0: encoded, copied from pinned memory), beside torch.mm's.
    a = (torch.rand(128, 64, device="cuda", generator=generator) - 0.5).to(torch.bfloat16)
    b = (torch.rand(64, 256, device="cuda", generator=generator) - 0.5).to(torch.bfloat16)
    host = {"cached": per_call_us(torch, lambda: tsk.matmul(a, b), calls=2000, repeats=3)}
    limit = tsk.tensor_maps.limit
    tsk.tensor_maps.limit = 0
    tsk.tensor_maps.clear()
    try:
        host["perCall"] = per_call_us(torch, lambda: tsk.matmul(a, b), calls=2000, repeats=3)
    finally:
        tsk.tensor_maps.limit = limit
    host["torch.mm"] = per_call_us(torch, lambda: torch.mm(a, b), calls=2000, repeats=3)
    log(f"  matmul bf16 128x256x64 host time per call: tensor maps cached {host['cached']:.1f} µs, made per call {host['perCall']:.1f} µs; torch.mm {host['torch.mm']:.1f} µs")
    # Gradients: dA = dC·Bᵀ and dB = Aᵀ·dC through the same operator, against float64 autograd.
    for name, dtype in dtypes.items():
        m, n, k = 256, 512, 384
        a = (torch.rand(m, k, device="cuda", generator=generator) * 2 - 1).to(dtype).requires_grad_()
        b = (torch.rand(k, n, device="cuda", generator=generator) * 2 - 1).to(dtype).requires_grad_()
        dc = (torch.rand(m, n, device="cuda", generator=generator) * 2 - 1).to(dtype)
        ga, gb = torch.autograd.grad(tsk.matmul(a, b), (a, b), dc)
        a64, b64 = a.detach().double().requires_grad_(), b.detach().double().requires_grad_()
        ra, rb = torch.autograd.grad(a64 @ b64, (a64, b64), dc.double())
        for label, ours, ref in (("gradA", ga, ra), ("gradB", gb, rb)):
            error = normwise(ours, ref)
            bound = matmul_bound16(name, max(m, n))  # the inner dimension: n for dA, m for dB
            cases.append({"dtype": name, "gradient": label, "shape": (m, n, k), "normwiseRelativeError": error, "bound": bound, "pass": error <= bound})
            log(f"  matmul {name} {label} ({m}x{n}x{k}): {'pass' if error <= bound else 'FAIL'} normwise {error:.2e} (bound {bound:.2e})")
    return {"cases": cases, "hostUsPerCall": host, "pass": all(c["pass"] for c in cases)}


def attention_reference(torch, q, k, v, do, causal, scale, rows):
    """float64 attention of q's `rows` against all of k and v for one (batch, head) (S×D each): the output and,
    through autograd, dQ of those rows and dK, dV from those rows' share of dO (bench/torch-attention.py's)."""
    q64 = q[rows].double().requires_grad_(True)
    k64, v64 = k.double().requires_grad_(True), v.double().requires_grad_(True)
    scores = (q64 @ k64.t()) * scale
    if causal:
        keys = torch.arange(k.shape[0], device=q.device)
        scores = scores.masked_fill(keys[None, :] > rows[:, None], float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v64
    out.backward(do[rows].double())
    return out.detach(), q64.grad, k64.grad, v64.grad


ATTENTION_BOUND = 1e-2  # normwise, bf16: 4 times PyTorch's backends' 2.4·10⁻³ on the H100 (bench/results/2026-11-26-torch-attention-h100.json)


def section_attention(torch, F, tsk, generator, rounds=15):
    """tskernel_torch.attention (bf16), forward and gradients, against float64 on sampled (batch, head) pairs and
    query rows (outputs poisoned with NaN first), beside F.scaled_dot_product_attention's errors on the same
    inputs; bound max(ATTENTION_BOUND, 2 × SDPA's). Then the GPU time of the forward, and of the backward
    (autograd.grad after an untimed forward), against F.scaled_dot_product_attention's, interleaved."""
    cases = []
    for b, h, s, d, causal in [(1, 2, 256, 64, False), (1, 2, 256, 64, True), (2, 4, 512, 128, True), (4, 16, 4096, 128, False), (4, 16, 4096, 128, True)]:
        scale = d**-0.5
        make = lambda: (torch.rand(b, h, s, d, device="cuda", generator=generator) * 2 - 1).to(torch.bfloat16)  # noqa: E731
        q, k, v, do = make(), make(), make(), make()
        pairs = [(0, 0), (b - 1, h - 1)]
        if s <= 512:
            rows = torch.arange(s, device="cuda")
        else:
            rows = torch.unique(torch.cat([torch.arange(0, 8, device="cuda"), torch.randint(0, s, (496,), device="cuda", generator=generator), torch.arange(s - 8, s, device="cuda")]))
        refs = {p: attention_reference(torch, q[p], k[p], v[p], do[p], causal, scale, rows) for p in pairs}
        do_sampled = torch.zeros_like(do)
        for p in pairs:
            do_sampled[p][rows] = do[p][rows]
        errors = {}
        for who in ("ours", "sdpa"):
            qg, kg, vg = (x.detach().clone().requires_grad_(True) for x in (q, k, v))
            if who == "ours":
                poison = torch.full_like(q, float("nan"))
                address = poison.data_ptr()
                del poison
                out = tsk.attention(qg, kg, vg, causal=causal, scale=scale)
                poisoned = out.data_ptr() == address
            else:
                out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, scale=scale)
            dq, dk, dv = torch.autograd.grad(out, (qg, kg, vg), do_sampled)
            torch.cuda.synchronize()
            errors[who] = {
                "out": max(normwise(out[p][rows], refs[p][0]) for p in pairs),
                "dq": max(normwise(dq[p][rows], refs[p][1]) for p in pairs),
                "dk": max(normwise(dk[p], refs[p][2]) for p in pairs),
                "dv": max(normwise(dv[p], refs[p][3]) for p in pairs),
            }
        bound = {key: max(ATTENTION_BOUND, 2 * errors["sdpa"][key]) for key in errors["ours"]}
        ok = all(errors["ours"][key] <= bound[key] for key in bound)

        def ours_backward():
            qg, kg, vg = (x.detach().requires_grad_(True) for x in (q, k, v))
            out = tsk.attention(qg, kg, vg, causal=causal, scale=scale)
            return lambda: torch.autograd.grad(out, (qg, kg, vg), do)

        def sdpa_backward():
            qg, kg, vg = (x.detach().requires_grad_(True) for x in (q, k, v))
            out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, scale=scale)
            return lambda: torch.autograd.grad(out, (qg, kg, vg), do)

        forward = gpu_times(torch, {"ours": lambda: tsk.attention(q, k, v, causal=causal, scale=scale), "sdpa": lambda: F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)}, rounds)
        backward_calls = {"ours": ours_backward, "sdpa": sdpa_backward}
        backward = {name: [] for name in backward_calls}
        for _ in range(rounds):
            for name, prepare in backward_calls.items():
                run = prepare()
                start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                start.record()
                run()
                end.record()
                end.synchronize()
                backward[name].append(start.elapsed_time(end))
        backward = {name: statistics.median(times) for name, times in backward.items()}
        flops = 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)
        label = f"B{b}H{h}S{s}D{d}{'c' if causal else ''}"
        case = {"shape": label, "poisoned": poisoned, "sampledPairs": pairs, "sampledRows": int(rows.numel()), "errors": errors, "bound": bound,
                "forwardMs": forward, "backwardMs": backward,
                "forwardTflops": {key: flops / (ms * 1e9) for key, ms in forward.items()}, "backwardTflops": {key: 2.5 * flops / (ms * 1e9) for key, ms in backward.items()},
                "pass": ok}
        cases.append(case)
        e, r = errors["ours"], errors["sdpa"]
        log(f"  attention {label}: {'pass' if ok else 'FAIL'} errors out {e['out']:.2e} dq {e['dq']:.2e} dk {e['dk']:.2e} dv {e['dv']:.2e} "
            f"(SDPA {r['out']:.2e} {r['dq']:.2e} {r['dk']:.2e} {r['dv']:.2e}) poisoned {poisoned}; forward {forward['ours']:.3f} ms ({case['forwardTflops']['ours']:.0f} TFLOP/s), "
            f"SDPA {forward['sdpa']:.3f} ({case['forwardTflops']['sdpa']:.0f}); backward {backward['ours']:.3f} ms, SDPA {backward['sdpa']:.3f}")
        del q, k, v, do, do_sampled, refs
        torch.cuda.empty_cache()
    # Gradients on a small shape, every row: ours against float64 autograd of the same bf16 inputs, beside SDPA's.
    for causal in (False, True):
        b, h, s, d = 1, 2, 128, 64
        q, k, v, do = ((torch.rand(b, h, s, d, device="cuda", generator=generator) * 2 - 1).to(torch.bfloat16) for _ in range(4))
        x64 = [t.double().requires_grad_() for t in (q, k, v)]
        ref = torch.autograd.grad(F.scaled_dot_product_attention(*x64, is_causal=causal), x64, do.double())
        found = {}
        for who, fn in (("ours", lambda *x: tsk.attention(*x, causal=causal)), ("sdpa", lambda *x: F.scaled_dot_product_attention(*x, is_causal=causal))):
            xs = [t.clone().requires_grad_() for t in (q, k, v)]
            found[who] = [normwise(g, r) for g, r in zip(torch.autograd.grad(fn(*xs), xs, do), ref)]
        bound = [max(ATTENTION_BOUND, 2 * e) for e in found["sdpa"]]
        ok = all(e <= limit for e, limit in zip(found["ours"], bound))
        cases.append({"shape": f"B{b}H{h}S{s}D{d}{'c' if causal else ''}", "gradcheck": "dq, dk, dv against float64 autograd, every row", "errors": found, "bound": bound, "pass": ok})
        log(f"  attention gradients B1H2S128D64{'c' if causal else ''}: {'pass' if ok else 'FAIL'} dq dk dv {', '.join(f'{x:.2e}' for x in found['ours'])} (SDPA {', '.join(f'{x:.2e}' for x in found['sdpa'])})")
    return {"cases": cases, "pass": all(c["pass"] for c in cases)}


def section_tensor_ops_compile(torch, tsk, generator):
    """matmul (bf16) and attention under torch.compile(fullgraph=True), forward and backward, against eager;
    and torch.library.opcheck of the three operators."""
    result = {}
    a = (torch.rand(256, 128, device="cuda", generator=generator) - 0.5).to(torch.bfloat16)
    bm = (torch.rand(128, 512, device="cuda", generator=generator) - 0.5).to(torch.bfloat16)
    q, k, v = ((torch.rand(1, 2, 256, 64, device="cuda", generator=generator) - 0.5).to(torch.bfloat16) for _ in range(3))

    def f(a, b, q, k, v):
        return tsk.matmul(a, b).float().square().sum() + tsk.attention(q, k, v, causal=True).float().square().sum()

    def run(fn):
        xs = [t.clone().requires_grad_() for t in (a, bm, q, k, v)]
        y = fn(*xs)
        grads = torch.autograd.grad(y, xs)
        return y.detach(), grads

    torch._dynamo.reset()
    y_eager, g_eager = run(f)
    y_compiled, g_compiled = run(torch.compile(f, fullgraph=True))
    value = abs(float(y_compiled) - float(y_eager)) / abs(float(y_eager))
    grads = [normwise(gc, ge.double()) for gc, ge in zip(g_compiled, g_eager)]
    result["compile"] = {"valueRelativeDifference": value, "gradientDifferences": grads, "pass": value < 1e-3 and all(e < 1e-2 for e in grads)}
    log(f"  compile: fullgraph traced; value {value:.2e}, gradients {', '.join(f'{e:.1e}' for e in grads)}")
    ops = tsk.builtin_ops(torch)
    out, lse = ops.attention_forward(q, k, v, False, 0.125)
    checks = []
    for name, op, args in [
        ("tskernel::matmul16", ops.matmul16, (a.clone().requires_grad_(), bm.clone().requires_grad_())),
        ("tskernel::attention_forward", ops.attention_forward, (q.clone().requires_grad_(), k.clone().requires_grad_(), v.clone().requires_grad_(), False, 0.125)),
        ("tskernel::attention_backward", ops.attention_backward, (q, k, v, out, lse, torch.rand_like(q), False, 0.125)),
    ]:
        found = torch.library.opcheck(op, args)
        checks.append({"op": name, "result": {key: str(x) for key, x in found.items()}, "pass": all(x == "SUCCESS" for x in found.values())})
        log(f"  opcheck {name}: {found}")
    result["opcheck"] = checks
    result["pass"] = result["compile"]["pass"] and all(c["pass"] for c in checks)
    return result


# ---- the bf16 transformer: its operators, training, compile -------------------------------------------------

BF16_ROUNDING = 2.0**-8  # bf16 keeps 8 significant bits: a result rounded to nearest is within 2^-8 relative


def poisoned_call_typed(torch, op, args, outputs):
    """poisoned_call with each output's dtype: `outputs` is [(shape, dtype)]; NaN blocks of those sizes are
    freed just before the call, for the caching allocator to hand to the operator's outputs."""
    poison = [torch.full(shape, float("nan"), dtype=dtype, device="cuda") for shape, dtype in outputs]
    addresses = {p.data_ptr() for p in poison}
    del poison
    result = op(*args)
    found = result if isinstance(result, tuple) else (result,)
    return result, all(o.data_ptr() in addresses for o in found)


def section_transformer_ops(torch, F, kernels, tsk, generator):
    """The bf16 operators of the transformer against float64, gradcheck-style (torch.autograd.gradcheck's
    finite differences mean nothing in bf16): on fresh random bf16 inputs (whose widening to float64 is exact)
    and f32 gamma/beta, each output poisoned with NaN first, the operators' results against PyTorch's functions
    in float64 of the same inputs, elementwise |ours − ref| ≤ atol + rtol·|ref| with rtol the bf16 rounding
    (2^-8; the f32 gradients of gamma and beta: rows·2^-24, their sums' f32 rounding) and atol the f32
    computation's error; then the gradients as autograd gets them (the operator's register_autograd through
    torch.ops, and the eager route) against float64 autograd; PyTorch's own bf16 functions' errors beside ours;
    torch.library.opcheck of the four operators; and tskernel_torch.attention's gradients at the model's shape
    (B2 H4 S256 D64, causal) against float64 autograd, bound max(1e-2, 2 × SDPA's)."""
    cases = []
    bf16 = torch.bfloat16

    def gelu64(x):
        return F.gelu(x, approximate="tanh")

    def record(case):
        cases.append(case)
        log(f"  {case['op']} {case['shape']}: {'pass' if case['pass'] else 'FAIL'} normwise {case['normwiseRelativeError']:.2e}"
            + (f" (PyTorch's bf16: {case['torchNormwise']:.2e})" if "torchNormwise" in case else "") + f" poisoned {case.get('poisoned')}")

    ops = torch.ops.tskernel_kernels
    for shape in [(4096, 1024), (3, 7, 37)]:
        x = (torch.randn(shape, device="cuda", generator=generator) * 3).to(bf16)
        out, poisoned = poisoned_call_typed(torch, kernels.gelu, (x,), [(shape, bf16)])
        ref = gelu64(x.double())
        torch_error = normwise(F.gelu(x, approximate="tanh"), ref)
        record({"op": "gelu (bf16)", "shape": shape, "poisoned": poisoned, "torchNormwise": torch_error, **compare(torch, out, ref, 1e-6, BF16_ROUNDING)})
        dy = torch.randn(shape, device="cuda", generator=generator).to(bf16)
        grad, poisoned = poisoned_call_typed(torch, kernels.gelu_backward, (x, dy), [(shape, bf16)])
        x64 = x.double().requires_grad_()
        (ref,) = torch.autograd.grad(gelu64(x64), x64, dy.double())
        # atol as the f32 operator's: the slope's 1 − tanh² cancels for large |x| in f32.
        record({"op": "gelu_backward (bf16)", "shape": shape, "poisoned": poisoned, **compare(torch, grad, ref, 1e-5, BF16_ROUNDING)})
        for route, fn in (("autograd, eager route", kernels.gelu), ("autograd, torch.ops", ops.gelu)):
            xg = x.clone().requires_grad_()
            (g,) = torch.autograd.grad(fn(xg), xg, dy)
            record({"op": f"gelu (bf16) gradient ({route})", "shape": shape, **compare(torch, g, ref, 1e-5, BF16_ROUNDING)})

    for shape in [(8192, 256), (2, 3, 1000), (64, 4096)]:
        cols = shape[-1]
        rows = math.prod(shape[:-1])
        x = (torch.randn(shape, device="cuda", generator=generator) * 2 + 0.5).to(bf16)
        w = torch.randn(cols, device="cuda", generator=generator)
        b = torch.randn(cols, device="cuda", generator=generator)
        out, poisoned = poisoned_call_typed(torch, kernels.layer_norm_bf16, (x, w, b, 1e-5), [(shape, bf16)])
        x64, w64, b64 = (t.double().requires_grad_() for t in (x, w, b))
        y64 = F.layer_norm(x64, (cols,), w64, b64, 1e-5)
        torch_error = normwise(F.layer_norm(x, (cols,), w.to(bf16), b.to(bf16), 1e-5), y64.detach())
        record({"op": "layer_norm_bf16", "shape": shape, "poisoned": poisoned, "torchNormwise": torch_error, **compare(torch, out, y64.detach(), 1e-4, BF16_ROUNDING)})
        dy = torch.randn(shape, device="cuda", generator=generator).to(bf16)
        refs = torch.autograd.grad(y64, (x64, w64, b64), dy.double())
        sums = max(1e-4, rows * 2.0**-24)
        tolerances = [(1e-4, BF16_ROUNDING), (1e-4, sums), (1e-4, sums)]
        found, poisoned = poisoned_call_typed(torch, kernels.layer_norm_bf16_backward, (x, w, dy, 1e-5), [(shape, bf16), ((cols,), torch.float32), ((cols,), torch.float32)])
        for name, ours, ref, (atol, rtol) in zip(("gradInput", "gradGamma", "gradBeta"), found, refs, tolerances):
            # gradGamma and gradBeta start as zeros (atomics add into them): only gradInput can be poisoned.
            record({"op": f"layer_norm_bf16_backward:{name}", "shape": shape, "poisoned": poisoned if name == "gradInput" else None, **compare(torch, ours, ref, atol, rtol)})
        for route, fn in (("autograd, eager route", kernels.layer_norm_bf16), ("autograd, torch.ops", ops.layer_norm_bf16)):
            xs = [t.clone().requires_grad_() for t in (x, w, b)]
            grads = torch.autograd.grad(fn(*xs, 1e-5), xs, dy)
            for name, ours, ref, (atol, rtol) in zip(("x", "gamma", "beta"), grads, refs, tolerances):
                record({"op": f"layer_norm_bf16 gradient of {name} ({route})", "shape": shape, **compare(torch, ours, ref, atol, rtol)})

    # opcheck: schema, fake implementation, autograd registration, AOT dispatch.
    checks = []
    x = torch.randn(8, 64, device="cuda", generator=generator).to(bf16)
    w, b = torch.randn(64, device="cuda", generator=generator), torch.randn(64, device="cuda", generator=generator)
    dy = torch.randn(8, 64, device="cuda", generator=generator).to(bf16)
    for name, op, args in [
        ("gelu (bf16)", ops.gelu, (x.clone().requires_grad_(),)),
        ("gelu_backward (bf16)", ops.gelu_backward, (x, dy)),
        ("layer_norm_bf16", ops.layer_norm_bf16, (x.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_(), 1e-5)),
        ("layer_norm_bf16_backward", ops.layer_norm_bf16_backward, (x, w, dy, 1e-5)),
    ]:
        found = torch.library.opcheck(op, args)
        checks.append({"op": name, "result": {key: str(v) for key, v in found.items()}, "pass": all(v == "SUCCESS" for v in found.values())})
        log(f"  opcheck {name}: {found}")

    # Attention at the model's shape: every gradient against float64 autograd of the same bf16 inputs.
    b_, h_, s_, d_ = 2, 4, 256, 64
    q, k, v, do = ((torch.rand(b_, h_, s_, d_, device="cuda", generator=generator) * 2 - 1).to(bf16) for _ in range(4))
    x64 = [t.double().requires_grad_() for t in (q, k, v)]
    out64 = F.scaled_dot_product_attention(*x64, is_causal=True)
    ref = (out64.detach(), *torch.autograd.grad(out64, x64, do.double()))
    errors = {}
    for who, fn in (("ours", lambda *t: tsk.attention(*t, causal=True)), ("sdpa", lambda *t: F.scaled_dot_product_attention(*t, is_causal=True))):
        xs = [t.clone().requires_grad_() for t in (q, k, v)]
        out = fn(*xs)
        errors[who] = [normwise(out, ref[0])] + [normwise(g, r) for g, r in zip(torch.autograd.grad(out, xs, do), ref[1:])]
    bound = [max(1e-2, 2 * e) for e in errors["sdpa"]]
    attention_case = {"op": "attention (out, dq, dk, dv)", "shape": f"B{b_}H{h_}S{s_}D{d_} causal", "errors": errors, "bound": bound, "pass": all(e <= limit for e, limit in zip(errors["ours"], bound))}
    log(f"  attention B{b_}H{h_}S{s_}D{d_} causal: {'pass' if attention_case['pass'] else 'FAIL'} out dq dk dv {', '.join(f'{e:.2e}' for e in errors['ours'])} (SDPA {', '.join(f'{e:.2e}' for e in errors['sdpa'])})")
    return {
        "bf16Rounding": BF16_ROUNDING,
        "cases": cases,
        "opcheck": checks,
        "attention": attention_case,
        "pass": all(c["pass"] for c in cases) and all(c["pass"] for c in checks) and attention_case["pass"],
    }


TRANSFORMER_BATCH = 32
TRANSFORMER_TOLERANCE = 2e-2  # relative, on the mean loss of the last 50 steps (model.curve_comparison)


def section_transformer(torch, model_module, kernels, tsk, steps):
    """The bf16 transformer (model.py) trained from one seed on the same batches with PyTorch's operators and
    with tskernel's: the mean loss of the last 50 steps and the first step's loss compared
    (model.curve_comparison); beside it, for scale, PyTorch's model from another seed (seed 1) against seed 0,
    the spread that a different start gives; the data's two floors (model.second_order_floors) and whether
    the models got below the one that needs attention (reported, not tested); tokens per second of both."""
    batch, seq = TRANSFORMER_BATCH, model_module.SEQ
    data = model_module.transformer_batches(steps, batch, seq)
    tokens = batch * seq
    lr = model_module.TRANSFORMER_LR
    make = model_module.make_transformer
    ours = model_module.TskernelOps16(kernels, tsk)
    _, torch_losses, torch_times = train(torch, model_module, model_module.TorchOps16, data, steps, make=make, lr=lr)
    model, our_losses, our_times = train(torch, model_module, ours, data, steps, make=make, lr=lr)
    _, seed_losses, _ = train(torch, model_module, model_module.TorchOps16, data, steps, make=make, lr=lr, seed=1)
    comparison = model_module.curve_comparison(our_losses, torch_losses, 50, TRANSFORMER_TOLERANCE)
    spread = model_module.curve_comparison(seed_losses, torch_losses, 50, TRANSFORMER_TOLERANCE)
    floors = model_module.second_order_floors(data)
    steady = slice(20, None)
    result = {
        "steps": steps,
        "batch": batch,
        "seq": seq,
        "tokensPerStep": tokens,
        "parameters": model_module.transformer_parameters(model),
        "learningRate": lr,
        "floors": floors,
        "uniformLoss": math.log(model_module.VOCAB),
        "belowOrderOne": {"torch": comparison["meanLossLastWindowReference"] < floors["orderOne"], "tskernel": comparison["meanLossLastWindow"] < floors["orderOne"]},
        "lossTorch": torch_losses,
        "lossTskernel": our_losses,
        "lossTorchSeed1": seed_losses,
        "comparison": comparison,
        "seedSpread": {k: v for k, v in spread.items() if k != "pass"},
        "msPerStepTorch": 1e3 * statistics.median(torch_times[steady]),
        "msPerStepTskernel": 1e3 * statistics.median(our_times[steady]),
        "tokensPerSecondTorch": tokens / statistics.median(torch_times[steady]),
        "tokensPerSecondTskernel": tokens / statistics.median(our_times[steady]),
        "method": "median step (zero_grad, forward, backward, AdamW step, the loss read back) after the first 20, each started after synchronizing",
        "pass": comparison["pass"] and all(math.isfinite(x) for x in our_losses),
    }
    log(f"  transformer ({result['parameters']} parameters, {tokens} tokens a step): loss {torch_losses[0]:.4f} -> torch {torch_losses[-1]:.4f}, tskernel {our_losses[-1]:.4f} (the chain's entropy {floors['entropy']:.3f}, "
        f"the best from the symbol before alone {floors['orderOne']:.3f}: the mean of the last 50 below it, attention used: {result['belowOrderOne']}); "
        f"mean of the last 50: relative difference {comparison['meanRelativeDifference']:.2e} (tolerance {TRANSFORMER_TOLERANCE}), first step {comparison['firstStepRelativeDifference']:.2e}, "
        f"largest per step {comparison['maxRelativeDifferencePerStep']:.2e}; another seed's: {spread['meanRelativeDifference']:.2e}")
    log(f"  transformer: ms/step torch {result['msPerStepTorch']:.2f}, tskernel {result['msPerStepTskernel']:.2f}; tokens/s torch {result['tokensPerSecondTorch']:.0f}, tskernel {result['tokensPerSecondTskernel']:.0f}")
    return result, data, our_losses


def section_transformer_compile(torch, model_module, kernels, tsk, data, eager_losses, steps):
    """The tskernel transformer under torch.compile(fullgraph=True): no graph break, the bf16 operators and
    attention in the graph, and its losses over `steps` steps against the eager ones (model.curve_comparison
    over the last 10)."""
    torch._dynamo.reset()
    ops = model_module.TskernelOps16(kernels, tsk)
    probe = model_module.make_transformer(ops, torch.device("cuda"))
    explained = torch._dynamo.explain(probe)(data[0][0])
    graphs = "\n".join(str(g.graph) for g in explained.graphs)
    in_graph = {"tskernel_kernels (layer_norm_bf16, gelu)": "tskernel_kernels" in graphs, "tskernel.attention_forward": "tskernel.attention_forward" in graphs}
    del probe
    torch._dynamo.reset()
    start = time.perf_counter()
    _, losses, times = train(torch, model_module, ops, data, steps, compiled=True, make=model_module.make_transformer, lr=model_module.TRANSFORMER_LR)
    total = time.perf_counter() - start
    comparison = model_module.curve_comparison(losses, eager_losses[:steps], 10, TRANSFORMER_TOLERANCE)
    result = {
        "steps": steps,
        "graphs": explained.graph_count,
        "graphBreaks": explained.graph_break_count,
        "inGraph": in_graph,
        "firstStepSeconds": times[0],
        "seconds": total,
        "msPerStepCompiled": 1e3 * statistics.median(times[5:]),
        "lossCompiled": losses,
        "comparisonToEager": comparison,
        "pass": explained.graph_break_count == 0 and all(in_graph.values()) and comparison["pass"],
    }
    log(f"  transformer compile: {explained.graph_count} graph(s), {explained.graph_break_count} break(s), in graph {in_graph}; first step {times[0]:.1f} s, then {result['msPerStepCompiled']:.2f} ms/step; "
        f"mean of the last 10 against eager {comparison['meanRelativeDifference']:.2e}, first step {comparison['firstStepRelativeDifference']:.2e}, largest per step {comparison['maxRelativeDifferencePerStep']:.2e}")
    return result


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(HERE, "build"))
    parser.add_argument("--out", default="torch-ops.json")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--compile-steps", type=int, default=40)
    parser.add_argument("--transformer-steps", type=int, default=300)
    parser.add_argument("--only", help="comma-separated sections")
    args = parser.parse_args(argv)
    build = os.path.abspath(args.build)
    sys.path.insert(0, build)
    sys.path.insert(0, HERE)
    import torch
    import torch.nn.functional as F

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    import kernels
    import sgemm_multistage
    import tskernel_torch
    import model as model_module

    seed = int(time.time())
    generator = torch.Generator(device="cuda").manual_seed(seed)
    props = torch.cuda.get_device_properties(0)
    report = {
        "generator": "examples/torch-app/check.py",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": props.name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "inputSeed": seed,
        "sections": {},
        "errors": {},
    }
    wanted = set(args.only.split(",")) if args.only else None
    state = {}

    def run(name, fn):
        if wanted and name not in wanted:
            return
        log(f"== {name}")
        try:
            result = fn()
            report["sections"][name] = result
        except Exception:
            report["errors"][name] = traceback.format_exc()
            log(report["errors"][name])

    run("correctness", lambda: section_correctness(torch, F, kernels, tskernel_torch, generator))
    run("gradcheck", lambda: section_gradcheck(torch, kernels, generator))
    run("opcheck", lambda: section_opcheck(torch, kernels, sgemm_multistage, generator))
    run("stream", lambda: section_stream(torch, kernels))

    def training():
        result, data, losses = section_training(torch, model_module, kernels, args.steps)
        state.update(data=data, losses=losses)
        return result

    run("training", training)
    if "data" in state:
        run("compile", lambda: section_compile(torch, model_module, kernels, state["data"], state["losses"], args.compile_steps))
    run("overhead", lambda: section_overhead(torch, F, kernels))
    run("kernel_time", lambda: section_kernel_time(torch, kernels, sgemm_multistage, build, generator))
    run("cupy", lambda: section_cupy(torch, kernels, build, generator))
    run("matmul16", lambda: section_matmul16(torch, tskernel_torch, generator))
    run("attention", lambda: section_attention(torch, F, tskernel_torch, generator))
    run("tensor_ops_compile", lambda: section_tensor_ops_compile(torch, tskernel_torch, generator))
    run("transformer_ops", lambda: section_transformer_ops(torch, F, kernels, tskernel_torch, generator))

    def transformer():
        result, data, losses = section_transformer(torch, model_module, kernels, tskernel_torch, args.transformer_steps)
        state.update(transformer_data=data, transformer_losses=losses)
        return result

    run("transformer", transformer)
    if "transformer_data" in state:
        run("transformer_compile", lambda: section_transformer_compile(torch, model_module, kernels, tskernel_torch, state["transformer_data"], state["transformer_losses"], args.compile_steps))
    elif wanted and "transformer_compile" in wanted:
        report["errors"]["transformer_compile"] = "needs the transformer section's eager run: add transformer to --only"
        log(report["errors"]["transformer_compile"])
    report["pass"] = not report["errors"] and all(s.get("pass", False) for s in report["sections"].values())
    with open(args.out, "w") as f:
        json.dump(report, f, indent=1)
        f.write("\n")
    log(f"== {'all sections pass' if report['pass'] else 'FAILED: ' + ', '.join(sorted(set(report['errors']) | {k for k, v in report['sections'].items() if not v.get('pass')}))}")
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
