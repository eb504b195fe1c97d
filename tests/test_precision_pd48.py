"""pd48 (session 30, TUNED on dev30): general false families found on four new trees (dev30's cosmos-predict2,
TRELLIS.2, LLMs-from-scratch, traiNNer-redux), each on code shaped like the tree it came from, with a control."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line


def _severities(tmp_path, files, rel):
    return run_values_by_line(tmp_path, files, rel, "severity")


# -- a CUDA check whose only effect is a measurement ----------------------------------------------------------------
GENERATE = """\
import time

import torch

from model import GPTModel, generate_text_simple


def main(cfg, encoded):
    device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    model = GPTModel(cfg).to(device)
    model.eval()
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    start = time.time()
    token_ids = generate_text_simple(model, encoded.to(device), max_new_tokens=200)
    if torch.cuda.is_available():
        torch.cuda.synchronize()
    total_time = time.time() - start
    print(f"{int(len(token_ids[0]) / total_time)} tokens/sec")
    if torch.cuda.is_available():
        max_mem_bytes = torch.cuda.max_memory_allocated()
        max_mem_gb = max_mem_bytes / (1024 ** 3)
        print(f"Max memory allocated: {max_mem_gb:.2f} GB")
    return token_ids


def peak(model, batch):
    if torch.cuda.is_available():
        torch.cuda.reset_peak_memory_stats()
        used = torch.cuda.max_memory_allocated()
    out = model(batch)
    return out, used


def place(model):
    if torch.cuda.is_available():
        torch.cuda.synchronize()
        model = model.cuda()
    return model
"""


def test_a_cuda_check_that_only_syncs_before_a_timer_is_a_warning(tmp_path):
    sev = _severities(tmp_path, {"generate.py": GENERATE}, "generate.py")
    lines = [i for i, text in enumerate(GENERATE.splitlines(), 1) if text.strip() == "if torch.cuda.is_available():"]
    assert sev.get(lines[0]) == {"warning"} and sev.get(lines[1]) == {"warning"}
    assert sev.get(lines[2]) == {"warning"}   # the memory statistics, printed only


def test_control_a_statistic_read_after_the_check_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"generate.py": GENERATE}, "generate.py")
    lines = [i for i, text in enumerate(GENERATE.splitlines(), 1) if text.strip() == "if torch.cuda.is_available():"]
    assert "error" in sev.get(lines[3], set())   # `used` is returned: on Ascend the return fails


def test_control_a_check_that_also_places_the_model_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"generate.py": GENERATE}, "generate.py")
    lines = [i for i, text in enumerate(GENERATE.splitlines(), 1) if text.strip() == "if torch.cuda.is_available():"]
    assert "error" in sev.get(lines[4], set())
    assert "error" in sev.get(line_of(GENERATE, 'device = torch.device("cuda" if torch.cuda.is_available() else "cpu")'), set())


# -- `if 'dr' not in globals(): import ...` is a lazy import, not a guard --------------------------------------------
RENDERER = """\
import torch


class MeshRenderer:
    def __init__(self, rendering_options={}, device="cuda"):
        if "dr" not in globals():
            import nvdiffrast.torch as dr
        self.rendering_options = dict(rendering_options)
        self.glctx = dr.RasterizeCudaContext(device=device)

    def render(self, vertices_clip, faces, resolution):
        if "dr" not in globals():
            import nvdiffrast.torch as dr
        rast, _ = dr.rasterize(self.glctx, vertices_clip, faces, (resolution, resolution))
        return rast
"""

OPTIONAL_RENDERER = """\
import torch

try:
    import nvdiffrast.torch as dr
except ImportError:
    dr = None


class MeshRenderer:
    def __init__(self, glctx):
        self.glctx = glctx

    def render(self, vertices_clip, faces, resolution):
        if dr is None:
            return torch.zeros(resolution, resolution)
        rast, _ = dr.rasterize(self.glctx, vertices_clip, faces, (resolution, resolution))
        return rast
"""


def test_a_lazy_import_under_a_globals_test_is_no_optional_import(tmp_path):
    sev = _severities(tmp_path, {"renderer.py": RENDERER}, "renderer.py")
    assert sev.get(line_of(RENDERER, "rast, _ = dr.rasterize(")) == {"error"}


def test_control_an_import_under_try_except_is_no_error(tmp_path):
    sev = _severities(tmp_path, {"renderer.py": OPTIONAL_RENDERER}, "renderer.py")
    assert sev.get(line_of(OPTIONAL_RENDERER, "rast, _ = dr.rasterize(")) in ({"warning"}, {"info"})


CHECKPOINTER = """\
import torch
from torch.distributed.fsdp._runtime_utils import _lazy_init


class Checkpointer:
    def load(self, fsdp_model, state):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        _lazy_init(fsdp_model, fsdp_model)
        fsdp_model.load_state_dict(state)
"""


def test_control_a_sync_beside_no_clock_keeps_its_error(tmp_path):
    sev = _severities(tmp_path, {"checkpoint.py": CHECKPOINTER}, "checkpoint.py")
    assert "error" in sev.get(line_of(CHECKPOINTER, "if torch.cuda.is_available():"), set())
