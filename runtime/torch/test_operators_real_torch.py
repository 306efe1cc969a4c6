"""The operators of tskernel_torch.py's matmul (bf16, f16) and attention in a real PyTorch (2.4 or later, CPU is
enough), where the stand-ins of test_tskernel_torch.py cannot reach: the schemas PyTorch parses, the fake
implementations under FakeTensorMode, the autograd registration run eagerly and under
torch.compile(fullgraph=True) (AOT autograd, the aot_eager backend), and torch.library.opcheck. The kernels'
launches are replaced by float64 references on the CPU and the CUDA-device check is switched off, so what is
tested is the wiring around the kernels: which tensors the backward gets, in which order, and what it returns.
The kernels themselves are checked on the GPU (examples/torch-app/check.py --only matmul16,attention,tensor_ops_compile).
Skipped where no such PyTorch is installed (CI's Debian PyTorch is 1.13).

    python3 -m unittest runtime/torch/test_operators_real_torch.py
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


if __name__ == "__main__":
    unittest.main()
