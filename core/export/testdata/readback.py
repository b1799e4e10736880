"""Runs pipeplan's exported snippets against stand-ins for the frameworks and reports the
split each one makes, for core/export's tests.

The stand-ins follow the frameworks' code paths that the snippets rely on (read from the
frameworks' sources): torch.distributed.pipelining's pipeline() takes split_spec and the
pipe builds stages by index; DeepSpeed's PipelineModule.__init__ calls
self._partition_layers(method=partition_method), which must set self.parts and call
self._set_bounds for this rank's stage; Keras's get_pipeline_stage_assignment returns one
assignment per layer call, with .layer and .pipeline_stage.

With tensor parallelism, the PyTorch snippet builds its stages by hand on a device mesh:
init_device_mesh lays the ranks out row-major (the last dimension varies fastest) and
mesh[name] is the 1-D mesh of the ranks that differ from this one in that dimension only;
DeepSpeed's ProcessTopology lays its axes out the same way.

usage: python3 readback.py MANIFEST.json  ->  JSON on stdout
MANIFEST: [{"format": "pytorch"|"deepspeed"|"graphcore", "path": FILE,
            "layers": [names], "ranks": N, "world": N}, ...]
"""
import enum
import importlib.util
import inspect
import itertools
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


CURRENT_RANK = [0]


class SubMesh:
    """A 1-D slice of a DeviceMesh: the ranks that differ from this rank in one dimension."""

    def __init__(self, name, ranks, local):
        self.name, self.ranks, self.local = name, ranks, local

    def get_local_rank(self):
        return self.local

    def get_group(self):
        return ("group", self.name, tuple(self.ranks))


class DeviceMesh:
    def __init__(self, device_type, shape, mesh_dim_names):
        self.shape, self.names = tuple(shape), tuple(mesh_dim_names)
        self.coords = list(itertools.product(*[range(n) for n in self.shape]))
        self.me = self.coords[CURRENT_RANK[0]]

    def __getitem__(self, name):
        d = self.names.index(name)
        ranks = [r for r, c in enumerate(self.coords)
                 if all(c[k] == self.me[k] for k in range(len(self.shape)) if k != d)]
        return SubMesh(name, ranks, self.me[d])


MESHES = []


def init_device_mesh(device_type, mesh_shape, mesh_dim_names=None):
    m = DeviceMesh(device_type, mesh_shape, mesh_dim_names)
    MESHES.append(m)
    return m


PARALLELIZED = []


def parallelize_module(module, device_mesh, parallelize_plan):
    PARALLELIZED.append((module, device_mesh.name, device_mesh.ranks, parallelize_plan))
    return module


class PipelineStage:
    def __init__(self, submodule, stage_index, num_stages, device, input_args=None, output_args=None,
                 group=None, dw_builder=None):
        self.submodule, self.index, self.num_stages, self.group = submodule, stage_index, num_stages, group


class TorchDType:
    """torch.bfloat16 and its kind: a dtype named as torch names it."""

    def __init__(self, name):
        self.name = name


class Module:
    """An nn.Module as apply_recompute reaches it: submodules by path, set by name."""

    def get_submodule(self, path):
        return Module()


WRAPPED = []


def checkpoint_wrapper(module):
    """torch's checkpoint_wrapper: records that a module was wrapped."""
    WRAPPED.append(module)
    return module


def install_torch():
    for m in [k for k in sys.modules if k == "torch" or k.startswith("torch.")]:
        del sys.modules[m]
    stub("torch", **{n: TorchDType(n) for n in ("bfloat16", "float16", "float32")})
    stub("torch.distributed")
    stub("torch.distributed.device_mesh", init_device_mesh=init_device_mesh)
    stub("torch.distributed.tensor")
    stub("torch.distributed.tensor.parallel", parallelize_module=parallelize_module)
    stub("torch.distributed.algorithms")
    stub("torch.distributed.algorithms._checkpoint")
    stub("torch.distributed.algorithms._checkpoint.checkpoint_wrapper", checkpoint_wrapper=checkpoint_wrapper)
    names = ["ScheduleGPipe", "Schedule1F1B", "ScheduleInterleaved1F1B", "ScheduleInterleavedZeroBubble"]
    stub("torch.distributed.pipelining", SplitPoint=SplitPoint, pipeline=pipeline, PipelineStage=PipelineStage,
         **{n: schedule_class(n) for n in names})


# deepspeed.pipe --------------------------------------------------------------------------

class ProcessTopology:
    """deepspeed.runtime.pipe.topology.ProcessTopology: ranks are the coordinates of the
    axes in row-major order; get_coord returns a namedtuple of them."""

    def __init__(self, axes, dims):
        self.axes, self.dims = list(axes), list(dims)
        coord = types.SimpleNamespace
        self.coords = [coord(**dict(zip(self.axes, c)))
                       for c in itertools.product(*[range(d) for d in self.dims])]

    def get_dim(self, axis):
        return self.dims[self.axes.index(axis)] if axis in self.axes else 0

    def get_coord(self, rank):
        return self.coords[rank]

    def world_size(self):
        return len(self.coords)


class PipeDataParallelTopology(ProcessTopology):
    def __init__(self, num_pp, num_dp):
        super().__init__(axes=["pipe", "data"], dims=[num_pp, num_dp])


class PipeModelDataParallelTopology(ProcessTopology):
    def __init__(self, num_pp, num_mp, num_dp):
        super().__init__(axes=["pipe", "data", "model"], dims=[num_pp, num_dp, num_mp])


WORLD_SIZE = [1]


class PipelineModule:
    def __init__(self, layers, num_stages=None, topology=None, loss_fn=None, partition_method="parameters",
                 activation_checkpoint_interval=0, **kw):
        if num_stages is None and topology is None:
            raise RuntimeError("must provide num_stages or topology")
        self._layer_specs = list(layers)
        if topology:
            self._topo = topology
        else:
            if WORLD_SIZE[0] % num_stages != 0:
                raise RuntimeError("num_stages must divide the world size")
            self._topo = PipeDataParallelTopology(num_pp=num_stages, num_dp=WORLD_SIZE[0] // num_stages)
        if self._topo.world_size() != WORLD_SIZE[0]:
            raise RuntimeError("the topology has %d ranks, the world %d" % (self._topo.world_size(), WORLD_SIZE[0]))
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
    stub("deepspeed.runtime")
    stub("deepspeed.runtime.pipe")
    stub("deepspeed.runtime.pipe.topology", ProcessTopology=ProcessTopology,
         PipeDataParallelTopology=PipeDataParallelTopology,
         PipeModelDataParallelTopology=PipeModelDataParallelTopology)


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
            res["sizes"] = [mod.NUM_RANKS, mod.DATA_PARALLEL, mod.TENSOR_PARALLEL]
            if hasattr(mod, "build_tensor_parallel"):
                # Every rank of the mesh: its pipeline rank's stages, each module sharded
                # over its tensor-parallel group and staged on its pipeline group.
                res["has_loss"] = "loss_fn" in inspect.signature(mod.build_tensor_parallel).parameters
                res["split_spec"] = {k: v.name for k, v in mod.SPLIT_SPEC.items()}
                res["tensor"] = []
                for rank in range(job["world"]):
                    CURRENT_RANK[0] = rank
                    del MESHES[:], PARALLELIZED[:]
                    mesh = mod.device_mesh("cpu")
                    pp = mesh["pp"]
                    mods = [object() for _ in mod.stage_indices(pp.get_local_rank())]
                    kw = {}
                    if "data_parallel" in inspect.signature(mod.build_tensor_parallel).parameters:
                        kw["data_parallel"] = lambda m, dp_mesh: m
                    sched = mod.build_tensor_parallel(mods, mesh, "cpu", {"*": "plan"}, **kw)
                    res["mesh"] = {"shape": list(mesh.shape), "names": list(mesh.names)}
                    res["schedule"] = type(sched).__name__
                    res["n_microbatches"] = sched.n_microbatches
                    stages = [s.index for s in sched.stages]
                    sharded = [(p[1], p[2]) for p in PARALLELIZED]
                    res["tensor"].append({
                        "rank": rank, "pp": pp.get_local_rank(), "stages": stages,
                        "pp_group": list(pp.ranks), "tp_group": list(mesh["tp"].ranks),
                        "sharded_on_tp": all(name == "tp" and ranks == mesh["tp"].ranks for name, ranks in sharded)
                        and len(sharded) == len(mods),
                        "staged_on_pp": all(s.group == pp.get_group() for s in sched.stages),
                    })
                by_pp = {}
                for t in res["tensor"]:
                    by_pp.setdefault(t["pp"], t["stages"])
                res["ranks"] = [by_pp[k] for k in sorted(by_pp)]
            elif hasattr(mod, "build_stages"):
                # A graph split: each rank's stages built by hand from their modules.
                res["has_loss"] = "loss_fn" in inspect.signature(mod.build_stages).parameters
                res["split_spec"] = {}
                for rank in range(job["ranks"]):
                    mods = [Module() for _ in mod.stage_indices(rank)]
                    sched = mod.build_stages(mods, rank, "cpu")
                    res["schedule"] = type(sched).__name__
                    res["n_microbatches"] = sched.n_microbatches
                    res["ranks"].append([s.index for s in sched.stages])
                res["cut_tensors"] = [[[t[0], t[1]] for t in cut] for cut in mod.CUT_TENSORS]
            else:
                for rank in range(job["ranks"]):
                    RECORD.clear()
                    WRAPPED.clear()
                    sched = mod.build(Module(), (0,), rank, "cpu")
                    res["wrapped"] = len(WRAPPED)
                    res["split_spec"] = RECORD["split_spec"]
                    res["schedule"] = type(sched).__name__
                    res["n_microbatches"] = sched.n_microbatches
                    res["has_loss"] = "loss_fn" in inspect.signature(mod.build).parameters
                    res["ranks"].append([s[1] for s in sched.stages])
                if hasattr(mod, "device_mesh"):
                    CURRENT_RANK[0] = 0
                    mesh = mod.device_mesh("cpu")
                    res["mesh"] = {"shape": list(mesh.shape), "names": list(mesh.names)}
            res["stage_modules"] = mod.STAGE_MODULES
            res["dtypes"] = {k: getattr(mod, k).name for k in ("PARAM_DTYPE", "AUTOCAST_DTYPE") if hasattr(mod, k)}
        elif f == "deepspeed":
            install_deepspeed()
            mod = load(job["path"], "snippet%d" % i)
            res["ranks"] = []
            WORLD_SIZE[0] = job["world"]
            res["sizes"] = [mod.NUM_STAGES, mod.DATA_PARALLEL, mod.TENSOR_PARALLEL]
            for rank in range(job["world"]):
                CURRENT_RANK[0] = rank
                m = mod.build([object() for _ in job["layers"]])
                res["parts"] = m.parts
                res["ranks"].append([m._topo.get_coord(rank).pipe, m._local_start, m._local_stop])
                res["topology"] = dict(zip(m._topo.axes, m._topo.dims))
            res["layer_names"] = mod.LAYER_NAMES
            res["config"] = {k: v for k, v in mod.DS_CONFIG.items() if isinstance(v, int)}
            res["precision"] = {k: v for k, v in mod.DS_CONFIG.items() if k in ("bf16", "fp16", "data_types")}
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
