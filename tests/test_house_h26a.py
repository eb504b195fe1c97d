"""h26a (session 26): house work with no behaviour change. Each test holds one reading on code shaped like the real
code it came from, and that the moved reading answers as the old one did."""
from __future__ import annotations

from auditor.backend_words import MEMBER_WORDS, backends_in_text, member_backend
from auditor.project.hits import cuda_member_siblings


def test_member_words_are_one_table():
    # the stage / profile words are a named subset of the one backend-word table: `gpu` reads as CUDA in code, but
    # names no member of a per-backend set of stages; `cpu`, `cann`, `intel` name members though no backend in code
    assert backends_in_text("gpu") == {"cuda"} and member_backend("gpu") is None
    assert [member_backend(w) for w in ("cuda", "nvidia", "cu121", "cpu", "cann", "intel", "metal", "nccl")] == \
        ["cuda", "cuda", "cuda", "cpu", "npu", "xpu", "mps", None]
    assert not backends_in_text("cpu") and not backends_in_text("cann")
    assert all(b != "cuda" for w, b in MEMBER_WORDS.items() if w not in ("cuda", "nvidia"))


def test_cuda_stage_siblings_as_before():
    # LocalAI-shaped stages: `builder-cuda` beside `builder-cpu`, `builder-intel`; a `builder-gpu` is no member, and a
    # CUDA stage whose siblings are only CUDA builds (`cu118` / `cu121`) keeps its findings
    names = ["builder-cuda", "builder-cpu", "builder-intel", "builder-gpu", "runtime"]
    assert cuda_member_siblings("builder-cuda", names) == ["builder-cpu", "builder-intel"]
    assert cuda_member_siblings("builder-cu121", ["builder-cu118", "builder-cu121"]) == []
    assert cuda_member_siblings("builder-gpu", names) == []
    assert cuda_member_siblings("nvidia", ["nvidia", "cann", "rocm"]) == ["cann", "rocm"]


# -- Liger-Kernel pins from the requirement readers' facts -----------------------------------------------------------

LIGER_ROPE = """\
    from liger_kernel.transformers import liger_rotary_pos_emb


    def apply_liger_rope(module):
        module.apply_rotary_pos_emb = liger_rotary_pos_emb
        return module
"""

# verl's setup.py (OpenManus-RL, TTRL): the pin sits in an extras list passed through a module-level name
VERL_SETUP = """\
    from setuptools import find_packages, setup

    install_requires = ["torch", "transformers"]
    GPU_REQUIRES = ["{liger}", "flash-attn"]
    extras_require = {{"gpu": GPU_REQUIRES}}

    setup(name="verl", packages=find_packages(), install_requires=install_requires, extras_require=extras_require)
"""


def _liger_tree(root, liger):
    from tests.static_snippets import write_tree
    return write_tree(root, {"setup.py": VERL_SETUP.format(liger=liger), "verl/kernel/liger.py": LIGER_ROPE})


def _liger_severities(run):
    from tests.static_snippets import line_of
    line = line_of(LIGER_ROPE, "module.apply_rotary_pos_emb =")
    return {(f.severity, (f.data or {}).get("context") or "") for r in run.results if r.path == "verl/kernel/liger.py"
            for f in r.findings if f.line == line}


def test_liger_pins_come_from_the_requirement_facts_warm_and_cold(tmp_path):
    from auditor.project.requirements import PINS_KEY
    from auditor.runner import run_static

    old = _liger_tree(tmp_path / "old", "liger-kernel==0.5.4")      # before the full Ascend backend: kept
    cache = tmp_path / "cache"
    cold = run_static([old], jobs=1, cache_dir=cache)
    setup = next(r for r in cold.results if r.path == "setup.py")
    assert setup.summary[PINS_KEY]["liger-kernel"] == ["==0.5.4"]     # (transformers' pins are kept too: tq42)
    assert ("warning", "") in _liger_severities(cold)
    warm = run_static([old], jobs=1, cache_dir=cache)
    assert warm.project_reads == 0 and _liger_severities(warm) == _liger_severities(cold)
    assert _liger_severities(run_static([_liger_tree(tmp_path / "new", "liger-kernel>=0.8.0")], jobs=1)) == {
        ("info", "liger-ascend")}
    # a requirements file's comment names no pin (the requirement reader skips comments), the requirement does
    from tests.static_snippets import write_tree
    root = write_tree(tmp_path / "txt", {"requirements.txt": "torch\n# liger-kernel==0.5.4 was too old\nliger_kernel\n",
                                         "verl/kernel/liger.py": LIGER_ROPE})
    run = run_static([root], jobs=1)
    assert next(r for r in run.results if r.path == "requirements.txt").summary[PINS_KEY] == {"liger-kernel": [""]}
    assert _liger_severities(run) == {("info", "liger-ascend")}


# -- a called script's text: one read, its readings shared ------------------------------------------------------------

def test_called_script_is_read_once_for_its_three_readings(tmp_path, monkeypatch):
    # LLMxMapReduce's start_*.sh callers (three calls of one script with and without its options) beside dart-math's
    # `source utils/init.sh` + `load_cuda 12.3`: each script's text is read once and its readings shared
    from pathlib import Path

    from auditor.project.called_scripts import ScriptText
    from auditor.runner import run_static
    from tests.static_snippets import write_tree
    from tests.test_project_t20b import _GUNICORN_SH

    root = write_tree(tmp_path / "tree", {
        "URLs/start_gunicorn.sh": _GUNICORN_SH,
        "URLs/scripts/start_all.sh": "bash URLs/start_gunicorn.sh --infer-type transformers\n"
                                     "bash URLs/start_gunicorn.sh --cuda-visible-devices 0\n"
                                     "bash URLs/start_gunicorn.sh\n",
        "utils/init.sh": 'load_cuda() {\n    local ver="$1"\n    module load "cuda-${ver}"\n}\n',
        "run.sh": "source utils/init.sh\nload_cuda 12.3\npython -c 'print(1)'\n"})
    reads: dict[str, int] = {}
    read_bytes = Path.read_bytes

    def counted(path):
        reads[path.name] = reads.get(path.name, 0) + 1
        return read_bytes(path)
    run = run_static([root], jobs=1)
    monkeypatch.setattr(Path, "read_bytes", counted)
    again = run_static([root], jobs=1)
    assert [r.findings for r in again.results] == [r.findings for r in run.results]
    assert {f.line for r in run.results if r.path == "URLs/scripts/start_all.sh" for f in r.findings} == {1, 2, 3}
    assert any(f.symbol and f.line == 2 for r in run.results if r.path == "run.sh" for f in r.findings)
    assert reads.get("start_gunicorn.sh", 0) <= 1 and reads.get("init.sh", 0) <= 1
    script = ScriptText(_GUNICORN_SH.replace("\n    ", "\n"))
    assert script.branches["INFER_TYPE"][0] == ["--infer-type"] and len(script.assigned["INFER_TYPE"]) == 2
    assert ScriptText("source a.sh\nx\n").sources_at(1) and not ScriptText("x\n").sources_at(5)
