#!/usr/bin/env python3
"""Counts the operators one HuggingFace transformer block dispatches in eager PyTorch.

pipeplan's eager framework mode prices the host time of a layer by the operators its
pass dispatches (core/analytic/eagerops.go). This script produces those counts, per
architecture family, by running one block forward and backward on the CPU under

- torch.overrides.TorchFunctionMode: every call that enters torch from Python (a
  torch.* function, a Tensor method, an nn.functional call): what the Python
  interpreter, the argument parser and autograd's recording pay for;
- torch.utils._python_dispatch.TorchDispatchMode: every ATen operator that reaches the
  dispatcher below autograd, in the forward pass and in the backward pass (the autograd
  engine runs the backward's operators from C++, without Python).

The number of operators does not depend on the device or the tensor sizes, so a tiny
configuration on the CPU counts what a GPU run dispatches (views, reshapes and casts
included: each costs host time though it launches no kernel or a trivial one).

The blocks are transcribed from HuggingFace transformers' modeling code (v4.4x; files
named per class below), in training mode, with bf16 weights and activations (as a
training script that loads the model in bf16 runs it), the attention as its "eager"
implementation (torch 1.13 has no scaled_dot_product_attention; the counts of the
attention core are reported apart so the sdpa and flash implementations can replace
them). The rotary tables (cos, sin) are computed once per model in those versions and
passed to every layer, so they are not counted per block.

Run with Debian's python3-torch (CPU): /usr/bin/python3 tools/opcount/count_ops.py
It prints JSON: per family and region, python (forward calls from Python), fwd and bwd
(ATen operators), and the forward's memory-bound kernels (fwd_kernels: operators that
are neither views nor matrix products) with the bytes they read and write (fwd_bytes);
the backward's operators per half of the block (backward_halves) and the attention
core's alone (core_backward). core/analytic/testdata/eager_ops.json holds its output.
The Llama block runs 16 heads so that the rotary tables' reads (one head's width) weigh
on its traffic as little as in a real model.
"""

import json
import math
import operator
import sys

import torch
import torch.nn as nn
import torch.nn.functional as F
from torch.overrides import TorchFunctionMode
from torch.utils._python_dispatch import TorchDispatchMode

DT = torch.bfloat16

# The region the transcribed code is running (set by region()), and whether the counter
# itself is measuring a tensor.
_region = ["other"]
_measuring = [False]


class region:
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        self.prev = _region[0]
        _region[0] = self.name

    def __exit__(self, *a):
        _region[0] = self.prev


class Counts:
    def __init__(self):
        self.c = {}

    def add(self, kind):
        r = self.c.setdefault(_region[0], {"python": 0, "fwd": 0, "bwd": 0, "fwd_kernels": 0, "fwd_bytes": 0})
        r[kind] += 1
        return r


class PyCount(TorchFunctionMode):
    def __init__(self, counts):
        super().__init__()
        self.counts = counts

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        name = getattr(func, "__name__", "")
        # Attribute reads (Tensor.shape, .dtype) are not operators, nor is mark()'s hook.
        if not _measuring[0] and name not in ("__get__", "size", "dim", "shape", "dtype", "device", "requires_grad", "register_hook"):
            self.counts.add("python")
        return func(*args, **kwargs)


class AtenCount(TorchDispatchMode):
    def __init__(self, counts, kind):
        super().__init__()
        self.counts, self.kind = counts, kind

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        r = self.counts.add(self.kind)
        out = func(*args, **(kwargs or {}))
        name = func.overloadpacket.__name__
        if self.kind == "fwd" and name not in VIEWS and name not in GEMMS:
            # A memory-bound kernel: it reads its tensor arguments and writes its outputs.
            ts = [a for a in list(args) + list((kwargs or {}).values()) if isinstance(a, torch.Tensor)]
            ts += [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, torch.Tensor)]
            r["fwd_kernels"] += 1
            _measuring[0] = True  # numel() and element_size() are not the block's calls
            r["fwd_bytes"] += sum(t.numel() * t.element_size() for t in ts)
            _measuring[0] = False
        return out


# ATen operators that return a view (no kernel, no traffic) and the matrix products (the
# analytic model prices them): the rest of the forward's operators are memory-bound
# kernels, whose launches and bytes are reported per region (fwd_kernels, fwd_bytes).
VIEWS = {"view", "_unsafe_view", "_reshape_alias", "transpose", "t", "permute", "expand", "slice",
         "select", "unsqueeze", "squeeze", "split", "split_with_sizes", "chunk", "alias", "as_strided",
         "detach", "unbind", "lift_fresh", "reshape"}
GEMMS = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear"}


# Region tags are set from the block code with region(). The backward pass runs in the
# autograd engine, outside the block's code, so it is counted whole ("backward"), and the
# attention core's and one expert's backward are counted apart on their own graphs
# (core_backward, expert_backward) so that a block's other operators are the difference.


def mark(x, name):
    """Marks the boundary between a block's attention half and its MLP half: the backward
    pass reaches it once the MLP half's operators have run, and the attention half's run
    from there on (the autograd engine runs a block's nodes in reverse order)."""
    if x.requires_grad:
        x.register_hook(lambda g: _region.__setitem__(0, name))
    return x


def linear(x, w, b=None):
    return F.linear(x, w, b)


# ---- LlamaRMSNorm, LlamaMLP, apply_rotary_pos_emb, repeat_kv, LlamaAttention
# (transformers/models/llama/modeling_llama.py); Mistral, Qwen2 and Gemma share them.
def rms_norm(x, w, eps=1e-5):
    with region("norm"):
        dtype = x.dtype
        h = x.to(torch.float32)
        var = h.pow(2).mean(-1, keepdim=True)
        h = h * torch.rsqrt(var + eps)
        return w * h.to(dtype)


def rotate_half(x):
    x1 = x[..., : x.shape[-1] // 2]
    x2 = x[..., x.shape[-1] // 2 :]
    return torch.cat((-x2, x1), dim=-1)


def rotary(q, k, cos, sin):
    with region("rotary"):
        cos = cos.unsqueeze(1)
        sin = sin.unsqueeze(1)
        q = (q * cos) + (rotate_half(q) * sin)
        k = (k * cos) + (rotate_half(k) * sin)
        return q, k


def repeat_kv(x, n):
    b, kv, s, d = x.shape
    if n == 1:
        return x
    x = x[:, :, None, :, :].expand(b, kv, n, s, d)
    return x.reshape(b, kv * n, s, d)


def eager_core(q, k, v, mask, scaling, dropout=0.0, training=True):
    # eager_attention_forward
    with region("core"):
        w = torch.matmul(q, k.transpose(2, 3)) * scaling
        if mask is not None:
            w = w + mask
        w = F.softmax(w, dim=-1, dtype=torch.float32).to(q.dtype)
        w = F.dropout(w, p=dropout, training=training)
        o = torch.matmul(w, v)
        o = o.transpose(1, 2).contiguous()
        return o


class P:
    """Parameters of a block, bf16, requiring gradients."""

    def __init__(self, **shapes):
        for k, s in shapes.items():
            setattr(self, k, nn.Parameter((torch.randn(*s) * 0.02).to(DT)))


def llama_block(p, x, cfg, cos, sin, mask):
    b, s, h = x.shape
    nh, kvh, d = cfg["heads"], cfg["kv_heads"], h // cfg["heads"]
    res = x
    x = rms_norm(x, p.ln1)
    with region("qkv"):
        q = linear(x, p.wq).view(b, s, -1, d).transpose(1, 2)
        k = linear(x, p.wk).view(b, s, -1, d).transpose(1, 2)
        v = linear(x, p.wv).view(b, s, -1, d).transpose(1, 2)
    q, k = rotary(q, k, cos, sin)
    with region("qkv"):  # before the core in every implementation (eager, sdpa, flash)
        k = repeat_kv(k, nh // kvh)
        v = repeat_kv(v, nh // kvh)
    o = eager_core(q, k, v, mask, d ** -0.5)
    with region("out"):
        o = o.reshape(b, s, -1).contiguous()
        o = linear(o, p.wo)
    with region("residual"):
        x = mark(res + o, "attention")
    res = x
    x = rms_norm(x, p.ln2)
    x = llama_mlp(p, x)
    with region("residual"):
        return res + x


def llama_mlp(p, x):
    with region("mlp"):
        g, u = linear(x, p.gate), linear(x, p.up)
        with region("activation"):
            a = F.silu(g) * u
        return linear(a, p.down)


def llama_params(cfg):
    h, f, nh, kvh = cfg["h"], cfg["f"], cfg["heads"], cfg["kv_heads"]
    d = h // nh
    return P(ln1=(h,), ln2=(h,), wq=(nh * d, h), wk=(kvh * d, h), wv=(kvh * d, h), wo=(h, nh * d),
             gate=(f, h), up=(f, h), down=(h, f))


# ---- MixtralSparseMoeBlock (transformers/models/mixtral/modeling_mixtral.py): the
# router, a softmax in fp32, top-k, renormalisation, and a loop over the experts that
# gathers each expert's tokens (torch.where on a one-hot mask), runs its MLP and adds the
# weighted output back with index_add_. Experts that receive no token are skipped, so the
# per-expert operators count once per expert hit; here every expert is hit.
def mixtral_moe(p, x, cfg):
    b, s, h = x.shape
    E, k = cfg["experts"], cfg["top_k"]
    with region("router"):
        x = x.view(-1, h)
        logits = linear(x, p.router)
        rw = F.softmax(logits, dim=1, dtype=torch.float)
        rw, sel = torch.topk(rw, k, dim=-1)
        rw = rw / rw.sum(dim=-1, keepdim=True)
        rw = rw.to(x.dtype)
        out = torch.zeros((b * s, h), dtype=x.dtype)
        mask = F.one_hot(sel, num_classes=E).permute(2, 1, 0)
        hit = torch.greater(mask.sum(dim=(-1, -2)), 0).nonzero()
    for e in hit:
        with region("expert"):
            i = operator.index(e)  # self.experts[expert_idx]: the ModuleList's index
            idx, top = torch.where(mask[e].squeeze(0))
            cur = x[None, top].reshape(-1, h)
            w1, w3, w2 = p.w1[i], p.w3[i], p.w2[i]
            y = linear(F.silu(linear(cur, w1)) * linear(cur, w3), w2) * rw[top, idx, None]
            out.index_add_(0, top, y.to(x.dtype))
    with region("router"):
        return out.reshape(b, s, h)


def mixtral_params(cfg):
    pr = llama_params(cfg)
    h, f, E = cfg["h"], cfg["f"], cfg["experts"]
    pr.router = nn.Parameter((torch.randn(E, h) * 0.02).to(DT))
    pr.w1 = [nn.Parameter((torch.randn(f, h) * 0.02).to(DT)) for _ in range(E)]
    pr.w3 = [nn.Parameter((torch.randn(f, h) * 0.02).to(DT)) for _ in range(E)]
    pr.w2 = [nn.Parameter((torch.randn(h, f) * 0.02).to(DT)) for _ in range(E)]
    return pr


def mixtral_block(p, x, cfg, cos, sin, mask):
    b, s, h = x.shape
    nh, kvh, d = cfg["heads"], cfg["kv_heads"], h // cfg["heads"]
    res = x
    x = rms_norm(x, p.ln1)
    with region("qkv"):
        q = linear(x, p.wq).view(b, s, -1, d).transpose(1, 2)
        k = linear(x, p.wk).view(b, s, -1, d).transpose(1, 2)
        v = linear(x, p.wv).view(b, s, -1, d).transpose(1, 2)
    q, k = rotary(q, k, cos, sin)
    with region("qkv"):  # before the core in every implementation (eager, sdpa, flash)
        k = repeat_kv(k, nh // kvh)
        v = repeat_kv(v, nh // kvh)
    o = eager_core(q, k, v, mask, d ** -0.5)
    with region("out"):
        o = linear(o.reshape(b, s, -1).contiguous(), p.wo)
    with region("residual"):
        x = mark(res + o, "attention")
    res = x
    x = rms_norm(x, p.ln2)
    x = mixtral_moe(p, x, cfg)
    with region("residual"):
        return res + x


# ---- GPT2Block (transformers/models/gpt2/modeling_gpt2.py): LayerNorm, Conv1D (addmm on
# a 2-D view), split heads, eager attention with the causal mask as torch.where and the
# scale as a division, merge heads, dropout after the projections, gelu_new
# (NewGELUActivation, activations.py: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))),
# in Python).
def conv1d(x, w, b):
    size_out = x.size()[:-1] + (w.size(-1),)
    x = torch.addmm(b, x.view(-1, x.size(-1)), w)
    return x.view(size_out)


def gelu_new(x):
    return 0.5 * x * (1.0 + torch.tanh(math.sqrt(2.0 / math.pi) * (x + 0.044715 * torch.pow(x, 3.0))))


def gpt2_block(p, x, cfg, cos, sin, mask):
    b, s, h = x.shape
    nh, d = cfg["heads"], h // cfg["heads"]
    res = x
    with region("norm"):
        x = F.layer_norm(x, (h,), p.ln1w, p.ln1b, 1e-5)
    with region("qkv"):
        q, k, v = conv1d(x, p.attn_w, p.attn_b).split(h, dim=2)
        q = q.view(b, s, nh, d).permute(0, 2, 1, 3)
        k = k.view(b, s, nh, d).permute(0, 2, 1, 3)
        v = v.view(b, s, nh, d).permute(0, 2, 1, 3)
    with region("core"):
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / torch.full([], v.size(-1) ** 0.5, dtype=w.dtype, device=w.device)
        causal = p.bias[:, :, :s, :s]
        mv = torch.finfo(w.dtype).min
        mv = torch.full([], mv, dtype=w.dtype, device=w.device)
        w = torch.where(causal, w.to(w.dtype), mv)
        w = F.softmax(w, dim=-1)
        w = w.type(v.dtype)
        w = F.dropout(w, p=0.1, training=True)
        o = torch.matmul(w, v)
    with region("out"):
        o = o.permute(0, 2, 1, 3).contiguous()
        o = o.view(o.size()[:-2] + (nh * d,))
        o = conv1d(o, p.proj_w, p.proj_b)
        o = F.dropout(o, p=0.1, training=True)
    with region("residual"):
        x = mark(o + res, "attention")
    res = x
    with region("norm"):
        x = F.layer_norm(x, (h,), p.ln2w, p.ln2b, 1e-5)
    with region("mlp"):
        x = conv1d(x, p.fc_w, p.fc_b)
        with region("activation"):
            x = gelu_new(x)
        x = conv1d(x, p.fc2_w, p.fc2_b)
        x = F.dropout(x, p=0.1, training=True)
    with region("residual"):
        return res + x


def gpt2_params(cfg):
    h, f = cfg["h"], cfg["f"]
    pr = P(ln1w=(h,), ln1b=(h,), ln2w=(h,), ln2b=(h,), attn_w=(h, 3 * h), attn_b=(3 * h,),
           proj_w=(h, h), proj_b=(h,), fc_w=(h, f), fc_b=(f,), fc2_w=(f, h), fc2_b=(h,))
    pr.bias = torch.tril(torch.ones(cfg["s"], cfg["s"], dtype=torch.bool)).view(1, 1, cfg["s"], cfg["s"])
    return pr


# ---- GPTNeoXLayer (transformers/models/gpt_neox/modeling_gpt_neox.py): fused QKV, partial
# rotary (rotary_pct 0.25), parallel residual (x + attn(ln1(x)) + mlp(ln2(x))), exact GELU.
def neox_block(p, x, cfg, cos, sin, mask):
    b, s, h = x.shape
    nh, d = cfg["heads"], h // cfg["heads"]
    rd = cos.shape[-1]
    with region("norm"):
        a = F.layer_norm(x, (h,), p.ln1w, p.ln1b, 1e-5)
    with region("qkv"):
        qkv = linear(a, p.qkv_w, p.qkv_b)
        qkv = qkv.view(b, s, nh, 3 * d).transpose(1, 2)
        q, k, v = qkv.chunk(3, dim=-1)
    with region("rotary"):
        q_rot, q_pass = q[..., :rd], q[..., rd:]
        k_rot, k_pass = k[..., :rd], k[..., rd:]
    q_rot, k_rot = rotary(q_rot, k_rot, cos, sin)
    with region("rotary"):
        q = torch.cat([q_rot, q_pass], dim=-1)
        k = torch.cat([k_rot, k_pass], dim=-1)
    o = eager_core(q, k, v, mask, d ** -0.5)
    with region("out"):
        o = linear(o.reshape(b, s, -1).contiguous(), p.dense_w, p.dense_b)
        o = F.dropout(o, p=0.0, training=True)
    with region("norm"):
        m = F.layer_norm(x, (h,), p.ln2w, p.ln2b, 1e-5)
    with region("mlp"):
        m = linear(F.gelu(linear(m, p.fc_w, p.fc_b)), p.fc2_w, p.fc2_b)
        m = F.dropout(m, p=0.0, training=True)
    with region("residual"):
        return m + o + x


def neox_params(cfg):
    h, f = cfg["h"], cfg["f"]
    return P(ln1w=(h,), ln1b=(h,), ln2w=(h,), ln2b=(h,), qkv_w=(3 * h, h), qkv_b=(3 * h,),
             dense_w=(h, h), dense_b=(h,), fc_w=(f, h), fc_b=(f,), fc2_w=(h, f), fc2_b=(h,))


# ---- BertLayer (transformers/models/bert/modeling_bert.py): separate Q, K, V linears,
# transpose_for_scores, eager attention with an additive mask and a division by
# sqrt(d), post-LayerNorm after each residual, exact GELU, dropout 0.1.
def bert_block(p, x, cfg, cos, sin, mask):
    b, s, h = x.shape
    nh, d = cfg["heads"], h // cfg["heads"]

    def heads(t):
        return t.view(t.size()[:-1] + (nh, d)).permute(0, 2, 1, 3)

    with region("qkv"):
        q = heads(linear(x, p.wq, p.bq))
        k = heads(linear(x, p.wk, p.bk))
        v = heads(linear(x, p.wv, p.bv))
    with region("core"):
        w = torch.matmul(q, k.transpose(-1, -2))
        w = w / math.sqrt(d)
        w = w + mask
        w = F.softmax(w, dim=-1)
        w = F.dropout(w, p=0.1, training=True)
        o = torch.matmul(w, v)
        o = o.permute(0, 2, 1, 3).contiguous()
        o = o.view(o.size()[:-2] + (h,))
    with region("out"):
        o = F.dropout(linear(o, p.wo, p.bo), p=0.1, training=True)
    with region("norm"):
        x = mark(F.layer_norm(o + x, (h,), p.ln1w, p.ln1b, 1e-12), "attention")
    with region("mlp"):
        m = F.gelu(linear(x, p.fc_w, p.fc_b))
        m = F.dropout(linear(m, p.fc2_w, p.fc2_b), p=0.1, training=True)
    with region("norm"):
        return F.layer_norm(m + x, (h,), p.ln2w, p.ln2b, 1e-12)


def bert_params(cfg):
    h, f = cfg["h"], cfg["f"]
    return P(wq=(h, h), bq=(h,), wk=(h, h), bk=(h,), wv=(h, h), bv=(h,), wo=(h, h), bo=(h,),
             ln1w=(h,), ln1b=(h,), ln2w=(h,), ln2b=(h,), fc_w=(f, h), fc_b=(f,), fc2_w=(h, f), fc2_b=(h,))


FAMILIES = {
    "llama": (llama_block, llama_params, dict(h=256, f=640, heads=16, kv_heads=8, s=16)),
    "mixtral": (mixtral_block, mixtral_params, dict(h=64, f=96, heads=4, kv_heads=2, s=16, experts=4, top_k=2)),
    # The same block with twice the experts: the difference is what each expert hit adds.
    "mixtral_e8": (mixtral_block, mixtral_params, dict(h=64, f=96, heads=4, kv_heads=2, s=16, experts=8, top_k=2)),
    "gpt2": (gpt2_block, gpt2_params, dict(h=64, f=256, heads=4, s=16)),
    "gpt_neox": (neox_block, neox_params, dict(h=64, f=256, heads=4, s=16, rotary_pct=0.25)),
    "bert": (bert_block, bert_params, dict(h=64, f=256, heads=4, s=16)),
}


def count(family):
    block, params, cfg = FAMILIES[family]
    torch.manual_seed(0)
    p = params(cfg)
    b, s, h = 2, cfg["s"], cfg["h"]
    d = h // cfg["heads"]
    rd = int(d * cfg.get("rotary_pct", 1.0))
    pos = torch.arange(s, dtype=torch.float32)
    inv = 1.0 / (10000 ** (torch.arange(0, rd, 2, dtype=torch.float32) / rd))
    emb = torch.cat([torch.outer(pos, inv)] * 2, dim=-1)
    cos, sin = emb.cos()[None].to(DT).expand(b, s, rd), emb.sin()[None].to(DT).expand(b, s, rd)
    mask = torch.triu(torch.full((s, s), float("-inf")), 1).to(DT)[None, None]
    x = torch.randn(b, s, h, dtype=DT, requires_grad=True)
    counts = Counts()
    # Forward: Python calls and ATen operators, per region.
    with PyCount(counts):
        with AtenCount(counts, "fwd"):
            y = block(p, x, cfg, cos, sin, mask)
    loss_grad = torch.randn_like(y)
    bwd = Counts()
    _region[0] = "mlp"
    with AtenCount(bwd, "bwd"):
        y.backward(loss_grad)
    _region[0] = "other"
    halves = {k: v["bwd"] for k, v in bwd.c.items()}
    regions = counts.c
    out = {"config": cfg, "regions": regions, "backward": sum(halves.values())}
    if len(halves) == 2:  # the families whose blocks have one boundary (not GPT-NeoX)
        out["backward_halves"] = halves
    # The attention core's backward, counted alone (its own graph from detached inputs).
    out["core_backward"] = core_backward(family, cfg, b, s, mask)
    return out


def core_backward(family, cfg, b, s, mask):
    h = cfg["h"]
    nh = cfg["heads"]
    d = h // nh
    q = torch.randn(b, nh, s, d, dtype=DT, requires_grad=True)
    k = torch.randn(b, nh, s, d, dtype=DT, requires_grad=True)
    v = torch.randn(b, nh, s, d, dtype=DT, requires_grad=True)
    c = Counts()
    if family in ("gpt2", "bert"):
        def core():
            w = torch.matmul(q, k.transpose(-1, -2))
            w = w / math.sqrt(d)
            w = w + mask
            w = F.softmax(w, dim=-1)
            w = F.dropout(w, p=0.1, training=True)
            return torch.matmul(w, v).permute(0, 2, 1, 3).contiguous()
    else:
        def core():
            return eager_core(q, k, v, mask, d ** -0.5)
    y = core()
    _region[0] = "core"
    with AtenCount(c, "bwd"):
        y.backward(torch.randn_like(y))
    _region[0] = "other"
    return c.c["core"]["bwd"]


def main():
    res = {"torch": torch.__version__, "families": {f: count(f) for f in FAMILIES}}
    json.dump(res, sys.stdout, indent=1, sort_keys=True)
    print()


if __name__ == "__main__":
    main()
