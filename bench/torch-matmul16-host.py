"""Host time per call of tskernel_torch.matmul in bf16 (and of attention) against torch.mm, from Python, on the GPU
machine: what a small product costs a user beyond its kernel. One process per runtime file, so that two versions
can be compared in alternating processes (PyTorch's operators are one per process).

    python3 bench/torch-matmul16-host.py --runtime path/to/tskernel_torch.py --build examples/torch-app/build [--label x]

Prints one JSON object: microseconds per call (median of 5 blocks of 2000 calls, synchronized at each block's
ends) for each case.
"""

import argparse
import importlib.util
import json
import os
import statistics
import sys
import time

parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
parser.add_argument("--runtime", required=True)
parser.add_argument("--build", required=True)
parser.add_argument("--label", default="")
args = parser.parse_args()
os.environ["TSKERNEL_TORCH_KERNELS"] = os.path.abspath(args.build)

import torch  # noqa: E402

spec = importlib.util.spec_from_file_location("tskernel_torch", args.runtime)
tsk = importlib.util.module_from_spec(spec)
sys.modules["tskernel_torch"] = tsk
spec.loader.exec_module(tsk)

g = torch.Generator(device="cuda").manual_seed(1)


def rand(*shape, grad=False):
    return (torch.rand(*shape, device="cuda", generator=g) - 0.5).to(torch.bfloat16).requires_grad_(grad)


a, b = rand(128, 64), rand(64, 256)  # the wgmma rung (tensor maps cached after the first call)
a2, b2 = rand(1023, 257), rand(257, 515)  # the warp-level rung (k not a multiple of 8)
ag, bg = rand(128, 64, grad=True), rand(64, 256, grad=True)
q, k, v = (rand(1, 2, 128, 64) for _ in range(3))
cases = {
    "tsk.matmul 128x256x64 (wgmma)": lambda: tsk.matmul(a, b),
    "tsk.matmul 1023x515x257 (mma)": lambda: tsk.matmul(a2, b2),
    "torch.mm 128x256x64": lambda: torch.mm(a, b),
    "torch.mm 1023x515x257": lambda: torch.mm(a2, b2),
    "tsk.matmul 128x256x64 forward+backward": lambda: tsk.matmul(ag, bg).sum().backward(),
    "torch.mm 128x256x64 forward+backward": lambda: torch.mm(ag, bg).sum().backward(),
    "tsk.attention 1x2x128x64": lambda: tsk.attention(q, k, v),
}
# Every result checked once against float64 before timing.
for x, y in ((a, b), (a2, b2)):
    got = tsk.matmul(x, y).double()
    want = x.double() @ y.double()
    error = float((got - want).norm() / want.norm())
    assert error < 2**-7, error
for f in cases.values():
    for _ in range(100):
        f()
torch.cuda.synchronize()
result = {"label": args.label, "runtime": args.runtime, "device": torch.cuda.get_device_name(), "torch": torch.__version__, "us_per_call": {}}
for name, f in cases.items():
    blocks = []
    for _ in range(5):
        torch.cuda.synchronize()
        t = time.perf_counter()
        for _ in range(2000):
            f()
        torch.cuda.synchronize()
        blocks.append((time.perf_counter() - t) / 2000 * 1e6)
    result["us_per_call"][name] = round(statistics.median(blocks), 2)
print(json.dumps(result))
