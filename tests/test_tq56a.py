"""Precision fixes of tq56a (session 56, tuned on heldout74).

- TensorRT / TensorRT-LLM as the NVIDIA member of a per-backend deploy set (policy (k); auditor/static/backend_files.py):
  a C++ example folder named `trt/` beside `onnx/` / `openvino/`, a runtime folder named for TensorRT-LLM
  (`runtime/triton_trtllm/`) beside a Python server's, the engine's packages in the requirements of a per-engine set
  of programs, and a set member's lines behind an availability test;

Code written afresh in the shape of the trees' code, not copied; each test has its control.
"""
from __future__ import annotations

from pathlib import Path

from auditor.runner import run_static
from tests.static_snippets import line_of, write_tree


def _at(root: Path, rel: str, line: int) -> list[tuple[str, str, str]]:
    """(code, severity, context) of the findings of the whole-tree static pass on one line of `rel`."""
    return sorted((f.code, f.severity, (f.data or {}).get("context") or "")
                  for r in run_static([root], jobs=1).results if r.path == rel for f in r.findings if f.line == line)


# --- family 1: TensorRT members of per-backend deploy sets -------------------------------------------------------

TRT_CMAKE = """\
    cmake_minimum_required(VERSION 3.10)
    project(detr_trt)
    find_package(CUDA REQUIRED)
    find_package(OpenCV REQUIRED)
    set(TENSORRT_DIR /usr/local/TensorRT)
    include_directories(${TENSORRT_DIR}/include)
    add_executable(detr_trt trtExample.cpp)
    target_link_libraries(detr_trt
        nvinfer
        nvonnxparser
        ${OpenCV_LIBS}
        ${CUDA_LIBRARIES}
    )
"""
ONNX_CMAKE = """\
    cmake_minimum_required(VERSION 3.10)
    project(detr_onnx)
    find_package(OpenCV REQUIRED)
    add_executable(detr_onnx onnxExample.cpp)
    target_link_libraries(detr_onnx onnxruntime ${OpenCV_LIBS})
"""


def test_a_trt_example_folder_beside_an_onnx_one_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"tools/deploy/cpp/trt/CMakeLists.txt": TRT_CMAKE,
                                 "tools/deploy/cpp/onnx/CMakeLists.txt": ONNX_CMAKE})
    found = _at(root, "tools/deploy/cpp/trt/CMakeLists.txt", line_of(TRT_CMAKE, "${CUDA_LIBRARIES}"))
    assert found and all(severity == "info" for _, severity, _ in found)


def test_a_trt_example_folder_alone_keeps_its_error(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"tools/deploy/cpp/trt/CMakeLists.txt": TRT_CMAKE,
                                 "tools/deploy/cpp/common/README.md": "Shared helpers.\n"})
    found = _at(root, "tools/deploy/cpp/trt/CMakeLists.txt", line_of(TRT_CMAKE, "${CUDA_LIBRARIES}"))
    assert any(severity == "error" for _, severity, _ in found)


# a TensorRT-LLM checkpoint converter of a Triton runtime, and the Python member's FastAPI server
CONVERTER = """\
    import argparse

    import torch
    from tensorrt_llm._utils import release_gc
    from tensorrt_llm.models import QWenForCausalLM


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--model_dir")
        parser.add_argument("--output_dir")
        args = parser.parse_args()
        model = QWenForCausalLM.from_hugging_face(args.model_dir, dtype="bfloat16")
        model.save_checkpoint(args.output_dir)
        del model
        release_gc()


    if __name__ == "__main__":
        main()
"""
SERVER = """\
    import argparse

    import uvicorn
    from fastapi import FastAPI

    app = FastAPI()


    @app.get("/inference_sft")
    async def inference_sft(tts_text: str):
        return {"text": tts_text}


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--port", type=int, default=50000)
        uvicorn.run(app, host="0.0.0.0", port=parser.parse_args().port)
"""


def test_a_trtllm_runtime_beside_a_python_runtime_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"runtime/triton_trtllm/scripts/convert_checkpoint.py": CONVERTER,
                                 "runtime/python/fastapi/server.py": SERVER})
    found = _at(root, "runtime/triton_trtllm/scripts/convert_checkpoint.py", line_of(CONVERTER, "import release_gc"))
    assert found and all(severity == "info" for _, severity, _ in found)


def test_a_trtllm_folder_outside_a_runtime_set_keeps_its_error(tmp_path: Path) -> None:
    # the same pair under a parent that is no folder of runtimes, and a runtime folder whose sibling is no runtime
    for rel, other in (("tools/triton_trtllm/scripts/convert_checkpoint.py", "tools/python/fastapi/server.py"),
                       ("runtime/triton_trtllm/scripts/convert_checkpoint.py", "runtime/assets/server.py")):
        root = write_tree(tmp_path / rel.split("/", 1)[0] / other.split("/")[1], {rel: CONVERTER, other: SERVER})
        found = _at(root, rel, line_of(CONVERTER, "import release_gc"))
        assert any(severity == "error" for _, severity, _ in found), rel


# a detector's TensorRT inference script, one of a folder of per-engine scripts
TRT_INF = """\
    import time

    import numpy as np
    import tensorrt as trt
    import torch


    class TimeProfiler:
        def __init__(self):
            self.total = 0

        def __enter__(self):
            self.start = self.time()
            return self

        def __exit__(self, *args):
            self.total += self.time() - self.start

        def synchronize(self):
            if torch.cuda.is_available():
                torch.cuda.synchronize()

        def time(self):
            self.synchronize()
            return time.time()


    class TRTInference:
        def __init__(self, engine_path):
            self.logger = trt.Logger(trt.Logger.INFO)
            with open(engine_path, "rb") as f, trt.Runtime(self.logger) as runtime:
                self.engine = runtime.deserialize_cuda_engine(f.read())
            self.context = self.engine.create_execution_context()

        def __call__(self, blob):
            return self.context.execute_v2(list(blob.values()))
"""
ONNX_INF = """\
    import onnxruntime as ort


    def run(model_path, blob):
        sess = ort.InferenceSession(model_path)
        return sess.run(None, blob)
"""
REQUIREMENTS = "onnxruntime\ntensorrt\nopenvino\n"


def test_a_trt_members_gated_sync_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"tools/inference/trt_inf.py": TRT_INF, "tools/inference/onnx_inf.py": ONNX_INF})
    found = _at(root, "tools/inference/trt_inf.py", line_of(TRT_INF, "torch.cuda.synchronize()"))
    assert found and all(severity == "info" for _, severity, _ in found)


def test_a_trt_script_alone_keeps_its_gated_warning(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"tools/inference/trt_inf.py": TRT_INF})
    found = _at(root, "tools/inference/trt_inf.py", line_of(TRT_INF, "torch.cuda.synchronize()"))
    assert any(severity == "warning" for _, severity, _ in found)


def test_the_engine_package_of_a_per_engine_requirements_file_is_info(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"tools/inference/trt_inf.py": TRT_INF, "tools/inference/onnx_inf.py": ONNX_INF,
                                 "tools/inference/requirements.txt": REQUIREMENTS})
    found = _at(root, "tools/inference/requirements.txt", line_of(REQUIREMENTS, "tensorrt"))
    assert found and all(severity == "info" for _, severity, _ in found)


def test_the_engine_package_without_a_per_engine_set_keeps_its_error(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"tools/inference/trt_inf.py": TRT_INF,
                                 "tools/inference/requirements.txt": REQUIREMENTS})
    found = _at(root, "tools/inference/requirements.txt", line_of(REQUIREMENTS, "tensorrt"))
    assert any(severity == "error" for _, severity, _ in found)


# --- family 2: decision (x), a CUDA GradScaler whose only partner is a CUDA autocast -------------------------------

# a VL-T5-style trainer: native AMP under --fp16, apex only in the other arm
NATIVE_AMP = """\
    import torch
    from torch.cuda.amp import autocast


    class Trainer:
        def __init__(self, args, model, optim):
            self.args = args
            self.model = model.to(args.gpu)
            self.optim = optim
            if self.args.fp16 and args.native_amp:
                self.scaler = torch.cuda.amp.GradScaler()
            elif args.use_apex:
                from apex import amp
                self.model, self.optim = amp.initialize(self.model, self.optim, opt_level="O1")

        def train_step(self, batch):
            if self.args.fp16 and self.args.native_amp:
                with autocast():
                    loss = self.model(**batch)["loss"]
                self.scaler.scale(loss).backward()
                self.scaler.unscale_(self.optim)
                torch.nn.utils.clip_grad_norm_(self.model.parameters(), self.args.clip_grad_norm)
                self.scaler.step(self.optim)
                self.scaler.update()
            else:
                loss = self.model(**batch)["loss"]
                loss.backward()
                self.optim.step()
            return loss.item()
"""
# the fp16-model control: the weights are half, so the scaler's loss scaling is what keeps the step right
HALF_MODEL = NATIVE_AMP.replace("self.model = model.to(args.gpu)", "self.model = model.to(args.gpu).half()")
# the disabled-autocast control: the scaler's partner is no enabled CUDA autocast
NO_REGION = NATIVE_AMP.replace("with autocast():", "with autocast(enabled=False):")


def _scaler(src: str, tmp_path: Path) -> list[tuple[str, str, str]]:
    root = write_tree(tmp_path, {"src/trainer.py": src})
    return [f for f in _at(root, "src/trainer.py", line_of(src, "GradScaler()")) if f[0] == "NPU012"]


def test_a_scaler_whose_only_partner_is_a_cuda_autocast_is_a_warning(tmp_path: Path) -> None:
    assert _scaler(NATIVE_AMP, tmp_path) == [("NPU012", "warning", "cuda-autocast-scaler")]


def test_a_scaler_of_an_fp16_model_keeps_its_error(tmp_path: Path) -> None:
    assert [sev for _, sev, _ in _scaler(HALF_MODEL, tmp_path)] == ["error"]


def test_a_scaler_beside_a_disabled_autocast_keeps_its_error(tmp_path: Path) -> None:
    assert [sev for _, sev, _ in _scaler(NO_REGION, tmp_path)] == ["error"]


# --- family 3: arms only a torch older than any torch_npu supports takes ------------------------------------------

# a trainer choosing apex on torch < 1.6 and native AMP on newer torch
APEX_ARM = """\
    import torch
    from packaging import version

    _use_native_amp = False
    _use_apex = False

    if version.parse(torch.__version__) < version.parse("1.6"):
        from transformers.file_utils import is_apex_available
        if is_apex_available():
            from apex import amp
        _use_apex = True
    else:
        _use_native_amp = True
        from torch.cuda.amp import autocast


    class Trainer:
        def __init__(self, args, model, optim):
            self.args = args
            self.model = model
            self.optim = optim

        def step(self, loss):
            if self.args.fp16 and _use_native_amp:
                self.scaler.scale(loss).backward()
            elif self.args.fp16 and _use_apex:
                with amp.scale_loss(loss, self.optim) as scaled_loss:
                    scaled_loss.backward()
            else:
                loss.backward()


    def main(args, model, optim, loader):
        trainer = Trainer(args, model, optim)
        for batch in loader:
            trainer.step(model(batch))


    if __name__ == "__main__":
        main(*build())
"""
# the same test on a release torch_npu supports: its arm may run on Ascend
NEWER_GATE = APEX_ARM.replace('version.parse("1.6")', 'version.parse("2.1")')
# a flag the command line may also set: it is no release's alone
FLAG_SET_ELSEWHERE = APEX_ARM.replace("            self.optim = optim\n",
                                      "            self.optim = optim\n            global _use_apex\n"
                                      "            _use_apex = args.apex\n")


def _apex(src: str, needle: str, tmp_path: Path) -> list[str]:
    root = write_tree(tmp_path, {"src/caption.py": src})
    return [sev for code, sev, _ in _at(root, "src/caption.py", line_of(src, needle)) if code.startswith("NPU3")]


def test_apex_arms_only_an_unsupported_torch_takes_are_info(tmp_path: Path) -> None:
    assert _apex(APEX_ARM, "amp.scale_loss", tmp_path) == ["info"]
    assert _apex(APEX_ARM, "if is_apex_available():", tmp_path) == ["info"]


def test_apex_arms_of_a_supported_release_keep_their_warning(tmp_path: Path) -> None:
    assert "warning" in _apex(NEWER_GATE, "amp.scale_loss", tmp_path)
    assert "warning" in _apex(NEWER_GATE, "if is_apex_available():", tmp_path)


def test_a_flag_set_elsewhere_keeps_its_arms_warning(tmp_path: Path) -> None:
    assert "warning" in _apex(FLAG_SET_ELSEWHERE, "amp.scale_loss", tmp_path)


# the torch.amp spelling: the scaler's "cuda" beside a `torch.autocast("cuda")` region
AMP_LOOP = """\
    import torch


    def train(model, loader, optimizer, use_amp=True):
        scaler = torch.amp.GradScaler("cuda", enabled=use_amp)
        for images, targets in loader:
            with torch.autocast("cuda", dtype=torch.float16, enabled=use_amp):
                loss = model(images, targets)
            optimizer.zero_grad()
            scaler.scale(loss).backward()
            scaler.step(optimizer)
            scaler.update()
"""


def test_the_torch_amp_scalers_cuda_beside_a_cuda_autocast_is_a_warning(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"engine.py": AMP_LOOP})
    found = [f for f in _at(root, "engine.py", line_of(AMP_LOOP, "GradScaler(")) if f[0] == "NPU003"]
    assert found == [("NPU003", "warning", "cuda-autocast-scaler")]
    half = AMP_LOOP.replace("loss = model(images, targets)", "loss = model.half()(images.half(), targets)")
    root = write_tree(tmp_path / "half", {"engine.py": half})
    assert [f[1] for f in _at(root, "engine.py", line_of(half, "GradScaler(")) if f[0] == "NPU003"] == ["error"]


# a TensorRT vocoder module of the TensorRT-LLM runtime and the runtime's own script that uses it
TOKEN2WAV = """\
    import torch


    def convert_onnx_to_trt(trt_model, onnx_model, fp16):
        import tensorrt as trt
        logger = trt.Logger(trt.Logger.INFO)
        builder = trt.Builder(logger)
        network = builder.create_network(1 << int(trt.NetworkDefinitionCreationFlag.EXPLICIT_BATCH))
        config = builder.create_builder_config()
        if fp16:
            config.set_flag(trt.BuilderFlag.FP16)
        with open(trt_model, "wb") as f:
            f.write(builder.build_serialized_network(network, config))


    class Token2Wav(torch.nn.Module):
        def __init__(self, model_dir, device_id=0):
            super().__init__()
            self.device = torch.device(f"cuda:{device_id}")
            self.stream = torch.cuda.Stream(self.device)
            convert_onnx_to_trt(f"{model_dir}/flow.plan", f"{model_dir}/flow.onnx", True)
"""
OFFLINE = """\
    import argparse

    from token2wav import Token2Wav


    def main():
        parser = argparse.ArgumentParser()
        parser.add_argument("--model_dir")
        args = parser.parse_args()
        model = Token2Wav(args.model_dir)
        print(model)


    if __name__ == "__main__":
        main()
"""


def test_a_set_members_own_files_keep_their_port_together_notes(tmp_path: Path) -> None:
    root = write_tree(tmp_path, {"runtime/triton_trtllm/token2wav.py": TOKEN2WAV,
                                 "runtime/triton_trtllm/offline_inference.py": OFFLINE,
                                 "runtime/python/fastapi/server.py": SERVER})
    member = _at(root, "runtime/triton_trtllm/token2wav.py", line_of(TOKEN2WAV, "torch.cuda.Stream"))
    assert member and all(severity == "info" for _, severity, _ in member)
    uses = _at(root, "runtime/triton_trtllm/offline_inference.py", line_of(OFFLINE, "model = Token2Wav("))
    assert [(code, severity) for code, severity, _ in uses] == [("NPU320", "info")]
