#!/usr/bin/env python3
"""Measures what pipeplan predicts, on one GPU, with PyTorch: training steps of HuggingFace
models in eager PyTorch, and the kernels whose rates the estimator assumes (bf16 and fp8
matrix products by shape, flash attention by sequence length).

Every figure is a median over timed repeats after warm-up, timed with CUDA events around
the region (steps: the whole step, forward + backward + AdamW update + zero_grad, as a
training loop runs it). Inputs are random (never zeros). Models are built from the
configuration files in ../shared/data/hf-configs with random weights, directly on the GPU.

Run on a machine with a CUDA GPU, PyTorch and transformers:
    python3 tools/measure/steps.py --configs ../shared/data/hf-configs --out measured.json
The result is JSON: the environment (GPU, torch, transformers), then "steps", "gemm" and
"attention" lists. core/request/testdata/measured-h100.json holds one run on an H100 SXM,
which core/request's TestMeasuredSteps plans through request.Run.
"""

import argparse
import json
import os
import statistics
import sys
import time

import torch
import torch.nn.functional as F


def events_median(fn, warmup, repeat):
    """Median seconds of fn() over repeat runs after warmup runs, timed with CUDA events."""
    for _ in range(warmup):
        fn()
    torch.cuda.synchronize()
    times = []
    for _ in range(repeat):
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        start.record()
        fn()
        end.record()
        torch.cuda.synchronize()
        times.append(start.elapsed_time(end) / 1e3)
    return statistics.median(times), min(times), max(times)


# Training steps: (config file, sequence length, microbatch sizes, precision).
# "amp" is torch.autocast(bfloat16) over fp32 parameters, gradients and AdamW state (the
# HuggingFace Trainer's bf16=True); "bf16" keeps everything in bfloat16.
STEP_CASES = [
    ("gpt2.json", 1024, [1, 8, 16], "amp"),
    ("gpt2-medium.json", 1024, [1, 8], "amp"),
    ("gpt2-large.json", 1024, [1, 4, 8], "amp"),
    ("gpt2-xl.json", 1024, [1, 4], "amp"),
    ("llama-3.2-1b.json", 2048, [1, 4], "amp"),
    ("llama-3.2-1b.json", 2048, [4], "bf16"),
    ("bert-large-uncased.json", 512, [8, 32], "amp"),
]


def build(cfg_path, seq, mbs, precision):
    """The model, its AdamW, the inputs and one training step's function."""
    from transformers import AutoConfig, AutoModelForCausalLM, AutoModelForMaskedLM

    with open(cfg_path) as f:
        raw = json.load(f)
    kind = raw.pop("model_type")
    raw.pop("architectures", None)
    raw.pop("torch_dtype", None)
    cfg = AutoConfig.for_model(kind, **raw)
    cfg.use_cache = False
    masked = kind == "bert"
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32
    torch.manual_seed(0)
    with torch.device("cuda"):
        if masked:
            model = AutoModelForMaskedLM.from_config(cfg)
        else:
            model = AutoModelForCausalLM.from_config(cfg)
    model.to(dtype)
    model.train()
    params = sum(p.numel() for p in model.parameters())
    opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
    vocab = cfg.vocab_size
    ids = torch.randint(0, vocab, (mbs, seq), device="cuda")

    def step():
        if precision == "amp":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(input_ids=ids, labels=ids)
        else:
            out = model(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    return model, opt, ids, step, params


def measure_step(cfg_path, seq, mbs, precision, repeat):
    model, opt, ids, step, params = build(cfg_path, seq, mbs, precision)
    torch.cuda.reset_peak_memory_stats()
    med, lo, hi = events_median(step, 3, repeat)
    peak = torch.cuda.max_memory_allocated()
    reserved = torch.cuda.max_memory_reserved()

    # The forward and backward alone, without the optimizer, to split the step.
    def fwdbwd():
        model.zero_grad(set_to_none=True)
        if precision == "amp":
            with torch.autocast("cuda", dtype=torch.bfloat16):
                out = model(input_ids=ids, labels=ids)
        else:
            out = model(input_ids=ids, labels=ids)
        out.loss.backward()

    fb, _, _ = events_median(fwdbwd, 1, max(3, repeat // 2))
    opt.zero_grad(set_to_none=True)
    del model, opt, ids
    torch.cuda.empty_cache()
    return {
        "config": os.path.basename(cfg_path),
        "seq": seq,
        "microbatch_size": mbs,
        "precision": precision,
        "optimizer": "adamw (torch default: foreach)",
        "attention": "sdpa",
        "parameters": params,
        "step_seconds": med,
        "step_seconds_min": lo,
        "step_seconds_max": hi,
        "forward_backward_seconds": fb,
        "peak_allocated_bytes": peak,
        "peak_reserved_bytes": reserved,
    }


GEMM_SHAPES = [
    # (M tokens, K in, N out): dense layers of 7B-70B models at 8k tokens per microbatch,
    # and the small per-expert products of fine-grained mixtures (Qwen3-30B-A3B: 2048 -> 768).
    (8192, 4096, 4096),
    (8192, 4096, 14336),
    (8192, 14336, 4096),
    (8192, 8192, 28672),
    (8192, 8192, 8192),
    (4096, 1600, 6400),
    (4096, 1024, 4096),
    (2048, 768, 3072),
    (16384, 2048, 768),
    (4096, 2048, 768),
    (1024, 2048, 768),
    (256, 2048, 768),
    (4096, 768, 2048),
    (4096, 7168, 2048),
]


def measure_gemm(m, k, n, repeat):
    a = torch.randn(m, k, device="cuda", dtype=torch.bfloat16)
    b = torch.randn(n, k, device="cuda", dtype=torch.bfloat16)
    flops = 2.0 * m * n * k
    bf16, _, _ = events_median(lambda: torch.mm(a, b.t()), 5, repeat)
    row = {"m": m, "k": k, "n": n, "bf16_seconds": bf16, "bf16_tflops": flops / bf16 / 1e12}
    try:
        a8 = a.to(torch.float8_e4m3fn)
        b8 = b.to(torch.float8_e4m3fn)
        one = torch.tensor(1.0, device="cuda")
        fp8, _, _ = events_median(
            lambda: torch._scaled_mm(a8, b8.t(), scale_a=one, scale_b=one, out_dtype=torch.bfloat16),
            5,
            repeat,
        )
        row["fp8_seconds"] = fp8
        row["fp8_tflops"] = flops / fp8 / 1e12
    except Exception as e:  # noqa: BLE001 - an fp8 failure must not lose the bf16 row
        row["fp8_error"] = repr(e)[:200]
    return row


ATTN_CASES = [
    # (sequence, head dim, heads); batch fills 32k tokens.
    (1024, 64, 25),
    (1024, 128, 32),
    (2048, 128, 32),
    (4096, 128, 32),
    (8192, 128, 32),
    (16384, 128, 32),
    (32768, 128, 32),
]


def measure_attention(seq, d, heads, repeat):
    batch = max(1, 32768 // seq)
    q, k, v = (
        torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.bfloat16, requires_grad=True)
        for _ in range(3)
    )
    g = torch.randn(batch, heads, seq, d, device="cuda", dtype=torch.bfloat16)
    # Causal: half the score matrix. Forward: 2 products of s x s x d per head.
    fwd_flops = 4.0 * batch * heads * seq * seq * d / 2
    fwd, _, _ = events_median(lambda: F.scaled_dot_product_attention(q, k, v, is_causal=True), 3, repeat)

    def fb():
        o = F.scaled_dot_product_attention(q, k, v, is_causal=True)
        o.backward(g)

    both, _, _ = events_median(fb, 3, repeat)
    return {
        "seq": seq,
        "head_dim": d,
        "heads": heads,
        "batch": batch,
        "causal": True,
        "forward_seconds": fwd,
        "forward_tflops": fwd_flops / fwd / 1e12,
        "forward_backward_seconds": both,
        "forward_backward_tflops": 3.5 * fwd_flops / both / 1e12,
    }


def category(name):
    n = name.lower()
    if "flash" in n or "fmha" in n or "attention" in n or "sdpa" in n:
        return "attention"
    if "gemm" in n or "xmma" in n or "nvjet" in n or "cutlass" in n or "cublas" in n:
        return "matmul"
    if "multi_tensor" in n or "foreach" in n or "adam" in n:
        return "optimizer"
    if "memcpy" in n or "memset" in n:
        return "copy"
    return "other (memory-bound)"


def profile_step(cfg_path, seq, mbs, precision, steps=2):
    """Device time per kernel category in one step, and the step's wall time."""
    from torch.profiler import ProfilerActivity, profile

    model, opt, ids, step, params = build(cfg_path, seq, mbs, precision)
    for _ in range(3):
        step()
    torch.cuda.synchronize()
    with profile(activities=[ProfilerActivity.CUDA]) as prof:
        t = time.perf_counter()
        for _ in range(steps):
            step()
        torch.cuda.synchronize()
        wall = (time.perf_counter() - t) / steps
    cats, kernels, count = {}, {}, 0
    for ev in prof.events():
        if ev.device_type != torch.autograd.DeviceType.CUDA:
            continue
        d = ev.device_time / 1e6 / steps
        cats[category(ev.name)] = cats.get(category(ev.name), 0) + d
        k = kernels.setdefault(ev.name[:90], [0.0, 0])
        k[0] += d
        k[1] += 1
        count += 1
    top = sorted(kernels.items(), key=lambda kv: -kv[1][0])[:25]
    del model, opt
    torch.cuda.empty_cache()
    return {
        "config": os.path.basename(cfg_path),
        "seq": seq,
        "microbatch_size": mbs,
        "precision": precision,
        "step_wall_seconds": wall,
        "kernels_per_step": count / steps,
        "device_seconds_by_category": cats,
        "top_kernels": [{"name": n, "seconds": v[0], "launches": v[1] / steps} for n, v in top],
    }


def compiled_step(cfg_path, seq, mbs, precision, repeat):
    model, opt, ids, _, params = build(cfg_path, seq, mbs, precision)
    fwd = torch.compile(model)

    def step():
        with torch.autocast("cuda", dtype=torch.bfloat16, enabled=precision == "amp"):
            out = fwd(input_ids=ids, labels=ids)
        out.loss.backward()
        opt.step()
        opt.zero_grad(set_to_none=True)

    t = time.time()
    step()
    torch.cuda.synchronize()
    warm = time.time() - t
    torch.cuda.reset_peak_memory_stats()
    med, lo, hi = events_median(step, 2, repeat)
    row = {
        "config": os.path.basename(cfg_path),
        "seq": seq,
        "microbatch_size": mbs,
        "precision": precision,
        "framework": "torch.compile (default mode)",
        "compile_seconds": warm,
        "step_seconds": med,
        "step_seconds_min": lo,
        "step_seconds_max": hi,
        "peak_allocated_bytes": torch.cuda.max_memory_allocated(),
    }
    del model, opt, fwd
    torch.cuda.empty_cache()
    return row


PROFILE_CASES = [
    ("gpt2.json", 1024, 16, "amp"),
    ("gpt2-xl.json", 1024, 4, "amp"),
    ("llama-3.2-1b.json", 2048, 4, "amp"),
    ("llama-3.2-1b.json", 2048, 4, "bf16"),
    ("bert-large-uncased.json", 512, 32, "amp"),
]

COMPILE_CASES = [
    ("gpt2.json", 1024, 16, "amp"),
    ("llama-3.2-1b.json", 2048, 4, "amp"),
    ("gpt2-xl.json", 1024, 4, "amp"),
]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--configs", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--repeat", type=int, default=10)
    ap.add_argument("--profile", action="store_true", help="profile kernels and time torch.compile instead")
    ap.add_argument("--budget", type=float, default=420.0, help="seconds; later cases are skipped past it")
    args = ap.parse_args()
    t0 = time.time()
    import transformers

    props = torch.cuda.get_device_properties(0)
    result = {
        "gpu": props.name,
        "gpu_memory_bytes": props.total_memory,
        "multiprocessors": props.multi_processor_count,
        "torch": torch.__version__,
        "cuda": torch.version.cuda,
        "transformers": transformers.__version__,
        "note": "medians over timed repeats after warm-up, CUDA events; random inputs",
        "steps": [],
        "gemm": [],
        "attention": [],
    }

    def save():
        with open(args.out, "w") as f:
            json.dump(result, f, indent=1)

    if args.profile:
        result["profiles"], result["compiled"] = [], []
        for cfg, seq, mbs, precision in PROFILE_CASES:
            try:
                row = profile_step(os.path.join(args.configs, cfg), seq, mbs, precision)
            except Exception as e:  # noqa: BLE001
                row = {"config": cfg, "error": repr(e)[:300]}
            result["profiles"].append(row)
            print("profile", json.dumps(row)[:1500], flush=True)
            save()
        for cfg, seq, mbs, precision in COMPILE_CASES:
            if time.time() - t0 > args.budget:
                print("budget spent: skipping compile", cfg, flush=True)
                continue
            try:
                row = compiled_step(os.path.join(args.configs, cfg), seq, mbs, precision, args.repeat)
            except Exception as e:  # noqa: BLE001
                row = {"config": cfg, "error": repr(e)[:300]}
            result["compiled"].append(row)
            print("compiled", row, flush=True)
            save()
        result["wall_seconds"] = time.time() - t0
        save()
        return 0
    for m, k, n in GEMM_SHAPES:
        result["gemm"].append(measure_gemm(m, k, n, 20))
        print("gemm", result["gemm"][-1], flush=True)
    save()
    for seq, d, h in ATTN_CASES:
        try:
            result["attention"].append(measure_attention(seq, d, h, 10))
            print("attention", result["attention"][-1], flush=True)
        except Exception as e:  # noqa: BLE001
            print("attention failed", seq, d, repr(e)[:200], flush=True)
        torch.cuda.empty_cache()
    save()
    for cfg, seq, sizes, precision in STEP_CASES:
        for mbs in sizes:
            if time.time() - t0 > args.budget:
                print("budget spent: skipping", cfg, mbs, flush=True)
                continue
            try:
                row = measure_step(os.path.join(args.configs, cfg), seq, mbs, precision, args.repeat)
            except Exception as e:  # noqa: BLE001 - one failing case must not lose the others
                row = {"config": cfg, "seq": seq, "microbatch_size": mbs, "precision": precision, "error": repr(e)[:300]}
                torch.cuda.empty_cache()
            result["steps"].append(row)
            print("step", row, flush=True)
            save()
    result["wall_seconds"] = time.time() - t0
    save()
    print("done in %.0f s" % result["wall_seconds"], flush=True)


if __name__ == "__main__":
    sys.exit(main())
