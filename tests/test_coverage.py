"""Queries against the committed coverage tables (op_tables/).

Each spot check names the source line it checks; paths are relative to ../shared/ascend/ unless
they start with a wheel name.  Answers are three-valued: True (yes), False (no), "unverified".
"""
from __future__ import annotations

import argparse
import io
import json
import time

import pytest

from auditor.coverage import ANSWER_KEYS, Coverage, available_lines, lookup, normalize_aten, unsupported_api_details
from auditor.coverage import ops_cmd
from auditor.target import PRODUCTS, Target, resolve_target

NEWEST = "v2.15"
LINES_CHECKED = ("v2.1", "v2.5", "v2.7", "v2.12", "v2.13", NEWEST)


def cov(line: str = NEWEST, product: str = "a2") -> Coverage:
    return Coverage.load(Target(line, product))


# ---- lines, loading ---------------------------------------------------------------------------------

def test_available_lines_come_from_op_plugin_all_version():
    # op-plugin/config/op_plugin_functions.yaml:1  all_version: [v2.1, ..., v2.15]
    assert available_lines() == [f"v2.{i}" for i in range(1, 16)]
    assert resolve_target("2.5.1", "910b") == Target("v2.5", "a2")


def test_load_is_cached_and_fast():
    start = time.process_time()   # CPU time: the box is shared, wall time is not ours
    c = Coverage.load(Target("v2.9", "a3"))
    c.aten("add.Tensor")
    c.api("torch.linalg.norm")
    elapsed = time.process_time() - start
    assert Coverage.load(Target("v2.9", "a3")) is c
    assert elapsed < 0.5  # < 0.3 s on an idle machine; this box is shared


@pytest.mark.parametrize("spelling", ["aten::split.Tensor", "split.Tensor", "aten.split.Tensor",
                                      "torch.ops.aten.split.Tensor"])
def test_aten_spellings_normalize(spelling):
    assert normalize_aten(spelling) == "split.Tensor"
    assert cov().aten(spelling).kind == "aten"


def test_default_overload_spellings():
    assert normalize_aten("aten.lgamma.default") == "lgamma"
    assert cov().aten("aten.lgamma.default").via == cov().aten("lgamma").via


# ---- aten: version ranges -----------------------------------------------------------------------------

def test_op_only_from_v2_5():
    # op-plugin/config/op_plugin_functions.yaml:5564  _thnn_fused_gru_cell  op_api: [v2.5, newest]
    assert cov("v2.4").aten("_thnn_fused_gru_cell").via != "npu kernel (op_api)"
    answer = cov("v2.5").aten("_thnn_fused_gru_cell")
    assert answer.supported is True and answer.via == "npu kernel (op_api)"
    assert "op_plugin_functions.yaml:5564" in answer.source


def test_op_only_from_v2_7():
    # op-plugin/config/op_plugin_functions.yaml:5579  _scaled_mm  op_api: [ v2.7, newest ]
    before = cov("v2.6").aten("aten::_scaled_mm")
    assert before.supported is False and before.via in ("cpu fallback", "raises")
    after = cov("v2.7").aten("aten::_scaled_mm")
    assert after.via == "npu kernel (op_api)" and "op_plugin_functions.yaml:5579" in after.source


def test_op_ending_at_v2_12():
    # op-plugin/config/op_plugin_functions.yaml:1155  argsort.dimname  acl_op/op_api: [v2.1, v2.12]
    assert cov("v2.12").aten("argsort.dimname").via == "npu kernel (op_api)"
    gone = cov("v2.13").aten("argsort.dimname")
    assert gone.supported is False and gone.via == "absent"   # named-tensor overloads left torch 2.13


# ---- aten: composite rule -----------------------------------------------------------------------------

def test_composite_followed_to_a_leaf_without_npu_kernel():
    # torch-2.13.0 wheel native_functions.yaml: linalg_solve has no dispatch (CompositeImplicitAutograd);
    # measured: it calls _linalg_solve_ex, which is CPU/CUDA only (structured_delegate _linalg_solve_ex.result)
    answer = cov("v2.13").aten("linalg_solve")
    assert answer.supported is False and "_linalg_solve_ex" in answer.notes
    leaf = cov("v2.13").aten("_linalg_solve_ex")
    assert leaf.supported is False and leaf.via == "cpu fallback"


def test_composite_without_known_leaves_is_unverified():
    # native_functions.yaml: margin_ranking_loss has no dispatch (CompositeImplicitAutograd); not measured
    answer = cov("v2.13").aten("margin_ranking_loss")
    assert answer.supported == "unverified" and "leaves are not known" in answer.notes


def test_view_copy_is_not_proven_through_its_own_out_overload():
    # native_functions.yaml: view_copy (CompositeExplicitAutogradNonFunctional, tags: view_copy,
    # autogen: view_copy.out): its answer comes from view + clone, and view_copy.out from view_copy
    answer = cov("v2.13").aten("view_copy")
    assert answer.supported is True and "view, clone" in answer.notes
    out = cov("v2.13").aten("view_copy.out")
    assert out.via == "autogen out= (view_copy)"


def test_op_absent_from_the_lines_torch():
    # torch-2.1.0 native_functions.yaml has no rms_norm (added in torch 2.4)
    assert cov("v2.1").aten("rms_norm").via == "absent"
    assert lookup("F.rms_norm", Target("v2.1", "a2")).supported is False
    assert cov("v2.13").aten("rms_norm").via != "absent"


def test_raises_when_no_cpu_kernel():
    # native_functions.yaml: _cudnn_rnn dispatches to CUDA only
    answer = cov("v2.13").aten("_cudnn_rnn")
    assert answer.supported is False and answer.via == "raises"


def test_nonfunctional_with_missing_out_variant_falls_back():
    # aten::lgamma is CompositeExplicitAutogradNonFunctional; lgamma.out is not in op_plugin_functions.yaml
    for line in LINES_CHECKED:
        answer = cov(line).aten("lgamma")
        assert answer.supported is False and answer.via == "cpu fallback"
        assert "lgamma.out" in answer.notes


def test_nonfunctional_follows_its_out_variant_across_lines():
    # op-plugin/config/op_plugin_functions.yaml:5598  bitwise_left_shift.Tensor_out  op_api: [v2.7, newest];
    # aten::bitwise_left_shift.Tensor is CompositeExplicitAutogradNonFunctional and calls it
    old = cov("v2.6").aten("aten::bitwise_left_shift.Tensor")
    assert old.supported is False and "bitwise_left_shift.Tensor_out" in old.notes
    new = cov("v2.7").aten("aten::bitwise_left_shift.Tensor")
    assert new.supported is True and new.via == "structured (bitwise_left_shift.Tensor_out)"
    assert "op_plugin_functions.yaml:5598" in new.source


def test_linalg_eig_falls_back_to_cpu():
    # aten::linalg_eig: not in op_plugin_functions.yaml, no composite kernel in torch 2.13.0
    answer = lookup("aten::linalg_eig", Target("v2.1", "a2"))
    assert answer.kind == "aten" and answer.supported is False and answer.via == "cpu fallback"


def test_torch_npu_core_kernels_from_wheels():
    # torch_npu-2.14.0 wheel: torch_npu/csrc/aten/npu_native_functions.yaml  supported: - view
    answer = cov("v2.14").aten("view")
    assert answer.via == "npu kernel (torch_npu)" and "2.14.0" in answer.source
    # the 2.14.0 package description has no "Hardware support" list: the registration names no product
    assert answer.supported == "unverified" and "no hardware list" in answer.notes
    # the 2.13.0 one lists the Atlas A2 training series (METADATA:259): a registration is a yes there
    v213 = cov("v2.13").aten("view")
    assert v213.supported is True and "METADATA:259 (Hardware support)" in v213.source
    assert cov("v2.13", "a3").aten("view").supported == "unverified"


def test_registrations_speak_for_the_products_the_line_lists():
    # torch_npu-2.7.1.post11 METADATA "Hardware support": Atlas Training series, Atlas A2 Training series,
    # Atlas 800I A2 Inference; aten::add.Tensor is registered op_api and acl_op on v2.7
    answers = {p: cov("v2.7", p).aten("add.Tensor") for p in ("a2", "a3", "950", "910a", "310p")}
    assert answers["a2"].supported is True and answers["910a"].supported is True
    for p in ("a3", "950", "310p"):
        assert answers[p].supported == "unverified" and "under Hardware support" in answers[p].notes


def test_base_name_aggregates_overloads():
    answer = cov().aten("bitwise_left_shift")
    assert answer.kind == "aten" and answer.supported in (True, "unverified")
    assert "overloads covered" in answer.via


# ---- Python APIs -------------------------------------------------------------------------------------

def test_api_support_per_product_and_dtypes():
    # pytorch/docs/native_api/pytorch_2-13-0/torch-linalg.md:41-57  torch.linalg.cholesky: A2 ✔ A3 ✔ 950DT ✘,
    # "`input`仅支持fp32"
    a2 = cov("v2.13", "a2").api("torch.linalg.cholesky")
    assert a2.supported is True and a2.dtypes == ["float32"]
    assert "torch-linalg.md:45" in a2.source
    # the 950DT ✘ against registered kernels: aten::linalg_cholesky -> linalg_cholesky_ex (measured leaves)
    on_950 = cov("v2.13", "950").api("torch.linalg.cholesky")
    assert on_950.supported in (False, "unverified") and ("✘" in on_950.notes or on_950.supported is False)
    assert a2.products == {"a2": True, "a3": True, "950": False, "910a": "unverified", "310p": "unverified"}


def test_api_product_scoped_dtypes():
    # pytorch/docs/native_api/pytorch_2-13-0/torch-Tensor.md:612-613  addcdiv_: A2/A3 bf16,fp16,fp32,fp64;
    # Atlas 训练系列产品 (910A) fp16,fp32,fp64
    assert cov("v2.13", "a2").api("torch.Tensor.addcdiv_").dtypes == ["bfloat16", "float16", "float32", "float64"]
    assert cov("v2.13", "910a").api("torch.Tensor.addcdiv_").dtypes == ["float16", "float32", "float64"]


def test_vmap_unsupported_everywhere_listed():
    # pytorch/docs/native_api/pytorch_2-13-0/torch-func.md:134-144  torch.func.vmap: ✘ ✘ ✘
    for product in ("a2", "a3", "950"):
        answer = lookup("torch.func.vmap", Target("v2.13", product))   # the line whose torch the list is for
        assert answer.kind == "api" and answer.supported is False
    assert "torch.func.vmap" in cov("v2.13", "a2").unsupported_apis()
    # v2.15 builds on torch 2.14/2.15, for which there is no list: the 2.13 list's ✘ is unverified, no NPU501
    assert lookup("torch.func.vmap", Target(NEWEST, "a2")).supported == "unverified"
    assert "torch.func.vmap" not in cov(NEWEST, "a2").unsupported_apis()


def test_sdpa_partial_dtype_parse_keeps_raw_text():
    # pytorch/docs/native_api/pytorch_2-13-0/torch-nn-functional.md:556  "`query`、`key`、`value`仅支持bf16、fp16和fp32"
    answer = lookup("torch.nn.functional.scaled_dot_product_attention", Target("v2.13", "a2"))
    assert answer.supported is True and answer.dtypes == ["bfloat16", "float16", "float32"]
    assert "仅支持bf16、fp16和fp32" in answer.notes
    on_950 = lookup("torch.nn.functional.scaled_dot_product_attention", Target("v2.13", "950"))
    assert on_950.supported in (False, "unverified") and on_950.products["a2"] is True


def test_old_lines_use_the_2_7_1_list():
    assert cov("v2.1").api("torch.linalg.cholesky").source.startswith("pytorch/docs/native_api/pytorch_2-7-1/")


def test_api_not_in_list_answers_from_aten():
    answer = lookup("torch.linalg.eig", Target(NEWEST, "a2"))
    assert answer.kind == "api" and answer.supported is False and "aten::linalg_eig" in answer.notes


def test_unverified_products_are_partial_and_never_listed_as_unsupported():
    assert cov(NEWEST, "910a").unsupported_apis() == {}
    assert cov(NEWEST, "310p").api("torch.linalg.norm").supported == "unverified"


# ---- collectives ---------------------------------------------------------------------------------------

def test_world_size_limits():
    # pytorch/docs/native_api/pytorch_2-7-1/torch-distributed.md:531  `world_size`不支持3，5，6，7
    answer = cov("v2.7").collective("torch.distributed.all_gather_into_tensor")
    assert answer.supported is True and "world_size 3, 5, 6, 7 unsupported" in answer.notes
    assert "torch-distributed.md:518" in answer.source


def test_collective_missing_from_newest_list_uses_older_list():
    # all_gather_into_tensor is absent from pytorch_2-13-0/torch-distributed.md
    answer = cov(NEWEST).collective("all_gather_into_tensor")
    assert "pytorch_2-12-0" in answer.source and "answered from the 2.12.0 list" in answer.source


def test_gather_compatible_mode():
    # pytorch_2-13-0/torch-distributed.md:680-704 (use_compatible_impl)
    answer = lookup("torch.distributed.gather", Target("v2.13", "a3"))
    assert answer.kind == "collective" and answer.supported is True
    assert "use_compatible_impl" in answer.notes and "DESIGN" not in answer.source


@pytest.mark.parametrize("spelling,supported,via", [
    ("ReduceOp.BAND", False, "raises on HCCL"), ("torch.distributed.ReduceOp.BXOR", False, "raises on HCCL"),
    ("AVG", True, "emulated on HCCL"), ("ReduceOp.SUM", True, "hccl native")])
def test_reduce_ops_follow_torch_npus_source(spelling, supported, via):
    # github.com/Ascend/pytorch master torch_npu/csrc/distributed/ProcessGroupHCCL.cpp: hcclOp maps MIN / MAX /
    # SUM / PRODUCT, unsupportedOp raises for BAND / BOR / BXOR, getHcclReduceOp turns AVG into a SUM
    answer = cov("v2.13").collective(spelling)
    assert (answer.supported, answer.via) == (supported, via)
    assert "ProcessGroupHCCL.cpp" in answer.source and "getHcclReduceOp" in answer.source


def test_reduce_ops_per_line_and_product():
    # the v2.2.0 branch lists AVG in unsupportedOp; a member that raises raises on every product, one that
    # works is a yes only where the line's own support list states all_reduce for the product (v2.13: A2, A3;
    # no 310P column; v2.3 has no list of its own)
    assert cov("v2.2").collective("ReduceOp.AVG").supported is False
    avg = cov("v2.3").collective("ReduceOp.AVG")
    assert avg.supported == "unverified" and avg.via == "emulated on HCCL" and "all_reduce on a2" in avg.notes
    assert cov("v2.13", "a3").collective("ReduceOp.SUM").supported is True
    assert cov("v2.13", "310p").collective("ReduceOp.SUM").supported == "unverified"
    assert cov(NEWEST, "310p").collective("ReduceOp.BOR").supported is False


def test_premul_sum_follows_the_source_and_the_wheels():
    # v2.5.1 branch: getHcclReduceOp does not handle PREMUL_SUM ('Unhandled ReduceOp'); v2.6.0 branch head
    # handles it but the torch_npu-2.6.0.post5 wheel has no _make_hccl_premul_sum; 2.8.0.post5 has both
    v28 = cov("v2.8").collective("dist.ReduceOp.PREMUL_SUM")   # emulated; v2.8 has no support list of its own
    assert v28.via == "emulated on HCCL" and v28.supported == "unverified"
    assert cov("v2.7").collective("dist.ReduceOp.PREMUL_SUM").supported is True
    assert cov("v2.6").collective("dist.ReduceOp.PREMUL_SUM").supported == "unverified"
    assert cov("v2.5").collective("dist.ReduceOp.PREMUL_SUM").supported is False


def test_no_answer_cites_the_design_note():
    for line in ("v2.1", "v2.8", NEWEST):
        for symbol in ("ReduceOp.AVG", "torch.distributed.gather", "NCCL_BUFFSIZE", "TORCH_NCCL_BLOCKING_WAIT",
                       "CUDA_VISIBLE_DEVICES", "bf16", "fp8", "aten::add.Tensor"):
            answer = ops_cmd.answer_for(symbol, Target(line, "a2"))
            assert "DESIGN" not in answer.source and "DESIGN" not in answer.notes, (symbol, answer.source)


# ---- custom ops, env vars, dtypes, fusion --------------------------------------------------------------

def test_custom_op_products_dtypes_and_range():
    # op-plugin/docs/custom_APIs/torch_npu/（beta）torch_npu-npu_rms_norm.md:5-10  A3 A2 推理 训练 √;
    # its dtype tables: A2/A3 bfloat16/float16/float32, 推理/训练 float16/float32
    a2 = cov(NEWEST, "a2").custom_op("torch_npu.npu_rms_norm")
    assert a2.supported is True and a2.dtypes == ["bfloat16", "float16", "float32"]
    assert cov("v2.1", "910a").custom_op("npu_rms_norm").dtypes == ["float16", "float32"]
    # the page's product table has no Ascend 950DT row: unverified, not unsupported
    assert cov(NEWEST, "950").custom_op("torch_npu.npu_rms_norm").supported == "unverified"


def test_fusion_attention_layouts_and_products():
    # op-plugin/docs/custom_APIs/torch_npu/torch_npu-npu_fusion_attention.md:5-8  Ascend 950DT √, Atlas A2 √
    answer = cov(NEWEST, "a2").custom_op("torch_npu.npu_fusion_attention")
    assert answer.supported is True
    assert {"BSH", "SBH", "BSND", "BNSD", "TND"} <= set(answer.notes.split("layouts: ")[1].split("\n")[0].split(", "))
    assert answer.products["310p"] == "unverified"   # no row for it on the page


def test_env_counterparts_follow_each_lines_wheel():
    # torch_npu-2.1.0.post17 libtorch_npu.so reads HCCL_BLOCKING_WAIT, not TORCH_HCCL_BLOCKING_WAIT;
    # torch_npu-2.13.0 reads TORCH_HCCL_BLOCKING_WAIT (page collective_communication/TORCH_HCCL_BLOCKING_WAIT.md)
    old = lookup("TORCH_HCCL_BLOCKING_WAIT", Target("v2.1", "a2"))
    assert old.supported is False and old.substitute == "HCCL_BLOCKING_WAIT"
    assert "torch_npu-2.1.0.post17" in old.source
    new = lookup("TORCH_NCCL_BLOCKING_WAIT", Target("v2.13", "a2"))
    assert new.supported is False and new.substitute == "TORCH_HCCL_BLOCKING_WAIT"
    assert "TORCH_HCCL_BLOCKING_WAIT.md" in new.source


def test_nccl_variables_answered_generically():
    answer = lookup("NCCL_DEBUG", Target(NEWEST, "a2"))
    assert answer.kind == "env" and answer.supported is False and answer.substitute is None
    assert "NCCL" in answer.notes


def test_env_page_default_and_unit():
    # pytorch/docs/environment_variable/collective_communication/P2P_HCCL_BUFFSIZE.md:10  "单位为MB，默认配置为20。"
    answer = cov().env_var("P2P_HCCL_BUFFSIZE")
    assert answer.supported is True and "default: 20" in answer.notes and "unit: MB" in answer.notes
    assert cov().env_var("NOT_A_REAL_VARIABLE") is None


def test_product_dtypes_only_from_product_scoped_lists():
    # custom_APIs pages scope dtypes by product (e.g. torch_npu-npu_rms_norm.md: A2/A3 bfloat16, 训练 float16/float32);
    # pytorch_2-13-0/torch-Tensor.md:612-613 addcdiv_: A2/A3 bf16, Atlas 训练系列产品 without bf16
    assert cov(NEWEST, "a2").dtype_supported("bf16") is True
    # the pages that leave 910A out of bf16 are each about one op; none says 910A lacks bf16
    assert cov(NEWEST, "910a").dtype_answer("bf16").supported == "unverified"
    # torch_npu-npu_incre_flash_attention.md:31 lists bfloat16 for Atlas 推理系列加速卡产品, most 310P lists do not
    disputed = cov(NEWEST, "310p").dtype_answer("bf16")
    assert disputed.supported == "unverified" and "disagree" in disputed.notes
    assert cov(NEWEST, "a2").dtype_supported("float32") is True


def test_fusion_patterns_have_sources():
    # msprof-analyze/rules/timeline_fusion_ops.yaml:44-51  npu_rms_norm: "(pow){0,1}-(mean){0,1}-(add){0,1}-rsqrt-mul-(type_as){0,1}"
    patterns = cov().fusion_patterns()
    rms = [p for p in patterns if p["fused_api"] == "torch_npu.npu_rms_norm"]
    assert rms and rms[0]["ops"] == ["pow", "mean", "add", "rsqrt", "mul", "type_as"]
    assert rms[0]["source"].startswith("msprof-analyze/rules/timeline_fusion_ops.yaml:44")
    assert all(p["source"] for p in patterns)


# ---- lookup across lines and products ------------------------------------------------------------------

@pytest.mark.parametrize("line", LINES_CHECKED)
@pytest.mark.parametrize("product", PRODUCTS)
def test_lookup_every_kind_on_every_target(line, product):
    target = Target(line, product)
    for symbol, kind in (("aten::split.Tensor", "aten"), ("aten::linalg_eig", "aten"),
                         ("torch.linalg.norm", "api"),
                         ("torch.nn.functional.scaled_dot_product_attention", "api"),
                         ("torch.distributed.all_reduce", "collective"), ("torch.distributed.gather", "collective"),
                         ("torch_npu.npu_rotary_mul", "custom_op"), ("CUDA_VISIBLE_DEVICES", "env")):
        answer = lookup(symbol, target)
        assert answer.kind == kind, (symbol, answer)
        assert answer.supported in (True, False, "unverified")
        assert set(answer.products) == set(PRODUCTS)
        assert answer.source
        assert list(answer.to_dict()) == list(ANSWER_KEYS)


def test_unknown_symbol_gets_no_verdict():
    for symbol in ("nonsense", "aten::no_such_op", "torch.no_such_module.fn", "", "torch_npu.npu_nothing"):
        answer = lookup(symbol, Target(NEWEST, "a2"))
        assert answer.kind == "unknown" and answer.supported is None


def test_did_you_mean():
    answer = lookup("torch.lianlg.cholesky", Target(NEWEST, "a2"))
    assert answer.supported is None and "did you mean torch.linalg.cholesky" in answer.notes


@pytest.mark.parametrize("spelling", ["F.scaled_dot_product_attention", "nn.functional.scaled_dot_product_attention",
                                      "torch.nn.functional.scaled_dot_product_attention"])
def test_functional_aliases(spelling):
    answer = lookup(spelling, Target(NEWEST, "a2"))
    assert answer.kind == "api" and answer.symbol == "torch.nn.functional.scaled_dot_product_attention"


def test_private_api_list():
    # pytorch/docs/native_api/private_apis.md:24  torch._scaled_mm  是<br>暂不支持Ascend 950DT; 仅支持PyTorch 2.7.1以上版本
    assert lookup("torch._scaled_mm", Target("v2.13", "950")).supported is False
    assert lookup("torch._scaled_mm", Target("v2.13", "a2")).supported is True
    assert lookup("torch._scaled_mm", Target("v2.5", "a2")).supported is False
    assert "private_apis.md:24" in lookup("torch._scaled_mm", Target("v2.13", "a2")).source


def test_module_absent_from_the_lines_torch():
    # torch-2.1.0 wheel has no torch/distributed/pipelining/ (it ships from torch 2.4)
    answer = lookup("torch.distributed.pipelining.pipeline", Target("v2.1", "a2"))
    assert answer.supported is False and answer.via == "absent"
    assert lookup("torch.distributed.pipelining.pipeline", Target("v2.7", "a2")).supported is True


def test_950_cross_in_the_list_stands_where_registrations_are_silent():
    # pytorch_2-13-0/torch-nn.md: torch.nn.Embedding A2 ✔ A3 ✔ 950DT ✘; aten::embedding is registered
    # (op_plugin_functions.yaml:2023), but a registration speaks only for the products the line's wheel lists
    # under Hardware support (910A, A2): nothing contradicts the list's ✘ for 950DT
    answer = lookup("nn.Embedding", Target("v2.13", "950"))
    assert answer.supported is False and answer.via == "unsupported (support list)"


# ---- audit ops --------------------------------------------------------------------------------------

def _ops_args(*argv: str) -> argparse.Namespace:
    parser = argparse.ArgumentParser()
    ops_cmd.add_arguments(parser)
    return parser.parse_args(list(argv))


def test_ops_json_output():
    out = io.StringIO()
    rc = ops_cmd.run(_ops_args("aten::split.Tensor", "torch.func.vmap", "torch.distributed.gather", "bf16",
                               "--format", "json"), Target("v2.1", "910a"), stream=out)
    data = json.loads(out.getvalue())
    assert rc == 0 and [d["kind"] for d in data] == ["aten", "api", "collective", "dtype"]
    assert all(list(d) == list(ANSWER_KEYS) for d in data)
    assert data[3]["supported"] == "unverified"  # op pages list bf16 for A2/A3, not 910A; none says 910A lacks it


def test_ops_text_output_names_target_and_source():
    out = io.StringIO()
    rc = ops_cmd.run(_ops_args("torch.linalg.cholesky"), Target("v2.13", "950"), stream=out)
    text = out.getvalue()
    assert rc == 0 and "v2.13" in text and "torch-linalg.md" in text and "no" in text


def test_ops_all_unknown_exits_2():
    out = io.StringIO()
    assert ops_cmd.run(_ops_args("nonsense", "--format", "json"), Target(NEWEST, "a2"), stream=out) == 2
    assert json.loads(out.getvalue())[0]["kind"] == "unknown"


# ---- issue 12, draw A (seed 4711): the general fixes behind its five wrong answers ----------------------------
def test_member_rows_on_their_class_page_are_the_members():
    # `> forward()` / `> cls_to_become()` under a class heading link to generated/<Class>.html#<Class>.<member>
    cov = Coverage.load(Target("v2.13", "950"))
    cuda = cov.api("torch.nn.Module.cuda")
    assert cuda is not None and cuda.supported is False and "torch-nn.md" in cuda.source
    assert cov.api("torch.nn.LazyConv3d.cls_to_become").supported is True


def test_class_rated_only_through_its_members_is_unverified():
    answer = lookup("torch.nn.LazyConv3d", Target("v2.13", "a2"))
    assert answer.kind == "api" and answer.supported == "unverified"
    assert answer.via == "class rated only through its members" and "cls_to_become: yes" in answer.notes
    uniform = lookup("torch.distributions.uniform.Uniform", Target("v2.13", "a2"))   # was 'unknown'
    assert uniform.supported == "unverified" and "of its members" in uniform.notes


def test_module_rated_through_forward_answers_from_it():
    target = Target("v2.13", "a2")
    layer = lookup("torch.nn.TransformerEncoderLayer", target)
    assert layer.supported is False and "TransformerEncoderLayer.forward" in layer.notes
    assert "torch.nn.TransformerEncoderLayer" in Coverage.load(target).unsupported_apis()


@pytest.mark.parametrize("line,expected", [("v2.5", "unverified"), ("v2.6", "unverified"), ("v2.7", True)])
def test_private_api_on_950_before_v2_7_is_unverified(line, expected):
    answer = lookup("torch.distributed._functional_collectives.reduce_scatter_tensor", Target(line, "950"))
    assert answer.supported == expected
    assert lookup("torch.distributed._functional_collectives.reduce_scatter_tensor", Target(line, "a2")).supported is True


@pytest.mark.parametrize("typo,meant", [
    ("INDUCTOR_HSCEND_CHECK_ACCURACY", "INDUCTOR_ASCEND_CHECK_ACCURACY"),   # an Ascend page's variable
    ("TORCH_NPUFDISABLED_WARNING", "TORCH_NPU_DISABLED_WARNING"),
    ("TORHC_NCCL_ASYNC_ERROR_HANDLING", "TORCH_NCCL_ASYNC_ERROR_HANDLING"),  # a CUDA-side name the tables answer
    ("trch.nn.Linear", "torch.nn.Linear"),                                   # the typo in the prefix itself
])
def test_typos_get_a_suggestion_and_no_verdict(typo, meant):
    answer = lookup(typo, Target("v2.11", "a3"))
    assert answer.kind == "unknown" and answer.supported is None
    assert f"did you mean {meant}" in answer.notes


@pytest.mark.parametrize("symbol,line", [
    ("F.scaled_mm", "v2.3"),                  # only the 2.11+ lists name it; torch 2.3 has no F.scaled_mm (new in 2.10)
    ("torch.onnx.dynamo_export", "v2.13"),    # only the 2.7.1 list names it; torch 2.13 no longer has it
])
def test_yes_from_another_torchs_list_is_unverified(symbol, line):
    answer = lookup(symbol, Target(line, "a2"))
    assert answer.supported == "unverified" and answer.via.startswith("support list of another torch")
    assert "there is no support list for torch" in answer.notes


def test_yes_from_another_list_stands_when_the_aten_op_has_a_kernel_on_the_line():
    # the 2.13.0 list omits Tensor.sigmoid; the 2.7.1 list marks it ✔ and aten::sigmoid is registered on v2.13
    # k12f: the 2.7.1 list is for another torch; a kernel for aten::sigmoid does not state the API's support
    answer = lookup("torch.Tensor.sigmoid", Target("v2.13", "a2"))
    assert answer.supported == "unverified" and answer.via == "support list of another torch (2.7.1)"


def test_dtype_on_950_before_v2_7_is_unverified():
    # draw C (seed 6161): bf16 was a yes for 950DT on v2.6 from unversioned pages
    assert lookup_dtype("bf16", Target("v2.6", "950")).supported == "unverified"
    assert lookup_dtype("bf16", Target("v2.7", "950")).supported is True
    assert lookup_dtype("bf16", Target("v2.6", "a2")).supported is True


def lookup_dtype(dtype, target):
    return ops_cmd.answer_for(dtype, target)


@pytest.mark.parametrize("line,substitute", [("v2.6", "HCCL_BLOCKING_WAIT"), ("v2.13", "TORCH_HCCL_BLOCKING_WAIT")])
def test_nccl_variable_gets_the_spelling_the_lines_wheel_reads(line, substitute):
    # the 2.6.0.post5 wheel reads HCCL_BLOCKING_WAIT only; TORCH_HCCL_BLOCKING_WAIT (which has a page) from 2.12 on
    answer = lookup("TORCH_NCCL_BLOCKING_WAIT", Target(line, "a2"))
    assert answer.supported is False and answer.substitute == substitute


# ---- k12f: a definite answer needs a source for that torch_npu line and that product -------------------

@pytest.mark.parametrize("symbol,line,mark", [
    ("torch.add", "v2.5", "✔"),                                   # the 2.7.1 list is for torch 2.7.1, not 2.5.1
    ("torch.distributed.elastic.timer.TimerServer", "v2.9", "✘"),  # a ✘ from another torch's list too
    ("torch.distributed.all_gather", "v2.2", "✔"),                # collectives answer from the same rows
    ("torch.nn.Dropout", "v2.14", "✔"),                           # v2.14 builds on torch 2.14: the 2.13 list
])
def test_another_torchs_support_list_gives_no_definite_answer(symbol, line, mark):
    product = "950" if "TimerServer" in symbol else "a3"
    answer = lookup(symbol, Target(line, product))
    assert answer.supported == "unverified" and answer.via.startswith("support list of another torch")
    assert f"marks {symbol} {mark}" in answer.notes and "there is no support list for torch" in answer.notes
    assert all(v == "unverified" for v in answer.products.values())


def test_own_torchs_list_stays_definite_and_absent_stays_absent():
    assert lookup("torch.add", Target("v2.7", "a3")).supported is True          # the 2.7.1 list on torch 2.7.1
    assert lookup("torch.func.vmap", Target("v2.13", "a2")).supported is False  # the 2.13.0 list on torch 2.13.0
    absent = lookup("F.rms_norm", Target("v2.1", "a2"))                         # the line's own torch settles it
    assert (absent.supported, absent.via) == (False, "absent")


def test_unverified_list_answers_raise_no_npu501():
    # NPU501 reports only definite "no" answers; a ✘ from another torch's list must not become an error
    # (it is NPU502's, a warning, whose message says the answer is unverified)
    details = unsupported_api_details(Target("v2.9", "950"))
    definite = {name for name, info in details.items() if info["coverage"] == "api"}
    assert "torch.distributed.elastic.timer.TimerServer" not in definite
    assert all(lookup(name, Target("v2.9", "950")).supported is False for name in definite)
    assert all(lookup(name, Target("v2.9", "950")).supported == "unverified" for name in set(details) - definite)


def test_custom_python_api_checked_against_the_lines_wheel():
    # torch_npu-2.5.1.post1 torch_npu/npu/mstx.py defines no annotate; 2.7.1.post11's does (class annotate)
    early = lookup("torch_npu.npu.mstx.annotate", Target("v2.5", "910a"))
    assert (early.supported, early.via) == (False, "absent") and "does not define annotate" in early.notes
    assert lookup("torch_npu.npu.mstx.annotate", Target("v2.7", "910a")).supported is True
    # v2.15 has no torch_npu wheel of its own (2.14.0 stands in): a page's yes is unverified
    late = lookup("torch_npu.npu.graph_task_update_end", Target("v2.15", "a3"))
    assert (late.supported, late.via) == ("unverified", "torch_npu custom op (no wheel of the line)")


def test_dtype_no_needs_a_source_that_the_product_lacks_it():
    # float8 on A3: only op pages (npu_kv_quant_sparse_flash_attention, npu_quant_lightning_indexer) leave A3 out
    answer = lookup_dtype("torch.float8_e4m3fn", Target("v2.11", "a3"))
    assert answer.supported == "unverified" and "no source states that the product lacks" in answer.notes
    # float64 on A2 rests only on the 2.13 torch-Tensor list: definite on v2.13, unverified on v2.6
    assert lookup_dtype("float64", Target("v2.13", "a2")).supported is True
    assert lookup_dtype("float64", Target("v2.6", "a2")).supported == "unverified"


def test_api_only_another_torchs_list_rejects_is_an_unverified_warning(tmp_path):
    """v2.15 has no support list of its own: the 2.13 list's ✘ is not a definite no for it (no error), but the
    nearest source's hint is still reported, as NPU502 (warning); v2.13 has its list, so the same call is NPU501."""
    from auditor.rules import load_rules
    from auditor.static.engine import StaticEngine

    src = ("import torch.nn.functional as F\n\n"
           "def triplet(anchor, positive, negative):\n"
           "    return F.triplet_margin_loss(anchor, positive, negative, margin=0.2)\n")
    path = tmp_path / "loss.py"
    path.write_text(src)
    found = {}
    for line in ("v2.15", "v2.13"):
        details = unsupported_api_details(Target(line, "a2"))
        engine = StaticEngine(load_rules(), product="a2", coverage_apis=details)
        found[line] = [(f.code, f.severity, f.line) for f in engine.analyze_path(path, "loss.py").findings]
    assert found["v2.15"] == [("NPU502", "warning", 4)]
    assert found["v2.13"] == [("NPU501", "error", 4)]
    assert "2.13.0 support list" in unsupported_api_details(Target("v2.15", "a2"))[
        "torch.nn.functional.triplet_margin_loss"]["message"]


def test_torch_npu_python_apis_documented_under_torch_names():
    # op-plugin/docs/custom_APIs/torch_npu/torch_npu-get_device_limit.md documents torch.npu.get_device_limit
    # (rows for A3 and A2 only); torch.npu is torch_npu.npu, so both spellings get that page's answer
    for spelling in ("torch.npu.get_device_limit", "torch_npu.npu.get_device_limit"):
        answer = ops_cmd.answer_for(spelling, Target("v2.10", "310p"))
        assert answer.kind == "custom_op" and answer.supported == "unverified", spelling
        assert "get_device_limit" in answer.source
    assert ops_cmd.answer_for("torch.distributed.is_hccl_available", Target("v2.13", "a2")).kind == "custom_op"


def test_sparse_npu_kernels_from_the_library_symbols():
    # torch-2.13.0 native_functions.yaml: copy_sparse_to_sparse_ has only Sparse* kernels (no dense, no CPU);
    # torch_npu-2.13.0 libtorch_npu.so holds wrap_SparseNPU_copy_sparse_to_sparse__ (Ascend/pytorch
    # torchnpugen/gen_backend_stubs.py generates it; test/test_sparse_coo.py runs it on the NPU), which the
    # npu_native_functions*.yaml files do not list: not a definite "raises"
    answer = cov("v2.13").aten("copy_sparse_to_sparse_")
    assert answer.supported == "unverified" and answer.via == "sparse npu kernel"
    assert "wrap_SparseNPU_copy_sparse_to_sparse__" in answer.source and "libtorch_npu.so" in answer.source
    # an op without a sparse NPU kernel keeps its answer
    assert cov("v2.13").aten("sspaddmm.out").via == "cpu fallback"
