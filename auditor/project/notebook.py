"""Jupyter notebooks read with nbformat: code cells go through the same Python pass, `!cmd` lines and
`%%bash` cells through the shell reader. A finding's line counts through the code cells in order (the
line the console shows), and the finding says which cell and which line of that cell."""
from __future__ import annotations

import ast
import re
from dataclasses import replace
from typing import TYPE_CHECKING

from auditor.project.configs import analyze_config
from auditor.project.hits import Collector, decode_text
from auditor.project.shell import scan_shell
from auditor.findings import FileError, FileResult
from auditor.astnodes import ast_dotted, walk_list

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine

# (`%%shell`: Colab's shell cell magic)
_SHELL_CELL_MAGICS = ("%%bash", "%%sh", "%%script bash", "%%script sh", "%%shell")
# line magics that run a command as the shell would: IPython's `%pip` / `%conda` (pip / conda in the kernel's
# environment, IPython's magics reference) and Colab's `%shell` (t35a, project test65: ColabFold's
# `%shell pip install -q dgl-cu113`); the magic's name is read as the command (`%pip` -> `pip`) or dropped (`%shell`)
_COMMAND_MAGIC_RE = re.compile(r"%(?:(pip|conda|mamba)|shell)\s")
# `%%writefile /content/setup.sh` then the script (a Colab notebook's set-up, run by a later `!bash setup.sh`): the
# cell's body is a shell script (t15g)
_WRITES_SCRIPT_RE = re.compile(r"%%writefile(?:\s+-a)?\s+\S+\.(?:sh|bash)\s*$")
_RUN_MAGIC_RE = re.compile(r"%run\s")
# `%%writefile /tmp/oumi/nanoGPT/gpt_train.yaml` then a YAML / JSON config (oumi's notebooks, tp38): the cell is the
# config a later `!oumi train -c ...` reads, read as that config file
_WRITES_CONFIG_RE = re.compile(r"%%writefile(?:\s+-a)?\s+(\S+\.(?:ya?ml|json))\s*$", re.I)
_RUN_SHIFT = len("python") - len("%run")
# `%env NAME=value` / `%env NAME value` / `%set_env NAME value`: IPython sets os.environ[NAME] for the kernel and
# the commands it starts (IPython's magics reference), as `export NAME=value` does in a script (t21b, project test28:
# Matcha-TTS's synthesis.ipynb `%env CUDA_VISIBLE_DEVICES=0`)
_ENV_MAGIC_RE = re.compile(r"(%(?:set_)?env)\s+([A-Za-z_]\w*)(=|\s+)(\S.*)")


# IPython expands `{expr}` in a `!` line before the shell runs it (`!{sys.executable} -m pip install ...`): the
# kernel's Python for `sys.executable`, a same-length placeholder for anything else, so columns stay true
_PY_INTERPOLATION_RE = re.compile(r"(?<!\$)\{[^{}\s]+\}")
# `pip_list = !pip freeze`: a shell command whose output lines IPython assigns to a name
_CAPTURE_RE = re.compile(r"(\s*[A-Za-z_][\w.]*\s*=\s*)!(.*)")


def _placeholder(expr: re.Match) -> str:
    text = expr.group(0)
    return "python".ljust(len(text)) if text == "{sys.executable}" else "_" * len(text)


def code_cells(text: str) -> list[tuple[int, str]]:
    """(1-based cell number among all cells, source) of each code cell; raises ValueError if not a notebook."""
    import warnings

    import nbformat

    try:
        with warnings.catch_warnings():
            # nbformat warns on stderr about notebooks saved by older Jupyter (cells without ids); the audit only
            # reads the cells, so the user's console should not fill with it
            warnings.simplefilter("ignore")
            nb = nbformat.reads(text, as_version=4)
    except Exception as exc:  # noqa: BLE001 - nbformat raises many kinds on bad input
        raise ValueError(f"not a readable notebook: {exc}".splitlines()[0]) from exc
    return [(i, cell.source) for i, cell in enumerate(nb.cells, 1) if cell.cell_type == "code"]


def notebook_code_lines(text: str) -> list[str]:
    """The lines a notebook finding's line number counts through: every code cell, in order."""
    lines: list[str] = []
    for _number, source in code_cells(text):
        lines.extend(source.splitlines() or [""])
    return lines


def _cell_imports(code: str) -> list[str]:
    """The top-level imports of a cell (also inside a top-level `try:`), as one-line statements: a later cell
    runs in the same kernel, so `torch.cuda.synchronize()` there is torch's even without its own import."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found: list[str] = []
    for node in tree.body:
        for stmt in (node.body if isinstance(node, ast.Try) else [node]):
            if isinstance(stmt, (ast.Import, ast.ImportFrom)) and not (
                    isinstance(stmt, ast.ImportFrom) and stmt.module == "__future__"):
                found.append(ast.unparse(stmt))
    return found


def _switches(code: str) -> list[tuple[int, int, str, str]]:
    """A cell's top-level `cuda = True` / `use_cuda = False`: (line in the cell, column, name, value), for the
    setting catalogue's `notebook:` keys."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return []
    found = []
    for node in tree.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, bool):
            found.append((node.lineno, node.col_offset + 1, node.targets[0].id, str(node.value.value)))
    return found


# the IPython calls a `!cmd` line is (`get_ipython().system('cmd')`, what nbconvert and Colab's exports write, and what
# some notebooks spell out: piper's training notebook runs `get_ipython().system(f\'\'\'python -m piper_train ...\'\'\')`)
_SYSTEM_METHODS = frozenset({"system", "getoutput", "system_raw"})


def _system_call_lines(code: str) -> list[tuple[int, str]]:
    """(line in the cell, text) of each source line of the command a `get_ipython().system(...)` call runs: the
    literal's source between its quotes, the rest of each line blanked so columns stay the notebook's (tp37)."""
    if "get_ipython" not in code:
        return []
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return []
    source = code.split("\n")
    out: list[tuple[int, str]] = []
    for node in walk_list(tree):
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
                and node.func.attr in _SYSTEM_METHODS and isinstance(node.func.value, ast.Call)
                and isinstance(node.func.value.func, ast.Name) and node.func.value.func.id == "get_ipython"
                and node.args and isinstance(node.args[0], (ast.Constant, ast.JoinedStr))):
            continue
        literal = node.args[0]
        if isinstance(literal, ast.Constant) and not isinstance(literal.value, str) or literal.end_lineno is None \
                or literal.end_col_offset is None:
            continue
        first, last = literal.lineno, literal.end_lineno
        head = source[first - 1].encode("utf-8")[:literal.col_offset].decode("utf-8", "replace")
        opening = re.match(r"[rRuUfFbB]{0,2}(\"\"\"|\'\'\'|\"|\')", source[first - 1][len(head):])
        if opening is None:
            continue
        quote = opening.group(1)
        for n in range(first, last + 1):
            text = source[n - 1]
            if n == last:
                end = len(text.encode("utf-8")[:literal.end_col_offset].decode("utf-8", "replace")) - len(quote)
                text = text[:max(end, 0)]
            if n == first:
                start = len(head) + opening.end()
                text = " " * start + text[start:]
            out.append((n, text))
    return out


def _switches_passed(code: str, switches: list[tuple[int, int, str, str]], offset: int
                     ) -> tuple[str, dict[tuple[int, int], str]]:
    """The cell's code with each keyword value that is a `True` switch of the notebook (`ScalingConfig(num_workers=2,
    use_gpu=use_gpu)` after `use_gpu = True`) written as that value, padded to keep the columns, so that the call's
    keyword is read as set (Ray's GPU request); and {(notebook line, keyword column): switch}. Lead decision 47: the
    switch is `none`, the request it turns on the pair (tp48a). A switch bound more than once is not read."""
    names = [s[2] for s in switches]
    on = {s[2] for s in switches if s[3] == "True" and names.count(s[2]) == 1 and len(s[2]) >= len("True")}
    if not on:
        return code, {}
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return code, {}
    lines = code.split("\n")
    passed: dict[tuple[int, int], str] = {}
    for node in walk_list(tree):
        if isinstance(node, ast.keyword) and node.arg and isinstance(node.value, ast.Name) \
                and node.value.id in on and node.value.lineno == node.lineno:
            text = lines[node.lineno - 1]
            start = len(text.encode("utf-8")[:node.value.col_offset].decode("utf-8", "replace"))
            name = node.value.id
            lines[node.lineno - 1] = text[:start] + "True".ljust(len(name)) + text[start + len(name):]
            column = len(text.encode("utf-8")[:node.col_offset].decode("utf-8", "replace")) + 1
            passed[(offset + node.lineno, column)] = name
    return "\n".join(lines), passed


def _switch_tests(code: str, offset: int) -> dict[str, list[tuple[int, int] | None]]:
    """Each read of a name in a cell: the (first, last) notebook lines of the block it opens when the name is the whole
    test of an `if` statement (`if use_cuda:`), else None. A conditional expression is not read so: yolov7's `cuda =
    True` picking onnxruntime's providers on one line is labelled `device` (project test7, t15c's NPU053)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return {}
    arms: dict[int, tuple[int, int]] = {}
    for node in walk_list(tree):
        if isinstance(node, ast.If) and isinstance(node.test, ast.Name):
            arms[id(node.test)] = (offset + node.body[0].lineno, offset + (node.body[-1].end_lineno or node.lineno))
    out: dict[str, list[tuple[int, int] | None]] = {}
    for n in walk_list(tree):
        if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load):
            out.setdefault(n.id, []).append(arms.get(id(n)))
    return out


def _gated_switches(switches: list[tuple[int, int, str, str]], tests: dict[str, list[tuple[int, int] | None]],
                    findings: list) -> set[str]:
    """`use_cuda = True`, read only as `if use_cuda:` whose blocks each hold a finding of their own (`.cuda()`): a
    boolean device option, `none` by lead decisions 25 and 47 (the device calls it turns on are the pairs; tp60b,
    project test169's EfficientDet tutorials). A switch also read another way (passed on, compared), bound more than
    once, or gating a block with nothing reported keeps its findings."""
    names = [s[2] for s in switches]
    out = set()
    for line, _c, name, value in switches:
        arms = [arm for arm in tests.get(name, []) if arm is not None]
        if value != "True" or names.count(name) != 1 or not arms or len(arms) != len(tests[name]):
            continue
        if all(any(first <= f.line <= last and f.line != line for f in findings) for first, last in arms):
            out.add(name)
    return out


def _switch_findings(col: Collector, switches: list[tuple[int, int, str, str]], read: set[str]) -> None:
    """`cuda = True` in a cell, read by the notebook's code (`... if cuda else ...`): the switch that turns on the
    CUDA path below (NPU053, information). A switch nothing reads is a leftover: not reported."""
    from auditor.project.hits import matchers

    m = matchers(col.engine)
    for line, c, name, value in switches:
        if name not in read:
            continue
        rule = m.match_setting(f"notebook:{name.lower()}", value.lower())
        col.add(rule, f"{name} = {value}", line, c, c + len(name), value=value)


def _unshift(f, shifted: dict[int, tuple[int, int]]):
    """A shell finding on a `%run` / `%env` line with its columns in the notebook's own text."""
    start, shift = shifted.get(f.line, (None, 0))
    if start is None or f.end_col <= start:
        return f
    return replace(f, col=f.col - shift if f.col > start else f.col, end_col=f.end_col - shift)


def _unshifted(summary: dict, shifted: dict[int, tuple[int, int]]) -> dict:
    """The shell reader's recorded calls with the columns of `%run` / `%env` lines put back (see _unshift)."""
    if not shifted:
        return summary
    for calls in summary.values():
        for call in calls if isinstance(calls, list) else []:
            if not isinstance(call, dict):
                continue
            for line_key, keys in (("line", ("col", "end_col")), ("file_line", ("file_col", "file_end_col"))):
                at = call.get(line_key)
                start, shift = shifted.get(at, (None, 0)) if isinstance(at, int) else (None, 0)
                for key in keys:
                    if start is not None and isinstance(call.get(key), int) and call[key] > start:
                        call[key] -= shift
    return summary


def _imported_names(line: str) -> list[str]:
    """The names an import line binds (`import torch.backends.cudnn as cudnn` -> cudnn; `import torch.cuda` -> torch)."""
    try:
        tree = ast.parse(line.strip())
    except SyntaxError:
        return []
    return [(a.asname or a.name).split(".", 1)[0] for node in tree.body if isinstance(node, (ast.Import, ast.ImportFrom))
            for a in node.names]


def _drop_unused_imports(findings: list, python_code: list[str]) -> list:
    """Without the torch imports no cell of the notebook uses (tp54b): each cell is read alone, so the engine's
    "imported here and never used" (host_scopes, info) is checked against every cell; a name no other line spells runs
    nothing on Ascend, and the project labels read such an import `none` (ssd.pytorch's demo and rcg's viz notebook:
    `import torch.backends.cudnn as cudnn`, never used). A name a later cell uses keeps its finding."""
    out = []
    for f in findings:
        line = python_code[f.line - 1] if (f.data or {}).get("context") == "unused-import" \
            and 0 < f.line <= len(python_code) else None
        names = _imported_names(line) if line else []
        if names and not any(re.search(rf"(?<![\w.]){re.escape(n)}\b", other)
                             for n in names for i, other in enumerate(python_code) if i != f.line - 1):
            continue
        out.append(f)
    return out


# `torch_dtype=` just before the finding's column: the dtype a model is loaded or built in
_LOAD_DTYPE_RE = re.compile(r"\btorch_dtype\s*=\s*$")


def _drop_fp16_load_dtypes(findings: list, python_code: list[str]) -> list:
    """Without the fp16 hint (NPU202, info) on a notebook's `torch_dtype=torch.float16` (tp54b): the weights load in
    fp16 on the NPU as they do on CUDA, and the project labels read the keyword `none` in notebooks (lead decision
    30's project-file reading: test16, test78, test83, test123, test144, test151, test156; one `weight_dtype =
    torch.float16` assignment of test35 reads `precision`, and stays reported). A script's keyword keeps its hint
    (the static splits label it `precision`, decision 36)."""
    out = []
    for f in findings:
        text = python_code[f.line - 1] if f.code == "NPU202" and f.severity == "info" \
            and 0 < f.line <= len(python_code) else ""
        if text and f.col > 0 and _LOAD_DTYPE_RE.search(text[:f.col - 1]):
            continue
        out.append(f)
    return out


# the shell commands that fetch or unpack files into the notebook's folder (`!gdown --id ... --output exp/x.zip`,
# `!unzip exp/x.zip -d exp/`, `!wget -O ckpt.pth URL`) and the archive suffixes an unpacked folder is named without
_FETCH_COMMANDS = frozenset({"gdown", "wget", "curl", "unzip", "tar", "7z", "aria2c", "huggingface-cli", "gsutil"})
_ARCHIVE_SUFFIX_RE = re.compile(r"\.(?:zip|tar\.gz|tgz|tar\.bz2|tar\.xz|tar|7z)$")


def _fetched_paths(shell_lines: list[str]) -> set[str]:
    """The paths a notebook's fetch / unpack commands name (an archive also without its suffix: the folder it
    unpacks to), `./` and a trailing `/` dropped."""
    found: set[str] = set()
    for text in shell_lines:
        words = text.split()
        if not words or words[0].rsplit("/", 1)[-1] not in _FETCH_COMMANDS:
            continue
        for word in words[1:]:
            word = word.strip("\"'").removeprefix("./").rstrip("/")
            if word and not word.startswith("-") and "://" not in word and ("/" in word or "." in word):
                found |= {word, _ARCHIVE_SUFFIX_RE.sub("", word)}
    return found


def _fetched_checkpoint_loads(col: Collector, python_code: list[str], shell_lines: list[str]) -> None:
    """`torch.load(path_saved_ckpt)` with no `map_location`, where the path (a literal, or a name the notebook binds
    to one) is in what its shell lines fetched or unpacked (`!gdown ... --output exp/pretrained.zip`, `!unzip
    exp/pretrained.zip -d exp/`): a checkpoint trained elsewhere, on GPUs, whose CUDA tensors torch puts back on
    CUDA (NPU938, tp60a). A checkpoint the notebook saves itself is not one (`torch.save(..., path)`)."""
    fetched = _fetched_paths(shell_lines)
    if not fetched or "torch.load" not in "\n".join(python_code):
        return
    try:
        tree = ast.parse("\n".join(python_code))
    except (SyntaxError, ValueError, RecursionError):
        return
    bound: dict[str, str] = {}
    saved: set[str] = set()
    loads = []
    for node in walk_list(tree):
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name) \
                and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            bound[node.targets[0].id] = node.value.value
        elif isinstance(node, ast.Call) and ast_dotted(node.func) == "torch.save" and len(node.args) > 1:
            saved.add(ast.unparse(node.args[1]))
        elif isinstance(node, ast.Call) and ast_dotted(node.func) == "torch.load" and len(node.args) == 1 \
                and not node.keywords:
            loads.append(node)
    rule = None
    for call in loads:
        arg = call.args[0]
        path = arg.value if isinstance(arg, ast.Constant) and isinstance(arg.value, str) else \
            bound.get(arg.id) if isinstance(arg, ast.Name) else None
        if path is None or ast.unparse(arg) in saved:
            continue
        path = path.removeprefix("./")
        if any(path == f or path.startswith(f + "/") for f in fetched):
            from auditor.project.hits import matchers

            rule = rule or matchers(col.engine).match_setting("notebook:fetched_checkpoint_load", "torch.load")
            col.add(rule, "torch.load", call.lineno, call.col_offset + 1, call.col_offset + 1 + len("torch.load"))


def analyze_notebook(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    try:
        cells = code_cells(text)
    except ValueError as exc:
        return FileResult(rel, error=FileError(rel, "syntax", str(exc)))
    shell = Collector(engine, rel, "\n".join(notebook_code_lines(text)))
    result = FileResult(rel)
    shell_lines: list[str] = []
    offset = 0
    imported: list[str] = []      # the kernel's imports so far, put on one line before each later cell
    switches: list[tuple[int, int, str, str]] = []     # `cuda = True` at a cell's top level: (line, col, name, value)
    read: set[str] = set()        # names the notebook's code reads
    handed_on: set[str] = set()   # switches passed as a keyword whose call has its own finding there
    tests: dict[str, list[tuple[int, int] | None]] = {}   # each read of a name: the arm it gates, or None
    python_code: list[str] = []   # the Python of every code cell, a line per notebook line (blank elsewhere)
    shifted: dict[int, tuple[int, int]] = {}   # line -> (column of a magic read as shell, columns it grew)
    for number, source in cells:
        lines = source.splitlines() or [""]
        written = _WRITES_CONFIG_RE.match(lines[0].strip())
        if written is not None:
            config = analyze_config(engine, "\n".join(lines[1:]).encode("utf-8"), written.group(1).lstrip("/"))
            result.findings.extend(replace(
                f, path=rel, line=f.line + offset + 1, end_line=f.end_line + offset + 1,
                message=f"{f.message} [cell {number}, line {f.line + 1}: the config it writes]", fix="none",
                data={**f.data, "cell": number, "cell_line": f.line + 1}) for f in config.findings)
            shell_lines.extend([""] * len(lines))
            python_code.extend([""] * len(lines))
            offset += len(lines)
            continue
        if lines[0].strip().startswith(_SHELL_CELL_MAGICS) or _WRITES_SCRIPT_RE.match(lines[0].strip()):
            python_lines = [""] * len(lines)
            shell_lines.extend([""] + lines[1:])
        else:
            # IPython syntax is not Python: `!cmd` is a shell line, `%magic` / `?` lines are dropped
            python_lines = []
            continued = False
            for ln in lines:
                stripped = ln.lstrip()
                if continued:
                    # a `!cmd \` line goes on in the next line (IPython joins backslash continuations of a
                    # shell escape): `--bf16 True \` of a multi-line `!torchrun ...` is shell, not Python
                    python_lines.append("")
                    shell_lines.append(_PY_INTERPOLATION_RE.sub(_placeholder, ln))
                    continued = ln.rstrip().endswith("\\")
                elif stripped.startswith("!"):
                    # inside a block (`if need_pytorch3d:` / `    !pip install ...`) a `pass` keeps the block Python
                    python_lines.append(ln[:len(ln) - len(stripped)] + "pass" if ln != stripped else "")
                    shell_lines.append(_PY_INTERPOLATION_RE.sub(_placeholder, ln.replace("!", " ", 1)))
                    continued = ln.rstrip().endswith("\\")
                elif captured := _CAPTURE_RE.match(ln):
                    # `pip_list = !pip freeze`: IPython runs the command and binds its output lines to the name
                    # (IPython's "System shell access"); Python sees a list, the shell line keeps its columns
                    python_lines.append(captured.group(1) + "[]")
                    shell_lines.append(_PY_INTERPOLATION_RE.sub(
                        _placeholder, " " * len(captured.group(1)) + " " + captured.group(2)))
                    continued = ln.rstrip().endswith("\\")
                elif command := _COMMAND_MAGIC_RE.match(stripped):
                    python_lines.append("")
                    start = len(ln) - len(stripped)
                    # the columns kept: `%pip ...` -> ` pip ...`, `%shell pip ...` -> `       pip ...`
                    blank = 1 if command.group(1) else len("%shell")
                    shell_lines.append(_PY_INTERPOLATION_RE.sub(_placeholder, ln[:start] + " " * blank + stripped[blank:]))
                    continued = ln.rstrip().endswith("\\")
                elif _RUN_MAGIC_RE.match(stripped):
                    # `%run train.py --config train.json`: IPython runs the file as `python train.py ...` would
                    # (t19c, EveryDream2trainer); read as that launch, the columns after the magic put back below
                    python_lines.append("")
                    start = len(ln) - len(stripped)
                    shifted[len(shell_lines) + 1] = (start + 1, _RUN_SHIFT)      # 1-based, as a finding's column
                    shell_lines.append(ln[:start] + "python" + stripped[len("%run"):])
                    continued = ln.rstrip().endswith("\\")
                elif env := _ENV_MAGIC_RE.match(stripped):
                    python_lines.append("")
                    start = len(ln) - len(stripped)
                    shifted[len(shell_lines) + 1] = (start + 1, len("export") - len(env.group(1)))
                    # `NAME value` -> `NAME=value`: the separator's first character, the columns kept
                    sep = env.group(3)
                    shell_lines.append(ln[:start] + "export " + env.group(2) + "=" + sep[1:] + env.group(4))
                elif stripped.startswith(("%", "?")) or stripped.endswith("?") and not stripped.startswith("#"):
                    python_lines.append("")
                    shell_lines.append("")
                else:
                    python_lines.append(ln)
                    shell_lines.append("")
        code = "\n".join(python_lines) + "\n"
        python_code.extend(python_lines[:len(lines)] + [""] * (len(lines) - len(python_lines)))
        for n, text in _system_call_lines(code):
            if not shell_lines[len(shell_lines) - len(lines) + n - 1].strip():
                shell_lines[len(shell_lines) - len(lines) + n - 1] = _PY_INTERPOLATION_RE.sub(_placeholder, text)
        switches.extend((offset + ln, c, name, value) for ln, c, name, value in _switches(code))
        reads = _switch_tests(code, offset)     # (its keys: every name the cell reads)
        read |= reads.keys()
        for name, arms in reads.items():
            tests.setdefault(name, []).extend(arms)
        prefix = 1 if imported else 0
        code, passed = _switches_passed(code, switches, offset)
        cell = engine.analyze_bytes(((("; ".join(imported) + "\n") if prefix else "") + code).encode("utf-8"),
                                    rel + ".py")
        handed_on |= {name for (line, c), name in passed.items()
                      if any(f.line - prefix + offset == line and f.col == c for f in cell.findings)}
        imported.extend(i for i in _cell_imports(code) if i not in imported)
        result.suppressed += cell.suppressed
        if cell.error is not None and result.error is None:
            result.error = FileError(rel, cell.error.kind, f"cell {number}: {cell.error.message}",
                                     max((cell.error.line or 0) - prefix, 0) + offset or None)
        for f in cell.findings:
            if f.line <= prefix:
                continue                  # the earlier cells' imports: reported in their own cell
            f = replace(f, line=f.line - prefix, end_line=f.end_line - prefix)
            result.findings.append(replace(
                f, path=rel, line=f.line + offset, end_line=f.end_line + offset,
                message=f"{f.message} [cell {number}, line {f.line}]", fix="none",
                data={**{k: v for k, v in f.data.items() if k != "replace"}, "cell": number, "cell_line": f.line}))
        offset += len(lines)
    if any(shell_lines):
        scan_shell(shell, "\n".join(shell_lines))
        # the launches and script calls of `!python x.py` / `%run x.py` lines, for the tree passes (t19c): the shell
        # text has the notebook's code lines, so their lines are the notebook's
        if shell.result.summary:
            result.summary = _unshifted(shell.result.summary, shifted)
        shell.result.findings = [_unshift(f, shifted) for f in shell.result.findings]
    gated = _gated_switches(switches, tests, result.findings + shell.result.findings)
    if gated:
        at = {(line, name) for line, _c, name, _v in switches if name in gated}
        result.findings = [f for f in result.findings if not (f.name == "cuda-switch-value" and (f.line, f.symbol) in at)]
    _switch_findings(shell, [s for s in switches if s[2] not in handed_on | gated], read)
    _fetched_checkpoint_loads(shell, python_code, shell_lines)
    if shell.result.findings:
        starts = []
        total = 0
        for number, source in cells:
            starts.append((total, number))
            total += len(source.splitlines() or [""])
        for f in shell.result.findings:
            base, number = max((s for s in starts if s[0] < f.line), default=(0, cells[0][0]))
            result.findings.append(replace(f, message=f"{f.message} [cell {number}, line {f.line - base}]",
                                           fix="none", data={"cell": number, "cell_line": f.line - base}))
    result.lines = offset
    result.findings = _drop_fp16_load_dtypes(_drop_unused_imports(result.findings, python_code), python_code)
    result.findings = engine.notebook_fallback_defaults(result.findings, "\n".join(python_code))
    result.findings.sort(key=lambda f: f.sort_key())
    return result
