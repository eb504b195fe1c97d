"""Precision fixes of tq52c (session 52, tuned on heldout67's labels): code written for Ascend that imports no torch_npu.

- a module that imports Ascend's kernel / runtime Python APIs at its top (TIK or TBE kernels: `from tbe import tik`,
  `from te import tik`; pyACL: `import acl`) runs only on the NPU: its "float16" buffers are no fp16 training to
  loss-scale (auditor/static/npu_native.py `written_for_npu`);
- a module that builds operator models for Ascend's ATC compiler names CANN's target-chip parameter `soc_version`
  beside an Ascend chip name or an ATC option: its "float16" are types of operator descriptors.

Code written afresh in the shape of CANN's own samples (the TIK "For Beginners" Add kernel, the single-operator
description file fed to `atc --singleop`), not copied; each test has its control.
"""
from __future__ import annotations

from pathlib import Path

from tests.test_tq38 import _in, _tree

TIK_KERNEL = """\
{imports}


def vector_add(shape, kernel_name="vector_add"):
    tik_instance = tik.Tik()
    data_a = tik_instance.Tensor("float16", shape, name="data_a", scope=tik.scope_gm)
    data_b = tik_instance.Tensor("float16", shape, name="data_b", scope=tik.scope_gm)
    data_c = tik_instance.Tensor("float16", shape, name="data_c", scope=tik.scope_gm)
    a_ub = tik_instance.Tensor("float16", shape, name="a_ub", scope=tik.scope_ubuf)
    b_ub = tik_instance.Tensor("float16", shape, name="b_ub", scope=tik.scope_ubuf)
    tik_instance.data_move(a_ub, data_a, 0, 1, shape[0] // 16, 0, 0)
    tik_instance.data_move(b_ub, data_b, 0, 1, shape[0] // 16, 0, 0)
    tik_instance.vec_add(128, a_ub, a_ub, b_ub, 1, 8, 8, 8)
    tik_instance.data_move(data_c, a_ub, 0, 1, shape[0] // 16, 0, 0)
    tik_instance.BuildCCE(kernel_name=kernel_name, inputs=[data_a, data_b], outputs=[data_c])
    return tik_instance
"""

TORCH_HALF = """\
{imports}
import torch


def half_buffers(shape):
    a = torch.zeros(shape, dtype=torch.float16, device="cuda")
    return a
"""


def _fp16_lines(found: dict, path: str) -> list[int]:
    return sorted(line for line, codes in _in(found, path).items() if "NPU202" in codes)


def test_tik_and_tbe_kernels_hold_no_fp16_training(tmp_path: Path) -> None:
    found = _tree(tmp_path, {
        "ops/impl/add_tbe.py": TIK_KERNEL.format(imports="from tbe import tik\nimport tbe.common.platform as tbe_platform"),
        "ops/impl/add_te.py": TIK_KERNEL.format(imports="from te import tik"),
        "runtime/run_om.py": TORCH_HALF.format(imports="import acl"),
    })
    assert _fp16_lines(found, "ops/impl/add_tbe.py") == []
    assert _fp16_lines(found, "ops/impl/add_te.py") == []
    assert _fp16_lines(found, "runtime/run_om.py") == []


def test_torch_fp16_beside_transformer_engine_or_a_guarded_tik_import_stays(tmp_path: Path) -> None:
    found = _tree(tmp_path, {
        # Transformer Engine imported as `te` is no Ascend API
        "model/layers.py": TORCH_HALF.format(imports="import transformer_engine.pytorch as te"),
        # a TIK import under try: the file runs without it
        "model/maybe_tik.py": TORCH_HALF.format(imports="try:\n    from tbe import tik\nexcept ImportError:\n"
                                                         "    tik = None"),
    })
    assert _fp16_lines(found, "model/layers.py") == [6]
    assert _fp16_lines(found, "model/maybe_tik.py") == [9]


OP_MODEL_BUILDER = """\
import json
import os
import subprocess


def op_desc(op_name, dim, dtype="float16"):
    return [{{
        "op": op_name,
        "input_desc": [{{"format": "ND", "shape": [-1, dim], "type": "float16"}},
                       {{"format": "ND", "shape": [dim], "type": dtype}}],
        "output_desc": [{{"format": "ND", "shape": [-1], "type": "float16"}}],
    }}]


def build(op_name, dim, {target}):
    path = os.path.join("config", op_name + ".json")
    with open(path, "w") as f:
        json.dump(op_desc(op_name, dim), f)
    {build}
"""

ATC_BUILD = ('subprocess.run(["atc", "--singleop=" + path, "--soc_version=" + soc_version, "--output=op_models"], '
             'check=True)')


def test_atc_operator_model_builder_types_are_no_torch_dtypes(tmp_path: Path) -> None:
    found = _tree(tmp_path, {
        "tools/generate_model.py": OP_MODEL_BUILDER.format(target='soc_version="Ascend310P3"', build=ATC_BUILD),
    })
    assert _fp16_lines(found, "tools/generate_model.py") == []


def test_json_writer_without_an_ascend_target_keeps_its_fp16(tmp_path: Path) -> None:
    # the same descriptors written for some other consumer: no soc_version, no ATC
    found = _tree(tmp_path, {
        "tools/write_config.py": OP_MODEL_BUILDER.format(target="out_dir=None", build="return path"),
        # `soc_version` named with no Ascend chip, ATC option or NPU name beside it
        "tools/other_soc.py": OP_MODEL_BUILDER.format(target='soc_version="sm8550"', build="return path"),
    })
    assert _fp16_lines(found, "tools/write_config.py")
    assert _fp16_lines(found, "tools/other_soc.py")


LANGUAGES = """\
import subprocess

# ISO 639-3 codes of the languages the multilingual checkpoint was pretrained on
PRETRAINED_LANGUAGES = ["eng", "deu", "fra", "spa", "cmn", "nld", "por", "pol", "ncl", "ncu", "qve", "tbg",
                        "xon", "agg", "bzj", "dop"]


def profile_step(script):
    subprocess.run(["ncu", "--set", "full", "-o", "step_profile", "python", script], check=True)


REQUIRED_TOOLS = ["git", "cmake", "ncu", "make"]
"""


def test_ncu_in_a_table_of_language_codes_is_chumburung_not_nsight_compute(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"train/languages.py": LANGUAGES}), "train/languages.py")
    assert not any("NPU407" in codes for line, codes in found.items() if line in (4, 5))
    # controls: Nsight Compute run as a command, and named in a short list of tools
    assert found[9]["NPU407"] == "warning"
    assert found[12]["NPU407"] == "warning"


ENV_REPORT = """\
import os
import platform

_ENV_VARS = (
    "CUDA_HOME",
    "CUDA_PATH",
    "TORCH_CUDA_ARCH_LIST",
    "HF_HOME",
)

_BUILD_VARS = ("CUDA_HOME", "TORCH_CUDA_ARCH_LIST")


def collect_env():
    return {
        "python": platform.python_version(),
        "env": {name: os.environ.get(name) for name in _ENV_VARS},
    }


def prepare_build():
    for name in _BUILD_VARS:
        os.environ.setdefault(name, "/usr/local/cuda")
"""


def test_variable_names_only_read_into_an_environment_snapshot_are_shown(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"pkg/cli/diagnostics.py": ENV_REPORT}), "pkg/cli/diagnostics.py")
    assert not any("NPU367" in found.get(line, {}) for line in range(4, 10))
    # control: the same names iterated to set them configure the build
    assert found[11]["NPU367"] == "warning"


LAUNCH = """\
#!/bin/bash
export NCCL_IB_DISABLE=0
unset NCCL_IB_GID_INDEX
unset CUDA_VISIBLE_DEVICES
torchrun --nproc_per_node=8 train.py
"""


def test_unset_in_a_script_configures_nothing_but_device_visibility(tmp_path: Path) -> None:
    found = _in(_tree(tmp_path, {"scripts/train.sh": LAUNCH, "train.py": "import torch\n"}), "scripts/train.sh")
    assert "NPU121" not in found.get(3, {})
    # controls: the variable exported configures NCCL; CUDA_VISIBLE_DEVICES removed exposes every device
    assert found[2]["NPU121"] == "warning"
    assert "NPU004" in found[4]
