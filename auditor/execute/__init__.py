"""Execute mode: run one real training step and judge it module by module (`audit FILE --execute`).

On a machine with torch_npu and an NPU the candidate runs there; otherwise it runs on the CPU under
autocast, which still tells, before the port, which modules do not survive bf16 or fp16. The user's code
runs in a child process (auditor.sandbox) with a time limit. See docs/execute.md.
"""
from __future__ import annotations

from pathlib import Path
from typing import Any

from auditor.device import DeviceError, select_device
from auditor.execute.choices import describe as describe_flip
from auditor.execute.numerics import ERROR, PASS, VERDICT_RANK, WARNING, underflows, worst
from auditor.entry import definition_line
from auditor.findings import Finding
from auditor.findings import FileError
from auditor.target import Target

__all__ = ["execute_findings", "ExecuteUsageError", "DeviceError", "default_amp"]

AMP_CHOICES = ("bf16", "fp16")
# DESIGN.md §4: the Atlas training series (910A) and 310P have no bf16, so fp16 is what runs there.
NO_BF16_PRODUCTS = ("910a", "310p")
HARDWARE_NOTE = ("The NPU path (candidate on torch_npu, CPU-fallback capture, device memory, step time) has "
                 "not been run on Ascend hardware by this project's tests.")


class ExecuteUsageError(ValueError):
    """A bad --amp value; the CLI prints the message and exits 2 (as for DeviceError)."""


def default_amp(target: Target | None) -> str:
    return "fp16" if target is not None and target.product in NO_BF16_PRODUCTS else "bf16"


def execute_findings(source: Path | None, *, root: Path, entry: str | None, hf_config: Path | None,
                     amp: str | None, timeout: float, device: str | None,
                     target: Target) -> tuple[list[Finding], list[FileError], dict]:
    """Run the step in a child process; return findings, errors, and the per-module table for the report.

    Raises DeviceError (--device npu without torch_npu or without an NPU) and ExecuteUsageError (--amp);
    the CLI turns both into exit code 2. Everything that goes wrong in user code becomes a FileError.
    """
    from auditor.execute.step import MAX_PARAMS, run_execute
    from auditor.sandbox import SandboxError, run_in_child

    chosen_amp = (amp or default_amp(target)).lower()
    if chosen_amp not in AMP_CHOICES:
        raise ExecuteUsageError(f"--amp {amp!r}: choose one of {', '.join(AMP_CHOICES)}")
    where = _Locator(source, root, entry, hf_config)
    selected = select_device(device)
    try:
        result = run_in_child(run_execute, {
            "source": str(source) if source is not None else None, "entry": entry,
            "hf_config": str(hf_config) if hf_config is not None else None,
            "amp": chosen_amp, "device": selected, "max_params": MAX_PARAMS,
        }, timeout, label="execute")
    except SandboxError as exc:
        line = exc.line[1] if exc.line and where.owns(exc.line[0]) else where.entry_line
        message = exc.message if exc.kind != "user-exception" or not exc.user_traceback else \
            f"{exc.message}\n{exc.user_traceback}"
        error = FileError(where.path, "execute", f"execute mode stopped: {message}", line)
        return [], [error], {"title": "Execute mode", "rows": [], "error": error.message,
                             "hardware_note": HARDWARE_NOTE}
    return build_findings(result, where, target)


class _Locator:
    """Turns files and classes from the child into report paths: relative to root, else the entry."""

    def __init__(self, source: Path | None, root: Path, entry: str | None, hf_config: Path | None):
        self.root = Path(root).resolve()
        anchor = Path(hf_config) if hf_config is not None else Path(source) if source is not None else None
        self.path = self.relative(anchor) if anchor is not None else "<entry>"
        self.entry_line = 1
        if source is not None and hf_config is None and Path(source).is_file():
            self.entry_line = definition_line(Path(source), (entry or "audit_entry").split(":")[-1]) or 1

    def relative(self, path: Path | str) -> str:
        resolved = Path(path).resolve()
        try:
            return resolved.relative_to(self.root).as_posix()
        except ValueError:
            return Path(path).as_posix()

    def owns(self, file: str | None) -> bool:
        if not file:
            return False
        try:
            Path(file).resolve().relative_to(self.root)
            return True
        except ValueError:
            return False

    def locate(self, file: str | None, line: int | None) -> tuple[str, int]:
        """A module's class definition when it is the user's code (under root), else the entry line."""
        if file and line and self.owns(file) and "site-packages" not in file:
            return self.relative(file), line
        return self.path, self.entry_line


# --- findings and the per-module table ------------------------------------------------------------

def _metric(d: dict | None, key: str) -> Any:
    return d.get(key) if d else None


def _label(module: dict) -> str:
    return f"`{module['name'] or '(model)'}` ({module['type']})"


def _finding(where: _Locator, module: dict | None, *, code: str, name: str, category: str, severity: str,
             effort: str, message: str, substitution: str | None, symbol: str, data: dict) -> Finding:
    path, line = where.locate(module.get("file"), module.get("line")) if module else (where.path, where.entry_line)
    return Finding(code=code, name=name, category=category, severity=severity, effort=effort, path=path,
                   line=line, col=1, end_line=line, end_col=1, message=message, substitution=substitution,
                   fix="none", source="execute", symbol=symbol, data=data)


def build_findings(result: dict, where: _Locator, target: Target) -> tuple[list[Finding], list[FileError], dict]:
    amp, golden = result["amp"], result["golden_dtype"]
    findings: list[Finding] = []
    modules = result["modules"]
    keep_fp32 = ("keep this module in fp32: wrap its forward in torch.autocast(device_type='npu', "
                 "enabled=False) and call it on inputs.float(), or rewrite it in a numerically stable form")

    failing = [m for m in modules if m["own"] and m["own"]["verdict"] != PASS]
    culprits, drifting = split_failures(modules)
    for m in culprits:
        own = m["own"]
        overflow = own["nonfinite"] > 0
        severity = ERROR if own["verdict"] == ERROR else WARNING
        flip = m.get("flip") or _descendant_flip(m, modules)
        what = (f"overflows in {amp}: {own['nonfinite']} of {own['elements']} output values are inf/nan where "
                f"{golden} is finite" if overflow else f"loses accuracy in {amp} on its own: {own['reason']}")
        if flip and not overflow:
            what += f"; the cause is a discrete choice: {describe_flip(flip, amp, flip.get('module', m['name']))}"
        cosine = own["cosine"]
        fix = (("use bf16 (its range is fp32's) or " if overflow and amp == "fp16" else "") + keep_fp32)
        if flip and not overflow:
            fix = ("compute the scores that pick (router logits, the argmax input) in fp32: e.g. "
                   "F.linear(x.float(), gate.weight.float()) under torch.autocast(device_type='npu', enabled=False)"
                   "; a few flipped ties are expected in low precision, so compare loss curves before rewriting more")
        findings.append(_finding(
            where, m, code="NPU281" if overflow else "NPU280",
            name="low-precision-overflow" if overflow else "low-precision-module-error",
            category="precision", severity=severity, effort="medium",
            message=f"{_label(m)} {what}"
                    + (f" (cosine {cosine:.4f})" if cosine is not None and not overflow
                       and not own["reason"].startswith("cosine") else "")
                    + f", run on the same inputs as the {golden} golden.",
            substitution=fix,
            symbol=m["name"] or m["type"], data={"own": own, "output": m["output"], "amp": amp,
                                                 **({"flip": flip} if flip else {})}))

    broken_forward = any(m["own"]["verdict"] == ERROR for m in failing)
    grad_warnings = []
    for m in modules:
        grad = m["grad"]
        if not grad or grad["verdict"] == PASS:
            continue
        underflow = underflows(grad) and not grad["nonfinite"]
        if grad["verdict"] == WARNING and not underflow:
            grad_warnings.append(m)
            continue
        if broken_forward:
            continue  # a broken forward already explains broken gradients downstream
        findings.append(_finding(
            where, m, code="NPU282", name="low-precision-gradient-failure", category="precision",
            severity=grad["verdict"], effort="low",
            message=f"the gradients of {_label(m)}'s parameters fail in {amp}: {grad['reason']}.",
            substitution=("scale the loss: torch.npu.amp.GradScaler() (torch.amp.GradScaler('npu')) around "
                          "backward and optimizer.step()" if underflow else
                          "scale the loss with a dynamic GradScaler, or train in bf16"),
            symbol=m["name"] or m["type"], data={"grad": grad, "amp": amp}))

    root = next((m for m in modules if m["name"] == ""), None)
    root_drifts = bool(root and root["output"] and root["output"]["verdict"] != PASS)
    if (root_drifts or drifting) and not culprits:
        out = root["output"] if root is not None and root_drifts else drifting[0]["own"]
        composite = "".join(f"; {_label(m)} drifts {m['own']['err_in_rtol']:.0f}x the tolerance across its "
                            f"sub-modules, each of which passes alone" for m in drifting[:3]
                            if m["own"]["err_in_rtol"] is not None)
        findings.append(_finding(
            where, root, code="NPU283", name="low-precision-accumulated-drift", category="precision",
            severity=WARNING, effort="medium",
            message=f"the model's output drifts in {amp} although no single module fails on its own: "
                    f"{out['reason']}{composite}; rounding accumulates through the depth of the model.",
            substitution="keep the residual stream and normalisation in fp32, or compare a few training "
                         "steps' loss curves in fp32 and in " + amp,
            symbol=root["type"] if root else "model",
            data={"output": out, "amp": amp, "drifting_modules": [m["name"] for m in drifting]}))
    if grad_warnings:
        worst_grad = min(grad_warnings, key=lambda m: m["grad"]["cosine"] if m["grad"]["cosine"] is not None else 1.0)
        findings.append(_finding(
            where, None, code="NPU284", name="low-precision-gradient-drift", category="precision",
            severity="info", effort="low",
            message=f"the parameter gradients of {len(grad_warnings)} module(s) differ from the {golden} golden "
                    f"by more than msprobe's bar in {amp} (worst: {_label(worst_grad)}, "
                    f"{worst_grad['grad']['reason']}); one step at the initial weights is often badly "
                    f"conditioned, so compare loss curves before changing the model.",
            substitution=None, symbol="gradients",
            data={"modules": [m["name"] for m in grad_warnings], "amp": amp}))

    by_name = {m["name"]: m for m in modules}
    for fb in result.get("fallbacks", []):
        at = by_name.get(fb.get("module") or "")
        findings.append(_finding(
            where, at, code="NPU580", name="npu-cpu-fallback", category="operator", severity=WARNING,
            effort="medium",
            message=f"{fb['op']} fell back to the CPU on the NPU ({fb['count']} warning(s)"
                    + (f", first in {_label(at)}" if at else "") + "): every call copies its inputs to the host.",
            substitution="rewrite the call with operators torch_npu implements, or upgrade torch_npu/CANN; "
                         "TORCH_NPU_FALLBACK_CPU_DISABLE=1 turns fallbacks into errors to find them all",
            symbol=fb["op"], data=fb))

    section = build_section(result, where, target)
    return findings, [], section


def split_failures(modules: list[dict]) -> tuple[list[dict], list[dict]]:
    """Modules whose own error fails, split into culprits and drift.

    A module's "own" run still chains all of its sub-modules, so a block of twenty layers that each pass
    alone can fail as a whole by accumulating their rounding. At every level: a module with a failing
    sub-module inherits that failure (the deepest failing modules are the culprits, reported once); a
    module whose measured sub-modules all pass is a culprit only when it overflows (inf/nan is an error
    whatever its cause), and otherwise it is accumulated drift (NPU283, a warning); a module without
    measured sub-modules fails on its own arithmetic.
    """
    measured = [m for m in modules if m["own"]]
    culprits, drifting = [], []
    for m in measured:
        if m["own"]["verdict"] == PASS:
            continue
        prefix = f"{m['name']}." if m["name"] else ""
        below = [d for d in measured if d is not m and d["name"].startswith(prefix)]
        if any(d["own"]["verdict"] != PASS for d in below):
            continue  # inherited from a failing sub-module, which is reported itself
        if below and not m["own"]["nonfinite"] and not m.get("flip"):
            drifting.append(m)
        else:
            culprits.append(m)
    # the outermost drifting modules say the most; nested ones are part of them
    drifting = [m for m in drifting if not any(o is not m and m["name"].startswith(f"{o['name']}.")
                                               for o in drifting)]
    return culprits, drifting


def _descendant_flip(m: dict, modules: list[dict]) -> dict | None:
    """The largest discrete-choice flip in the module or below it, with the module that made it."""
    prefix = f"{m['name']}." if m["name"] else ""
    flips = [{**d["flip"], "module": d["name"]} for d in modules
             if d.get("flip") and (d is m or d["name"].startswith(prefix))]
    return max(flips, key=lambda f: (f["share"], -len(f["module"])), default=None)


def _row(m: dict, where: _Locator) -> dict:
    path, line = where.locate(m.get("file"), m.get("line"))
    own, out, grad = m["own"], m["output"], m["grad"]
    verdicts = [d["verdict"] for d in (own, out, grad) if d]
    return {
        "module": m["name"] or "(model)", "type": m["type"], "path": path, "line": line, "calls": m["calls"],
        "verdict": worst(*verdicts) if verdicts else "n/a",
        "own": _metric(own, "verdict"), "own_error_x_tol": _metric(own, "err_in_rtol"),
        "output": _metric(out, "verdict"), "output_error_x_tol": _metric(out, "err_in_rtol"),
        "output_cosine": _metric(out, "cosine"),
        "grad": _metric(grad, "verdict"), "grad_cosine": _metric(grad, "cosine"),
        "reason": next((d["reason"] for d in (own, grad, out) if d and d["verdict"] != PASS), ""),
        "notes": m["notes"],
    }


def _sort_key(row: dict) -> tuple:
    rank = lambda v: VERDICT_RANK.get(v or PASS, 0)  # "inherited" ranks with pass
    size = lambda x: x if isinstance(x, (int, float)) and x == x else 0.0
    return (-rank(row["own"]), -rank(row["verdict"]), -size(row["own_error_x_tol"]),
            -size(row["output_error_x_tol"]), row["module"])


def build_section(result: dict, where: _Locator, target: Target) -> dict:
    culprits, drifting = split_failures(result["modules"])
    inherited = {m["name"] for m in result["modules"] if m["own"] and m["own"]["verdict"] != PASS} - \
        {m["name"] for m in culprits}
    rows = [_row(m, where) for m in result["modules"] if m["calls"] or m["grad"]]
    for row in rows:
        name = "" if row["module"] == "(model)" else row["module"]
        if name in inherited and row["own"] != PASS:
            # the error of its sub-modules (reported there) or drift accumulated across them: not its own
            # its sub-modules' error (reported there) or their rounding accumulated: not its own arithmetic
            drift = any(d["name"] == name for d in drifting) or not any(
                c["name"].startswith(f"{name}." if name else "") for c in culprits)
            row["own"] = WARNING if drift else "inherited"
            row["verdict"] = worst(WARNING, row["grad"]) if row["grad"] else WARNING
            row["reason"] = ("accumulated drift across sub-modules that each pass alone: " if drift else
                             "inherited from a failing sub-module: ") + row["reason"]
    rows.sort(key=_sort_key)
    notes = [] if result["device"] != "cpu" else [
        f"Candidate: the CPU under torch.autocast({result['amp']}); an NPU runs some operators with other "
        "internal precision, so this predicts, it does not replace, a check on the device."]
    if result["amp"] == "bf16" and target is not None and target.product in NO_BF16_PRODUCTS:
        notes.append(f"{target.describe()} has no bf16; use --amp fp16 to check what will run there.")
    return {
        "title": f"Execute: {result['amp']} on {result['device']} vs {result['golden_dtype']} golden "
                 f"(one training step of {result['label'] or 'the model'})",
        "device": result["device"], "amp": result["amp"], "golden_dtype": result["golden_dtype"],
        "parameters": result["parameters"], "loss": result["loss"],
        "update": {k: result["update"][k] for k in ("verdict", "reason", "cosine", "rel_err_norm")},
        "timings_s": result["timings_s"], "peak_memory_bytes": result["peak_memory_bytes"],
        "step_time_s": result["step_time_s"], "fallbacks": result["fallbacks"],
        "counts": {v: sum(1 for r in rows if r["verdict"] == v) for v in (ERROR, WARNING, PASS)},
        "notes": notes, "hardware_note": HARDWARE_NOTE,
        "rows": rows,
    }
