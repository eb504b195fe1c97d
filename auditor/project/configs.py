"""Framework configs: YAML (accelerate, Lightning, Hydra, LLaMA-Factory / axolotl training configs, CI and
Kubernetes manifests) and JSON (DeepSpeed). Read with PyYAML's composer, which keeps every node's line, and
walked as dotted key paths (`bf16.enabled`, `trainer.accelerator`) for the catalogue's `setting` matchers;
mappings under an `env` key (and Kubernetes `- name: X` entries) are environment variables."""
from __future__ import annotations

import ast
import json
import re
import shlex
from dataclasses import replace
from typing import TYPE_CHECKING, Iterator

import yaml
from yaml.events import AliasEvent

from auditor.backend_words import NVIDIA_GPU_TYPE, backends_in_text
from auditor.project import is_github_workflow, machine_named_only
from auditor.project.conda_recipe import analyze_recipe, is_recipe_file
from auditor.project.cutlass_configs import cutlass_kernel_keys
from auditor.project.cmake_calls import SUMMARY_KEY as CMAKE_CALLS, cmake_call
from auditor.project.makefile import keep_call
from auditor.project.monai_bundle import bundle_packages
from auditor.project.spack import scan_spack_specs
from auditor.project.hits import (NCCL_VERSION_NAME_RE, Collector, cuda_member_siblings, decode_text,
                                  lower_cuda_member, matchers)
from auditor.project.requirements import (_CUDA_INDEX_RE, analyze_requirements_txt, conda_export_text,
                                          yaml_entries)
from auditor.project.shell import (COMMAND_VARIABLE_RE, DRIVER_PATH_RE, SCHEDULER_REQUESTS, _SHELLS, _URL_RE, build_variant,
                                   cmake_defines, container_file_reference, lower_ascend_selected, scan_fragment,
                                   scan_shell)
from auditor.findings import FileError, FileResult, as_info

if TYPE_CHECKING:
    from auditor.static.engine import StaticEngine

# values that are shell scripts: GitHub Actions / GitLab CI steps, compose and Kubernetes commands
_SHELL_KEYS = {"run", "script", "before_script", "after_script", "script_setup", "command", "entrypoint"}
_CI_EXPR_RE = re.compile(r"\$\{\{.*?\}\}")
_ENV_KEYS = {"env", "environment", "envs", "env_vars", "environment_variables", "variables",
             # a dev container's variables (devcontainer.json: `containerEnv`, `remoteEnv`)
             "containerenv", "remoteenv",
             # Hydra's `hydra.job.env_set` (Hydra docs, "Job Configuration": variables set for the job's run)
             "env_set",
             # a Databricks cluster spec's variables for the driver and workers (Clusters API `spark_env_vars`, tp46a)
             "spark_env_vars",
             # Beaker's experiment spec: a task's `envVars: [{name, value}]` (allenai/beaker-py TaskSpec.env_vars,
             # "List of environment variables passed to the container"; Tk-Instruct's beaker_configs, tp54a)
             "envvars"}
# a Spark setting that sets a variable in the executors' / application master's / driver pod's environment
# (`spark.executorEnv.NCCL_DEBUG`, `spark.yarn.appMasterEnv.X`, `spark.kubernetes.driverEnv.X`; Spark docs,
# "Configuration: Environment Variables"), read as that variable (tp46a)
_SPARK_ENV_KEY_RE = re.compile(r"spark\.(?:executorEnv|yarn\.appMasterEnv|kubernetes\.driverEnv)\.([A-Za-z_]\w*)")
# any other value that is an install command line (`pip_package: pip install -e .; pip install triton`)
_INSTALL_COMMAND_RE = re.compile(r"(?:^|[;&|]\s*)(?:sudo\s+)?(?:pip3?|python3?\s+-m\s+pip|uv\s+pip|conda|mamba|apt-get|apt|yum)"
                                 r"\s+install\s")
# keys whose value is a class to build by qualified name (Hydra / OmegaConf, Lightning CLI, LDM configs; SAT's
# `optimizer: type: sat.ops.FusedEmaAdam`, t19c: a dotted `type` names a class, a bare one a registry entry)
_CLASS_KEYS = {"_target_", "class_path", "target", "type",
               # openfl's plans and envoy configs (`template: openfl.component.Aggregator`, a plugin's class)
               "template"}
# words of a class path that name NVIDIA's management library (`...pynvml_monitor.PynvmlCUDADeviceMonitor`)
_NVML_WORDS = frozenset({"nvml", "pynvml", "py3nvml"})
# keys whose list items are pip requirements (see _package_list)
_PACKAGE_LIST_KEYS = {"python_packages", "pip", "pip_packages"}
_QUALNAME_RE = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)+")
# the keys of a build's layer cache refs: build-push-action's `cache-from` / `cache-to`, a dev container's
# `cacheFrom`, compose's `cache_from` / `cache_to`
_BUILD_CACHE_KEY_RE = re.compile(r"(?:^|\.)cache[-_]?(?:from|to)$", re.I)
# Past this size a YAML/JSON file is data (a tokenizer, a dataset), not a config someone edits.
MAX_CONFIG_BYTES = 512 * 1024


def _scalars(node, path: str, under_env: bool) -> Iterator[tuple[str, yaml.Node, yaml.Node, bool]]:
    """(dotted path, key node, value node, is an env mapping entry) for every scalar under node."""
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            name = str(key.value)
            if name.startswith("-"):          # Megatron-style `--distributed-backend: nccl` argument maps
                name = name.lstrip("-").replace("-", "_")
            sub = f"{path}.{name}" if path else name
            if isinstance(value, yaml.ScalarNode):
                yield sub, key, value, under_env
            else:
                yield from _scalars(value, sub, key.value.lower() in _ENV_KEYS if isinstance(key.value, str) else False)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            if isinstance(item, yaml.ScalarNode) and not under_env:
                yield path, item, item, False          # `cuda-version: [12.8]`: each item is a value of the key
                continue
            if isinstance(item, yaml.ScalarNode) and isinstance(item.value, str) and (
                    "=" in item.value or _ENV_NAME_ITEM_RE.fullmatch(item.value)):
                # compose `environment: [NVIDIA_VISIBLE_DEVICES=0]`; a bare name (`- CUDA_VISIBLE_DEVICES`) passes
                # the host's value on (compose file reference, "environment")
                yield path + _ENV_LIST_ITEM, item, item, True
                continue
            if under_env and isinstance(item, yaml.MappingNode):
                # Kubernetes / GitHub style: - {name: NCCL_DEBUG, value: INFO}
                named = {k.value: v for k, v in item.value if isinstance(k, yaml.ScalarNode)}
                name_node = named.get("name")
                if isinstance(name_node, yaml.ScalarNode):
                    # the value rides along for the one case read from it (an NVIDIA driver folder, below)
                    value_node = named.get("value")
                    yield "", name_node, value_node if isinstance(value_node, yaml.ScalarNode) else name_node, True
                    continue
            yield from _scalars(item, path, under_env)


def _replaced(value: str, new: str) -> str:
    """`cuda:1` -> `npu:1`: a device index is kept; any other value is replaced whole."""
    head, sep, index = value.partition(":")
    return f"{new}:{index}" if sep and index.isdigit() and head.lower() == "cuda" else new



# a `conda env export` made on a Mac says so in its content: its `prefix:` under /Users/, or a build or channel path
# for macOS (`osx-64`, `osx-arm64`)
_MACOS_EXPORT_RE = re.compile(r"^prefix:[ \t]*['\"]?/Users/|\bosx-(?:64|arm64)\b", re.M)
_MACOS_ENV_NOTE = "in a conda environment for macOS ({why}), which has neither CUDA nor an Ascend device: what a " \
    "Linux host installs is another file's; nothing to port here"


def _macos_export(text: str) -> str | None:
    """Why a conda environment's content says it is a Mac's (`_MACOS_EXPORT_RE`), or None."""
    found = _MACOS_EXPORT_RE.search(text)
    return None if found is None else f"it names {found.group(0).strip()}"


def analyze_config(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    if len(data) > MAX_CONFIG_BYTES:
        return FileResult(rel, lines=data.count(b"\n"))
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    if is_recipe_file(rel):
        recipe = analyze_recipe(engine, text, rel)     # conda-build `meta.yaml` / `conda_build_config.yaml` (t31a)
        if recipe is not None:
            return recipe
    is_json = rel.lower().endswith(".json")
    if not is_json and conda_export_text(text):
        # `conda list --export` under a YAML name (Apollo's look2hear.yml): one spec a line, read as requirements
        return analyze_requirements_txt(engine, data, rel)
    if rel.lower().endswith("devcontainer.json"):
        text = _jsonc_to_json(text)       # devcontainer.json is JSON with comments and trailing commas
    if is_json:
        try:
            parsed = json.loads(text)
        except ValueError as exc:
            if _named_only(rel):
                return FileResult(rel, lines=text.count("\n"))    # named for a kind, not of its schema: data
            return FileResult(rel, error=FileError(rel, "syntax", f"invalid JSON: {exc}"))
        if _manager_snapshot_schema(parsed):
            return _manager_snapshot(engine, text, rel)
        if _snapshot_file(rel) or (machine_named_only(rel) and not _dispatcher_machine(parsed)):
            return FileResult(rel, lines=text.count("\n"))        # named for a kind, not of its schema: data
    try:
        # JSON is YAML 1.2 flow syntax; the composer gives each value its line either way
        roots = list(yaml.compose_all(text.replace("\t", " ") if is_json else text, Loader=_AliasTolerantLoader))
    except yaml.YAMLError as exc:
        if is_json:
            return FileResult(rel, lines=text.count("\n"))     # valid JSON PyYAML cannot position: skip quietly
        # templated YAML (Helm, Jinja) is not YAML until rendered: not an error of the user's. A Helm template
        # whose actions, masked, leave YAML (`{{- if ... }}` lines blanked, `{{ .Values.x }}` values as
        # placeholders) is read as that YAML: its literal settings are what every rendering has (tp37)
        if "{{" in text or "{%" in text:
            masked = _masked_template_roots(text)
            if masked is None:
                return FileResult(rel, lines=text.count("\n"))
            col = Collector(engine, rel, text)
            scan_config_roots(col, masked)
            return col.done()
        recovered = _recover_yaml(text)
        if recovered is None:
            return FileResult(rel, error=FileError(rel, "syntax", str(exc).splitlines()[0]))
        # a config PyYAML rejects on a few lines (Video-LLaMA's `llama_model: "a/" or "b/"`): the rest is still
        # what the program reads once the user fixes those lines, so it is read; the error says what was not
        roots, cuts = recovered
        col = Collector(engine, rel, text)
        scan_config_roots(col, roots)
        result = col.done()
        first = _yaml_problem(exc)
        where = ", ".join(f"{ln}:{c}" for ln, c in cuts)
        result.error = FileError(rel, "syntax", f"{_yaml_message(exc)}; read without the text PyYAML cannot parse "
                                 f"(from line:column {where} to the end of each line): findings there are missing",
                                 first[0] if first else None)
        return result
    if not is_json and _conda_environment(roots):
        # `docker/HunyuanWorld.yaml`: a `conda env export` under another name is a conda environment, read as one
        from auditor.project import for_macos
        from auditor.project.requirements import analyze_conda

        result = analyze_conda(engine, data, rel)
        why = "its name says macOS" if for_macos(rel) else _macos_export(text)
        if why:     # `mac-env.yml`: what a Mac installs (tq50a), kept as a fact (review50 item 16)
            result.findings = [as_info(f, "macos-only", _MACOS_ENV_NOTE.format(why=why)) for f in result.findings]
        return result
    col = Collector(engine, rel, text)
    scan_config_roots(col, roots)
    scan_spack_specs(col, matchers(engine), roots)      # Spack environments and config scopes (tp48a)
    _gpu_service_images(col, roots)
    _superbench_config(col, roots)
    bundle_packages(col, roots)
    result = col.done()
    members = _cuda_services(roots)
    if members:
        result.findings = lower_cuda_member(result.findings, members, "compose profile")
    if _run_record(roots, rel):
        result.findings = []
        return result
    indices = _device_index_lists(roots)
    if indices:
        result.findings = [f for f in result.findings if f.name not in _DEVICE_REQUEST_RULES or f.line not in indices]
    sections = _device_sections(roots)
    if any(backends_in_text(device) == {"npu"} for _, _, device in sections):
        # `platform: vllm_npu` / `device: npu` over `gpu_count: 2`: the entry runs on the NPU, where the count
        # already counts NPUs: the Ascend configuration, nothing to port (tq39, heldout42). Only the device requests
        # and counts (NPU028): a CUDA variable set there is still ignored on Ascend and keeps its finding
        result.findings = [f for f in result.findings if f.name not in _DEVICE_REQUEST_RULES
                           or not _on_npu(sections, f.line)]
    if any(device == "cpu" for _, _, device in sections):
        # llm-on-ray's `device: cpu` model configs with `vllm: {precision: bf16}`, and its fine-tuning configs'
        # `Training: {mixed_precision: bf16, device: cpu}`: the dtype is a CPU run's choice, nothing computes on the
        # NPU (policy (e); heldout19, p15a for the top level, t16b for a nested section)
        result.findings = [f for f in result.findings if f.category != "precision"
                           or not _on_cpu(sections, f.line)]
    return result


def _snapshot_file(rel: str) -> bool:
    """A JSON file named or filed as a snapshot (project_kind reads such files as configs for ComfyUI-Manager's)."""
    parts = rel.lower().split("/")
    return "snapshot" in parts[-1] or "snapshots" in parts[:-1]


def _named_only(rel: str) -> bool:
    """A JSON file read as a config only for its name (a snapshot's, a machine's): when it does not parse, it is
    data of another kind, not a broken config."""
    return _snapshot_file(rel) or machine_named_only(rel)


def _manager_snapshot_schema(parsed: object) -> bool:
    """ComfyUI-Manager's snapshot schema: a `comfyui` commit beside a `pips` mapping, whatever the file's name."""
    return isinstance(parsed, dict) and "comfyui" in parsed and isinstance(parsed.get("pips"), dict)


def _manager_snapshot(engine: "StaticEngine", text: str, rel: str) -> FileResult:
    """A ComfyUI-Manager snapshot (glob/manager_core.py `get_current_snapshot`: `comfyui` (a commit),
    `git_custom_nodes`, `file_custom_nodes`, `pips` {requirement: ""}): `restore_snapshot` pip-installs each `pips`
    key (git_helper.py `restore_pip_snapshot`), so each is read as a line of requirements.txt (NVIDIA's CUDA runtime
    wheels pinned beside torch). The schema, not the name, chooses it: another JSON named for a snapshot (a test's
    recorded response, a Hugging Face cache's `snapshots/<hash>/`) is data, and one that is not JSON is no error."""
    col = Collector(engine, rel, text)
    try:
        root = yaml.compose(text.replace("\t", " "), Loader=_AliasTolerantLoader)
    except yaml.YAMLError:
        return col.done()
    entries = yaml_entries(root)
    pips = entries.get("pips")
    if "comfyui" in entries and isinstance(pips, yaml.MappingNode):
        for key, _value in pips.value:
            if isinstance(key, yaml.ScalarNode) and isinstance(key.value, str):
                _requirement_item(col, key)
    return col.done()


# dpdispatcher's job keys (docs "Machine parameters" / "Resources parameters"): a machine's `batch_type` beside its
# `context_type`, a resources mapping's node counts
_DISPATCHER_RESOURCES = frozenset({"number_node", "cpu_per_node", "gpu_per_node", "queue_name", "group_size"})


def _dispatcher_machine(parsed: object, depth: int = 0) -> bool:
    """A dpdispatcher / DP-GEN machine document (tp49a): some mapping, four levels deep at most, is a machine
    (`batch_type` and `context_type`) or holds `resources` with two of the scheduler's keys (`number_node`,
    `cpu_per_node`, `gpu_per_node`, `queue_name`, `group_size`)."""
    if depth > 4:
        return False
    if isinstance(parsed, list):
        return any(_dispatcher_machine(item, depth + 1) for item in parsed[:64])
    if not isinstance(parsed, dict):
        return False
    resources = parsed.get("resources")
    if "batch_type" in parsed and "context_type" in parsed or \
            isinstance(resources, dict) and len(_DISPATCHER_RESOURCES & resources.keys()) >= 2:
        return True
    return any(_dispatcher_machine(v, depth + 1) for v in list(parsed.values())[:64])


def _display_name(path: str) -> bool:
    """A GitHub Actions workflow's, job's or step's `name` / `run-name`: the title the Actions UI shows (GitHub docs,
    "Workflow syntax"), never an image or a setting, even when it names one (tp46b)."""
    parts = path.split(".")
    return path in ("name", "run-name") or len(parts) in (3, 4) and parts[0] == "jobs" and parts[-1] == "name" \
        and (len(parts) == 3 or parts[2] == "steps")


def _workflow_env_values(root) -> tuple[dict[str, str], dict[str, dict[str, str]]]:
    """A workflow's top-level `env:` values, and each job's: the top level's overridden by the job's own `env:`, for
    the steps' scripts that expand them (`echo "BASE_IMAGE=$GPU_BASE_IMAGE" >> $GITHUB_ENV` with `env: GPU_BASE_IMAGE:
    nvidia/cuda:12.8.1-base-ubuntu24.04`): the runner sets them in the steps of that job only, a job's value beating
    the workflow's (GitHub docs, "Workflow syntax": `env`, `jobs.<job_id>.env`). Literal values only (tp46b; review46
    item 2)."""
    def literal(scope) -> dict[str, str]:
        return {name: value.value for name, value in yaml_entries(scope).items()
                if isinstance(value, yaml.ScalarNode) and isinstance(value.value, str) and "${{" not in value.value}

    top = literal(yaml_entries(root).get("env"))
    return top, {name: {**top, **literal(yaml_entries(job).get("env"))}
                 for name, job in yaml_entries(yaml_entries(root).get("jobs")).items()}


# `"$schema": "https://schema.management.azure.com/schemas/2019-04-01/deploymentTemplate.json#"`
_ARM_SCHEMA_RE = re.compile(r"schema\.management\.azure\.com/schemas/.*/deployment(?:Template|Parameters)\.json",
                            re.I)


def _template_parameter_paths(root, m) -> dict[int, str]:
    """An Azure Resource Manager template's parameter values under the parameter's name: `"parameters": {"VmSize":
    {"type": "string", "defaultValue": "Standard_NV6", "allowedValues": ["Standard_NV6", "Standard_NV12"]}}` is
    read as `parameters.VmSize: Standard_NV6` (each allowed value too, and a parameter file's `"value"`): the
    template's resources take the size from `[parameters('VmSize')]` (Azure docs, "Parameters in ARM templates";
    tp46b)."""
    entries = yaml_entries(root)
    schema = entries.get("$schema")
    if not isinstance(schema, yaml.ScalarNode) or not _ARM_SCHEMA_RE.search(str(schema.value)):
        return {}
    found: dict[int, str] = {}
    for name, spec in yaml_entries(entries.get("parameters")).items():
        default = yaml_entries(spec).get("defaultValue")
        # the allowed values only beside a default that is itself reported (or none): with `defaultValue:
        # Standard_D4s_v3` the template deploys a CPU size, its NC / NV choices are options (review46 item 6)
        chosen = not isinstance(default, yaml.ScalarNode) or \
            m.match_setting(f"parameters.{name}", str(default.value)) is not None
        for key in ("defaultValue", "value", "allowedValues") if chosen else ("defaultValue", "value"):
            node = yaml_entries(spec).get(key)
            items = node.value if isinstance(node, yaml.SequenceNode) else [node]
            found.update((id(item), f"parameters.{name}") for item in items if isinstance(item, yaml.ScalarNode))
    return found


def _reserves_nvidia_gpu(service: dict) -> bool:
    """A compose service that asks for NVIDIA GPUs: `runtime: nvidia`, `gpus: all` or a device reservation
    (`deploy.resources.reservations.devices: [{driver: nvidia, capabilities: [gpu]}]`, Docker's GPU support page)."""
    runtime = service.get("runtime")
    if isinstance(runtime, yaml.ScalarNode) and str(runtime.value).lower() == "nvidia" or "gpus" in service:
        return True
    devices = yaml_entries(yaml_entries(yaml_entries(service.get("deploy")).get("resources")).get("reservations")).get("devices")
    for item in devices.value if isinstance(devices, yaml.SequenceNode) else []:
        entry = yaml_entries(item)
        driver, caps = entry.get("driver"), entry.get("capabilities")
        if isinstance(driver, yaml.ScalarNode) and str(driver.value).lower() == "nvidia" or \
                isinstance(caps, yaml.SequenceNode) and any(str(c.value).lower() == "gpu" for c in caps.value
                                                            if isinstance(c, yaml.ScalarNode)):
            return True
    return False


def _cuda_services(roots: list) -> list[tuple[int, int, str, list[str]]]:
    """(first line, last line, profile, sibling profiles) of each compose service started only under a CUDA profile
    beside services of other backends' profiles (`profiles: [cuda]` beside `[cpu]`, `[xpu]`; pd32): an Ascend host
    starts another profile. A service without profiles is started by default and keeps its findings."""
    out = []
    for root in roots:
        services = yaml_entries(root).get("services")
        if not isinstance(services, yaml.MappingNode):
            continue
        profiles: dict[str, list[str]] = {}
        for k, v in services.value:
            listed = yaml_entries(v).get("profiles")
            if isinstance(listed, yaml.SequenceNode):
                profiles[str(k.value)] = [str(p.value) for p in listed.value if isinstance(p, yaml.ScalarNode)]
        for key, service in services.value:
            own = profiles.get(str(key.value)) or []
            others = [p for name, ps in profiles.items() if name != str(key.value) for p in ps]
            siblings = [s for p in own for s in cuda_member_siblings(p, others)]
            if own and all(cuda_member_siblings(p, others) for p in own):
                out.append((key.start_mark.line + 1, service.end_mark.line + 1, "/".join(own), sorted(set(siblings))))
    return out


def _built_service_images(root) -> set[int]:
    """The `image:` nodes of compose services that also `build:` (t31d, project test55: zoobot's `image: zoobot:cuda`):
    the name compose tags its build with, not an image pulled. One named on a registry host (`image:
    ghcr.io/speaches-ai/speaches:latest-cuda-12.6.3`, tp38) is published: without a `pull_policy` Compose pulls it
    first and builds only where the registry has none (the Compose file reference, "build": "If pull_policy is
    missing from the service definition, Compose attempts to pull the image first"), so it is read as an image."""
    services = yaml_entries(yaml_entries(root).get("services")).values()
    return {id(e["image"]) for e in map(yaml_entries, services) if "build" in e and "image" in e
            and not (isinstance(e["image"].value, str) and _on_registry_host(e["image"].value))}


def _on_registry_host(ref: str) -> bool:
    """An image reference whose first component is a registry host (`ghcr.io/...`, `registry:5000/...`)."""
    first, slash, _rest = ref.partition("/")
    return bool(slash) and ("." in first or ":" in first) and "$" not in first


def _zero_quota_names(node) -> set[int]:
    """The `name:` nodes of Kueue flavor resources whose quota is zero (`- name: nvidia.com/gpu` / `nominalQuota: 0`,
    Kueue docs, "Cluster Queue"): a quota of none (tp46b)."""
    return {id(e["name"]) for e in _mappings(node) if "name" in e and isinstance(e.get("nominalQuota"), yaml.ScalarNode)
            and str(e["nominalQuota"].value).strip() in ("0", "0.0")}


def _excluded_node_values(node) -> set[int]:
    """The `values:` items of node-affinity expressions that keep a pod off the nodes named (`operator: NotIn` /
    `DoesNotExist`, Kubernetes API, "NodeSelectorRequirement"): `values: [gpu]` there asks for no GPU node (tp47a)."""
    return {id(item) for e in _mappings(node) if isinstance(e.get("operator"), yaml.ScalarNode)
            and str(e["operator"].value) in ("NotIn", "DoesNotExist") and isinstance(e.get("values"), yaml.SequenceNode)
            for item in e["values"].value}


def _mappings(node) -> Iterator[dict]:
    """The entries (`yaml_entries`) of every mapping in a YAML tree, outermost first."""
    if isinstance(node, yaml.MappingNode):
        entries = yaml_entries(node)
        yield entries
        for value in entries.values():
            yield from _mappings(value)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            yield from _mappings(item)


def _image_repositories(node) -> dict[int, str]:
    """Helm values' image blocks (`image: {repository: vllm/vllm-openai, tag: latest}`, the vLLM production-stack's
    `modelSpec: - repository: "vllm/vllm-openai"` / `tag: "latest"`): a `repository` beside a `tag` names the image
    `repository:tag` the chart runs (t35a). The `repository` value nodes, by id, with that reference."""
    found: dict[int, str] = {}
    for entries in _mappings(node):
        repository, tag = entries.get("repository"), entries.get("tag")
        if isinstance(repository, yaml.ScalarNode) and isinstance(tag, yaml.ScalarNode) \
                and isinstance(repository.value, str) and "/" in repository.value and " " not in repository.value:
            found[id(repository)] = f"{repository.value}:{tag.value}" if tag.value else repository.value
    return found


def _other_vendor_gpu_counts(node) -> set[int]:
    """The GPU counts whose sibling names another vendor's Kubernetes resource as their type (the vLLM
    production-stack's `requestGPU: 1` beside `requestGPUType: "amd.com/gpu"`; the chart's default type is
    `nvidia.com/gpu`, t34a): value nodes, by id."""
    found: set[int] = set()
    for entries in _mappings(node):
        for name, value in entries.items():
            count = entries.get(name[:-len("type")]) if name.lower().endswith("gputype") else None
            if count is not None and isinstance(value, yaml.ScalarNode) and isinstance(value.value, str) \
                    and "/" in value.value and not value.value.lower().startswith("nvidia.com/"):
                found.add(id(count))
    return found


# a GPU switch of a project's config (`use_gpu: True`) and the device index beside it (`device: 0`)
_GPU_SWITCH_KEYS = frozenset({"use_gpu", "use_cuda"})
_DEVICE_INDEX_KEYS = frozenset({"device", "device_id", "gpu_id"})


def _switched_device_indices(node) -> set[int]:
    """The device indices set beside a GPU switch that is on (FederatedScope's `use_gpu: True` / `device: 0`, its
    code building `torch.device(f"cuda:{cfg.device}")` when the switch is on): with the switch on the index names a
    CUDA device, `cuda:0`; the switch itself is a boolean device option (lead decisions 25 / 47). An index with no
    switch beside it, or the switch off, only counts (decision 26). Value nodes, by id (tp45, project test121)."""
    found: set[int] = set()
    for entries in _mappings(node):
        if not any(k.lower() in _GPU_SWITCH_KEYS and isinstance(v, yaml.ScalarNode)
                   and str(v.value).lower() in ("true", "yes", "1") for k, v in entries.items()):
            continue
        found.update(id(v) for k, v in entries.items() if k.lower() in _DEVICE_INDEX_KEYS
                     and isinstance(v, yaml.ScalarNode) and str(v.value).isdigit())
    return found


# Slurm's per-GPU amounts (`--mem-per-gpu`, `--cpus-per-gpu`; submitit's `slurm_mem_per_gpu`) as config keys
_PER_GPU_AMOUNT_RE = re.compile(r"(?:slurm_)?(?:mem|cpus)[-_]per[-_]gpu", re.I)
# a sibling key that asks for the GPUs themselves (`gpus_per_node`, `gpus`, `gres`)
_GPU_COUNT_KEY_RE = re.compile(r"(?:slurm_)?(?:gpus?(?:[-_]per[-_](?:node|task))?|gres|num_gpus)", re.I)


def _lone_per_gpu_amounts(node) -> set[int]:
    """The values of a per-GPU amount (`mem_per_gpu: 220G`, vjepa2's eval / train configs, which its launcher hands
    to submitit's `slurm_mem_per_gpu`) in a mapping with no GPU count beside it: Slurm allocates that memory per GPU
    it allocates (sbatch docs, `--mem-per-gpu`), so the job's only GPU-tied request is this one; beside a count
    (`gpus_per_node: 8`) the count is the request and the amount adds nothing (test89's labels; test97's, tp41).
    Null / zero amounts ask for nothing. Value nodes, by id."""
    found: set[int] = set()
    for entries in _mappings(node):
        if any(_GPU_COUNT_KEY_RE.fullmatch(str(k)) for k in entries):
            continue
        for name, value in entries.items():
            if _PER_GPU_AMOUNT_RE.fullmatch(str(name)) and isinstance(value, yaml.ScalarNode) \
                    and str(value.value).strip().lower() not in ("", "null", "none", "~", "0"):
                found.add(id(value))
    return found


# a GPU count per node of a queue definition (`n_gpus_per_node`, `ngpus`, `num_gpus`) and a Slurm partition key
_QUEUE_GPU_COUNT_RE = re.compile(r"(?:n_|num_)?gpus?(?:_per_node)?|ngpus", re.I)
_PARTITION_KEY_RE = re.compile(r"(?:slurm_)?partition", re.I)


def _queue_gpu_counts(node) -> set[int]:
    """The GPU count of a job runner's queue definition: a mapping that names a Slurm partition, itself or in one of
    its mappings (cosypose's job-runner config: `gpu_p1: {n_cpus_per_node: 40, n_gpus_per_node: 4, flags: {partition:
    'gpu_p1', ...}}`), and a positive GPU count per node; the runner asks Slurm for that many GPUs on each node, a
    `gpus_per_node` request (tp60a). A count with no partition beside it (verl's `trainer.n_gpus_per_node: 8`, a
    worker count; a local queue's `'auto'`) is not one. Value nodes, by id."""
    found: set[int] = set()
    for entries in _mappings(node):
        near = [entries] + [yaml_entries(v) for v in entries.values() if isinstance(v, yaml.MappingNode)]
        if not any(_PARTITION_KEY_RE.fullmatch(str(k)) and isinstance(v, yaml.ScalarNode) and str(v.value).strip()
                   for e in near for k, v in e.items()):
            continue            # (a named partition: submitit's empty `slurm_partition: ''` names none)
        found.update(id(v) for k, v in entries.items() if _QUEUE_GPU_COUNT_RE.fullmatch(str(k))
                     and isinstance(v, yaml.ScalarNode) and re.fullmatch(r"[1-9]\d*", str(v.value).strip()))
    return found


def _local_dispatch_requests(node) -> set[int]:
    """A dpdispatcher job run on the machine itself (`machine: {batch_type: shell}`, or the same in its `resources`:
    dpdispatcher's Shell batch starts the tasks directly, with no scheduler to ask, docs "Batch job systems"): its
    `gpu_per_node` / `queue_name` values ask for nothing (a count, decision 26; tp49a). Value nodes, by id."""
    found: set[int] = set()
    for entries in _mappings(node):
        resources = yaml_entries(entries.get("resources"))
        kinds = [yaml_entries(entries.get("machine")).get("batch_type"), resources.get("batch_type")]
        if any(isinstance(k, yaml.ScalarNode) and str(k.value).strip().lower() == "shell" for k in kinds):
            found.update(id(v) for k, v in resources.items() if k in ("gpu_per_node", "queue_name"))
    return found


def _llama_cpp_switches(node) -> set[int]:
    """The `flash_attn` values of a llama.cpp model's settings: a mapping that also holds llama.cpp's `n_gpu_layers`
    (llama-cpp-python's server config `models: [{"model": ..., "n_gpu_layers": -1, "flash_attn": true}]`, the
    `Llama(...)` keywords). llama.cpp's flash attention is its own kernel, built for its CPU and CANN backends too
    (ggml's `GGML_OP_FLASH_ATTN_EXT`), as its `-fa` option is read (test86's labels; test97's, tp41): value nodes,
    by id."""
    return {id(entries["flash_attn"]) for entries in _mappings(node)
            if "flash_attn" in entries and "n_gpu_layers" in entries}


def _gpu_service_images(col: Collector, roots: list) -> None:
    """The `image:` of a compose service that reserves NVIDIA GPUs, when its name says nothing (t21b, project test28:
    FireRedASR's `image: soar97/triton-fireredasr:25.06`, test4: FunASR's `soar97/triton-sensevoice`): the
    container runs CUDA code on those GPUs, so it is a CUDA image whatever its name. A service that builds its
    image (`build:`) is left to its Dockerfile's FROM; a name an image rule matches has that rule's finding."""
    m = matchers(col.engine)
    for root in roots:
        for service in yaml_entries(yaml_entries(root).get("services")).values():
            entries = yaml_entries(service)
            image = entries.get("image")
            if not isinstance(image, yaml.ScalarNode) or not isinstance(image.value, str) \
                    or "build" in entries or m.match_image(image.value) is not None \
                    or not _reserves_nvidia_gpu(entries):
                continue
            col.add(m.match_setting("compose:gpu_service_image", image.value), image.value, image.start_mark.line + 1, image.start_mark.column + 1,
                    image.start_mark.column + 1 + len(image.value))


def _merged_entries(node) -> dict:
    """A mapping's entries with those its YAML merge keys bring in (`<<: *default_local_mode`), its own winning."""
    merged: dict = {}
    for key, value in node.value if isinstance(node, yaml.MappingNode) else []:
        if isinstance(key, yaml.ScalarNode) and key.value == "<<":
            for source in value.value if isinstance(value, yaml.SequenceNode) else [value]:
                merged = {**_merged_entries(source), **merged}
    return {**merged, **yaml_entries(node)}


def _superbench_config(col: Collector, roots: list) -> None:
    """A SuperBench config (microsoft/superbenchmark's `superbench: {enable: ..., var: ..., benchmarks: ...}`, tp39,
    project test86): each benchmark entry the run executes (its key before the `:mode` suffix, `nccl-bw:gdr-only`)
    is asked of the catalogue as `superbench:benchmark` (rules/project_serving_engines_benchmark_suites.yaml: its
    CUDA micro-benchmarks and nccl-tests); an entry with `enable: false`, or left out of a top-level `enable:` list,
    does not run. A mode's `prefix:` (`CUDA_VISIBLE_DEVICES={proc_rank} numactl -N ...`) is the environment the
    benchmark's command starts with: its assignments are read as a script's."""
    m = matchers(col.engine)
    for root in roots:
        superbench = yaml_entries(root).get("superbench")
        if not isinstance(superbench, yaml.MappingNode) or not isinstance(
                benchmarks := yaml_entries(superbench).get("benchmarks"), yaml.MappingNode):
            continue
        chosen = yaml_entries(superbench).get("enable")
        chosen = {str(i.value) for i in chosen.value} if isinstance(chosen, yaml.SequenceNode) else None
        for key, entry in benchmarks.value:
            enable = _merged_entries(entry).get("enable")
            if not isinstance(key, yaml.ScalarNode) or chosen is not None and str(key.value) not in chosen \
                    or isinstance(enable, yaml.ScalarNode) and str(enable.value).lower() in ("false", "no"):
                continue
            name = str(key.value).split(":", 1)[0]
            col.add(m.match_setting("superbench:benchmark", name), name, key.start_mark.line + 1,
                    key.start_mark.column + 1, key.start_mark.column + 1 + len(str(key.value)))
        for mode in _mappings(superbench):
            prefix = mode.get("prefix")
            if "name" not in mode or not isinstance(prefix, yaml.ScalarNode) or prefix.style is not None:
                continue
            offset = 0
            for word in str(prefix.value).split():
                variable, eq, value = word.partition("=")
                if not eq or not re.fullmatch(r"[A-Za-z_]\w*", variable):
                    break                          # the command the assignments prefix
                at = str(prefix.value).index(word, offset)
                offset = at + len(word)
                col.env(variable, prefix.start_mark.line + 1, prefix.start_mark.column + 1 + at, value=value)


# the bfloat16 spellings a ComfyUI loader's dtype widget offers (a value no other widget takes)
_WIDGET_DTYPES = frozenset({"bf16", "bfloat16"})
_DEVICE_KEYS = frozenset({"device", "accelerator", "device_type"})
# where a run writes its outputs: a config holding one that names the config's own folder is that run's record
_OUTPUT_DIR_KEYS = frozenset({"output_dir", "out_dir", "outdir", "save_dir", "output_path", "save_path",
                              "checkpoint_dir", "exp_dir", "run_dir", "log_dir"})


def _run_record(roots: list, rel: str) -> bool:
    """The arguments a run saved into its own output folder (DuoAttention's `attn_patterns/<model>/<run>/config.json`,
    `json.dump(vars(args))` with `"output_dir"` that folder, t17a): a record of a finished run, not a setting anything
    reads back whole (the policy: settings nothing reads are not findings), so its `"device": "cuda:0"` is no
    finding. Only when the output key's path ends with the file's own folder (its last two names, or its one)."""
    folder = [p for p in rel.split("/")[:-1] if p not in ("", ".")]
    if not folder:
        return False
    for key, value in _top_keys(roots):
        if key in _OUTPUT_DIR_KEYS and isinstance(value, yaml.ScalarNode) and isinstance(value.value, str):
            path = [p for p in value.value.strip().rstrip("/").split("/") if p not in ("", ".")]
            tail = min(2, len(folder))
            if len(path) >= tail and path[-tail:] == folder[-tail:]:
                return True
    return False


def _top_keys(roots: list) -> list[tuple[str, yaml.Node]]:
    """(key, value node) of a one-document file's top-level mapping, scalar keys only; [] for anything else."""
    if len(roots) != 1 or not isinstance(roots[0], yaml.MappingNode):
        return []
    return [(k.value, v) for k, v in roots[0].value if isinstance(k, yaml.ScalarNode)]


def _deepspeed_config(root) -> bool:
    """A DeepSpeed JSON / YAML config: a top-level mapping with DeepSpeed's own batch or ZeRO keys."""
    return isinstance(root, yaml.MappingNode) and any(
        isinstance(k, yaml.ScalarNode) and k.value in ("zero_optimization", "train_micro_batch_size_per_gpu")
        for k, _ in root.value)


def _deepspeed_sparse_attention(col: Collector, m, root) -> None:
    """A DeepSpeed config's top-level `"sparse_attention": {"mode": "fixed", ...}` block (DeepSpeed's config
    reference): DeepSpeed Sparse Attention's Triton kernels, reported on the block's key (NPU947, tp51c)."""
    for key, value in root.value:
        if isinstance(key, yaml.ScalarNode) and key.value == "sparse_attention" \
                and isinstance(value, yaml.MappingNode) and value.value:
            mode = {k.value: v.value for k, v in value.value
                    if isinstance(k, yaml.ScalarNode) and isinstance(v, yaml.ScalarNode)}.get("mode", "fixed")
            col.add(m.match_setting("deepspeed:sparse_attention", str(mode).lower()), "sparse_attention",
                    key.start_mark.line + 1, key.start_mark.column + 1, key.end_mark.column + 1, value=str(mode))


def _device_value(mapping: yaml.MappingNode, keys: frozenset[str] = _DEVICE_KEYS) -> str | None:
    """The lower-cased device a mapping sets itself (`device: cpu`, `accelerator: CPU`), or None."""
    for k, v in mapping.value:
        if isinstance(k, yaml.ScalarNode) and k.value in keys and isinstance(v, yaml.ScalarNode):
            return str(v.value).strip().lower()
    return None


# a test harness's or launcher's per-entry platform (`platform: vllm_npu` in unified-cache-management's test_set.yaml,
# beside `server_start_config: {gpu_count: 2}`): names where the entry runs, read only for an NPU section (tq39)
_PLATFORM_KEYS = frozenset({"platform"})
_DEVICE_REQUEST_RULES = frozenset({"gpu-partition-request"})


def _device_index_lists(roots: list) -> set[int]:
    """The lines of `gpus: [6, 7]`: a list of device indices (Libra's per-rollout-instance `gpus`, Lightning's old
    `gpus=[0, 1]`) picks devices on the machine the program already runs on, and the same indices name NPUs there;
    a scheduler's GPU count is one number (`gpus: 8`, NPU028; tq45a)."""
    out: set[int] = set()
    todo = list(roots)
    while todo:
        node = todo.pop()
        if isinstance(node, yaml.MappingNode):
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode) and str(k.value).lower() == "gpus" and \
                        isinstance(v, yaml.SequenceNode) and v.value and \
                        all(isinstance(i, yaml.ScalarNode) and str(i.value).isdigit() for i in v.value):
                    out.update(i.start_mark.line + 1 for i in v.value)
                else:
                    todo.append(v)
        elif isinstance(node, yaml.SequenceNode):
            todo.extend(node.value)
    return out


def _device_sections(roots: list) -> list[tuple[int, int, str]]:
    """(first, last 1-based line, the device) of each mapping that sets a device of its own (`device: cpu` at the
    top level of a one-document config, or in a nested section such as llm-on-ray's `Training:`), or a platform that
    names only the NPU (`platform: vllm_npu`; its device is "npu")."""
    out: list[tuple[int, int, str]] = []

    def walk(node: yaml.Node) -> None:
        if isinstance(node, yaml.MappingNode):
            device = _device_value(node)
            platform = _device_value(node, _PLATFORM_KEYS) if device is None else None
            if device is None and platform is not None and backends_in_text(platform) == {"npu"}:
                device = "npu"
            if device is not None:
                end = node.end_mark
                # a block mapping ends where the next token starts: at column 0 that is the line after its last
                out.append((node.start_mark.line + 1, end.line if end.column == 0 else end.line + 1, device))
            for _, v in node.value:
                walk(v)
        elif isinstance(node, yaml.SequenceNode):
            for v in node.value:
                walk(v)

    if len(roots) == 1:
        walk(roots[0])
    return out


def _section_device(sections: list[tuple[int, int, str]], line: int) -> str | None:
    """The device of the innermost section holding `line`, or None."""
    holding = [s for s in sections if s[0] <= line <= s[1]]
    return min(holding, key=lambda s: s[1] - s[0])[2] if holding else None


def _on_cpu(sections: list[tuple[int, int, str]], line: int) -> bool:
    """The innermost section holding `line` that sets a device sets the CPU."""
    return _section_device(sections, line) == "cpu"


def _on_npu(sections: list[tuple[int, int, str]], line: int) -> bool:
    """The innermost section holding `line` that sets a device (or a platform) names only the NPU."""
    device = _section_device(sections, line)
    return device is not None and backends_in_text(device) == {"npu"}


def _conda_environment(roots: list) -> bool:
    """A YAML document shaped as a conda environment file: a mapping with a `dependencies:` list and a `channels:`
    list (what `conda env export` writes and `conda env create -f` reads, whatever the file is called)."""
    keys = dict(_top_keys(roots))
    deps = keys.get("dependencies")
    if not isinstance(deps, yaml.SequenceNode):
        return False
    if isinstance(keys.get("channels"), yaml.SequenceNode):
        return True
    # without `channels:` (conda then uses the configured channels; conda's "Creating an environment file manually"):
    # only conda's own keys, and a list of package specs with at most a `pip:` list (hmr's `hmr.yml`, tp54a), not
    # a Helm chart's or another tool's `dependencies:` of mappings
    return isinstance(keys.get("name"), yaml.ScalarNode) and set(keys) <= _CONDA_ENV_KEYS and bool(deps.value) \
        and all(isinstance(d, yaml.ScalarNode) or isinstance(d, yaml.MappingNode) and [
            k.value for k, _ in d.value if isinstance(k, yaml.ScalarNode)] == ["pip"] for d in deps.value)


# the top-level keys of a conda environment file (conda's `conda.env.env` reads these; `prefix` from `conda env export`)
_CONDA_ENV_KEYS = frozenset({"name", "channels", "dependencies", "prefix", "variables"})


_MAX_YAML_CUTS = 8


class _AliasTolerantLoader(yaml.SafeLoader):
    """PyYAML's safe composer, except that an alias whose anchor the file does not define (`<<: *DGX1` in NVIDIA
    DeepLearningExamples' `configurations.yml`, whose anchors live in another file) is the scalar `*NAME` where it
    stands, instead of an error that leaves the whole file unread (t15s)."""

    def compose_node(self, parent, index):
        if self.check_event(AliasEvent):
            event = self.peek_event()
            if event.anchor not in self.anchors:
                self.get_event()
                return yaml.ScalarNode("tag:yaml.org,2002:str", "*" + str(event.anchor), event.start_mark,
                                       event.end_mark)
        return super().compose_node(parent, index)


def _yaml_problem(exc: yaml.YAMLError) -> tuple[int, int] | None:
    """(1-based line, 1-based column) where PyYAML found the problem."""
    mark = getattr(exc, "problem_mark", None) or getattr(exc, "context_mark", None)
    return (mark.line + 1, mark.column + 1) if mark is not None else None


def _yaml_message(exc: yaml.YAMLError) -> str:
    problem = getattr(exc, "problem", None)
    context = getattr(exc, "context", None)
    return " ".join(str(p) for p in (context, problem) if p) or str(exc).splitlines()[0]


_KEY_VALUE_RE = re.compile(r"^(\s*(?:-\s+)?[\w.-]+:)\s+\S")


def _swallowing_line(lines: list[str], n: int) -> tuple[int, int] | None:
    """(line, column after its `key:`) of the `key: value` line above line n whose plain value ran on into line
    n's key, when line n is more indented than it; None otherwise."""
    indent = len(lines[n]) - len(lines[n].lstrip())
    for k in range(n - 1, -1, -1):
        stripped = lines[k].strip()
        if not stripped or stripped.startswith("#"):
            continue
        key = _KEY_VALUE_RE.match(lines[k])
        if key is None or len(lines[k]) - len(lines[k].lstrip()) >= indent or \
                stripped.split(":", 1)[1].strip()[:1] in ("'", '"', "[", "{", "|", ">", "&", "*"):
            return None
        return k, len(key.group(1))
    return None


_QUOTES = ('"""', "'''")


def _blank_docstring(lines: list[str]) -> list[tuple[int, int]]:
    """A Python-style docstring block at the top of a YAML file (t15r, tuned on project test14: a Replicate
    `cog.yaml` that opens with `\"\"\"` / `This file is used for deploying replicate demo:` / `\"\"\"`): prose, not
    YAML, so its lines are blanked (in place) and reported as cuts; nothing when the file does not open so."""
    first = next((i for i, ln in enumerate(lines) if ln.strip() and not ln.lstrip().startswith("#")), None)
    if first is None or lines[first].strip()[:3] not in _QUOTES:
        return []
    quote = lines[first].strip()[:3]
    if quote in lines[first].strip()[3:]:
        end = first
    else:
        end = next((i for i in range(first + 1, min(len(lines), first + 200)) if quote in lines[i]), -1)
    if end < 0 or lines[end].strip().rsplit(quote, 1)[1].strip():
        return []       # no closing quote, or YAML after it on the same line: not a docstring block
    for i in range(first, end + 1):
        lines[i] = ""
    return [(i + 1, 1) for i in range(first, end + 1)]


# a Go-template action (Helm): `{{ .Values.image }}`, `{{- include "x" . | nindent 4 }}`, `{{`{{queue}}`}}`, a
# `{{- /* comment */ -}}` over several lines
_TEMPLATE_ACTION_RE = re.compile(r"\{\{.*?\}\}", re.S)


def _masked_template_roots(text: str) -> list | None:
    """The documents of a Helm template with its actions masked: a line of nothing but actions (`{{- if .Values.x
    }}`, `{{- toYaml .Values.resources | nindent 12 }}`) blanked, an action inside a line replaced by as many
    underscores (a plain scalar where a value was templated), so lines and columns stay the file's. None when that
    is still not YAML, or the template has Jinja blocks (`{% ... %}`)."""
    if "{%" in text:
        return None
    masked = _TEMPLATE_ACTION_RE.sub(lambda a: re.sub(r"[^\n]", "\x00", a.group(0)), text)
    lines = ["" if "\x00" in line and not line.replace("\x00", "").strip() else line.replace("\x00", "_")
             for line in masked.split("\n")]
    try:
        return list(yaml.compose_all("\n".join(lines), Loader=_AliasTolerantLoader))
    except (yaml.YAMLError, RecursionError):
        return None


def _recover_yaml(text: str) -> tuple[list, list[tuple[int, int]]] | None:
    """YAML that PyYAML rejects on a few lines, read without the rest of each offending line: at the problem's
    line and column the line is cut (`key: "a" or "b"` keeps `key: "a"`); a line that fails again where it was
    cut is blanked. Lines keep their numbers. None when that takes more than a few cuts (the file is not YAML
    that a few bad lines spoil) or the problem has no position."""
    lines = text.split("\n")
    cuts: list[tuple[int, int]] = _blank_docstring(lines)
    for _ in range(_MAX_YAML_CUTS):
        try:
            return list(yaml.compose_all("\n".join(lines), Loader=_AliasTolerantLoader)), cuts
        except yaml.YAMLError as exc:
            mark = getattr(exc, "problem_mark", None)
            if mark is None or not 0 <= mark.line < len(lines):
                return None
            n, c = mark.line, mark.column
            above = _swallowing_line(lines, n) if "mapping values" in str(getattr(exc, "problem", "")) else None
            key = getattr(exc, "context_mark", None)
            if above is None and "simple key" in str(getattr(exc, "context", "")) and key is not None \
                    and 0 <= key.line < len(lines):
                # a bare placeholder line inside a mapping (a template config's `data:` / `  TODO`): PyYAML reports
                # where it gave up looking for the `:` (often the blank line after); the line to leave out is the
                # scalar it was scanning (tp52d)
                n, c = key.line, 0
            elif above is not None:
                # `data_type: images` then a more indented `build_info:` line: the plain scalar above runs on into
                # the key; without the value above, the indented block is its mapping, as the author meant
                n, c = above
            elif c == 0 or not lines[n][:c].strip() or (n + 1, c + 1) in cuts:
                c = 0
            if (n + 1, c + 1) in cuts:
                return None        # blanking the line changed nothing
            cuts.append((n + 1, c + 1))
            lines[n] = lines[n][:c].rstrip()
        except RecursionError:
            return None
    return None


def scan_config_text(col: Collector, text: str) -> None:
    """A config written by a script (`cat <<EOT > ds_config.json`), its text aligned with the script's lines:
    the same settings as a config file. Text YAML cannot read (a template) gives nothing."""
    try:
        roots = list(yaml.compose_all(text.replace("\t", " "), Loader=yaml.SafeLoader))
    except yaml.YAMLError:
        indented = _indented_documents(text)
        if indented is None:
            return
        roots = indented
    scan_config_roots(col, roots)


def _indented_documents(text: str) -> list | None:
    """The documents of a multi-document YAML stream written indented, as in a CI step's `run: |` block (`kubectl
    apply -f - <<EOF` then `          apiVersion: ...` / `          ---`): YAML wants `---` at the line's start, so
    each document between separator lines is read on its own, at its own lines and columns (tp46b). None when
    there is no such separator or a document does not read."""
    lines = text.split("\n")
    cuts = [n for n, line in enumerate(lines) if line.strip() == "---" and line[:1] == " "]
    if not cuts:
        return None
    roots = []
    for start, end in zip([-1, *cuts], [*cuts, len(lines)]):
        chunk = "\n" * (start + 1) + "\n".join(lines[start + 1:end])
        try:
            roots += [r for r in yaml.compose_all(chunk.replace("\t", " "), Loader=yaml.SafeLoader) if r is not None]
        except yaml.YAMLError:
            return None
    return roots


# Hydra's package header (`# @package _group_`): the file's keys sit under its config group, the folder it is in
# (`configs/training/trainer/x.yaml` holds `trainer.*`), or under the package it names
_HYDRA_PACKAGE_RE = re.compile(r"^#\s*@package\s+([\w.]+)\s*$", re.M)


def hydra_package(col: Collector) -> str:
    """The dotted prefix a Hydra config group file's keys are read under ("" for other files, and `_global_`)."""
    header = _HYDRA_PACKAGE_RE.search("\n".join(col.lines[:5]))
    if header is None or header.group(1) == "_global_":
        return ""
    folder = col.rel.replace("\\", "/").rsplit("/", 2)
    group = folder[-2].lower() if len(folder) > 1 else ""
    return header.group(1).lower().replace("_group_", group).strip(".")


def scan_config_roots(col: Collector, roots: list) -> None:
    first_finding = len(col.result.findings)
    package = hydra_package(col)
    # a file of Hydra's `hydra/launcher` config group without a header, or with Hydra 1.0's `# @package _group_`:
    # its package is the group's path (Hydra docs, "The Defaults List": a config's default package is its group)
    header = _HYDRA_PACKAGE_RE.search("\n".join(col.lines[:5]))
    launcher_package = "hydra.launcher" if "/hydra/launcher/" in "/" + col.rel.replace("\\", "/").lower() and (
        header is None or header.group(1) == "_group_") else package     # (`_group_` is the group's path too)
    engine = col.engine
    m = matchers(engine)
    blocks: list[list[str]] = []        # each `run:` block is its own script: one broken block spoils no other
    text = "\n".join(col.lines)
    block_envs: dict[int, dict[str, str]] = {}    # a workflow step's block: the `env:` its job gives it
    for root in roots:
        step_shells = _step_shells(root)
        runner_paths = _matrix_runner_paths(root)
        cuda_matrix_paths = _cuda_matrix_paths(root)
        option_paths = _matrix_option_paths(root)
        disabled = _disabled_sections(root, "")
        deepspeed = _deepspeed_config(root)
        if deepspeed:
            _deepspeed_sparse_attention(col, m, root)
        # `"gemm_op_tag": ["128_128_32_64_64_32_1_5_RowMajor_RowMajor_RowMajor", ...]`: CUTLASS GEMM kernels (tp52b)
        for key, name in cutlass_kernel_keys(text, [root]):
            col.add(m.match_setting("cutlass:gemm_kernel", name), str(key.value), key.start_mark.line + 1,
                    key.start_mark.column + 1, key.end_mark.column + 1, value=name)
        seen: set[int] = set()
        built = _built_service_images(root)
        other_vendor_counts = _other_vendor_gpu_counts(root)
        llama_cpp_switches = _llama_cpp_switches(root)
        lone_per_gpu_amounts = _lone_per_gpu_amounts(root)
        queue_gpu_counts = _queue_gpu_counts(root)
        zero_quotas = _zero_quota_names(root) | _excluded_node_values(root) | _local_dispatch_requests(root)
        switched_indices = _switched_device_indices(root)
        image_repositories = _image_repositories(root)
        parameter_paths = _template_parameter_paths(root, m)
        # a GitHub Actions workflow's own document (not a manifest a step feeds to kubectl)
        workflow = is_github_workflow(col.rel) and "jobs" in yaml_entries(root)
        workflow_env, job_envs = _workflow_env_values(root) if workflow else ({}, {})
        # a SkyPilot task: its top-level `setup:` script runs once before `run:` (SkyPilot's task YAML reference)
        sky_task = isinstance(yaml_entries(root).get("run"), yaml.ScalarNode) and "resources" in yaml_entries(root)
        vectors = _argument_vectors(root)
        in_vectors = {id(item) for vector in vectors for item in vector}
        blocks += [_vector_blocks(col.lines, vector) for vector in vectors]
        for path, key, value, env_entry in _scalars(root, "", False):
            if id(value) in seen and key is not value:
                continue          # a node merged in again through a YAML anchor (`<<: *wt103`): reported once
            seen.add(id(value))
            if id(value) in in_vectors:
                continue          # an exec-form `command:` / `args:` item: read with its vector, as one command
            if workflow and _display_name(path):
                continue          # `name: Publish anibali/pytorch:1.13.1-cuda11.7-...`: the run's title in the UI
            path = parameter_paths.get(id(value), path)
            if isinstance(value, yaml.ScalarNode) and value.style == "|" and (_embeds_config(path)
                                                                             or _json_object_block(value)):
                embedded = _embedded_config(col, value)
                if embedded is not None:
                    scan_config_roots(col, [embedded])      # KubeRay's `serveConfigV2: |` Serve application config
                    continue
            # a key in any case: a reusable workflow's `with: {SCRIPT: |}` input is the script its job runs (t15l)
            if isinstance(value.value, str) and (path.rsplit(".", 1)[-1].lower() in _SHELL_KEYS or _step_bash(path)
                                                 or path == "setup" and sky_task
                                                 or _launcher_setup(f"{launcher_package}.{path}"
                                                                    if launcher_package else path)
                                                 or _INSTALL_COMMAND_RE.search(value.value)):
                interpreter = step_shells.get(id(value), "bash")
                if interpreter.startswith("python"):
                    _python_block(col, value)    # `shell: python` step: the Python pass reads its code
                elif not interpreter.startswith(("pwsh", "powershell", "cmd")):
                    blocks.append([""] * len(col.lines))
                    _copy_lines(col.lines, blocks[-1], key, value)
                    parts = path.split(".")
                    block_envs[len(blocks) - 1] = job_envs.get(parts[1], workflow_env) \
                        if parts[0] == "jobs" and len(parts) > 1 else workflow_env
                else:
                    _windows_block(col, key, value)       # PowerShell / cmd: only the CUDA toolkit's path
                continue
            if path.lower().endswith("runargs"):
                continue                                 # devcontainer `runArgs`: docker options, read below
            if path.lower().endswith(".build.dockerfile") and isinstance(value.value, str):
                # a compose service built from a CUDA-named Dockerfile (`dockerfile: cuda.Dockerfile`)
                container_file_reference(col, m, value.value, value.start_mark.line + 1, value.start_mark.column + 1)
                continue
            if path.lower().endswith(".with.build-args") and isinstance(value.value, str):
                _build_args(col, m, value)               # docker/build-push-action's `build-args: | CUDA_VERSION=...`
                continue
            if path.lower().endswith(".with.channels") and isinstance(value.value, str):
                _miniconda_channels(col, m, value)       # setup-miniconda's `channels: pytorch, nvidia, conda-forge`
                continue
            if path.lower().endswith((".with.tags", ".with.images")):
                # docker/build-push-action's and metadata-action's `tags:` / `images:` name the image the step builds
                # and pushes (`dptechnology/unimol:latest-pytorch1.11.0-cuda11.3`), not one it pulls: its Dockerfile
                # holds the CUDA base (t36b)
                continue
            if _BUILD_CACHE_KEY_RE.search(path):
                # a build's layer cache (build-push-action's `cache-from: type=registry,ref=...:cache-latest-cuda121`,
                # `cache-to:`; a dev container's `build.cacheFrom`, compose's `build.cache_from`): a registry ref the
                # builder reads layers from or writes them to, named after the image it builds; nothing runs from
                # it (docker docs, "Cache storage backends"; tp41, project test94 / test97)
                continue
            if path.endswith(".options") and (".container." in f".{path}" or ".services." in f".{path}"):
                _docker_options(col, m, value)           # GitHub Actions `container: options: --gpus all`
                continue
            if path.lower() == "docker.gpu_args" and isinstance(value.value, str):
                # an MLCube's `docker: gpu_args: --runtime=nvidia` / `--gpus all`: the options MLCube's docker runner
                # adds to `docker run` when the cube runs on a GPU (mlcommons/mlcube, mlcube_docker's config;
                # medperf's model cubes; tp42, project test104)
                _docker_options(col, m, value)
                continue
            if env_entry and isinstance(value.value, str) and (held := _held_command(col.lines, key, value)):
                blocks.append(held)          # `CIBW_BEFORE_BUILD: "env CUDA_VERSION=... build.sh"`, `- CLI_ARGS=--xformers`
            if env_entry and path.endswith(_ENV_LIST_ITEM):
                _env_list_item(col, m, value)
                continue
            if env_entry:
                if key is not value and isinstance(value.value, str) and DRIVER_PATH_RE.search(value.value):
                    # `- name: NVIDIA_INSTALL_DIR_HOST` / `value: /home/kubernetes/bin/nvidia` (GKE's driver
                    # installer): the folder is what changes on Ascend; the installer's own variable names are not
                    # read by the CUDA stack (t15h)
                    _value_text(col, m, path, value)
                    continue
                col.env(str(key.value), key.start_mark.line + 1, key.start_mark.column + 1,
                        value=None if key is value else str(value.value))
                if not path:
                    continue                             # a Kubernetes `- name: X` / `value: Y` item: as before
                if key is not value and _env_build_parameter(col, m, str(key.value), value):
                    continue
                if key is not value and _env_setting(col, m, str(key.value), value):
                    continue
                if value is not key and isinstance(value.value, str) and value.start_mark.line == value.end_mark.line:
                    _value_text(col, m, path, value)     # `PIP_INSTALL_ARGS: -f .../whl/nightly/cu118/...`
                elif value is not key and isinstance(value.value, str):
                    # a block of assignments (cibuildwheel's `CIBW_ENVIRONMENT: |` with `PATH=...:/usr/local/cuda-${{
                    # matrix.cuda_version }}/bin \` lines, pennylane-lightning; t33b): each line's toolkit paths
                    for n in range(value.start_mark.line, min(value.end_mark.line + 1, len(col.lines))):
                        if "/usr/local/cuda" in col.lines[n] or DRIVER_PATH_RE.search(col.lines[n]):
                            scan_fragment(col, col.lines[n], n + 1, 1, options=False)
                continue
            spark_env = _SPARK_ENV_KEY_RE.fullmatch(str(key.value)) if key is not value else None
            if spark_env is not None:
                line, c = key.start_mark.line + 1, key.start_mark.column + 1
                c += col.lines[line - 1][c - 1:c] in ("'", '"')
                col.env(spark_env.group(1), line, c + spark_env.start(1), value=str(value.value))
                continue
            if isinstance(value.value, str) and value.value.startswith("$") and _bundle_expression(col, value):
                continue        # MONAI bundle `"device": "$torch.device('cuda:0' if ...)"`: read as the Python it is
            raw = value.value if isinstance(value.value, str) else str(value.value)
            if key is value and isinstance(value.value, str) and _package_list(path):
                _requirement_item(col, value)            # Cog `build: python_packages: - "torch==1.10.0"`
                continue
            if key is not value and isinstance(value.value, str) and ".matrix." in f".{path}" and _package_list(path):
                # a matrix entry's package: the job that picks this entry installs it; one variant of several
                # (`openmm-pkg: "openmm"` beside `"openmm[cuda12]"`), so worth knowing (info)
                before = len(col.result.findings)
                _requirement_item(col, value)
                col.result.findings[before:] = [replace(f, severity="info") for f in col.result.findings[before:]]
                continue
            if key is value and isinstance(value.value, str) and _system_package_list(path):
                # Cog `build: system_packages:`, an installer's `PACKAGES: - nvidia-jetpack` (Seeed's jetson-examples
                # config.yaml, which its utils.sh hands to `apt install`; tp40): read as apt packages
                col.add(m.match_requirement("apt:" + raw.strip()), raw.strip(), value.start_mark.line + 1,
                        value.start_mark.column + 1)
                continue
            if key is value and _L4T_KEY_RE.fullmatch(path.rsplit(".", 1)[-1].lower().replace("-", "_")):
                continue     # one release of a list of Jetson releases: the list is one gate, on its key (_version_keys)
            if path.endswith("widgets_values") and key is value and raw.lower() in _WIDGET_DTYPES:
                # a ComfyUI workflow node's widget values are its inputs without their names: a loader's weight
                # dtype widget (`LoadFlux2Model` ["FLUX.2-dev", "sequential_cpu_offload", "bf16"]) is its dtype
                # (t21b, project test28: VideoX-Fun's comfyui workflows)
                col.add(m.match_setting("dtype", raw), f"dtype {raw}", value.start_mark.line + 1,
                        value.start_mark.column + 1, value=raw)
                continue
            if isinstance(value.value, str) and _CDI_NVIDIA_RE.fullmatch(raw.strip()):
                # a CDI device name (compose `driver: cdi` with `device_ids: - nvidia.com/gpu=all`, tp38): NVIDIA's
                # container toolkit generates the `nvidia.com/gpu` CDI specification, the same GPU request
                col.add(m.match_setting("nvidia.com/gpu", raw.strip().partition("=")[2]), raw.strip(),
                        value.start_mark.line + 1, value.start_mark.column + 1)
                continue
            if path.rsplit(".", 1)[-1] == "image" and id(value) in built:
                continue    # `image: zoobot:cuda` beside `build:` names what compose builds: its Dockerfile's FROM says
            if id(value) in image_repositories:          # Helm `repository:` + `tag:`
                line, c = value.start_mark.line + 1, value.start_mark.column + 1
                c += col.lines[line - 1][c - 1:c] in ("'", '"')
                col.add(m.match_image(image_repositories[id(value)]), raw, line, c, c + len(raw),
                        **_other_vendor_image(raw))
                continue
            if path.lower().endswith("images.newname"):
                # kustomize's image override (`images: - name: tritonserver-2` / `newName: nvcr.io/nvidia/
                # tritonserver` / `newTag: "23.04-py3"`): the image every manifest's `tritonserver-2` becomes
                # (kubectl docs, "Kustomize: images"; modelmesh-serving, kserve, gpu-operator; tp41)
                col.add(m.match_image(raw), raw, value.start_mark.line + 1, value.start_mark.column + 1,
                        **_other_vendor_image(raw))
                continue
            if path.rsplit(".", 1)[-1] == "image":       # compose, Kubernetes, CI `container: image:`
                col.add(m.match_image(raw), raw, value.start_mark.line + 1, value.start_mark.column + 1,
                        **_other_vendor_image(raw))
                continue
            if path.rsplit(".", 1)[-1] in _CLASS_KEYS and _QUALNAME_RE.fullmatch(raw):
                # Hydra `_target_: apex.optimizers.FusedAdam`, Lightning CLI `class_path: ...`: the config builds
                # that class, so the Python pass's rule for the name applies
                qualified = engine.compiled.match_qualname(raw)
                # a rule that wants an argument's value (`Trainer(precision=16)`, NPU256) does not hold for the
                # class named alone (the config's other keys are read as settings); a condition on an argument's
                # presence only (NPU600's `params`, which Hydra's partial instantiation supplies) is kept
                line, c = value.start_mark.line + 1, value.start_mark.column + 1
                c += col.lines[line - 1][c - 1:c] in ("'", '"')
                if qualified is not None and "values" not in (qualified.rule.when.get("arg") or {}):
                    col.add(qualified.rule, raw, line, c, c + len(raw))
                elif qualified is None and _names_nvml(raw):
                    # pd42 (test48: openfl's envoy `template: ...pynvml_monitor.PynvmlCUDADeviceMonitor`): a class
                    # built on NVML, chosen by name (lead decision 34); pynvml's own rule and severity
                    col.add(m.match_requirement("pynvml"), "pynvml", line, c, c + len(raw),
                            note=f" (the config builds `{raw}`, a class built on NVML)")
                continue
            if id(value) in zero_quotas:
                continue          # a Kueue flavor's `- name: nvidia.com/gpu` with `nominalQuota: 0`, a NotIn node
                # affinity value: no GPU asked for
            if id(value) in switched_indices:
                line, c = value.start_mark.line + 1, value.start_mark.column + 1
                col.add(m.match_setting(path, f"cuda:{raw}"), f"{path}: {raw}", line, c, c + len(raw), value=raw,
                        note=" (a CUDA device index: the GPU switch beside it is on)")
                continue
            if isinstance(value.value, str) and _inline_json_settings(col, m, path, value):
                continue     # vLLM's `compilation-config: '{"cudagraph_mode": "PIECEWISE"}'`: the object's own keys
            default = _DEFAULTED_RE.fullmatch(raw.strip())
            if default:
                raw = default.group(1)       # compose / env files: `BACKEND: ${BACKEND:-cuda}` is cuda unless set
            # a matrix value a job's `runs-on: ${{ matrix.config.runner }}` reads is that job's runner label (t16d)
            rule = m.match_setting("runs-on", raw) if path in runner_paths else m.match_setting(path, raw)
            if rule is None and path in cuda_matrix_paths and _MATRIX_CUDA_RELEASE_RE.fullmatch(raw.strip()):
                rule = m.match_setting("cuda_version", raw)     # `target: ["11.0", "11.2"]` (_cuda_matrix_paths)
            if rule is None and path in option_paths:
                rule = m.match_command(f"{option_paths[path]}={raw}")    # `--features ${{ matrix.features }}`
            elif rule is not None and rule.code == "NPU019" and workflow and _MATRIX_PATH_RE.match(path) \
                    and path not in option_paths:
                rule = None     # a CI matrix leg's name (`device: [cpu, gpu]`): its runner and the steps that read
                # it choose; the key's name chooses no device (tp49a; test136 / test138's labels). A leg a step
                # hands to an option (`--device ${{ matrix.device }}`) is that option's device (review49 item 8)
            if rule is None and package:
                rule = m.match_setting(f"{package}.{path}", raw)      # a Hydra group file's keys (t15t)
            name = path.rsplit(".", 1)[-1]
            if rule is not None and rule.code in ("NPU021", "NPU019") and name in _OWN_CUDA_SWITCHES:
                rule = None     # `use_cuda: 1` in ClearerVoice's model YAMLs: the project's own device option that its
                # argparse reads, not the build's `USE_CUDA=1` (heldout17, after the end draw); nor a device choice:
                # pymarl's `use_cuda: True` is a boolean device option whose gated calls (`"cuda" if args.use_cuda
                # else "cpu"`) are the findings (lead decision 25, t26c)
            if rule is not None and deepspeed and "." not in path and name.endswith("_dtype"):
                rule = None     # a top-level `gradient_accumulation_dtype: bf16` in a DeepSpeed config: DeepSpeed reads
                # its dtypes from `data_types.grad_accum_dtype`, `bf16` / `fp16` and `*communication_data_type`
                # (deepspeed/runtime/constants.py), so the key is read by nothing (test29's TencentPretrain)
            if rule is None and id(value) in lone_per_gpu_amounts:
                rule = m.match_setting("gpus_per_node", "1")    # the job's GPU request (_lone_per_gpu_amounts)
            if rule is None and id(value) in queue_gpu_counts:
                rule = m.match_setting("gpus_per_node", raw)    # a queue definition's GPUs per node (_queue_gpu_counts)
            if rule is not None and id(value) in llama_cpp_switches:
                rule = None     # llama.cpp's own flash attention (_llama_cpp_switches)
            if rule is not None and id(value) in other_vendor_counts:
                rule = None     # `requestGPU: 1` beside `requestGPUType: "amd.com/gpu"`: another vendor's GPUs
            if rule is not None and rule.code == "NPU124" and name == "gpu_ids" and not _accelerate_config(col.lines):
                rule = None     # `infer_cfgs.gpu_ids` of a project's own config: device indices, not accelerate's
            if rule is not None and rule.code == "NPU317" and name == "amp_level" and not _trainer_key(path):
                rule = None     # `Global.amp_level: O2` (PaddleOCR's configs): Paddle's AMP level, policy (d); apex's
                # is Lightning's `trainer.amp_level` (tq45b)
            if rule is not None and rule.code == "NPU020" and name == "accelerator" and not _trainer_key(path):
                # `executor.accelerator: cuda` (torchchat's device profiles): another tool's key, not Lightning's
                # trainer; a CUDA value there is a device setting like `device: cuda`
                rule = m.match_setting("device", raw) if raw.lower() == "cuda" else None
            # (`CUDA_VER: '12.9.2'`, RAPIDS' matrix entries, is the same name shortened; tp40)
            build_parameter = rule is not None and name.isupper() and name.endswith(("_VERSION", "_VER")) and (
                "CUDA" in name or "CUDNN" in name) and any(ch.isdigit() for ch in raw)
            # `CUDA_VERSION: 12.6.3` in a build matrix (composer's docker/build_matrix.yaml feeds `docker build
            # --build-arg`): the CUDA version an image is built for, as `ARG CUDA_VERSION=12.6.3` (info)
            if not build_parameter and rule is not None and name.isupper() and (name.endswith("_VERSION") or (
                    rule.code in SCHEDULER_REQUESTS and raw.isdigit())):
                # an environment-style variable (`CUDA_VERSION: 12.4.1` in a build matrix, `GPUS_PER_NODE: 2`
                # passed to a script): read as the shell reader reads `NAME=value`, a marker or a count, not a setting
                rule = None
                continue
            if rule is None and isinstance(value.value, str) and value.start_mark.line == value.end_mark.line:
                _value_text(col, m, path, value)         # image names, CUDA index URLs and toolkit paths in a value
                continue
            if rule is None and isinstance(value.value, str) and "-D" in value.value:
                # a block of build flags (`cmake_flags: >- -DGGML_CUDA=ON ...`): CMake switches, line by line
                for n in range(value.start_mark.line, min(value.end_mark.line + 1, len(col.lines))):
                    cmake_defines(col, col.lines[n], lambda off, n=n: (n + 1, off + 1))
                continue
            if rule is not None:
                # a CI matrix entry (`strategy.matrix.cuda_version`) builds for a version; it changes nothing at run time
                # so does a compose build argument (`build: args: CUDA_VER: 12.9.0`): the image's FROM is the error
                severity = "info" if ".matrix." in f".{path}." or ".build.args." in f".{path}." \
                    or build_parameter else None
                if rule.code == "NPU019" and "profil" in path.lower():
                    # torchtune `profiler: {cuda: True}` adds the CUDA activity to torch.profiler: without CUDA the
                    # profiler warns and traces the CPU only (runs, differs); nothing at all in a disabled profiler
                    severity = "info" if path.rsplit(".", 1)[0] in disabled else "warning"
                note = " (the profiler's CUDA activity)" if rule.code == "NPU019" and "profil" in path.lower() else ""
                line, c = value.start_mark.line + 1, value.start_mark.column + 1
                quoted = col.lines[line - 1][c - 1:c] in ("'", '"')
                start = c + 1 if quoted else c
                if default:
                    start += max(str(value.value).find("-" + raw), str(value.value).find("=" + raw)) + 1
                # a switch (`cuda: True`) has no device value to rewrite
                # nor Isaac Gym's `pipeline: gpu`, whose values are `cpu` / `gpu` (tp41)
                edit = None if raw.lower() in ("true", "false") or name == "pipeline" else (
                    lambda new, l=line, s=start, v=raw: {"line": l, "col": s, "end_col": s + len(v),
                                                         "text": _replaced(v, new)})
                col.add(rule, f"{path}: {raw}", line, start, start + len(raw), value=raw, severity=severity,
                        edit=edit, note=note)
    for root in roots:
        _run_args(col, m, root)
        if col.rel.lower().endswith("devcontainer.json"):
            _devcontainer_features(col, m, root)
        _docker_runtimes(col, m, root)
        _argument_lists(col, m, root)
        _version_keys(col, m, root, "")
        _packer_steps(col, m, root)
        _installed_packages(col, m, root)
    held_env: dict[str, str] = {}
    for index, shell_lines in enumerate(blocks):
        # the workflow / job `env:` of the step (a script's own assignment of the name wins): the last job's values,
        # unless its script changed them, do not reach the next job's steps
        for held_name, held_value in held_env.items():
            if col.script_vars.get(held_name) == held_value:
                del col.script_vars[held_name]
        held_env = block_envs.get(index, {})
        col.script_vars.update(held_env)
        # CI expressions (`${{ matrix.cuda-version }}`) are not shell: same-length placeholders keep the columns
        script = _CI_EXPR_RE.sub(_ci_placeholder, "\n".join(shell_lines).rstrip("\n"))
        before = len(col.result.findings)
        scan_shell(col, script)
        if len(col.result.findings) > before:
            # a step that selects Ascend devices itself (`export ASCEND_RT_VISIBLE_DEVICES=14,15`, then `vllm serve`)
            col.result.findings[before:] = lower_ascend_selected(col.result.findings[before:], script)
    spans = [span for root in roots for span in backend_entries(root)]
    if spans:
        col.result.findings[first_finding:] = [_in_backend_entry(f, spans)
                                               for f in col.result.findings[first_finding:]]
    for root in roots:
        why = nvidia_cloud_task(root)
        if why is not None:
            # policy (p): the task's setup / run and its image run only on the NVIDIA node it asks for
            first, last = root.start_mark.line + 1, root.end_mark.line + 1
            col.result.findings[first_finding:] = [
                as_info(f, "cuda-cloud-task", _CLOUD_TASK_NOTE.format(why=why))
                if f.severity != "info" and first <= f.line <= last else f for f in col.result.findings[first_finding:]]
    docs = [span for root in roots for span in _docs_jobs(root)] if is_github_workflow(col.rel) else []
    if docs:
        # torch installed to build the documentation (autodoc) runs no model: no torch-npu pairing note, as for a
        # docs requirements file (requirements.docs_build_requirements; pd43, EasyTemporalPointProcess's docs job)
        col.result.findings[first_finding:] = [
            f for f in col.result.findings[first_finding:]
            if not (f.name == "torch-pin-needs-torch-npu" and any(a <= f.line <= b for a, b in docs))]


_CLOUD_TASK_NOTE = "in a SkyPilot task pinned to NVIDIA machines ({why}): its setup and run happen only on the " \
                   "NVIDIA node it asks for; it stays for that cloud, and an Ascend launch needs its own task " \
                   "(policy (p))"


def _accelerator_names(node) -> list[str] | None:
    """The GPU types of a SkyPilot `accelerators:` value (`H100-SXM`, `A100-80GB:1`, a list of them, or a
    `{A100: 8, H100: 8}` mapping); None for anything else."""
    if isinstance(node, yaml.ScalarNode):
        return [str(node.value).strip()]
    if isinstance(node, yaml.SequenceNode):
        names = [_accelerator_names(item) for item in node.value]
        return None if any(n is None for n in names) else [x for n in names for x in n or []]
    if isinstance(node, yaml.MappingNode):
        return [str(k.value).strip() for k, _ in node.value if isinstance(k, yaml.ScalarNode)]
    return None


def nvidia_cloud_task(root) -> str | None:
    """Why a SkyPilot task (top-level `resources:` beside `run:` / `setup:`) runs only on NVIDIA machines: its
    `resources.accelerators` (or every `any_of` / `ordered` alternative's) names only NVIDIA GPU types
    (`H100-SXM`, `A100-80GB:1`); None for a task whose accelerators are absent, a variable or another backend's."""
    entries = yaml_entries(root)
    resources = entries.get("resources")
    if not isinstance(resources, yaml.MappingNode) or not ({"run", "setup"} & set(entries)):
        return None
    held = yaml_entries(resources)
    choices = [held] + [yaml_entries(alt) for key in ("any_of", "ordered")
                        for alt in getattr(held.get(key), "value", [])]
    names = [_accelerator_names(c["accelerators"]) for c in choices if "accelerators" in c]
    flat = [n for group in names for n in group or []]
    if not flat or any(group is None for group in names) or not all(NVIDIA_GPU_TYPE.match(n) for n in flat):
        return None
    return f"accelerators: {', '.join(flat)}"


# commands that build documentation: Sphinx, MkDocs, Jupyter Book, a docs Makefile's html target
_DOCS_BUILD_RE = re.compile(r"\bsphinx-build\b|\bmkdocs\s+(?:build|gh-deploy)\b|\bjupyter-book\s+build\b"
                            r"|\bmake\s+(?:-C\s+docs?\S*\s+)?(?:html|docs)\b")


def _docs_jobs(root) -> list[tuple[int, int]]:
    """(first line, last line) of each GitHub workflow job whose steps build documentation (`_DOCS_BUILD_RE`) and run
    nothing else that tests (no pytest / unittest / tox step)."""
    jobs = yaml_entries(root).get("jobs")
    out = []
    for key, job in (jobs.value if isinstance(jobs, yaml.MappingNode) else []):
        runs = [v.value for _, _, v, _ in _scalars(job, "", False) if isinstance(v.value, str)]
        if any(_DOCS_BUILD_RE.search(r) for r in runs) and not any(re.search(r"\b(?:pytest|unittest|tox|nox)\b", r)
                                                                   for r in runs):
            out.append((key.start_mark.line + 1, job.end_mark.line + 1))
    return out


# a CI matrix entry named for the package a job installs (openmm-ml's `openmm-pkg: "openmm[cuda12]"`, which its
# step runs as `pip install ${{ matrix.openmm-pkg }}`; tp43, project test110)
_MATRIX_PACKAGE_KEY_RE = re.compile(r"\w+[-_](?:pkg|package)", re.I)


def _package_list(path: str) -> bool:
    """A list of pip requirements in a platform's config: Cog's `build.python_packages`, Ray's `runtime_env.pip`
    (or `pip.packages`), BentoML's `python.packages`; a CI matrix's `<name>-pkg` entry."""
    parts = path.lower().split(".")
    return parts[-1] in _PACKAGE_LIST_KEYS or parts[-2:] in (["python", "packages"], ["pip", "packages"]) or (
        "matrix" in parts and _MATRIX_PACKAGE_KEY_RE.fullmatch(parts[-1]) is not None)


def _requirement_item(col: Collector, value) -> None:
    """One item of such a list: read as a line of requirements.txt (a pin, a CUDA build, an extra, a VCS URL)."""
    from auditor.project.requirements import analyze_requirement_item

    line = value.start_mark.line + 1
    if value.start_mark.line == value.end_mark.line and line <= len(col.lines):
        analyze_requirement_item(col, line, str(value.value).strip())


_BUILD_ARG_RE = re.compile(r"^\s*-?\s*([A-Za-z_]\w*)=(\S.*?)\s*$")


def _build_args(col: Collector, m, value) -> None:
    """A CI step's `with: build-args:` (docker/build-push-action: one `NAME=value` a line) read as the `--build-arg`s
    of `docker build`: `CUDA_VERSION=${{ matrix.cuda_version }}` is the CUDA version the image is built for (t15v,
    index-tts's docker-publish workflow)."""
    from auditor.project.shell import _cuda_version_parameter

    for n in range(value.start_mark.line, min(value.end_mark.line + 1, len(col.lines))):
        arg = _BUILD_ARG_RE.match(col.lines[n])
        if arg is not None:
            _cuda_version_parameter(col, m, arg.group(1), arg.group(2), n + 1, arg.start(1) + 1)
            build_variant(col, m, arg.group(1), arg.group(2), n + 1, arg.start(1) + 1)


def _env_build_parameter(col: Collector, m, name: str, value) -> bool:
    """A workflow's or compose file's `env: CUDA_VERSION: "11.7"`: the CUDA version the job builds or installs for,
    a build parameter like `ARG CUDA_VERSION=12.4.1` (NPU018, information); the environment rules leave
    `*_VERSION` names alone (markers no library reads)."""
    raw = str(value.value) if isinstance(value, yaml.ScalarNode) else ""
    if not (name.isupper() and name.endswith("_VERSION") and ("CUDA" in name or "CUDNN" in name)
            and any(ch.isdigit() for ch in raw) and "$" not in raw):
        return False
    rule = m.match_setting(name.lower(), raw)
    if rule is None or rule.code != "NPU018":
        return False
    line, c = value.start_mark.line + 1, value.start_mark.column + 1
    c += (col.lines[line - 1] if line <= len(col.lines) else "")[c - 1:c] in ("'", '"')
    col.add(rule, f"{name}: {raw}", line, c, c + len(raw), value=raw, severity="info",
            note=" (a build parameter: the CUDA version this job builds or installs for)")
    return True


# the path suffix `_scalars` gives a `NAME=value` item of an environment list
_ENV_LIST_ITEM = "[]"
_ENV_ITEM_RE = re.compile(r"([A-Za-z_][A-Za-z0-9_]*)(?:=(.*))?", re.S)
_ENV_NAME_ITEM_RE = re.compile(r"[A-Z_][A-Z0-9_]*")


def _env_list_item(col: Collector, m, item) -> None:
    """A compose file's list form of `environment:` (`- NVIDIA_VISIBLE_DEVICES=0`, `- "FLASH_ATTN=1"`): the same
    variable, and the same setting, as the mapping form `NVIDIA_VISIBLE_DEVICES: 0` (t15j)."""
    found = _ENV_ITEM_RE.fullmatch(str(item.value))
    line, c = item.start_mark.line + 1, item.start_mark.column + 1
    if found is None or item.start_mark.line != item.end_mark.line or line > len(col.lines):
        return
    c += col.lines[line - 1][c - 1:c] in ("'", '"')
    name, raw = found.group(1), (found.group(2) or "").strip()
    if found.group(2) is None:
        col.env(name, line, c)          # `- CUDA_VISIBLE_DEVICES`: the host's value, passed on
        return
    col.env(name, line, c, value=raw)
    value_at = c + len(name) + 1
    if "-D" in raw:
        # a build's CMake flags handed through the job's environment (Travis CI's `env: - CMAKE_EXTRA_FLAGS=
        # "-DENABLE_CUDA=On ..."`, RAJA / Umpire, which their build script passes to cmake; tp41): the switches, as
        # a mapping value's block of flags is read
        cmake_defines(col, col.lines[line - 1], lambda off: (line, off + 1))
        return
    default = _DEFAULTED_RE.fullmatch(raw)
    if default and "/" not in default.group(1):
        # `- DEVICE=${DEVICE:-cuda}`: cuda unless the host sets it, as the mapping form's `${BACKEND:-cuda}` (tp44a)
        value_at += raw.find(default.group(1))
        raw = default.group(1).strip()
    if raw and "$" not in raw and "/" not in raw and col.engine.compiled.match_env(name) is None:
        rule = m.match_setting(name.lower(), raw)
        if rule is not None and rule.code not in SCHEDULER_REQUESTS:
            col.add(rule, f"{name}={raw}", line, value_at, value_at + len(raw), value=raw)


# environment variables whose value is a command a tool runs (cibuildwheel's `CIBW_BEFORE_ALL` / `CIBW_BEFORE_BUILD` /
# `CIBW_TEST_COMMAND` / `CIBW_REPAIR_WHEEL_COMMAND`, with their `_LINUX` forms; any `*_COMMAND` / `*_CMD`), or the
# command-line arguments a launcher passes on (`CLI_ARGS`, the web UIs' `COMMANDLINE_ARGS`, `EXTRA_ARGS`, `*_ARGS`)
_ARGS_VARIABLE_RE = re.compile(r"(?:\w+_)?ARGS|\w*COMMANDLINE_ARGS")


def _held_command(lines: list[str], key, value) -> list[str] | None:
    """The shell text of an environment entry that holds a command (COMMAND_VARIABLE_RE: the value in its place) or
    a launcher's arguments (_ARGS_VARIABLE_RE: the variable's name stands as the program, so `- CLI_ARGS=--xformers`
    reads as `CLI_ARGS --xformers` at the same width), aligned with the file's lines; None for any other entry."""
    item = key is value
    text = str(value.value)
    name = text.partition("=")[0] if item else str(key.value)
    is_command, is_args = COMMAND_VARIABLE_RE.fullmatch(name), _ARGS_VARIABLE_RE.fullmatch(name)
    if not (is_command or is_args) or item and "=" not in text:
        return None
    block = [""] * len(lines)
    if not item and is_command:
        _copy_lines(lines, block, key, value)
        return block
    line = value.start_mark.line
    if line != value.end_mark.line or line >= len(lines) or not item and line != key.start_mark.line:
        return None
    if not item:        # `CLI_ARGS: --xformers --api`: the name as the program, the words where they stand
        c = value.start_mark.column + (1 if value.style in ("'", '"') else 0)
        at = key.start_mark.column
        block[line] = " " * at + name + " " * max(c - at - len(name), 1) + text
        return block
    c = value.start_mark.column + (1 if value.style in ("'", '"') else 0)
    body = text if is_args else " " * (len(name) + 1) + text.partition("=")[2]
    block[line] = " " * c + (name + " " + text.partition("=")[2] if is_args else body)
    return block


def _env_setting(col: Collector, m, name: str, value) -> bool:
    """An environment entry of a config that is a project's own switch, not a variable of the CUDA stack
    (picotron's `"environment": {"FLASH_ATTEN": "1"}`, exported by its train.py and read by its model): the
    setting its name and value make, as the shell reader reads `FLASH_ATTEN=1` (t15j)."""
    raw = str(value.value) if isinstance(value, yaml.ScalarNode) else ""
    if not raw or "$" in raw or "/" in raw or value.start_mark.line != value.end_mark.line or \
            col.engine.compiled.match_env(name) is not None:
        return False
    rule = m.match_setting(name.lower(), raw.strip())
    if rule is None or rule.code in SCHEDULER_REQUESTS or NCCL_VERSION_NAME_RE.fullmatch(name):
        # (`AWS_OFI_NCCL_VERSION: "v1.16.3"` in a CI env block: a version marker, as `NCCL_VERSION: "2.21.5"` is;
        # the Dockerfile's build arguments are the NCCL build parameters, tp38)
        return False
    line, c = value.start_mark.line + 1, value.start_mark.column + 1
    c += (col.lines[line - 1] if line <= len(col.lines) else "")[c - 1:c] in ("'", '"')
    col.add(rule, f"{name}: {raw}", line, c, c + len(raw), value=raw)
    return True


def _step_bash(path: str) -> bool:
    """Azure Pipelines' `- bash: |` step (its `script:` is in _SHELL_KEYS): a bash script, as `run:` is on GitHub."""
    return path.rsplit(".", 1)[-1] == "bash" and ".steps." in f".{path}"


def _trainer_key(path: str) -> bool:
    """`accelerator` (or `amp_level`) at the top of a config (a Hydra trainer group file) or under a trainer
    (`trainer.accelerator`, `pl_trainer.accelerator`, `lightning.trainer.accelerator`): Lightning's setting."""
    parents = path.lower().split(".")[:-1]
    return not parents or any("trainer" in p or "lightning" in p for p in parents)


# accelerate's own config keys (`accelerate config` writes both): a `gpu_ids` elsewhere is another tool's key
_ACCELERATE_MARKER_RE = re.compile(r"""^\s*["']?(?:distributed_type|compute_environment)["']?\s*:""", re.M)


def _accelerate_config(lines: list[str]) -> bool:
    return bool(_ACCELERATE_MARKER_RE.search("\n".join(lines)))


def _ci_placeholder(expr: re.Match) -> str:
    """A CI expression in a script, as a shell variable of the same length: `${{ matrix.gpu-arch-type }}` ->
    `${gpu_arch_type_____}` (padded with underscores), so `[[ "${{ matrix.gpu-arch-type }}" == "cuda" ]]` is a comparison on that
    setting; an expression that is not a plain name becomes underscores."""
    text = expr.group(0)
    inner = text[3:-2].strip()
    if re.fullmatch(r"[A-Za-z_][\w.-]*", inner):
        name = inner.rsplit(".", 1)[-1].replace("-", "_")
        return "${" + name.ljust(len(text) - 3, "_") + "}"      # one word still: `cuda-toolkit-${cuda_version___}`
    return "_" * len(text)


# the build switches t15s reads in make / shell / Dockerfiles (`make USE_CUDA=1`), spelled in lower case as a
# config document's own key (`use_cuda: 1`): the project's device option, not the build's
def _names_nvml(qualname: str) -> bool:
    """A dotted class path one of whose words (split at dots, underscores and CamelCase) is NVML's."""
    words = re.findall(r"[A-Z]+(?![a-z])|[A-Z]?[a-z0-9]+", qualname.replace("_", "."))
    return any(w.lower() in _NVML_WORDS for w in words)


# NVIDIA's CDI device kind (https://docs.nvidia.com/datacenter/cloud-native/container-toolkit/latest/cdi-support.html:
# `nvidia.com/gpu=all`, `nvidia.com/gpu=0`, `nvidia.com/gpu=GPU-<uuid>`, MIG devices `nvidia.com/gpu=0:1`)
_CDI_NVIDIA_RE = re.compile(r"nvidia\.com/gpu=[\w:.-]+")
_OWN_CUDA_SWITCHES = frozenset({"use_cuda", "use_nvidia", "with_cuda"})
_DEFAULTED_RE = re.compile(r"\$\{\w+:?[-=]([^{}$]+)\}")
_CUDA_KEY_RE = re.compile(r"(?:\w+_)?(?:cuda|cudnn|cuda_toolkit|nvcc)(?:_versions?|_vers?)?")
# the Jetson Linux (L4T) / JetPack releases a Jetson installer or image build accepts (`ALLOWED_L4T_VERSIONS:` in Seeed's
# jetson-examples, `L4T_VERSION`, `JETPACK_VERSION`; tp40)
_L4T_KEY_RE = re.compile(r"(?:\w+_)?(?:l4t|jetpack)(?:_versions|_releases)")
# lists of system (apt) packages an installer or platform installs: Cog's `build.system_packages` (cog.yaml reference),
# an installer config's top-level `PACKAGES:` list
_SYSTEM_PACKAGE_KEYS = ("system_packages", "apt_packages", "apt-packages")


def _system_package_list(path: str) -> bool:
    """A list of apt packages: a key named for them (`build.system_packages`, `dgx_system_packages`) or a top-level
    `packages:` list."""
    lowered = path.lower()
    return lowered.rsplit(".", 1)[-1].endswith(_SYSTEM_PACKAGE_KEYS) or lowered == "packages"


# Ansible's package modules (docs.ansible.com, `ansible.builtin.apt` / `package` / `yum` / `dnf`: `name` is "a list of
# packages", a `name=version` spec or a comma-separated string; `pkg` its alias) and Salt's `pkg.installed` /
# `pkg.latest` states (`pkgs:` list or `name:`; docs.saltproject.io, salt.states.pkg)
_PACKAGE_MODULES = frozenset({f"{prefix}{module}" for prefix in ("", "ansible.builtin.", "ansible.legacy.")
                              for module in ("apt", "package", "yum", "dnf")})
_SALT_PACKAGE_STATES = frozenset({"pkg.installed", "pkg.latest"})
# a lock file's map of package name to version (autoware's `ansible/vars/locked-versions-*.yaml`: `nvidia_pins:
# {cuda-cudart-13-0: 13.0.96-1}`, read by its version_lock role into `apt` installs of those exact versions)
_PIN_MAP_KEY_RE = re.compile(r"(?:^|[_-])(?:pins|pinned|locked|lock|locks|versions)$", re.I)
# a Debian / RPM package version: `13.0.96-1`, `1:2.43.0-1ubuntu7.3`, `9.14.0.64-1`
_PACKAGE_VERSION_RE = re.compile(r"(?:\d+:)?\d[\w.+~-]*")
# a package name with a word separator (`cuda-cudart-13-0`, `libcudnn9-cuda-13`) or a library's (`libnccl2`)
_PACKAGE_NAME_RE = re.compile(r"[a-z0-9][a-z0-9+.]*-[a-z0-9+.-]+|lib[a-z0-9+.]+")


def _package_module_names(value) -> list[yaml.ScalarNode]:
    """The package-name nodes of one Ansible package task's arguments (a mapping with `name` / `pkg`, or the
    free-form `name=cuda-drivers state=present` string) or one Salt package state (a list of one-key mappings)."""
    if isinstance(value, yaml.SequenceNode):          # Salt: `pkg.installed: [{pkgs: [...]}, {name: ...}]`
        return [n for item in value.value for n in _package_module_names(item)]
    if isinstance(value, yaml.ScalarNode):
        return [value] if isinstance(value.value, str) and re.search(r"(?:^|\s)(?:name|pkg)=", value.value) else []
    entries = yaml_entries(value)
    names = entries.get("name", entries.get("pkg", entries.get("pkgs")))
    if isinstance(names, yaml.SequenceNode):
        return [n for n in names.value if isinstance(n, yaml.ScalarNode) and isinstance(n.value, str)]
    return [names] if isinstance(names, yaml.ScalarNode) and isinstance(names.value, str) else []


def _installed_packages(col: Collector, m, root) -> None:
    """System packages a configuration-management file installs: an Ansible package task's `name:` items, a Salt
    `pkg.installed` state's `pkgs:` and a lock file's pinned package names (`_PIN_MAP_KEY_RE`), each read as an apt
    package (`apt-get install cuda-toolkit-12-4` in a script: the CUDA toolkit and library packages are NPU018's,
    NVIDIA's driver packages its `apt:nvidia-*`). A Jinja-templated version suffix (`libcublas-{{ cuda_dash }}`)
    keeps the name's stem, which is what the rules match; `name=version` keeps the name."""
    for entries in _mappings(root):
        for key, value in entries.items():
            lowered = key.lower()
            nodes: list[tuple[yaml.ScalarNode, str]] = []
            if lowered in _PACKAGE_MODULES or lowered in _SALT_PACKAGE_STATES:
                for node in _package_module_names(value):
                    text = str(node.value)
                    if "=" in text and re.search(r"(?:^|\s)(?:name|pkg)=", text):
                        spec = dict(part.partition("=")[::2] for part in text.split() if "=" in part)
                        text = spec.get("name") or spec.get("pkg") or ""
                    for part in text.split(","):
                        if part.strip():
                            nodes.append((node, part.strip()))
            elif _PIN_MAP_KEY_RE.search(key) and isinstance(value, yaml.MappingNode):
                for name, version in value.value:
                    if isinstance(name, yaml.ScalarNode) and isinstance(version, yaml.ScalarNode) \
                            and _PACKAGE_NAME_RE.fullmatch(str(name.value)) \
                            and _PACKAGE_VERSION_RE.fullmatch(str(version.value)):
                        nodes.append((name, str(name.value)))
            for node, text in nodes:
                package = re.split(r"[=<>]", text, maxsplit=1)[0].strip()
                line, c = node.start_mark.line + 1, node.start_mark.column + 1
                raw_line = col.lines[line - 1] if line <= len(col.lines) else ""
                found = raw_line.find(package, c - 1)
                c = found + 1 if found >= 0 else c
                col.add(m.match_requirement("apt:" + package), package, line, c, c + len(package))


def _inline_json_settings(col: Collector, m, path: str, value) -> bool:
    """A one-line value that is a JSON object (vLLM's `compilation-config: '{"cudagraph_mode": "PIECEWISE"}'`,
    `kv-transfer-config: '{"kv_connector": "NixlConnector"}'`: vLLM parses these options as JSON, "Engine arguments"):
    each scalar member read as the setting `path.member`, on its key's column. False when the value is no JSON object
    or no member is a setting (the value is then read as text)."""
    text = str(value.value).strip()
    line = value.start_mark.line + 1
    if not (text.startswith("{") and text.endswith("}")) or value.end_mark.line != value.start_mark.line \
            or line > len(col.lines):
        return False
    try:
        members = json.loads(text)
    except ValueError:
        return False
    if not isinstance(members, dict):
        return False
    hits = [(key, str(v), rule) for key, v in members.items() if isinstance(v, (str, int, float, bool))
            for rule in [m.match_setting(f"{path}.{key}", str(v).lower() if isinstance(v, bool) else str(v))]
            if rule is not None]
    for key, raw, rule in hits:
        at = col.lines[line - 1].find(f'"{key}"', value.start_mark.column) + 2
        col.add(rule, f"{path}.{key}: {raw}", line, at, at + len(key), value=raw)
    return bool(hits)


def _json_object_block(value) -> bool:
    """A `|` block that holds one JSON object (an installer config's `DAEMON: |` with Docker's daemon.json): JSON is
    YAML's flow syntax, so it is read as the config it is."""
    text = str(value.value).strip()
    return text.startswith("{") and text.endswith("}")


def _docker_runtimes(col: Collector, m, root) -> None:
    """Docker's daemon.json `runtimes` entry of NVIDIA's container runtime (`"nvidia": {"path":
    "nvidia-container-runtime"}`; Docker's dockerd reference, "Daemon configuration file"; NVIDIA container toolkit
    install guide, "Configuring Docker"): the runtime each `--runtime=nvidia` container starts with, reported on the
    entry's name (its `default-runtime: nvidia` is a setting of NPU017's list)."""
    runtimes = yaml_entries(root).get("runtimes") if isinstance(root, yaml.MappingNode) else None
    if not isinstance(runtimes, yaml.MappingNode):
        return
    for key, value in runtimes.value:
        entry = yaml_entries(value) if isinstance(value, yaml.MappingNode) else {}
        path = entry.get("path")
        if isinstance(key, yaml.ScalarNode) and (str(key.value).lower() == "nvidia" or isinstance(path, yaml.ScalarNode)
                                                 and "nvidia-container-runtime" in str(path.value)):
            line, c = key.start_mark.line + 1, key.start_mark.column + 1
            c += col.lines[line - 1][c - 1:c] in ("'", '"')
            col.add(m.match_setting("runtime", "nvidia"), f"runtimes: {key.value}", line, c, c + len(str(key.value)))


def _version_keys(col: Collector, m, node, path: str) -> None:
    """A key naming the CUDA version whose value is not one scalar: a workflow input (`inputs: cuda-version:
    {description, type}`) or a block list of versions to build for. The key's line is the setting, at `info`
    like a matrix entry: it picks what a CI build installs."""
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _version_keys(col, m, item, path)
        return
    if not isinstance(node, yaml.MappingNode):
        return
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        name = str(key.value)
        sub = f"{path}.{name}" if path else name
        flat = name.lower().replace("-", "_")
        if not isinstance(value, yaml.ScalarNode) and (_CUDA_KEY_RE.fullmatch(flat) or _L4T_KEY_RE.fullmatch(flat)) and (
                isinstance(value, yaml.MappingNode) and ".inputs." in f".{path}."
                or isinstance(value, yaml.SequenceNode) and value.start_mark.line > key.start_mark.line):
            rule = m.match_setting(f"{path}.{flat}" if path else flat, "12.4")
            if rule is not None:
                line, c = key.start_mark.line + 1, key.start_mark.column + 1
                col.add(rule, f"{sub}: ...", line, c, c + len(name), severity="info")
        _version_keys(col, m, value, sub)


def _disabled_sections(node, path: str, found: set[str] | None = None) -> set[str]:
    """Dotted paths of the mappings switched off by their own `enabled: False` (a profiler section)."""
    found = set() if found is None else found
    if isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            if key.value == "enabled" and isinstance(value, yaml.ScalarNode) and \
                    str(value.value).lower() in ("false", "0", "no", "off"):
                found.add(path)
            _disabled_sections(value, f"{path}.{key.value}" if path else str(key.value), found)
    elif isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _disabled_sections(item, path, found)
    return found


_MATRIX_REF_RE = re.compile(r"^\$\{\{\s*matrix\.([\w.-]+)\s*\}\}$")


def _matrix_runner_paths(root) -> set[str]:
    """The key paths of the matrix values that GitHub Actions jobs run on (`runs-on: ${{ matrix.config.runner }}`
    reads `jobs.<job>.strategy.matrix.config.runner`, and `include:` entries' `runner`); list items add no part."""
    paths: set[str] = set()
    jobs = yaml_entries(root).get("jobs")
    for job, node in yaml_entries(jobs).items():
        runs_on = yaml_entries(node).get("runs-on")
        refs = runs_on.value if isinstance(runs_on, yaml.SequenceNode) else [runs_on]
        for ref in refs:
            found = _MATRIX_REF_RE.match(str(ref.value).strip()) if isinstance(ref, yaml.ScalarNode) else None
            if found:
                key = found.group(1)
                paths |= {f"jobs.{job}.strategy.matrix.{key}", f"jobs.{job}.strategy.matrix.include.{key}"}
    return paths


# a matrix value spliced in right after `cuda` / `cu` (`conda/environments/dev_cuda${{ matrix.target }}.yml`,
# `cu${{ matrix.cuda }}`): the value is a CUDA release
_CUDA_MATRIX_SPLICE_RE = re.compile(r"(?i)(?<![a-z])cu(?:da)?[-_]?\$\{\{\s*matrix\.([\w.-]+)\s*\}\}")
_MATRIX_CUDA_RELEASE_RE = re.compile(r"1[0-9]\.[0-9]+(?:\.[0-9]+)?")


def _cuda_matrix_paths(root) -> set[str]:
    """The key paths of matrix values a job's steps splice in after `cuda` (NVTabular's `conda env create --file
    conda/environments/nvtabular_dev_cuda${{ matrix.target }}.yml` over `matrix: {target: ["11.0", "11.2"]}`): the
    key's values are the CUDA releases the job builds for, whatever the key's name (tp46a)."""
    paths: set[str] = set()
    for job, node in yaml_entries(yaml_entries(root).get("jobs")).items():
        steps = yaml_entries(node).get("steps")
        for _, key, value, _ in _scalars(steps, "", False) if steps is not None else ():
            if key is not value and str(key.value) == "name" or not isinstance(value.value, str):
                continue          # a step's display name builds nothing
            for found in _CUDA_MATRIX_SPLICE_RE.finditer(value.value):
                paths |= {f"jobs.{job}.strategy.matrix.{found.group(1)}",
                          f"jobs.{job}.strategy.matrix.include.{found.group(1)}"}
    return paths


_MATRIX_PATH_RE = re.compile(r"jobs\.[^.]+\.strategy\.matrix\.")
# a step's command segment (a line, or a part after `&&` / `;` / `|`), and a matrix value it passes to an option
_COMMAND_SEGMENT_RE = re.compile(r"[^\n;&|]+")
_MATRIX_OPTION_RE = re.compile(r"\s(--?[A-Za-z][\w-]*)(?:=|\s+)[\"']?\$\{\{\s*matrix\.([\w.-]+)\s*\}\}[\"']?(?=\s|$)")


def _matrix_option_paths(root) -> dict[str, str]:
    """The key paths of matrix values a job's steps pass to a command's option, with `command --option`
    (MusicGPT's `cargo build --release --features ${{ matrix.features }}` over `include: - features: cuda`): the
    value is that option's, read as the command rules read `cargo --features=cuda` (tp49a)."""
    paths: dict[str, str] = {}
    for job, node in yaml_entries(yaml_entries(root).get("jobs")).items():
        steps = yaml_entries(node).get("steps")
        for _, key, value, _ in _scalars(steps, "", False) if steps is not None else ():
            if key is value or str(key.value) != "run" or not isinstance(value.value, str) \
                    or "matrix." not in value.value:
                continue
            for segment in _COMMAND_SEGMENT_RE.findall(value.value):
                words = segment.split()
                if words[:1] == ["sudo"]:
                    words = words[1:]
                if not words or words[0].startswith(("$", "-")):
                    continue
                for found in _MATRIX_OPTION_RE.finditer(segment):
                    command = f"{words[0].rsplit('/', 1)[-1]} {found.group(1)}"
                    for where in ("", "include."):
                        paths.setdefault(f"jobs.{job}.strategy.matrix.{where}{found.group(2)}", command)
    return paths


def _step_shells(node, found: dict | None = None, default: str | None = None) -> dict[int, str]:
    """id(`run:` value node) -> the step's `shell:` (GitHub Actions: `shell: python`, `pwsh`, `bash -l {0}`), or the
    `defaults: run: shell:` of its job or workflow (t15h: a `shell: pwsh` default makes every step PowerShell)."""
    found = {} if found is None else found
    if isinstance(node, yaml.MappingNode):
        named = yaml_entries(node)
        defaults = named.get("defaults")
        if isinstance(defaults, yaml.MappingNode):
            run_defaults = {str(k.value): v for k, v in defaults.value if isinstance(k, yaml.ScalarNode)}.get("run")
            if isinstance(run_defaults, yaml.MappingNode):
                shell_default = {str(k.value): v for k, v in run_defaults.value
                                 if isinstance(k, yaml.ScalarNode)}.get("shell")
                if isinstance(shell_default, yaml.ScalarNode):
                    default = str(shell_default.value).strip().lower()
        run, shell = named.get("run"), named.get("shell")
        if isinstance(run, yaml.ScalarNode) and isinstance(shell, yaml.ScalarNode):
            found[id(run)] = str(shell.value).strip().lower()
        elif isinstance(run, yaml.ScalarNode) and default is not None:
            found[id(run)] = default
        for _, v in node.value:
            _step_shells(v, found, default)
    elif isinstance(node, yaml.SequenceNode):
        for v in node.value:
            _step_shells(v, found, default)
    return found


def _python_block(col: Collector, value) -> None:
    """A `shell: python` step's script through the Python pass, its findings placed on the block's own lines."""
    from dataclasses import replace

    code = _CI_EXPR_RE.sub(lambda e: "_" * len(e.group(0)), str(value.value))
    if "cuda" not in code.lower() and "nccl" not in code.lower():
        return
    first = value.start_mark.line + (1 if value.style in ("|", ">") else 0)
    raw = col.lines[first] if first < len(col.lines) else ""
    indent = len(raw) - len(raw.lstrip()) if value.style in ("|", ">") else value.start_mark.column
    result = col.engine.analyze_bytes((code + "\n").encode("utf-8"), col.rel + ".py")
    for f in result.findings:
        col.add_finding(replace(f, path=col.rel, line=first + f.line, end_line=first + f.end_line,
                                col=f.col + indent, end_col=f.end_col + indent, fix="none",
                                data={k: v for k, v in f.data.items() if k != "replace"}))
    for n in range(first, min(first + len(code.splitlines()), len(col.lines))):
        text = col.lines[n]
        if "://" in text and not text.lstrip().startswith("#"):
            # the CUDA installers and wheels the step downloads (`"12.8": ("12.8.1", "https://developer.download.nvidia
            # .com/compute/cuda/12.8.1/local_installers/cuda_12.8.1_570.124.06_linux.run")`)
            scan_fragment(col, text, n + 1, 1, options=False)


def _embeds_config(path: str) -> bool:
    """A block string that holds another YAML config: a RayService's `serveConfigV2` (the Serve applications KubeRay
    deploys, with their `llm_configs` accelerator types and engine kwargs) and a ConfigMap's `data: config.yaml: |`
    (or `dashboard.json: |-`, a Grafana dashboard: JSON is YAML's flow syntax, tp37)."""
    # also an Argo Workflows template's `podSpecPatch: |` (a patch of the pod spec it runs: containers' resources;
    # Argo docs, "Pod Spec Patch"; tp46a)
    return path.rsplit(".", 1)[-1].lower() in ("serveconfigv2", "serveconfig", "podspecpatch") \
        or path.startswith("data.") \
        and path.lower().endswith((".yaml", ".yml", ".json"))


def _embedded_config(col: Collector, value):
    """The YAML document of a `|` block, composed where it stands (the other lines blanked), so its nodes carry the
    file's own lines and columns; None when it is no mapping or no YAML."""
    lines = [""] * len(col.lines)
    indent = None
    for n in range(value.start_mark.line + 1, min(value.end_mark.line + 1, len(col.lines))):
        text = col.lines[n]
        if not text.strip():
            continue
        own = len(text) - len(text.lstrip())
        indent = own if indent is None else indent
        if own < indent:
            break           # the block ended: the next key of the enclosing mapping
        lines[n] = text
    try:
        root = yaml.compose("\n".join(lines).replace("\t", " "), Loader=_AliasTolerantLoader)
    except yaml.YAMLError:
        return None
    return root if isinstance(root, yaml.MappingNode) else None


# a MONAI bundle's reference to another config item (`@network_def`, `@device`): a name in the expression
_BUNDLE_REFERENCE_RE = re.compile(r"@(?=[A-Za-z_])")
# the names bundle expressions use without importing them in the expression (the parser's globals, and the
# `"imports": ["$import torch.distributed as dist"]` the multi-GPU configs add), on one line
_BUNDLE_GLOBALS = "import torch; import torch.distributed as dist; import os"


def _bundle_expression(col: Collector, value) -> bool:
    """A one-line `"$..."` value that is a Python expression, as MONAI bundle configs evaluate them (`"device":
    "$torch.device('cuda:0' if torch.cuda.is_available() else 'cpu')"`, `"$setattr(torch.backends.cudnn, 'benchmark',
    True)"`; model-zoo, t36b), read through the Python pass with the bundle's usual globals imported and
    `@item` references as names. Only an expression that calls something: `$HOME/data` is a shell path."""
    from dataclasses import replace

    code = _BUNDLE_REFERENCE_RE.sub(" ", str(value.value)[1:])
    if value.start_mark.line != value.end_mark.line or not re.search(r"cuda|cudnn|nccl", code, re.I):
        return False
    try:
        tree = ast.parse(code.strip(), mode="eval")
    except SyntaxError:
        return False
    if not any(isinstance(n, ast.Call) for n in ast.walk(tree)):
        return False
    statement = code.strip()
    call = tree.body
    name = call.args[1] if isinstance(call, ast.Call) and len(call.args) == 3 else None
    if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "setattr" \
            and isinstance(name, ast.Constant) and isinstance(name.value, str) and name.value.isidentifier():
        # an expression cannot assign: `setattr(torch.backends.cudnn, 'benchmark', True)` is the bundle's assignment
        statement = f"{ast.unparse(call.args[0])}.{name.value} = {ast.unparse(call.args[2])}"
    line = value.start_mark.line
    raw = col.lines[line] if line < len(col.lines) else ""
    at = raw.find("$", value.start_mark.column) + 1 + len(code) - len(code.lstrip())
    result = col.engine.analyze_bytes(f"{_BUNDLE_GLOBALS}\n{statement}\n".encode("utf-8"), col.rel + ".py")
    for f in result.findings:
        if f.line == 2:
            width = len(statement) if statement != code.strip() else f.end_col - f.col
            start = f.col if statement == code.strip() else 0
            col.add_finding(replace(f, path=col.rel, line=line + 1, end_line=line + 1, col=start + at,
                                    end_col=start + at + width, fix="none",
                                    data={k: v for k, v in f.data.items() if k != "replace"}))
    return True


# PowerShell / cmd lines that are comments, or text shown rather than run or written (an `echo` that does not
# write GITHUB_ENV / GITHUB_PATH)
_WINDOWS_COMMENT_RE = re.compile(r"\s*(?:#|rem\b|::|@?echo\b|write-host\b|write-output\b)", re.I)
# a PowerShell / cmd line that runs a script by its path (`.\\ci\\install_cuda_windows.ps1 -Version 12.4`,
# `& "$PSScriptRoot\\install-cuda.ps1"`)
_WINDOWS_SCRIPT_RE = re.compile(r"""^\s*(?:&\s*)?["']?((?:[\w.$:{}-]*[\\/])*([\w.-]+\.(?:ps1|bat|cmd)))["']?(?:\s|$)""", re.I)
_WINDOWS_WORD_RE = re.compile(r"""(?:"[^"]*"|'[^']*'|[^\s"']+)+""")
_WINDOWS_VERSION_RE = re.compile(r"""^\s*(\$?['"]?([A-Za-z_][\w-]*)['"]?)\s*=\s*@?\(?\s*["'](\d+\.\d+(?:\.\d+)?)["']""")
_WINDOWS_CI_FILE_RE = re.compile(r"\$env:GITHUB_(?:ENV|PATH)|%GITHUB_(?:ENV|PATH)%", re.I)


def _windows_block(col: Collector, key, value) -> None:
    """A `shell: pwsh` / `powershell` / `cmd` step is not bash, so the shell reader does not parse it (its
    quoting, `$env:X` and `%X%` differ); its lines are searched only for the CUDA toolkit's Windows location
    (`C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4`), a literal path that means the same in
    every shell. Comment lines and echoed text (unless written to GITHUB_ENV / GITHUB_PATH) are left out."""
    from auditor.project.shell import win_cuda_paths

    lines = [""] * len(col.lines)
    _copy_lines(col.lines, lines, key, value)
    m = matchers(col.engine)
    for n, text in enumerate(lines):
        script = _WINDOWS_SCRIPT_RE.match(text)
        if script is not None:
            # `.\scripts\install_cuda_windows.ps1`: a script run by its path (NPU074 names installers by file name)
            name = script.group(2)
            col.add(m.match_command(name), name, n + 1, script.start(1) + 1, script.end(1) + 1)
        words = _WINDOWS_WORD_RE.findall(text)
        if words and words[0].strip("\"'").rsplit("\\", 1)[-1].lower().removesuffix(".exe") == "cmake":
            # `cmake . -B build -G "Visual Studio 17 2022" -A x64`: the same configure call as in bash (t15h)
            call = cmake_call([w.strip("\"'") for w in words[1:]], "")
            if call is not None:
                c = len(text) - len(text.lstrip())
                call.update(line=n + 1, col=c + 1, end_col=c + 1 + len(words[0]))
                keep_call(col.result, CMAKE_CALLS, call)
        version = _WINDOWS_VERSION_RE.match(text)
        flat = re.sub(r"(?<=[a-z])(?=[A-Z])", "_", version.group(2)).lower().replace("-", "_") if version else ""
        if version is not None and _CUDA_KEY_RE.fullmatch(flat):
            # a PowerShell build matrix or variable (`'cuda' = @("12.4", "13.1")`, `$cudaVersion = "12.6"`): the CUDA
            # versions a job builds for, at `info` like a YAML matrix entry (t15h)
            rule = m.match_setting(flat, version.group(3))
            if rule is not None:
                c = version.start(1) + 1
                col.add(rule, f"{version.group(2)} = {version.group(3)}", n + 1, c, c + len(version.group(1)),
                        severity="info")
        message = _WINDOWS_COMMENT_RE.match(text) is not None
        quiet = message and not _WINDOWS_CI_FILE_RE.search(text)
        # PowerShell reads and writes of a CUDA variable, as `$CUDA_PATH` / `export` in bash (t32d, marian's
        # release workflow): `$env:CUDA_VISIBLE_DEVICES = "0"`, `cmake -DX="$env:CUDA_PATH"`; of an echoed line only
        # the variable it writes to the job's environment (`echo "CUDA_PATH=$env:CUDA_PATH" | Out-File $env:GITHUB_ENV`)
        job_env = _PWSH_JOB_ENV_RE.match(text) if message and "GITHUB_ENV" in text.upper() \
            and "GPU Computing Toolkit" not in text else None      # the toolkit's path is the line's finding
        if job_env is not None:
            col.env(job_env.group(1), n + 1, job_env.start(1) + 1)
        for env in () if message else _PWSH_ENV_RE.finditer(text):
            col.env(env.group(1), n + 1, env.start() + 1, sets=env.group(2) is not None)
        if "GPU Computing Toolkit" not in text or quiet:
            continue
        win_cuda_paths(col, text, lambda offset, n=n: (n + 1, offset + 1))


# PowerShell's environment drive: `$env:CUDA_PATH`, `${env:CUDA_PATH}`; an assignment when `=` follows
_PWSH_ENV_RE = re.compile(r"\$\{?env:(\w+)\}?(\s*=(?!=))?", re.I)
_PWSH_JOB_ENV_RE = re.compile(r"""\s*(?:echo|write-output)\s+["']?([A-Za-z_]\w*)=""", re.I)


def _docker_options(col: Collector, m, value) -> None:
    """A CI job container's `options:` string is `docker create` options: `--gpus all` needs NVIDIA's runtime."""
    import shlex

    try:
        words = shlex.split(str(value.value))
    except ValueError:
        words = str(value.value).split()
    line = value.start_mark.line + 1
    text = col.lines[line - 1] if line <= len(col.lines) else ""
    for i, w in enumerate(words):
        if not w.startswith("--"):
            continue
        option = w if "=" in w or i + 1 >= len(words) or words[i + 1].startswith("-") else f"{w}={words[i + 1]}"
        rule = m.match_command("docker " + option)
        at = text.find(w)
        c = at + 1 if at >= 0 else value.start_mark.column + 1
        col.add(rule, "docker " + option, line, c, c + len(w))


def _value_text(col: Collector, m, path: str, value) -> None:
    """A one-line string value that is not a known setting: the image references (`BASE_IMAGE:
    nvidia/cuda:12.6.3-cudnn-devel-ubuntu22.04`, a list of tags), CUDA wheel index URLs (`PIP_INSTALL_ARGS: -f
    .../whl/nightly/cu118/...`) and CUDA toolkit paths (`path: /usr/local/cuda-12.8`) it holds."""
    text = str(value.value)
    if "image" in path.rsplit(".", 1)[-1].lower() and "/" in text and ":" not in text and " " not in text:
        # `DOCKER_IMAGE_NAME: huggingface/lerobot-gpu`: an image reference without a tag
        line, c = value.start_mark.line + 1, value.start_mark.column + 1
        c += (col.lines[line - 1] if line <= len(col.lines) else "")[c - 1:c] in ("'", '"')
        col.add(m.match_image(text), text, line, c, c + len(text))
        return
    if not ("/" in text and (":" in text or "/usr/local/cuda" in text or DRIVER_PATH_RE.search(text))):
        return
    line, c = value.start_mark.line + 1, value.start_mark.column + 1
    raw_line = col.lines[line - 1] if line <= len(col.lines) else ""
    if raw_line[c - 1:c] in ("'", '"'):
        c += 1
    if "image" in path.rsplit(".", 1)[-1].lower():
        col.add(m.match_image(text), text, line, c, c + len(text), **_other_vendor_image(text))
    scan_fragment(col, text, line, c, options=False)
    for url in _URL_RE.finditer(text):
        if _CUDA_INDEX_RE.search(url.group(0)):
            symbol = "index:" + url.group(0)
            col.add(m.match_requirement(symbol), symbol, line, c + url.start(), c + url.end())


def _miniconda_channels(col: Collector, m, value) -> None:
    """conda-incubator/setup-miniconda's `channels:` input, a comma-separated list (pangaea-bench's CI `channels:
    pytorch, nvidia, conda-forge`): each channel as an environment file's (`nvidia` and its labels serve CUDA
    packages; t36b)."""
    after = value.start_mark.line
    for part in re.findall(r"[^,\s]+", str(value.value)):
        found = next((n for n in range(after, min(value.end_mark.line + 1, len(col.lines))) if part in col.lines[n]
                      and (n > value.start_mark.line or col.lines[n].find(part) >= value.start_mark.column)), None)
        if found is None:
            continue
        after = found
        at = col.lines[found].find(part, value.start_mark.column if found == value.start_mark.line else 0)
        symbol = "channel:" + part.lower().split("/", 1)[0]        # `nvidia/label/cuda-12.1.0`: the nvidia channel
        col.add(m.match_requirement(symbol), symbol, found + 1, at + 1, at + 1 + len(part))


def _run_args(col: Collector, m, node) -> None:
    """A devcontainer's `runArgs: ["--gpus", "all"]` is a `docker run` argument list: `--gpus` needs NVIDIA's
    container runtime."""
    if not isinstance(node, yaml.MappingNode):
        return
    for key, value in node.value:
        if isinstance(key, yaml.ScalarNode) and str(key.value) == "runArgs" and isinstance(value, yaml.SequenceNode):
            items = [v for v in value.value if isinstance(v, yaml.ScalarNode)]
            for i, item in enumerate(items):
                w = str(item.value)
                if not w.startswith("--"):
                    continue
                nxt = str(items[i + 1].value) if i + 1 < len(items) else ""
                option = w if "=" in w or not nxt or nxt.startswith("-") else f"{w}={nxt}"
                line, c = item.start_mark.line + 1, item.start_mark.column + 2     # past the opening quote
                col.add(m.match_command("docker " + option), "docker " + option, line, c, c + len(w))


# a dev container feature that installs the CUDA toolkit: the Dev Containers project's `ghcr.io/devcontainers/
# features/nvidia-cuda:1`, RAPIDS' `ghcr.io/rapidsai/devcontainers/features/cuda:26.10` and its local
# `./features/src/cuda` (the feature's id is its last path part, the `:tag` its version)
_CUDA_FEATURE_RE = re.compile(r"(?:^|/)(?:nvidia-)?cuda(?::[\w.-]+)?$", re.I)


def _devcontainer_features(col: Collector, m, node) -> None:
    """A devcontainer.json's `features: {"ghcr.io/devcontainers/features/nvidia-cuda:1": {"installCudnn": true}}`:
    the feature installs the CUDA toolkit (and cuDNN) into the dev container when it is built (containers.dev,
    "Features"; github.com/devcontainers/features `src/nvidia-cuda`), as `apt install cuda-toolkit` would; reported
    on the feature's key (tp41, project test94's RAPIDS devcontainers). A feature list that only names the order
    (`overrideFeatureInstallOrder`) installs nothing."""
    if not isinstance(node, yaml.MappingNode):
        return
    for key, value in node.value:
        if not (isinstance(key, yaml.ScalarNode) and str(key.value) == "features"
                and isinstance(value, yaml.MappingNode)):
            continue
        for feature, _ in value.value:
            name = str(feature.value) if isinstance(feature, yaml.ScalarNode) else ""
            if not _CUDA_FEATURE_RE.search(name):
                continue
            line, c = feature.start_mark.line + 1, feature.start_mark.column + 2     # past the opening quote
            col.add(m.match_requirement("apt:cuda-toolkit"), name, line, c, c + len(name),
                    note=" (a dev container feature that installs the CUDA toolkit)")


_PACKER_SCRIPT_WORDS = re.compile(r"[a-z0-9]+")
_VERSION_WORDS = frozenset({"version", "versions", "ver"})


def _packer_template(root) -> bool:
    """A Packer JSON template: `builders` (or `variables`) beside a `provisioners` list (Packer's legacy JSON
    template format, https://developer.hashicorp.com/packer/docs/templates/legacy_json_templates)."""
    entries = yaml_entries(root)
    return isinstance(entries.get("provisioners"), yaml.SequenceNode) and ("builders" in entries
                                                                           or "variables" in entries)


def _names_cuda_stack(name: str) -> bool:
    """A file or variable name whose words name only the CUDA stack (`cuda.sh`, `install-nvidia-container-toolkit.sh`,
    `cuda_drivers_version`); a name that also names another vendor (`install-amd-gpu.sh`) does not."""
    return backends_in_text(" ".join(_PACKER_SCRIPT_WORDS.findall(name.lower()))) == {"cuda"}


def _packer_steps(col: Collector, m, root) -> None:
    """tp38 (project test83, dstack's `scripts/packer/*-image-cuda.json`): a Packer template builds a VM image. A
    shell provisioner's `script` / `scripts` entry whose file name names the CUDA stack installs it into the image
    (`"script": "provisioners/cuda.sh"` installs the driver and the toolkit; `install-nvidia-container-toolkit.sh`
    NVIDIA's container runtime), and a user variable naming a CUDA / NVIDIA version (`"cuda_drivers_version": ""`)
    is the version those steps install, a build parameter (info)."""
    if not _packer_template(root):
        return
    variables = yaml_entries(root).get("variables")
    if isinstance(variables, yaml.MappingNode):
        for key, _value in variables.value:
            name = str(key.value)
            words = set(_PACKER_SCRIPT_WORDS.findall(name.lower()))
            if words & _VERSION_WORDS and _names_cuda_stack(name):
                line, c = key.start_mark.line + 1, key.start_mark.column + 2     # past the opening quote
                col.add(m.match_setting("cuda_version", "12.4"), f"variables.{name}", line, c, c + len(name),
                        severity="info", note=" (a Packer variable: the CUDA / NVIDIA driver version the image gets)")
    for step in yaml_entries(root)["provisioners"].value:
        entries = yaml_entries(step)
        if not isinstance(entries.get("type"), yaml.ScalarNode) or "shell" not in str(entries["type"].value):
            continue
        scripts = [entries.get("script")]
        if isinstance(entries.get("scripts"), yaml.SequenceNode):
            scripts += entries["scripts"].value
        for item in scripts:
            if not isinstance(item, yaml.ScalarNode) or not isinstance(item.value, str):
                continue
            path = item.value
            base = path.rsplit("/", 1)[-1]
            if not base.endswith((".sh", ".bash")) or not _names_cuda_stack(base):
                continue
            runtime = "container" in base.lower() or "docker" in base.lower()
            rule = m.match_command("nvidia-ctk") if runtime else m.match_command("install_cuda.sh")
            line, c = item.start_mark.line + 1, item.start_mark.column + 2
            col.add(rule, path, line, c, c + len(path),
                    note=" (a Packer provisioner step: the script installs it into the machine image)")


# keys naming the program an argument list beside them is passed to (SIBR's `{"app": "colmap", "command_args": [...]}`)
_PROGRAM_KEYS = ("app", "program", "executable", "binary", "command", "cmd", "tool")
_MAX_LIST_DEPTH = 32


def _argument_lists(col: Collector, m, node, program: str = "args", depth: int = 0) -> None:
    """A list of command-line words in a config (t19c: Scaffold-GS's SIBR `ColmapProcessSteps.json` passes
    `"--SiftExtraction.gpu_index", "${gpusIndices}"` to COLMAP) read as that program's options: a `--name value`
    pair or `--name=value` word against the command rules (`colmap --SiftExtraction.gpu_index=*`). The program is a
    sibling key's value when one names it, else none (`args`): only rules whose option names one program's own
    settings match a list of unknown program (`* --PatchMatchStereo.gpu_index*`)."""
    if depth > _MAX_LIST_DEPTH:
        return
    if isinstance(node, yaml.MappingNode):
        named = next((str(v.value).rsplit("/", 1)[-1] for k, v in node.value if isinstance(k, yaml.ScalarNode)
                      and str(k.value).lower() in _PROGRAM_KEYS and isinstance(v, yaml.ScalarNode)
                      and isinstance(v.value, str) and v.value and " " not in v.value), "args")
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and str(key.value) == "runArgs":
                continue        # a devcontainer's docker options (_run_args)
            _argument_lists(col, m, value, named, depth + 1)
        return
    if not isinstance(node, yaml.SequenceNode):
        return
    items = [v for v in node.value if isinstance(v, yaml.ScalarNode) and isinstance(v.value, str)]
    for i, item in enumerate(items):
        w = str(item.value)
        if not w.startswith("--") or len(w) < 4 or " " in w:
            continue
        nxt = str(items[i + 1].value) if i + 1 < len(items) else ""
        option = w if "=" in w or not nxt or nxt.startswith("-") else f"{w}={nxt}"
        rule = m.match_command(f"{program} {option}")
        if rule is not None:
            c = item.start_mark.column + (2 if item.style in ('"', "'") else 1)      # past the opening quote
            col.add(rule, f"{program} {option}", item.start_mark.line + 1, c, c + len(w))
    for child in node.value:
        if not isinstance(child, yaml.ScalarNode):
            _argument_lists(col, m, child, program, depth + 1)


def _jsonc_to_json(text: str) -> str:
    """JSON with comments (`//`, `/* */`) and trailing commas, as VS Code reads it, turned into JSON with every
    character kept in place: comments and the trailing commas become spaces."""
    out, i, n = list(text), 0, len(text)
    last_comma = None
    while i < n:
        ch = text[i]
        if ch == '"':
            i += 1
            while i < n and text[i] != '"':
                i += 2 if text[i] == "\\" else 1
            last_comma = None
        elif text.startswith("//", i):
            while i < n and text[i] != "\n":
                out[i] = " "
                i += 1
            continue
        elif text.startswith("/*", i):
            end = text.find("*/", i + 2)
            end = n if end < 0 else end + 2
            for k in range(i, end):
                if out[k] != "\n":
                    out[k] = " "
            i = end
            continue
        elif ch == ",":
            last_comma = i
        elif ch in "]}":
            if last_comma is not None:
                out[last_comma] = " "
            last_comma = None
        elif not ch.isspace():
            last_comma = None
        i += 1
    return "".join(out)


# keys whose list value is a program's argument vector in exec form: a Kubernetes / Kubeflow / KubeRay / Argo
# container's `command:` then `args:` (the container runs the two joined), compose's `command:` / `entrypoint:`
_VECTOR_KEYS = ("command", "entrypoint")
# a shell's option word that makes its next argument the script (`-c`, `-lc`, `-ec`, `-xec`)
_SCRIPT_FLAG_RE = re.compile(r"-[a-z]*c[a-z]*")


def _argument_vectors(root) -> list[list[yaml.ScalarNode]]:
    """Every exec-form argument vector in a YAML tree: a mapping's `command:` / `entrypoint:` list followed by its
    `args:` list when it comes after it (Kubernetes runs `command` + `args`), or an `args:` list alone in a
    container (beside `image:`, the image's entrypoint gets them). Only one-line scalar items: a block item is a
    script (`- |`), read when a shell runs it (_vector_blocks)."""
    vectors = []
    for entries in _mappings(root):
        parts = []
        for name in _VECTOR_KEYS:
            if isinstance(entries.get(name), yaml.SequenceNode):
                parts = [entries[name]]
                break
        args = entries.get("args")
        if isinstance(args, yaml.SequenceNode) and (parts and args.start_mark.line >= parts[0].end_mark.line
                                                    or not parts and "image" in entries):
            parts.append(args)
        items = [item for part in parts for item in part.value]
        if items and all(isinstance(item, yaml.ScalarNode) and isinstance(item.value, str) for item in items):
            vectors.append(items)
    return vectors


def _vector_blocks(lines: list[str], vector: list[yaml.ScalarNode]) -> list[str]:
    """An argument vector as shell text aligned with the file's lines (everything else blanked): `[bash, -c,
    SCRIPT]` is the script in its place (as a `run:` block); any other vector is one command whose words sit at
    their items' columns, shell-quoted, its lines joined by backslash continuations."""
    block = [""] * len(lines)
    words = [str(item.value) for item in vector]
    if len(words) > 2 and words[0].rsplit("/", 1)[-1] in _SHELLS and _SCRIPT_FLAG_RE.fullmatch(words[1]):
        _copy_lines(lines, block, vector[2], vector[2])
        return block
    placed = [item for item in vector if item.start_mark.line == item.end_mark.line and "\n" not in item.value]
    if not placed:
        return block
    first, last = placed[0].start_mark.line, placed[-1].start_mark.line
    for item in placed:
        n = item.start_mark.line
        if n >= len(lines):
            continue
        text = block[n]
        word = shlex.quote(str(item.value))
        block[n] = text + " " * max(item.start_mark.column - len(text), 1 if text else 0) + word
    for n in range(first, min(last, len(lines))):
        block[n] += " \\"
    return block


def _launcher_setup(path: str) -> bool:
    """Hydra's submitit Slurm launcher `hydra.launcher.setup`: "A list of commands to run in sbatch before running
    srun" (hydra-submitit-launcher's SlurmQueueConf), each item a line of the job script (`- module load cuda`). The
    whole key path, with the file's package: not any key named `setup` under some `launcher` (review49 item 7)."""
    return path.lower() == "hydra.launcher.setup"


def _copy_lines(lines: list[str], shell_lines: list[str], key, value) -> None:
    """A CI step's `run: |` block (or a one-line `run: cmd`) is a shell script: copy its lines, in place, with
    everything before the value blanked so columns stay true."""
    first, last = value.start_mark.line, value.end_mark.line
    if value.style in ("|", ">"):
        first += 1                            # the block starts on the line after the indicator...
        last = first + len(value.value.rstrip("\n").split("\n")) - 1    # ...and ends at its own last line
    for n in range(first, min(last + 1, len(lines))):
        shell_lines[n] = lines[n]
    if value.style not in ("|", ">") and first < len(lines):
        c = value.start_mark.column + (1 if value.style in ("'", '"') else 0)
        text = lines[first][c:].rstrip()
        if value.style in ("'", '"') and value.end_mark.line == first:
            # a quoted one-line item ends at its closing quote: a YAML comment after it (Cog's `- "pip install
            # pytorch-fast-transformers==0.4.0"  # needs to be installed after ...`) is no part of the command
            text = lines[first][c:value.end_mark.column].rstrip()
        # only a quoted scalar's own closing quote goes: a plain `run: echo "... -DGGML_CUDA=on ..."` keeps the
        # quote that closes its message, so the shell reader sees an echoed string (t33b)
        shell_lines[first] = " " * c + (text[:-1] if value.style in ("'", '"') and text.endswith(value.style) else text)


# Data catalogs with one entry per accelerator vendor (gpustack's model catalog: specs with `gpu_filters: {vendor:
# nvidia}`, instance templates with `manufacturer: nvidia` beside `manufacturer: ascend` ones, backend versions with
# `custom_framework: cuda`): an entry whose own vendor key names another vendor is chosen only on that vendor's
# devices. The keys that restrict an entry, directly or inside a filter / selector mapping:
_VENDOR_KEY_RE = re.compile(r"(?:\w+_)?(?:vendor|manufacturer)|custom_framework", re.I)
_FILTER_KEY_RE = re.compile(r"\w*(?:filter|selector)s?", re.I)
# vendor and framework words the backend vocabulary (auditor/backend_words.py) does not spell
_EXTRA_VENDOR_WORDS = {"cann": "npu", "huawei": "npu", "intel": "xpu", "dtk": "rocm", "cpu": "cpu", "apple": "mps",
                       "vulkan": "vulkan", "metal": "mps", "moorethreads": "musa", "mthreads": "musa"}
_VENDOR_WORD_RE = re.compile(r"[A-Za-z][\w.-]*")


def _other_vendor_image(ref: str) -> dict:
    """`rocm/pytorch:rocm7.0_...`: an image of another vendor's stack (ROCm), not a CUDA one; it sets up that
    backend, as a Dockerfile `FROM rocm/...` does (auditor/project/dockerfile.py): information, left as is."""
    from auditor.backend_words import OTHER_BACKENDS, backends_in_text

    backends = backends_in_text(ref.split("@", 1)[0])
    if backends and backends <= OTHER_BACKENDS:
        return {"severity": "info", "note": f" (an image of {', '.join(sorted(backends))}'s stack, not a CUDA one: "
                                            "another backend's set-up; left as is)"}
    return {}


def _vendor_backends(text: str) -> set[str]:
    """The backends one vendor / framework word names (`nvidia` -> cuda, `ascend` / `cann` -> npu, `amd` -> rocm);
    empty for anything that is not one such word."""
    from auditor.backend_words import BACKEND_NAMES, backends_in_text

    word = text.strip().lower()
    if not _VENDOR_WORD_RE.fullmatch(word):
        return set()
    if word in _EXTRA_VENDOR_WORDS:
        return {_EXTRA_VENDOR_WORDS[word]}
    return backends_in_text(word) if word in BACKEND_NAMES else set()


# ONNX Runtime execution providers (https://onnxruntime.ai/docs/execution-providers/), by the backend each runs on;
# `<Name>ExecutionProvider` in an Olive / ORT config's `execution_providers` list
_ORT_PROVIDER_BACKENDS = {"cuda": "cuda", "tensorrt": "cuda", "nvtensorrtrtx": "cuda", "cann": "npu", "dml": "directml",
                          "rocm": "rocm", "migraphx": "rocm", "openvino": "openvino", "coreml": "mps", "qnn": "qnn",
                          "cpu": "cpu", "xnnpack": "cpu", "dnnl": "cpu", "webgpu": "webgpu", "vitisai": "vitisai",
                          "nnapi": "nnapi"}


def _foreign_providers(value) -> str | None:
    """`[DmlExecutionProvider]`: the providers, shown, when every one is a known ONNX Runtime provider and none runs
    on CUDA or Ascend (Olive's `accelerators: [{device: gpu, execution_providers: [DmlExecutionProvider]}]` in
    stable-diffusion-webui-amdgpu is DirectML's GPU, not a CUDA device; s15d)."""
    items = [value] if isinstance(value, yaml.ScalarNode) else value.value if isinstance(value, yaml.SequenceNode) \
        else []
    words = [str(v.value) for v in items if isinstance(v, yaml.ScalarNode)]
    kinds = [_ORT_PROVIDER_BACKENDS.get(w[:-len("ExecutionProvider")].lower()) if w.endswith("ExecutionProvider")
             else None for w in words]
    if words and len(words) == len(items) and all(kinds) and not {"cuda", "npu"} & set(kinds):
        return "[" + ", ".join(words) + "]"
    return None


def _restricting_vendor(node) -> tuple[str, str] | None:
    """(`key: value`, value) when a mapping's own vendor key (or one inside its filter / selector mapping) limits it
    to vendors none of which is Ascend, or its ONNX Runtime providers to backends that are neither CUDA nor Ascend;
    None otherwise."""
    for key, value in node.value:
        if not isinstance(key, yaml.ScalarNode):
            continue
        name = str(key.value)
        if name == "execution_providers":
            shown = _foreign_providers(value)
            if shown is not None:
                return f"{name}: {shown}", shown
            continue
        if _FILTER_KEY_RE.fullmatch(name) and isinstance(value, yaml.MappingNode):
            inner = _restricting_vendor(value)
            if inner is not None:
                return f"{name}.{inner[0]}", inner[1]
            continue
        if not _VENDOR_KEY_RE.fullmatch(name):
            continue
        items = [value] if isinstance(value, yaml.ScalarNode) else value.value \
            if isinstance(value, yaml.SequenceNode) else []
        words = [str(v.value) for v in items if isinstance(v, yaml.ScalarNode)]
        backends = [_vendor_backends(w) for w in words]
        if words and len(words) == len(items) and all(backends) and not any("npu" in b for b in backends):
            shown = words[0] if len(words) == 1 else "[" + ", ".join(words) + "]"
            return f"{name}: {shown}", shown
    return None


def _vendor_values(node, found: dict[str, set[str]]) -> dict[str, set[str]]:
    """Vendor key name -> the backends its values name anywhere in the document (`custom_framework`: cuda, npu)."""
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _vendor_values(item, found)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if isinstance(key, yaml.ScalarNode) and _VENDOR_KEY_RE.fullmatch(str(key.value)) \
                    and isinstance(value, yaml.ScalarNode):
                found.setdefault(str(key.value), set()).update(_vendor_backends(str(value.value)))
            _vendor_values(value, found)
    return found


def _last_line(node) -> int:
    """The 1-based last line a node's text takes (a block mapping ends at column 0 of the line after it)."""
    end = node.end_mark
    return end.line if end.column == 0 and end.line > node.start_mark.line else end.line + 1


def _backend_keys(node, path: str, found: dict[str, set[str]]) -> dict[str, set[str]]:
    """Dotted path (list items share their list's path) -> the backend names its mappings use as keys."""
    if isinstance(node, yaml.SequenceNode):
        for item in node.value:
            _backend_keys(item, path, found)
    elif isinstance(node, yaml.MappingNode):
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            backends = _vendor_backends(str(key.value))
            if backends:
                found.setdefault(path, set()).update(backends)
            _backend_keys(value, f"{path}.{key.value}", found)
    return found


def backend_entries(root) -> list[tuple[int, int, str]]:
    """(first line, last line, why) of the parts of a config that belong to a non-Ascend backend by the data's own
    structure:
    - an entry (a mapping inside a list or a mapping, not the document itself) whose vendor key names only other
      vendors: `gpu_filters: {vendor: nvidia}`, `manufacturer: nvidia`, `custom_framework: cuda`; an entry that is
      not a list item only when that key names another vendor elsewhere in the file (a catalog keyed by version:
      `custom_framework: cuda` beside `custom_framework: cann`), so `cluster: {gpu_vendor: nvidia}` alone, the
      project's own choice, keeps its findings;
    - the member of a per-backend map whose keys are backend names (`framework_index_map: {cuda: [...], cann:
      [...]}`), when that map (at the same key path anywhere in the file) has an Ascend member too, or when the
      member holds data (a list or mapping) beside other backends' members: a switch such as torchtune's
      `profiler: {cpu: True, cuda: True}` is a setting, not another backend's entry."""
    keyed = _backend_keys(root, "", {})
    vendors = _vendor_values(root, {})
    out: list[tuple[int, int, str]] = []

    def walk(node, path: str, depth: int, in_list: bool = False) -> None:
        if isinstance(node, yaml.SequenceNode):
            for item in node.value:
                walk(item, path, depth + 1, True)
            return
        if not isinstance(node, yaml.MappingNode):
            return
        restricted = _restricting_vendor(node) if depth else None
        if restricted is not None and not in_list and len(vendors.get(restricted[0].rsplit(".", 1)[-1].split(":")[0],
                                                                     set())) < 2:
            restricted = None     # `cluster: {gpu_vendor: nvidia}` alone: the project's own choice, not a catalog
        if restricted is not None:
            out.append((node.start_mark.line + 1, _last_line(node),
                        f"an entry restricted by `{restricted[0]}` to that vendor's devices: never chosen on Ascend, "
                        "another backend's entry; left as is"))
            return
        members = keyed.get(path, set())
        for key, value in node.value:
            if not isinstance(key, yaml.ScalarNode):
                continue
            backends = _vendor_backends(str(key.value))
            if backends and "npu" not in backends and len(members) > 1 and (
                    "npu" in members or not isinstance(value, yaml.ScalarNode)):
                others = ", ".join(sorted(members - backends))
                out.append((key.start_mark.line + 1, _last_line(value),
                            f"the `{key.value}` member of a per-backend map (`{path.lstrip('.') or key.value}` also "
                            f"has {others}): another backend's entry; left as is"))
                continue
            walk(value, f"{path}.{key.value}", depth + 1)

    walk(root, "", 0)
    out.extend(_catalogue_entries(root, ""))
    return out


# lists whose items are steps of one job, not alternatives: `- name: Build (cuda)` beside `- name: Build (cpu)`
_SEQUENTIAL_KEYS = frozenset({"steps", "tasks", "commands", "script", "before_script", "after_script"})
_NAME_WORD_RE = re.compile(r"[A-Za-z0-9]+")


def _entry_name(node) -> str | None:
    """The scalar `name:` of a mapping, or None."""
    return next((str(v.value) for k, v in node.value if isinstance(k, yaml.ScalarNode) and k.value == "name"
                 and isinstance(v, yaml.ScalarNode)), None)


def _catalogue_entries(node, key: str) -> list[tuple[int, int, str]]:
    """(first line, last line, why) of the non-Ascend members of per-vendor catalogues: a list of entries whose
    names are one name spelled once per backend (LocalAI's backend gallery `backend/index.yaml`: `cpu-llama-cpp`,
    `cuda12-llama-cpp`, `rocm-llama-cpp`, `intel-sycl-f16-llama-cpp`, `vulkan-llama-cpp`, `metal-llama-cpp`, each
    with its own image `uri:`; LocalAI installs the one its detected GPU asks for, so an Ascend host never pulls the
    CUDA one). The list is a catalogue when its entries' names name three backend sets or more (a CUDA / CPU pair
    of a project's own settings is none) and two of them are one name for two backends (the words of one, backend
    words left out, all in the other's: `cpu-llama-cpp` / `cuda12-llama-cpp-development`). Then every entry named
    for other vendors only is one vendor's image, CUDA-only ones (`cuda12-longcat-video`) included: information
    (pd1, issue 11)."""
    from auditor.backend_words import name_word_backends

    out: list[tuple[int, int, str]] = []
    if isinstance(node, yaml.MappingNode):
        for k, v in node.value:
            if isinstance(k, yaml.ScalarNode):
                out.extend(_catalogue_entries(v, str(k.value)))
        return out
    if not isinstance(node, yaml.SequenceNode):
        return out
    entries = []
    for item in node.value:
        if isinstance(item, yaml.MappingNode):
            out.extend(_catalogue_entries(item, key))
            name = _entry_name(item)
            if name is None or key.lower() in _SEQUENTIAL_KEYS:
                continue
            word_backends = {w: name_word_backends(w) for w in (w.lower() for w in _NAME_WORD_RE.findall(name))}
            backends = set().union(*word_backends.values())
            words = [w for w, b in word_backends.items() if w == "cpu" or not b]
            if "cpu" in words:
                backends.add("cpu")
                words.remove("cpu")
            if backends:
                entries.append((item, name, frozenset(backends), frozenset(words)))
    if len({b for _, _, b, _ in entries}) < 3:
        return out
    pair = next(((n, m) for _, n, b, r in entries for _, m, c, q in entries
                 if b != c and r and q and r <= q), None)
    if pair is None:
        return out
    for item, name, named, rest in entries:
        if "npu" not in named and named != {"cpu"}:
            # the same name for another backend when there is one (`cpu-llama-cpp` for `cuda12-llama-cpp`)
            other = next((n for _, n, b, r in entries if b != named and r and rest and (r <= rest or rest <= r)),
                         pair[0] if pair[0] != name else pair[1])
            out.append((item.start_mark.line + 1, _last_line(item),
                        f"the `{name}` entry of a per-vendor catalogue (`{other}` in it too): chosen only on that "
                        "vendor's hardware, never on Ascend; another backend's entry; left as is"))
    return out


def _in_backend_entry(finding, spans: list[tuple[int, int, str]]):
    """A finding inside another backend's entry: information in context `other-backend`, never rewritten."""
    from dataclasses import replace

    why = next((w for a, b, w in spans if a <= finding.line <= b), None)
    if why is None or finding.severity == "info":
        return finding
    data = {k: v for k, v in finding.data.items() if k not in ("replace", "edit")}
    data["context"] = "other-backend"
    return replace(finding, severity="info", fix="none", data=data, message=f"{finding.message} ({why})")
