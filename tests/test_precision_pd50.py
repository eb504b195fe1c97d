"""pd50 (session 31, TUNED on heldout33 and dev30): general false families of heldout33, each on code shaped like the
tree it came from (Long-VITA, rvc-cli / UVR, MSST-WebUI, ultimate-rvc, ai-voice-cloning, OpenAvatarChat), with a
control that keeps its severity."""
from __future__ import annotations

from tests.static_snippets import severities_at, write_tree

# -- a file whose Ascend copy runs under transfer_to_npu (Long-VITA's megatron / modellink packages) -----------------
ADAPTOR = """\
    import torch_npu
    from torch_npu.contrib import transfer_to_npu  # noqa: F401
"""

SERVER = """\
    import torch
    {adaptor}

    def choose(prompt):
        choice = torch.tensor(1, dtype=torch.long, device='cuda')
        return choice + torch.cuda.current_device()
"""

LAUNCH = """\
    #!/bin/bash
    export CUDA_DEVICE_MAX_CONNECTIONS=1
    torchrun --nproc_per_node 8 {entry} --distributed-backend nccl
"""

PRETRAIN = """\
    import long_vita_modellink.megatron_adaptor  # noqa: F401
    from long_vita_modellink.tools.server import choose


    if __name__ == "__main__":
        choose("hi")
"""


def _pair(tmp_path, gpu_rel="long_vita_megatron/tools/server.py"):
    files = {"long_vita_modellink/__init__.py": "", "long_vita_modellink/megatron_adaptor.py": ADAPTOR,
             "long_vita_modellink/tools/__init__.py": "",
             "long_vita_modellink/tools/server.py": SERVER.format(adaptor=""),
             "long_vita_megatron/__init__.py": "", "long_vita_megatron/tools/__init__.py": "",
             gpu_rel: SERVER.format(adaptor=""),
             "pretrain_long_vita.py": PRETRAIN,
             "scripts/modellink/qwen25/finetune.sh": LAUNCH.format(entry="pretrain_long_vita.py"),
             "scripts/megatron/qwen25/finetune.sh": LAUNCH.format(entry="pretrain_long_vita_megatron.py"),
             "pretrain_long_vita_megatron.py": "from long_vita_megatron.tools.server import choose\n\n\n"
                                               "if __name__ == '__main__':\n    choose('hi')\n"}
    return write_tree(tmp_path / "lv", files)


def test_the_cuda_copy_of_a_file_whose_twin_runs_under_the_shim_is_info(tmp_path):
    root = _pair(tmp_path)
    src = SERVER.format(adaptor="")
    assert severities_at(root, "long_vita_modellink/tools/server.py", src, "device='cuda'") == \
        {("info", "transfer-to-npu")}
    assert severities_at(root, "long_vita_megatron/tools/server.py", src, "device='cuda'") == {("info", "npu-twin")}
    launch = LAUNCH.format(entry="pretrain_long_vita_megatron.py")
    assert severities_at(root, "scripts/megatron/qwen25/finetune.sh", launch, "nccl") == {("info", "npu-twin")}


def test_the_one_file_of_that_name_in_the_sibling_folder_is_its_twin(tmp_path):
    """`tasks/inference/infer_base.py` beside `tasks/inference/text_generation/infer_base.py`: one file of the name."""
    root = _pair(tmp_path, "long_vita_megatron/serving/server.py")
    assert severities_at(root, "long_vita_megatron/serving/server.py", SERVER.format(adaptor=""),
                         "device='cuda'") == {("info", "npu-twin")}


def test_a_file_without_a_twin_under_the_shim_keeps_its_error(tmp_path):
    """Control: a CUDA file whose sibling folder holds no copy of it (or a copy that does not run under the shim)."""
    root = _pair(tmp_path, "long_vita_megatron/tools/other_server.py")
    src = SERVER.format(adaptor="")
    assert ("error", "") in severities_at(root, "long_vita_megatron/tools/other_server.py", src, "device='cuda'")
    plain = write_tree(tmp_path / "plain", {"stable/tools/server.py": src, "nightly/tools/server.py": src})
    assert ("error", "") in severities_at(plain, "stable/tools/server.py", src, "device='cuda'")


# -- `device.type not in ["cuda", "cpu"]`: the branch kept for other devices (UVR's STFT) ---------------------------
STFT = """\
    import torch


    def spectro(x, n_fft=512):
        device_type = x.device.type
        is_other_gpu = not device_type in ["cuda", "cpu"]
        if is_other_gpu:
            x = x.cpu()
        return torch.stft(x, n_fft, window=torch.hann_window(n_fft).to(x), return_complex=True)


    class STFT:
        def inverse(self, input_tensor):
            is_non_standard_device = not input_tensor.device.type in ["cuda", "cpu"]
            if is_non_standard_device:
                input_tensor = input_tensor.cpu()
            return torch.istft(input_tensor, 512)

        def autocast(self, device):
            if device.type not in ("cuda", "cpu"):
                return None
            return torch.autocast(device.type)


    def strict(t):
        if t.device.type not in ("cuda", "cpu"):
            raise ValueError("cuda or cpu tensors only")
        return t


    def amp_type(dev):
        return dev.type if dev.type in ["cuda", "cpu"] else "cuda"
"""


def test_a_device_type_tested_against_cuda_and_cpu_for_a_fallback_is_a_warning(tmp_path):
    root = write_tree(tmp_path / "uvr", {"stft.py": STFT})
    assert severities_at(root, "stft.py", STFT, "is_other_gpu = not") == {("warning", "")}
    assert severities_at(root, "stft.py", STFT, "is_non_standard_device = not") == {("warning", "")}
    assert severities_at(root, "stft.py", STFT, 'if device.type not in ("cuda", "cpu"):') == {("warning", "")}


def test_a_cuda_and_cpu_test_that_raises_or_picks_a_value_keeps_its_error(tmp_path):
    """Controls: the other-device branch raises (it fails on Ascend), or a conditional expression answers "cuda"."""
    root = write_tree(tmp_path / "uvr", {"stft.py": STFT})
    assert severities_at(root, "stft.py", STFT, 'if t.device.type not in ("cuda", "cpu"):') == {("error", "")}
    assert ("error", "") in severities_at(root, "stft.py", STFT, 'return dev.type if dev.type in')


# -- a device the code built compared with `torch.device("cuda")` (MSST-WebUI's separator) ---------------------------
SEPARATOR = """\
    import gc

    import torch


    class Separator:
        def __init__(self):
            self.torch_device = torch.device("cpu")
            if torch.cuda.is_available():
                self.torch_device = torch.device("cuda")

        def del_cache(self, x):
            gc.collect()
            if self.torch_device == torch.device("cuda"):
                torch.cuda.empty_cache()
            if x.device == torch.device("cuda"):
                print("on the GPU")
"""


def test_a_built_device_compared_with_torch_device_cuda_is_a_warning(tmp_path):
    root = write_tree(tmp_path / "msst", {"vr_infer.py": SEPARATOR})
    assert severities_at(root, "vr_infer.py", SEPARATOR, 'if self.torch_device == torch.device("cuda")') == \
        {("warning", "")}


def test_a_tensor_device_compared_with_torch_device_cuda_keeps_its_error(tmp_path):
    """Control: `x.device` is the runtime's: on Ascend the test answers for CUDA."""
    root = write_tree(tmp_path / "msst", {"vr_infer.py": SEPARATOR})
    assert ("error", "") in severities_at(root, "vr_infer.py", SEPARATOR, 'if x.device == torch.device("cuda")')


# -- loops over the CUDA device count, autocast's keyword device type (ai-voice-cloning, ultimate-rvc) ---------------
DEVICES = """\
    import torch

    devices = [f"cuda:{i} => {torch.cuda.get_device_name(i)}" for i in range(torch.cuda.device_count())]
    print(devices)


    def names():
        out = []
        for i in range(torch.cuda.device_count()):
            out.append(torch.cuda.get_device_properties(i).name)
        out.append(torch.cuda.get_device_name(0))
        return out


    def train(device, train_dtype, model, x):
        use_amp = device.type == "cuda" and train_dtype == torch.float16
        with torch.autocast(device_type="cuda", enabled=use_amp, dtype=train_dtype):
            return model(x)
"""


def test_code_in_a_loop_over_the_cuda_device_count_is_a_warning(tmp_path):
    root = write_tree(tmp_path / "avc", {"list_devices.py": DEVICES})
    assert ("warning", "cuda-available-branch") in severities_at(root, "list_devices.py", DEVICES, "=> {torch.cuda")
    assert severities_at(root, "list_devices.py", DEVICES, "get_device_properties(i)") == \
        {("warning", "cuda-available-branch")}
    assert severities_at(root, "list_devices.py", DEVICES, 'device_type="cuda", enabled=use_amp') >= \
        {("warning", "cuda-available-branch")}


def test_the_device_count_itself_and_code_after_the_loop_keep_their_error(tmp_path):
    """Controls: the count is what answers 0 on Ascend; a call after the loop runs there."""
    root = write_tree(tmp_path / "avc", {"list_devices.py": DEVICES})
    assert ("error", "") in severities_at(root, "list_devices.py", DEVICES, "for i in range(torch.cuda.device_count()):")
    assert severities_at(root, "list_devices.py", DEVICES, "get_device_name(0)") == {("error", "")}


# -- a CUDA check whose body only warms up on dummy inputs (OpenAvatarChat's feature-extractor thread) ---------------
WORKER = """\
    import threading
    import time

    import numpy as np
    import torch


    class Processor:
        def _feature_extractor_worker(self):
            if torch.cuda.is_available():
                t0 = time.time()
                warmup_sr = 16000
                dummy_audio = np.zeros(warmup_sr, dtype=np.float32)
                self._avatar.extract_whisper_feature(dummy_audio, warmup_sr)
                torch.cuda.synchronize()
                t1 = time.time()
                print(f"warmup {threading.get_ident()} {(t1 - t0) * 1000:.1f} ms")
            while not self._stop.is_set():
                t0 = time.time()
                item = self._queue.get(timeout=1)
                self._avatar.extract_whisper_feature(item, 16000)
                t1 = time.time()
                print(t1 - t0)

        def place(self):
            if torch.cuda.is_available():
                example = torch.zeros(1, 3)
                self.model = self.model.cuda()
                self.model(example)

        def timed(self):
            if torch.cuda.is_available():
                start = time.time()
                dummy = np.zeros(16000)
                self._avatar.extract_whisper_feature(dummy)
            return time.time() - start
"""


def test_a_cuda_check_that_only_warms_up_on_dummy_inputs_is_a_warning(tmp_path):
    root = write_tree(tmp_path / "oac", {"processor.py": WORKER})
    lines = [i for i, text in enumerate(WORKER.splitlines(), 1) if text.strip() == "if torch.cuda.is_available():"]
    from auditor.runner import run_static

    run = run_static([root], jobs=1)
    sev = {f.line: f.severity for r in run.results for f in r.findings if f.symbol == "torch.cuda.is_available"}
    assert sev[lines[0]] == "warning"
    # controls: a body that also places the model, and one whose local is read after it (`start`)
    assert sev[lines[1]] == "error" and sev[lines[2]] == "error"


# -- a command-line application (rvc-cli's `rvc_cli.py`) -------------------------------------------------------------
CLI = """\
    import argparse

    from rvc.infer.infer import convert


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--input")
        args = parser.parse_args()
        convert(args.input)


    if __name__ == "__main__":
        main()
"""

INFER = """\
    import torch


    def convert(path):
        return torch.load(path, map_location="cpu")
"""

CONFIG = """\
    import torch


    def get_number_of_gpus():
        if torch.cuda.is_available():
            return torch.cuda.device_count()
        return 0
"""


def test_a_helper_no_part_of_a_cli_application_calls_is_unreached(tmp_path):
    root = write_tree(tmp_path / "rvc-cli", {"rvc_cli.py": CLI, "rvc/infer/infer.py": INFER,
                                             "rvc/configs/config.py": CONFIG})
    assert severities_at(root, "rvc/configs/config.py", CONFIG, "if torch.cuda.is_available()") == \
        {("info", "unreached")}


def test_a_script_not_named_for_a_cli_is_no_application(tmp_path):
    """Control: a research repository's `train.py` with argparse is no application: its helpers keep their error."""
    root = write_tree(tmp_path / "research", {"train.py": CLI, "rvc/infer/infer.py": INFER,
                                              "rvc/configs/config.py": CONFIG})
    assert severities_at(root, "rvc/configs/config.py", CONFIG, "if torch.cuda.is_available()") == {("error", "")}


# -- `docker run ... --workdir $CPATH --ipc host ... image` (ai-voice-cloning's train-docker.sh) ---------------------
DOCKER = """\
    #!/bin/bash
    CPATH="/home/user/ai-voice-cloning"
    docker run --rm --gpus all \\
        --workdir $CPATH \\
        --ipc host \\
        -it ai-voice-cloning python3 ./src/train.py
"""


def test_an_option_value_held_in_a_variable_is_not_the_next_word(tmp_path):
    from auditor.runner import run_static

    root = write_tree(tmp_path / "avc", {"train-docker.sh": DOCKER})
    images = {f.symbol for r in run_static([root], jobs=1).results for f in r.findings if f.code == "NPU091"}
    assert images == {"ai-voice-cloning"}


def test_a_built_device_compared_in_an_assert_keeps_its_error(tmp_path):
    """Control: `assert device == torch.device("cuda")` checks what a function returned (CTGAN's unit test)."""
    src = "import torch\n\n\ndef test_device(make):\n    device = make()\n    assert device == torch.device('cuda')\n"
    root = write_tree(tmp_path / "t", {"test_utils.py": src})
    assert ("error", "") in severities_at(root, "test_utils.py", src, "assert device ==")
