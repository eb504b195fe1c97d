"""t24b (session 24, project test35): a config key the tree's own Python passes to a call under a keyword that a
settings rule reads is that setting (auditor/project/setting_keywords.py). Shaped on LTX-Video-Trainer (its YAML's
`acceleration.mixed_precision_mode` passed as accelerate's `mixed_precision=`, `load_text_encoder_in_8bit` passed on
as `load_in_8bit=`), with controls: the same keys no code reads, a key passed under its own name only, values the
keyword's rule does not report, and a runner's whole-tree run."""
from __future__ import annotations

import ast
import textwrap
from pathlib import Path

from auditor.project.setting_reads import reads_fact
from auditor.project.tree_calls import apply_tree_calls
from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine
from tests.static_snippets import write_tree

RULES = load_rules()
ENGINE = StaticEngine(RULES)


def _found(root: Path, rel: str) -> list[tuple[int, str, str]]:
    """A config's findings as the project-file bench computes them: the file, then the tree passes."""
    result = ENGINE.analyze_bytes((root / rel).read_bytes(), rel)
    apply_tree_calls([result], root, RULES, lambda: ENGINE.analyze_bytes)
    return sorted((f.line, f.code, f.severity) for f in result.findings)


LTX_CONFIG = """\
    model:
      model_source: "LTXV_2B_0.9.5"
      training_mode: "lora"
    optimization:
      learning_rate: 0.0002
      optimizer_type: "adamw"
    # Acceleration optimization
    acceleration:
      mixed_precision_mode: "bf16" # Options: "no", "fp16", "bf16"
      quantization: null
      load_text_encoder_in_8bit: true # Load text encoder in 8-bit precision to save memory
      compile_with_inductor: false
    """

LTX_TRAINER = """\
    from accelerate import Accelerator

    from ltxv_trainer.model_loader import load_ltxv_components


    class LtxvTrainer:
        def _load_models(self):
            components = load_ltxv_components(
                model_source=self._config.model.model_source,
                load_text_encoder_in_8bit=self._config.acceleration.load_text_encoder_in_8bit,
            )
            return components

        def _setup_accelerator(self):
            self._accelerator = Accelerator(
                mixed_precision=self._config.acceleration.mixed_precision_mode,
                gradient_accumulation_steps=self._config.optimization.gradient_accumulation_steps,
            )
    """

LTX_LOADER = """\
    from transformers import BitsAndBytesConfig, T5EncoderModel


    def load_text_encoder(load_in_8bit: bool = False):
        quantization_config = BitsAndBytesConfig(load_in_8bit=True) if load_in_8bit else None
        return T5EncoderModel.from_pretrained("t5", quantization_config=quantization_config)


    def load_ltxv_components(model_source, load_text_encoder_in_8bit: bool = False):
        return {"text_encoder": load_text_encoder(load_in_8bit=load_text_encoder_in_8bit)}
    """


def _ltx(root: Path, trainer: str = LTX_TRAINER, config: str = LTX_CONFIG) -> Path:
    return write_tree(root, {"configs/ltxv_2b_lora.yaml": config, "src/ltxv_trainer/trainer.py": trainer,
                        "src/ltxv_trainer/model_loader.py": LTX_LOADER})


def test_a_key_passed_as_accelerates_mixed_precision_is_that_setting(tmp_path):
    found = _found(_ltx(tmp_path), "configs/ltxv_2b_lora.yaml")
    assert (9, "NPU212", "info") in found                  # mixed_precision_mode: "bf16" -> mixed_precision=
    assert (11, "NPU441", "error") in found                # load_text_encoder_in_8bit -> load_in_8bit= (bitsandbytes)
    assert len(found) == 2


def test_values_the_keywords_rule_does_not_report_stay_quiet(tmp_path):
    config = LTX_CONFIG.replace('"bf16" #', '"fp16" #').replace("in_8bit: true", "in_8bit: false")
    assert _found(_ltx(tmp_path, config=config), "configs/ltxv_2b_lora.yaml") == []


def test_keys_no_code_passes_stay_quiet(tmp_path):
    """The same keys in a tree whose code never passes them (or passes another section's key of the same name)."""
    trainer = LTX_TRAINER.replace("self._config.acceleration.mixed_precision_mode", "'no'").replace(
        "self._config.acceleration.load_text_encoder_in_8bit", "self._config.other.load_text_encoder_in_8bit")
    assert _found(_ltx(tmp_path, trainer=trainer), "configs/ltxv_2b_lora.yaml") == []


def test_a_key_passed_under_its_own_name_only_is_not_renamed(tmp_path):
    """`mixed_precision=cfg.acceleration.mixed_precision` is the key's own name: the settings rule already read it
    (and a key nothing renames is not matched again)."""
    config = LTX_CONFIG.replace("mixed_precision_mode:", "precision_mode:")
    trainer = LTX_TRAINER.replace("mixed_precision=self._config.acceleration.mixed_precision_mode",
                                  "precision_mode=self._config.acceleration.precision_mode")
    found = _found(_ltx(tmp_path, trainer=trainer, config=config), "configs/ltxv_2b_lora.yaml")
    assert [c for _, c, _ in found] == ["NPU441"]


def test_the_fact_records_reads_passed_and_names_passed_on():
    fact = reads_fact(ast.parse(textwrap.dedent(LTX_TRAINER) + textwrap.dedent(LTX_LOADER)))
    assert ["acceleration", "mixed_precision_mode", "mixed_precision"] in fact["passed"]
    assert ["load_text_encoder_in_8bit", "load_in_8bit"] in fact["forwards"]


def test_a_whole_tree_run_reports_the_same_lines(tmp_path):
    root = _ltx(tmp_path)
    lines = sorted((f.line, f.code) for r in run_static([root], jobs=1).results for f in r.findings
                   if f.path.endswith("ltxv_2b_lora.yaml"))
    assert lines == [(9, "NPU212"), (11, "NPU441")]


ANEMOI_MODEL = """\
    processor:
      _target_: anemoi.models.layers.processor.GraphTransformerProcessor
      num_layers: 16
      num_heads: 16
      graph_attention_backend: "triton"  # Options: "triton", "pyg"
    encoder:
      graph_attention_backend: "pyg"  # Options: "triton", "pyg"
      backend: "triton"
    """


def test_a_named_backend_set_to_triton_is_a_kernel_setting(tmp_path):
    """anemoi-core's model configs: `graph_attention_backend: "triton"` picks its own @triton.jit graph attention
    (NPU360, warning: it falls back to pyg where triton is missing); "pyg" and a bare `backend` key (spikingjelly's
    neuron backend, not tuned on) stay quiet."""
    found = _found(write_tree(tmp_path, {"config/model/transformer.yaml": ANEMOI_MODEL}), "config/model/transformer.yaml")
    assert found == [(5, "NPU360", "warning")]


MAKANI_DOCKERFILE = """\
    ARG DLFW_VERSION=25.12
    FROM nvcr.io/nvidia/pytorch:${DLFW_VERSION}-py3
    # torch-harmonics gates the CUDA build on this variable
    ENV TORCH_HARMONICS_BUILD_CUDA_EXTENSION=1
    RUN cd /opt && git clone https://github.com/NVIDIA/torch-harmonics.git && \\
        cd torch-harmonics && \\
        pip install --no-build-isolation -e .
    """


def test_a_switch_that_builds_a_packages_cuda_extension_is_a_kernel_build(tmp_path):
    """makani's NGC Dockerfile (NPU367, kernel, as `*_FORCE_CUDA` / `*_SKIP_CUDA_BUILD`: set either way, it steers the
    nvcc build); another build switch of the same package stays quiet."""
    root = write_tree(tmp_path, {"docker/Dockerfile": MAKANI_DOCKERFILE,
                            "docker/Dockerfile.cpu": MAKANI_DOCKERFILE.replace("BUILD_CUDA_EXTENSION", "BUILD_DOCS")})
    assert (4, "NPU367", "warning") in _found(root, "docker/Dockerfile")
    assert not [c for line, c, _ in _found(root, "docker/Dockerfile.cpu") if line == 4]


def test_an_arg_that_picks_a_cuda_images_tag_is_its_build_parameter(tmp_path):
    """makani's `ARG DLFW_VERSION=25.12` read by `FROM nvcr.io/nvidia/pytorch:${DLFW_VERSION}-py3`: information at the
    ARG. Controls: a Python image's tag ARG; a CUDA_VERSION ARG keeps its own NPU018 (one finding on its line); the
    Ubuntu version later in the tag (3dgrut's `-devel-ubuntu${UBUNTU_VERSION}`) picks the OS, not the CUDA image."""
    other = ("ARG PY=3.11\nFROM python:${PY}-slim\nARG CUDA_VERSION=12.4.1\nARG UBUNTU_VERSION=24.04\n"
             "FROM nvidia/cuda:${CUDA_VERSION}-devel-ubuntu${UBUNTU_VERSION}\n")
    root = write_tree(tmp_path, {"docker/Dockerfile": MAKANI_DOCKERFILE, "other/Dockerfile": other})
    assert (1, "NPU016", "info") in _found(root, "docker/Dockerfile")
    found = _found(root, "other/Dockerfile")
    assert not [f for f in found if f[0] in (1, 2, 4)]
    assert [f for f in found if f[0] == 3] == [(3, "NPU018", "info")]


def test_a_warm_run_parses_no_config_again(tmp_path, monkeypatch):
    """h25a: the config's keyed scalars are a per-file fact (setting_keywords.keys_fact) kept in the cache entry: a warm
    run gives the cold run's lines, parses no YAML and reads no Python file. (apply_other_frameworks still reads the
    config's first bytes: its findings come from this tree pass, after the worker recorded its framework.)"""
    import os

    import yaml

    root = _ltx(tmp_path / "tree")

    def lines() -> list[tuple[int, str]]:
        run = run_static([root], jobs=1, cache_dir=tmp_path / "cache")
        return sorted((f.line, f.code) for r in run.results for f in r.findings if f.path.endswith(".yaml"))

    cold = lines()
    real_text, real_bytes, real_open = Path.read_text, Path.read_bytes, os.open

    def check(path) -> None:
        if str(path).endswith(".py"):
            raise AssertionError(f"{path} was read again")

    def no_parse(*a, **k):
        raise AssertionError("a YAML file was parsed again")

    monkeypatch.setattr(yaml, "compose_all", no_parse)
    monkeypatch.setattr(Path, "read_text", lambda self, *a, **k: (check(self), real_text(self, *a, **k))[1])
    monkeypatch.setattr(Path, "read_bytes", lambda self, *a, **k: (check(self), real_bytes(self, *a, **k))[1])
    monkeypatch.setattr(os, "open", lambda path, *a, **k: (check(path), real_open(path, *a, **k))[1])
    assert lines() == cold == [(9, "NPU212"), (11, "NPU441")]


def test_a_config_without_the_fact_is_read_as_before(tmp_path):
    """A result whose summary has no keys fact (one a caller built by hand) reads the config itself."""
    from auditor.project.setting_keywords import FACT

    root = _ltx(tmp_path)
    rel = "configs/ltxv_2b_lora.yaml"
    result = ENGINE.analyze_bytes((root / rel).read_bytes(), rel)
    assert result.summary[FACT]
    result.summary.pop(FACT)
    apply_tree_calls([result], root, RULES, lambda: ENGINE.analyze_bytes)
    assert sorted((f.line, f.code) for f in result.findings) == [(9, "NPU212"), (11, "NPU441")]
