"""House work h27a (no behaviour change): the shared position helpers (auditor/astnodes.py), the one reading of a
literal's strings (astutil.literal_strings), a requirement line parsed once (requirements.read_requirement) and the
parameters whose default feeds a torch.backends switch, marked when their def is entered (visitor). Each keeps what
the code it replaced did, on code shaped like the code it came from."""
from __future__ import annotations

import ast

from auditor.astnodes import decorated_span, line_span, node_lines, node_span, starts_in
from auditor.project.requirements import macos_only, read_requirement, requirement_hits
from auditor.project.hits import matchers
from auditor.rules import load_rules
from auditor.static import StaticEngine
from auditor.static.astutil import literal_strings

ENGINE = StaticEngine(load_rules())


def test_position_helpers_read_ast_positions():
    tree = ast.parse("@torch.no_grad()\ndef step(x,\n         y=torch.device('cuda')):\n    return x\n")
    fn = tree.body[0]
    assert isinstance(fn, ast.FunctionDef)
    default = fn.args.defaults[0]
    assert node_span(default) == (3, 11, 3, 31)
    assert node_span(fn.args.args[0], default) == (2, 9, 3, 31)
    assert line_span(fn) == (2, 4) and decorated_span(fn) == (1, 4)
    assert list(node_lines(fn)) == [2, 3, 4]

    class F:
        line, col = 3, 12      # 1-based column: inside the default
    assert starts_in(F, [node_span(default)]) and not starts_in(F, [node_span(fn.args.args[0])])


def test_literal_strings_reads_constants_and_collections_only():
    def read(src: str) -> list[str]:
        return literal_strings(ast.parse(src, mode="eval").body)
    assert read('("cuda", "npu", 0)') == ["cuda", "npu"]
    assert read('["cuda"]') == ["cuda"] and read('{"xpu", "cuda"}') == ["xpu", "cuda"]
    assert read('"cuda:0"') == ["cuda:0"]
    assert read('{"cuda": 1, "npu": 2}') == [] and read("device") == [] and read("3") == []


# verl-style requirements: a pin a tree pass keeps, an extra, a macOS-only line, a wheel URL with its marker glued on
def test_a_requirement_line_is_read_once_for_pins_markers_and_extras():
    text = "liger-kernel>=0.5.10\ntrl[vllm]>=0.9\nbitsandbytes==0.42.0; sys_platform == \"darwin\"\nnumpy\n"
    result = ENGINE.analyze_bytes(text.encode(), "requirements.txt")
    assert result.summary["pins"] == {"liger-kernel": [">=0.5.10"]}
    lines = {f.line for f in result.findings}
    assert 2 in lines and 3 not in lines and 4 not in lines
    assert macos_only(read_requirement('bitsandbytes==0.42.0; sys_platform == "darwin"'))
    assert read_requirement("liger-kernel==$VERSION") is None
    # PEP 508 itself rejects `.whl;` without a space: the symbols are read (pip reads the line), the extras are not
    glued = "x[vllm] @ https://example.com/x-1.0-py3-none-any.whl;sys_platform == 'linux'"
    assert read_requirement(glued) is not None
    assert not [h for h in requirement_hits(matchers(ENGINE), glued) if "extra" in h[3]]
    assert [h for h in requirement_hits(matchers(ENGINE), "x[vllm]>=1") if "extra" in h[3]]


# pytracking's run_training.py, with a lambda and a nested def inside the def that feeds the switch
RUN_TRAINING = b"""import torch.backends.cudnn


def run_training(train_module, cudnn_benchmark=True):
    torch.backends.cudnn.benchmark = cudnn_benchmark
    def configure(cudnn_benchmark=True):
        return dict(cudnn_benchmark=cudnn_benchmark)
    return configure


class Trainer:
    def run_training(self, cudnn_benchmark=True):
        return cudnn_benchmark


def control(cudnn_benchmark=True):
    return dict(cudnn_benchmark=cudnn_benchmark)
"""


def test_the_default_of_a_parameter_fed_to_a_switch_is_no_finding_nested_defs_keep_theirs():
    codes = {(f.line, f.code) for f in ENGINE.analyze_bytes(RUN_TRAINING, "run_training.py").findings}
    assert (5, "NPU006") in codes
    assert not any(line == 4 for line, _ in codes)     # the def that writes it into the switch
    assert (6, "NPU042") in codes                       # a nested def: its own parameter, its own finding
    assert not any(line == 12 for line, _ in codes)    # a def of the same name (read by name, as before)
    assert (16, "NPU042") in codes                      # control
