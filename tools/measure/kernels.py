#!/usr/bin/env python3
"""Measures, on one GPU with PyTorch, the kernels behind three terms of pipeplan's eager
PyTorch model: matrix products whose dimension is not a multiple of 8 (GPT-2's vocabulary
of 50,257, BERT's 30,522) against padded ones, PyTorch's AdamW implementations (foreach,
the default, against fused) per parameter, and the achievable bandwidth of elementwise
kernels (an fp32 add, a bf16 copy, an fp32-to-bf16 cast).

Medians over timed repeats after warm-up, CUDA events, random inputs.
    python3 tools/measure/kernels.py --out kernels.json
"""

import argparse
import json
import statistics

import torch


def median_seconds(fn, warmup=3, repeat=15):
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        s, e = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        s.record()
        fn()
        e.record()
        torch.cuda.synchronize()
        times.append(s.elapsed_time(e) / 1e3)
    return statistics.median(times)


def lm_head(tokens, hidden, vocab):
    """The three products of an output layer (forward, input gradient, weight gradient)."""
    x = torch.randn(tokens, hidden, device="cuda", dtype=torch.bfloat16)
    w = torch.randn(vocab, hidden, device="cuda", dtype=torch.bfloat16)
    dy = torch.randn(tokens, vocab, device="cuda", dtype=torch.bfloat16)
    flops = 2.0 * tokens * hidden * vocab
    out = {"tokens": tokens, "hidden": hidden, "vocab": vocab}
    for name, fn in (
        ("forward", lambda: x @ w.t()),
        ("input_grad", lambda: dy @ w),
        ("weight_grad", lambda: dy.t() @ x),
    ):
        t = median_seconds(fn)
        out[name + "_seconds"] = t
        out[name + "_tflops"] = flops / t / 1e12
    return out


def adamw(params_millions, impl):
    n = int(params_millions * 1e6)
    # 64 tensors, as a model's layers give the optimizer many.
    sizes = [n // 64] * 64
    ps = [torch.randn(s, device="cuda", requires_grad=True) for s in sizes]
    for p in ps:
        p.grad = torch.randn_like(p)
    kw = {"fused": True} if impl == "fused" else {"foreach": True}
    opt = torch.optim.AdamW(ps, lr=1e-4, **kw)
    t = median_seconds(opt.step)
    return {"parameters": n, "implementation": impl, "dtype": "fp32", "seconds": t,
            "bytes_per_second_at_28_bytes_per_parameter": 28.0 * n / t}


def elementwise(n):
    a = torch.randn(n, device="cuda")
    b = torch.randn(n, device="cuda")
    h = torch.randn(n, device="cuda", dtype=torch.bfloat16)
    rows = []
    for name, fn, bytes_ in (
        ("fp32 add", lambda: a + b, 12 * n),
        ("bf16 copy", lambda: h.clone(), 4 * n),
        ("fp32 to bf16", lambda: a.to(torch.bfloat16), 6 * n),
        ("bf16 to fp32", lambda: h.float(), 6 * n),
        ("bf16 + fp32", lambda: h + a, 10 * n),
    ):
        t = median_seconds(fn)
        rows.append({"kernel": name, "elements": n, "seconds": t, "bytes_per_second": bytes_ / t})
    return rows


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", required=True)
    args = ap.parse_args()
    props = torch.cuda.get_device_properties(0)
    res = {"gpu": props.name, "torch": torch.__version__, "lm_head": [], "adamw": [], "elementwise": []}
    for tokens, hidden, vocab in (
        (16384, 768, 50257), (16384, 768, 50304),
        (4096, 1600, 50257), (4096, 1600, 50304),
        (16384, 1024, 30522), (16384, 1024, 30528),
        (8192, 2048, 128256),
    ):
        res["lm_head"].append(lm_head(tokens, hidden, vocab))
        print(res["lm_head"][-1], flush=True)
        torch.cuda.empty_cache()
    for impl in ("foreach", "fused"):
        for m in (124, 1000):
            res["adamw"].append(adamw(m, impl))
            print(res["adamw"][-1], flush=True)
            torch.cuda.empty_cache()
    res["elementwise"] = elementwise(1 << 28)
    for r in res["elementwise"]:
        print(r, flush=True)
    with open(args.out, "w") as f:
        json.dump(res, f, indent=1)


if __name__ == "__main__":
    main()
