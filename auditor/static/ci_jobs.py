"""CI jobs that test the CUDA build on NVIDIA machines (GitHub Actions workflows). Applied once per run, after the
per-file passes.

A job in `.github/workflows/*.yml` (or an Azure Pipelines job, by its `pool` and `container`) is a CUDA CI job
when what it runs on names only NVIDIA / CUDA: its `runs-on`
(`linux.g5.4xlarge.nvidia.gpu`, `[self-hosted, gpu]`), the `runner` or `gpu-arch-type: cuda` it passes to a
reusable workflow (pytorch/test-infra's `linux_job_v2.yml`), or its `container` image (`nvidia/cuda:12.4...`).
Such a job chooses the runner's CUDA image and tests the CUDA build on purpose; it never runs on an Ascend host, and
the port keeps it and adds an Ascend job beside it. Its findings (`gpu-arch-type: cuda`, `--device cuda`,
`nvidia-smi`, a CUDA wheel index) are worth knowing, not acting on line by line: info, never rewritten. A job whose
machine names another backend too (`linux.rocm.gpu`, a matrix over cuda and rocm), or nothing (`ubuntu-latest` with
no CUDA container), keeps its findings.

Notebooks pinned to Colab's NVIDIA runtime (lead decision 8, session 22; pd24): a notebook whose code imports
`google.colab`, mounts Drive or works in `/content` (`%cd /content/EveryDream2trainer`, `"/content/drive/MyDrive"`)
runs on Colab's machines, as a CUDA CI job runs on its runner: its CUDA installs (`!pip install xformers
--extra-index-url .../cu118`) and CUDA calls (`device="cuda"`) are info, never rewritten. A notebook with no such tie
keeps its findings; a comment line (`# from google.colab import files`) or a URL's `/content/` is no tie. The
notebook's own metadata is a tie too: a `colab` entry with a GPU runtime (`"accelerator": "GPU"`, `"gpuType": "T4"`;
tq37).

CI services other than GitHub Actions read the same way (pd32): a Lightning CI workflow (`.lightning/workflows/*.yml`,
one job per file) on `machine: L4_X_2` (a GPU model token) or with a CUDA `image:`; a CircleCI job
(`.circleci/*.yml`) with `resource_class: gpu.nvidia.small` or a CUDA `machine: {image: ubuntu-2004-cuda-11.4...}` /
`docker: [{image: ...}]`. A GitHub job on a self-hosted runner that another job of the workflow starts
(`runs-on: ${{ needs.start-runner.outputs.label }}`) runs on the machine that job launches: the instance type it names
(`EC2_INSTANCE_TYPE: g5.12xlarge`, `ec2-instance-type:`) is the job's machine. A CPU resource class, a CPU image or a
launcher that names no NVIDIA instance keeps the findings.
"""
from __future__ import annotations

import re
from collections.abc import Sequence
from functools import partial
from pathlib import Path

import yaml

from auditor.project import is_github_workflow as _is_workflow
from auditor.source import SourceError
from auditor.findings import above_info, lower_findings
from auditor.static.backends import as_info, backends_in_text
from auditor.static.project_imports import as_text, held_tree, read_counted

_NOTE = "in a CI job that tests the CUDA build on NVIDIA machines ({job}: {why}): it stays for CUDA; add an Ascend " \
        "job beside it"
_COLAB_NOTE = "in a notebook pinned to Colab's NVIDIA runtime ({why}): it stays for Colab; an Ascend run needs its " \
              "own notebook or script"
# a Colab tie in a code line: the google.colab package, a Drive mount, or Colab's working folder `/content` as a path
# (not part of a URL or a longer path: `https://physionet.org/content/...`, `/srv/content`, `f"{root}/content"`)
_COLAB_TIE = re.compile(r"(?:^|[^\w.])(?:import\s+google\.colab|from\s+google\.colab\b|google\.colab\.)"
                        r"|\bdrive\.mount\("
                        r"|(?<![\w./:}-])/content(?![\w-])")
_MACHINE_KEYS = ("runs-on", "runner", "container", "image")
# runner / machine keys whose GPU-model or instance tokens (`L4_X_2`, `g5.12xlarge`) name NVIDIA hardware
_TOKEN_KEYS = ("runs-on", "runner", "machine", "instance-type")
_STARTED_RUNNER = re.compile(r"\$\{\{\s*needs\.([\w-]+)\.outputs\.")
_INSTANCE_TYPE_KEY = re.compile(r"(?i)instance[-_]?type$")
_MAX_BYTES = 1_000_000


def _scalars(node) -> list[str]:
    if isinstance(node, yaml.ScalarNode):
        return [str(node.value)]
    if isinstance(node, yaml.SequenceNode):
        return [s for v in node.value for s in _scalars(v)]
    if isinstance(node, yaml.MappingNode):
        return [s for k, v in node.value if isinstance(k, yaml.ScalarNode) and str(k.value) in ("labels", "image", "group")
                for s in _scalars(v)]
    return []


def _named(node) -> dict:
    if not isinstance(node, yaml.MappingNode):
        return {}
    return {str(k.value): v for k, v in node.value if isinstance(k, yaml.ScalarNode)}


def _is_other_ci(rel: str) -> bool:
    """A Lightning CI workflow (`.lightning/workflows/*.yml`) or a CircleCI config (`.circleci/*.yml`)."""
    parts = rel.replace("\\", "/").split("/")
    if not parts[-1].endswith((".yml", ".yaml")):
        return False
    return parts[-3:-1] == [".lightning", "workflows"] or (len(parts) >= 2 and parts[-2] == ".circleci")


def is_ci_file(rel: str) -> bool:
    """A CI definition whose jobs this module reads (GitHub, Azure, Lightning, CircleCI)."""
    return _is_workflow(rel) or _is_azure_pipeline(rel) or _is_other_ci(rel)


def _is_azure_pipeline(rel: str) -> bool:
    """Azure Pipelines files live anywhere (`azure-pipelines.yml`, `.azure/gpu-tests.yml`,
    `.github/azure-gpu-tests.yml`): a YAML file with `azure` in its name or folder."""
    parts = rel.lower().replace("\\", "/").split("/")
    return parts[-1].endswith((".yml", ".yaml")) and any("azure" in p for p in parts)


def _azure_jobs(root) -> list:
    """The job mappings of an Azure pipeline: `jobs: [- job: NAME ...]` at the top or under `stages:`."""
    named = _named(root)
    lists = [named.get("jobs")]
    stages = named.get("stages")
    if isinstance(stages, yaml.SequenceNode):
        lists += [_named(stage).get("jobs") for stage in stages.value]
    return [item for jobs in lists if isinstance(jobs, yaml.SequenceNode) for item in jobs.value
            if "job" in _named(item) or "deployment" in _named(item)]


def _all_scalars(node) -> list[str]:
    if isinstance(node, list):
        return [s for v in node for s in _all_scalars(v)]
    if isinstance(node, yaml.ScalarNode):
        return [str(node.value)]
    if isinstance(node, yaml.SequenceNode):
        return [s for v in node.value for s in _all_scalars(v)]
    if isinstance(node, yaml.MappingNode):
        return [s for _, v in node.value for s in _all_scalars(v)]
    return []


def azure_cuda_job(job) -> str | None:
    """Why an Azure Pipelines job runs only on NVIDIA machines (its `pool` name / demands or its `container`
    image name only CUDA: `container: {image: "...:base-cuda-py3.10-torch2.0-cuda11.7.1"}`), or None."""
    named = _named(job)
    pool, container = named.get("pool"), named.get("container")
    machine = [("pool", pool if isinstance(pool, yaml.ScalarNode) else
                [v for k, v in _named(pool).items() if k in ("name", "vmImage", "demands")]),
               ("container", container if isinstance(container, yaml.ScalarNode) else _named(container).get("image"))]
    words = [(k, s) for k, node in machine for s in _all_scalars(node) if "$(" not in s and "${{" not in s]
    return _cuda_only(words)


# NVIDIA GPU machines named by their cloud instance family or GPU model in a runner label
# (`aws-g4dn-2xlarge-use1-public-80`, `aws-g6-4xlarge-plus`, `linux-a10g`, `8-h100`): a whole `-`/`_`/`.` token (t11w)
_NVIDIA_RUNNER_TOKEN = re.compile(r"(?i)^(g4dn|g5g?|g6e?|gr6|p3(dn)?|p4de?|p5e?n?|a10g?|t4|l4|l40s?|a100|h100|h200|"
                                  r"b200|v100)$")


def _word_backends(key: str, s: str) -> set[str]:
    found = backends_in_text(s.replace("-", "_").replace(".", "_").replace(":", "_").replace("/", "_"))
    if not found and key in _TOKEN_KEYS and any(_NVIDIA_RUNNER_TOKEN.match(t)
                                                          for t in re.split(r"[-_.:/\s]+", s)):
        found = {"cuda"}
    return found


def _cuda_only(words: list[tuple[str, str]]) -> str | None:
    named_backends = [(k, s, _word_backends(k, s)) for k, s in words]
    if any(b - {"cuda"} for _, _, b in named_backends):
        return None             # a ROCm / XPU / NPU machine too: not a CUDA-only job
    why = [f"{k}: {s}" for k, s, b in named_backends if b == {"cuda"}]
    return why[0] if why else None


def _instance_types(node) -> list[str]:
    """The literal values of `*instance-type` / `*_INSTANCE_TYPE` keys anywhere in a job (an EC2 runner launcher)."""
    if isinstance(node, yaml.SequenceNode):
        return [s for v in node.value for s in _instance_types(v)]
    if not isinstance(node, yaml.MappingNode):
        return []
    out = []
    for k, v in node.value:
        if isinstance(k, yaml.ScalarNode) and _INSTANCE_TYPE_KEY.search(str(k.value)) and isinstance(v, yaml.ScalarNode):
            out.append(str(v.value))
        else:
            out += _instance_types(v)
    return [s for s in out if "${{" not in s]


def cuda_job(job, jobs: dict | None = None) -> str | None:
    """Why a workflow job (its mapping node) runs only on NVIDIA machines (`runs-on: linux.g5.4xlarge.nvidia.gpu`;
    a CircleCI `resource_class: gpu.nvidia.small`; a runner that the job `jobs[X]` it needs launches on an NVIDIA
    instance), or None."""
    named = _named(job)
    machine = {**{k: named[k] for k in ("runs-on", "container", "resource_class") if k in named},
               **{k: v for k, v in _named(named.get("with")).items() if k in _MACHINE_KEYS}}
    words: list[tuple[str, str]] = [(k, s) for k, v in machine.items() for s in _scalars(v) if "${{" not in s]
    arch = _named(named.get("with")).get("gpu-arch-type")
    if isinstance(arch, yaml.ScalarNode) and "${{" not in str(arch.value):
        words.append(("gpu-arch-type", str(arch.value)))
    circle_machine = named.get("machine")   # CircleCI: `machine: {image: ...}` (or `machine: true`)
    words += [("machine", s) for s in _scalars(_named(circle_machine).get("image"))]
    docker = named.get("docker")
    if isinstance(docker, yaml.SequenceNode):
        words += [("image", s) for item in docker.value for s in _scalars(_named(item).get("image"))]
    runs_on = named.get("runs-on")
    started = _STARTED_RUNNER.search(str(runs_on.value)) if isinstance(runs_on, yaml.ScalarNode) else None
    if started is not None and jobs and started.group(1) in jobs:
        words += [("instance-type", s) for s in _instance_types(jobs[started.group(1)])]
    return _cuda_only(words)


def _lightning_job(root) -> str | None:
    """Why a Lightning CI workflow (the whole file is one job: top-level `machine:` and `image:`) runs only on
    NVIDIA machines, or None."""
    named = _named(root)
    if "machine" not in named or "jobs" in named:
        return None
    words = [(k, s) for k in ("machine", "image") for s in _scalars(named.get(k)) if "${{" not in s]
    return _cuda_only(words)


def cuda_job_spans(text: str) -> list[tuple[int, int, str, str]]:
    """(first line, last line, job id, why) of every CUDA CI job in a workflow's text (1-based lines)."""
    try:
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except (yaml.YAMLError, ValueError, RecursionError):
        return []
    jobs = _named(root).get("jobs")
    out = []
    lightning = _lightning_job(root)
    if lightning is not None and root is not None:
        out.append((1, root.end_mark.line + 1, "workflow", lightning))
    for key, job in (jobs.value if isinstance(jobs, yaml.MappingNode) else []):
        why = cuda_job(job, _named(jobs)) if isinstance(key, yaml.ScalarNode) else None
        if why is not None:
            out.append((key.start_mark.line + 1, job.end_mark.line + 1, str(key.value), why))
    for job in _azure_jobs(root):          # Azure Pipelines: `jobs:` is a list of `- job: NAME` mappings
        why = azure_cuda_job(job)
        if why is not None:
            name = _named(job).get("job") or _named(job).get("deployment")
            out.append((job.start_mark.line + 1, job.end_mark.line + 1, str(getattr(name, "value", "")), why))
    cuda_jobs = {span[2]: span[3] for span in out}
    out += [(call.start_mark.line + 1, call.end_mark.line + 1, name, cuda_jobs[name])
            for name, call in _circle_calls(root) if name in cuda_jobs]
    return out


def _circle_calls(root) -> list:
    """(job name, entry) of each job a CircleCI workflow runs with its own parameters (`workflows: W: jobs: [-
    build_cuda: {cuda: "11.7", torch: 2.0.0}]`): the parameters are the named job's, so a CUDA job's (mmocr's
    `cuda: "10.2"` for its `resource_class: gpu.nvidia.small` job) are read in that job (tq50b)."""
    out = []
    for workflow in _named(_named(root).get("workflows")).values():
        jobs = _named(workflow).get("jobs")
        for item in jobs.value if isinstance(jobs, yaml.SequenceNode) else []:
            if isinstance(item, yaml.MappingNode) and len(item.value) == 1:
                key, params = item.value[0]
                if isinstance(key, yaml.ScalarNode) and isinstance(params, yaml.MappingNode):
                    out.append((str(key.value), item))
    return out


def ci_fact(data: bytes, rel: str) -> list[list] | None:
    """Per file, in the worker (cache FORMAT 9, in the summary's `tree` facts): the CUDA CI job spans
    (cuda_job_spans, as lists) of a GitHub workflow or Azure pipeline, read as apply_cuda_ci_jobs read it (text mode:
    universal newlines; [] over the size limit); None for any other file."""
    if not is_ci_file(rel):
        return None
    if len(data) > _MAX_BYTES:
        return []
    text = data.decode("utf-8", errors="replace").replace("\r\n", "\n").replace("\r", "\n")
    return [list(span) for span in cuda_job_spans(text)]


def apply_cuda_ci_jobs(results: list, files: Sequence[tuple[Path, str]], project=None) -> int:
    """Lower the findings inside CUDA CI jobs of GitHub workflows to info; returns how many were lowered. The job
    spans come from the file's `ci` fact (ci_fact, ProjectImports.tree); a file no fact covers is read (counted in
    `project.reads`)."""
    where = {rel: path for path, rel in files}
    lowered = 0
    for result in results:
        if not is_ci_file(result.path) or not any(f.severity != "info" and not f.data.get("context")
                                                    for f in result.findings):
            continue
        fact = (held_tree(project, result.path) or {}).get("ci")
        spans: list
        if isinstance(fact, list):
            spans = fact
        else:
            try:
                text = as_text(read_counted(project, where.get(result.path), _MAX_BYTES))
            except (OSError, SourceError):
                continue
            spans = cuda_job_spans(text)
        if not spans:
            continue
        kept = []
        for f in result.findings:
            span = next((s for s in spans if s[0] <= f.line <= s[1]), None)
            if span is None or f.severity == "info" or f.data.get("context"):
                kept.append(f)
                continue
            kept.append(as_info(f, "cuda-ci-job", _NOTE.format(job=span[2], why=span[3])))
            lowered += 1
        result.findings = kept
    return lowered


def colab_fact(data: bytes, rel: str) -> str | None:
    """Per notebook, in the worker (the summary's `tree` facts, key `colab`): the first Colab tie of its code cells
    (module doc), "" when it has none; None for any other file or a notebook that does not read."""
    if not rel.endswith(".ipynb"):
        return None
    from auditor.project.notebook import code_cells

    text = as_text(data)
    try:
        cells = code_cells(text)
    except ValueError:
        return None
    for _number, source in cells:
        for line in source.splitlines():
            if line.lstrip().startswith("#"):
                continue
            tie = _COLAB_TIE.search(line)
            if tie is not None:
                return line.strip()[:60]
    return _colab_gpu_runtime(text)


def _colab_gpu_runtime(text: str) -> str:
    """The notebook's own metadata pins it to a Colab GPU runtime: Colab writes a `colab` entry on save, and the
    runtime chosen under Runtime > Change runtime type as `"accelerator": "GPU"` / `colab.gpuType` ("T4", "A100";
    ChatTTS-Forge's `colab.en.ipynb`: "In the menu bar, select Runtime. Click Run all", a clone and a CUDA torch
    install into the Colab VM with no `/content` path; tq37, tuned on heldout40). A TPU or CPU runtime, or a notebook
    whose metadata has no `colab` entry, is no tie. The tie's words, or ""."""
    import json

    try:
        meta = json.loads(text).get("metadata")
    except (ValueError, AttributeError):
        return ""
    if not isinstance(meta, dict) or not isinstance(meta.get("colab"), dict):
        return ""
    gpu = meta["colab"].get("gpuType")
    if meta.get("accelerator") == "GPU" or isinstance(gpu, str) and gpu and not gpu.upper().startswith(("TPU", "V2-", "V5")):
        return f"notebook metadata: Colab runtime {gpu or 'GPU'}"
    return ""


def apply_colab_notebooks(results: list, files: Sequence[tuple[Path, str]], project=None) -> int:
    """Lower the findings of notebooks pinned to Colab (module doc) to info; returns how many were lowered. The tie
    comes from the file's `colab` fact; a notebook no fact covers is read (counted in `project.reads`)."""
    where = {rel: path for path, rel in files}
    lowered = 0
    for result in results:
        if not result.path.endswith(".ipynb") or all(f.severity == "info" for f in result.findings):
            continue
        tie = (held_tree(project, result.path) or {}).get("colab")
        if tie is None:
            try:
                tie = colab_fact(read_counted(project, where.get(result.path), None), result.path)
            except (OSError, SourceError):
                continue
        if not tie:
            continue
        note = _COLAB_NOTE.format(why=tie)
        # a line already read in context (a CUDA-gated branch) too: Colab runs it
        lowered += lower_findings(result, partial(above_info, ("colab-notebook", note)))
    return lowered
