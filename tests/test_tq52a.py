"""tq52a (session 52, TUNED on heldout66): each family on code shaped like the tree it was read in, with the control
that keeps its finding."""
from __future__ import annotations

from tests.test_project_t23c import _codes, _tree

# 1. A config device the code overwrites in every arm of a device-count test (sb-ai-lab/LightAutoML's presets:
# `TabularAutoML.infer_auto_params` stores `self.nn_params["device"]` from the GPU ids it found, else "cpu")
PRESET = """\
    import os

    import torch
    import yaml


    class TabularAutoML:
        def __init__(self, config_path, gpu_ids="all"):
            with open(config_path) as f:
                params = yaml.safe_load(f)
            self.nn_params = params["nn_params"]
            self.gpu_ids = gpu_ids

        def infer_auto_params(self):
            gpu_cnt = torch.cuda.device_count()
            gpu_ids = self.gpu_ids
            if gpu_cnt > 0 and gpu_ids:
                if gpu_ids == "all":
                    gpu_ids = ",".join(list(map(str, range(gpu_cnt))))
                self.nn_params["device"] = gpu_ids.split(",")
            else:
                self.nn_params["device"] = "cpu"
            torch.set_num_threads(os.cpu_count())
    """

CONFIG = """\
    nn_params:
      n_epochs: 20
      bs: 512
      # device
      device: cuda:0
      num_workers: 0
    """


def _preset_findings(tmp_path, preset: str) -> list[tuple[int, str]]:
    root = _tree(tmp_path, {"automl/presets/tabular_presets.py": preset,
                            "automl/presets/tabular_configs/conf_0.yml": CONFIG})
    return _codes(root, "automl/presets/tabular_configs/conf_0.yml")


def test_a_device_the_code_stores_in_every_arm_of_a_device_count_test_is_no_finding(tmp_path):
    assert (5, "NPU019") not in _preset_findings(tmp_path, PRESET)


def test_a_count_test_with_no_else_arm_keeps_the_configs_device(tmp_path):
    no_else = PRESET.replace('            else:\n                self.nn_params["device"] = "cpu"\n', "")
    assert (5, "NPU019") in _preset_findings(tmp_path, no_else)


def test_an_arm_that_stores_the_configs_own_value_keeps_its_device(tmp_path):
    own = PRESET.replace('self.nn_params["device"] = gpu_ids.split(",")',
                         'self.nn_params["device"] = self.nn_params["device"]')
    assert (5, "NPU019") in _preset_findings(tmp_path, own)


def test_a_test_on_a_count_the_code_did_not_probe_keeps_the_configs_device(tmp_path):
    unprobed = PRESET.replace("gpu_cnt = torch.cuda.device_count()", "gpu_cnt = len(self.gpu_ids)")
    assert (5, "NPU019") in _preset_findings(tmp_path, unprobed)


# 2. Items of a comprehension over a host value (LightAutoML's L2X `important_tokens.extend([x.tolist() for x in
# imp_mask.cpu().numpy()])`): numpy rows, no device copy per item (policy (e))
def _host_hints(code: str) -> list[tuple[int, str]]:
    import textwrap

    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    result = StaticEngine(load_rules()).analyze_bytes(textwrap.dedent(code).encode(), "interpretation/l2x.py")
    return [(f.line, f.code) for f in result.findings if f.code == "NPU703"]


L2X_LOOP = """\
    import torch


    def important_tokens(model, loader, device):
        tokens = []
        for batch in loader:
            x = batch["input_ids"]
            x = x.to(device)
            _, imp_mask = model(x)
            tokens.extend([x.tolist() for x in {source}])
        return tokens
    """


def test_items_of_a_comprehension_over_a_numpy_copy_are_host_values():
    assert _host_hints(L2X_LOOP.format(source="imp_mask.cpu().numpy()")) == []


def test_items_of_a_comprehension_over_the_device_tensor_keep_the_hint():
    assert _host_hints(L2X_LOOP.format(source="imp_mask")) == [(10, "NPU703")]


def test_a_for_loop_over_a_numpy_copy_reads_host_rows_too():
    loop = L2X_LOOP.replace("            tokens.extend([x.tolist() for x in {source}])",
                            "            for row in {source}:\n                tokens.append(row.tolist())")
    assert _host_hints(loop.format(source="imp_mask.cpu().numpy()")) == []
    assert _host_hints(loop.format(source="imp_mask")) == [(11, "NPU703")]


# 3. A class bound to `self.X` and built only through it (LightAutoML's `AutoNLPWrap`: `self.transformer =
# DLTransformer` / `WeightedAverageTransformer`, then `self.transformer(verbose=..., device=self.device, ...)`):
# those calls are its callers; each passes the device, so the default is policy (f)'s info
DL_TRANSFORMERS = """\
    import torch


    class DLTransformer:
        def __init__(self, model, model_params, verbose=False, device: str = "cuda", multigpu=False):
            self.device = torch.device(device)
            self.model = model(**model_params).to(self.device)
            self.verbose = verbose
            self.multigpu = multigpu

        def fit(self, data):
            return self
    """

TEXT = """\
    import torch

    from ..text.dl_transformers import DLTransformer


    class WeightedAverageTransformer:
        def __init__(self, embedding_model, embed_size, verbose=False, device="cpu", multigpu=False):
            self.embed_size = embed_size


    class AutoNLPWrap:
        def __init__(self, model_name, device="0", multigpu=False, verbose=False):
            self.device = device
            self.multigpu = multigpu
            self.verbose = verbose
            self.transformer_params = {"model": torch.nn.Linear, "model_params": {"in_features": 4, "out_features": 2}}
            if model_name == "wat":
                self.transformer = WeightedAverageTransformer
            else:
                self.transformer = DLTransformer

        def fit(self, texts):
            transformer = self.transformer(
                verbose=self.verbose,
                device=self.device,
                multigpu=self.multigpu,
                **self.transformer_params,
            )
            return transformer.fit(texts)
    """


def _default_severities(tmp_path, text: str) -> set[tuple[str, str | None]]:
    from auditor.runner import run_static
    from tests.static_snippets import write_tree

    root = write_tree(tmp_path / "t", {"automl/__init__.py": "", "automl/text/__init__.py": "",
                                       "automl/text/dl_transformers.py": DL_TRANSFORMERS,
                                       "automl/transformers/__init__.py": "", "automl/transformers/text.py": text})
    run = run_static([root], jobs=1)
    r = next(r for r in run.results if r.path == "automl/text/dl_transformers.py")
    return {(f.severity, f.data.get("context")) for f in r.findings if f.line == 5 and f.code == "NPU003"}


def test_a_class_built_only_through_the_attribute_it_is_bound_to_has_those_callers(tmp_path):
    assert _default_severities(tmp_path, TEXT) == {("info", "overridden-default")}


def test_a_call_through_the_attribute_that_lets_the_default_through_keeps_it(tmp_path):
    assert _default_severities(tmp_path, TEXT.replace("                device=self.device,\n", "")) == {("error", None)}


def test_an_attribute_handed_on_as_a_value_keeps_the_default(tmp_path):
    handed = TEXT.replace("            return transformer.fit(texts)",
                          "            self.factories = [self.transformer]\n            return transformer.fit(texts)")
    assert _default_severities(tmp_path, handed) == {("error", None)}


# 4. A CI step that selects Ascend devices itself (LMCache-Ascend's perf workflow on its 910C runner: `export
# ASCEND_RT_VISIBLE_DEVICES=14,15`, then `vllm serve ... --kv-transfer-config ...LMCacheAscendConnector`): the engine
# it starts runs on them through vllm-ascend, as tq47b / tq50a read a shell script that does so
WORKFLOW = """\
    name: Perf Tests
    on: [workflow_dispatch]
    jobs:
      perf-910c:
        runs-on: [self-hosted, Linux, ARM64, 910c]
        steps:
          - uses: actions/checkout@v4
          - name: Run Performance Tests
            shell: bash
            run: |
              export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/usr/local/Ascend/ascend-toolkit/latest/devlib
              export ASCEND_RT_VISIBLE_DEVICES=14,15
              vllm serve "$MODEL_PATH" \\
                --tensor-parallel-size 2 \\
                --port 8019 > server.log 2>&1 &
          - name: Other step
            run: |
              vllm serve "$MODEL_PATH" --port 8020
    """


def _engine_starts(text: str) -> list[tuple[int, str, str]]:
    import textwrap

    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    rel = ".github/workflows/perf.yml"
    result = StaticEngine(load_rules()).analyze_bytes(textwrap.dedent(text).encode(), rel)
    return sorted((f.line, f.code, f.severity) for f in result.findings if f.code == "NPU447")


def test_an_engine_started_by_a_ci_step_that_selects_ascend_devices_is_info():
    found = _engine_starts(WORKFLOW)
    assert (13, "NPU447", "info") in found
    # the other step selects nothing: its start keeps the rule's severity
    assert [s for line, _, s in found if line == 18] == ["warning"]


def test_a_step_that_also_selects_cuda_devices_keeps_the_engine_start():
    both = WORKFLOW.replace("export ASCEND_RT_VISIBLE_DEVICES=14,15",
                            "export ASCEND_RT_VISIBLE_DEVICES=14,15 CUDA_VISIBLE_DEVICES=0,1")
    assert [s for line, _, s in _engine_starts(both) if line == 13] == ["warning"]


# 5. CUDA-tensor checks in front of kernels that need CUDA anyway (Upscale-A-Video's copy of MosaicML's MPT
# attention: `check_valid_inputs` reached only after `from flash_attn import ...`; the Triton flash-attention
# backward's `assert bias.is_cuda` before `_bwd_kernel[grid](...)`)
MPT_ATTENTION = """\
    import torch


    def check_valid_inputs(*tensors, valid_dtypes=[torch.float16, torch.bfloat16]):
        for tensor in tensors:
            if tensor.dtype not in valid_dtypes:
                raise TypeError(f"tensor.dtype={tensor.dtype!r} must be in valid_dtypes={valid_dtypes!r}.")
            if not tensor.is_cuda:
                raise TypeError(f"Inputs must be cuda tensors (tensor.is_cuda={tensor.is_cuda!r}).")


    def flash_attn_fn(query, key, value, n_heads):
        try:
            from flash_attn import bert_padding, flash_attn_interface
        except:
            raise RuntimeError("Please install flash-attn==1.0.3.post0")
        check_valid_inputs(query, key, value)
        return flash_attn_interface.flash_attn_unpadded_func(query, key, value)


    def triton_flash_attn_fn(query, key, value, n_heads):
        try:
            from .flash_attn_triton import flash_attn_func
        except:
            raise RuntimeError("Requirements for `attn_impl: triton` not installed.")
        check_valid_inputs(query, key, value)
        return flash_attn_func(query, key, value)
    """

TRITON_BACKWARD = """\
    import torch
    import triton
    import triton.language as tl


    @triton.jit
    def _bwd_kernel(Q, K, V, Bias, DO, BLOCK_M: tl.constexpr):
        start_n = tl.program_id(0)


    def _flash_attn_backward(do, q, k, v, bias=None):
        if bias is not None:
            assert bias.dtype in [q.dtype, torch.float]
            assert bias.is_cuda
        grid = lambda META: (triton.cdiv(q.shape[1], META["BLOCK_M"]), q.shape[0])
        _bwd_kernel[grid](q, k, v, bias, do, BLOCK_M=128)
    """


def _is_cuda_checks(code: str, rel: str) -> list[tuple[int, str, str | None]]:
    import textwrap

    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    result = StaticEngine(load_rules()).analyze_bytes(textwrap.dedent(code).encode(), rel)
    return sorted((f.line, f.severity, f.data.get("context")) for f in result.findings if f.code == "NPU005")


def test_a_check_every_caller_reaches_after_loading_a_cuda_only_library_is_info():
    # (line 9: the raise's message reads `tensor.is_cuda` too)
    assert _is_cuda_checks(MPT_ATTENTION, "mpt/attention.py") == [(8, "info", "library-refusal"),
                                                                 (9, "info", "library-refusal")]


def test_a_check_some_caller_reaches_without_such_a_library_keeps_its_error():
    plain = MPT_ATTENTION + """\


    def torch_attn_fn(query, key, value):
        check_valid_inputs(query, key, value)
        return torch.softmax(query @ key.transpose(-1, -2), -1) @ value
    """
    assert [(line, sev) for line, sev, _ in _is_cuda_checks(plain, "mpt/attention.py")] == [(8, "error"),
                                                                                            (9, "error")]


def test_a_check_before_a_triton_kernel_launch_is_a_warning_with_the_kernel():
    assert _is_cuda_checks(TRITON_BACKWARD, "mpt/flash_attn_triton.py") == [(14, "warning", "triton-precondition")]


def test_a_check_in_a_function_that_launches_no_kernel_keeps_its_error():
    no_launch = TRITON_BACKWARD.replace("        _bwd_kernel[grid](q, k, v, bias, do, BLOCK_M=128)\n",
                                        "        return torch.matmul(q, k)\n")
    assert _is_cuda_checks(no_launch, "mpt/flash_attn_triton.py") == [(14, "error", None)]


# 6. An install with its CUDA build switched off (LMCache-Ascend's images: `NO_CUDA_EXT=1 pip install lmcache==0.4.3
# --no-deps`; LMCache's setup.py builds no CUDA extension when NO_CUDA_EXT is 1)
DOCKERFILE = """\
    FROM hub.oepkgs.net/openeuler/aarch64/intelligence_boom:0.2.0-aarch64-800I-A2
    WORKDIR /workspace
    COPY . /workspace/LMCache-Ascend/
    RUN yum install -y numactl-devel && \\
        NO_CUDA_EXT=1 pip install lmcache==0.4.3 --no-deps && \\
        cd LMCache-Ascend && pip install -v -e .
    """


def _package_findings(text: str) -> list[tuple[int, str]]:
    import textwrap

    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    result = StaticEngine(load_rules()).analyze_bytes(textwrap.dedent(text).encode(), "docker/Dockerfile.a2")
    return sorted((f.line, f.code) for f in result.findings if f.code == "NPU440")


def test_a_package_installed_with_its_cuda_build_switched_off_is_no_finding():
    assert _package_findings(DOCKERFILE) == []


def test_the_same_install_without_the_switch_or_with_it_off_keeps_the_package():
    assert _package_findings(DOCKERFILE.replace("NO_CUDA_EXT=1 ", "")) == [(5, "NPU440")]
    assert _package_findings(DOCKERFILE.replace("NO_CUDA_EXT=1 ", "NO_CUDA_EXT=0 ")) == [(5, "NPU440")]
