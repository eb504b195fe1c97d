"""What every project-file reader shares: the catalogue's project matchers, and turning a hit into the
same Finding the Python pass makes (message, substitution, per-product severity, fix data)."""
from __future__ import annotations

import fnmatch
import re
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from auditor.backend_words import member_backend
from auditor.findings import FileError, FileResult, Finding, as_info
from auditor.rules import Rule
from auditor.suppress import Suppressions

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine

PROJECT_MATCHERS = ("requirement", "command", "image", "setting")


# A CUDA-side package that the Ascend plugin installs beside (vllm-ascend documents `pip install vllm` then
# `pip install vllm-ascend`; MindSpeed patches a Megatron-LM checkout): in a file that installs the plugin too,
# the finding is information, not a failure.
_ASCEND_ROUTES = {"vllm": ("vllm-ascend", "vllm-ascend"), "url:github.com/vllm-project/vllm": ("vllm-ascend", "vllm-ascend"),
                  "megatron-core": ("mindspeed", "MindSpeed"), "url:github.com/nvidia/megatron-lm": ("mindspeed", "MindSpeed")}
# a switch that turns a CUDA build off (`<PROJECT>_SKIP_CUDA_BUILD`, `NO_CUDA`, `DISABLE_CUDA`): set to a true value,
# it asks for what Ascend needs (t15h)
# a build argument naming the NCCL release a build clones or installs (`NCCL_VERSION`, `AWS_OFI_NCCL_VERSION`,
# `NCCL_TESTS_VERSION`; rules/project_nccl_source_builds.yaml, tp38): its `+cuda11.2` local part names the CUDA
# that release was built for, not a CUDA version of its own
NCCL_VERSION_NAME_RE = re.compile(r"(?:\w+_)?NCCL(?:_TESTS)?_VERSION")
_CUDA_OFF_SWITCH_RE = re.compile(r"(?:^|_)(?:SKIP|NO|DISABLE)_CUDA(?:_|$)")
_TRUTHY = ("1", "true", "yes", "on")
_FALSY = ("0", "false", "no", "off", "")
_LOCATION_SUFFIXES = ("_PATH", "_HOME", "_DIR", "_TMPDIR", "_ROOT", "_PREFIX")


def cuda_build_off(name: str, value: str) -> bool:
    """A switch that turns a CUDA build off (`NO_CUDA_EXT`, `FOO_SKIP_CUDA_BUILD`, `DISABLE_CUDA`) set to a true
    value."""
    return bool(_CUDA_OFF_SWITCH_RE.search(name)) and value.strip("'\"").lower() in _TRUTHY


def normalize_dist(name: str) -> str:
    """PEP 503 normalisation: `Flash_Attn` and `flash-attn` are one distribution."""
    return re.sub(r"[-_.]+", "-", name).lower()


@dataclass
class ProjectMatchers:
    requirement: list[tuple[str, Rule]] = field(default_factory=list)
    command: list[tuple[str, Rule]] = field(default_factory=list)
    image: list[tuple[str, Rule]] = field(default_factory=list)
    # (key path glob, value glob, rule): compiled once, a key glob matching the whole path or its tail after a dot
    setting: list[tuple[re.Pattern, re.Pattern, Rule]] = field(default_factory=list)
    # `!key=value` patterns: settings a rule does not report (`!partition=*cpu*` beside `partition=*hopper*`)
    setting_except: dict[str, list[tuple[re.Pattern, re.Pattern]]] = field(default_factory=dict)
    # `!name` requirement patterns: distributions a rule's globs do not report (`!nvidia-sphinx-theme` beside
    # `nvidia-*`: NVIDIA's documentation theme is not a CUDA library; t15s)
    requirement_except: dict[str, list[str]] = field(default_factory=dict)
    # `!ref` image patterns: images a rule's globs do not report (`!nvcr.io/nvidia/distroless/*` beside
    # `nvcr.io/nvidia/*`: NVIDIA's distroless Go / C runtimes carry no CUDA; tp37)
    image_except: dict[str, list[str]] = field(default_factory=dict)
    _trees: dict[str, tuple[str, Rule]] | None = field(default=None, repr=False)

    @classmethod
    def build(cls, rules: tuple[Rule, ...]) -> "ProjectMatchers":
        m = cls()
        for rule in rules:
            for v in rule.match.get("requirement", ()):
                if v.startswith("!"):
                    m.requirement_except.setdefault(rule.code, []).append(v[1:].lower())
                else:
                    m.requirement.append((v.lower(), rule))
            for v in rule.match.get("command", ()):
                m.command.append((v, rule))
            for v in rule.match.get("image", ()):
                if v.startswith("!"):
                    m.image_except.setdefault(rule.code, []).append(v[1:].lower())
                else:
                    m.image.append((v.lower(), rule))
            for v in rule.match.get("setting", ()):
                key, _, value = v.partition("=")
                compiled = (_key_regex(key.lstrip("!").lower()), re.compile(fnmatch.translate(value.lower())))
                if key.startswith("!"):
                    m.setting_except.setdefault(rule.code, []).append(compiled)
                else:
                    m.setting.append((*compiled, rule))
        return m

    def match_requirement(self, symbol: str) -> Rule | None:
        return _first(self.requirement, symbol.lower(), self.requirement_except)

    def match_source_tree(self, directory: str) -> tuple[str, Rule] | None:
        """A directory named after a CUDA project of the requirement patterns (`DeepEP`, `flash-attention`,
        `apex/`): (the pattern's symbol, its rule). Names compare without case and separators, as a clone of
        github.com/deepseek-ai/DeepEP or the distribution `deep_ep` would be named."""
        trees = self._source_trees()
        for part in reversed(directory.rstrip("/").split("/")):   # `third_party/flash-attention/csrc/rotary`
            key = re.sub(r"[-_.]+", "", part.lower())
            if key in trees:
                return trees[key]
        return None

    def _source_trees(self) -> dict[str, tuple[str, Rule]]:
        trees = self._trees
        if trees is None:
            trees = {}
            for pattern, rule in self.requirement:
                if pattern.startswith("url:") and pattern.count("/") == 2 and not any(c in pattern for c in "*?["):
                    name = pattern.rsplit("/", 1)[-1]          # url:github.com/owner/name: the clone's directory
                elif re.fullmatch(r"[a-z0-9][a-z0-9-]*", pattern) and len(pattern) > 3:
                    name = pattern                             # a distribution name (not torch+cu*, apt:, index:)
                else:
                    continue
                if name in _FOLDER_WORDS:
                    continue
                trees.setdefault(re.sub(r"[-_.]+", "", name), (pattern, rule))
            self._trees = trees
        return trees

    def match_command(self, symbol: str) -> Rule | None:
        """symbol: a command name (a path is reduced to its last part) or `name --option=value`."""
        name, sep, rest = symbol.partition(" ")
        return _first(self.command, name.rsplit("/", 1)[-1] + sep + rest)

    def match_image(self, ref: str) -> Rule | None:
        low = ref.lower()
        # Docker Hub is the default registry: `docker.io/vllm/vllm-openai` is the image `vllm/vllm-openai` (Docker
        # docs, "docker image pull": "Docker Hub (docker.io) is the default registry"); tp44a, llm-d-benchmark's values
        return _first(self.image, low, self.image_except) or (
            _first(self.image, _DOCKER_HUB_RE.sub("", low), self.image_except) if _DOCKER_HUB_RE.match(low) else None)

    def match_setting(self, path: str, value: str) -> Rule | None:
        """path: dotted keys from the document root (`zero_optimization.offload_optimizer.device`); a key
        glob matches the whole path or its tail after a dot. `no_X: true` (Megatron's `--no-X` flags) is
        read as `X: false`, and so are `disable_X` / `without_X` (Qwen2-VL-Finetune's `--disable_flash_attn2
        False` leaves FlashAttention-2 on; `--disable_flash_attn2 True` turns it off)."""
        low = value.lower()
        path = path.lower()            # yacs / Hydra configs write `MODEL.DEVICE: cuda`, `USE_FLASH_ATTN: True`
        head, _, last = path.rpartition(".")
        prefix = next((p for p in ("no_", "disable_", "without_") if last.startswith(p)), None)
        if prefix and low in ("true", "false"):
            last = last[len(prefix):]
            path = f"{head}.{last}" if head else last
            low = "false" if low == "true" else "true"
        for key, value_glob, rule in self.setting:
            if key.match(path) and value_glob.match(low) and not any(
                    k.match(path) and v.match(low) for k, v in self.setting_except.get(rule.code, ())):
                return rule
        return None


# Docker Hub's registry host as an image reference may spell it (`docker.io/library/ubuntu` is `ubuntu`)
_DOCKER_HUB_RE = re.compile(r"^(?:(?:index|registry-1)\.)?docker\.io/(?:library/)?")
# distribution names that are also the name of a project's own source folder (`assets/cuda/chamfer3D`, `ops/cuda`):
# such a folder is no clone of that distribution (conda's `cuda` metapackage), t32b
_FOLDER_WORDS = frozenset({"cuda"})


def _key_regex(key: str) -> re.Pattern:
    """A key glob as a regex for the whole dotted path or its tail after a dot (`fnmatch` semantics)."""
    body = fnmatch.translate(key)           # `(?s:...)\Z`
    return re.compile(r"(?s:(?:.*\.)?" + body[len("(?s:"):])


def _first(patterns: list[tuple[str, Rule]], value: str, excepted: dict[str, list[str]] | None = None) -> Rule | None:
    """The first rule a glob of which matches `value`, unless one of that rule's `!` globs (`excepted`) does too."""
    for pattern, rule in patterns:
        if fnmatch.fnmatchcase(value, pattern) and not (excepted and any(
                fnmatch.fnmatchcase(value, ex) for ex in excepted.get(rule.code, ()))):
            return rule
    return None


def matchers(engine: "StaticEngine") -> ProjectMatchers:
    cached = getattr(engine, "_project_matchers", None)
    if cached is None:
        cached = ProjectMatchers.build(engine.compiled.rules)
        engine._project_matchers = cached   # type: ignore[attr-defined]
    return cached


def decode_text(data: bytes, rel: str) -> tuple[str | None, FileError | None]:
    if b"\x00" in data[:8192]:
        return None, FileError(rel, "binary", "binary content (NUL bytes)")
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as exc:
        return None, FileError(rel, "encoding", f"cannot decode as UTF-8: {exc}")
    return (text[1:] if text.startswith("\ufeff") else text), None


# the off / quiet values of the Ascend debug switches (NPU700), as auditor/static/shim_graph.QUIET_VALUES reads them
# for Python (that layer sits above this one): ASCEND_LAUNCH_BLOCKING 0 = asynchronous, the default;
# ASCEND_GLOBAL_LOG_LEVEL 3 error (the default) / 4 null; TORCH_NPUGRAPH_GC 0 = off
_QUIET_DEBUG_VALUES = {"ASCEND_LAUNCH_BLOCKING": frozenset({"0", "false", "False", "FALSE"}),
                       "TORCH_NPUGRAPH_GC": frozenset({"0", "false", "False", "FALSE"}),
                       "ASCEND_GLOBAL_LOG_LEVEL": frozenset({"3", "4"})}
# a variable's value given to a batch scheduler as a partition / queue / account (Slurm, PBS, LSF)
# a script variable set to the length of an array or string (`CUDA_NUM=${#CUDAs[@]}`, t15r, tuned on project test14):
# the script's own count, read by no library
_COUNT_VALUE_RE = re.compile(r"^\s*(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?)?([A-Za-z_]\w*)=[\"']?\$\{#\w+(?:\[[@*]\])?\}[\"']?\s*(?:#.*)?$",
                             re.M)
_SCHEDULER_VALUE_RE = re.compile(r"(?:--(?:partition|account|qos|reservation|queue)[= ]|(?:\b(?:srun|sbatch|salloc|qsub|"
                                 r"bsub)\b|#SBATCH)[^\n]*?\s-[pAq]\s+)[\"']?\$\{?([A-Za-z_]\w*)")
# a plain `NAME=value` line of a script (not a command's prefix assignment, not exported): a shell variable (tq46a)
_PLAIN_ASSIGN_RE = re.compile(r"""^\s*(?:local\s+|readonly\s+)?([A-Za-z_]\w*)=(?:"[^"\n]*"|'[^'\n]*'|[^\s;#]*)\s*(?:[;#].*)?$""",
                              re.M)
_EXPORTED_RE = re.compile(r"^\s*(?:export|declare\s+-\w*x\w*|typeset\s+-\w*x\w*)\s+([^\n;#]*)", re.M)
_ALLEXPORT_RE = re.compile(r"^\s*set\s+(?:-\w*a\b|-o\s+allexport)", re.M)
# parts of a version a build script composes (`CUDA_MAJOR`, `CUDA_MINOR`, `CUDA_STRING`, `CUDA_SHORT`); not
# variables any CUDA library reads, unlike the names of the generated environment table
# (NVIDIA_BUILD_ID / NVIDIA_BUILD_REF: an NGC image's build metadata, `ARG` / `ENV` in NeMo-RL's Dockerfile; t15s)
_BUILD_MARKER_RE = re.compile(r"_(?:MAJOR|MINOR|PATCH|STRING|SHORT|VER|TAG|SUFFIX|BUILD_ID|BUILD_REF)(?:_|$)")
# a part naming another GPU vendor's backend (`_AMD_`, `_ROCM_`, `_HIP_`) in a variable's name
_OTHER_VENDOR_PART_RE = re.compile(r"_(?:AMD|ROCM|HIP)(?:_|$)")


class Collector:
    """Findings of one file, deduplicated, with the inline suppression comment honoured."""

    def __init__(self, engine: "StaticEngine", rel: str, text: str) -> None:
        self.engine = engine
        self.rel = rel
        self.lines = text.splitlines()
        self.result: FileResult = FileResult(rel, lines=len(self.lines))
        self._suppressions = Suppressions.of(self.lines, text)   # `# npu-audit: ignore[...]` and noqa comments with NPU codes
        self._seen: set[tuple] = set()
        self._lower: str | None = None
        self.script_vars: dict[str, str] = {}     # NAME -> value a script assigned (shell reader)
        self.build_args: dict[str, str] = {}      # NAME -> a Dockerfile ARG's default (`ARG GGML_CUDA=OFF`)
        # the container folders a Dockerfile copies its build context into (`COPY . /workspace/app/`; tp46a)
        self.context_copies: set[str] = set()
        self.cpu_builds_only = False              # a requirements file pinning only `+cpu` torch builds
        self.cuda_find_links = False              # a requirements list has named a find-links page of CUDA builds
        self._scheduler: frozenset[str] | None = None
        self._counts: frozenset[str] | None = None
        self._locals: frozenset[str] | None = None

    def add(self, rule: Rule | None, symbol: str, line: int, col: int = 1, end_col: int | None = None, *,
            value: str | None = None, edit=None, note: str = "", severity: str | None = None) -> Finding | None:
        """edit: a text edit `audit fix` applies ({"line", "col", "end_col", "text"} or {"insert_after",
        "text"}); without one the finding is not fixable whatever the rule says."""
        if rule is None:
            return None
        if any(self._mentions(word) for word in rule.extra.get("ported_by", ())):
            return None     # `torch==2.5.1` beside `torch-npu==2.5.1`: the port is already declared here
        key = (rule.code, line, col, symbol)
        if key in self._seen:
            return None
        self._seen.add(key)
        if self._suppressions.covers(line, line, rule.code):
            self.result.suppressed += 1
            return None
        end = end_col if end_col is not None else col + len(symbol)
        f = self.engine.finding_for(rule, symbol, self.rel, line, col, end, value=value)
        data = dict(f.data)
        if callable(edit):
            edit = edit(data.get("replace")) if data.get("replace") else None
        if edit is not None and f.fix != "none":
            data["edit"] = edit
        else:
            data.pop("replace", None)
        fix = f.fix if "edit" in data else "none"
        route = _ASCEND_ROUTES.get(symbol)
        if route is not None and severity is None and self._mentions(route[0]):
            severity, note = "info", note + f" (this file installs {route[1]} too: the Ascend route)"
        from dataclasses import replace

        f = replace(f, message=f.message + note, data=data, fix=fix, severity=severity or f.severity)
        self.result.findings.append(f)
        return f

    def _mentions(self, word: str) -> bool:
        if self._lower is None:
            self._lower = "\n".join(self.lines).lower()
        return word in self._lower

    def add_finding(self, finding: Finding) -> None:
        """A finding another pass made for a piece of this file (`python -c CODE` in a script)."""
        key = (finding.code, finding.line, finding.col, finding.symbol)
        if key in self._seen:
            return
        self._seen.add(key)
        if self._suppressions.covers(finding.line, finding.line, finding.code):
            self.result.suppressed += 1
            return
        self.result.findings.append(finding)

    def env(self, name: str, line: int, col: int, *, twin=None, note: str = "", sets: bool = True,
            value: str | None = None, removed: bool = False) -> None:
        """An environment variable set or read by a script: the same rules (and HCCL names) as Python's.
        twin(new_name) -> the edit that also sets the Ascend name to the same value, keeping the original so
        the GPU run is configured as before (None when there is nothing to add)."""
        if name.endswith("_VERSION") or "_VERSION_" in name:
            return      # NCCL_VERSION, CUDA_VERSION(_SHORT) in images: markers of what was installed, read by no library
        if name not in self.engine.compiled.env_exact and _BUILD_MARKER_RE.search(name):
            return      # CUDA_MAJOR=${6:-12}, CUDA_STRING=cu124: a build script's own version parts, read by no library
        if name not in self.engine.compiled.env_exact and _OTHER_VENDOR_PART_RE.search(name):
            # `export FLASH_ATTENTION_TRITON_AMD_ENABLE=TRUE`: flash-attn's Triton backend for ROCm (its README, "AMD
            # ROCm Support"), another vendor's switch under a library's prefix, set for no CUDA run (tp44b)
            return
        rule = self.engine.compiled.match_env(name)
        if removed and (rule is None or rule.category != "device"):
            return      # `unset NCCL_IB_GID_INDEX` configures nothing; only a device-visibility variable removed
                        # changes what runs (the lead's decision, as Python's `os.environ.pop` in the visitor; tq52c)
        if rule is None:
            # a variable only a stacked rule names (`export CUTLASS_PATH=...`, `NVCC_APPEND_FLAGS`: NPU367, the kernel
            # category beside a device rule): the Python pass reports it through stacked_env, and so do scripts (t15u)
            rule = next(iter(self.engine.compiled.stacked_env(name)), None)
        if rule is None:
            return
        if sets and name in self.engine.compiled.env_set and not self._set_off(name, line, value):
            # `ENV FORCE_CUDA="1"`: the setting that forces a CUDA extension build (kernel), not its read (t15q)
            rule = self.engine.compiled.env_set.get(name, rule)
        if value is not None and cuda_build_off(name, value):
            return      # `DG_SKIP_CUDA_BUILD: "1"`, `export FOO_SKIP_CUDA_BUILD=TRUE`: the CUDA build is off, as on Ascend
        if rule.code == "NPU189" and (not sets or self._set_off(name, line, value)):
            # `OMPI_MCA_opal_cuda_support=0`: Open MPI's CUDA support off, as on an Ascend host; a read (a test's
            # `test "${OMPI_MCA_opal_cuda_support:-}" = true`) sets nothing (tp41)
            return
        if sets and name.endswith("_BUILD_CUDA") and self._set_off(name, line, value):
            return      # `ENV SAM2_BUILD_CUDA=0`: the CUDA extension build is off, as on Ascend (t15t)
        if sets and name.endswith("_INSTALL_PUNICA_KERNELS") and self._set_off(name, line, value):
            return      # `ENV VLLM_INSTALL_PUNICA_KERNELS=0`: vLLM's LoRA kernels are not built (tp52c)
        if not sets and self._argument_presence_test(name, line, col):
            return      # `ARG CUPY_NVCC_GENERATE_CODE` then `RUN if [[ -z ${CUPY_NVCC_GENERATE_CODE} ]]`: the ARG (tp47a)
        if sets and name.startswith("TF_NEED_") and self._set_off(name, line, value):
            return      # `ENV TF_NEED_CUDA=0`: TensorFlow's configure builds without CUDA, as on Ascend (tp47a)
        if rule.name == "npu-debug-env-var" and (not sets or self._quiet_debug_value(name, line)):
            return      # a read sets nothing; `ASCEND_GLOBAL_LOG_LEVEL=${ASCEND_GLOBAL_LOG_LEVEL:-3}` keeps it quiet
        if rule.code == "NPU004" and name not in rule.symbols and name not in self.engine.compiled.env_exact \
                and name in self._scheduler_values():
            return      # CUDA_PARTATION="pat_dev" read by `srun --partition=${CUDA_PARTATION}`: a Slurm name, no CUDA's
        if rule.code == "NPU004" and name not in rule.symbols and name not in self.engine.compiled.env_exact \
                and name in self._count_values():
            return      # CUDA_NUM=${#CUDAs[@]}, then `--nproc_per_node=$CUDA_NUM`: the script's own count (t15r)
        if rule.code == "NPU004" and not sets and name not in rule.symbols and name not in self.engine.compiled.env_exact \
                and name in self._local_values():
            # `CUDA_ARCH_LIST="70-real;80-real"` then `-DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH_LIST}"`: the script's own
            # shell variable, never exported; its read passes the script's value on, no environment (tq46a)
            return
        new = self.engine.replacement_for(rule, name)
        if rule.code == "NPU004" and name not in rule.symbols and name.endswith(_LOCATION_SUFFIXES):
            # CUDA_CACHE_PATH, CUDA_TMPDIR: where the CUDA toolchain keeps files, like CUDA_HOME (info in the
            # generated table); nothing reads them on Ascend and ignoring them changes nothing at run time
            self.add(rule, name, line, col, col + len(name), severity="info",
                     note=" (a location the CUDA toolchain uses: ignored on Ascend, nothing else changes)")
            return
        if sets and new and self.sets(new):
            # already ported: the Ascend name is set beside it
            self.add(rule, name, line, col, col + len(name), note=f" (this file sets {new} too)", severity="info")
            return
        self.add(rule, name, line, col, col + len(name), edit=twin, note=note)

    def _argument_presence_test(self, name: str, line: int, col: int) -> bool:
        """Is line `line` a shell test of whether the Dockerfile's build argument `name` was given (`[[ -z ${NAME} ]]`,
        `[ -n "$NAME" ]`, in a file that declares `ARG NAME`)? The test reads no value into the build; the ARG line,
        where the value is given, carries the finding (test128's labels; a script's test of an environment variable,
        which the environment sets, stays a read: test26). Only the read at column `col` inside the test: the same
        line's other reads (`[ -z "$A" ] || python setup.py build_ext --arch "$A"`) pass the value on."""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        test = re.compile(r"""\[\[?\s*-[zn]\s+"?\$\{?""" + re.escape(name) + r"""\}?"?\s*\]""")
        return any(t.start() < col <= t.end() for t in test.finditer(text)) and any(
            re.match(r"\s*ARG\s+" + re.escape(name) + r"(?:=|\s|$)", other) for other in self.lines)

    def _set_off(self, name: str, line: int, value: str | None) -> bool:
        """Is `name` set to an off value (`FORCE_CUDA=0`, `DS_BUILD_OPS: "false"`) here: the value given, or the
        literal after `NAME=` on the line?"""
        if value is None:
            text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
            found = re.search(re.escape(name) + r"""=(["']?)([\w.+-]*)\1(?![\w$.{(])""", text) or re.match(
                r"""\s*ENV\s+""" + re.escape(name) + r"""\s+(["']?)([\w.+-]*)\1\s*$""", text)   # legacy `ENV NAME 0`
            value = found.group(2) if found else None
        return value is not None and value.strip("'\"").lower() in _FALSY

    def _quiet_debug_value(self, name: str, line: int) -> bool:
        """Does line `line` give the Ascend debug switch `name` its off / quiet value, literally (`NAME=0`) or as
        the default of an expansion (`NAME=${NAME:-3}`: quiet unless the user asks otherwise)?"""
        text = self.lines[line - 1] if 0 < line <= len(self.lines) else ""
        found = re.search(re.escape(name) + r"""=(["']?)(?:\$\{\w+:?[-=]([\w.+-]+)\}|([\w.+-]+))\1(?![\w$.{(])""", text)
        return found is not None and (found.group(2) or found.group(3)) in _QUIET_DEBUG_VALUES.get(name, ())

    def _scheduler_values(self) -> frozenset[str]:
        """Names whose value the file passes to a batch scheduler as a partition, queue or account (`srun
        --partition=${CUDA_PARTATION}`, `sbatch -p $GPU_QUEUE`, `#SBATCH --account=$X`)."""
        if self._scheduler is None:
            self._scheduler = frozenset(_SCHEDULER_VALUE_RE.findall("\n".join(self.lines)))
        return self._scheduler

    def _count_values(self) -> frozenset[str]:
        """Names the file sets only to a length (`CUDA_NUM=${#CUDAs[@]}`): each one's every assignment is a count."""
        if self._counts is None:
            text = "\n".join(self.lines)
            counted = set(_COUNT_VALUE_RE.findall(text))
            self._counts = frozenset(n for n in counted
                                     if len(re.findall(r"(?m)^\s*(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?)?" +
                                                       re.escape(n) + "=", text)) ==
                                     len(re.findall(r"(?m)^\s*(?:export\s+|local\s+|declare\s+(?:-\w+\s+)?)?" +
                                                    re.escape(n) + r"=[\"']?\$\{#", text)))
        return self._counts

    def _local_values(self) -> frozenset[str]:
        """Names the file assigns on lines of their own (`NAME=value`) and never exports (no `export NAME`, `declare
        -x`, `set -a`): shell variables of the script, not its environment."""
        if self._locals is None:
            text = "\n".join(self.lines)
            if _ALLEXPORT_RE.search(text):
                self._locals = frozenset()
            else:
                exported = {w.split("=", 1)[0] for m in _EXPORTED_RE.finditer(text) for w in m.group(1).split()}
                self._locals = frozenset(set(_PLAIN_ASSIGN_RE.findall(text)) - exported)
        return self._locals

    def sets(self, name: str) -> bool:
        """Does any line of this file set `name` already (`NAME=`, `export NAME=`, `ENV NAME`)?"""
        return any(f"{name}=" in ln or f"ENV {name} " in ln for ln in self.lines)

    def done(self) -> FileResult:
        self.result.findings.sort(key=Finding.sort_key)
        return self.result


# per-backend members (pd32): the words that name the CUDA member and the other backends' members of a set of
# Dockerfile stages (`builder-cuda` beside `builder-cpu`, `builder-xpu`) or compose profiles (`profiles: [cuda]`) are
# backend_words.member_backend's. A pyproject's CUDA member extra (requirements._cuda_member_extras) is lowered
# with the same `as_info`, in context `per-backend-extra`.
_KEY_SPLIT = re.compile(r"[-_.]")


def cuda_member_siblings(name: str, names) -> list[str]:
    """The members for other backends beside `name` when `name` is the CUDA member of a per-backend set: a name one
    of whose words is `cuda` (`nvidia`, `cu121`), and other names equal to it but for that word, which names another
    backend (`builder-cpu`, `builder-xpu` beside `builder-cuda`). [] when `name` is no such member: a CUDA stage
    with only CUDA siblings (`builder-cu118` beside `builder-cu121`), or none, keeps its findings."""
    words = _KEY_SPLIT.split(name.lower())
    out: list[str] = []
    for at, word in enumerate(words):
        if member_backend(word) != "cuda":
            continue
        for other in names:
            other_words = _KEY_SPLIT.split(other.lower())
            if len(other_words) == len(words) and member_backend(other_words[at]) not in (None, "cuda") and \
                    other_words[:at] + other_words[at + 1:] == words[:at] + words[at + 1:]:
                out.append(other)
    return out


def lower_cuda_member(findings: list, spans: list[tuple[int, int, str, list[str]]], what: str) -> list:
    """Findings inside a CUDA member's span (first line, last line, name, its siblings) as info, in context
    `platform-class` (the CUDA member of a set that already has another backend's), never rewritten."""
    out = []
    for f in findings:
        span = next((s for s in spans if s[0] <= f.line <= s[1]), None)
        if span is not None and f.severity != "info" and not f.data.get("context"):
            f = as_info(f, "platform-class", f"in the CUDA {what} `{span[2]}` of per-backend {what}s "
                                             f"({', '.join(span[3])} beside it): a build for Ascend picks another "
                                             f"member and adds its own")
        out.append(f)
    return out
