"""Small models for pipeplan's profiler tests (core/profiler)."""
import torch
from torch import nn

# Widths of the MLP's layers: unequal, so that stage times differ and one split is best.
WIDTHS = [32, 256, 384, 128, 512, 64, 320, 96, 32]
BATCH = 16


def mlp():
    """Layers named l0..l7, each a Linear followed by a ReLU, in an nn.Sequential."""
    torch.manual_seed(0)
    layers = []
    for i in range(len(WIDTHS) - 1):
        layers.append(nn.Sequential(nn.Linear(WIDTHS[i], WIDTHS[i + 1]), nn.ReLU()))
    model = nn.Sequential(*layers)
    return model, (torch.randn(BATCH, WIDTHS[0]),)


class Tied(nn.Module):
    """An embedding whose matrix the head reuses, and one block called twice."""

    def __init__(self, vocab=50, d=16):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.block = nn.Sequential(nn.Linear(d, d), nn.Tanh())
        self.head = nn.Linear(d, vocab, bias=False)
        self.head.weight = self.embed.weight

    def forward(self, tokens):
        h = self.embed(tokens)
        h = self.block(h)
        h = self.block(h)
        return self.head(h)


def tied():
    torch.manual_seed(0)
    return Tied(), (torch.randint(0, 50, (2, 8)),)


class MaskedBlock(nn.Module):
    def __init__(self, d):
        super().__init__()
        self.proj = nn.Linear(d, d)

    def forward(self, h, mask=None):
        return torch.relu(self.proj(h)) * mask


class Masked(nn.Module):
    """Blocks that take a model input (a mask) as a keyword, inside residual additions in
    the parent's forward, and a module that never runs."""

    def __init__(self, vocab=40, d=8, n=3):
        super().__init__()
        self.embed = nn.Embedding(vocab, d)
        self.blocks = nn.ModuleList(MaskedBlock(d) for _ in range(n))
        self.unused = nn.Dropout(0.5)
        self.head = nn.Linear(d, vocab)

    def forward(self, tokens, mask):
        h = self.embed(tokens)
        for b in self.blocks:
            h = h + b(h, mask=mask)
        return self.head(h)


def masked():
    torch.manual_seed(0)
    return Masked(), (torch.randint(0, 40, (2, 6)),), {"mask": torch.ones(2, 6, 1)}
