"""Hostile inputs and situations, as a CI system and a careless user produce them (issue 13 and the
exit-code / convention parts of issue 11). Each test is a reproducer of a failure seen before: a wrong
answer from the cache, a process left behind, a special file, an unbounded resource, a silent pass.

Marked `reliability`; they run in the default `python -m pytest` (CI). `-m "not reliability"` skips them.
"""
from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import textwrap
import time
import uuid
from pathlib import Path

import pytest

from auditor.cli import main

pytestmark = pytest.mark.reliability
REPO = Path(__file__).resolve().parent.parent
ENV = {**os.environ, "PYTHONPATH": str(REPO) + os.pathsep + os.environ.get("PYTHONPATH", "")}

A_PY = """\
import torch
m = Net().cuda()
x = torch.QInt8Storage()
t = torch.zeros(2, dtype=torch.bfloat16)
torch.backends.cuda.matmul.allow_tf32 = True
"""
B_PY = """\
import torch.distributed as dist
dist.init_process_group(backend="nccl")  # npu-audit: ignore[NPU101]
import torch
torch.cuda.synchronize()  # noqa: NPU002
y = torch.cuda.current_device()
"""


def _text(error: dict) -> str:
    """A JSON error object ({path, kind, message, line}) as one searchable line."""
    return f"{error['path']}:{error.get('line') or ''}: {error['kind']}: {error['message']}"

def run_json(capsys, *args: str) -> tuple[int, dict, str]:
    code = main([*args, "--format", "json"])
    captured = capsys.readouterr()
    return code, json.loads(captured.out) if captured.out.strip() else {}, captured.err


def outcome(capsys, *args: str):
    code, doc, _ = run_json(capsys, *args)
    return code, [(f["path"], f["line"], f["code"], f["severity"], f["message"]) for f in doc["findings"]], \
        doc["errors"]


def cli(*args: str, timeout: float = 120, cwd: Path | None = None) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "auditor.cli", *args], capture_output=True, text=True,
                          timeout=timeout, env=ENV, cwd=cwd)


def alive(marker: str) -> list[str]:
    """Processes whose command line holds marker (ps, as a user would look)."""
    out = subprocess.run(["ps", "-eo", "pid,stat,args"], capture_output=True, text=True).stdout
    return [line for line in out.splitlines()[1:]
            if marker in line and "ps -eo" not in line and " Z" not in line.split(marker)[0][-8:]]


def wait_gone(marker: str, seconds: float = 10.0) -> list[str]:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        left = alive(marker)
        if not left:
            return []
        time.sleep(0.2)
    return alive(marker)


@pytest.fixture
def tree(tmp_path):
    (tmp_path / "a.py").write_text(A_PY)
    (tmp_path / "b.py").write_text(B_PY)
    (tmp_path / "pkg").mkdir()
    for i in range(30):          # enough files for the process pool
        (tmp_path / "pkg" / f"m{i}.py").write_text(f"import torch\nv{i} = torch.randn(3).cuda()\n")
    return tmp_path


# -- the cache never changes an answer -----------------------------------------------------------------

FLAG_SETS = [
    [], ["--ignore", "NPU501"], [], ["--select", "NPU5"], ["--product", "310p"], ["--product", "950"],
    ["--torch-npu", "2.1"], [], ["--max-file-size", "0.0001"], ["--extend-select", "NPU0"],
    ["--ignore", "precision"], ["--fail-on", "warning"], ["--jobs", "2"], ["--ignore", "NPU501"], [],
]


def test_cache_cold_and_warm_equal_no_cache_for_every_flag_set(tree, tmp_path_factory, capsys):
    cache = tmp_path_factory.mktemp("cache")
    differ = []
    for flags in FLAG_SETS:
        reference = outcome(capsys, str(tree), "--no-cache", "--jobs", "1", *flags)
        cold = outcome(capsys, str(tree), "--cache-dir", str(cache), *flags)
        warm = outcome(capsys, str(tree), "--cache-dir", str(cache), *flags)
        for label, got in (("cold", cold), ("warm", warm)):
            if got != reference:
                differ.append((flags, label))
    assert differ == []
    # the case from the issue: 3 findings, 2 of them errors, exit 1 - also after a run with --ignore NPU501
    # on v2.13, whose torch the 2.13.0 support list is for (on the default v2.15 the list is another torch's,
    # so its ✘ is unverified and NPU501 does not fire)
    code, findings, _ = outcome(capsys, str(tree / "a.py"), "--cache-dir", str(cache), "--ignore", "NPU501",
                                "--torch-npu", "2.13")
    code, findings, _ = outcome(capsys, str(tree / "a.py"), "--cache-dir", str(cache), "--torch-npu", "2.13")
    assert "NPU501" in {f[2] for f in findings} and code == 1


def test_cache_key_follows_rules_and_tool_code(tmp_path, monkeypatch):
    import auditor.cache as cache

    rules = tmp_path / "rules"
    shutil.copytree(REPO / "rules", rules)
    package = tmp_path / "auditor"
    shutil.copytree(REPO / "auditor", package, ignore=shutil.ignore_patterns("__pycache__"))
    monkeypatch.setattr(cache, "rules_dir", lambda: rules)
    monkeypatch.setattr(cache, "_PACKAGE_DIR", package)
    keys = []
    for edit in (None, lambda: (rules / "device.yaml").write_text((rules / "device.yaml").read_text() + "\n# edited\n"),
                 lambda: (package / "static" / "visitor.py").write_text(
                     (package / "static" / "visitor.py").read_text() + "\n# edited\n")):
        if edit:
            edit()
        cache.code_digest.cache_clear()
        keys.append(cache.engine_key("a2", 1000, None))
    cache.code_digest.cache_clear()
    assert len(set(keys)) == 3
    assert cache.engine_key("a2", 1, None) != cache.engine_key("a2", 1, {"torch.x": {}})


@pytest.mark.parametrize("index", [
    "[]", "{}", '"text"', "{not json", '{"format": 2, "key": "K", "entries": []}',
    '{"format": 2, "key": "K", "entries": {"PATH": 5}}',
    '{"format": 2, "key": "K", "entries": {"PATH": {"size": "x", "mtime": 1, "sha1": "", "findings": [], "lines": 1, "suppressed": 0}}}',
    '{"format": 2, "key": "K", "entries": {"PATH": {"size": SIZE, "mtime": MTIME, "sha1": "", "findings": [{"bogus": 1}], '
    '"lines": 1, "suppressed": 0, "error": null}}}',
    '{"format": 2, "key": "K", "entries": {"PATH": {"size": SIZE, "mtime": MTIME, "sha1": "", "findings": [], "lines": 1, '
    '"suppressed": 0, "error": {"x": 1}}}}',
])
def test_damaged_cache_index_is_rebuilt_without_traceback(tree, tmp_path_factory, capsys, index):
    cache = tmp_path_factory.mktemp("cache")
    reference = outcome(capsys, str(tree), "--no-cache")
    outcome(capsys, str(tree), "--cache-dir", str(cache))
    (index_path,) = cache.glob("results-*.json")
    key = index_path.stem.split("-", 1)[1]
    target = tree / "a.py"
    st = target.stat()
    index_path.write_text(index.replace("K", key).replace("PATH", str(target)).replace("SIZE", str(st.st_size))
                          .replace("MTIME", str(st.st_mtime_ns)))
    assert outcome(capsys, str(tree), "--cache-dir", str(cache)) == reference
    assert outcome(capsys, str(tree), "--cache-dir", str(cache)) == reference


def test_cache_lives_in_the_project_root_not_the_current_folder(tmp_path, monkeypatch, capsys):
    project = tmp_path / "proj"
    (project / "src" / "deep").mkdir(parents=True)
    (project / "pyproject.toml").write_text("[project]\nname = 'x'\n")
    (project / "src" / "deep" / "t.py").write_text(A_PY)
    monkeypatch.chdir(project / "src" / "deep")
    main([".", "--format", "json"])
    main(["t.py", "--format", "json"])
    capsys.readouterr()
    assert list((project / ".npu-audit-cache").glob("results-*.json"))
    assert not (project / "src" / "deep" / ".npu-audit-cache").exists()


# -- nothing the tool starts outlives it -----------------------------------------------------------------

SPAWNS = """\
import os
import subprocess
import torch


def daemonize(argv):
    # the classic double fork: the grandchild runs in a session of its own and its parent exits at once
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:
            os.execvp(argv[0], argv)
        os._exit(0)


class Net(torch.nn.Module):
    def __init__(self):
        super().__init__()
        self.fc = torch.nn.Linear(8, 2)

    def forward(self, x):
        return self.fc(x)


def audit_entry():
    subprocess.Popen(["sleep", "{marker}"])      # never waited for
    subprocess.Popen(["sleep", "{marker}"], start_new_session=True)   # setsid: leaves the process group
    daemonize(["sleep", "{marker}"])
    {body}
    return Net(), (torch.randn(4, 8),)
"""


def _user_file(tmp_path: Path, body: str = "pass") -> tuple[Path, str]:
    marker = str(1000 + uuid.uuid4().int % 10**6)
    path = tmp_path / "model.py"
    path.write_text(SPAWNS.replace("{marker}", marker).replace("{body}", body))
    return path, marker


@pytest.fixture
def leftovers():
    """Markers of processes a test expects gone; any still alive at the end is killed (by pid)."""
    markers: list[str] = []
    yield markers
    for marker in markers:
        for line in alive(marker):
            try:
                os.kill(int(line.split()[0]), signal.SIGKILL)
            except OSError:
                pass


@pytest.mark.parametrize("mode", ["--trace", "--execute"])
def test_children_of_user_code_are_reaped(tmp_path, leftovers, mode):
    # a plain child, a setsid child and a double-forked daemon: none outlives the audit
    path, marker = _user_file(tmp_path)
    leftovers.append(f"sleep {marker}")
    proc = cli(str(path), mode, "--no-cache", "--fail-on", "never", timeout=240)
    assert "finished in" in proc.stderr and "Traceback" not in proc.stderr.split("finished in")[-1], proc.stderr
    assert wait_gone(f"sleep {marker}", 5) == []


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGKILL, signal.SIGINT])
def test_killed_audit_leaves_nothing_running(tmp_path, leftovers, sig):
    path, marker = _user_file(tmp_path, body="while True:\n        pass")
    leftovers.append(f"sleep {marker}")
    # started as from a terminal, where Ctrl-C reaches it: a suite run in the background (`.ci/run &`) passes its
    # children SIGINT ignored, and an audit that inherits an ignored SIGINT rightly keeps ignoring it
    proc = subprocess.Popen([sys.executable, "-m", "auditor.cli", str(path), "--trace", "--no-cache"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True, env=ENV,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    deadline = time.monotonic() + 120
    while len(alive(f"sleep {marker}")) < 3 and time.monotonic() < deadline:   # user code is running
        time.sleep(0.2)
    assert len(alive(f"sleep {marker}")) == 3, "the user code never started its three processes"
    child = [line.split()[0] for line in alive("spawn_main")]
    proc.send_signal(sig)
    proc.wait(30)
    if sig != signal.SIGKILL:
        assert proc.returncode in (128 + sig, 130) and "Traceback" not in proc.stderr.read()
    assert wait_gone(f"sleep {marker}", 10) == []
    for pid in child:
        assert not Path(f"/proc/{pid}").exists() or "Z" in Path(f"/proc/{pid}/stat").read_text().split()[2]


def test_pool_workers_die_with_a_killed_parent(tmp_path):
    script = tmp_path / "pool.py"
    marker = f"pool-{uuid.uuid4().hex[:8]}"
    script.write_text(textwrap.dedent(f"""
        import sys, time
        from concurrent.futures import ProcessPoolExecutor
        from auditor.runner import _init_worker
        pool = ProcessPoolExecutor(2, initializer=_init_worker, initargs=("a2", None, 1000))
        list(pool.map(time.sleep, [0.1, 0.1]))
        print(" ".join(str(p) for p in pool._processes), flush=True)
        time.sleep(600)  # {marker}
    """))
    proc = subprocess.Popen([sys.executable, str(script), marker], stdout=subprocess.PIPE, text=True, env=ENV)
    workers = [int(p) for p in proc.stdout.readline().split()]
    assert len(workers) == 2
    proc.kill()
    proc.wait(10)
    deadline = time.monotonic() + 10
    while any(Path(f"/proc/{p}").exists() for p in workers) and time.monotonic() < deadline:
        time.sleep(0.2)
    assert not any(Path(f"/proc/{p}").exists() for p in workers)


MP_CHILD = """\
import multiprocessing
import torch


def work(q):
    q.put(7)


def audit_entry():
    q = multiprocessing.Queue()
    p = multiprocessing.Process(target=work, args=(q,))
    p.start()
    assert q.get(timeout=60) == 7
    p.join()
    return torch.nn.Linear(4, 2), (torch.randn(2, 4),)
"""


def test_user_code_may_start_multiprocessing_children_under_trace(tmp_path):
    (tmp_path / "mp_model.py").write_text(MP_CHILD)
    proc = cli(str(tmp_path / "mp_model.py"), "--trace", "--no-cache", "--format", "json", "--fail-on", "never",
               timeout=240)
    doc = json.loads(proc.stdout)
    assert doc["errors"] == [] and proc.returncode == 0, proc.stderr[-2000:]
    assert "daemonic" not in proc.stderr


@pytest.mark.parametrize("mode", ["--trace", "--execute"])
def test_training_script_with_dataloader_workers(tmp_path, mode):
    # Dataset + DataLoader(num_workers=2, persistent_workers, prefetch_factor) + a training loop: under
    # --trace the batch is built in-process and the table says so; --execute runs the workers as written
    script = tmp_path / "train.py"
    shutil.copy(REPO / "tests" / "fixtures" / "trace" / "dataloader_workers.py", script)
    proc = cli(str(script), mode, "--no-cache", "--format", "json", "--fail-on", "never", timeout=240)
    doc = json.loads(proc.stdout)
    assert doc["errors"] == [] and proc.returncode == 0, proc.stderr[-3000:]
    assert "Traceback" not in proc.stderr and "Exception ignored" not in proc.stderr, proc.stderr[-3000:]
    if mode == "--trace":
        row = doc["sections"]["trace"]["rows"][0]
        assert row["data loading"] == "workers run in-process: train.py:39 num_workers=2"
        assert row["inputs"] == "0 8x3x32x32"
    else:
        assert doc["sections"]["execute"]["loss"]["golden"] > 0


# -- special files and bounded resources ---------------------------------------------------------------

def test_fifo_and_device_links_are_refused_not_read(tmp_path):
    (tmp_path / "good.py").write_text("import torch\nx = t.cuda()\n")
    os.mkfifo(tmp_path / "x.py")
    os.symlink("/dev/zero", tmp_path / "zero.py")
    for args in ([str(tmp_path)], [str(tmp_path / "x.py"), str(tmp_path / "good.py")],
                 [str(tmp_path / "zero.py")]):
        proc = cli(*args, "--no-cache", "--format", "json", timeout=60)
        doc = json.loads(proc.stdout)
        kinds = {e["path"]: e["kind"] for e in doc["errors"]}
        assert all("special" in _text(e) for e in doc["errors"]) and doc["errors"], doc
        assert proc.returncode in (1, 2) and "Traceback" not in proc.stderr
    proc = cli("fix", str(tmp_path), timeout=60)          # `audit fix` neither hangs nor reads them
    assert "not a regular file" in proc.stderr and "Traceback" not in proc.stderr
    assert kinds


def test_size_limit_counts_bytes_read_not_st_size():
    from auditor.discover import SourceError, read_source

    with pytest.raises(SourceError) as info:      # /proc files say size 0 and hold more
        read_source(Path("/proc/self/maps"), 16)
    assert info.value.kind == "too-large"


def test_size_limit_in_check_and_fix(tmp_path):
    big = tmp_path / "big.py"
    big.write_text("x = t.cuda()\n" * 20_000)
    proc = cli(str(big), "--no-cache", "--max-file-size", "0.1", "--format", "json")
    assert "too-large" in _text(json.loads(proc.stdout)["errors"][0]) and proc.returncode == 2
    proc = cli("fix", str(big), "--max-file-size", "0.1")
    assert "too large" in proc.stderr or "too-large" in proc.stderr


def test_jobs_capped_at_the_cpu_count(tree, capsys):
    code, doc, err = run_json(capsys, str(tree), "--no-cache", "--jobs", "1000")
    assert "--jobs 1000 is more than" in err and doc["summary"]["files_scanned"] == 32


def test_one_long_line_with_many_matches_is_linear():
    """Pieces are parsed once each; a line of 2,000 statements is not parsed 2,000 times."""
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    engine, reference = StaticEngine(load_rules()), StaticEngine(load_rules(), slicing=False)
    src = ("import torch\n" + ";".join(f"a{i}=x.cuda()" for i in range(2000)) + "\n").encode()
    start = time.process_time()
    result = engine.analyze_bytes(src, "one.py")
    assert len(result.findings) == 2000 and time.process_time() - start < 30
    small = ("import torch\n" + "; ".join(f"a{i}=x.cuda(); s='é'" for i in range(200)) + "\n").encode()
    assert engine.analyze_bytes(small, "s.py").findings == reference.analyze_bytes(small, "s.py").findings


def _chunk_sources() -> list[bytes]:
    """Realistic files: the examples, the test fixtures, every rule example, and (where the recall corpus
    was fetched) 120 of the development split's files under 50 kB (only the dev split: the tool must not run on a
    blind split's code before that split is scored, and the sample should not depend on which splits are fetched)."""
    import json
    import random

    from auditor.rules import load_rules

    sources = [p.read_bytes() for p in sorted((REPO / "examples").glob("*.py"))]
    sources += [p.read_bytes() for p in sorted((REPO / "tests" / "fixtures").rglob("*.py"))]
    sources += [textwrap.dedent(ex).encode() for r in load_rules() for ex in r.examples_flag + r.examples_ok]
    dev = json.loads((REPO / "bench" / "corpus" / "sources.json").read_text())["sources"]
    corpus = sorted(p for src in dev for p in (REPO / "bench" / "_corpus" / f"{src['name']}-{src['version']}").glob("**/*.py"))
    corpus = [p for p in corpus if p.stat().st_size < 50_000]
    sources += [p.read_bytes() for p in random.Random(13).sample(corpus, min(120, len(corpus)))]
    return sources


def test_large_files_parsed_in_pieces_find_exactly_what_a_whole_parse_finds():
    """The bounded-memory path (static/largefile.py) forced on every file, with the smallest pieces (one
    top-level statement each): the same findings and errors as the usual whole-file parse."""
    from auditor.rules import load_rules
    from auditor.static import StaticEngine

    whole = StaticEngine(load_rules())
    pieces = StaticEngine(load_rules(), chunked_above=0, piece_chars=1)
    sources = _chunk_sources()
    assert len(sources) > 100
    for data in sources:
        a, b = pieces.analyze_bytes(data, "f.py"), whole.analyze_bytes(data, "f.py")
        assert [f.to_dict() for f in a.findings] == [f.to_dict() for f in b.findings], data[:300]
        assert a.error == b.error, data[:300]


BIG_FILE = """import resource, sys
from pathlib import Path
resource.setrlimit(resource.RLIMIT_AS, ({limit}, {limit}))
from auditor.cli import main
sys.exit(main([sys.argv[1], "--no-cache", "--format", "json", "--max-file-size", "60", "--fail-on", "never"]))
"""


def test_a_large_file_is_audited_in_bounded_memory(tmp_path):
    """3 MB of short statements needs ~1 GB for a whole-file `ast.parse` (MemoryError under this limit;
    50 MB ran out of memory); in pieces it is audited under a 640 MB address-space limit, and a 4 MB
    single statement (a data literal, which cannot be cut) is refused with a message, not a crash."""
    big = tmp_path / "big.py"
    lines = ["import torch\n"] + [("x = t.cuda()\n" if i % 1000 == 0 else f"v{i % 97} = f(a, {i}) + 1\n")
                                  for i in range(150_000)]
    big.write_text("".join(lines))
    literal = tmp_path / "data.py"
    literal.write_text("DATA = [\n" + "".join(f"    ({i}, {i + 1}, {i + 2}),\n" for i in range(150_000)) + "]\n")
    runner = tmp_path / "run.py"
    runner.write_text(BIG_FILE.format(limit=640 * 2**20))
    proc = subprocess.run([sys.executable, str(runner), str(big)], capture_output=True, text=True, env=ENV,
                          timeout=600)
    doc = json.loads(proc.stdout)
    assert doc["errors"] == [] and len(doc["findings"]) == 150, proc.stderr[-2000:]
    proc = subprocess.run([sys.executable, str(runner), str(literal)], capture_output=True, text=True, env=ENV,
                          timeout=600)
    doc = json.loads(proc.stdout)
    assert [e["kind"] for e in doc["errors"]] == ["too-large"] and "Traceback" not in proc.stderr
    assert "needs about" in doc["errors"][0]["message"]


# -- no silent pass: exit codes --------------------------------------------------------------------------

def _unused_code_prefix() -> str:
    """A code-shaped prefix no rule's code starts with (a fixed one breaks once a rule takes a code there)."""
    from auditor.rules import load_rules

    codes = {r.code for r in load_rules()}
    return next(p for p in (f"NPU{d:02d}" for d in range(99, 0, -1)) if not any(c.startswith(p) for c in codes))


@pytest.mark.parametrize("flag,value,hint", [("--select", _unused_code_prefix(), ""), ("--select", "bogus", ""),
                                             ("--ignore", "NPU0001", "NPU001"), ("--extend-select", "devce", "device")])
def test_unknown_selector_exits_2_with_nearest(tree, capsys, flag, value, hint):
    assert main([str(tree), flag, value, "--no-cache"]) == 2
    err = capsys.readouterr().err
    assert f"unknown rule selector {value!r}" in err and hint in err


def test_unknown_selector_in_config_and_suppression_comment(tmp_path, capsys):
    (tmp_path / "pyproject.toml").write_text('[tool.npu-audit]\nignore = ["NPU00l"]\n')
    (tmp_path / "t.py").write_text("import torch\nx = t.cuda()\n")
    assert main([str(tmp_path), "--no-cache"]) == 2
    assert "NPU00l" in capsys.readouterr().err
    (tmp_path / "pyproject.toml").write_text("[tool.npu-audit]\n")
    (tmp_path / "t.py").write_text("import torch\nx = t.cuda()  # npu-audit: ignore[NPU0011]\n")
    code, doc, err = run_json(capsys, str(tmp_path), "--no-cache")
    assert code == 2 and "NPU0011" in _text(doc["errors"][0]) and "NPU001" in _text(doc["errors"][0])


def test_unparseable_file_makes_the_run_fail(tmp_path, capsys):
    (tmp_path / "ok.py").write_text("x = 1\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    code, doc, err = run_json(capsys, str(tmp_path), "--no-cache")
    assert code == 2 and "could not be audited" in err
    assert main([str(tmp_path), "--no-cache", "--ignore-errors"]) == 0


def test_failed_trace_exits_2_with_message(tmp_path):
    (tmp_path / "bad.py").write_text("def audit_entry():\n    raise ValueError('no model here')\n")
    proc = cli(str(tmp_path / "bad.py"), "--trace", "--no-cache", timeout=240)
    assert proc.returncode == 2
    assert "--trace did not complete" in proc.stderr and "no model here" in proc.stderr
    assert "audit: trace: running your code" in proc.stderr    # progress while it runs


@pytest.mark.parametrize("setup,args,message", [
    (lambda d: (d / "pyproject.toml").write_text("tool = 5\n"), [], "must be a table"),
    (lambda d: (d / "pyproject.toml").write_text("[tool]\nnpu-audit = 5\n"), [], "must be a table"),
    (lambda d: None, ["--write-baseline", "missing/folder/b.json"], "cannot write the baseline"),
    (lambda d: None, ["--output", "/dev/full"], "cannot write /dev/full"),
    (lambda d: None, ["--output", "missing/report.json"], "cannot write"),
])
def test_bad_environment_is_a_message_and_exit_2(tmp_path, setup, args, message):
    (tmp_path / "t.py").write_text("import torch\nx = t.cuda()\n")
    setup(tmp_path)
    proc = cli(str(tmp_path / "t.py"), "--no-cache", *[a if not a.startswith("missing") else str(tmp_path / a)
                                                         for a in args])
    assert proc.returncode == 2 and message in proc.stderr and "Traceback" not in proc.stderr


def test_stdout_on_a_full_disk(tmp_path):
    (tmp_path / "t.py").write_text("import torch\nx = t.cuda()\n")
    with open("/dev/full", "w") as full:
        proc = subprocess.run([sys.executable, "-m", "auditor.cli", str(tmp_path), "--no-cache"],
                              stdout=full, stderr=subprocess.PIPE, text=True, env=ENV, timeout=60)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr and "cannot write" in proc.stderr


# -- conventions from ruff and flake8 ---------------------------------------------------------------------

def test_noqa_and_file_level_suppression(tmp_path, capsys):
    (tmp_path / "a.py").write_text("import torch\nx = t.cuda()  # noqa: NPU001\ny = t.cuda()  # noqa: E501\n"
                                   "import flash_attn  # noqa\n")
    (tmp_path / "b.py").write_text("# npu-audit: file-ignore[NPU001]\nimport torch\nx = t.cuda()\n"
                                   "torch.cuda.synchronize()\n")
    (tmp_path / "c.py").write_text("# npu-audit: file-ignore\nimport torch\nx = t.cuda()\n")
    code, doc, _ = run_json(capsys, str(tmp_path), "--no-cache", "--fail-on", "never")
    got = {(f["path"], f["line"], f["code"]) for f in doc["findings"]}
    assert ("a.py", 2, "NPU001") not in got and ("a.py", 3, "NPU001") in got
    assert any(p == "a.py" and line == 4 for p, line, _ in got)       # a bare noqa is the linter's
    assert {c for p, _, c in got if p == "b.py"} == {"NPU002"}
    assert not any(p == "c.py" for p, _, _ in got)


def test_gitignore_is_honoured_unless_turned_off(tmp_path, capsys):
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("generated/\n*_pb2.py\n")
    (tmp_path / "sub").mkdir()
    (tmp_path / "sub" / ".gitignore").write_text("local.py\n")
    for rel in ("keep.py", "generated/g.py", "x_pb2.py", "sub/local.py", "sub/kept.py"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text("import torch\nx = t.cuda()\n")
    paths = lambda *a: sorted({f["path"] for f in run_json(capsys, str(tmp_path), "--no-cache", *a)[1]["findings"]})
    assert paths() == ["keep.py", "sub/kept.py"]
    assert len(paths("--no-respect-gitignore")) == 5


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_file_git_tracks_is_audited_although_gitignore_lists_it(tmp_path, capsys):
    # git applies .gitignore to untracked files only: MAML-Pytorch's `.gitignore` lists `backup`, yet its two
    # committed files there are the repository's code (test124); an untracked file beside them stays ignored.
    # The repository's own core.fsmonitor command must never run (the audit runs no code of the repository).
    git = lambda *a: subprocess.run(["git", "-C", str(tmp_path), *a], check=True, capture_output=True)
    git("init", "-q")
    (tmp_path / ".gitignore").write_text("backup\n*.log.py\n")
    for rel in ("train.py", "backup/maml_old.py", "backup/notes/old.py", "run.log.py"):
        (tmp_path / rel).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / rel).write_text("import torch\nx = t.cuda()\n")
    git("add", "train.py", ".gitignore")
    git("add", "-f", "backup/maml_old.py")
    git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-qm", "init")
    (tmp_path / "backup" / "scratch.py").write_text("import torch\nx = t.cuda()\n")     # untracked, ignored
    marker = tmp_path.parent / f"{tmp_path.name}-fsmonitor-ran"
    git("config", "core.fsmonitor", f"touch {marker}")
    paths = lambda *a: sorted({f["path"] for f in run_json(capsys, str(tmp_path), "--no-cache", *a)[1]["findings"]})
    assert paths() == ["backup/maml_old.py", "train.py"]
    assert not marker.exists()
    assert paths("--no-respect-gitignore") == ["backup/maml_old.py", "backup/notes/old.py", "backup/scratch.py",
                                               "run.log.py", "train.py"]
    # a sub-folder given on its own is judged against the same repository
    assert sorted({f["path"] for f in run_json(capsys, str(tmp_path / "backup"), "--no-cache")[1]["findings"]}) == [
        "maml_old.py"]


def test_a_gitignore_line_pathspec_rejects_is_left_out_as_git_does(tmp_path, capsys):
    # lollms-webui's .gitignore holds `env\` (a Windows path): pathspec raises on it, git ignores the pattern
    (tmp_path / ".git").mkdir()
    (tmp_path / ".gitignore").write_text("env\\\nbuild/\n")
    for rel in ("env/a.py", "build/b.py", "train.py"):
        (tmp_path / rel).parent.mkdir(exist_ok=True)
        (tmp_path / rel).write_text("import torch\nx = t.cuda()\n")
    code, doc, _ = run_json(capsys, str(tmp_path), "--no-cache")
    assert sorted({f["path"] for f in doc["findings"]}) == ["env/a.py", "train.py"]


def test_no_path_audits_the_current_folder_and_paths_are_cwd_relative(tree, monkeypatch, capsys):
    monkeypatch.chdir(tree)
    code, doc, _ = run_json(capsys, "--no-cache")
    assert doc["summary"]["files_scanned"] == 32
    code, doc2, _ = run_json(capsys, "pkg", "--no-cache")
    assert {f["path"] for f in doc2["findings"]} <= {f["path"] for f in doc["findings"]}
    assert all(f["path"].startswith("pkg/") for f in doc2["findings"])


def test_baseline_fingerprints_do_not_depend_on_the_path_argument(tree, monkeypatch, capsys):
    (tree / "pyproject.toml").write_text("[tool.npu-audit]\n")
    monkeypatch.chdir(tree)
    prints = []
    for arg in (".", "pkg", str(tree / "pkg"), "pkg/m1.py"):
        _, doc, _ = run_json(capsys, arg, "--no-cache")
        prints.append({f["fingerprint"] for f in doc["findings"] if f["path"].endswith("pkg/m1.py")})
    monkeypatch.chdir(tree / "pkg")
    _, doc, _ = run_json(capsys, "m1.py", "--no-cache")
    prints.append({f["fingerprint"] for f in doc["findings"]})
    assert all(p == prints[0] and p for p in prints)


def test_per_file_ignores_are_relative_to_the_config_folder(tree, monkeypatch, capsys):
    (tree / "pyproject.toml").write_text('[tool.npu-audit.per-file-ignores]\n"pkg/m1.py" = ["NPU001"]\n')
    monkeypatch.chdir(tree / "pkg")
    _, doc, _ = run_json(capsys, ".", "--no-cache")
    assert "m1.py" not in {f["path"] for f in doc["findings"] if f["code"] == "NPU001"}
    assert "m2.py" in {f["path"] for f in doc["findings"]}


# -- Python 3.12+ syntax on the running Python ------------------------------------------------------------

NEW_SYNTAX = '''\
import torch

type Device = str


def to_dev[T](x: T) -> T:
    return x.cuda()


class Box[T]:
    def go(self, t):
        return t.to(f"{'cuda'}:0")


msg = f"{torch.cuda.current_device()} of {", ".join(["a", "b"])}"
multi = f"{
    torch.cuda.device_count()
}"
'''


def test_python_312_syntax_is_audited_not_a_syntax_error(tmp_path, capsys):
    (tmp_path / "new.py").write_text(NEW_SYNTAX)
    code, doc, _ = run_json(capsys, str(tmp_path), "--no-cache")
    assert doc["errors"] == []
    got = {(f["line"], f["symbol"]) for f in doc["findings"]}
    assert {(7, "cuda"), (15, "torch.cuda.current_device"), (17, "torch.cuda.device_count")} <= got
    (tmp_path / "bad.py").write_text("type X = \n")          # still a syntax error
    code, doc, _ = run_json(capsys, str(tmp_path / "bad.py"), "--no-cache")
    assert "syntax" in _text(doc["errors"][0]) and code == 2


# -- fix --write never writes where it should not -----------------------------------------------------------

def test_fix_write_safety(tmp_path):
    outside = tmp_path / "outside"
    tree = tmp_path / "tree"
    outside.mkdir()
    tree.mkdir()
    src = "import torch\nx = torch.zeros(1).cuda()\n"
    (outside / "target.py").write_text(src)
    (tree / "link.py").symlink_to(outside / "target.py")
    (tree / "ro.py").write_text(src)
    (tree / "ro.py").chmod(0o444)
    (tree / "hard.py").write_text(src)
    os.link(tree / "hard.py", outside / "hard_twin.py")
    (tree / "mode.py").write_text(src)
    (tree / "mode.py").chmod(0o751)
    proc = cli("fix", str(tree), "--write", "--unsafe-fixes")
    assert proc.returncode == 1 and "Traceback" not in proc.stderr
    assert (outside / "target.py").read_text() == src                     # not written through the link
    assert "outside the audited tree" in proc.stderr and "read-only" in proc.stderr
    assert (tree / "ro.py").read_text() == src
    assert (tree / "hard.py").read_text() != src                          # fixed, and the link kept:
    assert (outside / "hard_twin.py").read_text() == (tree / "hard.py").read_text()
    assert (tree / "hard.py").stat().st_ino == (outside / "hard_twin.py").stat().st_ino
    assert (tree / "mode.py").stat().st_mode & 0o7777 == 0o751 and (tree / "mode.py").read_text() != src


def test_comparison_with_user_input_is_an_unsafe_fix(tmp_path, capsys):
    (tmp_path / "launch.py").write_text('import sys\nif sys.argv[1] == "cuda":\n    pass\n'
                                        'if x.device.type == "cuda":\n    pass\n')
    code, doc, _ = run_json(capsys, str(tmp_path), "--no-cache", "--fail-on", "never")
    fixes = {f["line"]: f["fix"] for f in doc["findings"] if f["code"] == "NPU003"}
    assert fixes[2] == "unsafe"
    assert fixes.get(4, "safe") == "safe"
