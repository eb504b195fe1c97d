"""Project files beyond Python sources: dependency pins, launch scripts, containers, framework configs,
notebooks and CUDA sources. Each kind is read by a real parser (packaging, tomllib, PyYAML, json, tree-sitter-bash,
dockerfile-parse, nbformat); the hits go through the same rule catalogue and Finding type as the Python
pass (see rules/project.yaml for the matchers `requirement`, `command`, `image` and `setting`)."""
from __future__ import annotations

import fnmatch
import re
from typing import TYPE_CHECKING

# a shell script that sets up Ascend itself (t11f): sources CANN's `.../Ascend/.../set_env.sh` or a project's
# `env_npu*.sh`, counts `NPUS_PER_NODE`, picks `ASCEND_RT_VISIBLE_DEVICES`, exports `ASCEND_*` / `HCCL_*` settings
# (read by the shell reader and by static.project_imports' script facts)
ASCEND_SCRIPT = re.compile(r"^[ \t]*(?:(?:source|\.)[ \t]+\S*(?:[Aa]scend\S*/set_env\.sh|env_npu\w*\.sh)"
                           r"|(?:export[ \t]+)?(?:NPUS_PER_NODE|ASCEND_RT_VISIBLE_DEVICES)=|export[ \t]+(?:ASCEND|HCCL)_\w+=)",
                           re.M)

if TYPE_CHECKING:
    from auditor.findings import FileResult
    from auditor.static.engine import StaticEngine

# (kind, file-name globs): matched against the file name only, lower-cased.
KINDS: tuple[tuple[str, tuple[str, ...]], ...] = (
    ("requirements", ("requirements*.txt", "requirements*.in", "*requirements.txt", "constraints*.txt")),
    # `pyproject-flashattention.toml`: one optional stack's dependency table beside the main one (gpt-neox)
    ("pyproject", ("pyproject.toml", "pyproject-*.toml", "pyproject_*.toml",
                   # a pixi manifest: pyproject's `[tool.pixi]` tables at the top level (t35a)
                   "pixi.toml")),
    ("setupcfg", ("setup.cfg",)),
    ("conda", ("environment*.yml", "environment*.yaml", "conda*.yml", "conda*.yaml")),   # environment_cuda.yml too
    ("dockerfile", ("dockerfile", "dockerfile.*", "dockerfile-*", "dockerfile_*", "*.dockerfile", "containerfile")),
    ("shell", ("*.sh", "*.bash", "*.slurm", "*.sbatch")),
    ("notebook", ("*.ipynb",)),
    ("config", ("*.yaml", "*.yml", "*config*.json", "ds_*.json", "*deepspeed*.json", "*zero*.json",
                # FSDP / accelerate / offload settings and hyper-parameter files (ms-swift fsdp2.json, stanford_alpaca
                # default_offload_opt_param.json); other JSON (results, locales, datasets) is data, not read
                "*fsdp*.json", "*accelerate*.json", "*offload*.json", "*hparams*.json",
                "devcontainer.json", ".devcontainer.json",
                # Vulkan ICD manifests (`nvidia_icd.json`, `intel_icd.x86_64.json`): the driver library the Vulkan
                # loader opens (Khronos Vulkan loader, "Driver manifest file format"; qdrant's GPU image, tp43)
                "*_icd.json", "*_icd.*.json",
                # tp52c: the NVIDIA driver's other loader manifests by their names: glvnd's EGL vendor file
                # (`/usr/share/glvnd/egl_vendor.d/10_nvidia.json`, `{"ICD": {"library_path": "libEGL_nvidia.so.0"}}`:
                # github.com/NVIDIA/libglvnd src/EGL/icd_enumeration.md), the EGL external platform files
                # (`15_nvidia_gbm.json`, `10_nvidia_wayland.json`) and Vulkan layer manifests (`nvidia_layers.json`)
                "*nvidia*.json")),
    # CMake build files: the CUDA parts of a C/C++ build (t15f; auditor/project/cmake.py)
    ("cmake", ("cmakelists.txt", "*.cmake")),
    # a Makefile's own CUDA build settings (t15f; auditor/project/makefile_vars.py)
    ("makefile", ("makefile", "gnumakefile", "*.mk")),
)


def is_github_workflow(rel: str) -> bool:
    """A GitHub Actions workflow file (`.github/workflows/*.yml`)."""
    parts = rel.replace("\\", "/").split("/")
    return len(parts) >= 3 and parts[-3:-1] == [".github", "workflows"] and parts[-1].endswith((".yml", ".yaml"))


# folders of issue / discussion / merge-request templates (GitHub's issue forms and templates, GitLab's description
# templates): text for the person who files them
_TEMPLATE_FOLDERS = frozenset({"issue_template", "discussion_template", "issue_templates", "merge_request_templates"})


def issue_form(rel: str) -> bool:
    """A file of `.github/ISSUE_TEMPLATE/` (GitHub docs, "Syntax for issue forms"), `.github/DISCUSSION_TEMPLATE/` or
    `.gitlab/issue_templates/`."""
    parts = [p.lower() for p in rel.replace("\\", "/").split("/")[:-1]]
    return any(a in (".github", ".gitlab") and b in _TEMPLATE_FOLDERS for a, b in zip(parts, parts[1:]))


# the names Azure Resource Manager templates go by: the quickstart templates' `azuredeploy.json`, the Marketplace's
# `mainTemplate.json`, and files named for ARM (`vm-arm-template.json`)
_ARM_TEMPLATE_RE = re.compile(r"azuredeploy[\w.-]*\.json|maintemplate\.json|[\w.-]*\barm[-_]?template[\w.-]*\.json")


# `packer.json`, `environments-packer.json`, `gcp_packer_cuda.json`: `packer` not inside a longer word (`webpacker`)
_PACKER_NAME_RE = re.compile(r"(?<![a-z])packer(?![a-z])")


# a JSON named for a machine as a word (`machine.json`, `lebesgue_v2_machine.json`, `machine-local.json`): DP-GEN's
# and dpdispatcher's machine files (the job's scheduler, queue and GPUs; tp49a). configs.py reads one only when its
# content has dpdispatcher's schema (`dispatcher_machine`)
_MACHINE_JSON_RE = re.compile(r"(?<![a-z0-9])machine(?![a-z0-9])[\w.-]*\.json$")


def machine_named_only(rel: str) -> bool:
    """A JSON file read as a config only because its name names a machine (`_MACHINE_JSON_RE`)."""
    name = rel.replace("\\", "/").rsplit("/", 1)[-1]
    return bool(_MACHINE_JSON_RE.search(name.lower())) and _kind(name, rel) is None


def project_kind(name: str, rel: str = "") -> str | None:
    """The kind of a project file from its name (and, for JSON, its folder: rel is its path in the tree), or None
    for files this module does not read."""
    kind = _kind(name, rel)
    if kind is None and _MACHINE_JSON_RE.search(name.lower()):
        return "config"
    return kind


def _kind(name: str, rel: str) -> str | None:
    low = name.lower()
    for kind, globs in KINDS:
        if any(fnmatch.fnmatchcase(low, g) for g in globs):
            return kind
    if low.endswith(".json") and any("config" in part.lower() for part in rel.split("/")[:-1]):
        return "config"       # parler-tts helpers/training_configs/starting_point_v1.json: a folder of configs
    if low.endswith(".json") and ("workflow" in low or any(
            "workflow" in part.lower() or part.lower() == "comfyui" for part in rel.split("/")[:-1])):
        return "config"       # ComfyUI workflows (`example_workflows/*.json`, VideoX-Fun's comfyui/): nodes' inputs (t21b)
    if low.endswith(".json") and ".runpod" in rel.split("/")[:-1]:
        return "config"       # RunPod Hub's `.runpod/hub.json` / `tests.json`: the endpoint's GPU types, count and CUDA (tp44a)
    if low.endswith(".pkr.json") or low.endswith(".json") and (any(
            part.lower() == "packer" for part in rel.split("/")[:-1]) or _PACKER_NAME_RE.search(low)):
        # Packer templates (`scripts/packer/gcp-image-cuda.json`, tp38; `environments-packer.json`, tp46b): the
        # machine image's build; `packer` as a word of the name (not `webpacker.json`, review46 item 8)
        return "config"
    if low.endswith(".json") and _ARM_TEMPLATE_RE.fullmatch(low):
        return "config"       # Azure Resource Manager templates: the VMs a deployment makes (tp46b)
    if low.endswith(".json") and ("snapshot" in low or any(part.lower() == "snapshots"
                                                            for part in rel.split("/")[:-1])):
        # ComfyUI-Manager's snapshots (`snapshots/<date>_snapshot.json`, `restore-snapshot.json`): the pip packages
        # a restore installs; configs.py reads only a file of that schema (tp48a)
        return "config"
    if low.endswith(".json") and "autoprovisioning" in low:
        # GKE node auto-provisioning configs (`gcloud container clusters update --autoprovisioning-config-file
        # autoprovisioning.json`: `resourceLimits` of CPU, memory and `nvidia-tesla-*` GPUs the cluster may add; tp47a)
        return "config"
    if low.endswith(".def") or low in ("singularity", "apptainer") or \
            low.startswith(("singularity.", "apptainer.")) and not low.endswith(_OTHER_SUFFIXES):
        return "apptainer"        # Apptainer / Singularity recipes (auditor/project/apptainer.py; t15k)
    if low.endswith((".txt", ".in")) and not low.startswith(_NOT_REQUIREMENTS) and \
            any(part.lower() in _REQUIREMENT_FOLDERS for part in rel.split("/")[:-1]):
        return "requirements"     # vLLM's requirements/cuda.txt, OpenMMLab's requirements/runtime.txt, mminstall.txt
    return None


# Folders of pip requirement files named for what they install (`requirements/cuda.txt`, `requirements/build.txt`;
# t15k) and the text files such a folder may also hold that are not requirement lists
_REQUIREMENT_FOLDERS = frozenset({"requirements", "requirement", "reqs"})
# `singularity.py`, `apptainer.md`: a module or a page named for the tool, not a recipe
_OTHER_SUFFIXES = (".py", ".pyi", ".md", ".rst", ".txt", ".json", ".yaml", ".yml", ".toml", ".sh", ".ipynb", ".cfg",
                   ".ini", ".html", ".c", ".cc", ".cpp", ".h", ".hpp", ".go", ".rs", ".js", ".ts")
_NOT_REQUIREMENTS = ("readme", "license", "licence", "notice", "changelog", "authors", "version")


def analyze_project_file(engine: "StaticEngine", data: bytes, rel: str, kind: str) -> FileResult:
    from auditor.project import (apptainer, cmake, configs, dockerfile, makefile_vars, notebook, requirements,
                                 setup_py, shell)

    if kind == "requirements" and shell.opens_as_shell_script(data):
        # a `requirements.txt` that opens with `#!/bin/bash` and installs with `conda install pytorch==1.7.0
        # cudatoolkit=10.0` / `pip install ...` lines: pip rejects such lines (`pip install -r` reads one requirement
        # specifier a line), so the file is run with `bash`, and its lines are the shell's commands (tp56a)
        kind = "shell"
    handler = {
        "requirements": requirements.analyze_requirements_txt,
        "pyproject": requirements.analyze_pyproject,
        "setupcfg": setup_py.analyze_setup_cfg,
        "conda": requirements.analyze_conda,
        "dockerfile": dockerfile.analyze_dockerfile,
        "shell": shell.analyze_shell,
        "notebook": notebook.analyze_notebook,
        "config": configs.analyze_config,
        "cmake": cmake.analyze_cmake,
        "makefile": makefile_vars.analyze_makefile,
        "apptainer": apptainer.analyze_definition,
    }[kind]
    result = handler(engine, data, rel)
    if result.findings and issue_form(rel):
        # `.github/ISSUE_TEMPLATE/bug.yml`: a GitHub issue form's labels and descriptions are text shown to a person
        # filing an issue (`run `sudo docker run --rm --gpus all nvidia/cuda:...``): prose, not a config (tp40)
        result.findings = []
    elif result.findings and another_backends_file(rel):
        # `docker/amd/Dockerfile`, `Dockerfile.mi325`, `configs/gbs256_tpu.yaml`, `requirements-rocm.txt`: the set-up
        # of another accelerator; an Ascend port adds its own file beside it and never edits this one, so no line of
        # it is a CUDA finding (t15k; Python files there stay info, "left as is", auditor/static/backends.py)
        result.findings = []
    elif result.findings and kind == "config" and ascend_folder_file(rel):
        # Open-MAGVIT2's `configs/IBQ/npu/*.yaml` beside `configs/IBQ/gpu/` copies (`accelerator: npu`): the project
        # is already ported and the config under the NPU's folder is Ascend's own (pd7, tuned on project test23)
        result.findings = []
    elif result.findings and kind in ("shell", "dockerfile") and rocm_setup(data):
        # OpenManus-RL's serve_model.sh: `export VLLM_USE_ROCM=1`, `export VLLM_PLATFORM=rocm`, then `vllm serve ...
        # --device cuda` (PyTorch's device name on ROCm too): a script for the AMD container, as a ROCm-named file
        # is (t20b, tuned on project test27)
        result.findings = []
    elif result.findings and kind in ("requirements", "conda") and for_macos(rel):
        # `requirements-mac.txt`, `requirements_macos_amd64.txt`: what a Mac installs (neither CUDA nor an Ascend
        # device there), as the shell reader treats `start_macos.sh` (t16a, test18's seed-vc, test15's kohya_ss)
        result.findings = []
    return result


_MACOS_WORDS = frozenset({"macos", "osx", "darwin", "mac"})
# a script that picks the ROCm build of its program for every line (vLLM's platform switches, set unconditionally
# at the start of a line), and one that also speaks to NVIDIA's stack (then it serves both, and is read as usual)
_ROCM_PLATFORM_RE = re.compile(rb"(?m)^[ \t]*(?:export[ \t]+|ENV[ \t]+)?(?:VLLM_USE_ROCM=[\"']?1\b|"
                               rb"VLLM_PLATFORM=[\"']?rocm\b|VLLM_TARGET_DEVICE=[\"']?rocm\b)"
                               # t23e (tuned on project test32: octopack's LUMI jobs, `#SBATCH --gpus-per-node=mi250:1`):
                               # a Slurm job asking for AMD Instinct GPUs by model, or loading the ROCm module
                               rb"|^#SBATCH[ \t]+--(?:gpus(?:-per-(?:node|task|socket))?|gres)[= ](?:gpu:)?mi[0-9]{2,3}"
                               rb"|^[ \t]*(?:module|ml)[ \t]+load[ \t]+rocm\b")
_NVIDIA_STACK_RE = re.compile(rb"CUDA_VISIBLE_DEVICES|nvidia|NCCL_|\bnvcc\b|cu1[0-9]{2}\b")


def rocm_setup(data: bytes) -> bool:
    """A shell script or Dockerfile that selects the ROCm platform of vLLM for all it runs, or a Slurm job for AMD
    GPUs, and names no NVIDIA stack beside it: the AMD machine's set-up (an Ascend port adds its own, as for a
    ROCm-named file)."""
    return _ROCM_PLATFORM_RE.search(data) is not None and _NVIDIA_STACK_RE.search(data) is None


def for_macos(rel: str) -> bool:
    """A file for macOS by its name (`start_macos.sh`, `install-osx.sh`, `requirements-mac.txt`) or folder
    (`macos/`)."""
    parts = rel.replace("\\", "/").lower().split("/")
    words = set(re.split(r"[_.\-]+", parts[-1].rsplit(".", 1)[0] if "." in parts[-1] else parts[-1]))
    return bool(words & _MACOS_WORDS) or any(p in _MACOS_WORDS for p in parts[:-1])


def another_backends_file(rel: str) -> bool:
    """Whether the folders and the name of a project file (its path in the tree) name only accelerators other than
    CUDA and Ascend (ROCm / AMD Instinct, TPU / XLA, MPS, XPU, Gaudi, ...): `amd64` and words inside other words
    (`chip`, `gpus`) name none, and a path that also names CUDA or the NPU (`Dockerfile.rocm-cuda`) is not one."""
    from auditor.backend_words import OTHER_BACKENDS, backends_in_text

    parts = rel.replace("\\", "/").split("/")
    named = set().union(*(backends_in_text(p.replace(".", "_").replace("-", "_")) for p in parts))
    if not named and any(_NON_ASCEND_CPU.search(p) for p in parts):
        return True
    return bool(named) and named <= OTHER_BACKENDS


def ascend_folder_file(rel: str) -> bool:
    """Whether a project file sits in a folder named for the NPU (`configs/npu/`, `ascend/`) and no folder on its
    path names another backend or CUDA (`npu/gpu/` is not one): the Ascend port's own copy of a file."""
    from auditor.backend_words import backends_in_text

    folders = rel.replace("\\", "/").split("/")[:-1]
    named = set().union(set(), *(backends_in_text(p.replace(".", "_").replace("-", "_")) for p in folders))
    return named == {"npu"}


# t11y (tuned on heldout16's vLLM fork, `docker/Dockerfile.s390x`, `Dockerfile.ppc64le`): a file named for a CPU
# architecture that no Ascend host has (IBM Z, POWER; Ascend servers are aarch64 Kunpeng or x86-64 hosts) sets up
# that machine's CPU build: it never runs beside an NPU
_NON_ASCEND_CPU = re.compile(r"(?i)(?<![a-z0-9])(?:s390x|ppc64le|ppc64)(?![a-z0-9])")
