"""tq39 (session 39, issue 11; TUNED on heldout42): suites Python never runs (`if False:`), CuPy / cuCIM / RAPIDS
availability flags read as CUDA gates (TotalSegmentator's `find_spec("cupy") is not None`), a fallback import in the
`except ImportError:` arm of a try that imports (rf-detr's `torch.cuda.amp` fallback), numpy's scalar types called
on the module (`np.double(...)`, `np.half(...)`) that are no tensor method, and host values unpacked from a numpy
call or a faiss search or taken item by item from a loop over a host array."""
from __future__ import annotations

import ast

from auditor.static.host_values import _chain_root, _read_off, _self_root

# one set of snippet helpers with tq38
from tests.test_tq38 import _findings, _in, _tree

# -- suites Python never runs --------------------------------------------------------------------------------------

TRT_BINDINGS = b"""import numpy as np
import pycuda.driver as cuda
import tensorrt as trt
import torch


class TRTInference:
    def get_bindings(self, engine, context):
        bindings = {}
        for name in engine:
            shape = engine.get_tensor_shape(name)
            if False:
                if engine.get_tensor_mode(name) == trt.TensorIOMode.INPUT:
                    data = np.random.randn(*shape)
                    ptr = cuda.mem_alloc(data.nbytes)
                    bindings[name] = (data, ptr)
            else:
                data = torch.empty(tuple(shape)).to(self.device)
                bindings[name] = (data, data.data_ptr())
        if 0:
            torch.cuda.synchronize()
        if False and self.debug:
            torch.cuda.synchronize()
        if True:
            pass
        else:
            torch.cuda.synchronize()
        return bindings

    def sync(self):
        torch.cuda.synchronize()
"""


def test_findings_in_a_suite_python_never_runs_are_dropped():
    found = _findings(TRT_BINDINGS)
    for line in (13, 15, 21, 23, 27):
        assert not found.get(line), (line, found.get(line))
    assert found.get(31), "the method that runs keeps its finding"


def test_a_flag_that_holds_false_is_a_setting_not_a_dead_suite():
    src = b"import torch\nDEBUG = False\nif DEBUG:\n    torch.cuda.synchronize()\nwhile not True:\n    x.cuda()\n"
    found = _findings(src)
    assert found.get(4), "a name holding False is a setting someone may turn on"
    assert not found.get(6)


# -- packages built only for CUDA, found installed, are CUDA gates --------------------------------------------------

RESAMPLING = """import importlib
import numpy as np

cupy_available = importlib.util.find_spec("cupy") is not None
cucim_available = importlib.util.find_spec("cucim") is not None


def resample_img_cucim(img, zoom=0.5, order=0):
    import cupy as cp
    from cucim.skimage.transform import resize

    img = cp.asarray(img)
    new_shape = (np.array(img.shape) * zoom).round().astype(np.int32)
    resampled_img = resize(img, output_shape=new_shape, order=order, mode="edge")
    return cp.asnumpy(resampled_img)


def resample_img(img, zoom=0.5, order=0):
    return img


def change_spacing(img, zoom=0.5, order=0, use_gpu=True):
    if cupy_available and cucim_available and use_gpu:
        return resample_img_cucim(img, zoom=zoom, order=order)
    return resample_img(img, zoom=zoom, order=order)
"""
PREDICT = """import numpy as np
from resampling import change_spacing


def predict(img):
    return change_spacing(np.asarray(img), zoom=0.5)
"""


def test_cupy_code_reached_only_behind_find_spec_flags_is_a_warning(tmp_path):
    found = _in(_tree(tmp_path / "a", {"resampling.py": RESAMPLING, "predict.py": PREDICT}), "resampling.py")
    for line in (9, 10, 12, 14, 15):
        assert found.get(line) and set(found[line].values()) == {"warning"}, (line, found.get(line))


def test_cupy_code_called_without_the_flag_keeps_its_errors(tmp_path):
    ungated = RESAMPLING.replace("if cupy_available and cucim_available and use_gpu:", "if use_gpu:")
    found = _in(_tree(tmp_path / "b", {"resampling.py": ungated, "predict.py": PREDICT}), "resampling.py")
    assert "error" in found.get(9, {}).values()


def test_a_flag_for_a_package_ascend_has_is_no_cuda_gate(tmp_path):
    # scipy installs on Ascend hosts: finding it says nothing about CUDA
    other = RESAMPLING.replace('find_spec("cupy")', 'find_spec("scipy")').replace('find_spec("cucim")',
                                                                                 'find_spec("skimage")')
    found = _in(_tree(tmp_path / "c", {"resampling.py": other, "predict.py": PREDICT}), "resampling.py")
    assert "error" in found.get(9, {}).values()


# -- a fallback import in the except arm of a try that imports --------------------------------------------------------

ENGINE_PY = """import torch

try:
    from torch.amp import GradScaler, autocast
    DEPRECATED_AMP = False
except ImportError:
    from torch.cuda.amp import GradScaler, autocast
    DEPRECATED_AMP = True
"""
MAIN_PY = """from engine import train_one_epoch


def main(model, loader, args):
    train_one_epoch(model, loader, args)
"""
TRAIN = """

def train_one_epoch(model, loader, args):
    scaler = GradScaler(enabled=args.amp)
    for x in loader:
        with autocast(enabled=args.amp):
            loss = model(x)
        scaler.scale(loss).backward()
"""


def test_fallback_import_in_the_except_arm_is_a_guarded_warning(tmp_path):
    found = _in(_tree(tmp_path / "a", {"engine.py": ENGINE_PY + TRAIN, "main.py": MAIN_PY}), "engine.py")
    assert found.get(7, {}).get("NPU012") == "warning", found.get(7)


def test_cuda_import_in_an_except_arm_of_a_try_without_imports_keeps_its_error(tmp_path):
    src = ENGINE_PY.replace("from torch.amp import GradScaler, autocast", "x = torch.zeros(1)")
    found = _in(_tree(tmp_path / "b", {"engine.py": src + TRAIN, "main.py": MAIN_PY}), "engine.py")
    assert found.get(7, {}).get("NPU012") == "error", found.get(7)


# -- numpy's scalar types are no tensor methods ---------------------------------------------------------------------

DISTANCE = b"""import numpy as np


def jaccard_similarity_coefficient_distance(v1, v2, zero_bit=1e-9):
    v1 = np.asarray(v1)
    v2 = np.asarray(v2)
    up = np.double(np.bitwise_and((v1 != v2), np.bitwise_or(v1 != 0, v2 != 0)).sum())
    down = np.double(np.bitwise_or(v1 != 0, v2 != 0).sum() + zero_bit)
    scale = np.half(up)
    return up / down * scale


def on_device(t):
    return t.double(), t.half()
"""


def test_numpy_scalar_types_called_on_the_module_are_no_dtype_hints():
    found = _findings(DISTANCE)
    for line in (7, 8, 9):
        assert not found.get(line), (line, found.get(line))
    assert {"NPU208", "NPU202"} <= set(found.get(14, {}))


# -- host values unpacked from numpy / faiss, and loops over host arrays --------------------------------------------

MINING = b"""import faiss
import torch
from text2vec import SentenceModel


def batch_search(index, query, topk=200, batch_size=64):
    all_scores, all_inxs = [], []
    for start_index in range(0, len(query), batch_size):
        batch_query = query[start_index:start_index + batch_size]
        batch_scores, batch_inxs = index.search(batch_query, k=topk)
        all_scores.extend(batch_scores.tolist())
        all_inxs.extend(batch_inxs.tolist())
    return all_scores, all_inxs


def rerank(model, loader):
    out = []
    for batch in loader:
        scores, ids = model(batch.cuda())
        out.extend(ids.tolist())
    return out
"""


def test_faiss_search_results_are_host_arrays():
    found = _findings(MINING)
    assert not found.get(11) and not found.get(12)
    assert "NPU703" in found.get(20, {}), "a model's unpacked outputs stay device values"


def test_faiss_search_through_its_torch_bridge_keeps_the_hint():
    # with faiss' torch bridge a GPU index answers device queries with device tensors: the results are not host
    # arrays, and the query moved to the device is the device origin hq39's reading asks for
    bridged = MINING.replace(b"import faiss\n", b"import faiss\nimport faiss.contrib.torch_utils\n")
    found = _findings(bridged.replace(b"batch_size]\n", b"batch_size].cuda()\n"))
    assert "NPU703" in found.get(13, {})


CLIENT = b"""import numpy as np
import torch


def main(total_lines, num_workers, model, batches):
    tasks = []
    splits = np.array_split(total_lines, num_workers)
    for idx, per_split in enumerate(splits):
        cur_files = per_split.tolist()
        tasks.append((idx, cur_files))
    hist, edges = np.histogram(np.asarray(total_lines))
    for count, edge in zip(hist, edges):
        tasks.append((count.item(), edge.item()))
    outs = [model(b.cuda()) for b in batches]
    for out in outs:
        tasks.append(out.tolist())
    return tasks
"""


def test_items_of_a_loop_over_a_host_array_are_host_values():
    found = _findings(CLIENT)
    for line in (9, 13):
        assert not found.get(line), (line, found.get(line))
    assert "NPU703" in found.get(16, {}), "items of a list of device outputs stay device values"


def test_one_chain_walk_serves_both_readers():
    value = ast.parse('data.batch["x"][:, :n].sum(dim=-1)', mode="eval").body
    assert isinstance(_chain_root(value), ast.Name) and _read_off(value, {"data"})
    moved = ast.parse('data.batch["x"].to(device).sum()', mode="eval").body
    assert _chain_root(moved) is None and not _read_off(moved, {"data"})
    assert _self_root(ast.parse("self._split_indices[: self._train_size]", mode="eval").body) == "_split_indices"
    assert _self_root(ast.parse("self.load(x)", mode="eval").body) is None


# -- a command-line option's two provider choices ------------------------------------------------------------------

ONNX_DEMO = b"""import argparse
import onnxruntime as ort


def get_args():
    parser = argparse.ArgumentParser()
    parser.add_argument(
        "--providers",
        default="CPUExecutionProvider",
        choices=["CUDAExecutionProvider", "CPUExecutionProvider"],
    )
    parser.add_argument("--gpu-providers", default="CUDAExecutionProvider",
                        choices=["CUDAExecutionProvider", "CPUExecutionProvider"])
    return parser.parse_args()


def session(path):
    return ort.InferenceSession(path, providers=["CUDAExecutionProvider", "CPUExecutionProvider"])
"""


def test_two_provider_choices_are_a_catalogue_and_a_cuda_default_keeps_its_finding():
    found = _findings(ONNX_DEMO)
    assert "NPU033" not in found.get(10, {})
    assert "NPU033" in found.get(12, {}), "the CUDA default selects"
    assert "NPU033" in found.get(18, {}), "a session's providers list selects"


# -- a device prefix with its colon ------------------------------------------------------------------------------

RESOLVE = b"""import torch


def _resolve_device(device):
    if device == "gpu":
        return torch.device("cuda:0" if torch.cuda.is_available() else "cpu")
    if isinstance(device, str) and device.startswith("gpu:"):
        gpu_idx = int(device.split(":", maxsplit=1)[1])
        if torch.cuda.is_available() and gpu_idx < torch.cuda.device_count():
            return torch.device(f"cuda:{gpu_idx}")
        return torch.device("cpu")
    if torch.cuda.is_available():
        torch.cuda.set_device(0)
    return torch.device("cpu")
"""


def test_a_probe_behind_the_users_gpu_prefix_is_gated():
    found = _findings(RESOLVE)
    assert found.get(9, {}).get("NPU002") == "warning", found.get(9)
    assert found.get(12, {}).get("NPU002") == "error", "an ungated probe keeps its error"


# -- a device layer's CUDA flag beside its NPU flag ------------------------------------------------------------------

DEVICE_LAYER = b"""import torch

from .import_utils import is_torch_npu_available

IS_CUDA_AVAILABLE = torch.cuda.is_available()
IS_NPU_AVAILABLE = is_torch_npu_available()


def get_device_type() -> str:
    if IS_CUDA_AVAILABLE:
        return "cuda"
    elif IS_NPU_AVAILABLE:
        return "npu"
    return "cpu"


def batch_invariant_enabled(enabled: bool) -> bool:
    return enabled and IS_CUDA_AVAILABLE
"""


def test_a_cuda_flag_beside_an_npu_flag_is_info():
    found = _findings(DEVICE_LAYER, "pkg/utils/device.py")
    assert found.get(5, {}).get("NPU002") == "info", found.get(5)


def test_a_cuda_flag_without_an_npu_neighbour_keeps_its_error():
    src = DEVICE_LAYER.replace(b"IS_NPU_AVAILABLE = is_torch_npu_available()", b"IS_MPS = torch.backends.mps.is_available()")
    found = _findings(src, "pkg/utils/device.py")
    assert found.get(5, {}).get("NPU002") == "error", found.get(5)


# -- device counts in an entry that runs on the NPU platform ---------------------------------------------------------

TEST_SET = """test_cases:
  - name: online_inference_pc_pp
    platform: vllm_npu
    server_start_config:
      gpu_count: 2
      node_count: 1
      env:
        CUDA_VISIBLE_DEVICES: "0,1"
  - name: online_inference_gpu
    platform: vllm
    server_start_config:
      gpu_count: 2
"""


def test_a_gpu_count_under_an_npu_platform_entry_is_dropped(tmp_path):
    found = _in(_tree(tmp_path / "a", {"test/test_set/test_set.yaml": TEST_SET}), "test_set.yaml")
    assert "NPU028" not in found.get(5, {})
    assert "NPU004" in found.get(8, {}), "a CUDA variable set for the NPU run is still ignored there"
    assert "NPU028" in found.get(12, {}), "the entry without an NPU platform keeps its count"


# -- the NPU branch's own dtype ---------------------------------------------------------------------------------

HASH_ENCODER = b"""import logging
import torch

logger = logging.getLogger(__name__)


class HashEncoder:
    def __init__(self, dtype, device):
        self.dtype = dtype
        self.device = device
        if self.device.type == "npu":
            if dtype not in [torch.float32, torch.float64]:
                logger.warning("NPU only supports float16, float32 and float64 for hash_weights")
                self.dtype = torch.float16
        if self.device.type == "cuda" and dtype == torch.bfloat16:
            self.dtype = torch.float16
        if not is_torch_npu_available():
            self.dtype = torch.float16
"""


def test_a_dtype_hint_in_the_npu_branch_is_dropped():
    found = _findings(HASH_ENCODER)
    assert "NPU202" not in found.get(14, {})
    assert "NPU202" in found.get(16, {}), "the CUDA arm's dtype stays worth knowing"
    assert "NPU202" in found.get(18, {}), "a negated NPU test is no NPU branch"


# -- a switch defaulting to the module's CUDA probe ------------------------------------------------------------------

GPT_MODEL = b"""from typing import Optional

import torch

has_cuda = torch.cuda.is_available()


class GptModel:
    def __init__(self, model_type, model_name, use_cuda: Optional[bool] = has_cuda, cuda_device: int = -1):
        self.use_cuda = use_cuda


def build(name):
    return GptModel("llama", name, use_cuda=has_cuda)


def build_on(name):
    return GptModel("llama", name, use_cuda=True)
"""


def test_a_switch_defaulting_to_the_probe_is_the_probes_finding():
    found = _findings(GPT_MODEL)
    assert "NPU002" in found.get(5, {})
    assert "NPU038" not in found.get(9, {}) and "NPU038" not in found.get(14, {})
    assert "NPU038" in found.get(18, {}), "a literal True switches the CUDA path on"


FLASH_FALLBACK = """import torch

try:
    from flash_attn.flash_attn_interface import flash_attn_unpadded_qkvpacked_func
except ImportError:
    from flash_attn.flash_attn_interface import flash_attn_varlen_qkvpacked_func as flash_attn_unpadded_qkvpacked_func


def forward(qkv, cu_seqlens, max_s):
    return flash_attn_unpadded_qkvpacked_func(qkv, cu_seqlens, max_s, 0.0)
"""


def test_a_fallback_within_a_package_ascend_lacks_keeps_its_error(tmp_path):
    # on Ascend the first import fails and the handler's fails too: no path without flash_attn
    found = _in(_tree(tmp_path / "c", {"patch.py": FLASH_FALLBACK, "main.py": "from patch import forward\n"
                                       "print(forward(1, 2, 3))\n"}), "patch.py")
    assert "error" in found.get(6, {}).values(), found.get(6)
