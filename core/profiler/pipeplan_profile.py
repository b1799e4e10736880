#!/usr/bin/env python3
"""Measure a PyTorch model's layers into a pipeplan profile (pipeplan's native model JSON).

pipeplan plans how to split a model's layers into pipeline stages. It needs, for each layer
in execution order, what it costs for one microbatch: forward and backward time, parameter
and optimizer-state bytes, the bytes it keeps for its backward pass, its working memory and
the tensors it passes on. This script measures those on your device, for your model and a
sample microbatch, and writes them as JSON that `pipeplan plan --model FILE` reads.

Command line (the factory returns the model and a sample microbatch):

    # mymodel.py
    def build():
        model = MyModel()
        x = torch.randint(0, 32000, (4, 1024))   # one microbatch: 4 samples
        return model, (x,)                       # or (model, args, kwargs)

    python3 pipeplan_profile.py --model mymodel:build --device cuda -o profile.json
    python3 pipeplan_profile.py --model mymodel:build --layers 'model.embed_tokens,model.layers.*,model.norm,lm_head'

From Python:

    from pipeplan_profile import profile
    prof = profile(model, (x,), device="cuda", measured_on="a100-80gb")
    json.dump(prof, open("profile.json", "w"), indent=1)

What is measured, per layer (a direct child of the model by default, ModuleList and
ModuleDict children expanded; or the modules --layers names, where `*` stands for one
name component):

- forward_seconds, backward_seconds: the median of --repeats runs after --warmup runs, of
  the layer alone on the inputs it received in a full forward pass (CUDA events on a GPU,
  the wall clock on a CPU). The backward computes the gradients of the parameters and of
  the inputs that come from earlier layers, as a pipeline stage does.
- param_bytes: parameters and, in training, their gradients; optimizer_bytes: optimizer
  state, --optimizer-bytes-per-param bytes per trainable parameter (default: two copies of
  the parameter, as torch.optim.Adam keeps); exclusive_bytes: buffers (BatchNorm
  statistics). A parameter used by several layers (tied weights) goes to `shared`, counted
  once per stage that holds any of them.
- activation_bytes: what the layer saves for its backward pass, found with saved-tensor
  hooks (torch.autograd.graph.saved_tensors_hooks), each storage counted once, parameters
  and buffers left out.
- temporary_bytes: the layer's peak memory while its forward and backward run, above what
  was allocated before, on CUDA (torch.cuda.max_memory_allocated). A CPU does not report
  it, and the field is then 0.
- outputs: the tensors the layer returns, with their bytes; inputs: the earlier outputs
  (or model inputs) it reads, matched by identity; a tensor computed between layers by
  code outside any layer counts as the previous layer's output.

The profile also records `measured_on`: --measured-on (a pipeplan device preset name such
as a100-80gb, or a JSON object {"name": ..., "flops_per_second": ...}); by default the
preset of a GPU pipeplan knows, or else the device's name with the FLOP/s a large matrix
product reaches on it (planning on another device scales the times by the ratio of the
FLOP/s). And `microbatch_size` (the samples in the sample microbatch: the first input's
first dimension, or --microbatch-size), and `tokens_per_sample` when the first input is
token ids (samples x sequence).

Works with PyTorch 1.13 and 2.x, on CPU and CUDA. Times outside the listed layers (code in
the parent module's forward) are not in any layer; the script prints how much of the whole
forward the layers cover.
"""

import argparse
import importlib
import json
import math
import os
import re
import statistics
import sys
import time

FORMAT_VERSION = 1


def _torch():
    import torch

    return torch


# ---------------------------------------------------------------------------------------
# Nested structures of tensors (tuples, lists, dicts) as layers take and return them.


def _flatten(obj, out):
    torch = _torch()
    if isinstance(obj, torch.Tensor):
        out.append(obj)
    elif isinstance(obj, (list, tuple)):
        for x in obj:
            _flatten(x, out)
    elif isinstance(obj, dict):
        for k in obj:
            _flatten(obj[k], out)
    return out


def _map(obj, fn):
    torch = _torch()
    if isinstance(obj, torch.Tensor):
        return fn(obj)
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # namedtuple
        return type(obj)(*[_map(x, fn) for x in obj])
    if isinstance(obj, (list, tuple)):
        return type(obj)(_map(x, fn) for x in obj)
    if isinstance(obj, dict):
        return type(obj)((k, _map(v, fn)) for k, v in obj.items())
    return obj


def _nbytes(t):
    return t.numel() * t.element_size()


def _storage_key(t):
    """The data pointer and size in bytes of the storage behind a tensor."""
    if hasattr(t, "untyped_storage"):  # PyTorch 2.x
        s = t.untyped_storage()
        return s.data_ptr(), s.nbytes()
    s = t.storage()  # PyTorch 1.13: a TypedStorage
    return s.data_ptr(), s.size() * s.element_size()


# ---------------------------------------------------------------------------------------
# Which modules are the layers.


def default_layers(model):
    """The model's children in definition order, ModuleList and ModuleDict expanded."""
    torch = _torch()
    names = []

    def walk(prefix, module):
        for name, child in module.named_children():
            full = prefix + name
            if isinstance(child, (torch.nn.ModuleList, torch.nn.ModuleDict)):
                walk(full + ".", child)
            else:
                names.append(full)

    walk("", model)
    return names


def resolve_layers(model, patterns):
    """Module names matching the patterns, in named_modules order; `*` is one component."""
    modules = [n for n, _ in model.named_modules() if n]
    names = []
    for pat in patterns:
        pat = pat.strip()
        if not pat:
            continue
        rx = re.compile("^" + ".".join("[^.]+" if c == "*" else re.escape(c) for c in pat.split(".")) + "$")
        hits = [n for n in modules if rx.match(n)]
        if not hits:
            raise ValueError("--layers: no module is named %r (modules: %s)" % (pat, ", ".join(modules[:20])))
        for n in hits:
            if n not in names:
                names.append(n)
    return names


# ---------------------------------------------------------------------------------------
# Timing.


class _Timer:
    def __init__(self, device):
        torch = _torch()
        self.cuda = device.type == "cuda"
        self.torch = torch
        self.device = device

    def sync(self):
        if self.cuda:
            self.torch.cuda.synchronize(self.device)

    def time(self, fn):
        """Seconds fn takes on the device."""
        if self.cuda:
            start = self.torch.cuda.Event(enable_timing=True)
            end = self.torch.cuda.Event(enable_timing=True)
            self.sync()
            start.record()
            fn()
            end.record()
            end.synchronize()
            return start.elapsed_time(end) / 1000.0
        t0 = time.perf_counter()
        fn()
        return time.perf_counter() - t0


def _median(xs):
    return statistics.median(xs) if xs else 0.0


# ---------------------------------------------------------------------------------------
# The profiler.


class _Call:
    """One call of a layer during the capture pass."""

    def __init__(self, name, module, args, kwargs):
        self.name, self.module, self.args, self.kwargs = name, module, args, kwargs
        self.output = None


def _capture(model, args, kwargs, layers):
    """Runs the model once, recording each layer call's inputs and output, in call order."""
    torch = _torch()
    modules = dict(model.named_modules())
    calls, depth = [], [0]
    originals = {}

    def wrap(name, module):
        forward = module.forward

        def recorded(*a, **kw):
            if depth[0] > 0:
                raise ValueError("layer %r runs inside another listed layer: list layers that do not nest" % name)
            call = _Call(name, module, a, kw)
            calls.append(call)
            depth[0] += 1
            try:
                call.output = forward(*a, **kw)
            finally:
                depth[0] -= 1
            return call.output

        return recorded

    for name in layers:
        m = modules[name]
        originals[name] = m
        m.forward = wrap(name, m)  # an instance attribute: Module.__call__ calls it
    try:
        with torch.no_grad():
            model(*args, **kwargs)
    finally:
        for m in originals.values():
            del m.forward
    return calls


def _whole_forward(model, args, kwargs, timer, training, warmup, repeats):
    """The median time of the whole model's forward pass."""
    torch = _torch()
    times = []
    with torch.set_grad_enabled(training):
        for i in range(warmup + repeats):
            t = timer.time(lambda: model(*args, **kwargs))
            if i >= warmup:
                times.append(t)
    return _median(times)


def profile(model, args, kwargs=None, layers=None, device=None, warmup=3, repeats=10,
            training=True, optimizer_bytes_per_param=None, measured_on=None,
            microbatch_size=None, tokens_per_sample=None, name=None, log=sys.stderr):
    """Profiles model's layers on one sample microbatch and returns pipeplan's native JSON
    (a dict). args and kwargs are what model(*args, **kwargs) takes; layers lists module
    names (patterns with `*` for one component), by default the model's children."""
    torch = _torch()
    if not isinstance(args, (tuple, list)):
        args = (args,)
    kwargs = dict(kwargs or {})
    if device is None:
        p = next(model.parameters(), None)
        device = p.device if p is not None else torch.device("cpu")
    device = torch.device(device)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    model.to(device)
    to_dev = lambda t: t.to(device)
    args, kwargs = _map(tuple(args), to_dev), _map(kwargs, to_dev)
    was_training = model.training
    model.train(training)

    names = resolve_layers(model, layers) if layers else default_layers(model)
    if not names:
        raise ValueError("the model has no child modules to profile: pass layers")
    calls = _capture(model, args, kwargs, names)
    if not calls:
        raise ValueError("none of the layers ran in the model's forward pass")
    called = {c.name for c in calls}
    for n in names:
        if n not in called:
            print("pipeplan_profile: %s did not run in the forward pass; left out" % n, file=log)

    # Tensor ids: model inputs, then each call's outputs, matched by identity.
    produced = {}
    model_inputs = []
    for i, t in enumerate(_flatten((args, kwargs), [])):
        if id(t) in produced:
            continue
        tid = "input%d" % i
        produced[id(t)] = tid
        model_inputs.append({"id": tid, "bytes": _nbytes(t)})
    counts = {}
    for c in calls:
        counts[c.name] = counts.get(c.name, 0) + 1
    seen = {}

    timer = _Timer(device)
    params_of = {}  # id(parameter) -> names of the layers using it
    for c in calls:
        for p in c.module.parameters():
            params_of.setdefault(id(p), set()).add(c.name)
    qualified = {id(p): n for n, p in model.named_parameters()}

    out_layers = []
    prev_outputs = []
    for c in calls:
        k = seen.get(c.name, 0)
        seen[c.name] = k + 1
        layer = {"name": c.name, "kind": _kind(c.module)}
        if counts[c.name] > 1:
            layer["tie_group"] = c.name

        # Inputs: earlier outputs or model inputs by identity; anything else was computed
        # between layers from the previous layer's output.
        inputs = []
        unknown = False
        for t in _flatten((c.args, c.kwargs), []):
            tid = produced.get(id(t))
            if tid is None:
                unknown = True
            elif tid not in inputs:
                inputs.append(tid)
        if unknown:
            for tid in prev_outputs or [m["id"] for m in model_inputs[:1]]:
                if tid not in inputs:
                    inputs.append(tid)
        layer["inputs"] = inputs

        outs = _flatten(c.output, [])
        suffix = "" if k == 0 else "#%d" % k
        outputs, prev_outputs = [], []
        for j, t in enumerate(outs):
            if id(t) in produced:  # the layer returned its input (an identity)
                continue
            tid = c.name + suffix + (".out" if len(outs) == 1 else ".out%d" % j)
            produced[id(t)] = tid
            outputs.append({"id": tid, "bytes": _nbytes(t)})
            prev_outputs.append(tid)
        if not prev_outputs:
            prev_outputs = [t for t in inputs]
        layer["outputs"] = outputs

        _memory_of_params(layer, c, params_of, qualified, training, optimizer_bytes_per_param, k == 0)
        _measure(layer, c, timer, produced, model_inputs, training, warmup, repeats)
        out_layers.append({key: layer[key] for key in _KEY_ORDER if key in layer})

    total_fwd = sum(l["forward_seconds"] for l in out_layers)
    whole = _whole_forward(model, args, kwargs, timer, training, min(warmup, 1), min(repeats, 3))
    cover = 100 * total_fwd / whole if whole > 0 else 100
    print("pipeplan_profile: %d layers; their forwards take %.3g s run alone, the whole forward %.3g s (%.0f%%)%s"
          % (len(out_layers), total_fwd, whole, cover,
             ": the rest runs outside the layers, in the parent's forward" if cover < 90 else ""), file=log)
    owned = set()
    for c in calls:
        owned.update(id(p) for p in c.module.parameters())
    stray = sum(_nbytes(p) for p in model.parameters() if id(p) not in owned)
    if stray:
        print("pipeplan_profile: %d bytes of parameters belong to no profiled layer (list the modules that hold them in layers)" % stray, file=log)
    if device.type != "cuda":
        print("pipeplan_profile: %s does not report peak memory: temporary_bytes is 0" % device.type, file=log)
    model.train(was_training)

    flat = _flatten(args, [])
    if microbatch_size is None:
        microbatch_size = int(flat[0].shape[0]) if flat and flat[0].dim() > 0 else 1
    if tokens_per_sample is None and flat and flat[0].dim() == 2 and not flat[0].is_floating_point():
        tokens_per_sample = int(flat[0].shape[1])  # token ids: samples x sequence
    doc = {
        "name": name or type(model).__name__,
        "time_unit": "seconds",
        "measured_on": measured_on if measured_on is not None else _measured_on(device, log),
        "microbatch_size": microbatch_size,
    }
    if tokens_per_sample:
        doc["tokens_per_sample"] = tokens_per_sample
    doc["inputs"] = model_inputs
    doc["layers"] = out_layers
    return doc


# The order of a layer's keys in the JSON, as docs/formats.md lists them.
_KEY_ORDER = ("name", "kind", "forward_seconds", "backward_seconds", "param_bytes", "grad_bytes", "optimizer_bytes",
              "exclusive_bytes", "shared", "temporary_bytes", "activation_bytes", "inputs", "outputs",
              "tie_group")


def _kind(module):
    extra = module.extra_repr().replace("\n", " ")
    if len(extra) > 80:
        extra = extra[:77] + "..."
    return "%s(%s)" % (type(module).__name__, extra)


def _memory_of_params(layer, call, params_of, qualified, training, opt_per_param, first_call):
    """Parameter, optimizer, buffer and shared bytes of a layer."""
    param = opt = grad = 0
    shared = {}
    seen = set()
    for p in call.module.parameters():
        if id(p) in seen:
            continue
        seen.add(id(p))
        trainable = training and p.requires_grad
        b = _nbytes(p) * (2 if trainable else 1)
        o = 0
        if trainable:
            o = int(math.ceil(p.numel() * opt_per_param)) if opt_per_param is not None else 2 * _nbytes(p)
        if len(params_of[id(p)]) > 1:
            key = "param:" + qualified.get(id(p), "?")
            shared[key] = b + o
        else:
            param += b
            opt += o
            if trainable:
                grad += _nbytes(p)
    buffers = sum(_nbytes(b) for b in call.module.buffers())
    if not first_call:
        # A layer called again holds the same weights, counted at its first call: its tie
        # group keeps all its calls in one stage.
        param = opt = grad = buffers = 0
    layer["param_bytes"] = param
    if grad != param // 2:  # the format's default: half of param_bytes are gradients
        layer["grad_bytes"] = grad
    layer["optimizer_bytes"] = opt
    if buffers:
        layer["exclusive_bytes"] = buffers
    if shared:
        layer["shared"] = shared


def _measure(layer, call, timer, produced, model_inputs, training, warmup, repeats):
    """Times one layer alone, and finds what it saves for backward and its peak memory."""
    torch = _torch()
    module = call.module
    model_input_ids = {m["id"] for m in model_inputs}
    base_args = _map((call.args, call.kwargs), lambda t: t.detach())

    def grad_wanted(t):
        # Gradients flow back to floating-point inputs that earlier layers produced.
        tid = produced.get(id(t))
        return training and t.is_floating_point() and tid not in model_input_ids

    wants = {}
    for t in _flatten((call.args, call.kwargs), []):
        wants[id(t)] = grad_wanted(t)
    orig_of = {}
    flat_orig = _flatten((call.args, call.kwargs), [])
    flat_base = _flatten(base_args, [])
    for o, b in zip(flat_orig, flat_base):
        orig_of[id(b)] = o

    def fresh():
        """Inputs for one run: leaves that require grad where wanted, cloned so that
        in-place layers do not change them."""

        def prep(t):
            want = wants.get(id(orig_of.get(id(t))), False)
            x = t.detach().clone()
            if want:
                x.requires_grad_(True)
            return x

        a, kw = _map(base_args, prep)
        return a, kw

    def run(a, kw):
        return module(*a, **kw)

    if not training:
        with torch.no_grad():
            times = []
            for i in range(warmup + repeats):
                a, kw = fresh()
                t = timer.time(lambda: run(a, kw))
                if i >= warmup:
                    times.append(t)
            layer["forward_seconds"] = _median(times)
            layer["backward_seconds"] = 0.0
            layer["temporary_bytes"] = _peak(timer, lambda: run(*fresh()))
            layer["activation_bytes"] = 0
        return

    def backward_of(out):
        ts = [t for t in _flatten(out, []) if t.requires_grad]
        grads = [torch.ones_like(t) for t in ts]
        return ts, grads

    fwd, bwd = [], []
    for i in range(warmup + repeats):
        a, kw = fresh()
        holder = {}
        t = timer.time(lambda: holder.setdefault("out", run(a, kw)))
        ts, grads = backward_of(holder["out"])
        tb = 0.0
        if ts:
            tb = timer.time(lambda: torch.autograd.backward(ts, grads))
        if i >= warmup:
            fwd.append(t)
            bwd.append(tb)
        del holder, ts, grads
    layer["forward_seconds"] = _median(fwd)
    layer["backward_seconds"] = _median(bwd)

    # Saved for backward: each storage once, without parameters and buffers.
    skip = set()
    for p in list(module.parameters()) + list(module.buffers()):
        skip.add(_storage_key(p)[0])
    saved = {}

    def pack(t):
        ptr, n = _storage_key(t)
        if ptr not in skip:
            saved[ptr] = n
        return t

    a, kw = fresh()
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda t: t):
        out = run(a, kw)
    layer["activation_bytes"] = int(sum(saved.values()))
    del out

    def step():
        a, kw = fresh()
        out = run(a, kw)
        ts, grads = backward_of(out)
        if ts:
            torch.autograd.backward(ts, grads)

    layer["temporary_bytes"] = _peak(timer, step)
    for p in module.parameters():
        p.grad = None


def _peak(timer, fn):
    """Bytes fn allocates at its peak above what was allocated before, on CUDA; else 0."""
    if not timer.cuda:
        return 0
    torch = timer.torch
    timer.sync()
    torch.cuda.reset_peak_memory_stats(timer.device)
    before = torch.cuda.memory_allocated(timer.device)
    fn()
    timer.sync()
    return max(0, int(torch.cuda.max_memory_allocated(timer.device) - before))


# pipeplan's device presets for the GPUs torch names: (pattern in the name, preset).
_PRESETS = [
    (r"\bA100\b.*80GB", "a100-80gb"),
    (r"\bA100\b", "a100-40gb"),
    (r"\bH100\b(?!.*PCIe)", "h100-sxm"),
    (r"\bH200\b", "h200"),
    (r"\bB200\b", "b200"),
    (r"\bMI300X\b", "mi300x"),
]


def _measured_on(device, log):
    """The device as pipeplan names it: a preset for the GPUs it knows; otherwise the
    device's name with the FLOP/s a large matrix product reaches on it (measured, where a
    preset states the datasheet's peak: planning on a preset then scales the times by the
    ratio of the two)."""
    torch = _torch()
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        name = props.name
        if "A100" in name and props.total_memory > 60 * 2**30:
            name += " 80GB"
        for pattern, preset in _PRESETS:
            if re.search(pattern, name):
                return preset
        label, dtype, n = props.name, torch.bfloat16 if torch.cuda.is_bf16_supported() else torch.float16, 4096
    else:
        label, dtype, n = device.type, torch.float32, 256
    flops = _matmul_flops(device, dtype, n)
    print("pipeplan_profile: %s is not a pipeplan preset: measured_on records the %.3g FLOP/s a %d x %d %s matrix product reaches (pass --measured-on to name a preset)"
          % (label, flops, n, n, str(dtype).replace("torch.", "")), file=log)
    return {"name": label, "flops_per_second": flops}


def _matmul_flops(device, dtype, n):
    torch = _torch()
    timer = _Timer(device)
    a = torch.randn(n, n, device=device).to(dtype)
    b = torch.randn(n, n, device=device).to(dtype)
    times = []
    with torch.no_grad():
        for i in range(5):
            t = timer.time(lambda: torch.mm(a, b))
            if i >= 2:
                times.append(t)
    return float("%.4g" % (2.0 * n ** 3 / max(min(times), 1e-9)))


# ---------------------------------------------------------------------------------------
# Command line.


def _demo():
    """A small model to try the script on: an embedding, four blocks, a head."""
    torch = _torch()
    nn = torch.nn

    class Block(nn.Module):
        def __init__(self, d):
            super().__init__()
            self.norm = nn.LayerNorm(d)
            self.fc1 = nn.Linear(d, 4 * d)
            self.fc2 = nn.Linear(4 * d, d)

        def forward(self, x):
            return x + self.fc2(torch.nn.functional.gelu(self.fc1(self.norm(x))))

    class Demo(nn.Module):
        def __init__(self, vocab=1000, d=64, n=4):
            super().__init__()
            self.embed = nn.Embedding(vocab, d)
            self.blocks = nn.ModuleList(Block(d) for _ in range(n))
            self.head = nn.Linear(d, vocab)

        def forward(self, tokens):
            h = self.embed(tokens)
            for b in self.blocks:
                h = b(h)
            return self.head(h)

    return Demo(), (torch.randint(0, 1000, (4, 32)),)


def _load_factory(spec):
    mod, _, fn = spec.partition(":")
    if not fn:
        raise SystemExit("--model: expected MODULE:FUNCTION (mymodel:build), got %r" % spec)
    sys.path.insert(0, os.getcwd())
    built = getattr(importlib.import_module(mod), fn)()
    if not isinstance(built, (tuple, list)) or len(built) not in (2, 3):
        raise SystemExit("--model: %s must return (model, args) or (model, args, kwargs)" % spec)
    return built if len(built) == 3 else (built[0], built[1], {})


def main(argv=None):
    ap = argparse.ArgumentParser(description="Measure a PyTorch model's layers into a pipeplan profile.",
                                 epilog="Plan it with: pipeplan plan --model profile.json --device NAME --stages N")
    src = ap.add_mutually_exclusive_group(required=True)
    src.add_argument("--model", metavar="MODULE:FUNCTION",
                     help="a function returning (model, args) or (model, args, kwargs): one sample microbatch")
    src.add_argument("--demo", action="store_true", help="profile a small built-in model")
    ap.add_argument("--layers", help="comma-separated module names to profile as layers (`*` matches one name component); default: the model's children")
    ap.add_argument("--device", help="cpu, cuda or cuda:N (default: where the model's parameters are)")
    ap.add_argument("--warmup", type=int, default=3, help="untimed runs per layer (default 3)")
    ap.add_argument("--repeats", type=int, default=10, help="timed runs per layer; the median is kept (default 10)")
    ap.add_argument("--inference", action="store_true", help="profile forward passes only, without gradients")
    ap.add_argument("--optimizer-bytes-per-param", type=float,
                    help="optimizer state per trainable parameter (default: twice the parameter's size, as Adam; 12 for fp32 master weights and Adam moments of a 16-bit model; 0 for none)")
    ap.add_argument("--measured-on", help="the device as pipeplan names it (a preset such as a100-80gb, or a JSON object)")
    ap.add_argument("--microbatch-size", type=int, help="samples in the sample microbatch (default: the first input's first dimension)")
    ap.add_argument("--tokens-per-sample", type=int, help="tokens in one sample (default: the second dimension of token ids given as the first input)")
    ap.add_argument("--name", help="the model's name in the profile")
    ap.add_argument("-o", "--output", help="write the profile here (default: standard output)")
    opt = ap.parse_args(argv)
    if opt.warmup < 0 or opt.repeats < 1:
        ap.error("--warmup must be >= 0 and --repeats >= 1")

    if opt.demo:
        model, args = _demo()
        kwargs = {}
    else:
        model, args, kwargs = _load_factory(opt.model)
    measured_on = opt.measured_on
    if measured_on and measured_on.lstrip().startswith("{"):
        measured_on = json.loads(measured_on)
    per_param = opt.optimizer_bytes_per_param
    doc = profile(model, args, kwargs,
                  layers=opt.layers.split(",") if opt.layers else None,
                  device=opt.device, warmup=opt.warmup, repeats=opt.repeats,
                  training=not opt.inference,
                  optimizer_bytes_per_param=per_param,
                  measured_on=measured_on, microbatch_size=opt.microbatch_size,
                  tokens_per_sample=opt.tokens_per_sample, name=opt.name)
    text = json.dumps(doc, indent=1) + "\n"
    if opt.output:
        with open(opt.output, "w") as f:
            f.write(text)
    else:
        sys.stdout.write(text)


if __name__ == "__main__":
    main()
