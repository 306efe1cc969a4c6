"""PyTorch's per-op launch overhead, beside `tskernel bench launch` on the same GPU (bench/gpu.sh --only launch
runs it first; the Node runner joins its JSON to the CUDA report). The op is one tiny kernel, as ours is:
y.add_(x, alpha=0) on 1024 floats (y stays the same, as our saxpy with a = 0 leaves it). Measured as the
launch benchmark measures ours: bursts of 1000 and of 100 ops queued back to back (host time per op before
the burst's synchronize, median of 10 bursts), ops with torch.cuda.synchronize() after each, and a CUDA graph of
10 ops replayed (host time per op); the op's own time by CUDA events around one op (median of 100), and
per op of 1000 back to back."""

import argparse
import json
import statistics
import time

import torch


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--out", required=True)
    parser.add_argument("--burst", type=int, default=1000)
    parser.add_argument("--bursts", type=int, default=10)
    args = parser.parse_args()
    device = torch.device("cuda")
    x = torch.rand(1024, device=device)
    y = torch.rand(1024, device=device)

    def op() -> None:
        y.add_(x, alpha=0.0)

    for _ in range(200):
        op()
    torch.cuda.synchronize()

    def queued_per_op(burst: int) -> float:
        per_op = []
        for _ in range(args.bursts):
            start = time.perf_counter()
            for _ in range(burst):
                op()
            per_op.append((time.perf_counter() - start) * 1e6 / burst)
            torch.cuda.synchronize()
        return statistics.median(per_op)

    queued = queued_per_op(args.burst)
    queued_short = queued_per_op(min(100, args.burst))

    round_trips = max(20, args.burst // 10)
    synchronized = []
    for _ in range(args.bursts):
        start = time.perf_counter()
        for _ in range(round_trips):
            op()
            torch.cuda.synchronize()
        synchronized.append((time.perf_counter() - start) * 1e6 / round_trips)

    stream = torch.cuda.Stream()
    stream.wait_stream(torch.cuda.current_stream())
    with torch.cuda.stream(stream):
        for _ in range(3):
            op()
    torch.cuda.current_stream().wait_stream(stream)
    graph = torch.cuda.CUDAGraph()
    with torch.cuda.graph(graph):
        for _ in range(10):
            op()
    replays = max(1, args.burst // 10)
    replayed = []
    for _ in range(args.bursts):
        start = time.perf_counter()
        for _ in range(replays):
            graph.replay()
        replayed.append((time.perf_counter() - start) * 1e6 / (replays * 10))
        torch.cuda.synchronize()

    begin = torch.cuda.Event(enable_timing=True)
    end = torch.cuda.Event(enable_timing=True)
    own = []
    for _ in range(100):
        begin.record()
        op()
        end.record()
        end.synchronize()
        own.append(begin.elapsed_time(end) * 1000)
    begin.record()
    for _ in range(1000):
        op()
    end.record()
    end.synchronize()
    result = {
        "torch": torch.__version__,
        "device": torch.cuda.get_device_name(0),
        "op": "y.add_(x, alpha=0) on 1024 floats",
        "queuedUs": queued,
        "queuedShortUs": queued_short,
        "synchronizedUs": statistics.median(synchronized),
        "graphReplayedUs": statistics.median(replayed),
        "kernelUs": statistics.median(own),
        "backToBackUs": begin.elapsed_time(end) * 1000 / 1000,
        "bursts": args.bursts,
        "burst": args.burst,
    }
    print(json.dumps(result, indent=2))
    with open(args.out, "w") as f:
        json.dump(result, f, indent=2)


if __name__ == "__main__":
    main()
