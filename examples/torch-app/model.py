"""The model the PyTorch example trains, once with PyTorch's layer norm and GELU and once with tskernel's.

A small next-token model over 256 symbols: an embedding, residual MLP blocks (the feed-forward half of a
transformer block: layer norm, up-projection, GELU, down-projection), a final layer norm and a linear head.
The text is synthetic and deterministic: a fixed random Markov chain in which each symbol is followed by one
of four likely symbols, so the loss falls from ln 256 ≈ 5.55 toward the chain's entropy. The two variants
differ only in `ops`: TorchOps (torch.nn.functional) or TskernelOps (the operators `tskernel build --target
torch` generated from kernels.ts); the linear layers are PyTorch's in both, with TF32 off.
"""

import torch
import torch.nn.functional as F
from torch import nn

VOCAB = 256
EPS = 1e-5


class TorchOps:
    name = "pytorch"

    @staticmethod
    def layer_norm(x, weight, bias):
        return F.layer_norm(x, (x.shape[-1],), weight, bias, EPS)

    @staticmethod
    def gelu(x):
        return F.gelu(x, approximate="tanh")


class TskernelOps:
    """The generated operators of kernels.ts (module `kernels`, built into a directory on sys.path)."""

    name = "tskernel"

    def __init__(self, kernels):
        self.kernels = kernels

    def layer_norm(self, x, weight, bias):
        return self.kernels.layer_norm(x, weight, bias, EPS)

    def gelu(self, x):
        return self.kernels.gelu(x)


class Block(nn.Module):
    def __init__(self, width, hidden, ops):
        super().__init__()
        self.ops = ops
        self.norm_weight = nn.Parameter(torch.ones(width))
        self.norm_bias = nn.Parameter(torch.zeros(width))
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        h = self.ops.layer_norm(x, self.norm_weight, self.norm_bias)
        return x + self.down(self.ops.gelu(self.up(h)))


class Model(nn.Module):
    def __init__(self, ops, width=256, hidden=1024, depth=4, context=4):
        super().__init__()
        self.context = context
        # The last `context` symbols, each embedded, side by side: width / context each.
        self.embed = nn.Embedding(VOCAB, width // context)
        self.blocks = nn.ModuleList(Block(width, hidden, ops) for _ in range(depth))
        self.ops = ops
        self.norm_weight = nn.Parameter(torch.ones(width))
        self.norm_bias = nn.Parameter(torch.zeros(width))
        self.head = nn.Linear(width, VOCAB)

    def forward(self, windows):
        # windows: [batch, positions, context] symbols -> logits [batch, positions, VOCAB]
        x = self.embed(windows).flatten(-2)
        for block in self.blocks:
            x = block(x)
        return self.head(self.ops.layer_norm(x, self.norm_weight, self.norm_bias))


def make_model(ops, device, seed=0):
    """The same initial weights for any ops: the parameters are made in the same order from one seed."""
    torch.manual_seed(seed)
    return Model(ops).to(device)


def markov_chain(seed=1):
    """Each symbol's four likely successors (80 % of the probability) and the rest spread evenly."""
    generator = torch.Generator().manual_seed(seed)
    probabilities = torch.full((VOCAB, VOCAB), 0.2 / (VOCAB - 4), dtype=torch.float64)
    for symbol in range(VOCAB):
        likely = torch.randperm(VOCAB, generator=generator)[:4]
        probabilities[symbol, likely] = torch.tensor([0.4, 0.2, 0.1, 0.1], dtype=torch.float64)
    return probabilities / probabilities.sum(dim=1, keepdim=True)


def chain_entropy(probabilities):
    """The loss a perfect model of the chain reaches (nats), averaged over its stationary distribution."""
    stationary = torch.full((VOCAB,), 1.0 / VOCAB, dtype=torch.float64)
    for _ in range(200):
        stationary = stationary @ probabilities
    per_symbol = -(probabilities * probabilities.log()).sum(dim=1)
    return float((stationary * per_symbol).sum())


def batches(steps, batch, positions, context, seed=2, device="cuda"):
    """`steps` batches of (windows [batch, positions, context], targets [batch, positions]), the same for every
    run with the same arguments: sequences of the chain, each window the `context` symbols before a target."""
    probabilities = markov_chain().to(device)
    generator = torch.Generator(device=device).manual_seed(seed)
    length = positions + context
    out = []
    for _ in range(steps):
        sequence = torch.empty(batch, length, dtype=torch.long, device=device)
        sequence[:, 0] = torch.randint(0, VOCAB, (batch,), device=device, generator=generator)
        for t in range(1, length):
            sequence[:, t] = torch.multinomial(probabilities[sequence[:, t - 1]], 1, generator=generator).squeeze(1)
        windows = sequence.unfold(1, context, 1)[:, :positions]
        targets = sequence[:, context : context + positions]
        out.append((windows.contiguous(), targets.contiguous()))
    return out


def loss_of(model, windows, targets):
    logits = model(windows)
    return F.cross_entropy(logits.reshape(-1, VOCAB), targets.reshape(-1))


def optimizer_for(model):
    return torch.optim.AdamW(model.parameters(), lr=2e-3, weight_decay=0.01)


def relative_difference(a, b):
    """Per step |a − b| / |b| over two loss curves; the largest."""
    return max(abs(x - y) / abs(y) for x, y in zip(a, b))

