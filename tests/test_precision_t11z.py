"""t11z (issue 11, session 15; TUNED on bench/precision/tuned_t11z and the heldout16 / heldout17 residuals): a project
whose setup() says whose accelerator it serves (tt-buda: `author='Tenstorrent'`, `description='AI/ML framework for
Tenstorrent devices'`, its `pybuda._C` drives Tenstorrent chips), and torch.cuda's re-seed behind
`if torch.cuda.is_available():` right after `torch.manual_seed` (nanoVLM's eval scripts). Trees modelled on those
projects' files."""
from __future__ import annotations

from pathlib import Path

from auditor.static.declared_vendor import declares_fact
from tests.static_snippets import findings_in_tree, line_of, write_tree

TT_SETUP = '''\
from setuptools import setup, find_packages

setup(
    name='pybuda',
    version='0.1.0',
    author='Tenstorrent',
    url="http://www.tenstorrent.com",
    author_email='info@tenstorrent.com',
    description='AI/ML framework for Tenstorrent devices',
    packages=find_packages(where="pybuda"),
    install_requires=["numpy", "torch"],
)
'''

TT_DEVICE = '''\
import torch

from pybuda._C.graph import Graph, create_op_node
from pybuda._C import DataFormat


def pytorch_dtype_to_buda_dataformat(dtype):
    if dtype == torch.bfloat16:
        return DataFormat.Float16_b
    return DataFormat.Float32


def place(module):
    graph = Graph("tt0")
    return create_op_node(graph, module)
'''

CUDA_SETUP = '''\
from setuptools import setup

setup(
    name="fastops",
    author="Tenstorrent",
    description="Fused kernels for NVIDIA GPUs and Tenstorrent devices",
    packages=["fastops"],
)
'''


def test_a_project_that_describes_itself_for_another_accelerator_keeps_its_lines_as_info(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {"setup.py": TT_SETUP, "pybuda/pybuda/ttdevice.py": TT_DEVICE}))
    ext = [sev for (rel, line, code), sev in found.items()
           if rel == "pybuda/pybuda/ttdevice.py" and code == "NPU358"]
    assert ext and set(ext) == {"info"}       # Tenstorrent's own compiled library, not a CUDA extension
    fact = declares_fact(TT_SETUP.encode(), "setup.py")
    assert fact is not None and fact["described"] == ["tenstorrent"] and fact["cuda"] is False


def test_a_description_that_also_names_gpus_declares_nothing(tmp_path):
    fact = declares_fact(CUDA_SETUP.encode(), "setup.py")
    assert fact is not None and "described" not in fact
    found = findings_in_tree(write_tree(tmp_path, {"setup.py": CUDA_SETUP, "pybuda/pybuda/ttdevice.py": TT_DEVICE}))
    assert found[("pybuda/pybuda/ttdevice.py", line_of(TT_DEVICE, "from pybuda._C import DataFormat"), "NPU358")] \
        == "error"


EVAL_SEED = '''\
import torch


def main():
    torch.manual_seed(0)
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(0)
    model = torch.nn.Linear(4, 4)
    return model


def other():
    if torch.cuda.is_available():
        torch.cuda.manual_seed_all(1)
'''


def test_a_guarded_cuda_reseed_after_the_global_seed_is_a_hint(tmp_path: Path):
    found = findings_in_tree(write_tree(tmp_path, {"eval/benchmark.py": EVAL_SEED}))
    seeds = {line: sev for (rel, line, code), sev in found.items() if code == "NPU002"}
    assert seeds[line_of(EVAL_SEED, "manual_seed_all(0)")] == "info"
    # no torch.manual_seed before it: the NPU's generator is not seeded there, the finding keeps its severity
    assert seeds[line_of(EVAL_SEED, "manual_seed_all(1)")] != "info"


PROVIDER_CHOICES = '''\
from typing import Dict, List, Literal

ExecutionProvider = Literal['cuda', 'tensorrt', 'rocm', 'coreml', 'openvino', 'directml', 'cpu']
ExecutionProviderValue = Literal['CPUExecutionProvider', 'CoreMLExecutionProvider', 'CUDAExecutionProvider',
                                 'DmlExecutionProvider', 'ROCMExecutionProvider', 'TensorrtExecutionProvider']

execution_provider_set : Dict[ExecutionProvider, ExecutionProviderValue] =\\
{
    'cuda': 'CUDAExecutionProvider',
    'tensorrt': 'TensorrtExecutionProvider',
    'rocm': 'ROCMExecutionProvider',
    'coreml': 'CoreMLExecutionProvider',
    'directml': 'DmlExecutionProvider',
    'cpu': 'CPUExecutionProvider'
}


def create_inference_providers(execution_device_id: int, execution_providers: List[ExecutionProvider]):
    inference_providers = []
    for execution_provider in execution_providers:
        if execution_provider == 'cuda':
            inference_providers.append(('CUDAExecutionProvider', {'device_id': execution_device_id}))
    return inference_providers
'''


def test_option_to_provider_tables_and_provider_literals_select_nothing(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {"app/choices.py": PROVIDER_CHOICES}))
    ort = {line for (rel, line, code) in found if code == "NPU033"}
    assert line_of(PROVIDER_CHOICES, "'cuda': 'CUDAExecutionProvider'") not in ort
    assert line_of(PROVIDER_CHOICES, "'tensorrt': 'TensorrtExecutionProvider'") not in ort
    literal = line_of(PROVIDER_CHOICES, "ExecutionProviderValue = Literal")
    assert not {literal, literal + 1} & ort      # the Literal's two lines
    # the provider a session is given stays reported
    assert line_of(PROVIDER_CHOICES, "inference_providers.append(('CUDAExecutionProvider'") in ort


SERVER_DTYPE = '''\
import torch


def serve(model_id, dtype=None):
    if dtype == "bfloat16" or None:
        data_type = torch.bfloat16
    else:
        data_type = torch.float
    return data_type


def pick(dtype):
    if dtype == "bfloat16" or True:
        data_type = torch.bfloat16
    return data_type
'''


def test_a_dtype_name_test_joined_with_a_falsy_constant_converts_a_name(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {"server/server.py": SERVER_DTYPE}))
    bf16 = {line for (rel, line, code) in found if code == "NPU201"}
    lines = [i for i, t in enumerate(SERVER_DTYPE.splitlines(), 1) if "data_type = torch.bfloat16" in t]
    assert lines[0] not in bf16        # `dtype == "bfloat16" or None`: the user's --dtype name converted
    assert lines[1] in bf16            # `or True`: bf16 whatever the name, a choice


IMPORT_UTILS = '''\
import torch


def is_ipex_available():
    try:
        import intel_extension_for_pytorch  # noqa: F401
    except ImportError:
        return False
    return True


def get_cuda_free_memory(device, memory_fraction):
    total_free_memory, _ = torch.cuda.mem_get_info(device)
    return total_free_memory * memory_fraction


def get_xpu_free_memory(device, memory_fraction):
    total_gpu_memory = torch.xpu.get_device_properties(device).total_memory
    return total_gpu_memory * memory_fraction


def get_cuda_peak_memory(device):
    return torch.cuda.max_memory_allocated(device)


SYSTEM = None
if torch.version.hip is not None:
    SYSTEM = "rocm"
    get_free_memory = get_cuda_free_memory
elif is_ipex_available():
    SYSTEM = "xpu"
    get_free_memory = get_xpu_free_memory
else:
    SYSTEM = "cuda"
    get_free_memory = get_cuda_free_memory
'''


def test_the_cuda_member_of_a_per_backend_function_set_is_a_platform_implementation(tmp_path):
    found = findings_in_tree(write_tree(tmp_path, {"server/utils/import_utils.py": IMPORT_UTILS}))
    rel = "server/utils/import_utils.py"
    assert found[(rel, line_of(IMPORT_UTILS, "torch.cuda.mem_get_info"), "NPU002")] == "info"
    # a CUDA function without a twin for another backend keeps its severity
    assert found[(rel, line_of(IMPORT_UTILS, "torch.cuda.max_memory_allocated"), "NPU002")] == "error"
