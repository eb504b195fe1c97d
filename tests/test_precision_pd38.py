"""Precision fixes of pd38 (session 27, issue 11; heldout31 TUNED). Code written afresh in the shape of heldout31's
false rows: a Stable Diffusion app's anti-OOM VAE wrapper (`"CUDA out of memory" in str(err)`), a device handler
with a capability table (`caps = get_device_capabilities()` / `if caps["cuda"]:`), a test conftest that re-seeds
CUDA after `torch.manual_seed`, a weather-model rollout over a DataLoader (`batch["datetime"].item()`), a
trainer importing `autocast` beside its use, a rollout
script that pops `--backend` and never uses it, a dataset module importing a distributed helper module for a gloo
group, a trainer logging its loss components every N steps, and unit tests marked with `@unittest.skipIf(*gpu_unavailable)`
(a no-CUDA tuple of another module). Each class has a control that keeps its finding."""
from __future__ import annotations

import pytest

from auditor.runner import run_static
from auditor.static.engine import StaticEngine
from tests.static_snippets import findings_by_line, line_of, write_tree


@pytest.fixture(scope="module")
def engine():
    from auditor.rules import load_rules
    return StaticEngine(load_rules())


def _at(engine, src, needle, rel="pkg/mod.py"):
    """(code, severity) of the findings on the line of `src` holding `needle`."""
    return {(f.code, f.severity) for f in findings_by_line(engine, src, rel).get(line_of(src, needle), [])}


ANTI_OOM = """\
    import gc

    import torch

    try:
        import torch_musa
        MTGPU_DETECTION = True
    except ImportError:
        MTGPU_DETECTION = False


    class AntiOOMAutoencoder:
        def __init__(self, vae):
            self.vae = vae

        def decode(self, z, return_dict=True):
            try:
                return self.vae.decode(z=z, return_dict=return_dict)
            except Exception as err:
                if "MUSA out of memory. " in str(err) or "CUDA out of memory. " in str(err):
                    torch.musa.empty_cache() if MTGPU_DETECTION else torch.cuda.empty_cache()
                    gc.collect()
                    self.vae.enable_tiling()
                    return self.vae.decode(z=z, return_dict=return_dict)
                raise

        def encode(self, x, return_dict=True):
            try:
                return self.vae.encode(x=x, return_dict=return_dict)
            except Exception as err:
                if "out of memory" in str(err):
                    torch.musa.empty_cache() if MTGPU_DETECTION else torch.cuda.empty_cache()
                    self.vae.enable_tiling()
                    return self.vae.encode(x=x, return_dict=return_dict)
                raise
"""


def test_code_behind_a_cuda_oom_text_check_is_a_warning(engine):
    lines = [i for i, text in enumerate(ANTI_OOM.splitlines(), 1) if "torch.cuda.empty_cache()" in text]
    found = {(f.code, f.severity) for f in findings_by_line(engine, ANTI_OOM)[lines[0]]}
    assert ("NPU002", "warning") in found and ("NPU002", "error") not in found


def test_control_an_oom_check_any_device_raises_keeps_the_error(engine):
    lines = [i for i, text in enumerate(ANTI_OOM.splitlines(), 1) if "torch.cuda.empty_cache()" in text]
    assert ("NPU002", "error") in {(f.code, f.severity) for f in findings_by_line(engine, ANTI_OOM)[lines[1]]}


DEVICE_HANDLER = """\
    from typing import Dict

    import torch


    def get_device_capabilities() -> Dict[str, bool]:
        \"\"\"Availability flags for the device types.\"\"\"
        return {
            "cuda": torch.cuda.is_available(),
            "mps": torch.backends.mps.is_available(),
        }


    def detect_device() -> str:
        capabilities = get_device_capabilities()
        if capabilities["cuda"]:
            return "cuda"
        elif capabilities["mps"]:
            return "mps"
        return "cpu"


    def from_config(cfg) -> str:
        flags = cfg.device_flags()
        if flags["cuda"]:
            return "cuda"
        return "cpu"
"""


def test_code_behind_a_capability_table_entry_is_a_warning(engine):
    line = line_of(DEVICE_HANDLER, 'if capabilities["cuda"]:') + 1
    found = {(f.code, f.severity) for f in findings_by_line(engine, DEVICE_HANDLER)[line]}
    assert found == {("NPU003", "warning")}


def test_the_table_key_is_no_device_string_but_the_probe_keeps_its_error(engine):
    assert not any(code == "NPU003" for code, _ in _at(engine, DEVICE_HANDLER, 'if capabilities["cuda"]:'))
    assert ("NPU002", "error") in _at(engine, DEVICE_HANDLER, '"cuda": torch.cuda.is_available(),')


def test_control_a_table_the_code_does_not_build_from_probes_keeps_its_error(engine):
    line = line_of(DEVICE_HANDLER, 'if flags["cuda"]:') + 1
    assert ("NPU003", "error") in {(f.code, f.severity) for f in findings_by_line(engine, DEVICE_HANDLER)[line]}


CONFTEST = """\
    import random

    import numpy as np
    import pytest
    import torch


    def reset_seed(seed: int = 42) -> None:
        \"\"\"Reset every generator.\"\"\"
        torch.manual_seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)
        np.random.seed(seed)
        random.seed(seed)


    def seed_workers(seed: int) -> None:
        np.random.seed(seed)
        if torch.cuda.is_available():
            torch.cuda.manual_seed_all(seed)


    @pytest.fixture()
    def _reset_seed() -> None:
        reset_seed()
"""


def test_a_cuda_reseed_after_torch_manual_seed_is_info(engine):
    lines = [i for i, text in enumerate(CONFTEST.splitlines(), 1) if "if torch.cuda.is_available():" in text]
    found = findings_by_line(engine, CONFTEST, "tests/conftest.py")
    assert {(f.code, f.severity) for f in found[lines[0]]} == {("NPU002", "info")}
    assert ("NPU002", "error") in {(f.code, f.severity) for f in found[lines[1]]}    # control: nothing seeds the NPU


ROLLOUT = """\
    import torch
    from torch.utils.data import DataLoader


    def predict(dataset, model, device, conf):
        data_loader = torch.utils.data.DataLoader(dataset, batch_size=1, shuffle=False, pin_memory=True, num_workers=0)
        results = []
        with torch.no_grad():
            for k, batch in enumerate(data_loader):
                date_time = batch["datetime"].item()
                x = batch["x"].to(device)
                y_pred = model(x)
                results.append((date_time, y_pred.mean().item()))
        return results


    def train(dataset, model, device):
        loader = DataLoader(dataset, batch_size=4)
        for batch in loader:
            for key in batch:
                batch[key] = batch[key].to(device)
            print(batch["label"].item())


    def evaluate(dataset, model, collate):
        loader = DataLoader(dataset, batch_size=4, collate_fn=collate)
        for batch in loader:
            print(batch["label"].item())
"""


def test_an_entry_of_a_dataloader_batch_is_a_host_value(engine):
    assert not any(code == "NPU703" for code, _ in _at(engine, ROLLOUT, 'date_time = batch["datetime"].item()'))


def test_control_device_values_and_moved_or_collated_batches_keep_the_hint(engine):
    assert ("NPU703", "info") in _at(engine, ROLLOUT, "results.append((date_time, y_pred.mean().item()))")
    lines = [i for i, text in enumerate(ROLLOUT.splitlines(), 1) if 'print(batch["label"].item())' in text]
    found = findings_by_line(engine, ROLLOUT)
    moved, collated = lines
    assert "NPU703" in {f.code for f in found[moved]}
    # hq39: a batch whose function shows no device origin (a collate function's output, never moved) has no hint
    assert "NPU703" not in {f.code for f in found.get(collated, [])}


ATTENTION = """\
    import torch.nn.functional as F
    from torch import nn


    class MultiScalePeakEmbedding(nn.Module):
        def forward(self, q, k, v):
            try:
                from torch.nn.attention import SDPBackend, sdpa_kernel
            except ImportError:
                return F.scaled_dot_product_attention(q, k, v)
            with sdpa_kernel(SDPBackend.FLASH_ATTENTION):
                return F.scaled_dot_product_attention(q, k, v)
"""


TRAINER_AMP = """\
    from torch.cuda.amp import autocast


    class Trainer:
        def train_step(self, model, x):
            with autocast(enabled=self.amp):
                return model(x)
"""


def test_an_amp_hint_on_the_import_beside_its_use_goes(engine):
    codes = {code for code, _ in _at(engine, TRAINER_AMP, "from torch.cuda.amp import autocast")}
    assert "NPU204" not in codes and "NPU012" in codes       # the CUDA spelling `audit fix` rewrites stays
    assert "NPU204" in {code for code, _ in _at(engine, TRAINER_AMP, "with autocast(enabled=self.amp):")}


def test_control_an_attention_switch_import_keeps_its_finding(engine):
    # NPU397's own doc: `sdpa_kernel(...)` backend contexts, "their import too" (tests/test_rules_ecosystem.py)
    assert ("NPU397", "warning") in _at(engine, ATTENTION, "from torch.nn.attention import SDPBackend, sdpa_kernel")


def test_control_an_import_that_audit_fix_rewrites_keeps_its_finding(engine):
    src = """\
    from torch.cuda.amp import GradScaler

    scaler = GradScaler()
    """
    assert "NPU012" in {code for code, _ in _at(engine, src, "from torch.cuda.amp import GradScaler")}


ROLLOUT_SCRIPT = """\
    import argparse

    import torch.distributed as dist
    import yaml


    def predict(conf, p=None):
        dist.init_process_group(backend="gloo")


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("-c", "--config", dest="model_config", type=str, required=True)
        parser.add_argument("--backend", type=str, default="nccl", choices=["nccl", "gloo", "mpi"])
        args = parser.parse_args()
        args_dict = vars(args)
        config = args_dict.pop("model_config")
        backend = args_dict.pop("backend")
        with open(config) as cf:
            conf = yaml.load(cf, Loader=yaml.FullLoader)
        predict(conf)
"""


def test_a_backend_option_nothing_reads_is_info(engine):
    found = _at(engine, ROLLOUT_SCRIPT, 'parser.add_argument("--backend"', "applications/rollout.py")
    assert found and all(severity == "info" for _, severity in found)


def test_control_an_option_read_through_the_parsed_arguments_keeps_its_error(engine):
    src = ROLLOUT_SCRIPT.replace("        backend = args_dict.pop(\"backend\")\n", "").replace(
        "predict(conf)", "predict(conf)\n        dist.init_process_group(backend=args.backend)")
    assert ("NPU101", "error") in _at(engine, src, 'parser.add_argument("--backend"', "applications/rollout.py")


DIST_UTIL = """\
    import torch.distributed as dist


    def init_process_group(rank, world_size):
        dist.init_process_group(backend="nccl", rank=rank, world_size=world_size)


    def get_dist_object_pg():
        return dist.new_group(backend="gloo")
"""

PARQUET = """\
    from tzrec.utils import dist_util


    class ParquetReader:
        def __init__(self):
            self._pg = dist_util.get_dist_object_pg()
"""

TRAINER = """\
    from tzrec.utils import dist_util


    def start(rank, world_size):
        dist_util.init_process_group(rank, world_size)
"""


def test_a_module_import_counts_only_with_a_cuda_specific_use(tmp_path):
    files = {"tzrec/__init__.py": "", "tzrec/utils/__init__.py": "", "tzrec/utils/dist_util.py": DIST_UTIL,
             "tzrec/datasets/__init__.py": "", "tzrec/datasets/parquet.py": PARQUET, "tzrec/main.py": TRAINER}
    run = run_static([write_tree(tmp_path, files)], jobs=1)
    codes = {(r.path, f.line, f.code) for r in run.results for f in r.findings}
    assert not any(path == "tzrec/datasets/parquet.py" for path, _, _ in codes)
    assert ("tzrec/main.py", 1, "NPU135") in codes        # control: the trainer uses the NCCL helper


TRAINER_LOG = """\
    class Trainer:
        def train_epoch(self, loader):
            for batch in loader:
                loss, loss_components = self.step(batch)
                if (self.global_step + 1) % int(self.config.get("tensorboard_logging_steps", 500)) == 0:
                    self.sw.add_scalar("train/loss_raw", loss.item(), self.global_step + 1)
                    for k, v in loss_components.items():
                        if k == "loss":
                            continue
                        self.sw.add_scalar(f"train/{k}", v.item(), self.global_step + 1)
                    for i, p in enumerate(self.model.parameters()):
                        self.sw.add_scalar(f"norm/{i}", p.norm().item(), self.global_step + 1)
                self.global_step += 1
"""


def test_loss_components_logged_every_n_steps_are_throttled(engine):
    assert not _at(engine, TRAINER_LOG, 'self.sw.add_scalar("train/loss_raw", loss.item()')
    assert not _at(engine, TRAINER_LOG, 'self.sw.add_scalar(f"train/{k}", v.item()')


def test_control_a_loop_over_every_parameter_in_the_branch_keeps_the_hint(engine):
    assert ("NPU703", "info") in _at(engine, TRAINER_LOG, 'p.norm().item()')


TEST_UTIL = """\
    from typing import Tuple

    import torch

    nv_gpu_unavailable: Tuple[bool, str] = (
        not torch.cuda.is_available() or torch.cuda.device_count() == 0,
        "CUDA is not available or no GPUs detected",
    )
    amd_gpu_unavailable: Tuple[bool, str] = (
        not torch.version.hip,
        "AMD HIP not available or no GPUs detected",
    )
    gpu_unavailable: Tuple[bool, str] = (
        nv_gpu_unavailable[0] and amd_gpu_unavailable[0],
        "CUDA/HIP is not available or no GPUs detected",
    )
"""

ENCODER_TEST = """\
    import unittest

    import torch
    from parameterized import parameterized

    from tzrec.utils.test_util import gpu_unavailable


    class ContentEncoderTest(unittest.TestCase):
        @parameterized.expand([["normal"], ["fx"]])
        @unittest.skipIf(*gpu_unavailable)
        def test_slice_content_encoder(self, graph_type) -> None:
            device = torch.device("cuda")
            x = torch.randn(4, 8, device=device)
            self.assertEqual(x.sum().shape, ())

        @parameterized.expand([["normal"], ["aot"]])
        def test_graph(self, graph_type) -> None:
            if graph_type == "aot" and gpu_unavailable[0]:
                return
            device = torch.device("cuda") if graph_type == "aot" else torch.device("cpu")
            x = torch.randn(4, 8, device=device)
            self.assertEqual(x.sum().shape, ())

        def test_always(self) -> None:
            device = torch.device("cuda")
            x = torch.randn(4, 8, device=device)
            self.assertEqual(x.sum().shape, ())
"""


def test_tests_behind_a_no_cuda_tuple_of_another_module_are_warnings(tmp_path):
    files = {"tzrec/__init__.py": "", "tzrec/utils/__init__.py": "", "tzrec/utils/test_util.py": TEST_UTIL,
             "tzrec/modules/__init__.py": "", "tzrec/modules/encoder_test.py": ENCODER_TEST}
    run = run_static([write_tree(tmp_path, files)], jobs=1)
    found = {(f.line, f.code): f.severity for r in run.results if r.path == "tzrec/modules/encoder_test.py"
             for f in r.findings}
    lines = [i for i, text in enumerate(ENCODER_TEST.splitlines(), 1) if 'torch.device("cuda")' in text]
    assert found[(lines[0], "NPU003")] == "warning"      # under `@unittest.skipIf(*gpu_unavailable)`
    assert found[(lines[1], "NPU003")] == "warning"      # after `if graph_type == "aot" and gpu_unavailable[0]: return`
    assert found[(lines[2], "NPU003")] == "error"        # control: an unmarked test


GRID = """\
    import torch
    from torch.utils.cpp_extension import load

    render_utils_cuda = load(name="render_utils_cuda", sources=["cuda/render_utils.cpp", "cuda/render_utils_kernel.cu"])


    def create_grid(kind, **kwargs):
        return torch.zeros(kwargs["world_size"])
"""

MODEL = """\
    from . import grid


    def build(world_size):
        return grid.create_grid("dense", world_size=world_size)
"""


def test_control_a_module_that_builds_a_kernel_at_import_keeps_its_import_line(tmp_path):
    files = {"lib/__init__.py": "", "lib/grid.py": GRID, "lib/model.py": MODEL}
    run = run_static([write_tree(tmp_path, files)], jobs=1)
    assert ("lib/model.py", 1, "NPU320") in {(r.path, f.line, f.code) for r in run.results for f in r.findings}


def test_control_an_import_whose_uses_are_lower_keeps_its_finding(engine):
    src = """\
    from torch.nn.parallel import DataParallel, DistributedDataParallel


    def unwrap(model):
        return model.module if isinstance(model, (DataParallel, DistributedDataParallel)) else model
    """
    assert ("NPU112", "error") in _at(engine, src, "from torch.nn.parallel import DataParallel")
