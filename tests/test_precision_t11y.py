"""t11y (issue 11, session 14; TUNED on heldout16 after its blind run): a script's own `--use_gpu` is no scheduler
request, host values of Triton-server inputs, `.item()` in a `raise` message, a parameter that shadows the module's
device, uses of a gated device choice, test gates (vLLM capability tests, tests marked skip, the helpers and
parametrize values that feed only such tests), Inductor's `config.triton`, SDPA flag switches, CPU-architecture
images, a torch.nn base whose forward is replaced, ONNX-Runtime-only device strings, derived CUDA-graph switches,
backend lists that allow MATH, conversion scripts' dtype hints. Realistic code in the shapes met there (speaker
recipes, a Triton python backend, vLLM kernel tests, gpt-fast style generation); no file is copied."""
from __future__ import annotations

import json
import textwrap

from auditor.cli import main
from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine
from static_snippets import write_tree

ENGINE = StaticEngine(load_rules())


def _found(src: str, rel: str = "train.py") -> list[tuple[int, str, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), rel)
    return [(f.line, f.code, f.severity) for f in result.findings]


def _codes_at(found, line: int) -> dict[str, str]:
    return {code: sev for ln, code, sev in found if ln == line}


RECIPE = """\
    #!/bin/bash
    set -e
    . ./path.sh || exit 1
    exp_dir=exp/eres2net
    gpus="0 1 2 3"
    if [ ${stage} -le 3 ] && [ ${stop_stage} -ge 3 ]; then
      echo "Stage3: Training the speaker model..."
      num_gpu=$(echo $gpus | awk -F ' ' '{print NF}')
      torchrun --nproc_per_node=$num_gpu speakerlab/bin/train.py --config conf/eres2net.yaml --gpu $gpus \\
               --data $data/train/train.csv --exp_dir $exp_dir
    fi
    if [ ${stage} -le 4 ] && [ ${stop_stage} -ge 4 ]; then
      torchrun --nproc_per_node=8 speakerlab/bin/extract.py --exp_dir $exp_dir \\
               --data $data/test/wav.scp --use_gpu --gpu $gpus
      python local/predict.py --exp_dir $exp_dir --use_gpu
    fi
    srun --gres=gpu:8 python train.py --gpus 8
    """


def test_a_scripts_own_use_gpu_flag_is_no_scheduler_request():
    found = _found(RECIPE, "egs/voxceleb/sv-eres2net/run.sh")
    npu028 = sorted(ln for ln, code, _ in found if code == "NPU028")
    assert npu028 == [17], found         # srun's `--gres=gpu:8` stays; the scripts' `--use_gpu` / `--gpus` go


def test_a_scheduler_request_on_a_job_line_still_counts():
    found = _found("#!/bin/bash\n#SBATCH --gpus=8\nsbatch --gpus=4 job.sh\nCMD=\"python x.py --use_gpu\"\n",
                   "launch.sh")
    assert sorted(ln for ln, code, _ in found if code == "NPU028") == [2, 3], found


TRITON_BACKEND = """\
    import json

    import numpy as np
    import torch
    import triton_python_backend_utils as pb_utils


    class TritonPythonModel:
        def initialize(self, args):
            self.device = torch.device("cuda")

        def execute(self, requests):
            responses = []
            for request in requests:
                wav = pb_utils.get_input_tensor_by_name(request, "reference_wav").as_numpy()
                wav_len = pb_utils.get_input_tensor_by_name(request, "reference_wav_len").as_numpy().item()
                wav = torch.from_numpy(wav[:, :wav_len]).to(self.device)
                tokens = self.tokenizer(wav)
                responses.append(pb_utils.InferenceResponse(output_tensors=[tokens]))
                print(tokens.sum().item())
            return responses
    """


def test_triton_request_inputs_read_with_as_numpy_are_host_values():
    found = _found(TRITON_BACKEND, "model_repo/audio_tokenizer/1/model.py")
    assert "NPU703" not in _codes_at(found, 16), found
    assert _codes_at(found, 20).get("NPU703") == "info", found      # a device value read each request stays


TRAIN_LOOP = """\
    import math

    import torch


    def train(epoch, model, train_loader, optimizer, logger):
        for i, (x, y) in enumerate(train_loader):
            x, y = x.cuda(non_blocking=True), y.cuda(non_blocking=True)
            loss = model(x, y)
            if not math.isfinite(loss.item()):
                raise Exception("Loss is {}, stopping training".format(loss.item()))
            optimizer.zero_grad()
            loss.backward()
            optimizer.step()
    """


def test_item_in_a_raise_message_is_no_per_step_sync():
    found = _found(TRAIN_LOOP)
    assert _codes_at(found, 10).get("NPU703") == "info", found       # the isfinite test syncs every step
    assert "NPU703" not in _codes_at(found, 11), found               # the message runs once, as the run stops


GENERATOR = """\
    from typing import Dict, Optional

    import torch
    from torch import nn


    class HiFTGenerator(nn.Module):
        def forward(self, batch: dict, device: torch.device, other=None) -> Dict[str, Optional[torch.Tensor]]:
            speech_feat = batch['speech_feat'].transpose(1, 2).to(device)
            return self.decode(speech_feat.to(other))


    def to_target(x):
        return x.to(other)


    if __name__ == '__main__':
        model = HiFTGenerator()
        device = 'cuda' if torch.cuda.is_available() else 'cpu'
        model.to(device)
        mel = torch.rand(1, 80, 300).to(device)
        pred = model.inference(mel)
        other = 'cuda'
        x = torch.zeros(3).to(other)
    """


def test_a_parameter_shadows_the_module_device_and_uses_of_a_gated_choice_go():
    found = _found(GENERATOR, "cosyvoice/hifigan/generator.py")
    assert "NPU003" not in _codes_at(found, 9) and "NPU003" not in _codes_at(found, 10), found   # parameters
    assert _codes_at(found, 19).get("NPU003") == "warning", found    # the gated choice is reported where it is made
    assert "NPU003" not in _codes_at(found, 20) and "NPU003" not in _codes_at(found, 21), found
    assert _codes_at(found, 23).get("NPU003") == "error", found      # an ungated choice keeps its error
    # its uses, in a function reading the module's `other` or below it, are not findings (lead decision 4, session 21)
    assert "NPU003" not in _codes_at(found, 14) and "NPU003" not in _codes_at(found, 24), found


ARGPARSE = """\
    import argparse

    import torch

    default_device = 'cuda' if torch.cuda.is_available() else 'cpu'


    def main():
        parser = argparse.ArgumentParser(description='Your CLI description.')
        parser.add_argument('--device', type=str, default=default_device, help='Device to use')
        args = parser.parse_args()
        return args
    """


def test_an_argparse_default_that_uses_the_gated_module_choice_is_not_reported_again():
    found = _found(ARGPARSE, "generate.py")
    assert _codes_at(found, 5).get("NPU003") == "warning", found
    assert "NPU003" not in _codes_at(found, 10), found


MACHETE_TEST = """\
    import pytest
    import torch

    from vllm import _custom_ops as ops
    from vllm.platforms import current_platform

    CUDA_DEVICES = [
        f"cuda:{i}" for i in range(1 if torch.cuda.device_count() == 1 else 2)
    ]

    IS_SUPPORTED_BY_GPU = current_platform.has_device_capability(90)


    @pytest.mark.skipif(not IS_SUPPORTED_BY_GPU, reason="Machete is not supported on this GPU type.")
    @pytest.mark.parametrize("device", CUDA_DEVICES)
    def test_machete_devices(device: str):
        a = torch.randn((64, 64), device=device, dtype=torch.float16)
        ops.machete_mm(a=a, b_q=a)


    @pytest.mark.parametrize("m", [2, 64])
    @pytest.mark.skipif(
        (lambda x: x is None or not ops.cutlass_group_gemm_supported(x.to_int()))(
            current_platform.get_device_capability()),
        reason="Grouped gemm is not supported on this GPU type.")
    def test_cutlass_moe_8_bit_no_graph(m: int):
        score = torch.randn((m, 8), device="cuda", dtype=torch.half)


    def test_plain():
        x = torch.randn(3, device="cuda")
    """


def test_vllm_capability_gates_and_the_parametrize_values_they_feed():
    found = _found(MACHETE_TEST, "tests/kernels/quantization/test_machete_mm.py")
    assert _codes_at(found, 8).get("NPU003") == "warning", found     # feeds only the capability-gated test
    assert _codes_at(found, 27).get("NPU003") == "warning", found     # skipped where there is no capability
    assert _codes_at(found, 31).get("NPU003") == "error", found      # an ungated test keeps its error


SKIPPED_WORKERS = """\
    import pytest
    import torch
    import torch.distributed as dist


    def cpu_worker(rank, world_size):
        data = torch.tensor([rank])
        dist.all_reduce(data)


    def gpu_worker(rank, world_size):
        torch.cuda.set_device(rank)
        data = torch.tensor([rank]).cuda()
        dist.all_reduce(data)


    def broadcast_worker(rank):
        return torch.zeros(1).cuda()


    @pytest.mark.skip(reason="This test is flaky and prone to hang.")
    @pytest.mark.parametrize("worker", [cpu_worker, gpu_worker])
    def test_stateless_process_group(worker):
        worker(0, 1)


    def test_broadcast():
        broadcast_worker(0)
    """


def test_a_helper_reached_only_from_a_skipped_test_runs_nowhere():
    found = _found(SKIPPED_WORKERS, "tests/distributed/test_utils.py")
    assert _codes_at(found, 13).get("NPU001") == "warning", found
    assert _codes_at(found, 18).get("NPU001") == "error", found      # reached from a test that runs


GPT_FAST = """\
    import torch
    import torch._inductor.config

    torch._inductor.config.coordinate_descent_tuning = True
    torch._inductor.config.triton.unique_kernel_names = True
    torch._inductor.config.triton.cudagraphs = True
    torch._inductor.config.fx_graph_cache = True


    def prefill(model, x, input_pos):
        with torch.backends.cuda.sdp_kernel(enable_flash=False, enable_mem_efficient=False, enable_math=True):
            logits = model(x, input_pos)
        return logits


    def main():
        torch._inductor.config.triton.cudagraph_trees = False  # Bug with cudagraph trees in this case
    """


def test_inductor_config_is_no_triton_kernel_and_sdp_flags_run():
    found = _found(GPT_FAST, "generate.py")
    assert not [f for f in found if f[1] == "NPU373"], found
    assert _codes_at(found, 11).get("NPU349") == "warning", found


def test_an_ibm_z_image_is_another_backends_file(tmp_path):
    docker = ("FROM registry.access.redhat.com/ubi9/ubi-minimal:latest AS openblas-builder\n"
              "RUN pip install torch==2.7.0 --index-url https://download.pytorch.org/whl/cpu\n"
              'ENTRYPOINT ["python", "-m", "vllm.entrypoints.openai.api_server"]\n')
    root = write_tree(tmp_path / "srv", {"docker/Dockerfile.s390x": docker, "docker/Dockerfile": docker})
    run = run_static([root], jobs=1)
    by_path = {r.path: r.findings for r in run.results}
    assert not by_path.get("docker/Dockerfile.s390x"), by_path.get("docker/Dockerfile.s390x")
    assert by_path.get("docker/Dockerfile"), "the default image is still read"


CONFORMER = """\
    import copy

    import torch
    from torch import nn


    class ConformerEncoder(nn.TransformerEncoder):
        def __init__(self, encoder_layer: nn.Module, num_layers: int) -> None:
            super().__init__(encoder_layer=encoder_layer, num_layers=num_layers)

        def forward(self, src, pos_emb, mask=None):
            output = src
            for mod in self.layers:
                output = mod(output, pos_emb, src_mask=mask)
            return output


    class Encoder(nn.TransformerEncoder):
        pass


    enc = nn.TransformerEncoder(nn.TransformerEncoderLayer(256, 4), 6)
    """


def test_a_base_whose_forward_is_replaced_gets_no_coverage_finding(tmp_path, capsys):
    root = write_tree(tmp_path / "asr", {"conformer.py": CONFORMER})
    main([str(root / "conformer.py"), "--format", "json", "--no-cache", "--fail-on", "never"])
    lines = {f["line"] for f in json.loads(capsys.readouterr().out)["findings"] if f["code"] in ("NPU501", "NPU502")}
    assert lines == {18, 22}       # the subclass that keeps the base's forward and the plain use stay


FACE_QUALITY = """\
    import os

    import cv2
    import numpy as np
    import onnxruntime


    class FaceQualityAssess:
        def __init__(self, onnx_dir, device='cpu', device_id=0):
            onnx_file_name = os.path.join(onnx_dir, 'fqa.onnx')
            self.ort_net = self.create_net(onnx_file_name, device, device_id)

        def create_net(self, onnx_file_name, device='cpu', device_id=0):
            options = onnxruntime.SessionOptions()
            providers = ['CPUExecutionProvider']
            if device == 'cuda':
                providers.insert(0, ('CUDAExecutionProvider', {'device_id': device_id}))
            return onnxruntime.InferenceSession(onnx_file_name, options, providers=providers)


    if __name__ == '__main__':
        predictor = FaceQualityAssess('pretrained_models', 'cuda', '0')
        print(predictor)
    """


def test_a_device_string_in_an_onnxruntime_only_file_picks_a_provider():
    found = _found(FACE_QUALITY, "local/vision_tools/face_quality_assessment.py")
    assert _codes_at(found, 22).get("NPU003") == "warning", found
    with_torch = FACE_QUALITY.replace("import onnxruntime\n", "import onnxruntime\n    import torch\n", 1)
    assert _codes_at(_found(with_torch, "m.py"), 23).get("NPU003") == "error"


SPEC_DECODE = """\
    import torch


    class EagleProposer:
        def __init__(self, vllm_config, device):
            self.use_cuda_graph = (self.vllm_config.compilation_config.level
                                   == CompilationLevel.PIECEWISE and
                                   not self.vllm_config.model_config.enforce_eager)
            self.enable_cuda_graph = args.use_gpu and not args.eager
    """


def test_a_cuda_graph_switch_derived_from_neutral_settings():
    found = _found(SPEC_DECODE, "vllm/v1/spec_decode/eagle.py")
    assert "NPU038" not in _codes_at(found, 6), found
    assert _codes_at(found, 9).get("NPU038") == "warning", found


AUDIO_ATTENTION = """\
    import torch


    def attend(q, k, v, attn_mask, dropout_rate):
        with torch.nn.attention.sdpa_kernel([
                torch.nn.attention.SDPBackend.FLASH_ATTENTION,
                torch.nn.attention.SDPBackend.EFFICIENT_ATTENTION,
                torch.nn.attention.SDPBackend.MATH,
                torch.nn.attention.SDPBackend.CUDNN_ATTENTION,
        ]):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v, attn_mask=attn_mask,
                                                                    dropout_p=dropout_rate)


    def fast(q, k, v):
        with torch.nn.attention.sdpa_kernel([torch.nn.attention.SDPBackend.FLASH_ATTENTION]):
            return torch.nn.functional.scaled_dot_product_attention(q, k, v)
    """


def test_a_backend_list_that_allows_math_names_no_cuda_only_backend():
    found = _found(AUDIO_ATTENTION, "models/audio_utils.py")
    math_list = [f for f in found if f[1] == "NPU350" and f[0] < 15]
    assert math_list and all(sev == "info" for _, _, sev in math_list), found    # worth knowing, fails nothing
    assert _codes_at(found, 16).get("NPU350") == "error", found


CONVERT = """\
    import argparse
    import os

    import torch
    from transformers import AutoConfig, AutoModelForCausalLM


    def get_args():
        parser = argparse.ArgumentParser(description="Convert the LLM part to a HuggingFace checkpoint")
        parser.add_argument("--model-dir", type=str, required=True)
        parser.add_argument("--dtype", type=str, default="bfloat16", choices=["float16", "bfloat16", "float32"])
        return parser.parse_args()


    def main():
        args = get_args()
        dtype = {"float16": torch.float16, "bfloat16": torch.bfloat16, "float32": torch.float32}[args.dtype]
        config = AutoConfig.from_pretrained(args.model_dir)
        model = AutoModelForCausalLM.from_config(config, torch_dtype=dtype)
        model.load_state_dict(torch.load(os.path.join(args.model_dir, "llm.pt"), map_location="cpu"))
        model.save_pretrained(os.path.join(args.model_dir, "hf_merged"))


    if __name__ == "__main__":
        main()
    """


def test_dtype_hints_of_a_host_only_conversion_script():
    assert not [f for f in _found(CONVERT, "scripts/convert_llm_to_hf.py") if f[1] == "NPU201"]
    on_device = CONVERT.replace('model.save_pretrained', 'model.to("cuda")\n        model.save_pretrained', 1)
    assert [f for f in _found(on_device, "scripts/convert_llm_to_hf.py") if f[1] == "NPU201"]
    assert [f for f in _found(CONVERT, "scripts/llm_to_hf.py") if f[1] == "NPU201"]
