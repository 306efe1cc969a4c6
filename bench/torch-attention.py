#!/usr/bin/env python3
"""PyTorch's scaled-dot-product attention on each backend (cuDNN, flash, memory-efficient), the yardstick for
tskernel's FlashAttention kernels (issue 22), in one PyTorch process.

For each shape (batch B, heads H, sequence S, head dim D, causal or not; bf16 or f16): Q, K, V drawn fresh
(uniform in [-1, 1]), every backend's forward checked against a float64 reference of the same 16-bit inputs,
and its backward (dQ, dK, dV for a random dO) against float64 autograd, on a sample of (batch, head) pairs and
query rows (a full float64 reference at S = 16384 would take gigabytes): ||out - ref|| / ||ref|| over the
sample, outputs poisoned with NaN first. Then the backends' forwards, and separately their backwards, are
timed interleaved: several rounds, one launch each per round, CUDA events around each call, each round behind
a GPU sleep, the median. FLOPs: forward 4·B·H·S²·D (half of it causal), backward 2.5 times the forward.

Our kernel (examples/flash-attention.ts) joins the same forward rounds with --cubin FILE --functions JSON: the
cubin of its CUDA (tskernel build --target cuda, nvcc for sm_90a) and a JSON {"64": [function, dynamic shared
bytes], "128": [...]} by head dim; it is launched on the same tensors ([B, H, S, D] contiguous, as 2-D
[B·H·S, D]) with tensor maps made here as the runtime's createTensorMap makes them, and checked like the others.
It writes each row's log-sum-exp too, which our backward (examples/flash-attention-backward.ts) reads: with
--backward-cubin FILE --backward-functions JSON ({"64": {"pre": [function, shared], "kv": [...], "q": [...]},
"128": {...}}) it joins the backward rounds (its forward untimed before each, as for the backends) and its dQ,
dK, dV are checked as the backends' are. Each --variant NAME=CUBIN:JSON (repeatable) adds another forward kernel
with the same parameters and launch (examples/flash-attention-regp.ts, which keeps P in registers, is one) to
the same forward rounds as "tskernel NAME", checked the same way.

    python3 bench/torch-attention.py --out attention.json [--shapes B4H16S4096D128,B4H16S4096D128c,...]
        [--cubin flash.cubin --functions flash.json] [--backward-cubin bwd.cubin --backward-functions bwd.json]
        [--variant regp=flash-attention-regp.cubin:forward-regp.json ...]
"""

import argparse
import json
import math
import sys
import time

SHAPES = "B4H16S4096D128,B4H16S4096D128c,B8H16S2048D64,B1H16S16384D128c"


def parse_shape(label):
    """B4H16S4096D128c -> (4, 16, 4096, 128, True): a trailing c means causal."""
    causal = label.endswith("c")
    body = label[:-1] if causal else label
    b, rest = body[1:].split("H")
    h, rest = rest.split("S")
    s, d = rest.split("D")
    return int(b), int(h), int(s), int(d), causal


def forward_flops(b, h, s, d, causal):
    return 4.0 * b * h * s * s * d * (0.5 if causal else 1.0)


def median(values):
    ordered = sorted(values)
    mid = len(ordered) // 2
    return ordered[mid] if len(ordered) % 2 else (ordered[mid - 1] + ordered[mid]) / 2


def reference(q, k, v, do, causal, scale, rows):
    """float64 attention of q's `rows` (query positions) against all of k, v for one (batch, head): the output
    and, through autograd, dQ (those rows), dK and dV (all keys, from those rows' share of dO). q, k, v: S×D."""
    import torch

    q64 = q[rows].double().requires_grad_(True)
    k64 = k.double().requires_grad_(True)
    v64 = v.double().requires_grad_(True)
    scores = (q64 @ k64.t()) * scale
    if causal:
        keys = torch.arange(k.shape[0], device=q.device)
        scores = scores.masked_fill(keys[None, :] > rows[:, None], float("-inf"))
    out = torch.softmax(scores, dim=-1) @ v64
    out.backward(do[rows].double())
    return out.detach(), q64.grad, k64.grad, v64.grad


def rel(x, ref):
    import torch

    x = x.detach().double()
    if not bool(torch.isfinite(x).all()):
        return float("nan")
    return float(torch.linalg.norm(x - ref) / torch.linalg.norm(ref))


class Ours:
    """Our kernels, launched on PyTorch's tensors and stream: the forward of examples/flash-attention.ts (cubin and
    {"64": [function, dynamic shared bytes], "128": [...]} from --cubin/--functions) and, with --backward-cubin and
    --backward-functions ({"64": {"pre": [function, shared], "kv": [...], "q": [...]}, "128": {...}}), the
    backward of examples/flash-attention-backward.ts. Tensors are [B, H, S, D] contiguous, read as 2-D
    [B·H·S, D] through tensor maps made here as the runtime's createTensorMap makes them (cached by address)."""

    def __init__(self, args, torch):
        import importlib.util
        import os

        here = os.path.dirname(os.path.abspath(__file__))
        spec = importlib.util.spec_from_file_location("torch_matmul", os.path.join(here, "torch-matmul.py"))
        self.tm = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(self.tm)
        self.torch = torch
        self.driver = self.tm.Driver()
        self.maps = {}
        self.keep = []
        self.functions = {}
        with open(args.functions) as f:
            self.forward_functions = json.load(f)
        self.forward_cubin = args.cubin
        self.backward_cubin = args.backward_cubin
        # Forward variants by name: (cubin, {"64": [function, shared], ...}), launched as the forward is.
        self.variants = {}
        for spec in args.variant or []:
            name, files = spec.split("=", 1)
            cubin, functions = files.split(":", 1)
            with open(functions) as f:
                self.variants[name] = (cubin, json.load(f))
        self.backward_functions = None
        if args.backward_cubin:
            with open(args.backward_functions) as f:
                self.backward_functions = json.load(f)

    def map(self, tensor, box_rows):
        """A tensor map in device memory of `tensor` as [rows, D] in boxes of box_rows × 64, made once per address and box."""
        key = (tensor.data_ptr(), box_rows)
        if key not in self.maps:
            rows, d = tensor.numel() // tensor.shape[-1], tensor.shape[-1]
            image = self.driver.tensor_map(tensor.data_ptr(), rows, d, box_rows, 64, "bf16")
            buffer = self.torch.frombuffer(bytearray(image), dtype=self.torch.uint8).to(tensor.device)
            self.keep.append(buffer)
            self.maps[key] = buffer.data_ptr()
        return self.maps[key]

    def launch(self, cubin, entry, grid, block, values):
        function, shared = entry
        if (cubin, function) not in self.functions:
            self.functions[(cubin, function)] = self.driver.function(cubin, function, shared)
        fn = self.functions[(cubin, function)]
        array, _storage = self.tm.pack_arguments(values)
        self.driver.launch(fn, grid, block, shared, self.torch.cuda.current_stream().cuda_stream, array)

    def takes(self, s, d, backward=False, variant=None):
        table = self.variants[variant][1] if variant else self.backward_functions if backward else self.forward_functions
        return s % 128 == 0 and str(d) in (table or {})

    def forward(self, q, k, v, out, lse, causal, scale, variant=None):
        """O (out) and the rows' log-sum-exps (lse, f32 [B·H·S]) of q, k, v; with `variant`, that forward kernel's."""
        b, h, s, d = q.shape
        cubin, functions = self.variants[variant] if variant else (self.forward_cubin, self.forward_functions)
        # A table entry: [function, shared bytes] or with [.., query rows a block, threads] (tensor-prep.sh); Q's
        # tensor map has a block's rows in each box.
        entry = functions[str(d)]
        rows, threads = (entry[2], entry[3]) if len(entry) > 2 else (128, 384)
        ptr = lambda t: ("ptr", t.data_ptr())
        values = [ptr(q), ptr(k), ptr(v), ptr(out), ptr(lse)]
        values += [("ptr", self.map(q, rows)), ("ptr", self.map(k, 128)), ("ptr", self.map(v, 128)), ("ptr", self.map(out, 64))]
        values += [("i32", s), ("f32", scale), ("i32", 1 if causal else 0)]
        self.launch(cubin, entry[:2], ((s + rows - 1) // rows, b * h, 1), (threads, 1, 1), values)

    def backward(self, q, k, v, out, lse, do, dsum, dq, dk, dv, causal, scale):
        """dq, dk, dv from the forward's out and lse and the gradient do (dsum: f32 [B·H·S] scratch)."""
        b, h, s, d = q.shape
        rows = b * h * s
        entries = self.backward_functions[str(d)]
        ptr = lambda t: ("ptr", t.data_ptr())
        tail = [("i32", s), ("f32", scale), ("i32", 1 if causal else 0)]
        self.launch(self.backward_cubin, entries["pre"], ((rows * d // 8 + 127) // 128, 1, 1), (128, 1, 1), [ptr(out), ptr(do), ptr(dsum), ("i32", rows)])
        kv_maps = [self.map(q, 64), self.map(k, 128), self.map(v, 128), self.map(do, 64), self.map(dk, 64), self.map(dv, 64)]
        self.launch(self.backward_cubin, entries["kv"], (s // 128, b * h, 1), (384, 1, 1), [ptr(q), ptr(k), ptr(v), ptr(do), ptr(lse), ptr(dsum), ptr(dk), ptr(dv)] + [("ptr", m) for m in kv_maps] + tail)
        q_maps = [self.map(q, 128), self.map(k, 64), self.map(v, 64), self.map(do, 128), self.map(dq, 64)]
        self.launch(self.backward_cubin, entries["q"], (s // 128, b * h, 1), (384, 1, 1), [ptr(q), ptr(k), ptr(v), ptr(do), ptr(lse), ptr(dsum), ptr(dq)] + [("ptr", m) for m in q_maps] + tail)


def main(argv=None):
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--shapes", default=SHAPES)
    parser.add_argument("--dtype", default="bf16", choices=["bf16", "f16"])
    parser.add_argument("--rounds", type=int, default=15)
    parser.add_argument("--no-backward", action="store_true")
    parser.add_argument("--cubin")
    parser.add_argument("--functions")
    parser.add_argument("--backward-cubin")
    parser.add_argument("--backward-functions")
    parser.add_argument("--variant", action="append", help="NAME=CUBIN:JSON, another forward kernel with the forward's parameters (repeatable)")
    args = parser.parse_args(argv)
    import torch
    import torch.nn.functional as F
    from torch.nn.attention import SDPBackend, sdpa_kernel

    device = torch.device("cuda")
    props = torch.cuda.get_device_properties(device)
    ours = Ours(args, torch) if args.cubin else None
    dtype = {"bf16": torch.bfloat16, "f16": torch.float16}[args.dtype]
    backends = {"cudnn": SDPBackend.CUDNN_ATTENTION, "flash": SDPBackend.FLASH_ATTENTION, "efficient": SDPBackend.EFFICIENT_ATTENTION}
    report = {
        "generator": "bench/torch-attention.py",
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "device": props.name,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "cudnn": torch.backends.cudnn.version(),
        "dtype": args.dtype,
        "method": "F.scaled_dot_product_attention under sdpa_kernel(backend); forwards interleaved across backends, backwards "
        "(torch.autograd.grad of a random dO) interleaved separately; CUDA events, each round behind a GPU sleep, the median; "
        "checks against float64 on sampled (batch, head) pairs and query rows, outputs poisoned first",
        "shapes": [],
    }
    for label in args.shapes.split(","):
        b, h, s, d, causal = parse_shape(label)
        scale = 1.0 / math.sqrt(d)
        gen = torch.Generator(device=device).manual_seed(s * d + b + int(time.time()))
        make = lambda: (torch.rand(b, h, s, d, device=device, generator=gen) * 2 - 1).to(dtype)
        q, k, v, do = make(), make(), make(), make()
        # The sample: two (batch, head) pairs; 512 query rows spread over the sequence (the first and last rows included).
        pairs = [(0, 0), (b - 1, h - 1)]
        rows = torch.unique(torch.cat([torch.arange(0, 8, device=device), torch.randint(0, s, (496,), device=device, generator=gen), torch.arange(s - 8, s, device=device)]))
        refs = {pair: reference(q[pair], k[pair], v[pair], do[pair], causal, scale, rows) for pair in pairs}
        # dK and dV of the sample are from the sampled rows' share only: recompute the backends' with dO zero elsewhere.
        do_sampled = torch.zeros_like(do)
        for pair in pairs:
            do_sampled[pair][rows] = do[pair][rows]
        rows_out = []
        fwd, bwd = {}, {}
        for name, backend in backends.items():
            entry = {"id": name}
            try:
                with sdpa_kernel(backend):
                    qg, kg, vg = (x.detach().clone().requires_grad_(True) for x in (q, k, v))
                    out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, scale=scale)
                    dq, dk, dv = torch.autograd.grad(out, (qg, kg, vg), do_sampled)
                torch.cuda.synchronize()
            except RuntimeError as error:
                entry.update({"supported": False, "problem": str(error).splitlines()[0][:300]})
                rows_out.append(entry)
                print(f"{label}: {name}: not supported ({entry['problem'][:120]})", flush=True)
                continue
            errs = {"out": 0.0, "dq": 0.0, "dk": 0.0, "dv": 0.0}
            for pair in pairs:
                ro, rq, rk, rv = refs[pair]
                errs["out"] = max(errs["out"], rel(out[pair][rows], ro))
                errs["dq"] = max(errs["dq"], rel(dq[pair][rows], rq))
                errs["dk"] = max(errs["dk"], rel(dk[pair], rk))
                errs["dv"] = max(errs["dv"], rel(dv[pair], rv))
            entry.update({"supported": True, "errors": errs})
            rows_out.append(entry)

            def forward(backend=backend):
                with sdpa_kernel(backend):
                    return F.scaled_dot_product_attention(q, k, v, is_causal=causal, scale=scale)

            def backward(backend=backend):
                with sdpa_kernel(backend):
                    qg, kg, vg = (x.detach().requires_grad_(True) for x in (q, k, v))
                    out = F.scaled_dot_product_attention(qg, kg, vg, is_causal=causal, scale=scale)
                return lambda: torch.autograd.grad(out, (qg, kg, vg), do)

            fwd[name], bwd[name] = forward, backward
        if ours:
            # Tensor maps name addresses, which the last shape's freed tensors may share with this one's.
            ours.maps.clear()
        if ours and args.dtype == "bf16" and ours.takes(s, d):
            lse = torch.full((b * h * s,), float("nan"), device=device)
            out = torch.full_like(q, float("nan"))
            ours.forward(q, k, v, out, lse, causal, scale)
            torch.cuda.synchronize()
            errs = {"out": max(rel(out[pair][rows], refs[pair][0]) for pair in pairs), "dq": float("nan"), "dk": float("nan"), "dv": float("nan")}
            entry = {"id": "tskernel flash-attention", "supported": True, "errors": errs, "forwardOnly": True}
            target, target_lse = torch.empty_like(q), torch.empty_like(lse)
            fwd[entry["id"]] = lambda target=target, target_lse=target_lse: ours.forward(q, k, v, target, target_lse, causal, scale)
            if args.backward_cubin and ours.takes(s, d, backward=True):
                # Checked as the backends are: dO zero outside the sampled rows, gradients poisoned first.
                dsum = torch.empty_like(lse)
                grads = [torch.full_like(q, float("nan")) for _ in range(3)]
                ours.backward(q, k, v, out, lse, do_sampled, dsum, *grads, causal, scale)
                torch.cuda.synchronize()
                for key, grad, ref_index, sampled in (("dq", grads[0], 1, True), ("dk", grads[1], 2, False), ("dv", grads[2], 3, False)):
                    errs[key] = max(rel(grad[pair][rows] if sampled else grad[pair], refs[pair][ref_index]) for pair in pairs)
                entry["forwardOnly"] = False
                timed = [torch.empty_like(q) for _ in range(3)]

                def backward(target=target, target_lse=target_lse, dsum=dsum, timed=timed):
                    ours.forward(q, k, v, target, target_lse, causal, scale)
                    return lambda: ours.backward(q, k, v, target, target_lse, do, dsum, *timed, causal, scale)

                bwd[entry["id"]] = backward
            rows_out.append(entry)
            # The forward variants: the same launch, checked and timed as the forward is (forward only).
            for variant in ours.variants:
                if not ours.takes(s, d, variant=variant):
                    continue
                v_out, v_lse = torch.full_like(q, float("nan")), torch.full_like(lse, float("nan"))
                ours.forward(q, k, v, v_out, v_lse, causal, scale, variant)
                torch.cuda.synchronize()
                v_errs = {"out": max(rel(v_out[pair][rows], refs[pair][0]) for pair in pairs), "dq": float("nan"), "dk": float("nan"), "dv": float("nan")}
                # The log-sum-exps against the plain kernel's (the same f32 softmax statistics): the largest difference.
                v_errs["lse"] = float((v_lse - lse).abs().max())
                v_entry = {"id": f"tskernel {variant}", "supported": True, "errors": v_errs, "forwardOnly": True}
                v_target, v_target_lse = torch.empty_like(q), torch.empty_like(lse)
                fwd[v_entry["id"]] = lambda variant=variant, t=v_target, tl=v_target_lse: ours.forward(q, k, v, t, tl, causal, scale, variant)
                rows_out.append(v_entry)
        names = list(fwd)
        samples = {name: {"fwd": [], "bwd": []} for name in names}
        for name in names:
            fwd[name]()
            if name in bwd:
                bwd[name]()()
        torch.cuda.synchronize()
        events = []
        for r in range(args.rounds):
            order = names[r % len(names):] + names[: r % len(names)]
            torch.cuda._sleep(3_000_000)
            for name in order:
                e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                e0.record()
                fwd[name]()
                e1.record()
                events.append((name, "fwd", e0, e1))
            if not args.no_backward:
                for name in [x for x in order if x in bwd]:
                    step = bwd[name]()  # its forward, untimed
                    torch.cuda._sleep(1_000_000)
                    e0, e1 = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
                    e0.record()
                    step()
                    e1.record()
                    events.append((name, "bwd", e0, e1))
        torch.cuda.synchronize()
        for name, kind, e0, e1 in events:
            samples[name][kind].append(e0.elapsed_time(e1))
        flops = forward_flops(b, h, s, d, causal)
        pytorch_ms = [median(samples[n]["fwd"]) for n in names if not n.startswith("tskernel")]
        best = flops / (min(pytorch_ms) * 1e9) if pytorch_ms else None
        cudnn_bwd = 2.5 * flops / (median(samples["cudnn"]["bwd"]) * 1e9) if samples.get("cudnn", {}).get("bwd") else None
        for entry in rows_out:
            if not entry.get("supported"):
                continue
            name = entry["id"]
            entry["forwardMs"] = median(samples[name]["fwd"])
            entry["forwardTflops"] = flops / (entry["forwardMs"] * 1e9)
            if samples[name]["bwd"]:
                entry["backwardMs"] = median(samples[name]["bwd"])
                entry["backwardTflops"] = 2.5 * flops / (entry["backwardMs"] * 1e9)
            e = {key: value for key, value in entry["errors"].items()}
            print(
                f"{label}: {name:9s} forward {entry['forwardTflops']:6.1f} TFLOP/s ({entry['forwardMs']:.3f} ms)"
                + (f"  backward {entry['backwardTflops']:6.1f} TFLOP/s" if "backwardTflops" in entry else "")
                + f"  err out {e['out']:.2e} dq {e['dq']:.2e} dk {e['dk']:.2e} dv {e['dv']:.2e}"
                + (f" lse-vs-plain {e['lse']:.1e}" if "lse" in e else "")
                + (f"  ({100 * entry['forwardTflops'] / best:.1f} % of the fastest PyTorch backend's forward" if name.startswith("tskernel") and best else "")
                + (f", backward {100 * entry['backwardTflops'] / cudnn_bwd:.1f} % of cuDNN's)" if name.startswith("tskernel") and best and "backwardTflops" in entry and cudnn_bwd else (")" if name.startswith("tskernel") and best else "")),
                flush=True,
            )
        report["shapes"].append({"label": label, "batch": b, "heads": h, "seq": s, "headDim": d, "causal": causal, "scale": scale,
                                 "sampledPairs": pairs, "sampledRows": int(rows.numel()), "rounds": args.rounds, "forwardFlops": flops, "rows": rows_out})
        del q, k, v, do, do_sampled, refs
        torch.cuda.empty_cache()
        # After every shape, so that a run cut short by its time limit keeps the shapes it finished.
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
