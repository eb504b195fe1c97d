"""Precision fix of pd33 (session 25, issue 11; heldout29 TUNED): lines that name CUDA without selecting a device
(auditor/static/unselected_devices.py). Code written afresh in the shape of OpenMMLab 1.x's util_distribution.py and
tools/benchmark.py (mmtracking, mmrotate), LitServe's connector / server tests, physical-ai-studio's device-detection
test and twinkle's skipped smoke test; each class has a control that keeps its severity."""
from __future__ import annotations

import pytest

from auditor.static.engine import StaticEngine
from tests.static_snippets import findings_by_line, line_of


@pytest.fixture(scope="module")
def engine():
    from auditor.rules import load_rules
    return StaticEngine(load_rules())


def _sev(engine, src, needle, code, rel="pkg/mod.py"):
    found = findings_by_line(engine, src, rel).get(line_of(src, needle), [])
    return {f.severity for f in found if f.code == code}


UTIL_DISTRIBUTION = """\
    import torch
    from mmcv.parallel import MMDataParallel, MMDistributedDataParallel

    dp_factory = {'cuda': MMDataParallel, 'cpu': MMDataParallel}

    ddp_factory = {'cuda': MMDistributedDataParallel}


    def build_dp(model, device='cuda', dim=0, *args, **kwargs):
        if device == 'npu':
            from mmcv.device.npu import NPUDataParallel
            dp_factory['npu'] = NPUDataParallel
            torch.npu.set_device(kwargs['device_ids'][0])
        elif device == 'cuda':
            model = model.cuda(kwargs['device_ids'][0])
        return dp_factory[device](model, dim=dim, *args, **kwargs)
"""

BENCHMARK = """\
    import torch
    from mmcv.parallel import MMDistributedDataParallel


    def main(model, cfg):
        model = MMDistributedDataParallel(
            model.cuda(), device_ids=[torch.cuda.current_device()], broadcast_buffers=False)
        return model
"""


def test_wrapper_import_is_info_and_its_use_keeps_the_error(engine):
    assert _sev(engine, BENCHMARK, "from mmcv.parallel", "NPU069") == {"info"}
    assert _sev(engine, BENCHMARK, "model = MMDistributedDataParallel(", "NPU069") == {"error"}   # control


def test_cuda_slot_of_a_factory_table_beside_npu_is_info(engine):
    assert _sev(engine, UTIL_DISTRIBUTION, "from mmcv.parallel", "NPU069") <= {"info"}
    assert _sev(engine, UTIL_DISTRIBUTION, "ddp_factory = {", "NPU069") <= {"info"}


def test_cuda_slot_without_an_npu_route_keeps_its_severity(engine):
    src = UTIL_DISTRIBUTION.replace("'npu'", "'mlu'").replace("mmcv.device.npu", "mmcv.device.mlu").replace(
        "torch.npu.set_device", "torch.mlu.set_device")
    assert _sev(engine, src, "ddp_factory = {", "NPU069") - {"info"}


CONNECTOR_TEST = """\
    import pytest
    import torch
    from litserve.connector import _Connector


    @pytest.mark.parametrize(
        ("input_accelerator", "expected_accelerator", "expected_devices"),
        [
            ("cpu", "cpu", 1),
            pytest.param(
                "cuda",
                "cuda",
                torch.cuda.device_count(),
                marks=pytest.mark.skipif(torch.cuda.device_count() == 0, reason="Only tested on Nvidia GPU"),
            ),
        ],
    )
    def test_connector(input_accelerator, expected_accelerator, expected_devices):
        connector = _Connector(accelerator=input_accelerator)
        assert connector.accelerator == expected_accelerator
        assert connector.devices == expected_devices


    @pytest.mark.parametrize("devices", ["cpu", ["cuda:a", "cuda:1"]])
    def test_device_identifiers_error(simple_litapi, devices):
        with pytest.raises(ValueError, match="devices must be an integer"):
            LitServer(simple_litapi, accelerator="cuda", devices=devices, timeout=10)


    def test_server_on_gpu(simple_litapi):
        server = LitServer(simple_litapi, accelerator="cuda", devices=1)
        x = torch.ones(2).cuda()
        assert server.devices == [[f"cuda:{i}"] for i in range(torch.cuda.device_count())]


    @pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 4, reason="Need 4 GPUs")
    def test_ep_fsdp_smoke():
        pytest.skip("Run this smoke in the integration environment with a local model fixture.")


    @pytest.mark.skipif(not torch.cuda.is_available() or torch.cuda.device_count() < 4, reason="Need 4 GPUs")
    def test_ep_fsdp_real():
        assert torch.ones(4).cuda().sum() == 4
"""


def _worst(engine, src, needle, rel="tests/unit/test_connector.py"):
    found = findings_by_line(engine, src, rel).get(line_of(src, needle), [])
    assert found, needle
    return {f.severity for f in found}


def test_expected_value_of_a_cuda_skipped_param_is_info(engine):
    assert _worst(engine, CONNECTOR_TEST, "torch.cuda.device_count(),") == {"info"}


def test_call_expected_to_raise_is_info_and_a_real_gpu_test_keeps_its_findings(engine):
    assert _worst(engine, CONNECTOR_TEST, 'LitServer(simple_litapi, accelerator="cuda", devices=devices') == {"info"}
    assert _worst(engine, CONNECTOR_TEST, "x = torch.ones(2).cuda()") - {"info"}           # control


def test_skipif_of_a_skip_only_test_is_info_a_real_test_keeps_it(engine):
    lines = CONNECTOR_TEST.splitlines()
    skip_line = lines.index("    def test_ep_fsdp_smoke():")          # the decorator is the line above (0-based)
    real_line = lines.index("    def test_ep_fsdp_real():")
    found = findings_by_line(engine, CONNECTOR_TEST, "tests/unit/test_connector.py")
    assert {f.severity for f in found[skip_line]} == {"info"}
    assert {f.severity for f in found[real_line]} - {"info"}                             # control


MOCKED_TEST = """\
    from unittest.mock import MagicMock, patch

    import pytest
    import torch


    class TestInferenceModel:
        @pytest.mark.parametrize("cuda_available", [True, False])
        def test_device_detection(self, tmp_path, mock_adapter: MagicMock, cuda_available: bool) -> None:
            expected_device = "cuda" if cuda_available else "cpu"
            mock_adapter.default_device.return_value = expected_device
            with patch("torch.cuda.is_available", return_value=cuda_available):
                assert InferenceModel(tmp_path, device="auto").device == expected_device

        def test_runs_on_gpu(self, tmp_path) -> None:
            model = InferenceModel(tmp_path, device="cuda")
            assert model.device == "cuda"
"""


def test_mocked_cuda_availability_is_info_an_unmocked_test_keeps_it(engine):
    rel = "tests/unit/inference/test_model.py"
    assert _worst(engine, MOCKED_TEST, 'expected_device = "cuda"', rel) == {"info"}
    assert _worst(engine, MOCKED_TEST, 'device="cuda")', rel) - {"info"}                    # control


def test_assert_accepting_npu_is_dropped_a_cuda_only_assert_is_kept(engine):
    src = """\
        def build_ddp(model, device='cuda', *args, **kwargs):
            assert device in ['cuda', 'npu'], 'Only available for cuda or npu devices.'
            return model


        def build_ddp_cuda(model, device='cuda'):
            assert device in ['cuda'], 'Only available for cuda devices.'
            return model
    """
    found = findings_by_line(engine, src, "mmrotate/utils/util_distribution.py")
    assert not found.get(line_of(src, "['cuda', 'npu']"))
    assert found.get(line_of(src, "assert device in ['cuda'],"))                            # control


LIGER_ROPE = """\
    from liger_kernel.transformers import liger_rotary_pos_emb


    def apply_liger_rope(module):
        module.apply_rotary_pos_emb = liger_rotary_pos_emb
        return module
"""


def _liger_tree(tmp_path, requirement):
    from tests.static_snippets import write_tree
    return write_tree(tmp_path, {"requirements.txt": f"torch\ntransformers\n{requirement}\n",
                                 "src/pkg/kernel/liger.py": LIGER_ROPE})


def test_liger_with_its_ascend_backend_is_info(tmp_path):
    from tests.static_snippets import severities_at
    root = _liger_tree(tmp_path, "liger-kernel")
    assert severities_at(root, "src/pkg/kernel/liger.py", LIGER_ROPE, "module.apply_rotary_pos_emb =") == {
        ("info", "liger-ascend")}


def test_liger_pinned_before_its_ascend_backend_keeps_the_warning(tmp_path):
    from tests.static_snippets import severities_at
    root = _liger_tree(tmp_path, "liger-kernel==0.5.4")
    assert ("warning", "") in severities_at(root, "src/pkg/kernel/liger.py", LIGER_ROPE,
                                            "module.apply_rotary_pos_emb =")


def test_has_ascend_path_reads_the_pins():
    from auditor.static.liger_ascend import has_ascend_path
    assert has_ascend_path(None) and has_ascend_path([""]) and has_ascend_path([">=0.5.0"])
    assert not has_ascend_path(["==0.6.2"]) and not has_ascend_path(["<0.7"])


SEQUENCE_PARALLEL = """\
    def patch_sequence_parallel(text_model):
        from transformers.modeling_flash_attention_utils import is_flash_attn_available
        if is_flash_attn_available():
            import transformers
            transformers.modeling_flash_attention_utils._flash_attention_forward = _sp_flash_attention_forward
        return text_model
"""


def test_transformers_flash_probe_is_not_reported_its_patch_is(engine):
    found = findings_by_line(engine, SEQUENCE_PARALLEL, "src/pkg/strategy/sequence_parallel/__init__.py")
    assert not [f for f in found.get(line_of(SEQUENCE_PARALLEL, "if is_flash_attn_available():"), [])
                if f.code == "NPU332"]
    assert {f.severity for f in found[line_of(SEQUENCE_PARALLEL, "._flash_attention_forward =")]
            if f.code == "NPU332"} == {"warning"}                                          # control


METADATA_KERNELS = """\
    from typing import Optional

    import triton
    from loguru import logger

    _HAS_TRITON: Optional[bool] = None


    def has_triton():
        global _HAS_TRITON
        if _HAS_TRITON is None:
            _HAS_TRITON = has_triton_torch() if SYSTEM == "cuda" else False
            if _HAS_TRITON:
                logger.info("Using optimized Triton indexing kernels.")
        return _HAS_TRITON


    def block_tables_to_padded(max_blocks, cu_seqlen, block_tables, block_tables_ragged):
        if has_triton():
            return triton_block_tables_to_padded(max_blocks, cu_seqlen, block_tables, block_tables_ragged)
        return torch_block_tables_to_padded(max_blocks, cu_seqlen, block_tables, block_tables_ragged)
"""


def test_flag_test_that_only_logs_is_not_reported_the_decision_is(engine):
    found = findings_by_line(engine, METADATA_KERNELS, "server/pkg/models/metadata_kernels.py")
    assert not found.get(line_of(METADATA_KERNELS, "if _HAS_TRITON:"))
    assert found.get(line_of(METADATA_KERNELS, "if has_triton():"))                      # control: it chooses


SETUP = """\
    import os

    import torch
    from setuptools import find_packages, setup
    from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension


    def make_cuda_ext(name, module, sources, sources_cuda=[]):
        define_macros = []
        extra_compile_args = {'cxx': []}
        if torch.cuda.is_available() or os.getenv('FORCE_CUDA', '0') == '1':
            define_macros += [('WITH_CUDA', None)]
            extension = CUDAExtension
        else:
            extension = CppExtension
        return extension(name=f'{module}.{name}', sources=sources, define_macros=define_macros,
                         extra_compile_args=extra_compile_args)


    if __name__ == '__main__':
        setup(name='mmtrack', packages=find_packages(), ext_modules=[], cmdclass={'build_ext': BuildExtension})
"""


def test_setup_helper_nothing_calls_is_info_a_called_one_keeps_its_error(engine):
    needle = "if torch.cuda.is_available() or"
    assert _worst(engine, SETUP, needle, "setup.py") == {"info"}
    called = SETUP.replace("ext_modules=[]", "ext_modules=[make_cuda_ext('deform_conv', 'ops', ['a.cpp'])]")
    assert _worst(engine, called, needle, "setup.py") - {"info"}                              # control


LEROBOT = """\
    import torch


    def features_of(dataset_meta, batch):
        features = {}
        for k in dataset_meta.features:
            stats = dataset_meta.stats[k]
            features[k] = dict(mean=stats["mean"].tolist(), std=stats["std"].tolist())
        for step in range(10):
            loss = model(batch)
            history = loss.detach().tolist()
        return features, history
"""


def test_tolist_on_dataset_metadata_stats_is_not_reported(engine):
    found = findings_by_line(engine, LEROBOT, "library/src/pkg/data/lerobot/dataset.py")
    assert not [f for f in found.get(line_of(LEROBOT, 'stats["mean"].tolist()'), []) if f.code == "NPU703"]
    assert [f for f in found.get(line_of(LEROBOT, "loss.detach().tolist()"), []) if f.code == "NPU703"]   # control


def test_transformers_flash_probe_is_not_a_feature_check_other_probes_are(engine):
    src = SEQUENCE_PARALLEL + """\


    def pick_attention():
        from transformers.utils import is_flash_attn_2_available
        return "flash_attention_2" if is_flash_attn_2_available() else "sdpa"
"""
    found = findings_by_line(engine, src, "src/pkg/strategy/sequence_parallel/__init__.py")
    assert not found.get(line_of(src, "if is_flash_attn_available():"))
    assert [f for f in found[line_of(src, "if is_flash_attn_2_available()")] if f.code == "NPU391"]   # control


def test_placing_keyword_inside_pytest_raises_keeps_its_severity(engine):
    src = """\
        import pytest
        import torch


        def test_directory_load_requires_quant_config_json(tmp_path):
            with pytest.raises(FileNotFoundError, match="quant_config.json"):
                cache_dit.load(torch.nn.Linear(128, 128, device="cuda", dtype=torch.bfloat16), str(tmp_path))
    """
    assert _worst(engine, src, 'device="cuda"', "tests/quantization/test_ptq.py") - {"info"}


def test_device_string_of_a_cuda_skipped_param_keeps_its_finding(engine):
    src = """\
        import pytest
        import torch


        @pytest.mark.parametrize('device', [
            'cpu',
            pytest.param(
                'cuda',
                marks=pytest.mark.skipif(
                    not torch.cuda.is_available(), reason='requires CUDA support')),
        ])
        def test_active_rotated_filter(device):
            assert device
    """
    assert _worst(engine, src, "'cuda',", "mmcv/tests/test_ops/test_active_rotated_filter.py") - {"info"}
