"""tq52b (session 52; TUNED on heldout66's trees 5-8): FlashAttention-2 chosen by name under a transformers pin
older than 4.51, CUDA platform checks that raise. Each shape on code like the trees it came from, beside a control
that keeps its finding."""
from __future__ import annotations

import pytest

from auditor.static.transformers_npu_release import pre_npu_release_only
from tests.static_snippets import dedented_tree

# a VLA reinforcement-learning tree (prismatic / OpenVLA backbones, a PPO critic) pinned to an old transformers
_PYPROJECT = """
    [project]
    name = "vla-rl"
    dependencies = [
        "torch==2.2.0",
        "transformers{pin}",
        "peft==0.11.1",
    ]
"""
_CRITIC = """
    import torch
    from transformers import AutoModelForTokenClassification


    def load_value_model(vla_path):
        return AutoModelForTokenClassification.from_pretrained(
            vla_path,
            torch_dtype=torch.bfloat16,
            attn_implementation="flash_attention_2",
        )
"""
_BACKBONE = """
    from transformers import AutoModelForCausalLM


    class HFCausalLLMBackbone:
        def __init__(self, hf_hub_path, use_flash_attention_2: bool = True):
            self.llm = AutoModelForCausalLM.from_pretrained(hf_hub_path, use_flash_attention_2=use_flash_attention_2)
"""


def _vla_tree(tmp_path, pin: str) -> dict:
    return dedented_tree(tmp_path, {"pyproject.toml": _PYPROJECT.format(pin=pin), "ppo/critic.py": _CRITIC,
                                    "prismatic/backbone.py": _BACKBONE})


def test_flash_attention_2_under_a_pin_before_the_npu_release_is_an_error(tmp_path):
    found = _vla_tree(tmp_path, "==4.48.2")
    assert found[("ppo/critic.py", 10)]["NPU386"] == "error"
    assert found[("prismatic/backbone.py", 6)]["NPU357"] == "error"


def test_flash_attention_2_as_a_table_key_under_an_old_pin_keeps_its_severity(tmp_path):
    modifier = """
        from transformers.models.llama.modeling_llama import LLAMA_ATTENTION_CLASSES

        from .llama_modifier import NNScalerLlamaFlashAttention2


        def nnscaler_llama_init():
            LLAMA_ATTENTION_CLASSES["flash_attention_2"] = NNScalerLlamaFlashAttention2
    """
    found = dedented_tree(tmp_path, {"examples/llama/requirements.txt": "transformers==4.40.0\ndatasets==3.6.0\n",
                                     "examples/llama/modeling_modifier.py": modifier})
    assert found[("examples/llama/modeling_modifier.py", 8)]["NPU386"] == "info"    # registers, chooses nothing


def test_flash_attention_2_under_a_pin_that_allows_the_npu_release_keeps_its_severity(tmp_path):
    found = _vla_tree(tmp_path, ">=4.46")
    assert found[("ppo/critic.py", 10)]["NPU386"] == "info"
    assert found[("prismatic/backbone.py", 6)]["NPU357"] == "warning"


def test_flash_attention_2_without_a_pin_keeps_its_severity(tmp_path):
    found = _vla_tree(tmp_path, "")
    assert found[("ppo/critic.py", 10)]["NPU386"] == "info"


def test_specifiers_read_for_releases_before_the_npu_route():
    assert pre_npu_release_only(["==4.48.2"]) and pre_npu_release_only(["<4.51"])
    assert pre_npu_release_only([">=4.40,<4.50"]) and pre_npu_release_only(["~=4.40.0"])
    assert pre_npu_release_only(["==4.48.*"]) and pre_npu_release_only(["==4.48.2", "==4.40.1"])
    assert not pre_npu_release_only(["<=4.51.0"]) and not pre_npu_release_only(["==4.*"])
    assert not pre_npu_release_only([">=4.40"]) and not pre_npu_release_only([""])
    assert not pre_npu_release_only(["==4.48.2", ">=4.46"]) and not pre_npu_release_only([])
    assert not pre_npu_release_only(["~=4.51"]) and not pre_npu_release_only(["==4.52.0"])


# a vLLM plugin (vllm.general_plugins entry point) that refuses any platform but CUDA
_PLUGIN = """
    import os

    from vllm.platforms import current_platform


    def arctic_inference_plugin():
        if os.getenv("ARCTIC_INFERENCE_ENABLED", "0") != "1":
            return
        if not current_platform.is_cuda():
            raise RuntimeError("Arctic Inference plugin requires the cuda platform!")
        from arctic_inference.patches import apply_patches
        apply_patches()


    def load_kernels():
        if current_platform.is_cuda():
            from arctic_inference import custom_ops
            return custom_ops
        else:
            logger.warning("no custom ops on this platform")
            raise NotImplementedError(f"unsupported platform {current_platform.device_name}")
"""
_PLUGIN_CONTROLS = """
    from vllm.platforms import current_platform


    def custom_ops_enabled():
        if not current_platform.is_cuda():
            return False
        return True


    def check_xformers():
        if not current_platform.is_cuda():
            raise ValueError("xformers' memory efficient attention is only available for GPU")


    def pick_backend():
        if current_platform.is_cuda():
            return "flash"
        return "torch_sdpa"
"""


def test_platform_check_that_raises_is_an_error(tmp_path):
    found = dedented_tree(tmp_path, {"arctic_inference/vllm/plugin.py": _PLUGIN})
    assert found[("arctic_inference/vllm/plugin.py", 10)]["NPU034"] == "error"
    assert found[("arctic_inference/vllm/plugin.py", 17)]["NPU034"] == "error"


def test_platform_check_with_a_portable_arm_stays_info(tmp_path):
    found = dedented_tree(tmp_path, {"plugin/ops.py": _PLUGIN_CONTROLS})
    assert found[("plugin/ops.py", 6)]["NPU034"] == "info"       # returns False: the other path runs
    assert found.get(("plugin/ops.py", 12), {}).get("NPU034") in (None, "info")   # refuses a CUDA-only library
    assert found[("plugin/ops.py", 17)]["NPU034"] == "info"


def test_platform_check_that_raises_behind_a_cuda_test_mark_is_a_warning(tmp_path):
    src = """
        import pytest
        import torch
        from vllm.platforms import current_platform


        @pytest.mark.skipif(not torch.cuda.is_available(), reason="needs CUDA")
        def test_plugin_loads():
            if not current_platform.is_cuda():
                raise RuntimeError("requires the cuda platform")
    """
    found = dedented_tree(tmp_path, {"tests/test_plugin.py": src})
    assert found[("tests/test_plugin.py", 9)]["NPU034"] == "warning"


# a unit test module of a vLLM plugin: the tests request fixtures whose chain skips without CUDA
_FIXTURE_TESTS = '''
import os

import pytest
import torch


def _skip_if_no_cuda():
    if not torch.cuda.is_available():
        pytest.skip("CUDA required")


@pytest.fixture(scope="module")
def distributed():
    _skip_if_no_cuda()
    torch.cuda.set_device(0)


@pytest.fixture(scope="module")
def patches_installed(distributed):
    from arctic_inference.vllm.fp32_lm_head import apply_patch
    apply_patch()


@pytest.fixture
def fp32_enabled(patches_installed):
    os.environ["ARCTIC_FP32_LM_HEAD"] = "1"
    yield
    os.environ.pop("ARCTIC_FP32_LM_HEAD")


@pytest.fixture
def tmp_model_dir(tmp_path):
    return tmp_path / "model"


def test_fp32_logits(fp32_enabled):
    from vllm.model_executor.layers.logits_processor import LogitsProcessor
    logits_processor = LogitsProcessor(256).cuda()
    assert logits_processor is not None


def test_saves_weights(tmp_model_dir):
    weights = torch.randn(4, 4).cuda()
    torch.save(weights, tmp_model_dir / "w.pt")
'''


def test_tests_behind_a_fixture_chain_that_skips_without_cuda_are_warnings(tmp_path):
    found = dedented_tree(tmp_path, {"tests/unit_tests/test_fp32_lm_head.py": _FIXTURE_TESTS})
    assert found[("tests/unit_tests/test_fp32_lm_head.py", 39)]["NPU001"] == "warning"
    assert found[("tests/unit_tests/test_fp32_lm_head.py", 44)]["NPU001"] == "error"    # its fixture skips nothing


def test_fixture_that_skips_after_its_yield_gates_nothing(tmp_path):
    src = _FIXTURE_TESTS.replace('''def distributed():
    _skip_if_no_cuda()''', '''def distributed():
    yield
    _skip_if_no_cuda()''')
    found = dedented_tree(tmp_path, {"tests/unit_tests/test_fp32_lm_head.py": src})
    assert found[("tests/unit_tests/test_fp32_lm_head.py", 40)]["NPU001"] == "error"


_SENDER = '''
import os
import subprocess


def launch_senders(tp_size, repo_root, script):
    nccl_envs = ""
    for key in ("NCCL_NET_PLUGIN", "NCCL_TUNER_PLUGIN", "NCCL_SOCKET_IFNAME", "NCCL_DEBUG"):
        val = os.environ.get(key)
        if val is not None:
            nccl_envs += f"{key}={val} "
    for rank in range(tp_size):
        subprocess.Popen(f"cd {repo_root} && {nccl_envs} python {script} --rank {rank}", shell=True)


def tune_transport():
    for key in ("NCCL_P2P_DISABLE", "NCCL_IB_DISABLE"):
        if os.environ.get(key) is None:
            os.environ[key] = "1"
'''


def test_environment_names_read_under_their_own_names_and_passed_on_set_nothing(tmp_path):
    found = dedented_tree(tmp_path, {"tests/weight_sync/test_sender.py": _SENDER})
    assert "NPU121" not in found.get(("tests/weight_sync/test_sender.py", 8), {})
    assert found[("tests/weight_sync/test_sender.py", 17)]["NPU121"] == "warning"    # the loop sets them


_PARITY = '''
import torch


def parity_check_fp4_vs_fp16(num_tokens: int = 64, device: str = "cuda", seed: int = 0):
    torch.manual_seed(seed)
    key = torch.randn(num_tokens, 16, 128, device=device)
    return key.float().abs().max()


if __name__ == "__main__":
    for num_tokens in [1, 16, 256]:
        print(parity_check_fp4_vs_fp16(num_tokens=num_tokens, device="cuda"))
'''


def test_default_of_a_script_helper_that_only_its_own_main_calls_is_info(tmp_path):
    found = dedented_tree(tmp_path, {"tests/unit_tests/test_parity_nvfp4.py": _PARITY})
    assert found[("tests/unit_tests/test_parity_nvfp4.py", 5)]["NPU003"] == "info"
    assert found[("tests/unit_tests/test_parity_nvfp4.py", 13)]["NPU003"] == "error"     # the call's own choice


def test_default_of_a_script_helper_another_test_calls_keeps_its_severity(tmp_path):
    other = '''
from tests.unit_tests.test_parity_nvfp4 import parity_check_fp4_vs_fp16


def test_parity():
    parity_check_fp4_vs_fp16(num_tokens=8)
'''
    found = dedented_tree(tmp_path, {"tests/unit_tests/test_parity_nvfp4.py": _PARITY,
                                     "tests/unit_tests/test_other.py": other})
    assert found[("tests/unit_tests/test_parity_nvfp4.py", 5)]["NPU003"] == "error"


_TORCH_FUNCTIONAL = '''
import torch

try:
    from flash_attn.ops.triton.cross_entropy import cross_entropy_loss

    FLASH_CE_AVAILABLE = True
except ImportError:
    FLASH_CE_AVAILABLE = False


def logprobs_from_logits(logits, labels):
    if FLASH_CE_AVAILABLE:
        output = -cross_entropy_loss(logits, labels)[0]
    else:
        output = torch.log_softmax(logits, dim=-1).gather(-1, labels.unsqueeze(-1)).squeeze(-1)
    return output


def postprocess_data(input_ids, attention_mask, max_length):
    return input_ids[:, :max_length], attention_mask[:, :max_length]
'''
_WORKER = '''
import verl.utils.torch_functional as verl_F


def prepare(input_ids, attention_mask):
    return verl_F.postprocess_data(input_ids, attention_mask, 128)
'''


def test_module_whose_kernel_import_is_optional_is_no_kernel_to_port_with_its_importers(tmp_path):
    found = dedented_tree(tmp_path, {"verl/__init__.py": "", "verl/utils/__init__.py": "",
                                     "verl/utils/torch_functional.py": _TORCH_FUNCTIONAL,
                                     "verl/workers/fsdp_workers.py": _WORKER})
    assert "NPU320" not in found.get(("verl/workers/fsdp_workers.py", 2), {})


def test_importer_of_a_module_whose_kernel_import_is_unguarded_is_still_told(tmp_path):
    functional = '''
import torch
from flash_attn.ops.triton.cross_entropy import cross_entropy_loss


def logprobs_from_logits(logits, labels):
    return -cross_entropy_loss(logits, labels)[0]
'''
    worker = '''
import verl.utils.torch_functional as verl_F


def logprobs(logits, labels):
    return verl_F.logprobs_from_logits(logits, labels)
'''
    found = dedented_tree(tmp_path, {"verl/__init__.py": "", "verl/utils/__init__.py": "",
                                     "verl/utils/torch_functional.py": functional,
                                     "verl/workers/fsdp_workers.py": worker})
    assert found[("verl/workers/fsdp_workers.py", 6)]["NPU321"] == "info"


# a DeepSpeed-style op builder copied into a vLLM plugin, loaded only inside a try that falls back
_BUILDER = '''
import os

import torch


class OpBuilder:
    def __init__(self, name):
        self.name = name

    def load(self, verbose=False):
        if torch.cuda.is_available():
            torch.cuda.synchronize()
        return self.jit_load(verbose)

    def jit_load(self, verbose=True):
        from torch.utils.cpp_extension import load
        nvcc_args = ["-O3", "--use_fast_math"]
        nvcc_args.append("-U__CUDA_NO_BFLOAT16_CONVERSIONS__")
        return load(name=self.name, sources=self.sources(), extra_cuda_cflags=nvcc_args, with_cuda=True,
                    verbose=verbose)


class CUDAOpBuilder(OpBuilder):
    pass


class SwiftKVOpsBuilder(CUDAOpBuilder):
    def __init__(self):
        super().__init__("swiftkv_ops")

    def sources(self):
        return ["csrc/swiftkv/reshape_and_cache_flash_bulk.cu"]
'''
_TRY_LOAD = '''
import logging

logger = logging.getLogger(__name__)


def try_load_jit_library() -> bool:
    try:
        from plugin.op_builder.builder import SwiftKVOpsBuilder
        SwiftKVOpsBuilder().load()
        return True
    except ImportError as e:
        logger.info(f"Unable to import SwiftKVOpsBuilder: {e}. Falling back to original implementation.")
        return False
    except Exception as e:
        logger.info(f"Unable to load JIT library: {e}. Falling back to original implementation.")
        return False
'''


@pytest.mark.parametrize("extra, severity", [
    ({}, "warning"),      # every load is tried: the build fails on Ascend and the handler goes on
    ({"plugin/layers.py": "from plugin.op_builder.builder import SwiftKVOpsBuilder\n\n"
                          "swiftkv_ops = SwiftKVOpsBuilder().load()\n"}, "error"),    # one load does not try
])
def test_op_builder_build_is_a_warning_only_where_every_load_tries_it(tmp_path, extra, severity):
    found = dedented_tree(tmp_path, {"plugin/op_builder/builder.py": _BUILDER, "plugin/custom_ops.py": _TRY_LOAD,
                                     **extra})
    assert found[("plugin/op_builder/builder.py", 19)]["NPU369"] == severity
    assert found[("plugin/op_builder/builder.py", 20)]["NPU370"] == severity


_SWIFTKV = '''
import torch

try:
    from vllm.v1.attention.backends.flashinfer import FlashInferMetadata
    FLASHINFER_AVAILABLE = True
except ImportError:
    FLASHINFER_AVAILABLE = False


class SwiftKVDecoder:
    def prepare(self, attn_metadata, num_tokens):
        if FLASHINFER_AVAILABLE and isinstance(attn_metadata, FlashInferMetadata):
            return attn_metadata.slot_mapping[:num_tokens]
        return attn_metadata.slot_mapping

    def build(self, slot_mapping):
        return FlashInferMetadata(slot_mapping=slot_mapping)
'''


def test_attention_metadata_class_only_tested_as_a_type_runs_nothing(tmp_path):
    found = dedented_tree(tmp_path, {"plugin/swiftkv.py": _SWIFTKV})
    assert "NPU324" not in found.get(("plugin/swiftkv.py", 13), {})
    assert found[("plugin/swiftkv.py", 18)]["NPU324"] == "warning"      # built: the module's code runs
