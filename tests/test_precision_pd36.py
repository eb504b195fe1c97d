"""Precision fix of pd36 (session 26, issue 11; heldout30 TUNED): host values for the host-sync hint (NPU703,
auditor/static/host_values.py and host_scopes._HostFlow). Code written afresh in the shape of whisper's decoding /
transcribe (a `.cpu()` rebinding at the top of a method, a CPU `torch.tensor(result.tokens)` beside a nested helper
with a parameter of the same name, an `if i == 0` branch of the decode loop), a LIBERO evaluation loop
(`actions = actions.cpu().numpy()` after the policy's call), an ultralytics OBB merge (`bbox = torch.tensor(bbox)`)
and LeRobot's metadata buffer (`v.tolist() if isinstance(v, np.ndarray) else v`); each class has a control where
the tensor is on the device, which keeps its finding."""
from __future__ import annotations

import pytest

from auditor.static.engine import StaticEngine
from auditor.runner import run_static
from tests.static_snippets import run_values_by_line, findings_by_line, line_of, write_tree


@pytest.fixture(scope="module")
def engine():
    from auditor.rules import load_rules
    return StaticEngine(load_rules())


def _codes(engine, src, needle, rel="pkg/mod.py"):
    return {f.code for f in findings_by_line(engine, src, rel).get(line_of(src, needle), [])}


FINALIZE = """\
    import numpy as np
    import torch


    class BeamSearchDecoder:
        def finalize(self, preceding_tokens, sum_logprobs):
            sum_logprobs = sum_logprobs.cpu()
            for i, sequences in enumerate(self.finished_sequences):
                for j in list(np.argsort(sum_logprobs[i]))[::-1]:
                    sequences[j] = sum_logprobs[i][j].item()
            sum_logprobs: list = [list(s.values()) for s in self.finished_sequences]
            return sum_logprobs

        def finalize_on_device(self, preceding_tokens, sum_logprobs):
            for i, sequences in enumerate(self.finished_sequences):
                for j in range(self.beam_size):
                    sequences[j] = float(sum_logprobs[i][j].item())

        def step(self, tokens, audio_features):
            logprobs = self.model.decoder(tokens, audio_features).log_softmax(dim=-1)
            return self.finalize_on_device(tokens, logprobs)
"""


def test_cpu_rebinding_at_the_top_of_a_method_is_a_host_value(engine):
    assert "NPU703" not in _codes(engine, FINALIZE, "sequences[j] = sum_logprobs[i][j].item()")  # (the first method)


def test_control_the_parameter_left_on_the_device_keeps_its_hint(engine):
    assert "NPU703" in _codes(engine, FINALIZE, "sequences[j] = float(sum_logprobs[i][j].item())")


def test_a_rebinding_in_the_loop_does_not_hide_a_device_value(engine):
    src = """\
    import torch


    def run(model, x, steps):
        total = model(x)
        for _ in range(steps):
            total = total + model(x)
            print(total.item())
    """
    assert "NPU703" in _codes(engine, src, "print(total.item())")


TRANSCRIBE = """\
    import torch


    def transcribe(model, mel, tokenizer):
        all_segments = []

        def new_segment(*, start, end, tokens):
            tokens = tokens.tolist()
            return {"start": start, "end": end, "tokens": tokens}

        seek = 0
        while seek < mel.shape[-1]:
            result = model.decode(mel[:, seek:seek + 3000])
            tokens = torch.tensor(result.tokens)
            timestamp_tokens: torch.Tensor = tokens.ge(tokenizer.timestamp_begin)
            single_timestamp_ending = timestamp_tokens[-2:].tolist() == [False, True]
            consecutive = torch.where(timestamp_tokens[:-1] & timestamp_tokens[1:])[0]
            for current_slice in consecutive.tolist():
                sliced_tokens = tokens[:current_slice]
                end = sliced_tokens[-1].item() - tokenizer.timestamp_begin
                all_segments.append(new_segment(start=seek, end=end, tokens=sliced_tokens))
            if single_timestamp_ending:
                seek += 3000
            logits = model.logits(mel)
            seek += int(logits.argmax().item())
        return all_segments
"""


def test_cpu_tokens_beside_a_nested_helper_are_host_values(engine):
    assert "NPU703" not in _codes(engine, TRANSCRIBE, "end = sliced_tokens[-1].item()")
    assert "NPU703" not in _codes(engine, TRANSCRIBE, "single_timestamp_ending = timestamp_tokens")


def test_a_test_of_a_host_sync_flag_is_no_sync(engine):
    assert "NPU703" not in _codes(engine, TRANSCRIBE, "if single_timestamp_ending:")


def test_control_device_logits_in_the_same_loop_keep_their_hint(engine):
    assert "NPU703" in _codes(engine, TRANSCRIBE, "seek += int(logits.argmax().item())")


EVAL_LOOP = """\
    import torch


    def eval_episode(self, env, obs, state=None):
        for step in range(self.max_steps):
            if state is not None:
                actions = self.play(obs, state=state)
            else:
                actions = self.play(obs, state=None)
            actions = actions.cpu().numpy()
            for i in range(actions.shape[0]):
                cur_action = actions[i, :]
                obs, reward, done, info = env.step(cur_action.tolist())
                if done:
                    return True
            value = self.critic(obs)
            print(value.mean().item())
"""


def test_actions_moved_to_numpy_after_the_policy_call_are_host_values(engine):
    assert "NPU703" not in _codes(engine, EVAL_LOOP, "env.step(cur_action.tolist())")


def test_control_a_device_value_in_the_same_loop_keeps_its_hint(engine):
    assert "NPU703" in _codes(engine, EVAL_LOOP, "print(value.mean().item())")


OBB_MERGE = """\
    import torch


    def merge(self, data, preds):
        merged = {}
        for d in data:
            bbox, score = d["rbox"], d["score"]
            merged.setdefault(d["image_id"], []).append([*bbox, score])
        for image_id, bbox in merged.items():
            bbox = torch.tensor(bbox)
            max_wh = torch.max(bbox[:, :2]).item() * 2
        for pred in self.model(data["img"]):
            max_wh = torch.max(pred[:, :2]).item() * 2
"""


def test_a_tensor_built_from_the_loop_list_is_a_host_value(engine):
    assert "NPU703" not in _codes(engine, OBB_MERGE, "max_wh = torch.max(bbox[:, :2]).item() * 2")


def test_control_a_prediction_tensor_keeps_its_hint(engine):
    assert "NPU703" in _codes(engine, OBB_MERGE, "max_wh = torch.max(pred[:, :2]).item() * 2")


METADATA = """\
    import numpy as np
    import torch


    def flush(buffer):
        combined = {}
        for episode in buffer:
            for key, value in episode.items():
                val = value[0] if isinstance(value, list) else value
                combined.setdefault(key, []).append(val.tolist() if isinstance(val, np.ndarray) else val)
                if isinstance(val, torch.Tensor):
                    combined[key].append(val.tolist())
        return combined
"""


def test_a_numpy_type_check_guards_a_host_value(engine):
    assert "NPU703" not in _codes(engine, METADATA, "append(val.tolist() if isinstance(val, np.ndarray) else val)")


def test_control_a_tensor_type_check_keeps_its_hint_only_with_a_device_origin(engine):
    # hq39: a tensor whose function shows no device origin has no hint (device_values.py); moved, it has one
    assert "NPU703" not in _codes(engine, METADATA, "combined[key].append(val.tolist())")
    moved = METADATA.replace("combined[key].append(val.tolist())", "combined[key].append(val.cuda().tolist())")
    assert "NPU703" in _codes(engine, moved, "combined[key].append(val.cuda().tolist())")


MAIN_LOOP = """\
    import torch


    def main_loop(self, tokens, audio_features):
        no_speech_probs = []
        for i in range(self.sample_len):
            logits = self.inference.logits(tokens, audio_features)
            if i == 0 and self.no_speech is not None:
                probs_at_sot = logits[:, self.sot_index].float().softmax(dim=-1)
                no_speech_probs = probs_at_sot[:, self.no_speech].tolist()
            for j, row in enumerate(logits):
                if row == 0:
                    print(row.sum().item())
            if i % 2 == 1:
                print(logits.max().item())
        return no_speech_probs
"""


def test_a_branch_on_the_first_turn_runs_once(engine):
    assert "NPU703" not in _codes(engine, MAIN_LOOP, "no_speech_probs = probs_at_sot[:, self.no_speech].tolist()")


def test_control_element_tests_and_parity_branches_keep_their_hint(engine):
    assert "NPU703" in _codes(engine, MAIN_LOOP, "print(row.sum().item())")
    assert "NPU703" in _codes(engine, MAIN_LOOP, "print(logits.max().item())")


# -- the TensorRT member of a user-chosen set of model formats (auditor/static/format_members.py) ---------------------
EXPORTER = """\
import torch


class Exporter:
    def export_onnx(self, prefix="ONNX:"):
        import onnx
        torch.onnx.export(self.model, self.im, "model.onnx")
        return "model.onnx", onnx

    def export_openvino(self, prefix="OpenVINO:"):
        import openvino as ov
        return ov.convert_model("model.onnx")

    def export_coreml(self, prefix="CoreML:"):
        import coremltools as ct
        return ct.convert(self.model)

    def export_engine(self, prefix="TensorRT:"):
        import tensorrt as trt
        logger = trt.Logger(trt.Logger.INFO)
        builder = trt.Builder(logger)
        torch.cuda.empty_cache()
        return builder
"""

AUTOBACKEND = """\
import torch


class AutoBackend(torch.nn.Module):
    def __init__(self, weights, device=torch.device("cpu")):
        super().__init__()
        onnx, xml, engine, coreml = (str(weights).endswith(s) for s in (".onnx", ".xml", ".engine", ".mlpackage"))
        if onnx:
            import onnxruntime
            session = onnxruntime.InferenceSession(weights)
        elif xml:
            import openvino as ov
            session = ov.Core().read_model(weights)
        elif engine:
            import tensorrt as trt
            device = torch.device("cuda:0")
            with open(weights, "rb") as f, trt.Runtime(trt.Logger(trt.Logger.INFO)) as runtime:
                model = runtime.deserialize_cuda_engine(f.read())
        elif coreml:
            import coremltools as ct
            model = ct.models.MLModel(weights)
"""

LONE_ENGINE = """\
import torch


class Builder:
    def export_engine(self):
        import tensorrt as trt
        logger = trt.Logger(trt.Logger.INFO)
        return trt.Builder(logger)

    def export_weights(self):
        torch.save(self.model.state_dict(), "model.pt")
"""


def _severities(tmp_path, files, rel):
    return run_values_by_line(tmp_path, files, rel, "severity")


def test_the_tensorrt_export_method_beside_other_formats_is_info(tmp_path):
    sev = _severities(tmp_path, {"exporter.py": EXPORTER}, "exporter.py")
    assert sev.get(line_of(EXPORTER, "logger = trt.Logger(trt.Logger.INFO)")) == {"info"}
    assert sev.get(line_of(EXPORTER, "torch.cuda.empty_cache()")) == {"info"}


def test_the_engine_arm_of_a_format_chain_is_info(tmp_path):
    sev = _severities(tmp_path, {"autobackend.py": AUTOBACKEND}, "autobackend.py")
    assert sev.get(line_of(AUTOBACKEND, "model = runtime.deserialize_cuda_engine(f.read())")) == {"info"}
    assert sev.get(line_of(AUTOBACKEND, 'device = torch.device("cuda:0")')) == {"info"}


def test_control_a_lone_tensorrt_export_keeps_its_severity(tmp_path):
    sev = _severities(tmp_path, {"builder.py": LONE_ENGINE}, "builder.py")
    assert "error" in sev.get(line_of(LONE_ENGINE, "logger = trt.Logger(trt.Logger.INFO)"), set())


# -- a relative import of a module the audited folder does not hold (valueflow.defer_to_project) ---------------------
GEMMA_COPY = """\
from typing import Optional

import torch
from torch import nn

from ...modeling_flash_attention_utils import FlashAttentionKwargs
from ...processing_utils import Unpack


class GemmaAttention(nn.Module):
    def forward(self, hidden_states: torch.Tensor, mask: Optional[torch.Tensor] = None,
                **kwargs: Unpack[FlashAttentionKwargs]):
        return hidden_states
"""

FLASH_UTILS = """\
from typing import TypedDict

from flash_attn import flash_attn_func


class FlashAttentionKwargs(TypedDict, total=False):
    max_length_q: int


def flash_forward(q, k, v):
    return flash_attn_func(q, k, v)
"""


def _codes_in(tmp_path, files, rel):
    run = run_static([write_tree(tmp_path, files)], jobs=1)
    out: dict[int, set[str]] = {}
    for r in run.results:
        if r.path == rel:
            for f in r.findings:
                out.setdefault(f.line, set()).add(f.code)
    return out


def test_a_vendored_transformers_file_importing_a_module_the_tree_lacks_is_not_project_code(tmp_path):
    rel = "policy/transformers_replace/models/gemma/modeling_gemma.py"
    codes = _codes_in(tmp_path, {rel: GEMMA_COPY, "policy/__init__.py": "", "policy/train.py": "import torch\n"}, rel)
    assert "NPU321" not in codes.get(line_of(GEMMA_COPY, "import FlashAttentionKwargs"), set())
    assert "NPU321" not in codes.get(line_of(GEMMA_COPY, "**kwargs: Unpack[FlashAttentionKwargs]"), set())


def test_control_the_tree_holding_its_own_flash_attention_module_keeps_the_hint(tmp_path):
    rel = "policy/transformers_replace/models/gemma/modeling_gemma.py"
    files = {rel: GEMMA_COPY, "policy/transformers_replace/modeling_flash_attention_utils.py": FLASH_UTILS,
             "policy/transformers_replace/__init__.py": "", "policy/transformers_replace/models/__init__.py": "",
             "policy/transformers_replace/models/gemma/__init__.py": ""}
    codes = _codes_in(tmp_path, files, rel)
    assert "NPU321" in codes.get(line_of(GEMMA_COPY, "import FlashAttentionKwargs"), set())
