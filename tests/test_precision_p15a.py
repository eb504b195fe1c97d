"""Precision classes of heldout18 (session 15, the lead's p15a), each on code shaped like the tree it came from."""
from __future__ import annotations

from auditor.rules import load_rules
from auditor.static import StaticEngine
from static_snippets import codes_by_line, finding_keys_by_line

ENGINE = StaticEngine(load_rules())


def test_nvml_constants_are_not_queries_but_nvml_calls_are():
    # chaiNNer backend/src/gpu.py: an architecture table keyed by NVML constants beside the real NVML calls
    src = """\
    import pynvml as nv

    _FP16_ARCH_ABILITY_MAP = {
        nv.NVML_DEVICE_ARCH_PASCAL: False,
        nv.NVML_DEVICE_ARCH_AMPERE: True,
    }

    def architecture(handle):
        try:
            return nv.nvmlDeviceGetArchitecture(handle)
        except Exception:
            return nv.NVML_DEVICE_ARCH_UNKNOWN

    def temperature(handle):
        return nv.nvmlDeviceGetTemperature(handle, nv.NVML_TEMPERATURE_GPU)
    """
    found = codes_by_line(ENGINE, src, "backend/src/gpu.py")
    assert "NPU406" in found[1]                      # the import
    assert 4 not in found and 5 not in found          # table keys
    assert "NPU406" in found[10]                      # the query
    assert 12 not in found                            # a fallback constant
    assert "NPU406" in found[15]                      # a query with a constant argument


def test_a_flag_skipped_without_cuda_gates_its_later_block():
    # nncf tests/torch/function_hook/quantization/test_transform_fn.py
    src = """\
    import pytest
    import torch

    def test_transform_fn_multiple_inputs(transform_fn, use_cuda):
        if use_cuda and not torch.cuda.is_available():
            pytest.skip("There are no available CUDA devices")
        model = ModelWithMultipleInputs()
        if use_cuda:
            model = model.cuda()
        model(*transform_fn(batch, use_cuda))

    def test_unguarded(use_cuda):
        if use_cuda:
            model = model.cuda()
    """
    found = finding_keys_by_line(ENGINE, src, "tests/torch/test_transform_fn.py")
    assert ("NPU001", "device", "error") not in found[9]
    assert ("NPU001", "device", "error") in found[14]


def test_a_test_skipped_below_two_cuda_devices_runs_on_no_ascend_machine():
    # nncf tests/torch/function_hook/test_train.py
    src = """\
    import pytest
    import torch

    @pytest.mark.skipif(torch.cuda.device_count() < 2, reason="Requires at least 2 CUDA devices")
    def test_data_parallel(wrapped_model):
        parallel_model = torch.nn.DataParallel(wrapped_model)
        parallel_model(torch.ones(4))
    """
    found = finding_keys_by_line(ENGINE, src, "tests/torch/test_train.py")
    assert found[6] and all(sev != "error" for _, _, sev in found[6])


def test_host_syncs_in_neuron_code_are_neurons_cost(tmp_path):
    # transformers-neuronx src/transformers_neuronx/decoder.py: the caller's CPU cache_ids, before the runtime's
    # own host-to-device copy
    src = """\
    import torch

    class DecoderLmHeadForSamplingNoEmbedding:
        def forward(self, cache_ids, inputs):
            for start in range(0, 128, 8):
                max_id = cache_ids.max().item()
                self.run(inputs, max_id)
    """
    neuron = codes_by_line(ENGINE, src, "src/transformers_neuronx/decoder.py")
    # the plain control moves its ids to the device: the hint needs a device origin (hq39, device_values.py)
    plain = codes_by_line(ENGINE, src.replace("cache_ids.max()", "cache_ids.cuda().max()"), "src/mylib/decoder.py")
    assert "NPU703" in plain.get(6, set())
    assert "NPU703" not in neuron.get(6, set())


def test_cuda_as_a_path_segment_is_a_folder_not_a_device():
    # nncf src/nncf/torch/quantization/extensions.py
    src = """\
    import os
    from pathlib import Path

    BASE_EXT_DIR = Path(__file__).parent / "extensions" / "src"
    EXT_SRC = [(BASE_EXT_DIR / "cuda" / "functions_cuda.cpp").as_posix()]
    OTHER = os.path.join(BASE_EXT_DIR, "cuda", "quantization.cpp")
    device = torch.device("cuda")
    """
    found = codes_by_line(ENGINE, src, "src/nncf/torch/quantization/extensions.py")
    assert "NPU003" not in found.get(5, set()) and "NPU003" not in found.get(6, set())
    assert "NPU003" in found[7]


def test_a_strategy_parser_converts_dtype_names_it_does_not_choose():
    # ChatRWKV rwkv/model.py: the user's strategy string ("cuda fp16i8") parsed into dtypes, policy (a)
    src = """\
    import torch

    def parse(si1, si):
        if si1.startswith('fp32'): si[1] = [torch.float]
        elif si1.startswith('fp16'): si[1] = [torch.float16]
        elif si1.startswith('bf16'):
            si[1] = [torch.bfloat16]
        w = torch.zeros(4, dtype=torch.float16).cuda()
    """
    found = codes_by_line(ENGINE, src, "rwkv/model.py")
    assert not found.get(5, set()) & {"NPU201", "NPU202"}
    assert not found.get(7, set()) & {"NPU201", "NPU202"}
    assert "NPU202" in found[8]


def test_an_onnx_export_functions_casts_are_the_exported_files_dtype():
    # chaiNNer backend/src/nodes/impl/pytorch/convert_to_onnx_impl.py
    src = """\
    from io import BytesIO
    import torch

    def convert_to_onnx_impl(model, device, use_half=False, opset_version=14):
        dummy_input = torch.rand(1, 3, 8, 8).to(device)
        if use_half:
            model.half()
            dummy_input = dummy_input.half()
        with BytesIO() as f:
            torch.onnx.export(model, (dummy_input,), f, opset_version=opset_version)
            return f.getvalue()

    def upscale(model, img):
        return model.half()(img)
    """
    found = codes_by_line(ENGINE, src, "backend/src/nodes/impl/pytorch/convert_to_onnx_impl.py")
    assert "NPU202" not in found.get(7, set()) and "NPU202" not in found.get(8, set())
    assert "NPU202" in found[14]
