#!/usr/bin/env python3
"""The PyTorch example on several GPUs: DistributedDataParallel over NCCL, one process per GPU.

    torchrun --nproc-per-node 2 examples/torch-app/train_ddp.py --build examples/torch-app/build --out ddp.json
    torchrun --nproc-per-node 2 examples/torch-app/train_ddp.py --model transformer --build examples/torch-app/build --out ddp-transformer.json

Each process runs on its own GPU (cuda:<local rank>) and trains the model of model.py on its share of each
global batch (the same batches as check.py's one-GPU run, split by rows), once with PyTorch's layer norm and
GELU and once with tskernel's operators, from the same initial weights. DDP averages the gradients, so each
step sees the gradient of the whole batch, and the loss reported is the mean over the processes, the loss of
the whole batch. Rank 0 writes both loss curves, their largest relative difference, and tokens per second of
each (all processes' tokens, over the steps after the first 20, timed with the clock after synchronizing), and,
given --reference (check.py's report of a one-GPU run), the difference to its tskernel curve.

--model transformer trains model.py's bf16 transformer instead (tskernel_torch.attention and the bf16 layer
norm and GELU of kernels.ts against F.scaled_dot_product_attention, F.layer_norm and F.gelu; 32 sequences of
256 a step, split over the processes). Its curves are compared as check.py's transformer section compares them
(model.curve_comparison: the mean loss of the last 50 steps within 2·10⁻² relative, the first step's within
10⁻²), with each other and, given --reference, with the one-GPU run's tskernel curve (check.py's transformer
section).
"""

import argparse
import json
import os
import statistics
import sys
import time
import traceback

HERE = os.path.dirname(os.path.abspath(__file__))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--build", default=os.path.join(HERE, "build"))
    parser.add_argument("--out", default="ddp.json")
    parser.add_argument("--steps", type=int, default=300)
    parser.add_argument("--reference", help="check.py's JSON of a one-GPU run, to compare the loss curve with")
    parser.add_argument("--model", choices=("mlp", "transformer"), default="mlp")
    args = parser.parse_args(argv)
    sys.path.insert(0, os.path.abspath(args.build))
    sys.path.insert(0, HERE)
    import torch
    import torch.distributed as dist
    from torch.nn.parallel import DistributedDataParallel

    import kernels
    import model as model_module
    import tskernel_torch

    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    local_rank = int(os.environ["LOCAL_RANK"])
    torch.cuda.set_device(local_rank)
    device = torch.device("cuda", local_rank)
    dist.init_process_group("nccl", device_id=device)
    rank, world = dist.get_rank(), dist.get_world_size()

    transformer = args.model == "transformer"
    if transformer:
        batch, positions = 32, model_module.SEQ
        data = model_module.transformer_batches(args.steps, batch, positions, device=device)
        make, lr = model_module.make_transformer, model_module.TRANSFORMER_LR
        torch_ops, our_ops = model_module.TorchOps16, model_module.TskernelOps16(kernels, tskernel_torch)
        reference_section = "transformer"
    else:
        batch, positions, context = 64, 64, 4
        data = model_module.batches(args.steps, batch, positions, context, device=device)
        make, lr = model_module.make_model, 2e-3
        torch_ops, our_ops = model_module.TorchOps, model_module.TskernelOps(kernels)
        reference_section = "training"
    if batch % world:
        raise SystemExit(f"the batch of {batch} does not split over {world} processes")
    share = batch // world
    local = [(w[rank * share : (rank + 1) * share], t[rank * share : (rank + 1) * share]) for w, t in data]

    def train(ops):
        model = make(ops, device)
        ddp = DistributedDataParallel(model, device_ids=[local_rank])
        optimizer = model_module.optimizer_for(model, lr)
        losses, times = [], []
        for step in range(args.steps):
            windows, targets = local[step]
            torch.cuda.synchronize()
            dist.barrier()
            start = time.perf_counter()
            optimizer.zero_grad(set_to_none=True)
            loss = model_module.loss_of(ddp, windows, targets)
            loss.backward()
            optimizer.step()
            mean = loss.detach().clone()
            dist.all_reduce(mean)
            losses.append(float(mean) / world)
            times.append(time.perf_counter() - start)
        return losses, times

    report = {"generator": "examples/torch-app/train_ddp.py", "model": args.model, "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()), "world": world, "devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())], "torch": torch.__version__, "nccl": ".".join(map(str, torch.cuda.nccl.version()))}
    try:
        # Two rounds, PyTorch's model then ours each time: the first round's figures carry the start-up (NCCL's
        # first collectives, cuBLAS's workspaces), so the second round's are the ones reported; the MLP's losses
        # are the same in both rounds (the transformer's may differ in the last bits: SDPA's backward adds with
        # atomics), and the second round's are reported.
        rounds = []
        for _ in range(2):
            torch_losses, torch_times = train(torch_ops)
            our_losses, our_times = train(our_ops)
            rounds.append((torch_times, our_times))
        tokens = batch * positions
        steady = slice(20, None)
        if transformer:
            comparison = model_module.curve_comparison(our_losses, torch_losses, 50, 2e-2)
            tolerance, passed = comparison["tolerance"], comparison["pass"]
        else:
            comparison = None
            difference, tolerance = model_module.relative_difference(our_losses, torch_losses), 1e-2
            passed = difference <= tolerance
        report.update(
            {
                "steps": args.steps,
                "globalBatch": batch,
                "positions": positions,
                "tokensPerStep": tokens,
                "lossTorch": torch_losses,
                "lossTskernel": our_losses,
                "maxRelativeDifference": model_module.relative_difference(our_losses, torch_losses),
                "tolerance": tolerance,
                "tokensPerSecondTorch": tokens / statistics.median(torch_times[steady]),
                "tokensPerSecondTskernel": tokens / statistics.median(our_times[steady]),
                "tokensPerSecondByRound": [{"torch": tokens / statistics.median(t[steady]), "tskernel": tokens / statistics.median(o[steady])} for t, o in rounds],
                "method": "second of two rounds (PyTorch's model, then ours, each round): tokens of the whole batch (all processes) over the median time of a step after the first 20 (zero_grad, forward, backward with DDP's all-reduce, optimizer step, the loss's all-reduce), each step started after synchronizing the GPU and a barrier",
            }
        )
        if comparison is not None:
            report["comparison"] = comparison
        report["pass"] = passed
        if args.reference:
            with open(args.reference) as f:
                one_gpu = json.load(f)["sections"][reference_section]["lossTskernel"][: args.steps]
            report["oneGpuReference"] = args.reference
            if transformer:
                to_one = model_module.curve_comparison(our_losses, one_gpu, 50, 2e-2)
                report["comparisonToOneGpu"] = to_one
                report["maxRelativeDifferenceToOneGpu"] = to_one["maxRelativeDifferencePerStep"]
                report["pass"] = report["pass"] and to_one["pass"]
            else:
                report["maxRelativeDifferenceToOneGpu"] = model_module.relative_difference(our_losses, one_gpu)
                report["pass"] = report["pass"] and report["maxRelativeDifferenceToOneGpu"] <= 1e-2
    except Exception:
        report["error"] = traceback.format_exc()
        report["pass"] = False
        print(report["error"], flush=True)
    if rank == 0:
        with open(args.out, "w") as f:
            json.dump(report, f, indent=1)
            f.write("\n")
        summary = {k: v for k, v in report.items() if not k.startswith("loss")}
        print(json.dumps(summary, indent=1), flush=True)
    dist.destroy_process_group()
    return 0 if report["pass"] else 1


if __name__ == "__main__":
    sys.exit(main())
