"""pip commands that Python code runs (t19b, issue 14): install helpers that call pip through a string or an argument
list (streamv2v's `tools/install-tensorrt.py`: `run_pip("install --pre --extra-index-url https://pypi.nvidia.com
tensorrt==9.0.1.post11.dev4")`, A1111 / ComfyUI extensions' `launch.run_pip("install xformers", ...)`,
`subprocess.check_call([sys.executable, "-m", "pip", "install", "bitsandbytes"])`, `os.system("pip install
flash-attn --no-build-isolation")`). The command is read by the shell reader (auditor/project/shell.py's `pip`
handling: requirements, wheel indexes, CUDA wheel URLs) and its findings are placed on the Python file's lines, as
auditor/project/embedded.py does for Dockerfile templates.

Only commands that run: the first argument of `os.system` / `os.popen` / a `subprocess` call, or of a helper named
for pip (`run_pip`, `pip_install`); not help or error texts that tell the user what to type (`raise
ImportError("pip install flash-attn")`), which install nothing."""
from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import replace
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from auditor.findings import FileResult
    from auditor.static.engine import StaticEngine

_QUICK = re.compile(rb"pip")
# calls that run a command: `os.system(cmd)`, `subprocess.run([...])` (also as `sp.run`, or imported by name)
_RUNNER_MODULES = frozenset({"os", "subprocess", "sp"})
_RUNNER_NAMES = frozenset({"system", "popen", "run", "call", "check_call", "check_output", "Popen", "getoutput",
                           "getstatusoutput"})
# a helper named for pip: `run_pip`, `launch.run_pip`, `pip_install`, `_pip_install`, `install_pip_package`
_PIP_HELPER = re.compile(r"(?:^|_)pip(?:_|$)", re.IGNORECASE)
_PIP_WORD = re.compile(r"^pip(?:3(?:\.\d+)?)?$")
_SUBCOMMANDS = frozenset({"install", "download", "wheel"})
# a word of a bare requirement list: an option, a URL or wheel, or a lower-case distribution with a version spec
_SPEC_WORD = re.compile(r"^(?:-\S*|https?://\S+|\S+\.whl|[a-z0-9][\w.\-]*(?:\[[\w,\-]+\])?(?:==|>=|<=|~=|!=|<|>)\S+)$")


def add_embedded_pip_commands(engine: "StaticEngine", data: bytes, rel: str, result: "FileResult",
                              tree: ast.Module | None = None) -> None:
    """Append the findings of every pip command the Python source runs to `result`. `tree`: the engine's tree of
    the bytes' UTF-8 decoding, when it has one (not parsed again)."""
    if not _QUICK.search(data):
        return
    from auditor.project.shell import analyze_shell
    from auditor.astnodes import module_nodes_of

    if tree is None:
        try:
            tree = ast.parse(data.decode("utf-8"))
        except (UnicodeDecodeError, SyntaxError, ValueError, RecursionError):
            return
    seen = {(f.line, f.code) for f in result.findings}
    added = False
    strings = string_names(tree)
    commands = [c for c in (_pip_command(node, strings) for node in module_nodes_of(tree, ast.Call) if node.args)
                if c is not None]
    commands += [_joined([("pip install", item), (str(item.value), item)])
                 for item in runtime_env_packages(tree)]
    commands += [c for c in (_runner_pip_command(shell_parts([item])) for item in looped_commands(tree))
                 if c is not None]
    for text, spans in commands:
        inner = analyze_shell(engine, (text + "\n").encode("utf-8"), rel)
        _keep_local_builds(inner, result, spans)
        for f in inner.findings:
            if f.line != 1:
                continue
            at = next((s for s in spans if s[0] <= f.col - 1 < s[1]), spans[-1])
            line, col = at[2], at[3] + max(f.col - 1 - at[0], 0) + 1
            if (line, f.code) in seen:
                continue            # the Python pass already reports it there (NPU026's index URL string)
            seen.add((line, f.code))
            result.findings.append(replace(f, path=rel, line=line, col=col, end_line=line,
                                           message=f"{f.message} [pip command run by the code]"))
            added = True
    if added:
        result.findings.sort(key=lambda f: f.sort_key())


def _pip_command(call: ast.Call, strings: dict[str, ast.Constant]) -> tuple[str, list[tuple[int, int, int, int]]] | None:
    """The shell text of the pip command `call` runs, with the spans (start, end in the text, line, column in the
    file) of the Python nodes each part comes from; None when the call runs no pip command. `strings`: the
    module's names bound once to a string literal (string_names), read in place of the name."""
    if not isinstance(call.func, (ast.Name, ast.Attribute)):
        return None
    last = ast.unparse(call.func).rpartition(".")[2]
    first = call.args[0]
    if runner_call(call):
        return _runner_pip_command(shell_parts(first.elts if isinstance(first, (ast.List, ast.Tuple)) else [first],
                                               strings))
    if _PIP_HELPER.search(last):
        parts = shell_parts([first], strings)
        if parts is None:
            return None
        words = parts[0][0].split()
        if words and words[0] in _SUBCOMMANDS:
            prefix = "pip"                      # `run_pip("install tensorrt==9.0.1")`
        elif "install" in last.lower() and words and all(_SPEC_WORD.match(w) for w in words):
            # `install_pip_package("onnxruntime-gpu==1.15.1")`: requirements with a version, options, URLs; not a
            # helper's label (unsloth's `pip_install("CUDA torch repair", "--force-reinstall", ...)`)
            prefix = "pip install"
        else:
            return None
        text, spans = _joined(parts)
        return f"{prefix} {text}", [(s + len(prefix) + 1, e + len(prefix) + 1, line, col)
                                    for s, e, line, col in spans]
    return None


def _runner_pip_command(parts: list[tuple[str, ast.expr]] | None
                        ) -> tuple[str, list[tuple[int, int, int, int]]] | None:
    """The command of a runner's argument (shell_parts) when it runs `pip install` / `download` / `wheel`."""
    if parts is None:
        return None
    words = " ".join(p[0] for p in parts).split()
    at = next((i for i, w in enumerate(words) if _PIP_WORD.match(w.rsplit("/", 1)[-1])), None)
    if at is None or at + 1 >= len(words) or words[at + 1] not in _SUBCOMMANDS:
        return None
    return _joined(parts)


def looped_commands(tree: ast.Module) -> list[ast.Constant]:
    """The string items of a list a `for` loop hands one by one to a runner (tp51b): DiffSBDD's Colab set-up cell
    `commands = ["pip install torch==2.0.1 --extra-index-url .../whl/cu118", ...]` then `for cmd in commands: with
    os.popen(cmd) as f: ...` (also `os.system(cmd)`, `subprocess.run(cmd, shell=True)`). The list is a literal in
    the loop's header or a name the module binds once to one; each item is one command line."""
    from auditor.astnodes import module_nodes_of

    bound = _bound_counts(tree)
    lists = {node.targets[0].id: node.value for node in module_nodes_of(tree, ast.Assign)
             if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and bound[node.targets[0].id] == 1
             and isinstance(node.value, (ast.List, ast.Tuple))}
    out: list[ast.Constant] = []
    for loop in module_nodes_of(tree, ast.For):
        if not isinstance(loop.target, ast.Name):
            continue
        items = loop.iter if isinstance(loop.iter, (ast.List, ast.Tuple)) else \
            lists.get(loop.iter.id) if isinstance(loop.iter, ast.Name) else None
        if items is None or not any(
                isinstance(n, ast.Call) and runner_call(n) and isinstance(n.args[0], ast.Name)
                and n.args[0].id == loop.target.id for stmt in loop.body for n in ast.walk(stmt)):
            continue
        out += [e for e in items.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                and e.value.strip() and "\n" not in e.value]
    return out


def runtime_env_packages(tree: ast.Module) -> list[ast.Constant]:
    """The string items of a Ray runtime environment's pip list built in Python: `ray.init(runtime_env={"pip":
    ["torch", ...]})`, `@ray.remote(runtime_env=...)`, `.options(runtime_env=...)`, also `{"pip": {"packages":
    [...]}}` (Ray docs, "Runtime environments": `pip (dict | List[str] | str)`; Ray pip-installs them into every
    worker's environment before it runs, as the YAML `runtime_env: pip:` lists configs.py reads; tp48a)."""
    from auditor.astnodes import module_nodes_of

    out: list[ast.Constant] = []
    for node in module_nodes_of(tree, ast.keyword):
        if node.arg != "runtime_env" or not isinstance(node.value, ast.Dict):
            continue
        for key, value in zip(node.value.keys, node.value.values):
            if not (isinstance(key, ast.Constant) and key.value == "pip"):
                continue
            packages: ast.expr | None = value
            if isinstance(value, ast.Dict):
                packages = next((v for k, v in zip(value.keys, value.values)
                                 if isinstance(k, ast.Constant) and k.value == "packages"), None)
            if isinstance(packages, (ast.List, ast.Tuple)):
                out += [e for e in packages.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)
                        and e.value.strip() and "\n" not in e.value and not e.value.startswith("-")]
    return out


def runner_call(call: ast.Call) -> bool:
    """`os.system(cmd)`, `subprocess.run([...])` (also as `sp.run`, or imported by name), with an argument."""
    if not call.args or not isinstance(call.func, (ast.Name, ast.Attribute)):
        return False
    # (ast.unparse, not auditor.static.astutil's dotted name: auditor.project does not import auditor.static)
    module, _, last = ast.unparse(call.func).rpartition(".")
    return last in _RUNNER_NAMES and (module in _RUNNER_MODULES or not module)


def shell_parts(nodes: list[ast.expr], strings: dict[str, ast.Constant] | None = None) -> list[tuple[str, ast.expr]] | None:
    """Each node's shell text: a string literal's value, an f-string's with `${X}` for its fields, `$X` for any other
    expression (`sys.executable`, a variable); None when no node is a string. A name in `strings` (or an f-string
    field that is such a name, standing as whole words) is read as its literal, a part of its own placed there
    (IgFold's `torch_string = "torch==1.11.0+cu113 ..."` then `os.system(f"pip3 install {torch_string}")`)."""
    strings = strings or {}
    out: list[tuple[str, ast.expr]] = []
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str):
            out.append((node.value, node))
        elif isinstance(node, ast.Name) and node.id in strings:
            # a literal where it is written; a value that stands for one (no position of its own) where it is used
            held = strings[node.id]
            out.append((str(held.value), held if hasattr(held, "lineno") else node))
        elif isinstance(node, ast.JoinedStr):
            out.extend(_fstring_parts(node, strings))
        else:
            out.append(("$X", node))
    if not any(isinstance(n, (ast.Constant, ast.JoinedStr)) for _, n in out):
        return None
    if any("\n" in text for text, _ in out):
        return None           # a multi-line script: not one command line
    return out


def _fstring_parts(node: ast.JoinedStr, strings: dict[str, ast.Constant]) -> list[tuple[str, ast.expr]]:
    """An f-string's shell text, split where a field names a string in `strings` between spaces (or at an end)."""
    out: list[tuple[str, ast.expr]] = []
    text = ""
    values = node.values
    for i, v in enumerate(values):
        if isinstance(v, ast.Constant) and isinstance(v.value, str):
            text += v.value
            continue
        after = values[i + 1] if i + 1 < len(values) else None
        if (isinstance(v, ast.FormattedValue) and isinstance(v.value, ast.Name) and v.value.id in strings
                and v.conversion == -1 and v.format_spec is None and (not text or text[-1].isspace())
                and (after is None or isinstance(after, ast.Constant) and str(after.value)[:1].isspace())):
            if text.strip():
                out.append((text, node))
            out.append((str(strings[v.value.id].value), strings[v.value.id]))
            text = ""
            continue
        text += "${X}"
    if text.strip() or not out:
        out.append((text, node))
    return out


def string_names(tree: ast.Module) -> dict[str, ast.Constant]:
    """The names the module binds once, to a one-line string literal (`torch_string = "torch==1.11.0+cu113 ..."`),
    or to a value that stands for one (_resolved_value): a name bound again anywhere (another assignment, a loop, a
    parameter) is not read."""
    from auditor.astnodes import module_nodes_of

    bound = _bound_counts(tree)
    once = [node for node in module_nodes_of(tree, ast.Assign)
            if len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) and bound[node.targets[0].id] == 1]
    folders = {node.targets[0].id for node in once if _file_folder(node.value, set())}
    out = {}
    for node in once:
        name = node.targets[0].id
        if isinstance(node.value, ast.Constant) and isinstance(node.value.value, str) and "\n" not in node.value.value:
            out[name] = node.value
        elif (resolved := _resolved_value(node.value, folders)) is not None:
            out[name] = resolved        # tp51b: `pip = shutil.which("pip")`, `d = os.path.join(HERE, "sub/pkg")`
    return out


def _keep_local_builds(inner: "FileResult", result: "FileResult", spans: list[tuple[int, int, int, int]]) -> None:
    """The builds of local folders the command makes (`pip install -e <folder>`: QQQ's setup.py installs its
    fast-hadamard-transform submodule), kept in the Python file's summary at the file's line for the tree pass
    (auditor/project/local_builds.py), as the shell reader keeps a script's (tp51b)."""
    from auditor.project.local_builds import SUMMARY_KEY
    from auditor.project.makefile import keep_call

    for call in (inner.summary or {}).get(SUMMARY_KEY) or []:
        if not isinstance(call, dict) or call.get("line") != 1 or not isinstance(call.get("col"), int):
            continue
        at = next((s for s in spans if s[0] <= call["col"] - 1 < s[1]), spans[-1])
        col = at[3] + max(call["col"] - 1 - at[0], 0) + 1
        width = max(int(call.get("end_col") or call["col"]) - call["col"], 0)
        keep_call(result, SUMMARY_KEY, {**call, "line": at[2], "col": col, "end_col": col + width})


def _file_folder(node: ast.expr, folders: set[str]) -> bool:
    """The folder of the running file: `os.path.dirname(os.path.abspath(__file__))`, `Path(__file__).parent`,
    `pathlib.Path(__file__).absolute().parent`, or a name bound to one of them (`folders`)."""
    if isinstance(node, ast.Name):
        return node.id in folders
    mentions_file = any(isinstance(n, ast.Name) and n.id == "__file__" for n in ast.walk(node))
    if isinstance(node, ast.Attribute) and node.attr == "parent":
        return mentions_file
    return isinstance(node, ast.Call) and isinstance(node.func, (ast.Name, ast.Attribute)) \
        and ast.unparse(node.func).rpartition(".")[2] == "dirname" and mentions_file


def _resolved_value(value: ast.expr, folders: set[str]) -> ast.Constant | None:
    """A one-line text a name's value stands for in a command: `shutil.which("pip")` is the command it finds on
    PATH (`pip`); `os.path.join(HERE, "third-party/fast-hadamard-transform")` (or `HERE / "..."`) with HERE the
    file's folder is that folder, relative to the file's (`./third-party/...`). Without a position: a finding on it
    is placed where the command uses the name."""
    parts: list[ast.expr] = []
    if isinstance(value, ast.Call) and isinstance(value.func, (ast.Name, ast.Attribute)) and len(value.args) == 1 \
            and ast.unparse(value.func) in ("shutil.which", "which") and isinstance(value.args[0], ast.Constant):
        text = value.args[0].value
        return ast.Constant(text) if isinstance(text, str) and re.fullmatch(r"[\w.-]+", text) else None
    if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and ast.unparse(value.func) in (
            "os.path.join", "path.join") and value.args and _file_folder(value.args[0], folders):
        parts = value.args[1:]
    elif isinstance(value, ast.BinOp) and isinstance(value.op, ast.Div) and _file_folder(value.left, folders):
        parts = [value.right]
    strings = [p.value for p in parts if isinstance(p, ast.Constant) and isinstance(p.value, str)]
    if not parts or len(strings) != len(parts) or not all(
            v.strip() and not v.startswith("/") and "\n" not in v for v in strings):
        return None
    joined = "/".join(v.strip("/") for v in strings)
    return ast.Constant("./" + joined.removeprefix("./"))


def _bound_counts(tree: ast.Module) -> "Counter[str]":
    """How many times the module binds each name (assignments, loop targets, parameters)."""
    from auditor.astnodes import module_nodes_of

    bound = Counter(n.id for n in module_nodes_of(tree, ast.Name) if not isinstance(n.ctx, ast.Load))
    bound.update(a.arg for a in module_nodes_of(tree, ast.arg))
    return bound


def _joined(parts: list[tuple[str, ast.expr]]) -> tuple[str, list[tuple[int, int, int, int]]]:
    text, spans = "", []
    for value, node in parts:
        start = len(text) + (1 if text else 0)
        text = f"{text} {value}" if text else value
        # a string's text starts after its opening quote (and an f / r prefix)
        shift = 0 if not isinstance(node, (ast.Constant, ast.JoinedStr)) else 2 if isinstance(node, ast.JoinedStr) else 1
        spans.append((start, len(text), node.lineno, node.col_offset + shift))
    return text, spans

