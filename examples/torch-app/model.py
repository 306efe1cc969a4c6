"""The models the PyTorch example trains, once with PyTorch's operators and once with tskernel's.

A small next-token model over 256 symbols: an embedding, residual MLP blocks (the feed-forward half of a
transformer block: layer norm, up-projection, GELU, down-projection), a final layer norm and a linear head.
The text is synthetic and deterministic: a fixed random Markov chain in which each symbol is followed by one
of four likely symbols, so the loss falls from ln 256 ≈ 5.55 toward the chain's entropy. The two variants
differ only in `ops`: TorchOps (torch.nn.functional) or TskernelOps (the operators `tskernel build --target
torch` generated from kernels.ts); the linear layers are PyTorch's in both, with TF32 off.
"""

import math

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


def optimizer_for(model, lr=2e-3):
    return torch.optim.AdamW(model.parameters(), lr=lr, weight_decay=0.01)


def relative_difference(a, b):
    """Per step |a − b| / |b| over two loss curves; the largest."""
    return max(abs(x - y) / abs(y) for x, y in zip(a, b))



# ---- the transformer (bf16) ----------------------------------------------------------------------------------
#
# Parameters are f32 (the optimizer's master weights); the forward computes in bf16: the embeddings' sum, every
# linear layer's weights and bias are rounded to bf16 where they are used (as torch.autocast does), the
# residual stream is bf16, and the logits are widened to f32 for the loss. The two variants differ only in
# `ops` (layer_norm, gelu, attention); the linear layers are F.linear in bf16 (cuBLAS) in both.

SEQ = 256  # a multiple of 128, as tskernel_torch.attention needs
TRANSFORMER_LR = 1e-3
BF16 = torch.bfloat16


class TorchOps16:
    """PyTorch's operators. Layer norm runs as torch.autocast runs it, in f32 with the f32 weights, its result
    rounded to bf16 (what layerNormBf16 computes); GELU and attention take and give bf16."""

    name = "pytorch"

    @staticmethod
    def layer_norm(x, weight, bias):
        return F.layer_norm(x.float(), (x.shape[-1],), weight, bias, EPS).to(x.dtype)

    @staticmethod
    def gelu(x):
        return F.gelu(x, approximate="tanh")

    @staticmethod
    def attention(q, k, v):
        return F.scaled_dot_product_attention(q, k, v, is_causal=True)


class TskernelOps16:
    """kernels.ts's bf16 operators (gelu, layer_norm_bf16, with their backward kernels) and
    tskernel_torch.attention (examples/flash-attention-fold.ts forward, flash-attention-backward.ts gradients)."""

    name = "tskernel"

    def __init__(self, kernels, tsk):
        self.kernels = kernels
        self.tsk = tsk

    def layer_norm(self, x, weight, bias):
        return self.kernels.layer_norm_bf16(x, weight, bias, EPS)

    def gelu(self, x):
        return self.kernels.gelu(x)

    def attention(self, q, k, v):
        return self.tsk.attention(q, k, v, causal=True)


def linear16(x, layer):
    """layer(x) with its weight and bias rounded to x's type (bf16) where they are used."""
    return F.linear(x, layer.weight.to(x.dtype), layer.bias.to(x.dtype))


class TransformerBlock(nn.Module):
    def __init__(self, width, heads, hidden, ops):
        super().__init__()
        self.ops = ops
        self.heads = heads
        self.norm1_weight = nn.Parameter(torch.ones(width))
        self.norm1_bias = nn.Parameter(torch.zeros(width))
        self.qkv = nn.Linear(width, 3 * width)
        self.proj = nn.Linear(width, width)
        self.norm2_weight = nn.Parameter(torch.ones(width))
        self.norm2_bias = nn.Parameter(torch.zeros(width))
        self.up = nn.Linear(width, hidden)
        self.down = nn.Linear(hidden, width)

    def forward(self, x):
        # x: [batch, seq, width] bf16, contiguous (the row kernels take it as batch·seq rows)
        b, s, w = x.shape
        h = self.ops.layer_norm(x, self.norm1_weight, self.norm1_bias)
        qkv = linear16(h, self.qkv).view(b, s, 3, self.heads, w // self.heads)
        # [batch, heads, seq, headDim] each, dense, as the attention kernels read them
        q, k, v = (t.contiguous() for t in qkv.permute(2, 0, 3, 1, 4).unbind(0))
        o = self.ops.attention(q, k, v).transpose(1, 2).reshape(b, s, w)
        x = x + linear16(o, self.proj)
        h = self.ops.layer_norm(x, self.norm2_weight, self.norm2_bias)
        return x + linear16(self.ops.gelu(linear16(h, self.up)), self.down)


def sinusoids(seq, width):
    """[seq, width]: sin and cos of each position at width / 2 frequencies from 1 down to 1/10000."""
    frequencies = torch.exp(torch.arange(0, width, 2, dtype=torch.float32) * (-math.log(10000.0) / width))
    angles = torch.arange(seq, dtype=torch.float32)[:, None] * frequencies[None, :]
    return torch.stack([angles.sin(), angles.cos()], dim=-1).flatten(-2)


class Transformer(nn.Module):
    def __init__(self, ops, width=256, heads=4, hidden=1024, depth=4, seq=SEQ):
        super().__init__()
        self.ops = ops
        self.embed = nn.Embedding(VOCAB, width)
        # Fixed sinusoidal positions (a buffer, not a parameter): attending to the position before one's own is
        # then a linear map of them, which a few hundred steps learn; learned positions were far slower to.
        self.register_buffer("position", sinusoids(seq, width), persistent=False)
        self.blocks = nn.ModuleList(TransformerBlock(width, heads, hidden, ops) for _ in range(depth))
        self.norm_weight = nn.Parameter(torch.ones(width))
        self.norm_bias = nn.Parameter(torch.zeros(width))
        self.head = nn.Linear(width, VOCAB)

    def forward(self, tokens):
        # tokens: [batch, seq] symbols -> logits [batch, seq, VOCAB] (f32), each position's next symbol
        x = (self.embed(tokens) + self.position[: tokens.shape[1]]).to(BF16)
        for block in self.blocks:
            x = block(x)
        return linear16(self.ops.layer_norm(x, self.norm_weight, self.norm_bias), self.head).float()


def make_transformer(ops, device, seed=0):
    """The same initial weights for any ops, as make_model."""
    torch.manual_seed(seed)
    return Transformer(ops).to(device)


def transformer_parameters(model):
    return sum(p.numel() for p in model.parameters())


def second_order_sequences(count, length, seed=2, device="cuda"):
    """`count` sequences of `length` symbols: the first two uniform, then each symbol t drawn from the mean of
    the chain's rows (markov_chain()) of symbols t − 1 and t − 2. The symbol before it tells part of what comes
    next; the rest is two back, where only attention sees it (second_order_floors says how much each is worth)."""
    probabilities = markov_chain().to(device)
    generator = torch.Generator(device=device).manual_seed(seed)
    sequence = torch.empty(count, length, dtype=torch.long, device=device)
    sequence[:, :2] = torch.randint(0, VOCAB, (count, 2), device=device, generator=generator)
    for t in range(2, length):
        rows = 0.5 * (probabilities[sequence[:, t - 1]] + probabilities[sequence[:, t - 2]])
        sequence[:, t] = torch.multinomial(rows, 1, generator=generator).squeeze(1)
    return sequence


def transformer_batches(steps, batch, seq=SEQ, seed=2, device="cuda"):
    """`steps` batches of (tokens [batch, seq], targets [batch, seq]: the tokens shifted by one), the same for
    every run with the same arguments."""
    sequences = second_order_sequences(steps * batch, seq + 1, seed, device)
    return [(s[:, :-1].contiguous(), s[:, 1:].contiguous()) for s in sequences.split(batch)]


def second_order_floors(batches):
    """Two reference losses (nats) on these batches' targets from the third symbol on: `entropy`, the loss of
    the chain's own probabilities given the two symbols before (what a perfect model gets); and `orderOne`, the
    loss of the best prediction from the symbol before alone (half its row, half the rows of the symbols that
    came before it in these batches, weighted by how often): a model whose loss is below orderOne has used
    attention to look two back."""
    tokens = torch.cat([t for t, _ in batches])
    targets = torch.cat([t for _, t in batches])
    probabilities = markov_chain().to(tokens.device)
    before, two_back, following = tokens[:, 1:].reshape(-1), tokens[:, :-1].reshape(-1), targets[:, 1:].reshape(-1)
    full = 0.5 * (probabilities[before, following] + probabilities[two_back, following])
    # p(two back | before), counted, then the mean of their rows.
    counts = torch.zeros(VOCAB, VOCAB, dtype=torch.float64, device=tokens.device)
    counts.index_put_((before, two_back), torch.ones_like(before, dtype=torch.float64), accumulate=True)
    earlier = (counts / counts.sum(dim=1, keepdim=True).clamp_min(1)) @ probabilities
    one = 0.5 * (probabilities[before, following] + earlier[before, following])
    return {"entropy": float(-full.log().mean()), "orderOne": float(-one.log().mean())}


def curve_comparison(ours, reference, window, tolerance, first_step_tolerance=1e-2):
    """How close two loss curves of bf16 training are. Step by step they drift apart (each step's rounding
    differs between implementations, and training carries the differences on), so the test is on the mean loss
    over the last `window` steps, relative, within `tolerance`; and on the first step's loss, which is the
    forward pass alone on the same weights, within `first_step_tolerance`. The largest per-step difference is
    reported, not tested."""
    n = min(len(ours), len(reference))
    ours, reference = ours[:n], reference[:n]
    window = min(window, n)
    mean_ours = sum(ours[-window:]) / window
    mean_reference = sum(reference[-window:]) / window
    last = abs(mean_ours - mean_reference) / abs(mean_reference)
    first = abs(ours[0] - reference[0]) / abs(reference[0])
    return {
        "steps": n,
        "window": window,
        "meanLossLastWindow": mean_ours,
        "meanLossLastWindowReference": mean_reference,
        "meanRelativeDifference": last,
        "tolerance": tolerance,
        "firstStepRelativeDifference": first,
        "firstStepTolerance": first_step_tolerance,
        "maxRelativeDifferencePerStep": relative_difference(ours, reference),
        "pass": last <= tolerance and first <= first_step_tolerance,
    }
