"""Precision fix of pd29 (session 24, tuned on heldout27's labels): an application read from its launch scripts, code
after an unconditional `return`, and an autocast whose `enabled` is a parameter no caller turns on
(auditor/static/unreached_defs.py, auditor/static/call_defaults.py).

- an application (no root package, not pip-installable, a root launch script that imports the tree's own modules:
  Wan2GP's `wgp.py`, run by its `scripts/run.sh`) runs what its launch scripts import and what its loaders load by
  name (`importlib.import_module(f"{dir_name}.plugin")` over a folder: every `<folder>/plugin.py`); a vendored module
  nothing imports, a vendored standalone test script and a helper nothing calls are unreached, info (policy (h));
- the statements after an unconditional `return` / `raise` never run (Wan2GP's `is_causal_conv1d_available`);
- `torch.autocast("cuda", enabled=mixed_precision)` in a `forward(self, x, mixed_precision: bool = False)` that no
  call turns on (MoGe's `moge_model.py`; `infer` calls `self.forward(image)`): info.
Each case has a control that keeps its severity: a pip-installable library with an `examples/` script, a repository
whose root `train.py` imports everything, a loader over a computed name, a caller passing `mixed_precision=True` or a
variable. Code written afresh in the shape of those trees, not copied."""
from __future__ import annotations

from auditor.runner import run_static
from tests.static_snippets import line_of, severities_at as _severities, write_tree

APP = """\
    import argparse
    import gradio as gr
    from shared.utils.plugins import PluginManager
    from shared.kernels.quant import fused_mm
    from models.wan.pipeline import WanPipeline
    from preprocessing.depth.utils.memory import cleanup


    def main():
        manager = PluginManager()
        manager.load_plugins()
        cleanup()
        return WanPipeline().generate(fused_mm)


    if __name__ == "__main__":
        main()
"""

PLUGINS = """\
    import importlib
    import os


    class PluginManager:
        def load_plugins(self):
            for dir_name in os.listdir("plugins"):
                module = importlib.import_module(f"{dir_name}.plugin")
                module.setup()
"""

PLUGIN = """\
    import torch


    def setup():
        torch.cuda.empty_cache()
"""

QUANT = """\
    import torch


    def fused_mm(x):
        return x.cuda()


    def fused_mm_transposed(x):
        if not x.is_cuda:
            raise RuntimeError("CUDA only")
        return x
"""

PIPELINE = """\
    import torch


    class WanPipeline:
        def generate(self, fn):
            return fn(torch.zeros(1, device="cuda"))
"""

MEMORY = """\
    import torch


    def get_gpu_memory_info():
        return torch.cuda.memory_allocated()


    def cleanup():
        return None
"""

TEST_VAE = """\
    import torch

    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    print(device)
"""

COMPAT = """\
    import torch


    def is_causal_conv1d_available():
        return False
        if not torch.cuda.is_available():
            return False
        return True


    def is_fla_available():
        if not torch.cuda.device_count():
            return False
        return True
"""

RUN_SH = """\
    #!/bin/bash
    python3 wgp.py --listen "$@"
"""


def _tree(tmp_path, launcher: str = "wgp.py", extra: dict[str, str] | None = None):
    files = {launcher: APP, "scripts/run.sh": RUN_SH.replace("wgp.py", launcher),
             "shared/__init__.py": "", "shared/utils/__init__.py": "", "shared/utils/plugins.py": PLUGINS,
             "shared/kernels/__init__.py": "", "shared/kernels/quant.py": QUANT,
             "shared/compat.py": COMPAT,
             "models/__init__.py": "", "models/wan/__init__.py": "", "models/wan/pipeline.py": PIPELINE,
             "models/wan/vae/test_vae.py": TEST_VAE,
             "preprocessing/depth/utils/memory.py": MEMORY,
             "plugins/about/plugin.py": PLUGIN}
    files.update(extra or {})
    return write_tree(tmp_path / "app", files)


def _context(root, rel: str, src: str, needle: str) -> set[str]:
    return {context for _, context in _severities(root, rel, src, needle)}


def test_application_helper_of_a_module_it_loads_is_unreached(tmp_path):
    """The app imports `memory.cleanup`; the module's `get_gpu_memory_info`, which nothing names, is unreached. A file
    no other file loads (a vendored standalone script, a CLI of its own) is a program of its own: it keeps its
    severity (control)."""
    root = _tree(tmp_path)
    assert _severities(root, "preprocessing/depth/utils/memory.py", MEMORY, "memory_allocated") == {("info", "unreached")}
    assert "unreached" not in _context(root, "models/wan/vae/test_vae.py", TEST_VAE, "torch.device(")


def test_application_helper_nothing_calls_is_unreached_and_the_called_one_stays(tmp_path):
    root = _tree(tmp_path)
    assert _context(root, "shared/kernels/quant.py", QUANT, "x.is_cuda") == {"unreached"}
    assert ("error", "") in _severities(root, "shared/kernels/quant.py", QUANT, "x.cuda()")
    assert "unreached" not in _context(root, "models/wan/pipeline.py", PIPELINE, 'device="cuda"')


def test_application_plugin_loaded_by_an_fstring_pattern_stays(tmp_path):
    root = _tree(tmp_path)
    assert "unreached" not in _context(root, "plugins/about/plugin.py", PLUGIN, "empty_cache")


def test_application_launched_by_a_named_script_without_shell_launcher(tmp_path):
    root = _tree(tmp_path, "app.py")
    assert _severities(root, "preprocessing/depth/utils/memory.py", MEMORY, "memory_allocated") == {("info", "unreached")}


def test_code_after_an_unconditional_return_is_unreached(tmp_path):
    root = _tree(tmp_path, extra={"wgp.py": APP.replace(
        "import argparse", "import argparse\n    from shared.compat import is_causal_conv1d_available, is_fla_available")
        .replace("manager = PluginManager()", "is_causal_conv1d_available() or is_fla_available()\n"
                 "        manager = PluginManager()")})
    assert _context(root, "shared/compat.py", COMPAT, "torch.cuda.is_available()") == {"unreached"}
    assert "unreached" not in _context(root, "shared/compat.py", COMPAT, "torch.cuda.device_count()")


def test_library_with_an_examples_script_is_no_application(tmp_path):
    """Control: a pip-installable library keeps its findings, its root `app.py` demo notwithstanding."""
    root = _tree(tmp_path, "app.py", {"setup.py": "from setuptools import setup, find_packages\nsetup(name='x', "
                                      "packages=find_packages())\n", "examples/train.py": APP})
    assert "unreached" not in _context(root, "preprocessing/depth/utils/memory.py", MEMORY, "memory_allocated")
    assert "unreached" not in _context(root, "shared/kernels/quant.py", QUANT, "x.is_cuda")


def test_repository_with_a_root_train_script_is_no_application(tmp_path):
    """Controls: a root `train.py` (no launch script, no shell script running one) is not read as an application, nor
    is a research repository's `main.py` that serves no UI."""
    root = _tree(tmp_path, "train.py", {"scripts/run.sh": "#!/bin/bash\necho hi\n"})
    assert "unreached" not in _context(root, "preprocessing/depth/utils/memory.py", MEMORY, "memory_allocated")
    root = _tree(tmp_path / "main", "main.py", {"main.py": APP.replace("import gradio as gr", "import os")})
    assert "unreached" not in _context(root, "preprocessing/depth/utils/memory.py", MEMORY, "memory_allocated")


def test_application_loader_over_a_computed_name_loads_everything(tmp_path):
    """Control: a loader whose module name is computed in a function that lists a folder may load any file."""
    loader = PLUGINS.replace('f"{dir_name}.plugin"', 'dir_name.replace("/", ".")')
    root = _tree(tmp_path, extra={"shared/utils/plugins.py": loader})
    assert "unreached" not in _context(root, "models/wan/vae/test_vae.py", TEST_VAE, "torch.device(")


MOGE = """\
    import torch
    from torch import nn


    class MoGeModel(nn.Module):
        def forward(self, image, mixed_precision: bool = False):
            with torch.autocast(device_type="cuda", dtype=torch.float16, enabled=mixed_precision):
                return image * 2

        @torch.inference_mode()
        def infer(self, image, resolution_level=9):
            return self.forward(image)
"""

NODE = """\
    from moge_model import MoGeModel


    def run(image):
        model = MoGeModel()
        return model.infer(image, resolution_level=9)
"""


def test_autocast_parameter_no_call_turns_on_is_info(tmp_path):
    root = write_tree(tmp_path / "moge", {"moge_model.py": MOGE, "nodes.py": NODE})
    found = _severities(root, "moge_model.py", MOGE, "torch.autocast(")
    assert found and all(sev == "info" for sev, _ in found) and ("info", "autocast-off") in found


def test_autocast_parameter_a_call_turns_on_stays(tmp_path):
    """Controls: a caller passing `mixed_precision=True`, a variable, or the flag by position keeps the severity."""
    for i, call in enumerate(("model(image, mixed_precision=True)", "model(image, mixed_precision=flag)",
                              "model.forward(image, flag)")):
        node = NODE.replace("model.infer(image, resolution_level=9)", call).replace("def run(image)", "def run(image, flag)")
        root = write_tree(tmp_path / f"moge{i}", {"moge_model.py": MOGE, "nodes.py": node})
        assert "autocast-off" not in _context(root, "moge_model.py", MOGE, "torch.autocast("), call


def test_autocast_facts_come_from_the_worker_warm_equals_cold(tmp_path, monkeypatch):
    """Item 3: the names a file sets and what it imports by name are per-file facts (`calls` 7), so the autocast pass
    reads no Python file on a warm run, with the same findings cold, warm and without a cache."""
    import json

    from tests.test_precision_pd27 import BUILD_OFF, RAFT
    from tests.test_tree_facts import _findings, _refuse_python_reads

    root = write_tree(tmp_path / "t", {"raft.py": RAFT, "flow.py": BUILD_OFF})
    cache = tmp_path / "cache"
    nocache = run_static([root], jobs=1)
    cold = run_static([root], jobs=1, cache_dir=cache)
    entries = json.loads(next(cache.rglob("*.json")).read_text())["entries"]
    flow = next(e["summary"]["calls"] for p, e in entries.items() if p.endswith("flow.py"))
    assert "mixed_precision" in flow["sets_off"] and "raft:RAFT" in flow["imports"]
    _refuse_python_reads(monkeypatch)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert warm.cached_files == len(warm.results)
    assert _findings(warm) == _findings(cold) == _findings(nocache)
    assert warm.project_reads == 0
    assert {(f.severity, (f.data or {}).get("context")) for r in warm.results if r.path == "raft.py"
            for f in r.findings if f.line == line_of(RAFT, "with autocast(")} == {("info", "autocast-off")}
