"""t14s: the net for CUDA-specific literals and API names (auditor/static/literals.py), on code shaped like the code
bases whose lines no rule named (an ONNX Runtime provider picker, a ctypes CUDA runtime handle, a config switch
compared with a package name, an nvcc build) and on the shapes it must leave alone (messages, docstrings, argparse
help, hub ids, URLs, the project's own names, an NPU branch beside the CUDA one)."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine
from auditor.static.literals import OWN_CODES, catalogue_packages, literal_category

RULES = load_rules()
ENGINE = StaticEngine(RULES)
PACKAGES = catalogue_packages(RULES)


def _net(code: str, rel: str = "pkg/mod.py") -> dict[int, tuple[str, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(code).encode(), rel)
    assert result.error is None
    out: dict[int, tuple[str, str]] = {}
    for f in result.findings:
        if f.code in OWN_CODES:
            assert f.line not in out or out[f.line][0] != f.category, f"two net findings of a category on {f.line}"
            assert f.severity == "info" and f.fix == "none"
            out[f.line] = (f.category, f.symbol)
    return out


PROVIDER_PAGE = '''\
from qtpy import QtWidgets


class ModelSettingsPage(QtWidgets.QWidget):
    """Lets the user pick the ONNX Runtime provider (CUDA when present)."""

    def __init__(self, parent=None):
        super().__init__(parent)
        self.provider_combo = QtWidgets.QComboBox()
        self.provider_combo.addItems(["Auto", "CPU", "CUDA"])

    def select_gpu(self):
        cuda_index = self.provider_combo.findText("CUDA")
        if cuda_index < 0:
            print("CUDA provider is not available, staying on CPU")
            return False
        self.provider_combo.setCurrentIndex(cuda_index)
        return True
'''


def test_provider_choices_and_lookup_are_device_lines():
    got = _net(PROVIDER_PAGE, "insightface/gui/pages/model_settings_page.py")
    assert got[10] == ("device", "CUDA")           # addItems([... "CUDA"])
    assert got[13] == ("device", "CUDA")           # findText("CUDA")
    assert 5 not in got and 15 not in got          # the docstring and the print message
    assert 14 not in got and 18 not in got         # `cuda_index`: the project's own name


BUILD_AND_BACKENDS = '''\
import subprocess


def cuda_version(nvcc="nvcc"):
    nvcc_text = subprocess.check_output([nvcc, "--version"]).decode()
    version = nvcc_text.split("Cuda compilation tools, release ")[-1].split(",")[0]
    return version


def kernel_language(cfg):
    if cfg["lang"] in ("triton", "torch"):
        return cfg["lang"]
    raise ValueError("lang must be triton or torch, got %s" % cfg["lang"])


def build_attention(attention_backend, dim):
    if attention_backend == "transformer_engine":
        return make_te_attention(dim)
    return make_torch_attention(dim)


AMP_BACKENDS = ["NATIVE", "APEX"]
'''


def test_parsed_prose_compared_names_and_constants():
    got = _net(BUILD_AND_BACKENDS, "deepxde/backend/utils.py")
    assert got[6] == ("device", "Cuda")                        # prose the code parses
    assert got[11] == ("kernel", "triton")
    assert 13 not in got                                       # the exception message
    assert got[17] == ("third_party", "transformer_engine")    # a package name compared
    assert got[22] == ("apex", "APEX")


def test_api_names_on_any_receiver_and_not_the_projects_own():
    code = '''\
    import ctypes


    def ring_size(lib, comm):
        count = ctypes.c_int()
        lib.ncclCommCount(comm, ctypes.byref(count))
        return count.value


    def cudaMallocManaged(size):
        return bytearray(size)


    def alloc(n):
        return cudaMallocManaged(n)
    '''
    got = _net(code)
    assert got[6] == ("distributed", "ncclCommCount")
    assert 15 not in got        # the file defines cudaMallocManaged itself


def test_messages_docstrings_urls_hub_ids_and_own_names_are_left():
    code = '''\
    import argparse
    import logging
    import warnings

    logger = logging.getLogger(__name__)


    def main():
        """Train on CUDA (NCCL for collectives) or on the CPU."""
        p = argparse.ArgumentParser(description="Train on CUDA or CPU")
        p.add_argument("--use_cuda", action="store_true", help="use CUDA if available")
        args = p.parse_args()
        logger.info("NCCL is used for collectives")
        warnings.warn("triton not installed; falling back")
        model_id = "nvidia/Llama-3.1-Nemotron-70B-Instruct-HF"
        url = "https://github.com/NVIDIA/apex"
        cfg = {"use_cuda": args.use_cuda, "cuda_graphs": False, "runner": "CudaGraphRunner"}
        assert args.ok, "xformers is required"
        return model_id, url, cfg
    '''
    assert _net(code) == {}


def test_npu_branch_beside_the_cuda_literal_is_context_not_a_port():
    code = '''\
    import os


    def visible_devices_var(device_type):
        if device_type == "npu":
            return "ASCEND_RT_VISIBLE_DEVICES"
        return "CUDA_VISIBLE_DEVICES_FOR_WORKERS"
    '''
    result = ENGINE.analyze_bytes(textwrap.dedent(code).encode(), "pkg/devices.py")
    for f in result.findings:
        if f.code in OWN_CODES:
            assert f.severity == "info"


def test_literal_words():
    assert literal_category("TF_CUDNN_DETERMINISTIC", PACKAGES, False) == ("device", "TF_CUDNN_DETERMINISTIC")
    assert literal_category("-DCUDA_OP", PACKAGES, False) == ("kernel", "-DCUDA_OP")
    assert literal_category("libcudart.so", PACKAGES, False) == ("device", "libcudart")
    assert literal_category("triton.language", PACKAGES, False) == ("kernel", "triton")
    assert literal_category("nvidia-smi", PACKAGES, False) == ("third_party", "nvidia-smi")
    assert literal_category("cuml", PACKAGES, False) == ("third_party", "cuml")
    assert literal_category("flash-attn", PACKAGES, False) == ("attention", "flash-attn")
    assert literal_category("csrc/scan_kernel.cu", PACKAGES, False) == ("kernel", "csrc/scan_kernel.cu")
    for value in ("use_cuda", "cuda_graphs", "CudaGraphRunner", "nvidia/Nemotron-4-340B", "warp", "rotary_emb",
                  "https://developer.nvidia.com/cuda-downloads", "requires CUDA", "accumulate", "current"):
        assert literal_category(value, PACKAGES, False) is None, value
    assert literal_category("Cuda compilation tools, release ", PACKAGES, True) == ("device", "Cuda")


def test_tables_enums_paths_patterns_and_other_backends_are_left():
    code = '''\
    import enum
    import os
    import re


    class AttnType(enum.Enum):
        FA = "fa"
        FLASHINFER = "flashinfer"


    ATTN_TYPES = {"fa": AttnType.FA, "flashinfer": AttnType.FLASHINFER}


    def kernel_file(mlu_ops_path):
        return os.path.join(mlu_ops_path, "triton/fla/chunk_o.py")


    def rewrite(text):
        return re.sub(r'"(?:\\\\.\\\\./)+(?:cuda|hip)/utils\\\\.h"', '"utils.h"', text)


    def run_env():
        return {"CUDA_DEVICE_MAX_CONNECTIONS": "1"}
    '''
    got = _net(code, "pkg/kernels/config.py")
    assert set(got) <= {23}, got        # only the environment name in the dict
    mlu = '''\
    import os


    def kernel_name(kind):
        if kind == "triton":
            return "tmo_" + kind
        return kind
    '''
    assert _net(mlu, "xllm/core/kernels/mlu/tmo_kernel/kernel_config.py") == {}


def test_the_walker_collects_the_defined_names_of_every_scope_an_enum_included():
    """hs14: the net's own names come from its one walk (no second ast.walk); an Enum's body, which the walker skips,
    still counts: `def cudaMalloc` in an Enum is the project's own, so `lib.cudaMalloc(n)` is no API finding."""
    import ast

    from auditor.static.literals import _defined_names, _Walker

    src = (
        "import enum\n\n\nclass Backend(enum.Enum):\n    CUDA = 'cuda'\n\n    def cudaMalloc(self, n):\n"
        "        return n\n\n\nasync def load(lib):\n    class Local:\n        pass\n\n    def cuInit():\n"
        "        return lib.cudaMalloc(0)\n    return lib.cudaDeviceReset(cuInit())\n"
    )
    tree = ast.parse(src)
    walker = _Walker({})
    walker.visit(tree)
    assert walker.defined == _defined_names(tree) == {"Backend", "cudaMalloc", "load", "Local", "cuInit"}
    assert {h[3] for h in walker.hits} == {"cudaMalloc", "cudaDeviceReset", "cuInit"}    # own ones dropped later
