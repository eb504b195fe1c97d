"""g3 (session 35): whole-tree caller facts for severity (auditor/static/caller_gates.py). An error inside a function
or method every caller of which, in any file of the tree, reaches it only behind a CUDA gate is a warning naming the
gating call; one ungated caller, a call through a value the tree cannot see, or no caller at all (an entry point)
keeps the error. Trees shaped like higgs-audio's CUDA-graph runner (heldout38) and a serving engine's helpers."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of, write_tree

RUNNER = """\
import torch
from torch import nn


class CUDAGraphRunner(nn.Module):
    def __init__(self, forward_fn):
        super().__init__()
        self.forward_fn = forward_fn
        self.graph = None

    def capture(self, *args, **kwargs):
        torch.cuda.synchronize()
        self.graph = torch.cuda.CUDAGraph()
        with torch.cuda.graph(self.graph):
            self.output = self.forward_fn(*args, **kwargs)
        return self.output
"""

MODEL = """\
import torch
from torch import nn

from .cuda_graph_runner import CUDAGraphRunner


class AudioModel(nn.Module):
    def __init__(self, config):
        super().__init__()
        self.config = config
        self.runners = {}

    def capture_model(self, caches):
        for length, cache in caches.items():
            runner = CUDAGraphRunner(self._forward_core)
            runner.capture(cache)
            self.runners[length] = runner
        self.stream = torch.cuda.Stream(device=self.config.device)

    def _forward_core(self, cache):
        return cache
"""

ENGINE = """\
import torch

from audio.model import AudioModel


class ServeEngine:
    def __init__(self, config, device="cuda"):
        self.model = AudioModel(config).to(device)
        self.caches = {1024: None, 4096: None}
        # Capture CUDA graphs for each KV cache length
        if device == "cuda":
            self.model.capture_model(self.caches)
"""

CLIENT = """\
import torch

from audio.model import AudioModel


class Client:
    def __init__(self, config, device):
        self._device = device
        self._model = AudioModel(config)
        self.init_static_kv_cache()

    def init_static_kv_cache(self):
        caches = {2048: None}
        if "cuda" in self._device:
            self._model.capture_model(caches)
"""


SERVER = """\
import argparse

from audio.serve_engine import ServeEngine


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    return ServeEngine({"layers": 2}, device=args.device)


if __name__ == "__main__":
    main()
"""


def _findings(tmp_path, files):
    run = run_static([write_tree(tmp_path, files)], jobs=1)
    return {(r.path, f.line, f.code): f for r in run.results for f in r.findings}


def _tree(**extra):
    files = {"audio/__init__.py": "", "audio/cuda_graph_runner.py": RUNNER, "audio/model.py": MODEL,
             "audio/serve_engine.py": ENGINE, "examples/generation.py": CLIENT, "run_server.py": SERVER}
    files.update(extra)
    return files


def test_errors_every_caller_reaches_behind_a_cuda_gate_are_warnings_naming_the_caller(tmp_path):
    found = _findings(tmp_path, _tree())
    sync = found[("audio/cuda_graph_runner.py", line_of(RUNNER, "torch.cuda.synchronize()"), "NPU002")]
    graph = found[("audio/cuda_graph_runner.py", line_of(RUNNER, "torch.cuda.CUDAGraph()"), "NPU013")]
    stream = found[("audio/model.py", line_of(MODEL, "torch.cuda.Stream("), "NPU014")]
    for f in (sync, graph, stream):
        assert f.severity == "warning", f
        assert f.data["context"] == "cuda-available-branch"
        # the gating call, file:line, so a user can check it (both callers gate; the first seen is named)
        assert f.data["gated_caller"] in (f"audio/serve_engine.py:{line_of(ENGINE, 'capture_model(')}",
                                          f"examples/generation.py:{line_of(CLIENT, 'capture_model(')}")
        assert "only behind a CUDA gate" in f.message


def test_one_ungated_caller_keeps_the_error(tmp_path):
    bench = """\
import torch

from audio.model import AudioModel


def benchmark(config):
    model = AudioModel(config)
    model.capture_model({512: None})
    return model
"""
    found = _findings(tmp_path, _tree(**{"audio/bench_capture.py": bench}))
    assert found[("audio/cuda_graph_runner.py", line_of(RUNNER, "torch.cuda.synchronize()"), "NPU002")].severity \
        == "error"
    assert found[("audio/model.py", line_of(MODEL, "torch.cuda.Stream("), "NPU014")].severity == "error"


def test_a_method_handed_on_as_a_value_keeps_the_error(tmp_path):
    hooks = """\
from audio.model import AudioModel


def register(model: AudioModel, hooks: list):
    hooks.append(model.capture_model)      # called later by whoever runs the hooks: callers unseen
"""
    found = _findings(tmp_path, _tree(**{"audio/hooks.py": hooks}))
    assert found[("audio/model.py", line_of(MODEL, "torch.cuda.Stream("), "NPU014")].severity == "error"


def test_a_helper_no_caller_reaches_keeps_the_error(tmp_path):
    # an entry point or an API: nothing in the tree calls capture_model
    files = _tree()
    files["audio/serve_engine.py"] = ENGINE.replace("            self.model.capture_model(self.caches)\n",
                                                    "            pass\n")
    files["examples/generation.py"] = CLIENT.replace("            self._model.capture_model(caches)\n",
                                                     "            pass\n")
    found = _findings(tmp_path, files)
    assert found[("audio/model.py", line_of(MODEL, "torch.cuda.Stream("), "NPU014")].severity == "error"
    assert found[("audio/cuda_graph_runner.py", line_of(RUNNER, "torch.cuda.synchronize()"), "NPU002")].severity \
        == "error"


HELPERS = """\
import torch


def set_cuda_config(device):
    name = torch.cuda.get_device_name(device)
    return name.endswith("T4")


def report(device):
    return torch.cuda.get_device_name(device)
"""

CONFIG = """\
import torch

from rvc.helpers import report, set_cuda_config


class Config:
    def __init__(self):
        self.device = "cuda:0" if torch.cuda.is_available() else "cpu"
        self.fp16 = self.device_config()

    def device_config(self):
        if self.device.startswith("cuda"):
            return set_cuda_config(self.device)
        return False

    def describe(self):
        print("device:", report(self.device))
"""


def test_a_module_function_called_only_under_a_device_test_in_another_file(tmp_path):
    found = _findings(tmp_path, {"rvc/__init__.py": "", "rvc/helpers.py": HELPERS, "rvc/config.py": CONFIG})
    gated = found[("rvc/helpers.py", line_of(HELPERS, "name = torch.cuda.get_device_name"), "NPU002")]
    assert gated.severity == "warning"
    assert gated.data["gated_caller"] == f"rvc/config.py:{line_of(CONFIG, 'return set_cuda_config(')}"
    # `report` is called with no gate: its error stays
    assert found[("rvc/helpers.py", line_of(HELPERS, "return torch.cuda.get_device_name"), "NPU002")].severity \
        == "error"


def test_a_dispatch_table_entry_for_cuda_is_a_gate_any_other_value_is_an_unknown_caller(tmp_path):
    line = line_of(HELPERS, "name = torch.cuda.get_device_name")
    base = {"rvc/__init__.py": "", "rvc/helpers.py": HELPERS, "rvc/config.py": CONFIG}
    by_backend = """\
from rvc.helpers import set_cuda_config


def configure_cpu(device):
    return False


CONFIGURE = {"cuda": set_cuda_config, "cpu": configure_cpu}


def configure(device):
    return CONFIGURE[device.type](device)
"""
    found = _findings(tmp_path / "a", {**base, "rvc/dispatch.py": by_backend})
    assert found[("rvc/helpers.py", line, "NPU002")].severity == "warning"
    # the table alone (no other caller): the gate named is the table's entry
    alone = {"rvc/__init__.py": "", "rvc/helpers.py": HELPERS, "rvc/dispatch.py": by_backend}
    f = _findings(tmp_path / "a2", alone)[("rvc/helpers.py", line, "NPU002")]
    assert f.severity == "warning" and "dispatch table's 'cuda' entry" in f.message
    assert f.data["gated_caller"] == f"rvc/dispatch.py:{line_of(by_backend, 'CONFIGURE = {')}"
    # the same helper kept as a hook that anything may call: unknown, the error stays
    hooks = """\
from rvc.helpers import set_cuda_config

ON_DEVICE = {"default": set_cuda_config}
HOOKS = [set_cuda_config]
"""
    found = _findings(tmp_path / "b", {**base, "rvc/dispatch.py": hooks})
    assert found[("rvc/helpers.py", line, "NPU002")].severity == "error"
    # a method named as a string (`getattr(model, "capture_model")`): callers unseen
    by_name = """\
def run(model, step):
    return getattr(model, "capture_model")({})
"""
    found = _findings(tmp_path / "c", _tree(**{"audio/steps.py": by_name}))
    assert found[("audio/model.py", line_of(MODEL, "torch.cuda.Stream("), "NPU014")].severity == "error"


def test_a_class_constructed_only_behind_a_gate(tmp_path):
    kernels = """\
import torch


class FusedNorm:
    def __init__(self, eps):
        self.eps = eps

    def forward(self, x):
        torch.cuda.synchronize()
        return x
"""
    app = """\
import torch

from pkg.kernels import FusedNorm


def build(eps):
    if torch.cuda.is_available():
        return FusedNorm(eps)
    return None


if __name__ == "__main__":
    build(1e-5)
"""
    ungated = """\
from pkg.kernels import FusedNorm


def build_anyway(eps):
    return FusedNorm(eps)
"""
    line = line_of(kernels, "torch.cuda.synchronize()")
    found = _findings(tmp_path / "a", {"pkg/__init__.py": "", "pkg/kernels.py": kernels, "pkg/app.py": app})
    assert found[("pkg/kernels.py", line, "NPU002")].severity == "warning"
    found = _findings(tmp_path / "b", {"pkg/__init__.py": "", "pkg/kernels.py": kernels, "pkg/app.py": app,
                                       "pkg/other.py": ungated})
    assert found[("pkg/kernels.py", line, "NPU002")].severity == "error"
    # a class the package exports: users outside the tree construct it themselves
    found = _findings(tmp_path / "c", {"pkg/__init__.py": "from .kernels import FusedNorm\n",
                                       "pkg/kernels.py": kernels, "pkg/app.py": app})
    assert found[("pkg/kernels.py", line, "NPU002")].severity == "error"


def test_a_call_in_a_comment_or_docstring_is_no_gate_and_no_caller(tmp_path):
    # the only "caller" of capture_model under the gate is a comment: the helper has no caller, the error stays
    files = _tree()
    files["audio/serve_engine.py"] = ENGINE.replace("            self.model.capture_model(self.caches)\n",
                                                    "            pass  # self.model.capture_model(self.caches)\n")
    files["examples/generation.py"] = CLIENT.replace(
        "            self._model.capture_model(caches)\n",
        '            """Run self._model.capture_model(caches) here once graphs work."""\n')
    found = _findings(tmp_path, files)
    assert found[("audio/model.py", line_of(MODEL, "torch.cuda.Stream("), "NPU014")].severity == "error"


def test_a_caller_testing_a_backend_setting_is_no_gate(tmp_path):
    # tabbyAPI: the probe runs when the user's config names the NCCL backend, on any hardware
    utils = """\
import platform

import torch


def exllama_supports_nccl():
    if platform.system() == "Windows":
        return False
    return torch.cuda.is_available() and torch.distributed.is_nccl_available()
"""
    model = """\
from backends.exllamav3.utils import exllama_supports_nccl


class ExllamaV3Container:
    def load(self, kwargs):
        tp_backend = kwargs.get("tensor_parallel_backend", "native")
        if tp_backend == "nccl" and not exllama_supports_nccl():
            tp_backend = "native"
        return tp_backend
"""
    found = _findings(tmp_path, {"backends/__init__.py": "", "backends/exllamav3/__init__.py": "",
                                 "backends/exllamav3/utils.py": utils, "backends/exllamav3/model.py": model})
    assert found[("backends/exllamav3/utils.py", line_of(utils, "return torch.cuda.is_available()"), "NPU002")] \
        .severity == "error"


def test_a_warm_run_reads_no_file_and_keeps_the_warnings(tmp_path):
    # the callers and definitions are per-file facts kept in the cache: a warm run parses nothing
    root = write_tree(tmp_path / "t", _tree())
    cache = tmp_path / "cache"

    def moved(run):
        return sorted((r.path, f.line, f.severity, f.data.get("gated_caller")) for r in run.results
                      for f in r.findings if f.data.get("gated_caller"))

    cold = run_static([root], jobs=1, cache_dir=cache)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert warm.project_reads == 0
    assert moved(cold) == moved(warm) and len(moved(cold)) >= 4


SP_DEMO = """\
import torch
from torch.distributed.device_mesh import DeviceMesh


def demo_sp(rank, args):
    device_mesh = DeviceMesh("cuda", torch.arange(0, args.world_size))
    return device_mesh
"""

SP_MAIN = """\
import argparse

import torch
import torch.multiprocessing as mp

from sp_demo import demo_sp


def main():
    n_gpus = torch.cuda.device_count()
    parser = argparse.ArgumentParser()
    parser.add_argument("--world_size", type=int, default=n_gpus)
    args = parser.parse_args()
    if n_gpus < 2:
        print(f"Requires at least 2 GPUs to run, but got {n_gpus}.")
    else:
        mp.spawn(demo_sp, args=(args,), nprocs=args.world_size, join=True)


if __name__ == "__main__":
    main()
"""

TP_EXAMPLE = """\
import torch
import torch.multiprocessing as mp
from torch.distributed.device_mesh import DeviceMesh


def demo_sp(rank, world_size):
    return DeviceMesh("cuda", torch.arange(0, world_size))


def main():
    mp.spawn(demo_sp, args=(2,), nprocs=2, join=True)
"""


def test_a_file_that_defines_a_name_calls_its_own_definition(tmp_path):
    # llm-action's shape: each example defines and spawns its own `demo_sp`; the library one is spawned only with two
    # CUDA devices, the other example's own `demo_sp` (spawned without a gate) is not a caller of it
    found = _findings(tmp_path, {"sp_demo.py": SP_DEMO, "sp_main.py": SP_MAIN, "tp_example.py": TP_EXAMPLE})
    gated = found[("sp_demo.py", line_of(SP_DEMO, 'DeviceMesh("cuda"'), "NPU003")]
    assert gated.severity == "warning"
    assert gated.data["gated_caller"] == f"sp_main.py:{line_of(SP_MAIN, 'mp.spawn(')}"
    assert found[("tp_example.py", line_of(TP_EXAMPLE, 'DeviceMesh("cuda"'), "NPU003")].severity == "error"


def test_a_call_through_a_module_reaches_the_modules_definition_even_where_the_caller_defines_the_name(tmp_path):
    other = """\
from rvc import helpers


def set_cuda_config(device):
    return helpers.set_cuda_config(device)
"""
    found = _findings(tmp_path, {"rvc/__init__.py": "", "rvc/helpers.py": HELPERS, "rvc/config.py": CONFIG,
                                 "rvc/tools.py": other})
    assert found[("rvc/helpers.py", line_of(HELPERS, "name = torch.cuda.get_device_name"), "NPU002")].severity \
        == "error"


def test_a_gate_inside_a_definition_the_tree_never_runs_is_no_gate(tmp_path):
    # the only gated call sits in an engine nothing in the tree builds: the helper is the package's API
    files = _tree()
    del files["run_server.py"]
    files["examples/generation.py"] = CLIENT.replace("        self.init_static_kv_cache()\n", "")
    found = _findings(tmp_path, files)
    assert found[("audio/model.py", line_of(MODEL, "torch.cuda.Stream("), "NPU014")].severity == "error"
