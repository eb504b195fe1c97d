"""False-positive classes of bench/precision/heldout2 (tuned on heldout2) that need a file's neighbours: the CUDA
member of a per-backend set of files (FlagScale's docker/Dockerfile.cuda beside Dockerfile.metax, BigVGAN's
alias_free_activation/cuda/ beside its torch/ fallback), project files with an NPU twin (ktransformers'
optimize_rules), and cuDNN-named variables that nothing reads (FlagScale's test configs)."""
from __future__ import annotations

from static_snippets import write_source as _write, findings_in_tree as _found


_CUDA_DOCKERFILE = """\
    FROM nvcr.io/nvidia/pytorch:24.05-py3
    ARG CUDNN_VERSION=9.1.0
    RUN wget https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/linux-x86_64/cudnn-linux-x86_64-${CUDNN_VERSION}.26_cuda12-archive.tar.xz
    RUN pip install flash-attn==2.6.3
    """


def test_the_cuda_member_of_a_per_backend_set_of_dockerfiles_is_info(tmp_path):
    _write(tmp_path, "docker/Dockerfile.cuda", _CUDA_DOCKERFILE)
    _write(tmp_path, "docker/Dockerfile.metax", "FROM cr.metax-tech.com/public-ai-release/c500/pytorch:2.4\n")
    _write(tmp_path, "alone/Dockerfile.cuda", _CUDA_DOCKERFILE)
    found = _found(tmp_path)
    in_set = {s for (p, _, _), s in found.items() if p == "docker/Dockerfile.cuda"}
    alone = {s for (p, _, _), s in found.items() if p == "alone/Dockerfile.cuda"}
    assert in_set == {"info"}
    assert "error" in alone               # no other backend beside it: the image to port


def test_a_cuda_kernel_folder_beside_a_torch_fallback_is_info(tmp_path):
    load = """\
        import os
        from torch.utils import cpp_extension

        os.environ["TORCH_CUDA_ARCH_LIST"] = ""

        def load():
            return cpp_extension.load(name="anti_alias_activation_cuda", sources=["anti_alias_activation_cuda.cu"])
        """
    _write(tmp_path, "indextts/BigVGAN/alias_free_activation/cuda/load.py", load)
    _write(tmp_path, "indextts/BigVGAN/alias_free_activation/torch/act.py", "import torch\n")
    _write(tmp_path, "indextts/other/cuda/load.py", load)
    found = _found(tmp_path)
    kernel = {s for (p, _, _), s in found.items() if p == "indextts/BigVGAN/alias_free_activation/cuda/load.py"}
    lone = {s for (p, _, _), s in found.items() if p == "indextts/other/cuda/load.py"}
    assert kernel == {"info"}
    assert lone - {"info"}


def test_a_config_with_an_npu_twin_is_info_unless_the_twin_builds_on_it(tmp_path):
    rule = """\
        - match:
            name: "^model\\\\.layers\\\\.([0-9]|[1-5][0-9])\\\\."
          replace:
            class: "default"
            kwargs:
              generate_device: "cuda:0"
              prefill_device: "cuda:0"
        """
    _write(tmp_path, "optimize_rules/DeepSeek-V3-Chat-multi-gpu-4.yaml", rule)
    _write(tmp_path, "optimize_rules/DeepSeek-V3-Chat-npu.yaml", rule.replace("cuda", "npu"))
    _write(tmp_path, "optimize_rules/DeepSeek-V2-Chat-multi-gpu-4.yaml", rule)
    _write(tmp_path, "solo/DeepSeek-V3-Chat.yaml", rule)
    _write(tmp_path, "reqs/requirements.txt", "flash-attn==2.6.3\n")
    _write(tmp_path, "reqs/requirements-npu.txt", "-r requirements.txt\ntorch-npu==2.6.0\n")
    found = _found(tmp_path)
    twin = {s for (p, _, _), s in found.items() if p == "optimize_rules/DeepSeek-V3-Chat-multi-gpu-4.yaml"}
    solo = {s for (p, _, _), s in found.items() if p == "solo/DeepSeek-V3-Chat.yaml"}
    base = {s for (p, _, _), s in found.items() if p == "reqs/requirements.txt"}
    other_model = {s for (p, _, _), s in found.items() if p == "optimize_rules/DeepSeek-V2-Chat-multi-gpu-4.yaml"}
    assert twin == {"info"}
    assert "error" in other_model         # the NPU config is for V3, not for V2
    assert "error" in solo
    assert "error" in base                # requirements-npu.txt installs it too


def test_cudnn_named_variables_nothing_reads_are_not_reported(tmp_path):
    _write(tmp_path, "tests/conf/7b-tp2.yaml", """\
        experiment:
          envs:
            CUDA_VISIBLE_DEVICES: 0,1
            CUDNN_DETERMINISTIC: true
            TORCH_CUDNN_DETERMINISM: true
            CUDNN_LOGINFO_DBG: 1
            TORCH_CUDNN_V8_API_DISABLED: 1
        """)
    found = _found(tmp_path)
    lines = {line for (p, line, code) in found if code == "NPU004"}
    assert 3 in lines and 6 in lines and 7 in lines
    assert 4 not in lines and 5 not in lines


def test_performance_hints_in_test_files_are_not_reported(tmp_path):
    loop = """\
        import torch


        def check(trainer, formats):
            for fmt in formats:
                trainer.train(resume_from_checkpoint=fmt)
                a1, b1 = trainer.model.a.item(), trainer.model.b.item()
        """
    _write(tmp_path, "tests/test_trainer.py", loop)
    _write(tmp_path, "pkg/trainer.py", loop)
    found = _found(tmp_path)
    assert not [k for k in found if k[0] == "tests/test_trainer.py" and k[2] == "NPU703"]
    assert [k for k in found if k[0] == "pkg/trainer.py" and k[2] == "NPU703"]


def test_a_file_reached_through_a_symlinked_folder_is_audited_not_a_traceback(tmp_path, monkeypatch, capsys):
    """The report path is relative to the current folder after resolving links (`../scratch/tree/cuda/f.py`),
    the file's own path is not: the per-backend check must not index past the path's parents (an IndexError
    once stopped a whole run)."""
    from auditor.cli import main

    real = tmp_path / "scratch" / "tree"
    _write(real, "cuda/merge.py", "import torch\nx = torch.cuda.current_device()\n")
    work = tmp_path / "work"
    (work / "bench").mkdir(parents=True)
    (work / "bench" / "trees").symlink_to(real)
    monkeypatch.chdir(work)
    assert main(["check", "bench/trees/cuda/merge.py", "--format", "json", "--fail-on", "never", "--no-cache"]) == 0
    assert '"NPU002"' in capsys.readouterr().out
