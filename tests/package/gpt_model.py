"""A GPT-2-small-shaped model (random weights, any size) for the memory tests."""

from __future__ import annotations

import math

import torch
from torch import nn
from torch.utils.checkpoint import checkpoint


class Attention(nn.Module):
    def __init__(self, width: int, heads: int, seq: int) -> None:
        super().__init__()
        self.heads = heads
        self.c_attn = nn.Linear(width, 3 * width)
        self.c_proj = nn.Linear(width, width)
        self.attn_dropout = nn.Dropout(0.1)
        self.resid_dropout = nn.Dropout(0.1)
        # True above the diagonal: masked_fill saves a view of this buffer
        self.register_buffer("causal", torch.ones(seq, seq).triu(1).bool())

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        b, t, c = x.shape
        q, k, v = self.c_attn(x).split(c, dim=2)
        q, k, v = (z.view(b, t, self.heads, -1).transpose(1, 2) for z in (q, k, v))
        att = (q @ k.transpose(-2, -1)) / math.sqrt(k.size(-1))
        att = att.masked_fill(self.causal[:t, :t], float("-inf")).softmax(-1)
        y = (self.attn_dropout(att) @ v).transpose(1, 2).reshape(b, t, c)
        return self.resid_dropout(self.c_proj(y))  # type: ignore[no-any-return]


class MLP(nn.Module):
    def __init__(self, width: int) -> None:
        super().__init__()
        self.c_fc = nn.Linear(width, 4 * width)
        self.act = nn.GELU(approximate="tanh")
        self.c_proj = nn.Linear(4 * width, width)
        self.dropout = nn.Dropout(0.1)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.dropout(self.c_proj(self.act(self.c_fc(x))))  # type: ignore[no-any-return]


class Block(nn.Module):
    def __init__(self, width: int, heads: int, seq: int) -> None:
        super().__init__()
        self.ln_1 = nn.LayerNorm(width)
        self.attn = Attention(width, heads, seq)
        self.ln_2 = nn.LayerNorm(width)
        self.mlp = MLP(width)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = x + self.attn(self.ln_1(x))
        return x + self.mlp(self.ln_2(x))  # type: ignore[no-any-return]


class GPT(nn.Module):
    """GPT-2 small is ``GPT(blocks=12, width=768, heads=12, seq=1024, vocab=50257)``.

    ``checkpointed=True`` runs each block under
    ``torch.utils.checkpoint.checkpoint(..., use_reentrant=False)``.
    """

    def __init__(
        self,
        blocks: int = 3,
        width: int = 32,
        heads: int = 4,
        seq: int = 16,
        vocab: int = 100,
        checkpointed: bool = False,
    ) -> None:
        super().__init__()
        self.checkpointed = checkpointed
        self.wte = nn.Embedding(vocab, width)
        self.wpe = nn.Embedding(seq, width)
        self.drop = nn.Dropout(0.1)
        self.h = nn.ModuleList(Block(width, heads, seq) for _ in range(blocks))
        self.ln_f = nn.LayerNorm(width)
        self.lm_head = nn.Linear(width, vocab, bias=False)
        self.lm_head.weight = self.wte.weight  # tied, as in GPT-2

    def forward(self, idx: torch.Tensor) -> torch.Tensor:
        pos = torch.arange(idx.size(1))
        x = self.drop(self.wte(idx) + self.wpe(pos))
        for block in self.h:
            if self.checkpointed:
                x = checkpoint(block, x, use_reentrant=False)
            else:
                x = block(x)
        return self.lm_head(self.ln_f(x))  # type: ignore[no-any-return]


def gpt_loss(
    model: GPT, batch: int = 2, seed: int = 0
) -> tuple[torch.Tensor, torch.Tensor]:
    """``(loss, idx)``: a next-token loss on random tokens."""
    generator = torch.Generator().manual_seed(seed)
    seq, vocab = model.wpe.num_embeddings, model.wte.num_embeddings
    idx = torch.randint(vocab, (batch, seq + 1), generator=generator)
    torch.manual_seed(seed)  # the dropout masks
    logits = model(idx[:, :-1])
    loss = nn.functional.cross_entropy(logits.flatten(0, 1), idx[:, 1:].flatten())
    return loss, idx
