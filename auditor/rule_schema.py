"""The rule file schema, every level of it: a JSON Schema checked with `jsonschema` when the catalogue
loads, so a mistyped key anywhere (`when`, `extra`, `examples`, `doc`, a symbol entry, a per-product
severity) is an error with its file and line, not a silently ignored setting. `audit rules --check` runs it
on its own. rules/README.md documents the same shape in prose."""
from __future__ import annotations

import re
from typing import Any

import yaml

from auditor.findings import CATEGORIES, EFFORTS, FIX_APPLICABILITY, SEVERITIES
from auditor.target import PRODUCTS

MATCHER_KINDS = ("qualname", "method", "attribute", "string", "env", "import", "file", "coverage", "dynamic",
                 # the cross-file pass (auditor/static/crossfile.py): uses of the project's own CUDA-specific code
                 "crossfile",
                 # value flow inside one file (auditor/static/valueflow.py): uses of CUDA-bound names
                 "valueflow",
                 # the Makefile a `make` call runs (auditor/project/makefile.py): produced after every file is read
                 "makefile",
                 # the CMakeLists.txt a `cmake` configure call reads (auditor/project/cmake_calls.py): after every file
                 "cmakelists",
                 # the Python file a launch line runs, when it is an attention wrapper (auditor/project/launched.py)
                 "launched",
                 # the setup.py a build of one of the project's own folders runs (auditor/project/local_builds.py)
                 "setuppy",
                 # a C++ qualified name in the host code of a CUDA source (.cu / .cuh): `torch::kCUDA` (engine.py)
                 "cxx_name",
                 # a reading of a whole CUDA source file (`tensorrt-host`: TensorRT host code; engine.py, tp59a)
                 "cuda_source",
                 "callname", "flagname", "keyword",
                 # project files (auditor/project/): dependency pins, shell commands, base images, config settings
                 "requirement", "command", "image", "setting")
STATUSES = ("stable", "preview", "removed")

_STRINGS = {"type": "array", "items": {"type": "string"}}
_STRING_OR_STRINGS = {"anyOf": [{"type": "string"}, _STRINGS]}
_TEXT = {"type": "string", "minLength": 1}
_SEVERITY = {"anyOf": [
    {"enum": list(SEVERITIES)},
    {"type": "object", "required": ["default"], "additionalProperties": False,
     "properties": {key: {"enum": list(SEVERITIES)} for key in ("default", *PRODUCTS)}},
]}
_ARG = {"type": "object", "additionalProperties": False, "properties": {
    "pos": {"type": "integer", "minimum": 0}, "kw": {"type": "string"},
    "values": {"type": "array"}, "within": {"type": "boolean"},
    # literal values that make the call no finding (`set_float32_matmul_precision("highest")`: TF32 off, as on Ascend)
    "not_values": {"type": "array"},
    # a value that is no literal (`reduce=self.aggr`, an option) also holds
    "unknown": {"type": "boolean"}}}

RULE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["code", "name", "category", "severity", "effort", "message", "match", "doc"],
    "properties": {
        "code": {"type": "string", "pattern": r"^NPU\d{3}$"},
        "name": {"type": "string", "pattern": r"^[a-z0-9]+(-[a-z0-9]+)*$"},
        "category": {"enum": list(CATEGORIES)},
        "severity": _SEVERITY,
        "effort": {"enum": list(EFFORTS)},
        "fix": {"enum": list(FIX_APPLICABILITY)},
        "status": {"enum": list(STATUSES)},
        "message": _TEXT,
        "substitution": {"type": ["string", "null"]},
        "replace": {"type": ["string", "null"]},
        "default_on": {"type": "boolean"},
        "source_note": {"type": "string"},
        "example_file": _TEXT,
        "match": {"type": "array", "minItems": 1, "items": {
            "type": "object", "minProperties": 1, "maxProperties": 1, "additionalProperties": False,
            "properties": {kind: _STRING_OR_STRINGS for kind in MATCHER_KINDS}}},
        "when": {"type": "object", "additionalProperties": False, "properties": {
            "arg": _ARG,
            "missing_arg": {"type": "object", "additionalProperties": False,
                            "properties": {"pos": {"type": "integer", "minimum": 0}, "kw": _STRING_OR_STRINGS}},
            "operand_of": {"type": "string"},
            "in_loop": {"type": "boolean"}}},
        "extra": {"type": "object", "additionalProperties": False, "properties": {
            "stack": {"type": "boolean"},
            # string rules: a finding on a multi-line literal is reported on the literal's first line that this
            # regular expression finds (`#include <cuda_runtime`: the first CUDA element of a source; tk47)
            "at_line_of": {"type": "string"},
            # qualname rules: a generated table in op_tables/ whose rows are packages (`cuda_packages.json`, g1): each
            # row whose verdict has a severity in `table_severity` is matched by its import name (rules.py)
            "table": {"type": "string"},
            "table_severity": {"type": "object", "additionalProperties": {"enum": list(SEVERITIES)}},
            # keyword rules: a value made only of string literals is a switch only when one matches a glob here
            # (apex `opt_level="O1"`, not the compiler flag `opt_level = "-O3"`)
            "keyword_values": {"type": "array", "items": {"type": "string"}},
            # keyword rules with keyword_values: only a literal value is the choice (`attn_implementation = "sdpa"`,
            # not `attn_implementation = args.attn`) (t14t)
            "keyword_literal_only": {"type": "boolean"},
            # `name=value` keyword rules: a conditional value whose branch is the literal (`accelerator="ddp" if n > 1
            # else None`) is the choice too (tp56a)
            "either_branch": {"type": "boolean"},
            # an implementation chosen by name (`flash_attention_impl="triton"` as a parameter's default, tk39): the
            # definition holding it chooses among paths, so the cross-file pass does not make its callers CUDA-specific
            # for it (as a flag check; a caller passing the name has its own finding)
            "implementation_choice": {"type": "boolean"},
            # keyword rules with keyword_values: also a variable of that name compared with one of the values
            # (`if impl == 'cuda' and x.device.type == 'cuda':`, StyleGAN's ops: the test that takes the plugin), and only in
            # a file that tests it so or builds a CUDA plugin (t22b)
            "keyword_compared": {"type": "boolean"},
            # keyword rules: only a literal `True` or non-zero integer is the switch (`use_triton=True`,
            # `num_fp16_res = 4`; not a value computed or passed through, which tp12 found 0 of 8 right on the
            # precision trees)
            "keyword_true_only": {"type": "boolean"},
            # keyword rules: a value that reads the setting back under its own name (`args.use_flash_attn`,
            # `params["use_flash_attention"]`) or an availability probe's answer hands the choice on (tq58b)
            "handed_on_reads": {"type": "boolean"},
            # keyword rules: these keywords report also when the same name is passed on (`build(cuda_home=cuda_home)`:
            # a path handed to the build that uses it, not a switch decided where the value is made; tk40); on a rule
            # that matches a call, these keywords of that call (`create_extension(..., with_cuda=with_cuda)`; tk47)
            "passed_on_keywords": {"type": "array", "items": {"type": "string"}},
            # qualname rules: also the `import M` line of the package a matched name lies in, when no rule reports that
            # import by its own name (`import encoding` before `encoding.parallel.DataParallelModel(net)`, tk41)
            "import_reached": {"type": "boolean"},
            # callname rules: their globs are tried before the other rules' (a name a more general glob also matches:
            # `ENABLE_CUDA_KERNEL` is NPU894's, not the `*CUDA*` helper rule NPU039's; t29a)
            "glob_first": {"type": "boolean"},
            # project files: not reported in a file that names one of these (the package that completes the port)
            "ported_by": {"type": "array", "items": {"type": "string"}},
            # method rules: not when the receiver is a chain of an imported module (`flag_gems.ops.flash_attn_func(...)`:
            # that package's own function, not one held in an object's attribute) (t14g)
            "not_on_modules": {"type": "boolean"},
            # keyword rules: a string key (`{"nvcc": [...]}`, `d["nvcc"] = ...`) is the setting and string rules leave
            # it alone; a variable of that name is not the setting (`nvcc = shutil.which("nvcc")`) (t14r)
            "keyword_key": {"type": "boolean"},
            # keyword rules: the name holds a list of compiler flags, and flags added to it or taken out of it
            # (`nvcc_extra_args + ["--threads", "4"]`, `nvcc_flags.append("-O3")`, `COMMON_NVCC_FLAGS.remove(...)`)
            # set it as an assignment does (t20a)
            "flag_list": {"type": "boolean"},
            # the rule that reports these rules' bare "cuda" compared or listed in an extension build module (t14r)
            "build_variant_of": {"type": "array", "items": {"type": "string"}},
            # rules whose every hit in an extension build script the same rule reports (t27b: nvcc's version probe,
            # the CUDA runtime linked into the extension)
            "build_script_of": {"type": "array", "items": {"type": "string"}},
            # rules whose every hit in a build script that hands .cu files to nvcc through distutils' own compiler
            # (hand_builds.py: `src_extensions.append('.cu')`, `set_executable('compiler_so', nvcc)`) the same rule
            # reports: nvcc there is the build's compiler (tk46)
            "hand_build_of": {"type": "array", "items": {"type": "string"}},
            # keyword `name=value` rules: also a string key of a dict built in code with that literal value
            # (`{"quant_algo": "FP8"}`, t14k)
            "dict_entries": {"type": "boolean"},
            # `*.seg.*` qualname rules: only a dependency's absolute module path (`mmcv.tensorrt.TRTWraper`), never a
            # relative import of the project's own module (`from .trt import engine`), which is not bound for them (g5)
            "dependency_only": {"type": "boolean"},
            # crossfile: module -> its subpackages that load none of the compiled build's ops (PyTorch3D's transforms)
            "pure_submodules": {"type": "object", "additionalProperties": {"type": "array", "items": {"type": "string"}}},
            # requirement rules: source builds that compile CUDA only with a GPU visible at build time or FORCE_CUDA
            # set, quiet in a Dockerfile without FORCE_CUDA (`docker build` shows no GPU; dockerfile.py, tp50b)
            "gpu_at_build": {"type": "array", "items": {"type": "string"}},
            # with dict_entries: only entries under these keys (`{"accelerator": "gpu"}`, not a JSON config's
            # `{"device": "gpu"}` for another runtime, t36a)
            "dict_entry_keys": {"type": "array", "items": {"type": "string"}},
            # keyword `name=value` rules: also a literal assigned to a variable of that name or a parameter's literal
            # default (`image_name = "...cuda10.0..."`, `def deploy(instance_type="ml.g5.xlarge")`, t32b)
            "assigned_values": {"type": "boolean"},
            # string rules: only a literal inside a comparison (`"nvidia" in device_name`, t14l)
            "compared_only": {"type": "boolean"},
            # with compared_only: only a literal compared with a device probe's answer (`"A100" in
            # torch.cuda.get_device_name()`, a name bound to nvidia-smi's output) (tk43)
            "probe_compared": {"type": "boolean"},
            # string rules: not a label cut off a text (`.replace("+cu121", "")`) or one of a table of builds
            "label_tests_only": {"type": "boolean"},
            # string rules: not a literal a name is tested against (`libname.startswith("libnccl.so.2")`,
            # `name == "libnccl.so.2"`): a test of a name loads nothing (tq46a)
            "not_name_tests": {"type": "boolean"},
            "not_listed": {"type": "boolean"},
            # string rules: not an item on a later line of a multi-line `{"nvcc": [...]}` slot, whose key the
            # keyword_key rule reports on its own line (lead decision 18: one decision; tp55b)
            "slot_folded": {"type": "boolean"},
            # string rules of commands: not a literal that ends as an exclamation or a question (`return False,
            # 'nvcc unavailable!'`: a status text handed back, not a command line, t33a)
            "not_sentences": {"type": "boolean"},
            # only in a file that imports one of these modules (`ctypes.CDLL("ssd/libflattenconcat.so")` beside
            # `import tensorrt`: a TensorRT plugin library, t28a)
            "file_imports": {"type": "array", "items": {"type": "string"}},
            # only in an extension build script (a file importing setuptools / distutils and an extension builder,
            # visitor.py `_build_variant_rule`): `os.environ.get("ENABLE_CUDA")`, `("ENABLE_CUDA", 1)` there switch the
            # CUDA build, elsewhere the same name may switch a service's device (tk44)
            "build_scripts_only": {"type": "boolean"},
            # with compared_only: only a literal that is an operand itself (or an item of a tuple / list / set operand),
            # not one inside a call in the comparison (`find_spec("bitsandbytes") is None` has its own rule) (t21d)
            "compared_operand": {"type": "boolean"},
            # method rules: only a call with no positional argument (`t.item()`, not a Qt model's `model.item(row)`)
            # (t14q)
            "no_args": {"type": "boolean"},
            # keyword rules: only the name of a command-line option (argparse `add_argument`, click `option`) whose
            # default picks a CUDA device (`--cuda` default 0, `--gpu_id` default 0, `--use_cuda` default True) (t14v)
            "option_only": {"type": "boolean"},
            # attribute rules: only a class's member (`Device.cuda`) that is an operand of a comparison (t14v)
            "enum_compared": {"type": "boolean"},
            # attribute rules: not a member of these classes (`onnx.TensorProto.FLOAT16`: the element type of an ONNX
            # graph's tensor, which ONNX Runtime reads; no PyTorch setting) (t16e)
            "not_on_receivers": {"type": "array", "items": {"type": "string"}},
            # method rules: only a call on a list of one of these names or ending `_<name>` (`libraries.append(
            # "cusolver")`, `extra_libraries.extend([...])`; not `backends.append("cudnn")`) (t18a); attribute rules:
            # only a member of a class of these names (`DType.bfloat16`, not `np.float16`; t23a)
            "on_receivers": {"type": "array", "items": {"type": "string"}},
            # attribute rules: a settings object's field, whose write is the use (`config.gpu_options.allow_growth =
            # True`; other attribute rules read an assignment target as a binding, not the property) (tp47a)
            "setting_field": {"type": "boolean"},
            # string rules: not a subscript key spelled as one of the names (`env["torch_cuda"] = torch.version.cuda`
            # is a record's entry, not the library) (tp47b)
            "not_as_key": {"type": "boolean"},
            # string rules: patterns of the rule's own list that count only in a compiler's command line (first word
            # g++ / gcc / clang / nvcc: hand_builds.compiler_command), not in any text ending in a link flag (review47)
            "in_compiler_command": {"type": "array", "items": {"type": "string"}},
            # string rules: these patterns only as an item of a list literal (`libraries += ['torch_cuda']`), not a
            # dict key, a tuple's label or a lone value (`backend = "torch_cuda" if ... else "torch_cpu"`) (fix47a)
            "in_lists_only": {"type": "array", "items": {"type": "string"}},
            # requirement rules: a `path:` pattern of the folder a `make` builds (`make -C nvdsinfer_custom_impl_Yolo`,
            # `cd $NVDSINFER_PATH && make`; shell.py `_make_folder`) (tp47a)
            "folder_build": {"type": "boolean"},
            # command rules matched on an option (`python* --use_gemm_plugin*`): reported once on the command's first
            # word, the options being parts of one command (decision 18; shell.py's option loop) (tp48b)
            "at_command": {"type": "boolean"},
            # launched-wrapper rules: glob of a launched file's path -> the attention kernel its upstream wrapper
            # patches in, asked only where the tree lacks the file (`llava/train/train_mem.py`; launched.py) (tp49a)
            "absent_wrappers": {"type": "object", "additionalProperties": {"type": "string"}},
            # qualname rules: not the module named on its own (`assert hvd is not None`, `self._HVD = hvd`): what the
            # code calls or reads in it is the finding (t18a: Horovod)
            "not_bare_module": {"type": "boolean"},
            # env rules: only a project file's setting of the variable (Dockerfile ENV, export, a command prefix,
            # a config's env block), in place of the rule that reports its reads and Python's uses (t15q)
            "sets_only": {"type": "boolean"},
            # qualname rules: an UPPER_CASE constant of the package read but not called (`pynvml.NVML_DEVICE_ARCH_AMPERE`
            # as a table key) queries nothing; the package's calls on the same module are the findings (t11v)
            "calls_not_constants": {"type": "boolean"},
            # qualname rules with calls_not_constants: a member of the library's enum compared with a value the code holds
            # (`param.ds_status == ZeroParamStatus.NOT_AVAILABLE`) reads a constant, no finding (r2b; lead decision 40).
            # Not TensorRT's: test45 labels `engine.get_binding_dtype(...) == trt.DataType.FLOAT` as the engine's use
            "compared_members_quiet": {"type": "boolean"},
            # keyword rules: not a parameter's default (`def __init__(self, load_in_4bit: bool = True)`: a config
            # class's own field) and not a dict literal's entry (`{"load_in_8bit": True}` weight markers) (t14z)
            "not_parameters": {"type": "boolean"},
            # keyword rules: only a function parameter's default, and only the literal True or a non-zero integer
            # (`def main(ways=5, cuda=True)`, `cuda=1`; a bare `cuda` elsewhere is a table key or a variable) (t17c)
            "parameters_only": {"type": "boolean"},
            # parameters_only keyword rules: the name turns CUDA off (`no_cuda`), so the default that leaves CUDA on
            # is the literal False (`def downsample(x, planes, stride, no_cuda=False)`) (pd13)
            "off_switch": {"type": "boolean"},
            "not_dict_literals": {"type": "boolean"},
            # keyword rules: only a setting, not code's own use of the name: a dataclass field, or the literal True
            # as a keyword of a call that is not torch's (`cudnn_enabled` is also aten's batch_norm / layer_norm
            # parameter, and state records copy it) (t24a)
            "settings_only": {"type": "boolean"},
            # string rules: only a literal that is one arm of a conditional whose other arm is one of these
            # (`"tf32" if allow_tf32 else "ieee"`) (t14z)
            "arm_paired_with": {"type": "array", "items": {"type": "string"}},
            # call rules with `when: arg`: the finding starts at that argument, not at the callee (`find_spec(`
            # on one line, `f"{library}_cuda"` on the next: the line that names the CUDA module) (t17g)
            "at_arg": {"type": "boolean"},
            # command rules: a `.../bin/<tool>` path held in a script variable counts as running the tool even where
            # the script does not run the variable itself (Triton's sourced util.sh runs `$SERVER`) (fix46a)
            "held_path": {"type": "boolean"}}},
        "symbols": {"type": "object", "additionalProperties": {"anyOf": [{"type": "null"}, {
            "type": "object", "additionalProperties": False, "properties": {
                "substitution": {"type": ["string", "null"]}, "message": {"type": "string"},
                "severity": _SEVERITY, "fix": {"enum": list(FIX_APPLICABILITY)},
                "replace": {"type": ["string", "null"]}, "effort": {"enum": list(EFFORTS)}}}]}},
        "doc": {"type": "object", "additionalProperties": False, "required": ["what", "why", "use_instead"],
                "properties": {"what": _TEXT, "why": _TEXT, "use_instead": _TEXT}},
        "examples": {"type": "object", "additionalProperties": False, "properties": {
            "flag": _STRINGS, "ok": _STRINGS,
            "fix": {"type": "array", "items": {"type": "object", "additionalProperties": False,
                                               "required": ["before", "after"],
                                               "properties": {"before": {"type": "string"},
                                                              "after": {"type": "string"}}}}}},
    },
}

FILE_SCHEMA: dict[str, Any] = {
    "type": "object",
    "additionalProperties": False,
    "required": ["rules"],
    # `x-...` keys hold YAML anchors that rules refer to (`x-package-lookups: &lookups [...]`)
    "patternProperties": {"^x-": {}},
    "properties": {"family": {"type": "string"}, "rules": {"type": "array", "items": RULE_SCHEMA}},
}


def _node_at(node: yaml.Node, path, key: bool = False) -> yaml.Node:
    """The YAML node at a jsonschema error path (keys and list indexes), as deep as the path goes; with
    key=True the last step names a key, and its key node is returned (where the typo is)."""
    for i, step in enumerate(path):
        if isinstance(node, yaml.MappingNode):
            pair = next(((k, v) for k, v in node.value if k.value == step), None)
            if pair is None:
                break
            if key and i == len(path) - 1:
                return pair[0]
            node = pair[1]
        elif isinstance(node, yaml.SequenceNode) and isinstance(step, int) and step < len(node.value):
            node = node.value[step]
        else:
            break
    return node


def duplicate_keys(root: yaml.Node | None, filename: str) -> list[str]:
    """A key written twice in one mapping, at any depth, as `file:line: duplicate key 'k' (first at line n)`:
    YAML loaders keep the last one silently, so a second `NPU015:` in the severity policy would hide the first."""
    found: list[str] = []
    stack = [root] if root is not None else []
    while stack:
        node = stack.pop()
        if isinstance(node, yaml.MappingNode):
            first: dict[str, int] = {}
            for k, v in node.value:
                if isinstance(k, yaml.ScalarNode):
                    line = k.start_mark.line + 1
                    if k.value in first:
                        found.append(f"{filename}:{line}: duplicate key {k.value!r} (first at line {first[k.value]})")
                    else:
                        first[k.value] = line
                stack.append(v)
        elif isinstance(node, yaml.SequenceNode):
            stack.extend(node.value)
    return sorted(found, key=lambda t: int(t.split(":")[1]))


def schema_errors(text: str, filename: str) -> list[str]:
    """Every schema violation in one rule file, as `file:line: where: what` lines (empty when valid)."""
    import jsonschema

    try:
        data = yaml.safe_load(text)
        root = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.YAMLError as exc:
        mark = getattr(exc, "problem_mark", None)
        return [f"{filename}:{mark.line + 1 if mark else 1}: invalid YAML: {str(exc).splitlines()[0]}"]
    if data is None:
        return []
    validator = jsonschema.Draft202012Validator(FILE_SCHEMA)
    found = [(True, int(text_.split(":")[1]), text_) for text_ in duplicate_keys(root, filename)]
    for err in validator.iter_errors(data):
        # the deepest failure of an anyOf says what is wrong (`severity: {a2: errror}`), not "is not valid"
        leaf = min(err.context, key=lambda e: -len(e.absolute_path)) if err.context else err
        path = list(err.absolute_path) + list(leaf.relative_path if leaf is not err else [])
        message = leaf.message
        unknown = leaf.validator == "additionalProperties" and isinstance(leaf.instance, dict)
        if unknown:
            allowed = leaf.schema.get("properties", {})
            patterns = leaf.schema.get("patternProperties", {})
            extra = [k for k in leaf.instance if k not in allowed and not any(re.match(p, str(k)) for p in patterns)]
            path.append(extra[0])
            message = f"unknown key {extra[0]!r}; known: {', '.join(sorted(allowed))}"
        node = _node_at(root, path, key=unknown) if root is not None else None
        line = node.start_mark.line + 1 if node is not None else 1
        # a mistyped key is the cause; the `required` error it also makes is the consequence: list it after
        found.append((not unknown, line, f"{filename}:{line}: {_describe(data, path)}: {message}"))
    return [text for *_, text in sorted(found)]


def _describe(data: Any, path: list) -> str:
    """`rules[3] NPU015 when.arg` from an error path."""
    if len(path) >= 2 and path[0] == "rules" and isinstance(path[1], int):
        rules = data.get("rules") or []
        code = rules[path[1]].get("code", "?") if path[1] < len(rules) and isinstance(rules[path[1]], dict) else "?"
        rest = ".".join(str(p) for p in path[2:])
        return f"rules[{path[1]}] {code}" + (f" {rest}" if rest else "")
    return ".".join(str(p) for p in path) or "file"
