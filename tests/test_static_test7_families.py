"""Families the test7 split missed (t14c; test7 is tuned on from then on, see docs/recall.md "t14c: tuned on
test7"): each with the real spellings that must be flagged and the near misses that must not."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def _found(src: str, name: str = "example.py") -> list[tuple[int, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), name)
    assert result.error is None
    return [(f.line, f.code) for f in result.findings]


def _codes_on(found: list[tuple[int, str]], line: int) -> set[str]:
    return {code for at, code in found if at == line}


# --- a project's own flash-attention modules (NPU324) ----------------------------------------------------------

def test_vllm_flash_attn_imports_and_backends():
    found = _found("""\
        from vllm.platforms import current_platform

        if current_platform.is_cuda():
            from vllm.vllm_flash_attn import (  # type: ignore[attr-defined]
                flash_attn_varlen_func,
                get_scheduler_metadata,
            )
        from vllm.v1.attention.backends.flash_attn import FlashAttentionBackend
        from vllm.v1.attention.backends.flashinfer import FlashInferMetadata

        def run(q, k, v, cu, m):
            return flash_attn_varlen_func(q, k, v, cu_seqlens_q=cu, max_seqlen_q=m)
        """, "vllm/v1/attention/backends/fa_utils.py")
    assert "NPU324" in _codes_on(found, 4) | _codes_on(found, 5)
    assert "NPU324" in _codes_on(found, 8)
    assert "NPU324" in _codes_on(found, 9)
    assert "NPU324" in _codes_on(found, 12)


def test_flash_attn_module_inside_its_own_package_is_quiet_except_init():
    src = """\
        from vllm.vllm_flash_attn.cute.fa_logging import fa_log
        fa_log(1, "cache miss")
        """
    assert not any(code == "NPU324" for _, code in _found(src, "vllm/vllm_flash_attn/cute/cache_utils.py"))
    init = """\
        from vllm.vllm_flash_attn.flash_attn_interface import flash_attn_varlen_func
        """
    assert (1, "NPU324") in _found(init, "vllm/vllm_flash_attn/__init__.py")


def test_names_that_only_mention_flash_attention_are_not_modules():
    found = _found("""\
        from transformers.utils import is_flash_attn_2_available
        from transformers.modeling_flash_attention_utils import FlashAttentionKwargs
        from mypkg.utils.flash_attn_config import FLASH_DEFAULTS
        use = is_flash_attn_2_available()
        """)
    assert not any(code == "NPU324" for line, code in found if line in (1, 2, 4))


# --- NCCL located as a build artefact (NPU136) ------------------------------------------------------------------

def test_vllm_nccl_include_and_link_flags():
    found = _found("""\
        import importlib.util
        import os

        def find_nccl_include_paths():
            paths = []
            spec = importlib.util.find_spec("nvidia.nccl")
            if spec and spec.submodule_search_locations:
                for loc in spec.submodule_search_locations:
                    inc_dir = os.path.join(loc, "include")
                    if os.path.exists(os.path.join(inc_dir, "nccl.h")):
                        paths.append(inc_dir)
            return paths

        def compile_nccl_allocator(pynccl_comm):
            ldflags = ["-l:libnccl.so.2"]
            assert pynccl_comm.nccl_version >= 22703, "NCCL version 2.27.3 or higher is required"
            return ldflags
        """)
    for line in (6, 10, 15, 16):
        assert "NPU136" in _codes_on(found, line), line


def test_nccl_words_in_messages_and_hccl_flags_are_quiet():
    found = _found("""\
        def check(libs):
            if not libs:
                raise RuntimeError("nccl.h not found; install nvidia.nccl")
            return ["-lhccl"]
        """)
    assert not any(code == "NPU136" for _, code in found)


# --- helpers that make float8 values (NPU249) -------------------------------------------------------------------

def test_fp8_producing_helpers():
    found = _found("""\
        import torch
        from vllm.platforms import current_platform
        from vllm.model_executor.layers.quantization.utils.quant_utils import get_fp8_min_max

        _FP8_MIN, _FP8_MAX = get_fp8_min_max()

        def quantize(tensor, scale, fp8_quant):
            out_dtype = current_platform.fp8_dtype()
            q, _ = fp8_quant(tensor, scale=scale)
            return q.to(out_dtype)
        """)
    assert "NPU249" in _codes_on(found, 5)
    assert "NPU249" in _codes_on(found, 8)
    assert "NPU249" in _codes_on(found, 9)


def test_fp8_predicates_are_not_producers():
    found = _found("""\
        def pick(weight, cfg):
            if is_fp8(weight) or is_fp8_available():
                return cfg.fp8_supported()
        """)
    assert not any(code == "NPU249" for _, code in found)


# --- Dockerfiles written from a Python template string ----------------------------------------------------------

_TEMPLATE = '''\
deploy = """set -e
python3 model_download.py
"""

dockerfile = \\
        """FROM nvidia/cuda:11.8.0-cudnn8-devel-ubuntu22.04

ENV AML_APP_ROOT=/var/azureml-model/code \\
    CUDA_VISIBLE_DEVICES=0,1,2,3,4,5,6,7 \\
    MII_CACHE_PATH=/tmp/mii_cache

RUN apt-get update && \\
    apt-get install -y --no-install-recommends nginx-light wget libcurl4 unzip

ENV PATH="/opt/miniconda/envs/amlenv/bin:$PATH" \\
    CUDA_HOME=/usr/local/cuda \\
    LD_LIBRARY_PATH="/usr/local/cuda/lib64:$LD_LIBRARY_PATH"

RUN pip install torch torchvision --index-url https://download.pytorch.org/whl/cu113
"""
'''


def test_dockerfile_template_string_is_read_as_a_dockerfile():
    found = _found(_TEMPLATE, "mii/aml_related/templates.py")
    assert "NPU016" in _codes_on(found, 6)           # the CUDA base image (the string's first line)
    assert "NPU004" in _codes_on(found, 9)           # CUDA_VISIBLE_DEVICES on its own line
    assert "NPU004" in _codes_on(found, 16)          # CUDA_HOME
    assert "NPU027" in _codes_on(found, 17)          # /usr/local/cuda/lib64
    assert "NPU018" in _codes_on(found, 19)          # the cu113 wheel index
    assert not _codes_on(found, 13)                  # libcurl4 is not a CUDA library


def test_strings_that_are_not_dockerfiles_are_not_read():
    found = _found('''\
        def build():
            """FROM the cache, RUN the model.

            ENV variables are read below.
            """
            sql = """
            SELECT * FROM nvidia_cuda_runs
            """
            return sql
        ''')
    assert found == []


def test_own_flash_attention_module_is_kept_in_the_projects_own_tree():
    from auditor.findings import Finding
    from auditor.static.firstparty import is_first_party

    result = ENGINE.analyze_bytes(b"from vllm.vllm_flash_attn import flash_attn_varlen_func\n",
                                  "vllm/v1/attention/backends/fa_utils.py")
    own = [f for f in result.findings if f.code == "NPU324"]
    assert own and all(isinstance(f, Finding) for f in own)
    assert not any(is_first_party(f, frozenset({"vllm"})) for f in own)


def test_fp8_helper_rule_leaves_other_rules_feature_checks_alone():
    # a callname exclusion would hold for every rule's globs: thunder's apex availability helper stays reported
    found = _found("""\
        def apex_entropy_available() -> bool:
            return APEX_CROSS_ENTROPY_AVAILABLE

        if apex_entropy_available():
            register()
        """)
    assert any(line == 4 for line, _ in found)


# --- DeepSpeed as a dependency (NPU418): a note for trees that do not run on Ascend yet ---------------------------

_TRAINER = """\
import deepspeed
from deepspeed.accelerator import get_accelerator

def build(model, args, ds_config):
    engine, optimizer, _, _ = deepspeed.initialize(model=model, config=ds_config)
    return engine
"""


def _deepspeed_notes(root):
    from auditor.runner import run_static

    run = run_static([root], jobs=1)
    return sorted((r.path, f.line) for r in run.results for f in r.findings if f.code == "NPU418")


def test_deepspeed_import_is_a_note_in_a_cuda_only_tree(tmp_path):
    (tmp_path / "trainer.py").write_text(_TRAINER)
    # the import and, from t19b on, the engine set-up call (where DeepSpeed picks the accelerator and builds the
    # optimizer's op); not the accelerator import
    assert _deepspeed_notes(tmp_path) == [("trainer.py", 1), ("trainer.py", 5)]


def test_deepspeed_note_is_dropped_where_the_tree_already_runs_on_ascend(tmp_path):
    (tmp_path / "trainer.py").write_text(_TRAINER)
    (tmp_path / "device_utils.py").write_text(
        "import torch\nfrom transformers.utils import is_torch_npu_available\n\n"
        "def get_device():\n    return 'npu' if is_torch_npu_available() else 'cuda'\n")
    assert _deepspeed_notes(tmp_path) == []


def test_a_namespace_packages_own_imports_are_first_party(tmp_path):
    """s15c (tuned_s15c's DALI and cuda-core trees): `nvidia/dali/__init__.py` with no `nvidia/__init__.py` is a PEP 420
    namespace package; auditing DALI's own source, `from nvidia.dali import ops` is the project's own module. The
    same import in a tree that does not hold the package stays a dependency; the file's CuPy import stays reported."""
    from auditor.runner import run_static
    from auditor.static.firstparty import first_party_packages

    assert first_party_packages(["nvidia/dali/__init__.py", "nvidia/dali/ops.py", "cuda/core/__init__.py",
                                 "pkg/__init__.py", "pkg/sub/__init__.py"]) == {"nvidia.dali", "cuda.core", "pkg"}
    source = "import cupy\nfrom nvidia.dali import ops\nfrom nvidia.dali.pipeline import Pipeline\n\n" \
             "pipe = Pipeline.current()\nops.register('PythonFunction')\nstream = cupy.cuda.Stream(null=True)\n"
    own = tmp_path / "dali"
    (own / "nvidia" / "dali").mkdir(parents=True)
    (own / "nvidia" / "dali" / "__init__.py").write_text("")
    (own / "nvidia" / "dali" / "python_function.py").write_text(source)
    user = tmp_path / "user"
    user.mkdir()
    (user / "train.py").write_text(source)

    def lines(root, rel, category):
        result = next(r for r in run_static([root], jobs=1).results if r.path.endswith(rel))
        return sorted({f.line for f in result.findings if f.category == category and "dali" in (f.symbol or "")})

    assert lines(own, "python_function.py", "third_party") == []
    assert lines(user, "train.py", "third_party") == [2, 3, 5, 6]
    cupy = [f.line for r in run_static([own], jobs=1).results for f in r.findings if "cupy" in (f.symbol or "")]
    assert 1 in cupy and 7 in cupy
