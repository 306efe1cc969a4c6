"""The operators of tskernel_torch.py's matmul (bf16, f16) and attention in a real PyTorch (2.4 or later, CPU is
enough), where the stand-ins of test_tskernel_torch.py cannot reach: the schemas PyTorch parses, the fake
implementations under FakeTensorMode, the autograd registration run eagerly and under
torch.compile(fullgraph=True) (AOT autograd, the aot_eager backend), and torch.library.opcheck. The kernels'
launches are replaced by float64 references on the CPU and the CUDA-device check is switched off, so what is
tested is the wiring around the kernels: which tensors the backward gets, in which order, and what it returns.
The kernels themselves are checked on the GPU (examples/torch-app/check.py --only matmul16,attention,tensor_ops_compile).
Skipped where no such PyTorch is installed (CI's Debian PyTorch is 1.13).

    python3 -m unittest runtime/torch/test_operators_real_torch.py

With TSKERNEL_TORCH_MODULES naming the generated module of examples/torch-app/kernels.ts (a build's
kernels.py), the same is done for the example's bf16 transformer (RealTorchTransformer): its bf16 operators and
attention replaced by references, a few training steps against PyTorch's operators, eagerly and compiled.
"""

import importlib.util
import math
import os
import sys
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))

try:
    import torch

    usable = hasattr(torch.library, "custom_op") and hasattr(torch.library, "register_autograd")
except ImportError:
    torch, usable = None, False


def load_runtime():
    spec = importlib.util.spec_from_file_location("tskernel_torch_real", os.path.join(HERE, "tskernel_torch.py"))
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # (Dynamo looks traced functions' modules up by name)
    spec.loader.exec_module(module)
    return module


def scores(q, k, causal, scale):
    s = (q.double() @ k.double().transpose(-1, -2)) * scale
    if causal:
        n = q.shape[-2]
        s = s.masked_fill(torch.ones(n, n, dtype=torch.bool).triu(1), float("-inf"))
    return s


@unittest.skipUnless(usable, "needs PyTorch 2.4 or later (torch.library.custom_op)")
class RealTorchOperators(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        rt = cls.rt = load_runtime()
        rt.require_custom_ops(torch)
        rt._check_cuda_tensors = lambda op, named: None  # CPU tensors stand in for CUDA ones
        cls.backward_calls = []

        def forward(torch_, q, k, v, causal, scale):
            s = scores(q, k, causal, scale)
            return (torch.softmax(s, -1) @ v.double()).to(q.dtype), (torch.logsumexp(s, -1) / math.log(2)).float()

        def backward(torch_, q, k, v, out, lse, grad_out, causal, scale):
            cls.backward_calls.append((causal, scale, grad_out.is_contiguous(), lse.dtype))
            p = torch.softmax(scores(q, k, causal, scale), -1)
            do = grad_out.double()
            dp = do @ v.double().transpose(-1, -2)
            ds = p * (dp - (dp * p).sum(-1, keepdim=True))
            return (scale * ds @ k.double()).to(q.dtype), (scale * ds.transpose(-1, -2) @ q.double()).to(q.dtype), (p.transpose(-1, -2) @ do).to(q.dtype)

        rt._matmul16 = lambda torch_, a, b: (a.double() @ b.double()).to(a.dtype)
        rt._attention_forward, rt._attention_backward = forward, backward

    def inputs(self, seed, dtype=torch.bfloat16 if torch else None):
        g = torch.Generator().manual_seed(seed)
        shapes = [(64, 32), (32, 48), (1, 2, 128, 64), (1, 2, 128, 64), (1, 2, 128, 64)]
        return [(torch.rand(s, generator=g) * 2 - 1).to(dtype).requires_grad_() for s in shapes]

    def loss(self, a, b, q, k, v):
        rt = self.rt
        return rt.matmul(a, b).float().square().sum() + rt.attention(q, k, v, causal=True).float().square().sum()

    def test_schemas(self):
        self.assertEqual(str(torch.ops.tskernel.matmul16.default._schema), "tskernel::matmul16(Tensor a, Tensor b) -> Tensor")
        self.assertIn("(Tensor q, Tensor k, Tensor v, bool causal, float scale) -> (Tensor, Tensor)", str(torch.ops.tskernel.attention_forward.default._schema))

    def test_gradients_against_float64_eagerly_and_compiled(self):
        seed = int.from_bytes(os.urandom(4), "little")
        xs = self.inputs(seed)
        eager = torch.autograd.grad(self.loss(*xs), xs)
        x64 = [t.detach().double().requires_grad_() for t in self.inputs(seed)]
        a, b, q, k, v = x64
        y64 = (a @ b).square().sum() + (torch.softmax(scores(q, k, True, 64**-0.5), -1) @ v).square().sum()
        for ours, ref in zip(eager, torch.autograd.grad(y64, x64)):
            # bf16 gradients of bf16 inputs: each element rounded once (2^-8), the loss's terms in f32.
            self.assertLess(float(torch.linalg.norm(ours.double() - ref) / torch.linalg.norm(ref)), 1e-2)
        self.assertEqual(self.backward_calls[-1], (True, 64**-0.5, True, torch.float32))
        torch._dynamo.reset()
        xs = self.inputs(seed)
        compiled = torch.autograd.grad(torch.compile(self.loss, fullgraph=True, backend="aot_eager")(*xs), xs)
        for c, e in zip(compiled, eager):
            self.assertTrue(torch.equal(c, e))

    def test_fake_implementations_check_shapes(self):
        from torch._subclasses.fake_tensor import FakeTensorMode

        with FakeTensorMode():
            q = torch.empty(2, 3, 256, 128, dtype=torch.bfloat16)
            out, lse = torch.ops.tskernel.attention_forward(q, q, q, False, 0.1)
            self.assertEqual((out.shape, lse.shape, lse.dtype), (q.shape, (2, 3, 256), torch.float32))
            self.assertEqual(torch.ops.tskernel.matmul16(torch.empty(5, 7, dtype=torch.float16), torch.empty(7, 3, dtype=torch.float16)).shape, (5, 3))
            with self.assertRaisesRegex(self.rt.TskernelError, "seq must be a positive multiple of 128, got 200"):
                torch.ops.tskernel.attention_forward(*(torch.empty(1, 2, 200, 64, dtype=torch.bfloat16),) * 3, False, 0.1)

    def test_opcheck(self):
        ops = self.rt.builtin_ops(torch)
        a, b, q, k, v = self.inputs(7)
        out, lse = ops.attention_forward(q.detach(), k.detach(), v.detach(), False, 0.125)
        for op, args in [
            (ops.matmul16, (a, b)),
            (ops.attention_forward, (q, k, v, False, 0.125)),
            (ops.attention_backward, (q.detach(), k.detach(), v.detach(), out, lse, torch.rand_like(out), False, 0.125)),
        ]:
            self.assertEqual(set(torch.library.opcheck(op, args).values()), {"SUCCESS"})


# ---- examples/torch-app's bf16 transformer on the generated operators --------------------------------------

MODULES = os.environ.get("TSKERNEL_TORCH_MODULES", "")


def load_app_module():
    """The generated module of examples/torch-app/kernels.ts (TSKERNEL_TORCH_MODULES=<build>/kernels.py), with
    the runtime beside it, and the example's model.py."""
    build = os.path.dirname(os.path.abspath(MODULES))
    for path in (build, os.path.join(os.path.dirname(os.path.dirname(HERE)), "examples", "torch-app")):
        if path not in sys.path:
            sys.path.insert(0, path)
    import kernels
    import model
    import tskernel_torch

    return kernels, model, tskernel_torch


@unittest.skipUnless(usable and MODULES.endswith("kernels.py"), "needs PyTorch 2.4 or later and TSKERNEL_TORCH_MODULES=<build>/kernels.py")
class RealTorchTransformer(unittest.TestCase):
    """The transformer of examples/torch-app/model.py on the generated bf16 operators (gelu,
    layer_norm_bf16, their backward kernels) and tskernel_torch.attention, their launches replaced by float64
    references on the CPU (the device check off): a few training steps against the same model on PyTorch's
    operators, under torch.compile(fullgraph=True) (aot_eager), and opcheck of the four operators."""

    @classmethod
    def setUpClass(cls):
        import inspect
        import textwrap

        import torch.nn.functional as F

        kernels, model, rt = cls.kernels, cls.model, cls.rt = load_app_module()
        source = textwrap.dedent(inspect.getsource(rt.Kernel._bind)).replace('value.device.type != "cuda"', "False")
        scope = {}
        exec(source, vars(rt), scope)
        rt.Kernel._bind = scope["_bind"]
        rt._check_cuda_tensors = lambda op, named: None
        cls.calls = calls = []
        bf16 = torch.bfloat16

        def layer_norm(x, w, b, eps):
            return F.layer_norm(x.double(), (x.shape[-1],), w.double(), b.double(), eps).to(bf16)

        def layer_norm_backward(x, w, dy, eps):
            # (inside a custom operator autograd is off: the formulas of kernels.ts's comment, in float64)
            x64, dy64 = x.double(), dy.double()
            mean = x64.mean(-1, keepdim=True)
            rstd = 1 / torch.sqrt(((x64 - mean) ** 2).mean(-1, keepdim=True) + eps)
            xhat = (x64 - mean) * rstd
            g = dy64 * w.double()
            gx = rstd * (g - g.mean(-1, keepdim=True) - xhat * (g * xhat).mean(-1, keepdim=True))
            rows = lambda t: t.reshape(-1, t.shape[-1]).sum(0).float()  # noqa: E731
            return gx.to(bf16), rows(dy64 * xhat), rows(dy64)

        def gelu(x):
            return F.gelu(x.double(), approximate="tanh").to(bf16)

        def gelu_backward(x, dy):
            x64, c = x.double(), math.sqrt(2 / math.pi)
            t = torch.tanh(c * (x64 + 0.044715 * x64**3))
            return (dy.double() * (0.5 * (1 + t) + 0.5 * x64 * (1 - t * t) * c * (1 + 3 * 0.044715 * x64 * x64))).to(bf16)

        for kernel, reference in [
            (kernels._kernel_layer_norm_bf16, layer_norm),
            (kernels._kernel_layer_norm_bf16_backward, layer_norm_backward),
            (kernels._kernel_gelu.kernels[1], gelu),  # gelu's bf16 build
            (kernels._kernel_gelu_backward.kernels[1], gelu_backward),
        ]:

            def launch(*args, kernel=kernel, reference=reference):
                calls.append(kernel.op)
                if kernel._torch is None:
                    kernel._prepare(torch)
                kernel._bind(args)  # the operator's checks, as a launch makes them
                return reference(*args)

            # (the eager route captured the bound launch, which calls checked_launch)
            kernel.launch = kernel.checked_launch = launch

        def attention_forward(torch_, q, k, v, causal, scale):
            calls.append("tskernel::attention_forward")
            s = scores(q, k, causal, scale)
            return (torch.softmax(s, -1) @ v.double()).to(q.dtype), (torch.logsumexp(s, -1) / math.log(2)).float()

        def attention_backward(torch_, q, k, v, out, lse, grad_out, causal, scale):
            calls.append("tskernel::attention_backward")
            p = torch.softmax(scores(q, k, causal, scale), -1)
            do = grad_out.double()
            ds = p * ((do @ v.double().transpose(-1, -2)) - ((do @ v.double().transpose(-1, -2)) * p).sum(-1, keepdim=True))
            return (scale * ds @ k.double()).to(q.dtype), (scale * ds.transpose(-1, -2) @ q.double()).to(q.dtype), (p.transpose(-1, -2) @ do).to(q.dtype)

        # Every loaded copy of the runtime (RealTorchOperators loads its own): the first to register tskernel::
        # attention_forward is the one whose functions the operator calls.
        for runtime in [m for m in list(sys.modules.values()) if hasattr(m, "_attention_forward") and hasattr(m, "builtin_ops")]:
            runtime._check_cuda_tensors = lambda op, named: None
            runtime._attention_forward, runtime._attention_backward = attention_forward, attention_backward
        cls.data = model.transformer_batches(3, 2, device="cpu")

    def train(self, ops, steps, compiled=False):
        model = self.model.make_transformer(ops, torch.device("cpu"))
        stepper = torch.compile(model, fullgraph=True, backend="aot_eager") if compiled else model
        optimizer = self.model.optimizer_for(model, self.model.TRANSFORMER_LR)
        losses = []
        for step in range(steps):
            optimizer.zero_grad(set_to_none=True)
            loss = self.model.loss_of(stepper, *self.data[step])
            loss.backward()
            optimizer.step()
            losses.append(float(loss.detach()))
        return model, losses

    def test_training_against_pytorch_eagerly_and_compiled(self):
        _, reference = self.train(self.model.TorchOps16, 3)
        del self.calls[:]
        ours = self.model.TskernelOps16(self.kernels, self.rt)
        trained, losses = self.train(ours, 3)
        # Per forward: 9 layer norms (two a block, the last), 4 GELUs, 4 attentions; each with its backward.
        counts = {name: self.calls.count(name) for name in set(self.calls)}
        self.assertEqual(counts, {f"tskernel_kernels::{n}": c for n, c in [("layer_norm_bf16", 27), ("layer_norm_bf16_backward", 27), ("gelu", 12), ("gelu_backward", 12)]}
                         | {"tskernel::attention_forward": 12, "tskernel::attention_backward": 12})
        self.assertTrue(all(p.grad is not None and p.grad.dtype == torch.float32 for p in trained.parameters()))
        # The same functions (references in float64, rounded to bf16 as the kernels round): only roundings differ.
        comparison = self.model.curve_comparison(losses, reference, 2, 1e-3, 1e-3)
        self.assertTrue(comparison["pass"], comparison)
        torch._dynamo.reset()
        explained = torch._dynamo.explain(self.model.make_transformer(ours, torch.device("cpu")))(self.data[0][0])
        graphs = "\n".join(str(g.graph) for g in explained.graphs)
        self.assertEqual((explained.graph_count, explained.graph_break_count), (1, 0))
        self.assertIn("tskernel_kernels.layer_norm_bf16", graphs)
        self.assertIn("tskernel_kernels.gelu", graphs)
        self.assertIn("tskernel.attention_forward", graphs)
        torch._dynamo.reset()
        _, compiled = self.train(ours, 3, compiled=True)
        self.assertEqual(compiled, losses)

    def test_opcheck(self):
        ops = torch.ops.tskernel_kernels
        g = torch.Generator().manual_seed(int.from_bytes(os.urandom(4), "little"))
        x, dy = ((torch.randn(8, 64, generator=g)).to(torch.bfloat16) for _ in range(2))
        w, b = torch.randn(64, generator=g), torch.randn(64, generator=g)
        for op, args in [
            (ops.gelu, (x.clone().requires_grad_(),)),
            (ops.gelu_backward, (x, dy)),
            (ops.layer_norm_bf16, (x.clone().requires_grad_(), w.clone().requires_grad_(), b.clone().requires_grad_(), 1e-5)),
            (ops.layer_norm_bf16_backward, (x, w, dy, 1e-5)),
        ]:
            self.assertEqual(set(torch.library.opcheck(op, args).values()), {"SUCCESS"})
        with self.assertRaisesRegex(self.rt.TskernelError, r"parameter 'gamma' expects a float32 tensor \(f32\), got bfloat16"):
            self.kernels.layer_norm_bf16(x, w.to(torch.bfloat16), b, 1e-5)
        with self.assertRaisesRegex(self.rt.TskernelError, r"no specialization takes these dtypes \(input float16\); they take: gelu_T_f32: input float32; gelu_T_bf16: input bfloat16"):
            self.kernels.gelu(x.half())


if __name__ == "__main__":
    unittest.main()
