"""The static audit of a tree: discovery, a process pool over files, the result cache, and the merge."""
from __future__ import annotations

import hashlib
import re
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field, replace
from functools import lru_cache
from pathlib import Path
from typing import Any, Callable

from auditor.cache import ResultCache, engine_key
from auditor.discover import SourceError, discover, read_source
from auditor.findings import Finding
from auditor.findings import FileError
from auditor.rules import load_rules
from auditor.static.engine import MAX_FILE_BYTES, FileResult, StaticEngine
from auditor.project.tree_calls import apply_tree_calls
from auditor.static.backend_files import apply_backend_files, drop_test_performance_hints, drop_unread_cudnn_vars
from auditor.static.member_includes import apply_member_includes
from auditor.static.cpu_bindings import apply_cpu_bindings
from auditor.static.own_env_switches import apply_own_env_switches
from auditor.static.env_readbacks import apply_env_readbacks
from auditor.static.release_members import apply_release_members
from auditor.static.format_members import apply_format_members
from auditor.static.chosen_members import apply_chosen_members, apply_registered_members
from auditor.static.platform_builds import apply_platform_builds
from auditor.static.tolerated_builds import apply_tolerated_builds
from auditor.static.platform_predicates import apply_platform_predicates
from auditor.static.class_twins import apply_class_twins
from auditor.static.ci_jobs import apply_colab_notebooks, apply_cuda_ci_jobs
from auditor.static.sparse_attention_use import lower_unbuilt_sparse_attention
from auditor.static.switch_fed_settings import drop_switch_fed_settings
from auditor.static.unread_fields import drop_unread_attention_fields
from auditor.static.call_defaults import drop_overridden_defaults, lower_off_autocasts, \
    lower_forwarded_flags, lower_self_flag_branches, lower_unset_attribute_branches, lower_unswitched_flags
from auditor.static.unreached_defs import apply_unreached_defs, lower_unread_attributes, lower_upstream_module_copies
from auditor.static.example_helpers import lower_unnamed_example_helpers
from auditor.static.stale_keywords import lower_stale_keywords
from auditor.static.caller_gates import lower_gated_callees
from auditor.static.crossfile import drop_ascend_flash_modules, propagate
from auditor.static.neutral_uses import drop_handled_parallel_type_tests, lower_config_imports, \
    lower_disabled_autocasts
from auditor.static.device_shims import apply_device_shims
from auditor.static.other_npu import apply_other_npu
from auditor.static.vendor_packages import apply_vendor_packages
from auditor.static.declared_vendor import apply_declared_vendor
from auditor.static.export_compile import apply_export_libraries
from auditor.static.liger_ascend import apply_liger_ascend
from auditor.static.mmcv_npu_pins import apply_mmcv_npu_pins
from auditor.static.transformers_npu_release import apply_transformers_npu_release
from auditor.static.vendor_dispatch import apply_vendor_dispatch_tree
from auditor.static.cuda_helpers import drop_tree_cuda_helpers
from auditor.static.backends import apply_ascend_project, apply_other_backend_files, apply_transfer_packages
from auditor.static.frameworks import apply_other_frameworks
from auditor.static.imported_gates import apply_imported_gates
from auditor.static.project_imports import ProjectImports
from auditor.static.guarded_modules import apply_guarded_modules
from auditor.static.npu_native import apply_ascend_named_project, apply_ascend_subpackages, apply_hydra_configs
from auditor.static.shim_graph import (apply_ascend_scripts, apply_shim_graph, apply_shim_twins,
                                      drop_quiet_debug_values)
from auditor.static.firstparty import (drop_first_party, drop_python_module_reads, drop_python_named, ffi_wrapper_names,
                                      first_party_packages, python_module_files, python_module_names)
from auditor.static.ported import drop_notes_in_ascend_tree
from auditor.static.opnamespaces import (drop_own_ops, literal_namespaces, op_namespaces_named, python_defined_ops,
                                         registered_namespaces)

# Below this many files a pool costs more to start than it saves.
_POOL_MIN_FILES = 24
_CHUNK = 16


@dataclass
class StaticRun:
    root: Path
    results: list[FileResult] = field(default_factory=list)
    errors: list[FileError] = field(default_factory=list)
    cached_files: int = 0
    project_reads: int = 0          # files the project passes read again (0 on a warm run with nothing changed)
    duration_s: float = 0.0


# -- worker side ---------------------------------------------------------------------------------

_ENGINE: StaticEngine | None = None


@lru_cache(maxsize=1)
def _unreported_op_namespaces() -> frozenset[str]:
    """The torch.ops namespaces the custom-op rule (NPU380) does not report (`!torch.ops.npu`: PyTorch's and
    torch_npu's own)."""
    out = set()
    for rule in load_rules():
        if rule.name == "custom-torch-ops":
            for pattern in rule.match.get("qualname", ()):
                if pattern.startswith("!torch.ops.") and pattern.count(".") == 2:
                    out.add(pattern.rsplit(".", 1)[1])
    return frozenset(out)


def _init_worker(product: str, coverage_apis: dict[str, dict] | None, max_bytes: int) -> None:
    global _ENGINE
    from auditor.procs import set_parent_death_signal

    set_parent_death_signal()     # a killed `audit` takes its workers with it (Linux)
    _ENGINE = StaticEngine(load_rules(), product=product, coverage_apis=coverage_apis, max_bytes=max_bytes)


def _analyze_one(engine: StaticEngine, path: str, rel: str) -> tuple[FileResult, tuple[int, int, str] | None]:
    """One file: read safely (regular files only, at most max_bytes), then analyse. The stamp, for the
    cache, is None when nothing was analysed."""
    try:
        data, st = read_source(Path(path), engine.max_bytes)
    except SourceError as exc:
        return FileResult(rel, error=FileError(rel, exc.kind, exc.message)), None
    except OSError as exc:
        return FileResult(rel, error=FileError(rel, "unreadable", exc.strerror or str(exc))), None
    stamp = (st.st_size, st.st_mtime_ns, hashlib.sha1(data).hexdigest())
    result = engine.analyze_bytes(data, rel)
    if result.error is None and (b"npu-audit" in data or _NOQA_BYTES.search(data)):
        result.error = _unknown_suppression(data, rel)
    return result, stamp


_NOQA_BYTES = re.compile(rb"(?i)#\s*noqa")


@lru_cache(maxsize=1)
def _known_codes() -> tuple[str, ...]:
    return tuple(r.code for r in load_rules())


def _unknown_suppression(data: bytes, rel: str) -> FileError | None:
    """A suppression comment naming a code no rule has (a typo silences nothing): a file error."""
    from auditor.config import nearest_selectors
    from auditor.suppress import directive_codes

    codes = _known_codes()
    for line, code, form in directive_codes(data.decode("utf-8", errors="replace")):
        if not any(c.startswith(code) for c in codes):
            near = nearest_selectors(code, load_rules())
            hint = f" (did you mean {', '.join(near)}?)" if near else ""
            return FileError(rel, "suppression", f"`{form}` names {code}, which is no rule code{hint}", line)
    return None


def _analyze_chunk(chunk: list[tuple[str, str]]):
    assert _ENGINE is not None
    return [(path, *_analyze_one(_ENGINE, path, rel)) for path, rel in chunk]


# -- parent side ---------------------------------------------------------------------------------

def worker_count(jobs: int | None, note: Callable[[str], None] | None = None) -> int:
    """--jobs, capped at the CPUs this process may use (more workers only cost memory)."""
    from auditor.procs import usable_cpus

    cpus = usable_cpus()
    if not jobs or jobs < 1:
        return cpus
    if jobs > cpus and note is not None:
        note(f"--jobs {jobs} is more than the {cpus} CPU{'s' if cpus != 1 else ''} available; using {cpus}")
    return min(jobs, cpus)


def _stop_pool(pool: ProcessPoolExecutor) -> None:
    processes = list((getattr(pool, "_processes", None) or {}).values())
    for proc in processes:
        try:
            proc.kill()
        except (OSError, ValueError):
            pass
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in processes:
        try:
            proc.join(2)
        except (OSError, ValueError, AssertionError):
            pass


def _to_payload(result: FileResult) -> dict[str, Any]:
    return {
        "findings": [f.to_dict() for f in result.findings],
        "error": result.error.to_dict() if result.error else None,
        "lines": result.lines,
        "suppressed": result.suppressed,
        "summary": result.summary,
    }


def _from_payload(rel: str, entry: dict[str, Any]) -> FileResult:
    findings = [Finding.from_dict({**d, "path": rel}) for d in entry["findings"]]
    err = entry.get("error")
    error = FileError(**{**err, "path": rel}) if err else None
    summary = entry.get("summary")
    return FileResult(rel, findings=findings, error=error, lines=entry["lines"], suppressed=entry["suppressed"],
                      summary=summary if isinstance(summary, dict) else None)


def _audited_folder(paths: list[Path], display_root: Path) -> str:
    """The one folder an audit was given, relative to the folder report paths are relative to (`repo` for `audit repo`
    run from its parent; "" when the audit runs from the folder itself, or was given files or several folders)."""
    if len(paths) != 1 or not paths[0].is_dir():
        return ""
    given = paths[0].resolve()
    try:
        prefix = given.relative_to(display_root.resolve()).as_posix()
    except ValueError:
        return ""
    return "" if prefix == "." else prefix


def run_static(
    paths: list[Path],
    *,
    product: str = "a2",
    coverage_apis: dict[str, dict] | None = None,
    cache_key_parts: tuple[str, ...] = (),
    exclude: tuple[str, ...] = (),
    respect_gitignore: bool = True,
    jobs: int | None = None,
    cache_dir: Path | None = None,
    max_bytes: int = MAX_FILE_BYTES,
    progress: Callable[[int, int], None] | None = None,
    note: Callable[[str], None] | None = None,
) -> StaticRun:
    start = time.perf_counter()
    found = discover(paths, exclude=exclude, respect_gitignore=respect_gitignore)
    run = StaticRun(root=found.root, errors=list(found.errors))
    # the tree passes read paths from the audited folder's root (a root `scripts/` folder, a package's import path),
    # whatever folder the audit runs from: report paths stay relative to the current folder (ruff's habit)
    prefix = _audited_folder(paths, found.root)
    if prefix:
        found.root = found.root / prefix
        found.files = [(path, rel[len(prefix) + 1:]) for path, rel in found.files]
    cache = None
    if cache_dir:
        # everything the engine is given is in the key (selection is applied after the cache)
        cache = ResultCache(cache_dir, engine_key(product, max_bytes, coverage_apis, *cache_key_parts))

    todo: list[tuple[str, str]] = []
    for path, rel in found.files:
        entry = cache.get(path, max_bytes) if cache else None
        result = None
        if entry is not None:
            try:
                result = _from_payload(rel, entry)
            except (TypeError, ValueError, KeyError):     # a damaged entry is a miss
                if cache is not None:
                    cache.drop(path)
        if result is not None:
            run.results.append(result)
            run.cached_files += 1
        else:
            todo.append((str(path), rel))
    total = len(found.files)
    done = run.cached_files
    if progress:
        progress(done, total)

    def collect(items) -> None:
        nonlocal done
        for path, result, stamp in items:
            run.results.append(result)
            if cache is not None and stamp is not None:
                cache.put(Path(path), stamp, _to_payload(result))
        done += len(items)
        if progress:
            progress(done, total)

    workers = worker_count(jobs, note)
    if workers > 1 and len(todo) >= _POOL_MIN_FILES:
        chunks = [todo[i:i + _CHUNK] for i in range(0, len(todo), _CHUNK)]
        pool = ProcessPoolExecutor(max_workers=min(workers, len(chunks)), initializer=_init_worker,
                                   initargs=(product, coverage_apis, max_bytes))
        try:
            for items in pool.map(_analyze_chunk, chunks):
                collect(items)
        except BaseException:
            _stop_pool(pool)       # Ctrl-C, SIGTERM, a broken worker: no worker outlives the run
            raise
        pool.shutdown(wait=True)
    elif todo:      # (a warm run with every file cached builds no engine)
        engine = StaticEngine(load_rules(), product=product, coverage_apis=coverage_apis, max_bytes=max_bytes)
        for name, rel in todo:
            collect([(name, *_analyze_one(engine, name, rel))])

    # `make train_gpt2cu` where the tree's Makefile runs nvcc, `cmake -B build` of a CUDA CMakeLists.txt,
    # `pip install -e ".[compile]"` of a CUDA-only extra, `deepspeed llava/train/train_mem.py` launching a
    # FlashAttention wrapper (after the cache: they depend on other files), before the passes that make findings in
    # other-backend files, NPU twins and CUDA CI jobs quieter
    setup_facts = apply_cpu_bindings(run.results, found.files)   # warp-ctc's copy builds a CPU binding (policy (n))
    apply_tree_calls(run.results, found.root, load_rules(),
                     lambda: StaticEngine(load_rules(), product=product, max_bytes=max_bytes).analyze_bytes, product)
    # the tree's own packages are not dependencies (after the cache: it depends on the whole file list)
    packages = first_party_packages(rel for _, rel in found.files)
    drop_first_party(run.results, packages)
    # `cuda_utils.py` is Python; an FFI build's generated `_ext/nms/__init__.py` is not (its answer kept in the
    # file's summary: `ffi_facts` names the summaries that now hold it, saved with the cache)
    ffi_facts: set[str] = set()
    drop_python_named(run.results, python_module_names(rel for _, rel in found.files)
                      - ffi_wrapper_names(found.files, run.results, ffi_facts))
    drop_python_module_reads(run.results, python_module_files(rel for _, rel in found.files))
    # one import summary per file (read in the worker, kept in the cache), one project view for the passes that read
    # per-file facts or follow imports (auditor/static/project_imports.py)
    project = ProjectImports(found.files, run.results)
    project.changed |= setup_facts | ffi_facts      # setup.py / FFI wrapper facts read this run, kept with summaries
    literal_namespaces(run.results, found.files, _unreported_op_namespaces(), project)   # `getattr(torch.ops, "air")`
    named = op_namespaces_named(run.results) - packages      # `torch.ops.torch_ipex.*`: is it the tree's own library?
    if named:
        own_namespaces = registered_namespaces([Path(p) for p in paths], named)
        drop_first_party(run.results, frozenset(own_namespaces))
        # operators defined in Python with torch.library (`Library("custom", "FRAGMENT")` + `define`)
        drop_own_ops(run.results, python_defined_ops(found.files, named - own_namespaces, project))
    apply_transfer_packages(run.results, found.files, packages, project)   # a package whose Ascend backend loads the shim
    apply_shim_graph(run.results, found.files, project)   # modules and launch scripts the import graph puts under the shim
    apply_device_shims(run.results, found.files, project)   # `import torch_dipu`: a tree package that remaps CUDA
    apply_other_npu(run.results, found.files, project)   # Intel's NPU (`npu_models/` importing its runtime)
    apply_vendor_packages(run.results, found.files, project)   # an Intel XPU / Habana package: not CUDA (t11u)
    apply_declared_vendor(run.results, found.files, project)   # `setup(name="optimum-amd")`: another accelerator's (t11w)
    apply_liger_ascend(run.results)   # Liger-Kernel >= 0.8 dispatches to its Ascend backend
    apply_mmcv_npu_pins(run.results)   # mmcv's NPU-built ops read against the mmcv release the tree pins (tk39)
    apply_transformers_npu_release(run.results, project)   # transformers >= 4.51 runs its FA2 path on torch_npu (tq42)
    apply_ascend_scripts(run.results, project)       # CUDA_DEVICE_MAX_CONNECTIONS=1 in a script that sets up Ascend
    apply_shim_twins(run.results)    # `long_vita_megatron/x.py` beside its Ascend copy `long_vita_modellink/x.py`
    apply_hydra_configs(run.results, found.files, project)    # configs an Ascend Hydra entry reads (npu_native.py)
    apply_ascend_subpackages(run.results, found.files, project)   # `import deep_ep`: the tree's own Ascend port of it
    apply_guarded_modules(run.results, found.files, project)   # a CuTe kernel module imported only under try/except
    apply_ascend_project(run.results, packages, found.files, project)   # `vllm_ascend`, FlagGems' `_ascend/`: Triton-Ascend
    apply_ascend_named_project(run.results, packages)   # every Python file of `vllm_ascend`'s tree (npu_native.py)
    drop_notes_in_ascend_tree(run.results)          # DeepSpeed's NPU note where the tree already imports torch_npu
    apply_other_backend_files(run.results)          # `docker/rocm/Dockerfile`: set-up for another backend
    apply_vendor_dispatch_tree(run.results, found.files, project)   # `dipu.vendor_type == "NPU"` in another file (t14n)
    apply_backend_files(run.results, found.files, project)      # `Dockerfile.cuda` beside `Dockerfile.metax`, NPU twins
    apply_member_includes(run.results, found.files, project)    # `third_party/flashinfer/` headers only `cuda/` includes
    apply_own_env_switches(run.results, found.files, project)   # `os.environ.get("CUDA_DEVICE_MAX_CONNECTIONS") == "1"`
    apply_env_readbacks(run.results, found.files, project)   # `os.environ["CUDA_VISIBLE_DEVICES"] = gpu`, read back (v)
    apply_platform_builds(run.results, found.files)    # what only the CUDA arm of the build's own platform switch builds
    apply_tolerated_builds(run.results, project)    # an op builder's JIT build that every load of the tree tries
    apply_format_members(run.results)     # `export_engine` beside `export_onnx`: the TensorRT format
    apply_chosen_members(run.results, project)     # `if sim == SimType.ISAACGYM: from .isaacgym import ...`: one simulator
    apply_release_members(run.results, found.files, project)   # verl's `vllm_v_0_5_4/`, loaded only for vLLM 0.5.4 (u)
    apply_registered_members(run.results, project)   # `@register_relay("nccl")` beside "nixl", "shm": one transport
    apply_platform_predicates(run.results, found.files, project)   # `if is_cuda():`, the project's own check (t11p)
    apply_class_twins(run.results, found.files, project)   # `GPUWorker` beside the tree's `NPUWorker` (t11q)
    apply_cuda_ci_jobs(run.results, found.files, project)    # a workflow job on NVIDIA runners: it stays for CUDA
    apply_colab_notebooks(run.results, found.files, project)   # a notebook pinned to Colab's runtime (decision 8)
    lower_unbuilt_sparse_attention(run.results, project)   # a DeepSpeed `sparse_attention` block no model builds
    apply_other_frameworks(run.results, found.files, project)    # `bert/paddle/`: PaddlePaddle code, torch_npu does not apply
    apply_imported_gates(run.results, found.files, project)   # `from _harness import CUDA` ... `if not CUDA: raise Skip`
    drop_unread_cudnn_vars(run.results)             # `CUDNN_DETERMINISTIC`: read by nothing
    drop_test_performance_hints(run.results)        # `.item()` in a test's loop
    drop_quiet_debug_values(run.results, found.files, project)   # `ASCEND_LAUNCH_BLOCKING=0`: the switch set off
    lower_gated_callees(run.results, project)      # `capture()` whose every caller runs behind `if device == "cuda":`
    drop_overridden_defaults(run.results, project)   # `device="cuda:0"` defaults every caller in the tree overrides
    apply_export_libraries(run.results, found.files, project)   # QEfficient's export path for Cloud AI 100 (m)
    lower_unswitched_flags(run.results, project)     # `if track_time:` where every call passes track_time=False
    lower_unset_attribute_branches(run.results, project)   # `if hasattr(self, "final_offload_hook") and ...`
    lower_off_autocasts(run.results, project)      # `autocast(enabled=self.args.mixed_precision)`, always set False
    drop_unread_attention_fields(run.results, project)   # `attn_implementation: str = field(default="flash_attention_2")` read by nothing
    drop_switch_fed_settings(run.results, project)   # `tf32: bool = True` that only feeds the tree's own allow_tf32 switch
    lower_self_flag_branches(run.results, project)   # `if self.use_evo:` where the class sets it only False
    lower_forwarded_flags(run.results, project)   # `if cuda:` reached only from `Synthesizer(use_cuda=False)`
    apply_unreached_defs(run.results, project)     # a ComfyUI node pack's vendored helpers nothing calls (t17e)
    lower_unread_attributes(run.results, project)  # `self.n_gpus = torch.cuda.device_count()`, read nowhere
    lower_unnamed_example_helpers(run.results, project)   # `collect_metrics` in examples/.../utils.py no example calls
    lower_stale_keywords(run.results, project)     # `GradCAM(..., use_cuda=True)` where the tree's class takes no use_cuda
    drop_tree_cuda_helpers(run.results)      # `_cuda_device(device)`: the tree's own helper, its body is audited (t11r)
    lower_disabled_autocasts(run.results, project)   # autocast("cuda", enabled=False) in a node pack opening none (pd8)
    lower_upstream_module_copies(run.results, project)   # SGLang's model file saved in a porting workspace (policy j)
    lower_config_imports(run.results)   # `from transformers import BitsAndBytesConfig` used only where nothing runs
    drop_handled_parallel_type_tests(run.results)   # `isinstance(m, DataParallel)` beside a DDP arm, nothing wraps
    # uses in other files of the tree's own CUDA-specific code: recomputed on every run from the per-file summaries
    # (cached or not), so a changed module changes its importers' findings
    drop_ascend_flash_modules(run.results, project)   # Ascend's own `flash_attn/` package: not CUDA by its name
    propagate(run.results, found.files, {r.code: r for r in load_rules()}, project)
    apply_declared_vendor(run.results, found.files, project, plugins=True)   # a vLLM platform plugin's tree (tq59b)
    if cache is not None:
        by_rel = {rel: path for path, rel in found.files}
        for r in run.results:
            if r.path in project.changed:        # the uses crossfile placed, kept with the importer's entry
                cache.update_summary(by_rel[r.path], r.summary)
        cache.save()
    run.project_reads = project.reads
    if prefix:
        for r in run.results:
            r.path = f"{prefix}/{r.path}"
            r.findings = [replace(f, path=f"{prefix}/{f.path}") for f in r.findings]
            if r.error is not None:
                r.error = replace(r.error, path=f"{prefix}/{r.error.path}")
    run.results.sort(key=lambda r: r.path)
    run.errors.extend(r.error for r in run.results if r.error is not None)
    run.duration_s = time.perf_counter() - start
    return run
