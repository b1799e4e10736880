"""Runs pipeplan's exported snippets against stand-ins for the frameworks and reports the
split each one makes, for core/export's tests.

The stand-ins follow the frameworks' code paths that the snippets rely on (read from the
frameworks' sources): torch.distributed.pipelining's pipeline() takes split_spec and the
pipe builds stages by index; DeepSpeed's PipelineModule.__init__ calls
self._partition_layers(method=partition_method), which must set self.parts and call
self._set_bounds for this rank's stage; Keras's get_pipeline_stage_assignment returns one
assignment per layer call, with .layer and .pipeline_stage.

usage: python3 readback.py MANIFEST.json  ->  JSON on stdout
MANIFEST: [{"format": "pytorch"|"deepspeed"|"graphcore", "path": FILE,
            "layers": [names], "ranks": N}, ...]
"""
import enum
import importlib.util
import inspect
import json
import sys
import types


def stub(name, **attrs):
    mod = types.ModuleType(name)
    for k, v in attrs.items():
        setattr(mod, k, v)
    sys.modules[name] = mod
    return mod


# torch.distributed.pipelining -------------------------------------------------------------

class SplitPoint(enum.Enum):
    BEGINNING = 1
    END = 2


class Pipe:
    def __init__(self, spec):
        self.spec = spec
        self.num_stages = len(spec) + 1

    def build_stage(self, index, device, group=None):
        return ("stage", index)


RECORD = {}


def pipeline(module, mb_args, mb_kwargs=None, split_spec=None, split_policy=None):
    RECORD["split_spec"] = {k: v.name for k, v in split_spec.items()}
    return Pipe(split_spec)


def schedule_class(name):
    def init(self, stages, n_microbatches, loss_fn=None, **kw):
        self.stages = stages if isinstance(stages, list) else [stages]
        self.n_microbatches = n_microbatches
        self.loss_fn = loss_fn

    return type(name, (), {"__init__": init})


def install_torch():
    for m in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
        del sys.modules[m]
    stub("torch")
    stub("torch.distributed")
    names = ["ScheduleGPipe", "Schedule1F1B", "ScheduleInterleaved1F1B", "ScheduleInterleavedZeroBubble"]
    stub("torch.distributed.pipelining", SplitPoint=SplitPoint, pipeline=pipeline,
         **{n: schedule_class(n) for n in names})


# deepspeed.pipe --------------------------------------------------------------------------

class Coord:
    def __init__(self, pipe):
        self.pipe = pipe


class Topo:
    def __init__(self, stages):
        self.stages = stages

    def get_dim(self, axis):
        assert axis == "pipe"
        return self.stages

    def get_coord(self, rank):
        return Coord(rank)  # one rank per stage, no data or model parallelism


CURRENT_RANK = [0]


class PipelineModule:
    def __init__(self, layers, num_stages=None, loss_fn=None, partition_method="parameters",
                 activation_checkpoint_interval=0, **kw):
        self._layer_specs = list(layers)
        self._topo = Topo(num_stages)
        self.global_rank = CURRENT_RANK[0]
        self.loss_fn = loss_fn
        self.activation_checkpoint_interval = activation_checkpoint_interval
        self._partition_layers(method=partition_method)

    def _partition_layers(self, method="uniform"):
        raise AssertionError("the export must override _partition_layers")

    def _set_bounds(self, start=None, stop=None):
        self._local_start, self._local_stop = start, stop


def install_deepspeed():
    stub("deepspeed")
    stub("deepspeed.pipe", PipelineModule=PipelineModule)


# Keras on IPUs -----------------------------------------------------------------------------

class Layer:
    def __init__(self, name):
        self.name = name


class Assignment:
    def __init__(self, layer):
        self.layer = layer
        self.pipeline_stage = None


class KerasModel:
    def __init__(self, names):
        layers = {}
        self.calls = [Assignment(layers.setdefault(n, Layer(n))) for n in names]
        self.options = None
        self.assigned = None

    def get_pipeline_stage_assignment(self):
        return list(self.calls)

    def set_pipeline_stage_assignment(self, assignments):
        self.assigned = [a.pipeline_stage for a in assignments]

    def set_pipelining_options(self, **kw):
        self.options = kw


def load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main():
    out = []
    for i, job in enumerate(json.load(open(sys.argv[1]))):
        f = job["format"]
        res = {"format": f}
        if f == "pytorch":
            install_torch()
            mod = load(job["path"], "snippet%d" % i)
            res["ranks"] = []
            for rank in range(job["ranks"]):
                RECORD.clear()
                sched = mod.build(object(), (0,), rank, "cpu")
                res["split_spec"] = RECORD["split_spec"]
                res["schedule"] = type(sched).__name__
                res["n_microbatches"] = sched.n_microbatches
                res["has_loss"] = "loss_fn" in inspect.signature(mod.build).parameters
                res["ranks"].append([s[1] for s in sched.stages])
            res["stage_modules"] = mod.STAGE_MODULES
        elif f == "deepspeed":
            install_deepspeed()
            mod = load(job["path"], "snippet%d" % i)
            res["ranks"] = []
            for rank in range(job["ranks"]):
                CURRENT_RANK[0] = rank
                m = mod.build([object() for _ in job["layers"]])
                res["parts"] = m.parts
                res["ranks"].append([m._local_start, m._local_stop])
            res["layer_names"] = mod.LAYER_NAMES
            res["config"] = mod.DS_CONFIG
        elif f == "graphcore":
            mod = load(job["path"], "snippet%d" % i)
            m = KerasModel(job["layers"])
            mod.assign_keras_stages(m)
            res["stages"] = m.assigned
            res["options"] = m.options
            res["forward"] = [mod.forward_stage(n) for n in job["layers"]]
            res["backward"] = [mod.backward_stage(n) for n in job["layers"]]
        out.append(res)
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
