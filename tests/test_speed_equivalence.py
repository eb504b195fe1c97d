"""The speed work of session 6 (docs/speed.md, "Session 6 profile (spd)") replaced three scans by faster ones that
must give the same answers: flag_re's line numbers (CompiledRules.flag_offsets), the node list of the gates
(walk_list), and the coverage table's contradiction check (no did-you-mean search). Each is checked here against
the scan it replaced, on code shaped like the real trees it was measured on (transformers' import_utils and
trainer, megatron's fused kernels, a file with non-ASCII docstrings)."""
from __future__ import annotations

import ast
import json
import subprocess
import sys
import textwrap
from pathlib import Path

from auditor.rules import load_rules
from auditor.static.compiled import CompiledRules
from auditor.static.engine import StaticEngine, _line_numbers
from auditor.static.astutil import module_nodes, module_nodes_of, walk_list

ROOT = Path(__file__).resolve().parent.parent
COMPILED = CompiledRules.build(load_rules())

IMPORT_UTILS = '''
"""Import utilities: probes for optional packages (É, ü, 日本語 in a docstring)."""
import importlib.util
import os

_apex_available = importlib.util.find_spec("apex") is not None
_flash_attn_2_available = _is_package_available("flash_attn") and version.parse("2.1.0") <= _flash_attn_version
_bitsandbytes_available = _is_package_available("bitsandbytes")
USE_TF32 = os.environ.get("NVIDIA_TF32_OVERRIDE", "1") != "0"


def is_flash_attn_2_available():
    if not _flash_attn_2_available:   # 3fp16x: a run that starts with digits
        return False
    return torch.cuda.is_available() and _FLASH_ATTN_AVAILABLE


def is_torch_bf16_gpu_available():
    return torch.cuda.is_bf16_supported() if is_torch_cuda_available() else False
'''

TRAINER = '''
class Trainer:
    def __init__(self, args):
        self.use_apex = args.fp16 and args.half_precision_backend == "apex"
        self.use_cpu_amp = False
        if args.fp16_full_eval or args.bf16_full_eval:
            self.model = self.model.to(dtype=torch.float16 if args.fp16_full_eval else torch.bfloat16)
        if is_torch_tf32_available() and args.tf32:
            torch.backends.cuda.matmul.allow_tf32 = True
        self.scaler = torch.cuda.amp.GradScaler(enabled=args.fp16_opt_level is not None)

    def _setup_devices(self):
        device = torch.device("cuda:0") if torch.cuda.is_available() else torch.device("cpu")
        x = "İİİ use_fp8 İ"   # lowercasing lengthens this line: the exact scan answers
        return device
'''

FUSED = '''
try:
    import fused_layer_norm_cuda
    HAVE_PERSIST_LAYER_NORM = True
except ImportError:
    HAVE_PERSIST_LAYER_NORM = False

selective_scan_cuda = importlib.import_module("selective_scan_cuda")


def forward(ctx, input, weight, bias, normalized_shape, eps):
    if HAVE_PERSIST_LAYER_NORM and use_nccl_ub:
        output, mean, invvar = fused_layer_norm_cuda.forward_affine(input, ctx.normalized_shape, weight, bias, eps)
    return output if torch.cuda.is_available() and not args.cpu else (lambda: [x for x in (1, 2)])()
'''

SOURCES = {"import_utils.py": IMPORT_UTILS, "trainer.py": TRAINER, "fused.py": FUSED}


def _old_flag_lines(text: str) -> set[int]:
    assert COMPILED.flag_re is not None
    return _line_numbers(text, [m.start() for m in COMPILED.flag_re.finditer(text.lower())])


def test_flag_offsets_give_the_lines_of_the_full_scan():
    assert COMPILED.flag_in_words     # the rules' flag cores are made of word characters
    for name, src in SOURCES.items():
        text = textwrap.dedent(src)
        expected = _old_flag_lines(text)
        assert expected, name         # each source holds flags, so the check is not vacuous
        assert _line_numbers(text, COMPILED.flag_offsets(text)) == expected, name
        # the run-by-run answers are kept between files: the second file with the same runs answers the same
        assert _line_numbers(text, COMPILED.flag_offsets(text)) == expected, name


def test_flag_offsets_without_a_flag_and_when_lowercasing_lengthens_the_text():
    plain = "def area(width, height):\n    return width * height\n"
    assert COMPILED.flag_offsets(plain) == [] == [m.start() for m in COMPILED.flag_re.finditer(plain.lower())]
    longer = "İ" * 40 + "\nuse_fp8 = True\nif use_fp8:\n    pass\n"
    assert len(longer.lower()) != len(longer)
    assert _line_numbers(longer, COMPILED.flag_offsets(longer)) == _old_flag_lines(longer) != set()


def test_walk_list_is_ast_walk_in_the_same_order():
    for name, src in SOURCES.items():
        tree = ast.parse(textwrap.dedent(src))
        walked = list(ast.walk(tree))
        listed = walk_list(tree)
        assert len(listed) == len(walked) > 50, name
        assert all(a is b for a, b in zip(listed, walked)), name


def test_module_nodes_is_one_walk_shared_per_tree():
    """The passes read one shared node list per module tree (session 16) instead of each walking it: the same nodes
    in ast.walk's order, the same list object for the same tree, a fresh one for another tree (a chunked file's
    re-parsed statements), and by-type lists that keep the walk's order."""
    trees = [ast.parse(textwrap.dedent(src)) for src in SOURCES.values()]
    for tree in trees:
        walked = list(ast.walk(tree))
        nodes = module_nodes(tree)
        assert len(nodes) == len(walked) and all(a is b for a, b in zip(nodes, walked))
        assert module_nodes(tree) is nodes
        for types in (ast.Call, (ast.FunctionDef, ast.AsyncFunctionDef), ast.expr):
            assert module_nodes_of(tree, types) == [n for n in walked if isinstance(n, types)] != []
    first, second, third = trees
    a = module_nodes(first)
    module_nodes(second), module_nodes(third)     # two other trees since: the first is walked again, same answer
    again = module_nodes(first)
    assert again is not a and all(x is y for x, y in zip(again, a)) and len(again) == len(a)


def test_engine_findings_on_the_sources_are_those_of_the_reference_pass():
    """The engine with every slice parsed whole (slicing=False, the reference) and the sliced pass agree on these
    sources, and the sliced pass finds the flag and gate findings the faster scans feed."""
    sliced = StaticEngine(load_rules())
    whole = StaticEngine(load_rules(), slicing=False)
    for name, src in SOURCES.items():
        data = textwrap.dedent(src).encode()
        a = [(f.line, f.code, f.severity) for f in sliced.analyze_bytes(data, name).findings]
        b = [(f.line, f.code, f.severity) for f in whole.analyze_bytes(data, name).findings]
        assert a == b and a, name


def test_contradiction_check_skips_the_did_you_mean_search():
    from auditor.coverage import Coverage, unknown
    from auditor.target import resolve_target

    assert "did you mean" not in unknown("torch.cuda.synchronise", hint_close=False).notes
    assert "did you mean" in unknown("torch.cuda.synchronise").notes     # the lookup CLI still suggests
    cov = Coverage.load(resolve_target())
    silent = cov.aten("no_such_op_at_all_xyz", hint_close=False)
    assert silent.kind == "unknown" and "did you mean" not in silent.notes


def test_compare_findings_script(tmp_path: Path):
    finding = {"code": "NPU001", "path": "a.py", "line": 3, "col": 5, "message": "m"}
    other = {**finding, "line": 4}
    before = {"tool": {}, "findings": [finding, other], "errors": [], "summary": {"total": 2, "duration_s": 1.0}}
    after = {"tool": {}, "findings": [other, finding], "errors": [], "summary": {"total": 2, "duration_s": 9.0}}
    changed = {**after, "findings": [finding, {**other, "col": 6}]}
    paths = {}
    for key, doc in (("before", before), ("after", after), ("changed", changed)):
        paths[key] = tmp_path / f"{key}.json"
        paths[key].write_text(json.dumps(doc))
    script = [sys.executable, str(ROOT / "bench" / "compare_findings.py")]
    same = subprocess.run(script + [str(paths["before"]), str(paths["after"])], capture_output=True, text=True)
    assert same.returncode == 0 and "identical" in same.stdout
    diff = subprocess.run(script + [str(paths["before"]), str(paths["changed"])], capture_output=True, text=True)
    assert diff.returncode == 1 and "1 only before, 1 only after" in diff.stdout


VENDOR_SRC = '''
import torch

class Platform:
    def device_kind(self):
        if self.config.vendor_type.lower() == "npu":
            return "npu"
        match self.runtime.backend:
            case "ascend" | "cann":
                return "npu"
        vendor = probe()
        if vendor == "NPU":
            return "npu"
        return "cuda" if self.config.vendor_type == "cuda" else "cpu"

is_cuda = lambda p: p.runtime.backend == "cuda"
'''


def test_vendor_facts_read_from_the_node_list_are_the_scoped_walks_attribute_keys():
    """vendor_facts reads only attribute-chain keys, which need no enclosing function: the shared node list gives the
    same keys (and the same lines) as the scoped walk the per-file pass keeps for name keys."""
    from auditor.static.vendor_dispatch import _cuda_compared, npu_compared

    tree = ast.parse(VENDOR_SRC)
    scoped = npu_compared(tree)
    assert {k[0] for k in scoped} == {"attr", "name"}
    assert npu_compared(tree, attrs_only=True) == {k for k in scoped if k[0] == "attr"} != set()
    cuda = _cuda_compared(tree)
    assert cuda and _cuda_compared(tree, attrs_only=True) == \
        {line: {k for k in keys if k[0] == "attr"} for line, keys in cuda.items()}


def test_the_last_reader_of_a_source_does_not_keep_its_tree(tmp_path):
    """crossfile's placement, the run's last pass, takes a file's tree without keeping it (held trees were most of
    one process's 440 MB on transformers); the same text and tree, read once."""
    from auditor.static.project_imports import ProjectImports

    (tmp_path / "model.py").write_text("import torch\nx = torch.ones(2).cuda()\n")
    project = ProjectImports([(tmp_path / "model.py", "model.py")])
    kept = project.source("model.py")
    assert kept is not None and project.reads == 1
    last = project.source("model.py", last=True)
    assert last is kept and project.reads == 1
    assert "model.py" not in project._sources


# Session 20 (s20a): the worker's per-file facts read the engine's tree instead of parsing the file again, and the
# keyword / string rule answers are kept per name. A launch script shaped like Mantis' / LoftQ's train.py (dataclass
# option defaults, argparse flags, a guarded xformers switch, a pip command the code runs).
LAUNCH_SCRIPT = '''
import argparse
import os
from dataclasses import dataclass, field

from transformers import AutoModelForCausalLM, HfArgumentParser


@dataclass
class ModelArguments:
    attn_implementation: str = field(default="flash_attention_2")
    use_flash_attn: bool = field(default=True)


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--backend", "-b", default="nccl")
    parser.add_argument("--use_xformers", action="store_true")
    args = parser.parse_args()
    (model_args,) = HfArgumentParser(ModelArguments).parse_args_into_dataclasses()
    model = AutoModelForCausalLM.from_pretrained(
        "m", attn_implementation="flash_attention_2" if model_args.use_flash_attn else "eager")
    if args.use_xformers:
        model.enable_xformers_memory_efficient_attention()
    os.system("pip install flash-attn --no-build-isolation")


if __name__ == "__main__":
    main()
'''


def test_launch_and_pip_facts_from_the_engine_tree_are_those_of_their_own_parse():
    from auditor.project.embedded_pip import add_embedded_pip_commands
    from auditor.project.launched import launch_facts
    from auditor.findings import FileResult

    data = LAUNCH_SCRIPT.encode()
    engine = StaticEngine(load_rules())
    result = engine.analyze_bytes(data, "train.py")
    own = launch_facts(data, result.findings)
    assert own["defaults"] and own["guards"]            # the readings the shared tree must not change
    assert launch_facts(data, result.findings, ast.parse(LAUNCH_SCRIPT)) == own
    parsed, reparsed = FileResult("train.py"), FileResult("train.py")
    add_embedded_pip_commands(engine, data, "train.py", parsed, ast.parse(LAUNCH_SCRIPT))
    add_embedded_pip_commands(engine, data, "train.py", reparsed)
    assert parsed.findings and parsed.findings == reparsed.findings
    # the engine hands its tree on only where it parsed the bytes' plain UTF-8 text: with a BOM (stripped by the
    # engine, kept by the readers' own decoding, which `ast` rejects) the readers read the bytes as before
    from auditor.static.project_imports import TREE

    bom_data = b"\xef\xbb\xbf" + data
    bom = engine.analyze_bytes(bom_data, "train.py")
    kept = {k: v for k, v in bom.summary[TREE].items() if k in ("patches", "defaults", "aliases", "guards", "hf_args")}
    assert kept == launch_facts(bom_data, bom.findings)


def test_keyword_and_string_answers_kept_per_name_are_the_scans_answers():
    fresh = CompiledRules.build(load_rules())
    names = ["cuda", "no_cuda", "use_cuda", "use_fp8_gemms", "fp16", "device", "use_flash_attn", "x" * 300]
    for parameter in (False, True):
        first = [COMPILED.match_keywords(n, parameter=parameter) for n in names]
        again = [COMPILED.match_keywords(n, parameter=parameter) for n in names]
        assert first == again == [fresh.match_keywords(n, parameter=parameter) for n in names]
    # `cuda` answers a parameter's default only (parameters_only): the two askings are kept apart
    assert not COMPILED.match_keywords("cuda") and COMPILED.match_keywords("cuda", parameter=True)
    values = ["cuda", "cuda:0", "nccl", "bfloat16", "hello", "cuda" + " " * 300]
    assert [COMPILED.match_string(v) for v in values] == [COMPILED.match_string(v) for v in values] \
        == [fresh.match_string(v) for v in values]
    assert COMPILED.match_string("hello") is None and COMPILED.match_string("cuda:0") is not None


# -- session 21 (s21a): cstwalk.walk, libcst's visit without rebuilding nodes ---------------------------------

def _libcst_sources() -> list[str]:
    """Every rule example that parses, plus code with each node family the walk's field table must order
    (f-string format specs, `from . import *`, match statements, decorators, lambdas, type parameters)."""
    import libcst as cst

    texts = [t for rule in load_rules() for t in (*rule.examples_flag, *rule.examples_ok,
                                                  *(p for pair in rule.examples_fix for p in pair))]
    texts += [IMPORT_UTILS, textwrap.dedent('''
        from . import *
        from .a import (b as c, d)
        x = f"{a!r:>{width}} {b=} {c:{d}.{e}f}" "plain" 'more'
        @torch.no_grad()
        async def f(a, /, b: int = 1, *args, c, d=torch.float16, **kw) -> None:
            global g
            async with torch.autocast("cuda") as (p, q), open(x):
                async for i in range(3):
                    y = [j async for j in g if j] or {k: v for k, v in w.items()} or {*s}
                    z = lambda m, *n, o=1, **p: (yield m)
            try:
                pass
            except* ValueError as e:
                raise RuntimeError("x") from e
            match cmd:
                case {"device": "cuda", **rest} | [1, 2, *others] if rest:
                    pass
                case Point(x=0, y=_) as pt:
                    del pt
        class C[T: int, *Ts, **P](Base, metaclass=M):
            a: int = 1; b += 2; c @= d
        type Alias[T] = list[T]
        print(x[1:2:3, ::, ...], not a, -b, ~c, a if b else c, (a := 3), *d, a < b <= c is not d not in e)
        ''')]
    out = []
    for text in texts:
        try:
            cst.parse_module(text)
        except cst.ParserSyntaxError:
            continue
        out.append(text)
    return out


def _recorder(log: list):
    """A CSTVisitor that logs every visit_<Node> / leave_<Node> call (with the node's id) and stops at Lambda
    (a visit returning False must skip the children, as libcst does)."""
    import libcst as cst

    def hooks(name):
        def visit(self, node):
            log.append(("visit", name, id(node)))
            return name != "Lambda"

        def leave(self, node):
            log.append(("leave", name, id(node)))
        return visit, leave

    names = {a.split("_", 1)[1] for a in dir(cst.CSTVisitor) if a.startswith("visit_") and a.count("_") == 1}
    methods = {}
    for name in names:
        methods[f"visit_{name}"], methods[f"leave_{name}"] = hooks(name)
    return type("Recorder", (cst.CSTVisitor,), methods)()


def test_cstwalk_calls_what_libcst_visit_calls():
    import libcst as cst
    from auditor.static.cstwalk import children, walk

    sources = _libcst_sources()
    assert len(sources) > 1000 and "case Point(x=0" in sources[-1]
    for text in sources:
        module = cst.parse_module(text)
        theirs: list = []
        ours: list = []
        module.visit(_recorder(theirs))
        walk(module, _recorder(ours))
        assert ours == theirs, text
        stack: list = [module]
        while stack:
            node = stack.pop()
            theirs_children = node.children
            assert [id(c) for c in children(node)] == [id(c) for c in theirs_children], (type(node).__name__, text)
            stack.extend(theirs_children)


def test_findings_of_rule_examples_the_same_with_libcst_visit(monkeypatch):
    """The engine over libcst's own visit (every nested walk too) and over cstwalk.walk: the same findings, in
    the same order, for every rule example (as example.py, the name tests/test_rule_examples.py audits them as)."""
    from auditor.static import engine as engine_module, visitor as visitor_module
    from auditor.static.cstwalk import check_visitor
    from auditor.static.visitor import MatchVisitor

    check_visitor(MatchVisitor)
    engine = StaticEngine(load_rules())
    sources = _libcst_sources()

    def run() -> list:
        return [[(f.line, f.col, f.end_line, f.end_col, f.code, f.severity, f.symbol, f.message)
                 for f in engine.analyze_bytes(text.encode(), "example.py").findings] for text in sources]

    ours = run()

    def libcst_visit(node, visitor):
        node.visit(visitor)
    monkeypatch.setattr(engine_module, "walk", libcst_visit)
    monkeypatch.setattr(visitor_module, "walk", libcst_visit)
    theirs = run()
    assert ours == theirs
    assert sum(map(bool, ours)) > 500


def test_import_rules_prefilter_on_their_rarest_word():
    """NPU144's `horovod.torch` once made `torch` a trigger word: every line naming torch was parsed with libcst.
    The import rules' word is now the rarest-looking part of the module (every reported import spells it whole):
    the same findings as with `torch` kept, on every rule example and on horovod's import forms."""
    assert "torch" not in COMPILED.trigger_words and "horovod" in COMPILED.trigger_words
    horovod = textwrap.dedent('''
        import torch
        import horovod.torch as hvd
        from horovod.torch import DistributedOptimizer
        hvd_mod = importlib.import_module("horovod.torch")
        x = torch.randn(3).to(torch.float16)
        ''')
    new = StaticEngine(load_rules())
    old = StaticEngine(load_rules())
    assert old.compiled is not new.compiled
    old.compiled.trigger_words = old.compiled.trigger_words | {"torch"}
    for text in [horovod, *_libcst_sources()]:
        data = text.encode()
        assert [f.to_dict() for f in new.analyze_bytes(data, "example.py").findings] == \
            [f.to_dict() for f in old.analyze_bytes(data, "example.py").findings], text
    assert sum(f.code == "NPU144" for f in new.analyze_bytes(horovod.encode(), "train.py").findings) >= 3


def _python_sources() -> list[str]:
    """Rule examples and the shapes above, plus this repository's own Python files (real modules with classes,
    methods, nested functions, aliases)."""
    root = Path(__file__).resolve().parent.parent
    return _libcst_sources() + [p.read_text(encoding="utf-8") for folder in ("auditor", "tests", "examples")
                                for p in sorted((root / folder).rglob("*.py"))]


def _parsed(texts: list[str]):
    """(text, its ast) of each text Python parses; the others are skipped."""
    for text in texts:
        try:
            yield text, ast.parse(text)
        except SyntaxError:
            continue


_AUTOCAST_SHAPES = textwrap.dedent('''
    import torch
    try:
        autocast = torch.cuda.amp.autocast
    except AttributeError:
        autocast = None
    class Net:
        def forward(self, x, mixed=False):
            use_amp = x and False
            with autocast(enabled=use_amp):
                y = x
            with torch.autocast("cuda", enabled=self.args.mixed_precision):
                def inner():
                    with torch.cuda.amp.autocast(enabled=use_amp):
                        pass
            return y
    ''')


def test_autocasts_without_an_autocast_call_skip_the_walks_and_find_the_same():
    """s24a: `default_facts` runs `_autocasts` only for a file holding the word "autocast"; on every source without
    the word the full walks find nothing, so skipping them loses nothing."""
    from auditor.static import call_defaults

    found = []
    for text, tree in _parsed([_AUTOCAST_SHAPES, *_python_sources()]):
        found.append(call_defaults._autocasts(tree))
        if "autocast" not in text:
            assert found[-1] == [], text[:200]
    assert len(found[0]) >= 3


_METHOD_RETURNS = textwrap.dedent('''
    class A:
        def host(self, x):
            data = x.to_numpy()
            data.to_numpy()
            return data
        def same(self, a, b):
            return b
        def twice(self, a):
            return a
        @staticmethod
        def static(a, b):
            return a
        def nested(self, a):
            def f():
                return 1
            return a
    class B:
        def twice(self, a, b):
            return b
        def same(self, a, b):
            return b
    ''')


def test_method_returns_read_on_demand_are_the_eager_reading():
    """s24a: host_values' `_MethodReturns.get` (a method read when a `self.m(...)` asks for it) answers what the
    eager reading of every method of every class (its former form) answered, for every method name and an unknown
    name, on every source."""
    from auditor.static.host_values import _MethodReturns, _returns_of

    def eager(tree):
        out: dict = {}
        for cls in module_nodes(tree):
            if isinstance(cls, ast.ClassDef):
                for func in cls.body:
                    if isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                        kind = _returns_of(func)
                        out[func.name] = kind if out.get(func.name, kind) == kind else None
        return {name: kind for name, kind in out.items() if kind is not None}

    answered = 0
    for text, tree in _parsed([_METHOD_RETURNS, *_python_sources()]):
        names = {n.name for n in module_nodes_of(tree, (ast.FunctionDef, ast.AsyncFunctionDef))} | {"_unknown_"}
        lazy = _MethodReturns(tree)
        assert {n: k for n in sorted(names) if (k := lazy.get(n)) is not None} == eager(tree), text[:200]
        answered += len(eager(tree))
    assert eager(ast.parse(_METHOD_RETURNS)) == {"host": "", "same": "1:b", "static": "0:a"}
    assert answered >= 4
    assert _MethodReturns(None).get("x") is None


_PROBE_AND_LOCATOR_SHAPES = textwrap.dedent('''
    import subprocess
    import torch
    out = subprocess.check_output(["nvidia-smi", "--query-gpu=name", "--format=csv"])
    gpu_name = out.decode()
    name = torch.cuda.get_device_name(0)
    class Probe:
        def __init__(self):
            self.model = torch.cuda.get_device_properties(0).name
    def locate_cuda():
        home = "/usr/local/cuda"
        cudaconfig = {"home": home, "nvcc": home + "/bin/nvcc", "include": home + "/include", "lib64": home + "/lib64"}
        return cudaconfig
    def paths():
        return dict(NVCC_PATH="/usr/local/cuda/bin/nvcc", CUDA_INCLUDE_DIRS="/usr/local/cuda/include")
    CUDA = locate_cuda()
    ''')


def test_probe_names_and_locators_skipped_without_their_constructs_are_the_full_walks():
    """sp49: build_context skips the probe-name walks (one `reads_probe` walk per assignment) for a file holding no
    device probe, and `_locators` skips each function's walks for a file holding no locator's answer; on every source
    the answers are those of the full walks (their former form)."""
    from auditor.static import context, hand_builds

    def probes(tree):
        cuda = frozenset(
            d for n in ast.walk(tree) if isinstance(n, ast.Assign) and any(
                isinstance(c, ast.Call) and (context.ast_dotted(c.func) or "").startswith("torch.cuda.")
                for c in ast.walk(n.value))
            and context.reads_probe(n.value, frozenset()) for d in (context.ast_dotted(t) for t in n.targets)
            if d is not None)
        return context._probe_names(tree), cuda

    def locators(tree):
        found = set()
        for func in walk_list(tree):
            if not isinstance(func, (ast.FunctionDef, ast.AsyncFunctionDef)):
                continue
            answers = {t.id for n in walk_list(func) if isinstance(n, ast.Assign) and hand_builds._locator_answer(n.value)
                       for t in n.targets if isinstance(t, ast.Name)}
            if any(isinstance(n, ast.Return) and n.value is not None and (hand_builds._locator_answer(n.value) or
                   isinstance(n.value, ast.Name) and n.value.id in answers) for n in walk_list(func)):
                found.add(func.name)
        return found

    checked = 0
    for text, tree in _parsed([_PROBE_AND_LOCATOR_SHAPES, *_python_sources()]):
        ctx = context.build_context(tree)
        assert (ctx.probe_names, ctx.cuda_probe_names) == probes(tree), text[:200]
        assert hand_builds._locators(tree) == locators(tree), text[:200]
        checked += 1
    tree = ast.parse(_PROBE_AND_LOCATOR_SHAPES)
    assert probes(tree) == ({"out", "gpu_name", "name", "self.model"}, {"name", "self.model"})
    assert hand_builds._locators(tree) == {"locate_cuda", "paths"}
    assert hand_builds.toolkit_configs(tree) == {"CUDA"}
    assert checked > 100


def test_report_only_lines_skipped_without_rows_are_the_full_walks(monkeypatch):
    """sp49: `report_only_lines` skips its walks per function for a file whose nodes hold no report row, no report
    dict display and no report dict of five rows; on every source the lines are those of the full walks."""
    from auditor.static import report_rows

    shapes = textwrap.dedent('''
        import os, sys, torch
        def collect_env_info():
            data = []
            cuda_arch_list = os.environ.get("TORCH_CUDA_ARCH_LIST", None)
            if cuda_arch_list:
                data.append(("TORCH_CUDA_ARCH_LIST", cuda_arch_list))
            data.append(("CUDA compiler", _C.get_cuda_version()))
            return data
        def info():
            env = {}
            env["python"] = sys.version
            env["torch"] = torch.__version__
            env["cuda"] = torch.version.cuda
            env["cudnn"] = torch.backends.cudnn.version()
            env["home"] = CUDA_HOME
            return env
        ''')
    full = {}
    sources = [text for text in [shapes, *_python_sources()] if _parses(text)]
    with monkeypatch.context() as m:
        m.setattr(report_rows, "_holds_rows", lambda nodes: True)
        for i, text in enumerate(sources):
            full[i] = report_rows.report_only_lines(ast.parse(text))
    for i, text in enumerate(sources):
        assert report_rows.report_only_lines(ast.parse(text)) == full[i], text[:200]
    assert full[0] and len(sources) > 100


def _parses(text: str) -> bool:
    try:
        ast.parse(text)
    except SyntaxError:
        return False
    return True


def test_scope_nodes_are_the_walks_they_replace(monkeypatch):
    """sp50: a definition the file's passes each walked (call defaults, setting reads, host scopes and values, the
    context's loader and switch reads) is walked once per module (`scope_nodes`): the same nodes in walk_list's order,
    the same list while the module is the file's, a fresh walk once another module is indexed; and the engine's
    findings and summary on the rule examples are those of the former walks."""
    import importlib

    from auditor import astnodes

    sources = [text for text in _python_sources() if _parses(text)]
    for text in sources:
        tree = ast.parse(text)
        module_nodes(tree)
        for node in module_nodes_of(tree, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            listed = astnodes.scope_nodes(node)
            walked = walk_list(node)
            assert len(listed) == len(walked) and all(a is b for a, b in zip(listed, walked))
            assert astnodes.scope_nodes(node) is listed
    first = ast.parse("def f(x):\n    return x\n")
    module_nodes(first)
    fn = first.body[0]
    kept = astnodes.scope_nodes(fn)
    module_nodes(ast.parse("y = 1\n"))
    assert astnodes.scope_nodes(fn) is not kept and astnodes.scope_nodes(fn) == kept

    engine = StaticEngine(load_rules())
    texts = [t for t in _libcst_sources() if _parses(t)]
    shared = [(i, engine.analyze_bytes(t.encode(), f"m{i}.py")) for i, t in enumerate(texts)]
    for name in ("auditor.static.call_defaults", "auditor.project.setting_reads", "auditor.static.context",
                 "auditor.static.host_scopes", "auditor.static.host_values"):
        monkeypatch.setattr(importlib.import_module(name), "scope_nodes", walk_list)
    for i, result in shared:
        again = engine.analyze_bytes(texts[i].encode(), f"m{i}.py")
        assert [f.to_dict() for f in again.findings] == [f.to_dict() for f in result.findings], texts[i][:200]
        assert again.summary == result.summary, texts[i][:200]
    assert len(shared) > 100


def test_string_patterns_joined_answer_as_each_pattern_asked():
    """sp50: `match_string` asks the string patterns' one alternation first; on every string constant of the sources
    and each pattern's own literal words, it matches exactly where some pattern does, and the answers are those of
    the per-pattern scan (a fresh table without the join, forced to ask every pattern)."""
    import re

    values = {n.value for text in _python_sources() if _parses(text) for n in ast.walk(ast.parse(text))
              if isinstance(n, ast.Constant) and isinstance(n.value, str)}
    values |= {p.replace("*", "x") for _, p, _ in COMPILED.strings} | {"cuda", "cuda:0", "CUDA", "nccl", "", "x" * 300}
    joined = CompiledRules.build(load_rules())
    each = CompiledRules.build(load_rules())
    each._strings_any = re.compile("")        # the fallback: every pattern asked
    hits = 0
    for v in sorted(values):
        some = any(regex.match(v) for regex, _, _ in COMPILED.strings)
        assert joined._any_string(v) == some, v
        hits += some
        assert joined.match_string(v) == each.match_string(v), v
        assert joined.match_string(v, in_command=True) == each.match_string(v, in_command=True), v
        assert joined.match_compared_string(v) == each.match_compared_string(v), v
    assert joined._strings_any is not None and joined._strings_any.pattern and hits > 50 and len(values) > 1000
