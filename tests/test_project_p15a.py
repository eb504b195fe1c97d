"""Project-file classes the lead fixed after session 15's end draw (p15a), on files shaped like the tree they came
from."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def test_a_conda_export_under_another_name_is_a_conda_environment():
    # HunyuanWorld-1.0 docker/HunyuanWorld.yaml: `conda env export` output kept beside the Dockerfile
    env = textwrap.dedent("""\
        name: HunyuanWorld
        channels:
          - pytorch
          - nvidia
          - defaults
        dependencies:
          - python=3.10.16=he870216_1
          - cuda-runtime=12.4.1=0
          - libcublas=12.4.5.8=0
          - pytorch=2.5.0=py3.10_cuda12.4_cudnn9.1.0_0
          - numpy=1.26.4
        """).encode()
    lines = {f.line for f in ENGINE.analyze_bytes(env, "docker/HunyuanWorld.yaml").findings}
    assert {4, 8, 9, 10} <= lines and 7 not in lines and 11 not in lines
    # a config that only has a `dependencies:` list (a task graph) stays a config
    config = b"name: pipeline\ndependencies:\n  - prepare\n  - train\ndevice: cuda\n"
    kinds = {f.code for f in ENGINE.analyze_bytes(config, "configs/pipeline.yaml").findings}
    assert "NPU018" not in kinds


def test_a_config_that_runs_on_the_cpu_chooses_no_npu_dtype():
    # llm-on-ray llm_on_ray/inference/models/gemma-2b.yaml: vLLM for Intel CPU
    cpu = b"name: gemma-2b\ndevice: cpu\nvllm:\n  enabled: true\n  precision: bf16\n"
    gpu = b"name: gemma-2b\ndevice: cuda\nvllm:\n  enabled: true\n  precision: bf16\n"
    cats = lambda data: {f.category for f in ENGINE.analyze_bytes(data, "models/gemma-2b.yaml").findings}  # noqa: E731
    assert "precision" not in cats(cpu)
    assert "precision" in cats(gpu)
