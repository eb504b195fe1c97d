"""t11s (issue 11, session 12; tuned on heldout11): policy (f) for defaults every caller overrides, host values
reached through data flow (NPU703), and the other leftovers of t11q's report. Realistic code modelled on the
heldout11 trees (vllm-omni's stage input processors, xllm's tilelang kernel builders)."""
from __future__ import annotations

from auditor.runner import run_static
from static_snippets import write_tree

PROCESSORS = '''\
    from pkg.registry import WORKSPACES

    import torch


    def _compute_talker_prompt_ids_length(info, device: torch.device | str = "cuda") -> int:
        ids = torch.tensor(info["prompt_ids"], device=device)
        return int(ids.numel())


    def build_decode_kernel(dim: int, dtype_str: str = "bfloat16", block: int = 64):
        return {"dim": dim, "dtype": dtype_str, "block": block}


    def load_for_inference(path, device="cuda"):
        return torch.load(path, map_location=device)


    @WORKSPACES.register("decode")
    def cached_workspace(size, device="cuda"):
        return torch.empty(size, device=device)


    def thinker2talker(infos, current_platform):
        device = torch.device(current_platform.device_type)
        lengths = [_compute_talker_prompt_ids_length(info, device=device) for info in infos]
        workspace = cached_workspace(1024, device)
        return lengths, build_decode_kernel(128, "float16"), workspace
    '''

LAUNCHER = '''\
    from pkg.processors import load_for_inference


    def main(path):
        return load_for_inference(path)
    '''


def _line(src: str, text: str) -> int:
    return next(i + 1 for i, line in enumerate(src.splitlines()) if text in line)


def test_policy_f_defaults_every_caller_overrides_are_info_with_why(tmp_path):
    root = write_tree(tmp_path / "t", {"pkg/__init__.py": "", "pkg/processors.py": PROCESSORS,
                                       "pkg/serve.py": LAUNCHER})
    run = run_static([root], jobs=1)
    r = next(r for r in run.results if r.path == "pkg/processors.py")
    by_line: dict[int, list] = {}
    for f in r.findings:
        if f.category in ("device", "precision"):
            by_line.setdefault(f.line, []).append(f)
    overridden = [_line(PROCESSORS, "def _compute_talker"), _line(PROCESSORS, "def build_decode_kernel")]
    for line in overridden:
        assert by_line.get(line), (line, r.findings)          # reported, never dropped (recall policy item 7)
        for f in by_line[line]:
            assert f.severity == "info" and f.data.get("context") == "overridden-default", f
            assert "every caller in this tree passes" in f.message and "callers outside this tree" in f.message
    # a caller lets the default through: it applies in this tree, so it keeps its own severity
    let_through = by_line[_line(PROCESSORS, "def load_for_inference")]
    assert any(f.severity == "error" for f in let_through), let_through
    assert not any(f.data.get("context") == "overridden-default" for f in let_through)
    # a decorated function may be wrapped or registered: unknown callers, its default keeps its severity (a cache
    # wrapper such as `functools.lru_cache` is called by the function's own name: tq40, tests/test_tq40.py)
    cached = by_line[_line(PROCESSORS, "def cached_workspace")]
    assert any(f.severity == "error" for f in cached), cached


def test_policy_f_public_entry_point_keeps_its_severity(tmp_path):
    entry = '''\
        import torch


        def run_training(model, device: str = "cuda"):
            return model.to(device)
        '''
    root = write_tree(tmp_path / "e", {"pkg/__init__.py": "", "pkg/train.py": entry,
                                       "tests/test_train.py": "from pkg.train import run_training\n\n\n"
                                       "def test_run():\n    run_training(None, device='cpu')\n"})
    run = run_static([root], jobs=1)
    r = next(r for r in run.results if r.path == "pkg/train.py")
    found = [f for f in r.findings if f.line == 4 and f.category == "device"]
    assert found and all(f.severity == "error" and f.data.get("context") != "overridden-default" for f in found)


ROPE_INDEX = '''\
    import torch


    def get_rope_index(input_ids, video_grid_thw, audio_seqlens, tokens_per_second, seconds_per_chunk):
        llm_pos_ids_list = []
        positions = []
        for video_idx, audio_seqlen in enumerate(audio_seqlens):
            start_idx = llm_pos_ids_list[-1].max() + 1 if llm_pos_ids_list else 0
            grid_t = video_grid_thw[video_idx][0]
            t_index = (torch.arange(grid_t) * tokens_per_second).long()
            audio_llm_pos_ids_list: list[torch.Tensor] = []
            for t_chunk in t_index.split(int(tokens_per_second * seconds_per_chunk)):
                audio_start_idx = (
                    start_idx if len(audio_llm_pos_ids_list) == 0 else audio_llm_pos_ids_list[-1][0].item() + 1
                )
                audio_llm_pos_ids_list = (
                    torch.arange(len(t_chunk)).expand(3, -1) + audio_start_idx
                ).split(1, dim=1)
                llm_pos_ids_list.extend(audio_llm_pos_ids_list)
            grid = torch.tensor([[1, 2], [3, 4]])
            for row in range(2):
                positions.append(grid[row].tolist() + torch.arange(4).split(2)[row].tolist())
        return llm_pos_ids_list, positions


    def on_device(lengths, device):
        out = []
        for n in lengths:
            idx = torch.arange(n, device=device)
            moved = torch.arange(n).to(device)
            out.append(idx[-1].item() + moved[-1].item())
        return out


    def under_default_device(lengths):
        out = []
        for n in lengths:
            ids = torch.arange(n) + 1
            out.append(ids[-1].item())
        return out
    '''


def _syncs(tmp_path, name: str, files: dict[str, str]):
    root = write_tree(tmp_path / name, files)
    run = run_static([root], jobs=1)
    return {(r.path, f.line) for r in run.results for f in r.findings if f.code == "NPU703"}


def test_factory_host_tensors_followed_through_assignments_are_no_sync(tmp_path):
    syncs = {line for _, line in _syncs(tmp_path, "r", {"pkg/__init__.py": "", "pkg/rope.py": ROPE_INDEX})}
    # the rope index's tensors are built by torch.arange / torch.tensor([...]) with no device: host values
    for text in ("audio_llm_pos_ids_list[-1][0].item()", "positions.append(grid[row].tolist()"):
        assert _line(ROPE_INDEX, text) not in syncs, (text, syncs)
    # a factory given a device, or moved with .to(device), stays a sync on the accelerator
    assert _line(ROPE_INDEX, "out.append(idx[-1].item() + moved[-1].item())") in syncs


def test_a_file_that_sets_a_default_device_has_no_factory_host_values(tmp_path):
    src = ROPE_INDEX.replace("    import torch\n", "    import torch\n\n    torch.set_default_device(\"cuda\")\n", 1)
    syncs = {line for _, line in _syncs(tmp_path, "d", {"pkg/__init__.py": "", "pkg/rope.py": src})}
    assert _line(src, "out.append(ids[-1].item())") in syncs
    assert _line(src, "audio_llm_pos_ids_list[-1][0].item()") in syncs


DOCKERFILE_CUDA = '''\
    ARG BASE_IMAGE=nvidia/cuda:12.8.1-cudnn-devel-ubuntu22.04
    FROM ${BASE_IMAGE}
    ARG TORCH_CUDA_ARCH_LIST="8.0 8.9 9.0a 10.0a 12.0a"
    ENV TORCH_CUDA_ARCH_LIST=${TORCH_CUDA_ARCH_LIST}
    RUN pip install torch==2.7.1 --index-url https://download.pytorch.org/whl/cu128
    RUN git clone https://github.com/flashinfer-ai/flashinfer.git && cd flashinfer && pip install -v .
    '''

BUILD_UTILS = '''\
    import os


    def set_npu_envs():
        import torch_npu  # noqa: F401

        os.environ["ASCEND_RT_VISIBLE_DEVICES"] = "0"
    '''


def test_nvidia_image_of_a_project_that_runs_on_ascend_is_info(tmp_path):
    files = {"docker/Dockerfile.cuda": DOCKERFILE_CUDA, "scripts/build_support/utils.py": BUILD_UTILS}
    run = run_static([write_tree(tmp_path / "a", files)], jobs=1)
    found = [f for r in run.results if r.path == "docker/Dockerfile.cuda" for f in r.findings]
    assert found and {f.severity for f in found} == {"info"}, found
    assert any("already runs on Ascend" in f.message for f in found)
    # the same image in a CUDA-only project keeps its severity (the port has to act on it)
    run = run_static([write_tree(tmp_path / "b", {"docker/Dockerfile.cuda": DOCKERFILE_CUDA})], jobs=1)
    found = [f for r in run.results if r.path == "docker/Dockerfile.cuda" for f in r.findings]
    assert {f.severity for f in found} - {"info"}, found


PYPROJECT = '''\
    [project]
    name = "optimum-neuron"
    dependencies = [
        "transformers ~= 4.57.1",
        "accelerate == 1.8.1",
        "mamba-ssm >= 2.2",
    ]

    [project.optional-dependencies]
    tests = ["pytest <= 8.0.0", "psutil"]
    vllm = [
        "vllm == 0.11.0",
    ]
    quality = ["ruff"]

    [project.entry-points."vllm.platform_plugins"]
    optimum_neuron = "optimum.neuron.vllm.plugin:register"
    '''

WORKFLOW = '''\
    name: Optimum neuron / Test INF2 vLLM

    on:
      pull_request:
        paths:
          - "optimum/neuron/vllm/**"

    jobs:
      test:
        runs-on:
          group: aws-inf2-8xlarge
        steps:
          - uses: actions/checkout@v4
          - name: Install
            run: |
              uv pip install .[vllm,vllm-tests]
    '''


def test_opt_in_extras_are_warnings_at_most(tmp_path):
    files = {"pyproject.toml": PYPROJECT, ".github/workflows/test_inf2_vllm.yml": WORKFLOW,
             "scripts/install.sh": "#!/bin/bash\nset -e\npip install .[vllm]\n"}
    run = run_static([write_tree(tmp_path / "x", files)], jobs=1)
    by_path = {r.path: r.findings for r in run.results}
    vllm = [f for f in by_path["pyproject.toml"] if f.code == "NPU440" and f.symbol == "vllm"]
    assert vllm and {f.severity for f in vllm} == {"warning"}, vllm
    assert all("opt-in extra `vllm`" in f.message for f in vllm)
    # a plain dependency is pulled by every install: it keeps its error
    plain = [f for f in by_path["pyproject.toml"] if f.symbol == "mamba-ssm"]
    assert plain and {f.severity for f in plain} == {"error"}, plain
    ci = [f for f in by_path[".github/workflows/test_inf2_vllm.yml"] if f.code == "NPU440"]
    assert ci and {f.severity for f in ci} == {"warning"}, ci
    # a user's install script runs as written: the install fails on Ascend, an error
    script = [f for f in by_path["scripts/install.sh"] if f.code == "NPU440"]
    assert script and {f.severity for f in script} == {"error"}, script


TABLES = '''\
    import torch

    HARDWARE_TFLOPS = {
        "trn1": {
            "fp32": 48 / 2,
            "bf16": 191 / 2,
        },
    }


    class InputProcessor:
        @staticmethod
        def _dtype_to_name(dtype: torch.dtype) -> str:
            mapping = {
                torch.float32: "float32",
                torch.float16: "float16",
                torch.bfloat16: "bfloat16",
                torch.int64: "int64",
            }
            return mapping.get(dtype, str(dtype).replace("torch.", ""))


    def build(model, use_bf16):
        choice = {"fp32": torch.float32, "bf16": torch.bfloat16, "fp16": torch.float16, "fp8": torch.float8_e4m3fn}
        return model.to(torch.bfloat16 if use_bf16 else torch.float32), choice
    '''


def test_dtype_name_and_number_tables_choose_nothing(tmp_path):
    run = run_static([write_tree(tmp_path / "t", {"pkg/__init__.py": "", "pkg/tables.py": TABLES})], jobs=1)
    lines = {f.line for r in run.results for f in r.findings if f.category == "precision"}
    for text in ('"bf16": 191 / 2,', 'torch.bfloat16: "bfloat16",'):
        assert _line(TABLES, text) not in lines, (text, lines)
    # a model cast is a choice
    assert _line(TABLES, "return model.to(torch.bfloat16") in lines
