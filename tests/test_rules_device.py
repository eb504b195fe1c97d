"""Device rules (NPU0xx) on realistic code: aliases, constants flowing into devices, env dicts, comments and
messages that mention CUDA and must stay silent, and the generated torch.cuda -> torch.npu table."""
from __future__ import annotations

import textwrap

import pytest
import torch

from auditor.rules import load_rules, rules_by_code
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def findings(src: str, engine: StaticEngine = ENGINE):
    result = engine.analyze_bytes(textwrap.dedent(src).encode(), "train.py")
    assert result.error is None, result.error
    return result.findings


def by_line(src: str) -> dict[int, set[str]]:
    out: dict[int, set[str]] = {}
    for f in findings(src):
        out.setdefault(f.line, set()).add(f.code)
    return out


TRAINER = '''\
import os
import torch
import torch.distributed as dist
from torch import cuda
from torch.cuda import amp as cuda_amp

DEVICE = "cuda"
RANK_DEVICE = f"cuda:{os.environ.get('LOCAL_RANK', 0)}"


def setup(local_rank: int, device: str = "cuda"):
    """Pick the CUDA device for this rank; falls back to CPU when cuda is missing."""
    # torch.cuda.set_device must come before init_process_group
    if cuda.is_available():
        torch.cuda.set_device(local_rank)
    os.environ["CUDA_VISIBLE_DEVICES"] = str(local_rank)
    print(f"rank {local_rank} uses cuda:{local_rank}")
    return torch.device(DEVICE, local_rank)


class Trainer:
    def __init__(self, model, device):
        self.model = model.cuda()
        self.scaler = cuda_amp.GradScaler()
        self.stream = torch.cuda.Stream()
        if next(model.parameters()).is_cuda:
            self.graph = torch.cuda.CUDAGraph()

    def step(self, batch):
        x = batch.to(RANK_DEVICE, non_blocking=True)
        if x.device.type == "cuda":
            torch.cuda.synchronize()
        torch.backends.cudnn.benchmark = True
        return x
'''


def test_trainer_lines_and_categories():
    lines = by_line(TRAINER)
    expect = {
        4: "NPU002",    # from torch import cuda
        5: "NPU012",    # from torch.cuda import amp
        7: "NPU003",    # DEVICE = "cuda"
        8: "NPU003",    # f"cuda:{...}"
        11: "NPU003",   # default device parameter
        14: "NPU002",   # cuda.is_available() through the from-import
        15: "NPU002",
        16: "NPU004",
        23: "NPU001",
        24: "NPU012",   # cuda_amp.GradScaler()
        25: "NPU014",
        26: "NPU005",
        27: "NPU013",
        31: "NPU003",
        32: "NPU002",
        33: "NPU006",
    }
    for line, code in expect.items():
        assert code in lines.get(line, set()), f"line {line}: expected {code}, got {lines.get(line)}"
    # docstring, comment and print lines stay silent
    # uses of a device constant (`torch.device(DEVICE, ...)`, `.to(RANK_DEVICE)`) are not findings of their own:
    # the constants are (lead decision 4, session 21)
    assert 18 not in lines and 30 not in lines
    for quiet in (12, 13, 17):
        assert quiet not in lines, f"line {quiet} flagged: {lines[quiet]}"
    assert all(f.category == "device" for f in findings(TRAINER) if f.code.startswith("NPU0"))
    # torch.cuda.amp.GradScaler is a device finding (the rename) and a precision one (loss scaling)
    assert {"NPU012", "NPU205"} <= lines[24]


def test_substitutions_name_the_npu_twin():
    fs = {f.symbol: f for f in findings(TRAINER) if f.category == "device"}
    assert fs["torch.cuda.set_device"].substitution.startswith("`torch.npu.set_device`")
    assert fs["torch.cuda.Stream"].substitution.startswith("`torch.npu.Stream`")
    assert "torch.npu.NPUGraph" in fs["torch.cuda.CUDAGraph"].substitution
    assert fs["torch.cuda.amp.GradScaler"].substitution.startswith("`torch.npu.amp.GradScaler`")
    assert fs["CUDA_VISIBLE_DEVICES"].substitution == "ASCEND_RT_VISIBLE_DEVICES"
    assert fs["CUDA_VISIBLE_DEVICES"].fix == "safe"


def test_names_without_twin_are_errors_with_a_way_out():
    fs = findings("""
        import torch
        archs = torch.cuda.get_arch_list()
        torch.cuda.jiterator._create_jit_fn("template <typename T> T f(T x) { return x; }")
    """)
    arch = next(f for f in fs if f.symbol == "torch.cuda.get_arch_list")
    assert arch.severity == "error" and arch.fix == "none"
    assert "no torch.npu twin" in arch.substitution
    jit = next(f for f in fs if f.symbol.startswith("torch.cuda.jiterator"))
    assert jit.severity == "error"


def test_every_public_torch_cuda_name_is_mapped_or_marked():
    """The generated table covers torch.cuda.__all__ of the installed torch (torch.cuda.nccl belongs to NPU103)."""
    rules = rules_by_code()
    covered = set()
    for code in ("NPU002", "NPU012", "NPU013", "NPU014"):
        covered |= set(rules[code].symbols)
    missing = [n for n in torch.cuda.__all__ if n != "nccl" and f"torch.cuda.{n}" not in covered]
    assert not missing, f"regenerate rules/device_cuda_api.yaml (python rules/gen/cuda_api.py): {missing}"
    for code in ("NPU002", "NPU012", "NPU013", "NPU014"):
        for name, detail in rules[code].symbols.items():
            assert detail.substitution, name
            assert detail.replace or detail.fix == "none", name


def test_env_vars_in_subprocess_env_and_command_strings():
    src = """
        import os, subprocess
        env = dict(os.environ, CUDA_VISIBLE_DEVICES="0,1", PYTORCH_CUDA_ALLOC_CONF="expandable_segments:True")
        subprocess.run(["python", "train.py"], env=env, check=True)
        launch = f"CUDA_LAUNCH_BLOCKING=1 torchrun --nproc-per-node {n} train.py"
        os.environ.setdefault("CUBLAS_WORKSPACE_CONFIG", ":4096:8")
        os.environ["CUDA_DEVICE_MAX_CONNECTIONS"] = "1"
        logger.info("export CUDA_VISIBLE_DEVICES=0 to pick a GPU")
    """
    fs = findings(src)
    got = {(f.line, f.symbol) for f in fs if f.code == "NPU004"}
    assert {(3, "CUDA_VISIBLE_DEVICES"), (3, "PYTORCH_CUDA_ALLOC_CONF"), (5, "CUDA_LAUNCH_BLOCKING"),
            (6, "CUBLAS_WORKSPACE_CONFIG"), (7, "CUDA_DEVICE_MAX_CONNECTIONS")} <= got
    assert not any(f.line == 8 for f in fs)
    subs = {f.symbol: f.substitution for f in fs}
    assert subs["PYTORCH_CUDA_ALLOC_CONF"] == "PYTORCH_NPU_ALLOC_CONF"
    assert subs["CUDA_LAUNCH_BLOCKING"] == "ASCEND_LAUNCH_BLOCKING"
    assert "no Ascend counterpart" in subs["CUBLAS_WORKSPACE_CONFIG"]


@pytest.mark.parametrize("src", [
    'from torch.distributed.device_mesh import init_device_mesh\nmesh = init_device_mesh("cuda", (8,))\n',
    'import torch\ng = torch.Generator(device="cuda")\n',
    'import torch\nsd = torch.load(p, map_location="cuda:0")\n',
    'import torch\nfrom torch.distributed.fsdp import FullyShardedDataParallel as FSDP\nm = FSDP(m, device_id=torch.cuda.current_device())\n',
    'import torch\nwith torch.autocast(device_type="cuda"):\n    pass\n',
    'import torch\ndev = torch.device("cuda:%d" % rank)\n',
    'import torch\ndev = torch.device("cuda:{}".format(rank))\n',
])
def test_device_positions(src):
    assert any(f.category == "device" for f in findings(src)), src


@pytest.mark.parametrize("src", [
    'def f():\n    """Runs on cuda:0 by default."""\n',
    'import warnings\nwarnings.warn("cuda is not available, falling back to cpu")\n',
    'raise ValueError(f"expected a cuda tensor, got {x.device}")\n',
    '# x = x.cuda()\ny = 1\n',
    'import logging\nlog = logging.getLogger(__name__)\nlog.debug("torch.cuda.synchronize() took %s", t)\n',
    'assert ok, "CUDA_VISIBLE_DEVICES must be set"\n',
])
def test_messages_comments_docstrings_are_silent(src):
    assert [f for f in findings(src) if f.category == "device"] == []


def test_module_alias_and_attribute_chains():
    src = """
        import torch
        dm = torch.cuda
        props = dm.get_device_properties(0).total_memory
        from torch.backends import cudnn as cd
        cd.deterministic = True
    """
    fs = findings(src)
    syms = {f.symbol for f in fs}
    assert "torch.cuda.get_device_properties" in syms
    det = next(f for f in fs if f.symbol == "torch.backends.cudnn.deterministic")
    assert "use_deterministic_algorithms" in det.substitution


# the generated rule files' freshness (offline, from rules/gen/inputs/): tests/test_rules_generators.py


def test_comparisons_with_other_literals_are_not_device_strings():
    """deepspeed's accelerator probe: `name == "sdaa"` is not a CUDA device use just because name may be "cuda"."""
    src = """
        import os
        accelerator_name = os.environ.get("DS_ACCELERATOR")
        if accelerator_name is None:
            accelerator_name = "cuda"
        if accelerator_name == "xpu":
            pass
        elif accelerator_name == "cuda":
            pass
        DEV = "cuda"
        def same(dev):
            return dev == DEV
    """
    lines = sorted(f.line for f in findings(src) if f.code == "NPU003")
    assert lines == [5, 8, 10]      # `dev == DEV` (12) is a use of the choice at 10 (lead decision 4, session 21)
