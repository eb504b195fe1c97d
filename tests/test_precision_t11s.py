"""t11s (issue 11, session 12; tuned on heldout11): policy (f) for defaults every caller overrides, host values
reached through data flow (NPU703), and the other leftovers of t11q's report. Realistic code modelled on the
heldout11 trees (vllm-omni's stage input processors, xllm's tilelang kernel builders)."""
from __future__ import annotations

from auditor.runner import run_static
from static_snippets import write_tree

PROCESSORS = '''\
    import functools

    import torch


    def _compute_talker_prompt_ids_length(info, device: torch.device | str = "cuda") -> int:
        ids = torch.tensor(info["prompt_ids"], device=device)
        return int(ids.numel())


    def build_decode_kernel(dim: int, dtype_str: str = "bfloat16", block: int = 64):
        return {"dim": dim, "dtype": dtype_str, "block": block}


    def load_for_inference(path, device="cuda"):
        return torch.load(path, map_location=device)


    @functools.lru_cache(maxsize=None)
    def cached_workspace(size, device="cuda"):
        return torch.empty(size, device=device)


    def thinker2talker(infos, current_platform):
        device = torch.device(current_platform.device_type)
        lengths = [_compute_talker_prompt_ids_length(info, device=device) for info in infos]
        workspace = cached_workspace(1024, device)
        return lengths, build_decode_kernel(128, "float16"), workspace
    '''

LAUNCHER = '''\
    from pkg.processors import load_for_inference


    def main(path):
        return load_for_inference(path)
    '''


def _line(src: str, text: str) -> int:
    return next(i + 1 for i, line in enumerate(src.splitlines()) if text in line)


def test_policy_f_defaults_every_caller_overrides_are_info_with_why(tmp_path):
    root = write_tree(tmp_path / "t", {"pkg/__init__.py": "", "pkg/processors.py": PROCESSORS,
                                       "pkg/serve.py": LAUNCHER})
    run = run_static([root], jobs=1)
    r = next(r for r in run.results if r.path == "pkg/processors.py")
    by_line: dict[int, list] = {}
    for f in r.findings:
        if f.category in ("device", "precision"):
            by_line.setdefault(f.line, []).append(f)
    overridden = [_line(PROCESSORS, "def _compute_talker"), _line(PROCESSORS, "def build_decode_kernel")]
    for line in overridden:
        assert by_line.get(line), (line, r.findings)          # reported, never dropped (recall policy item 7)
        for f in by_line[line]:
            assert f.severity == "info" and f.data.get("context") == "overridden-default", f
            assert "every caller in this tree passes" in f.message and "callers outside this tree" in f.message
    # a caller lets the default through: it applies in this tree, so it keeps its own severity
    let_through = by_line[_line(PROCESSORS, "def load_for_inference")]
    assert any(f.severity == "error" for f in let_through), let_through
    assert not any(f.data.get("context") == "overridden-default" for f in let_through)
    # a decorated function may be wrapped or registered: unknown callers, its default keeps its severity
    cached = by_line[_line(PROCESSORS, "def cached_workspace")]
    assert any(f.severity == "error" for f in cached), cached


def test_policy_f_public_entry_point_keeps_its_severity(tmp_path):
    entry = '''\
        import torch


        def run_training(model, device: str = "cuda"):
            return model.to(device)
        '''
    root = write_tree(tmp_path / "e", {"pkg/__init__.py": "", "pkg/train.py": entry,
                                       "tests/test_train.py": "from pkg.train import run_training\n\n\n"
                                       "def test_run():\n    run_training(None, device='cpu')\n"})
    run = run_static([root], jobs=1)
    r = next(r for r in run.results if r.path == "pkg/train.py")
    found = [f for f in r.findings if f.line == 4 and f.category == "device"]
    assert found and all(f.severity == "error" and f.data.get("context") != "overridden-default" for f in found)
