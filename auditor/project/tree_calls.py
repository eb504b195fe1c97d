"""The findings a file's own lines get from the files of the tree it calls: `make` targets whose Makefile runs nvcc,
`cmake` configures of a CUDA CMakeLists.txt, installs of the project's own CUDA-only extras and of its folders that
always build CUDA extensions, launches of the tree's attention wrappers. One list, so the runner and the
project-file bench run the same passes."""
from __future__ import annotations

from pathlib import Path
from typing import Callable

from auditor.project.called_scripts import apply_called_scripts
from auditor.project.cmake_calls import apply_cmake_builds
from auditor.project.launch_imports import apply_launch_imports
from auditor.project.launched import apply_launched_wrappers, apply_tf32_launches, drop_host_conversion_dtypes
from auditor.project.local_builds import apply_local_builds, cuda_extension_lines
from auditor.project.local_extras import apply_local_extras
from auditor.project.makefile import apply_make_builds
from auditor.project.npu_switch_arms import apply_npu_switch_arms
from auditor.project.registry_choices import apply_launch_choices, apply_registry_choices
from auditor.project.setting_choices import apply_setting_choices
from auditor.project.setting_keywords import apply_setting_keywords
from auditor.project.setting_reads import drop_code_read_settings, one_walk_per_run
from auditor.findings import FileResult


def apply_tree_calls(results: list[FileResult], root: Path, rules,
                     analyze: Callable[[], Callable[[bytes, str], FileResult]], product: str = "a2") -> None:
    """Add the call findings to every file of `results` that recorded such calls (after the per-file pass and the
    cache: they depend on other files); analyze() gives a file reader, built only when some pass needs one."""
    with one_walk_per_run():
        _tree_passes(results, root, rules, analyze, product)


def _tree_passes(results: list[FileResult], root: Path, rules,
                 analyze: Callable[[], Callable[[bytes, str], FileResult]], product: str) -> None:
    _call_passes(results, root, rules, analyze, product)
    # t19c: a line running another script of the tree (`./train.sh ...`) gets that script's launch findings
    apply_called_scripts(results, root, analyze, lambda called: _call_passes(called, root, rules, analyze, product))
    # t23c: config settings the tree's own code decides on (`cfg.general.gpus`), or that nothing reads
    drop_code_read_settings(results, root)
    # t24b: config settings the tree's code passes to a call under a keyword a settings rule reads
    apply_setting_keywords(results, root, rules, product)
    # tq54e: flash switches whose path the tree already routes to torch_npu, or switches off on the NPU
    apply_npu_switch_arms(results, root)


def _call_passes(results: list[FileResult], root: Path, rules,
                 analyze: Callable[[], Callable[[bytes, str], FileResult]], product: str) -> None:
    setup_cache: dict = {}      # setup.py -> its CUDA extension lines, read once for the make and local-build passes
    # tp58a: a make target whose recipe runs a setup script that always compiles CUDA extensions
    apply_make_builds(results, root, rules, product, lambda setup_py: cuda_extension_lines(setup_py, setup_cache))
    apply_cmake_builds(results, root, rules, analyze, product)
    apply_local_extras(results, root, rules, product)
    apply_local_builds(results, root, rules, product, setup_cache)
    apply_launched_wrappers(results, root, rules, analyze, product)
    apply_tf32_launches(results, root, rules, product)     # review48 item 6: `--tf32 True` to a script's own argparse
    drop_host_conversion_dtypes(results, root)     # tp51d: `--dtype bf16` to a host conversion script (decision 24)
    apply_launch_imports(results, root, rules, analyze, product)      # s15e: launched scripts that fail at import
    apply_setting_choices(results, root, rules, product)     # t18b: config values that select a CUDA-only module
    apply_registry_choices(results, root, rules, analyze, product)    # tp51d: Hydra choices of a CUDA kernel class
    apply_launch_choices(results, root, rules, analyze, product)      # tp54b: launch option values choosing one
