"""Precision fixes of tq46b (session 46, tuned on heldout54's labels). Each family has a positive case (the row the
labellers called false, in code written afresh in the shape of its tree) and a control that keeps its finding."""
from __future__ import annotations


from tests.static_snippets import dedented_tree, first_line_of, severity_at


# -- an application's modules nothing imports: only classes a loader may build stay reached ------------------------

GUI = """\
    import sys
    from PySide6.QtWidgets import QApplication
    from backend.main import SubtitleRemover


    if __name__ == "__main__":
        app = QApplication(sys.argv)
        SubtitleRemover().run()
"""
BACKEND_MAIN = """\
    import torch


    class SubtitleRemover:
        def run(self):
            return torch.zeros(1)
"""
# ProPainter's evaluation helpers, copied in and imported by nothing
METRICS = """\
    import torch
    from torch import nn


    def init_i3d_model(path):
        model = InceptionI3d(400)
        model.load_state_dict(torch.load(path))
        return model.to(torch.device("cuda:0"))


    class InceptionI3d(nn.Module):
        def __init__(self, classes):
            super().__init__()
            self.classes = classes

        def forward(self, x):
            return x.to("cuda")
"""
PREFETCH = """\
    import torch


    class CUDAPrefetcher:
        def __init__(self, loader, opt):
            self.loader = loader
            self.device = torch.device("cuda" if opt["num_gpu"] != 0 else "cpu")
"""


def test_application_function_beside_a_loadable_class_is_unreached(tmp_path):
    found = dedented_tree(tmp_path, {"gui.py": GUI, "backend/__init__.py": "", "backend/main.py": BACKEND_MAIN,
                             "backend/video/core/metrics.py": METRICS,
                             "backend/video/core/prefetch_dataloader.py": PREFETCH})
    assert set(severity_at(found, "backend/video/core/metrics.py", METRICS, '"cuda:0"').values()) == {"info"}
    # a class with no base is built only by code that names it
    assert set(severity_at(found, "backend/video/core/prefetch_dataloader.py", PREFETCH, '"cuda" if').values()) == {"info"}
    # control: the nn.Module subclass may be unpickled by its module path: it keeps its severity
    assert "error" in severity_at(found, "backend/video/core/metrics.py", METRICS, 'x.to("cuda")').values()


# -- a stale duplicate module in a library ----------------------------------------------------------------------

SETUP = """\
    from setuptools import find_packages, setup

    setup(name="videosys", version="2.0.0", packages=find_packages())
"""
OLD_MODEL = """\
    import torch
    from videosys.utils import is_xformers_available

    if is_xformers_available():
        import xformers


    def get_2d_sincos_pos_embed(dim, size):
        return torch.zeros(dim, size)


    class Attention(torch.nn.Module):
        def __init__(self, dim, attention_mode: str = "xformers"):
            super().__init__()
            self.attention_mode = attention_mode


    class LatteT2V(torch.nn.Module):
        def probe(self):
            return torch.randn((1, 2, 40), device="cuda")
"""
NEW_MODEL = """\
    import torch


    def get_2d_sincos_pos_embed(dim, size):
        return torch.zeros(dim, size)


    class Attention(torch.nn.Module):
        def __init__(self, dim):
            super().__init__()


    class LatteT2V(torch.nn.Module):
        def probe(self):
            return torch.randn((1, 2, 40), device="cuda")


    class PatchEmbed(torch.nn.Module):
        pass
"""
PIPELINE = """\
    from videosys.models.transformers.open_sora_plan_v110_transformer_3d import LatteT2V


    def build():
        return LatteT2V()
"""
UTILS = """\
    import importlib.util


    def is_xformers_available():
        return importlib.util.find_spec("xformers") is not None
"""


def _library(tmp_path, extra: dict[str, str] | None = None):
    files = {"setup.py": SETUP, "videosys/__init__.py": "", "videosys/utils.py": UTILS,
             "videosys/models/__init__.py": "", "videosys/models/transformers/__init__.py": "",
             "videosys/models/transformers/open_sora_plan_transformer_3d.py": OLD_MODEL,
             "videosys/models/transformers/open_sora_plan_v110_transformer_3d.py": NEW_MODEL,
             "videosys/pipelines/__init__.py": "", "videosys/pipelines/open_sora_plan.py": PIPELINE}
    files.update(extra or {})
    return dedented_tree(tmp_path, files)


def test_stale_duplicate_module_nothing_imports_is_info(tmp_path):
    found = _library(tmp_path)
    old = "videosys/models/transformers/open_sora_plan_transformer_3d.py"
    assert set(severity_at(found, old, OLD_MODEL, 'device="cuda"').values()) == {"info"}
    assert set(severity_at(found, old, OLD_MODEL, "import xformers").values()) == {"info"}
    # control: the module the pipeline imports keeps its finding
    new = "videosys/models/transformers/open_sora_plan_v110_transformer_3d.py"
    assert "info" not in severity_at(found, new, NEW_MODEL, 'device="cuda"').values()


def test_duplicate_module_another_file_names_keeps_its_severity(tmp_path):
    """Control: a loader that spells the module's name may load it."""
    found = _library(tmp_path, {"videosys/registry.py": 'MODELS = ["open_sora_plan_transformer_3d"]\n'})
    old = "videosys/models/transformers/open_sora_plan_transformer_3d.py"
    assert "info" not in severity_at(found, old, OLD_MODEL, 'device="cuda"').values()


# -- host values -------------------------------------------------------------------------------------------------

ADAPT = """\
    import numpy as np
    import torch


    def induced_graphs(data, index, label, subset):
        for _ in range(3):
            pos_nodes = torch.argwhere(data.y == int(label))
            candidates = torch.from_numpy(np.setdiff1d(pos_nodes.numpy(), subset.numpy()))
        return candidates


    def on_device(data, label):
        for _ in range(3):
            pos_nodes = torch.argwhere(data.y == int(label))
            idx = pos_nodes.cpu().numpy()
        return idx
"""


def test_op_result_read_with_numpy_is_a_host_value(tmp_path):
    found = dedented_tree(tmp_path, {"adapt.py": ADAPT})
    lines = sorted(line for (rel, line), codes in found.items() if "NPU702" in codes)
    # only the second function's argwhere, whose result is copied with `.cpu()` first, keeps the hint
    assert lines == [first_line_of(ADAPT, "pos_nodes = torch.argwhere") + 7]


DATASET = """\
    import numpy as np
    import torch
    from PIL import Image
    from torch.utils.data import Dataset


    class ImagePromptDataset(Dataset):
        def __init__(self, paths):
            self.paths = paths

        def _load_image(self, path):
            with Image.open(path) as img:
                array = np.array(img.convert("RGB"))
            tensor = torch.from_numpy(array).permute(2, 0, 1).float() / 255.0
            return tensor.to(torch.float16)

        def __getitem__(self, idx):
            return self._load_image(self.paths[idx])


    class PairDataset(Dataset):
        def __init__(self, max_len, hidden_states_dtype=torch.bfloat16):
            self.max_len = max_len
            self.hidden_states_dtype = hidden_states_dtype


    class CachedFramesDataset(Dataset):
        def __init__(self, paths, device):
            self.frames = [torch.load(p).to(device) for p in paths]

        def __getitem__(self, idx):
            return self.frames[idx].to(torch.float16)


    def prepare(model):
        return model.to(torch.float16)
"""


def test_dtype_cast_in_a_dataset_without_a_device_is_a_host_value(tmp_path):
    found = dedented_tree(tmp_path, {"utils/dataset.py": DATASET})
    assert not severity_at(found, "utils/dataset.py", DATASET, "return tensor.to(torch.float16)")
    # controls: a dataset that moves its frames to a device, and the model's cast
    assert severity_at(found, "utils/dataset.py", DATASET, "self.frames[idx].to(torch.float16)") == {"NPU202": "info"}
    assert severity_at(found, "utils/dataset.py", DATASET, "model.to(torch.float16)") == {"NPU202": "info"}
    # control: a dtype a dataset's parameter defaults to is a choice its callers take
    assert severity_at(found, "utils/dataset.py", DATASET, "hidden_states_dtype=torch.bfloat16") == {"NPU201": "info"}


# -- a dtype the test checks the code refuses -------------------------------------------------------------------------

RESOLUTION = """\
    import pytest
    from pydantic import ValidationError

    from speculators.train.config import TrainConfig


    def test_from_sources_rejects_float16_dtype():
        with pytest.raises(ValidationError):
            TrainConfig.from_sources(cli={"hidden_states_dtype": "float16"}, argv=["train.py"])


    def test_from_sources_keeps_float16_storage():
        cfg = TrainConfig.from_sources(cli={"hidden_states_dtype": "float16", "verifier": "m"}, argv=["train.py"])
        assert cfg.verifier == "m"
"""


def test_dtype_name_under_pytest_raises_chooses_nothing(tmp_path):
    found = dedented_tree(tmp_path, {"tests/test_resolution.py": RESOLUTION})
    assert not severity_at(found, "tests/test_resolution.py", RESOLUTION, 'cli={"hidden_states_dtype": "float16"}')
    # control: the same value where the test builds a config with it
    assert "NPU202" in severity_at(found, "tests/test_resolution.py", RESOLUTION, '"float16", "verifier"')


# -- a skip mark a decorator factory returns -----------------------------------------------------------------------

CONFTEST = """\
    import pytest
    import torch


    def requires_multi_gpu(fn):
        fn = pytest.mark.multi_gpu(fn)
        return pytest.mark.skipif(
            not torch.cuda.is_available() or torch.cuda.device_count() < 2,
            reason="2+ GPUs required",
        )(fn)


    def gpu_count():
        return torch.cuda.device_count()
"""


def test_skip_mark_returned_by_a_decorator_factory_is_a_test_mark(tmp_path):
    found = dedented_tree(tmp_path, {"tests/conftest.py": CONFTEST})
    assert severity_at(found, "tests/conftest.py", CONFTEST, "device_count() < 2") == {"NPU002": "warning"}
    # control: a count read outside the mark
    assert severity_at(found, "tests/conftest.py", CONFTEST, "return torch.cuda.device_count()") == {"NPU002": "error"}


# -- flex attention's mask helpers ------------------------------------------------------------------------------------

MASKS = """\
    from torch.nn.attention.flex_attention import create_block_mask, create_mask, or_masks


    def mask_builder(attn_impl, prefix_mod, block_mod):
        fn = create_block_mask if attn_impl == "simple_flex_attention" else create_mask
        return fn, or_masks(prefix_mod, block_mod)
"""


def test_flex_mask_helpers_select_no_attention(tmp_path):
    found = dedented_tree(tmp_path, {"core.py": MASKS})
    assert not severity_at(found, "core.py", MASKS, "return fn, or_masks")
    # control: the block mask feeds only flex_attention
    assert severity_at(found, "core.py", MASKS, "fn = create_block_mask") == {"NPU397": "warning"}


# -- PaddleSpeech's scripts are Paddle code ------------------------------------------------------------------------

GENERATE = """\
    import argparse

    from paddlespeech.cli.tts.infer import TTSExecutor


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--device", type=str, default="gpu", help="device type to use.")
        args = parser.parse_args()
        TTSExecutor()(text="hi", output=args.device)
"""


def test_paddlespeech_script_is_paddle_code(tmp_path):
    found = dedented_tree(tmp_path, {"tools/generate_audio.py": GENERATE})
    codes = severity_at(found, "tools/generate_audio.py", GENERATE, 'default="gpu"')
    assert codes and set(codes.values()) == {"info"}


# -- an application's per-backend release workflows -----------------------------------------------------------------

WORKFLOW = """\
    name: Build Windows {flavour}
    on: [workflow_dispatch]
    jobs:
      build:
        runs-on: windows-2019
        steps:
        - uses: actions/checkout@v4
        - run: pip install torch==2.7.0 torchvision==0.22.0 --index-url https://download.pytorch.org/whl/{index}
        - run: python backend/tools/makedist.py {option}
"""


def _workflow(flavour: str, index: str, option: str) -> str:
    return WORKFLOW.replace("{flavour}", flavour).replace("{index}", index).replace("{option}", option)


def test_cuda_release_workflow_beside_cpu_and_directml_ones_is_a_member(tmp_path):
    cuda = _workflow("CUDA 12.6", "cu126", "--cuda 12.6")
    found = dedented_tree(tmp_path, {".github/workflows/build-windows-cuda-12.6.yml": cuda,
                             ".github/workflows/build-windows-cpu.yml": _workflow("CPU", "cpu", "--cpu"),
                             ".github/workflows/build-windows-directml.yml": _workflow("DirectML", "cpu", "--directml")})
    codes = severity_at(found, ".github/workflows/build-windows-cuda-12.6.yml", cuda, "download.pytorch.org")
    assert codes.get("NPU018") == "info"


def test_cuda_release_workflow_alone_keeps_its_error(tmp_path):
    cuda = _workflow("CUDA 12.6", "cu126", "--cuda 12.6")
    found = dedented_tree(tmp_path, {".github/workflows/build-windows-cuda-12.6.yml": cuda,
                             ".github/workflows/build-windows-cuda-11.8.yml": _workflow("CUDA 11.8", "cu118", "--cuda 11.8")})
    codes = severity_at(found, ".github/workflows/build-windows-cuda-12.6.yml", cuda, "download.pytorch.org")
    assert codes.get("NPU018") == "error"


# -- a copied flash-attn availability probe ---------------------------------------------------------------------------

PROBE = """\
    import importlib.util

    import torch


    def _is_package_available(pkg_name):
        return importlib.util.find_spec(pkg_name) is not None


    def is_flash_attn_2_available():
        if not _is_package_available("flash_attn"):
            return False
        if not torch.cuda.is_available():
            return False
        return True


    def use_gpu():
        if not torch.cuda.is_available():
            return False
        return True
"""


def test_copied_flash_attn_probe_refuses_as_it_should(tmp_path):
    found = dedented_tree(tmp_path, {"smoe/models/modeling.py": PROBE})
    # the package look-up is reported once, by the call (NPU390), not again as an implementation name (NPU386)
    assert severity_at(found, "smoe/models/modeling.py", PROBE, '_is_package_available("flash_attn")') == {"NPU390": "warning"}
    lines = sorted(line for (rel, line), codes in found.items() if codes.get("NPU002"))
    first = first_line_of(PROBE, "if not torch.cuda.is_available()")
    assert found[("smoe/models/modeling.py", first)] == {"NPU002": "info"}
    # control: the same check in a helper named for no CUDA-only library
    assert found[("smoe/models/modeling.py", lines[-1])] == {"NPU002": "error"} and lines[-1] > first


# -- a CUDA check that only picks where a checkpoint is staged -------------------------------------------------------

EXPORT = """\
    import torch


    class Trainer:
        def export(self, resume_model):
            if torch.cuda.is_available() and self.use_gpu:
                model_state_dict = torch.load(resume_model)
            else:
                model_state_dict = torch.load(resume_model, map_location="cpu")
            self.model.load_state_dict(model_state_dict)
            return self.model

        def load_whole(self, path):
            if torch.cuda.is_available() and self.use_gpu:
                model = torch.load(path)
            else:
                model = torch.load(path, map_location="cpu")
            return model(torch.zeros(1))
"""


def test_cuda_check_picking_only_the_staging_location_is_a_warning(tmp_path):
    found = dedented_tree(tmp_path, {"masr/trainer.py": EXPORT})
    first = first_line_of(EXPORT, "if torch.cuda.is_available() and self.use_gpu")
    assert found[("masr/trainer.py", first)] == {"NPU002": "warning"}
    # control: a pickled model loaded whole and called: the check picks its device
    assert found[("masr/trainer.py", first + 8)] == {"NPU002": "error"}


# -- a Triton member of a per-backend set beside its plain-torch member -----------------------------------------------

TRITON_KERNEL = """\
    import triton
    import triton.language as tl


    @triton.jit
    def quantize_kernel(x_ptr, y_ptr, n, BLOCK: tl.constexpr):
        offs = tl.program_id(0) * BLOCK + tl.arange(0, BLOCK)
        tl.store(y_ptr + offs, tl.load(x_ptr + offs, mask=offs < n), mask=offs < n)
"""
TORCH_BACKEND = """\
    import torch


    def quantize(x):
        return x.round()
"""


def test_triton_folder_beside_a_torch_folder_is_a_member(tmp_path):
    found = dedented_tree(tmp_path, {"quant/quantize/triton/kernel.py": TRITON_KERNEL,
                             "quant/quantize/pytorch/backend.py": TORCH_BACKEND})
    codes = severity_at(found, "quant/quantize/triton/kernel.py", TRITON_KERNEL, "@triton.jit")
    assert codes and set(codes.values()) == {"info"}


def test_triton_folder_alone_keeps_its_warning(tmp_path):
    found = dedented_tree(tmp_path, {"quant/quantize/triton/kernel.py": TRITON_KERNEL,
                             "quant/quantize/utils/backend.py": TORCH_BACKEND})
    assert "warning" in severity_at(found, "quant/quantize/triton/kernel.py", TRITON_KERNEL, "@triton.jit").values()


# -- cache housekeeping inside a try around a request's whole work --------------------------------------------------

HANDLER = """\
    import gc
    import logging

    import torch

    logger = logging.getLogger(__name__)


    def handle(pipeline, req, profile):
        try:
            if profile:
                gc.collect()
                torch.cuda.empty_cache()
                torch.cuda.reset_peak_memory_stats()
            pipeline.run(req)
            return {"status": "ok"}
        except Exception as e:
            logger.exception("request failed")
            return {"status": "error", "message": str(e)}


    def unload():
        try:
            gc.collect()
            torch.cuda.empty_cache()
        except Exception:
            print("Unable to clear cache")
"""


def test_housekeeping_in_a_try_around_a_request_keeps_its_error(tmp_path):
    found = dedented_tree(tmp_path, {"engine/vipe_engine.py": HANDLER})
    lines = sorted(line for (rel, line), codes in found.items() if "NPU002" in codes)
    first = first_line_of(HANDLER, "torch.cuda.empty_cache()")
    assert found[("engine/vipe_engine.py", first)] == {"NPU002": "error"}
    # control: a try that only frees the cache
    assert found[("engine/vipe_engine.py", lines[-1])] == {"NPU002": "warning"} and lines[-1] > first + 5


# -- a host sync in a log line every N iterations, N read by its key ----------------------------------------------

TRAINER = """\
    import logging

    import torch


    class Trainer:
        def train(self, loader):
            for batch in loader:
                loss = self.step(batch)
                if self.iteration % self.train_args['log_freq'] == 0:
                    logging.info(f"loss: {loss.item():.4f}")
                if self.iteration % 2 == 0:
                    logging.info(f"loss: {loss.item():.4f}")
"""


def test_item_logged_every_n_iterations_by_a_keyed_setting(tmp_path):
    found = dedented_tree(tmp_path, {"core/trainer.py": TRAINER})
    lines = sorted(line for (rel, line), codes in found.items() if "NPU703" in codes)
    # control: a parity test is no logging interval
    assert lines == [first_line_of(TRAINER, "% 2 == 0") + 1]
