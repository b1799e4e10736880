#!/usr/bin/env python3
"""Counts the memory traffic of the memory-bound kernels a HuggingFace model runs in
eager PyTorch on a GPU, per transformer block and per token, under automatic mixed
precision (fp32 parameters, torch.autocast to bf16: the HuggingFace Trainer's bf16=True)
and in plain bf16.

Every ATen operator of one training forward and backward is seen under a
TorchDispatchMode, below autograd and autocast, so the casts autocast inserts and the
backward's operators are counted as the GPU runs them. An operator that is neither a
view (its output shares an input's storage and it is not in-place), nor a matrix product,
nor an attention kernel is a memory-bound kernel: it reads its tensor arguments and
writes its outputs (the same convention as tools/opcount/count_ops.py).

The real modeling code runs (AutoModelForCausalLM / AutoModelForMaskedLM from a small
configuration of each family). Each family runs at several sizes (hidden, MLP width,
key-value width, vocabulary, layers) so that the traffic of one block per token, as
a.hidden + b.mlp + c.kv, and the traffic outside the blocks per token, as d.vocab +
e.hidden, can be solved from the differences (core/analytic's tests do the solving).

    python3 tools/measure/traffic.py --out traffic.json
"""

import argparse
import json
import traceback

import torch
from torch.utils._python_dispatch import TorchDispatchMode

GEMMS = {"mm", "addmm", "bmm", "baddbmm", "matmul", "linear", "_scaled_mm"}


def is_attention(name):
    return any(k in name for k in ("attention", "flash", "efficient", "cudnn", "sdpa"))


class Traffic(TorchDispatchMode):
    def __init__(self):
        super().__init__()
        self.phase = "fwd"
        self.c = {}

    def add(self, key, v):
        self.c[key] = self.c.get(key, 0) + v

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        out = func(*args, **kwargs)
        name = func.overloadpacket.__name__
        p = self.phase
        self.add(p + "_ops", 1)
        if name in GEMMS:
            self.add(p + "_gemms", 1)
            return out
        if is_attention(name):
            self.add(p + "_attention", 1)
            return out
        if name.startswith("empty") or name.startswith("new_empty"):
            return out  # allocation only: no kernel reads or writes
        ins = [a for a in list(args) + list(kwargs.values()) if isinstance(a, torch.Tensor)]
        for a in list(args) + list(kwargs.values()):
            if isinstance(a, (list, tuple)):
                ins += [t for t in a if isinstance(t, torch.Tensor)]
        outs = [o for o in (out if isinstance(out, (tuple, list)) else [out]) if isinstance(o, torch.Tensor)]
        inplace = name.endswith("_") and not name.startswith("_")
        if not inplace and outs:
            ptrs = {t.untyped_storage().data_ptr() for t in ins if t.device.type == "cuda"}
            if all(o.untyped_storage().data_ptr() in ptrs for o in outs):
                self.add(p + "_views", 1)
                return out
        if not any(t.device.type == "cuda" for t in ins + outs):
            return out
        self.add(p + "_kernels", 1)
        self.add(p + "_bytes", sum(t.numel() * t.element_size() for t in ins + outs))
        return out


FAMILIES = {
    "gpt2": dict(model_type="gpt2", n_head=8, activation_function="gelu_new", attn_pdrop=0.1,
                 embd_pdrop=0.1, resid_pdrop=0.1, n_positions=1024, tie_word_embeddings=True),
    "llama": dict(model_type="llama", num_attention_heads=8, hidden_act="silu", max_position_embeddings=4096,
                  rms_norm_eps=1e-5, rope_theta=500000.0, tie_word_embeddings=True, attention_bias=False),
    "bert": dict(model_type="bert", num_attention_heads=8, hidden_act="gelu", hidden_dropout_prob=0.1,
                 attention_probs_dropout_prob=0.1, max_position_embeddings=1024, type_vocab_size=2),
}

# (hidden, mlp, kv heads, vocab, layers): the base, then one change each.
SIZES = [
    (512, 2048, 8, 4096, 1),
    (512, 2048, 8, 4096, 3),
    (768, 2048, 8, 4096, 3),
    (512, 1024, 8, 4096, 3),
    (512, 2048, 2, 4096, 3),
    (512, 2048, 8, 8192, 1),
]


def config(family, h, ffn, kv, vocab, layers):
    from transformers import AutoConfig

    raw = dict(FAMILIES[family])
    kind = raw.pop("model_type")
    if family == "gpt2":
        raw.update(n_embd=h, n_inner=ffn, n_layer=layers, vocab_size=vocab)
    elif family == "llama":
        raw.update(hidden_size=h, intermediate_size=ffn, num_hidden_layers=layers, num_key_value_heads=kv,
                   vocab_size=vocab, head_dim=h // 8)
    else:
        raw.update(hidden_size=h, intermediate_size=ffn, num_hidden_layers=layers, vocab_size=vocab)
    cfg = AutoConfig.for_model(kind, **raw)
    cfg.use_cache = False
    return cfg


def count(family, precision, size, batch=4, seq=256):
    from transformers import AutoModelForCausalLM, AutoModelForMaskedLM

    h, ffn, kv, vocab, layers = size
    cfg = config(family, h, ffn, kv, vocab, layers)
    with torch.device("cuda"):
        model = (AutoModelForMaskedLM if family == "bert" else AutoModelForCausalLM).from_config(cfg)
    model.to(torch.bfloat16 if precision == "bf16" else torch.float32)
    model.train()
    ids = torch.randint(0, vocab, (batch, seq), device="cuda")

    def run():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "amp"):
            out = model(input_ids=ids, labels=ids)
        return out.loss

    run().backward()  # warm-up: lazy initialisation stays out of the counts
    model.zero_grad(set_to_none=True)
    torch.cuda.synchronize()
    t = Traffic()
    with t:
        loss = run()
        t.phase = "bwd"
        loss.backward()
    torch.cuda.synchronize()
    row = {"family": family, "precision": precision, "hidden": h, "mlp": ffn, "kv_heads": kv, "heads": 8,
           "vocab": vocab, "layers": layers, "tokens": batch * seq}
    row.update(t.c)
    return row


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    import transformers

    res = {"gpu": torch.cuda.get_device_name(0), "torch": torch.__version__,
           "transformers": transformers.__version__, "rows": []}
    for family in FAMILIES:
        for precision in ("amp", "bf16"):
            for size in SIZES:
                if family != "llama" and size[2] != 8:
                    continue
                try:
                    row = count(family, precision, size)
                except Exception:  # noqa: BLE001 - one failure must not lose the rest
                    row = {"family": family, "precision": precision, "size": size,
                           "error": traceback.format_exc()[-600:]}
                res["rows"].append(row)
                print(json.dumps(row), flush=True)
                with open(args.out, "w") as f:
                    json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
