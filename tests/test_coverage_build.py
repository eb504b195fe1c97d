"""The table builder: byte-for-byte reproduction of op_tables/ and the parsers it relies on."""
from __future__ import annotations

from pathlib import Path

import pytest

from auditor.coverage import build, build_aten, build_docs
from auditor.data import tables_dir

ASCEND = build.DEFAULT_ASCEND_DIR
LINES = [f"v2.{i}" for i in range(1, 16)]
needs_sources = pytest.mark.skipif(not (ASCEND / build_aten.OP_PLUGIN_YAML).is_file(),
                                   reason=f"Ascend snapshots not found at {ASCEND}")


def generated_files(root: Path) -> dict[str, bytes]:
    """Every table the builder writes (inputs such as wheel_data/ and the scripts are not outputs, nor is
    msprobe_thresholds.json, which op_tables/msprobe_thresholds.py writes from the mindstudio-probe wheel)."""
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in sorted(root.rglob("*.json"))
            if "wheel_data" not in p.parts and p.name != "msprobe_thresholds.json"}


@needs_sources
def test_build_reproduces_committed_tables_byte_for_byte(tmp_path):
    pytest.importorskip("torch")
    counts = build.build(ASCEND, tmp_path)
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
    # the one link without '.html' (torch-nn-functional.md, scaled_dot_product_attention)
    assert build_docs.qualname_from_link(
        "torch.nn.functional.scaled_dot_product_attention",
        "https://pytorch.org/docs/2.13/generated/torch.nn.functional.scaled_dot_product_attention") \
        == "torch.nn.functional.scaled_dot_product_attention"


@needs_sources
def test_every_op_plugin_entry_lands_in_one_table():
    pytest.importorskip("torch")
    lines, rows = build_aten.read_op_plugin(ASCEND)
    _, registry = build_aten.torch_registry()
    aten, custom = build.split_op_plugin(rows, registry)
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
