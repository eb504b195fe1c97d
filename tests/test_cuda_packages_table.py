"""g1 (session 35, issue 14): the table of CUDA-only Python packages generated from PyPI's published data
(op_tables/cuda_packages.py -> op_tables/cuda_packages.json) and NPU462, the rule that reads it. The generator's
decisions are tested on metadata shaped as PyPI's JSON API returns it; the committed table on its provenance; the
rule on code written the way the code bases that import these packages write it, with the nearest controls."""
from __future__ import annotations

import importlib.util
import sys
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from auditor.data import load_table
from auditor.rules import load_rules, rules_by_code
from auditor.static import StaticEngine
from static_snippets import code_severities_by_line, codes_at, line_of

ROOT = Path(__file__).resolve().parent.parent
ENGINE = StaticEngine(load_rules())


def _generator():
    spec = importlib.util.spec_from_file_location("cuda_packages", ROOT / "op_tables" / "cuda_packages.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["cuda_packages"] = module
    spec.loader.exec_module(module)
    return module


GEN = _generator()


def _info(name="pkg", summary="", requires=None, classifiers=None):
    return {"name": name, "summary": summary, "requires_dist": requires, "classifiers": classifiers or []}


def _wheel(filename):
    return {"filename": filename, "packagetype": "bdist_wheel", "url": "https://files/x", "size": 1}


# --- the generator's decisions ---------------------------------------------------------------------------------

def test_unconditional_cuda_requirement_is_cuda_only_and_a_marker_or_extra_is_not():
    row = GEN._verdict(_info("torch-tensorrt", requires=["tensorrt>=10.3.0,<10.4.0", "packaging>=23"]),
                       [_wheel("torch_tensorrt-2.5.0-cp311-cp311-manylinux_2_28_x86_64.whl")], [], {})
    assert row["verdict"] == "cuda-only" and "requires tensorrt" in row["evidence"]
    assert "pypi.org/project/torch-tensorrt" in row["evidence"]
    # torch's own nvidia-* dependencies carry a platform marker (CPU wheels elsewhere); an extra is optional
    torch_like = _info("torch", requires=['nvidia-cublas-cu12==12.4.5.8; platform_system == "Linux"',
                                          'cupy-cuda12x; extra == "cuda"'])
    assert GEN._verdict(torch_like, [], [], {})["verdict"] == "cuda-optional"
    assert GEN._unconditional_cuda_requirements(["rmm-cu12==24.10", "numpy"]) == ["rmm-cu12"]
    assert GEN._unconditional_cuda_requirements(["cuda-python>=12; python_version >= '3.9'"]) == []


def test_wheels_that_carry_cuda_code_and_none_for_macos():
    files = ["tinycudann/__init__.py", "tinycudann/_C.cpython-311-x86_64-linux-gnu.so",
             "tinycudann.libs/libcudart-9335f6a2.so.12"]
    linux = [_wheel("pkg-1.0-cp311-cp311-manylinux_2_28_x86_64.whl")]
    assert GEN._verdict(_info(), linux, files, {})["verdict"] == "cuda-only"
    with_mac = linux + [_wheel("pkg-1.0-cp311-cp311-macosx_11_0_arm64.whl")]
    assert GEN._verdict(_info(), with_mac, files, {})["verdict"] == "cuda-optional"
    # a CPU extension beside the CUDA one (bitsandbytes' libbitsandbytes_cpu.so) is a CPU path
    assert GEN._verdict(_info(), linux, files + ["pkg/libpkg_cpu.so"], {})["verdict"] == "cuda-optional"


def test_sdist_builds():
    cuda_only = {"setup.py": "from torch.utils.cpp_extension import BuildExtension, CppExtension, CUDAExtension\n"
                             "ext_modules = [CUDAExtension('causal_conv1d_cuda', sources=['csrc/causal_conv1d.cpp'])]\n"}
    row = GEN._verdict(_info("causal-conv1d"), [], [], cuda_only)
    assert row["verdict"] == "cuda-only" and "CUDAExtension" in row["evidence"]
    twins = {"setup.py": "ext = [CppExtension('fast_transformers.causal_product.causal_product_cpu', ...)]\n"
                         "ext += [CUDAExtension('fast_transformers.causal_product.causal_product_cuda', ...)]\n"}
    assert GEN._verdict(_info("pytorch-fast-transformers"), [], [], twins)["verdict"] == "cuda-ops"
    cmake = {"CMakeLists.txt": "project(torchscatter)\noption(WITH_CUDA \"Enable CUDA support\" OFF)\n"
                               "if (WITH_CUDA)\n  enable_language(CUDA)\nendif()\n"}
    assert GEN._verdict(_info("torch-scatter"), [], [], cmake)["verdict"] == "cuda-ops"
    assert GEN._verdict(_info("einops"), [], [], {"setup.py": "setup(name='einops')\n"})["verdict"] == "not-cuda"


def test_summaries_that_say_cuda_bindings():
    assert GEN._verdict(_info("pynvrtc", "Python bindings to NVRTC"), [], [], {})["verdict"] == "cuda-only"
    assert GEN._verdict(_info("nvidia-ml-py", "Python Bindings for the NVIDIA Management Library"), [], [],
                        {})["verdict"] == "cuda-only"
    # a package that merely runs on GPUs is no binding
    assert GEN._verdict(_info("dask-cuda", "Utilities for Dask and CUDA interactions"), [], [],
                        {})["verdict"] == "not-cuda"
    assert GEN._verdict(_info("x", "Torch NPU kernels for Ascend"), [], [], {})["verdict"] == "ascend"


def test_import_names_come_from_the_artifacts():
    assert GEN._import_names(["a/__init__.py", "a-1.0.dist-info/RECORD", "b.py", "c.cpython-311-x86_64-linux-gnu.so",
                              "tests/test_a.py", "setup.py"]) == {"a", "b", "c"}
    assert GEN._import_names(["src/fast_transformers/__init__.py"]) == {"fast_transformers"}
    assert GEN._import_names(["x/y.py"], "pynvml\n") == {"pynvml"}
    assert GEN._spellings("fast_transformers")[:2] == ["fast_transformers", "fast-transformers"]
    assert "pytorch-fast-transformers" in GEN._spellings("fast_transformers")


def test_offline_is_a_clear_error(monkeypatch, capsys, tmp_path):
    def offline(request, timeout=30):
        raise urllib.error.URLError("[Errno -3] Temporary failure in name resolution")

    monkeypatch.setattr(urllib.request, "urlopen", offline)
    monkeypatch.setattr(GEN, "TABLE", tmp_path / "cuda_packages.json")
    assert GEN.main(["resolve"]) == 2
    assert "PyPI is not reachable" in capsys.readouterr().err
    assert not (tmp_path / "cuda_packages.json").exists()
    with pytest.raises(SystemExit):
        GEN.main(["--help"])


# --- the committed table ----------------------------------------------------------------------------------------

def test_table_rows_carry_their_pypi_evidence():
    table = load_table("cuda_packages.json")
    rows = table["packages"]
    assert table["looked_up"] == len(rows) and table["candidates"] >= len(rows)
    assert sum(table["counts"].values()) == len(rows)
    for name, row in rows.items():
        assert row["import"] == name and row["verdict"] in ("cuda-only", "cuda-ops", "cuda-optional", "not-cuda",
                                                            "ascend", "unresolved")
        if row["verdict"] in ("cuda-only", "cuda-ops"):
            assert row["dist"] and f"pypi.org/project/{row['dist']}" in row["evidence"], name


def test_rule_reads_the_table_and_leaves_hand_written_rules_their_packages():
    rule = rules_by_code()["NPU462"]
    rows = load_table("cuda_packages.json")["packages"]
    names = set(rule.match["qualname"])
    reported = {n for n in names if not n.endswith(".*")}
    # a cuda-ops row reports the modules that hold its CUDA ops, a cuda-only row the whole package
    for n in reported:
        row = rows[n] if n in rows else rows[n.split(".")[0]]
        assert row["verdict"] == "cuda-only" and n == row["import"] or \
            row["verdict"] == "cuda-ops" and n in row["modules"], n
    assert "fast_transformers.causal_product" in reported and "fast_transformers" not in reported
    # mamba_ssm, flash_attn, pynvrtc, torch_tensorrt: each keeps its own rule (NPU402, the attention rules, NPU408,
    # NPU409), whatever the table says of it
    for name in ("mamba_ssm", "flash_attn", "pynvrtc", "torch_tensorrt", "cupy", "pycuda"):
        assert name not in names
    assert rule.detail("fast_transformers.causal_product").severity == "warning"
    assert "pytorch-fast-transformers" in rule.detail("fast_transformers.causal_product").message


# --- the rule on real shapes ------------------------------------------------------------------------------------

def _found(src: bytes, path: str = "main.py"):
    return code_severities_by_line(ENGINE, src, path)


# S4's models/s4/... and the fast-transformers attention users: the package's CUDA op imported by another code base
FAST_TRANSFORMERS = b'''"""Linear attention with fast_transformers' causal product (import fast_transformers first)."""
import torch
from fast_transformers.causal_product import CausalDotProduct
from fast_transformers.feature_maps import elu_feature_map

# from fast_transformers.builders import TransformerEncoderBuilder


class CausalLinearAttention(torch.nn.Module):
    def __init__(self, query_dims):
        super().__init__()
        self.feature_map = elu_feature_map(query_dims)

    def forward(self, queries, keys, values):
        if queries.shape[-1] > 64:
            raise ValueError("fast_transformers.causal_product supports head dims up to 64")
        V = CausalDotProduct.apply(queries, keys, values)
        return V
'''


def test_cuda_ops_package_is_a_warning_with_its_evidence():
    found = _found(FAST_TRANSFORMERS)
    assert ("NPU462", "warning") in found[line_of(FAST_TRANSFORMERS, "from fast_transformers.causal_product")]
    assert ("NPU462", "warning") in found[line_of(FAST_TRANSFORMERS, "V = CausalDotProduct.apply")]
    # the package's pure-PyTorch modules need no CUDA (feature maps, builders)
    assert "NPU462" not in codes_at(found, line_of(FAST_TRANSFORMERS, "from fast_transformers.feature_maps"))
    assert "NPU462" not in codes_at(found, line_of(FAST_TRANSFORMERS, "self.feature_map = elu_feature_map"))
    # the docstring, the comment and the message string name the package and are no findings
    for text in ('"""Linear attention', "# from fast_transformers", "raise ValueError"):
        assert "NPU462" not in codes_at(found, line_of(FAST_TRANSFORMERS, text)), text
    findings = ENGINE.analyze_bytes(FAST_TRANSFORMERS, "main.py").findings
    message = next(f.message for f in findings if f.code == "NPU462")
    assert "pytorch-fast-transformers" in message and "pypi.org/project/pytorch-fast-transformers" in message


# kakaobrain's torchlars (a CUDAExtension and nothing else) as SimCLR / BYOL trainers import it, and CV-CUDA
TORCHLARS = b"""import torch
try:
    from torchlars import LARS
except ImportError:
    LARS = None

if torch.cuda.is_available():
    import cvcuda

from torchlars import LARS as TorchLARS


def build_optimizer(model, lr):
    base_optimizer = torch.optim.SGD(model.parameters(), lr=lr, momentum=0.9)
    return TorchLARS(optimizer=base_optimizer, eps=1e-8, trust_coef=0.001)
"""


def test_cuda_only_package_is_an_error_and_its_guards_hold():
    found = _found(TORCHLARS)
    assert ("NPU462", "error") in found[line_of(TORCHLARS, "from torchlars import LARS as TorchLARS")]
    assert ("NPU462", "error") in found[line_of(TORCHLARS, "return TorchLARS(")]
    # an import with an ImportError fallback and one under a CUDA check are not errors
    assert found[line_of(TORCHLARS, "    from torchlars import LARS")] == {("NPU462", "warning")}
    assert found[line_of(TORCHLARS, "import cvcuda")] == {("NPU462", "warning")}
    message = next(f.message for f in ENGINE.analyze_bytes(TORCHLARS, "main.py").findings if f.symbol == "cvcuda")
    assert "cvcuda-cu12" in message and "per-CUDA-version builds" in message


def test_the_package_own_tree_is_first_party(tmp_path):
    from auditor.runner import run_static

    (tmp_path / "fast_transformers" / "causal_product").mkdir(parents=True)
    (tmp_path / "fast_transformers" / "__init__.py").write_text("")
    (tmp_path / "fast_transformers" / "causal_product" / "__init__.py").write_text("")
    (tmp_path / "fast_transformers" / "attention.py").write_text(
        "from fast_transformers.causal_product import causal_dot_product\n")
    report = run_static([tmp_path], jobs=1)
    assert not [f for r in report.results for f in r.findings if f.code == "NPU462"]
