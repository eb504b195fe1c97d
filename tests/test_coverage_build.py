"""The table builder: byte-for-byte reproduction of op_tables/ and the parsers it relies on."""
from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

import importlib.util

from auditor.coverage import build, build_aten, build_docs
from auditor.data import tables_dir

ASCEND = build.DEFAULT_ASCEND_DIR
LINES = [f"v2.{i}" for i in range(1, 16)]
needs_sources = pytest.mark.skipif(not (ASCEND / build_aten.OP_PLUGIN_YAML).is_file(),
                                   reason=f"Ascend snapshots not found at {ASCEND}")


def generated_files(root: Path) -> dict[str, bytes]:
    """Every table the builder writes (inputs such as wheel_data/ and the scripts are not outputs, nor is
    msprobe_thresholds.json, which op_tables/msprobe_thresholds.py writes from the mindstudio-probe wheel, nor
    cuda_packages.json, which op_tables/cuda_packages.py writes from PyPI's data)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.json"))
            if "wheel_data" not in p.parts and "inputs" not in p.parts
            and p.name not in ("msprobe_thresholds.json", "cuda_packages.json")}


@needs_sources
def test_build_reproduces_committed_tables_byte_for_byte(tmp_path):
    counts = build.build(ASCEND, tmp_path)   # no torch needed: the registry inputs are committed
    fresh, committed = generated_files(tmp_path), generated_files(tables_dir())
    assert sorted(fresh) == sorted(committed)
    different = [name for name in fresh if fresh[name] != committed[name]]
    assert different == [], f"rebuild differs from op_tables/: {different} (run python -m auditor.coverage.build)"
    assert counts["aten.json"] > 3000 and counts["api/torch-2.13.0.json"] > 2500


def test_missing_sources_give_a_message_not_a_traceback(tmp_path, capsys):
    assert build.main(["--ascend-dir", str(tmp_path / "nowhere"), "--out", str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert "does not hold the Ascend snapshots" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("spec,expected", [
    ("all_version", LINES),
    (["v2.1", "newest"], LINES),
    (["v2.1", "v2.12"], LINES[:12]),
    (["v2.7", "newest"], LINES[6:]),
    ("v2.2", ["v2.2"]),
    ("v2.1, v2.2, v2.3", ["v2.1", "v2.2", "v2.3"]),
    (None, []),
])
def test_version_specs(spec, expected):
    # spellings found in op_plugin_functions.yaml: 'all_version', '[v2.1, v2.12]', '[ v2.7, newest ]',
    # 'v2.2', 'v2.1, v2.2, v2.3'
    assert build_aten.expand_versions(spec, LINES) == expected


def test_unknown_version_in_spec_is_an_error():
    with pytest.raises(ValueError, match="v3.0"):
        build_aten.expand_versions(["v2.1", "v3.0"], LINES)


def test_op_keys_and_ranges():
    assert build_aten.op_key("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor") == "add.Tensor"
    assert build_aten.op_key("lgamma(Tensor self) -> Tensor") == "lgamma"
    assert build_aten.to_ranges(["v2.1", "v2.2", "v2.5"], LINES) == [["v2.1", "v2.2"], ["v2.5", "v2.5"]]


def test_restriction_parsing_on_real_text():
    # pytorch/docs/native_api/pytorch_2-13-0/torch-Tensor.md:612-614 (Tensor.addcdiv_)
    raw = ("- <term>Atlas A2 训练系列产品</term>、<term>Atlas A3 训练系列产品</term>：`self`仅支持bf16，fp16，fp32，fp64\n"
           "- <term>Atlas 训练系列产品</term>：`self`仅支持fp16，fp32，fp64\n"
           "- int64类型不支持三个`tensor`同时广播")
    assert build_docs.parse_restrictions(raw) == [
        {"args": ["self"], "dtypes": ["bfloat16", "float16", "float32", "float64"], "products": ["a2", "a3"]},
        {"args": ["self"], "dtypes": ["float16", "float32", "float64"], "products": ["910a"]},
    ]
    # torch-nn-functional.md:556 (scaled_dot_product_attention): '和' joins the last dtype
    assert build_docs.parse_restrictions("- `query`、`key`、`value`仅支持bf16、fp16和fp32。所有参数")[0] == {
        "args": ["query", "key", "value"], "dtypes": ["bfloat16", "float16", "float32"], "products": None}


def test_qualname_from_doc_links():
    assert build_docs.qualname_from_link(
        "Tensor.addcdiv_", "https://pytorch.org/docs/2.13/generated/torch.Tensor.addcdiv_.html") == "torch.Tensor.addcdiv_"
    assert build_docs.qualname_from_link(
        "torch.distributed.gather", "https://pytorch.org/docs/2.7/distributed.html#torch.distributed.gather") \
        == "torch.distributed.gather"
    # a member on its class's page is the member's row (draw A, seed 4711: LazyConv3d took cls_to_become's ✔)
    assert build_docs.qualname_from_link(
        "torch.nn.LazyConv3d.cls_to_become",
        "https://pytorch.org/docs/2.13/generated/torch.nn.LazyConv3d.html#torch.nn.LazyConv3d.cls_to_become") \
        == "torch.nn.LazyConv3d.cls_to_become"
    assert build_docs.qualname_from_link(
        "torch.nn.Module.cuda", "https://pytorch.org/docs/2.11/generated/torch.nn.Module.html#torch.nn.Module.cuda") \
        == "torch.nn.Module.cuda"
    # the anchor names the item even on a page whose name is not a qualified name (torch.cuda.Stream_class.html)
    assert build_docs.qualname_from_link(
        "torch.cuda.Stream.wait_stream",
        "https://pytorch.org/docs/2.13/generated/torch.cuda.Stream_class.html#torch.cuda.Stream.wait_stream") \
        == "torch.cuda.Stream.wait_stream"
    # a section anchor is not a name (the link text is); Markdown escapes are undone
    assert build_docs.qualname_from_link(
        "torch.onnx.ONNXProgram.save", "https://pytorch.org/docs/2.13/onnx.html#torch-onnx-apis") == "torch.onnx.ONNXProgram.save"
    assert build_docs.qualname_from_link(
        "torch.distributed.PrefixStore.\\_\\_init\\_\\_",
        "https://pytorch.org/docs/2.13/distributed.html#torch.distributed.PrefixStore.\\_\\_init\\_\\_") \
        == "torch.distributed.PrefixStore.__init__"
    # the one link without '.html' (torch-nn-functional.md, scaled_dot_product_attention)
    assert build_docs.qualname_from_link(
        "torch.nn.functional.scaled_dot_product_attention",
        "https://pytorch.org/docs/2.13/generated/torch.nn.functional.scaled_dot_product_attention") \
        == "torch.nn.functional.scaled_dot_product_attention"


@needs_sources
def test_every_op_plugin_entry_lands_in_one_table():
    lines, rows = build_aten.read_op_plugin(ASCEND)
    pinned = json.loads((build.INPUTS / "PINNED.json").read_text())
    schemas = build_aten.read_torch_schemas(build.INPUTS, pinned["torch_for_line"], lines)
    aten, custom = build.split_op_plugin(rows, set().union(*(s["ops"] for s in schemas.values())))
    assert lines == LINES
    assert {r["op"] for r in rows} == set(aten) | set(custom) and not set(aten) & set(custom)
    assert "npu_rms_norm" in custom and "embedding" in aten        # symint section holds both kinds
    assert "q_scale" in aten                                        # quant section: aten by definition


def test_line_to_support_list_mapping():
    docs = ["2.7.1", "2.11.0", "2.12.0", "2.13.0"]
    assert build.api_doc_for_line("v2.1", docs) == "2.7.1"
    assert build.api_doc_for_line("v2.10", docs) == "2.7.1"
    assert build.api_doc_for_line("v2.11", docs) == "2.11.0"
    assert build.api_doc_for_line("v2.15", docs) == "2.13.0"


# ---- pinned registry inputs (op_tables/inputs/) ----------------------------------------------------

def _inputs_module():
    spec = importlib.util.spec_from_file_location("op_tables_inputs", build.REPO_ROOT / "op_tables" / "inputs.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_derived_inputs_match_their_pinned_hashes():
    # runs in CI without the wheels: every derived file is recorded in PINNED.json with its sha256
    inputs = _inputs_module()
    assert inputs.check() == []
    pinned = json.loads(inputs.PINNED.read_text())
    lines = [f"v2.{i}" for i in range(1, 16)]
    assert sorted(pinned["torch_for_line"]) == sorted(lines)
    torch_versions = {w["version"] for w in pinned["wheels"] if w["package"] == "torch"}
    assert {pinned["torch_for_line"][line] for line in lines} - torch_versions == {"2.15.0"}  # not on PyPI for us
    assert all(len(w["sha256"]) == 64 for w in pinned["wheels"])


WHEEL_DIR = Path(os.environ.get("NPU_AUDIT_WHEEL_DIR", "/tmp/npu-audit-wheels"))


@pytest.mark.skipif(not any(WHEEL_DIR.glob("torch-2.1.0-*.whl")), reason=f"raw wheels not in {WHEEL_DIR}")
def test_derived_inputs_reextract_from_the_raw_wheels():
    inputs = _inputs_module()
    wheel = next(WHEEL_DIR.glob("torch-2.1.0-*.whl"))
    fresh = inputs.extract_torch(wheel, "2.1.0")
    committed = json.loads((inputs.INPUTS / "torch-2.1.0.json").read_text())
    assert fresh == committed


def test_schema_rows_from_real_yaml_entries():
    # torch 2.1.0 native_functions.yaml entries, copied verbatim
    text = b"""
- func: view_copy(Tensor self, SymInt[] size) -> Tensor
  variants: function
  dispatch:
    CompositeExplicitAutogradNonFunctional: view_copy_symint
  tags: view_copy
  autogen: view_copy.out
- func: lgamma.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU, CUDA: lgamma_out
- func: lgamma(Tensor self) -> Tensor
  structured_delegate: lgamma.out
- func: einsum(str equation, Tensor[] tensors, *, int[]? path=None) -> Tensor
"""
    rows = _inputs_module().schema_rows(text)
    assert rows["view_copy"] == {"d": ["CompositeExplicitAutogradNonFunctional"], "vc": True}
    assert rows["view_copy.out"] == {"d": ["CompositeExplicitAutograd"], "ag": "view_copy", "out": True}
    assert rows["lgamma.out"] == {"d": ["CPU", "CUDA"], "out": True}
    assert rows["lgamma"] == {"d": [], "sd": "lgamma.out"}
    assert rows["einsum"] == {"d": ["CompositeImplicitAutograd"]}
