"""Find the user's model entry: the function that returns a model and example inputs.

Only `--trace` / execute mode import user code, and they do it in a child process (auditor.sandbox);
`resolve_entry` itself imports the user's file, so call it in the child.

The entry function takes no arguments and returns one of:

* ``(model, inputs)``
* ``(model, inputs, loss_fn)``
* ``(model, inputs, loss_fn, optimizer_factory)``
* a dict with the key ``model`` and optionally ``inputs`` (or ``args`` / ``kwargs``), ``loss_fn``,
  ``optimizer`` (or ``optimizer_factory``)
* an :class:`EntrySpec`

``inputs`` is a tuple or list (positional arguments), a dict (keyword arguments) or a single tensor.
``loss_fn(output)`` takes the model's output and returns a scalar tensor; build labels in the entry
function and close over them. ``optimizer_factory(params)`` returns a ``torch.optim.Optimizer``; an
optimizer class such as ``torch.optim.SGD`` is accepted as is.

The entry runs under whatever mode the caller sets (FakeTensorMode for the tracer, real CPU tensors for
execute mode), so it must create its tensors inside the function, not at import time.
"""
from __future__ import annotations

import ast
import importlib
import importlib.util
import json
import os
import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

DEFAULT_ENTRY = "audit_entry"

# Sequence length and batch for --hf-config inputs: long enough that attention dominates the FLOP count
# the way it does in training, and the trace cost does not depend on it (fake tensors hold no data).
HF_BATCH = 1
HF_SEQ_LEN = 2048
# State-space layers (Mamba) have no CUDA scan kernel here: transformers' reference scan is a Python loop
# over the tokens, ~0.1 s per token per traced layer kind, so their default is shorter (--seq-len sets it).
HF_SSM_SEQ_LEN = 256

ENTRY_TEMPLATE = '''\
def {name}():
    model = MyModel(...)                                  # your nn.Module, no weights needed
    x = torch.randn(8, 3, 224, 224)                       # example inputs, created inside the function
    y = torch.randint(0, 1000, (8,))
    loss_fn = lambda out: torch.nn.functional.cross_entropy(out, y)   # optional
    return model, (x,), loss_fn'''


@dataclass
class EntrySpec:
    model: Any                                   # torch.nn.Module
    args: tuple = ()                             # positional example inputs
    kwargs: dict = field(default_factory=dict)   # keyword example inputs
    loss_fn: Callable | None = None              # loss_fn(output) -> scalar tensor
    optimizer_factory: Callable | None = None    # params -> torch.optim.Optimizer
    label: str = ""                              # what the report calls this model


class EntryError(Exception):
    """The entry cannot be found or returned something unusable; the message says what to write."""


def resolve_entry(source: Path | None, entry: str | None = None,
                  hf_config: Path | None = None, seq_len: int | None = None,
                  batch: int | None = None) -> Callable[..., EntrySpec]:
    """Return a zero-argument factory that builds the model and its inputs.

    `entry` is a function name in `source` (default `audit_entry`) or `module:callable` (imported with
    the source's folder on sys.path). `hf_config` builds a transformers model from a local config.json
    instead, without hub access or weights; `source` may then be None. `seq_len` and `batch` size the
    inputs built for a config (defaults HF_SEQ_LEN, HF_BATCH); an entry function sizes its own.
    """
    if hf_config is not None:
        return _hf_factory(Path(hf_config), seq_len, batch)
    if entry and ":" in entry:
        module_name, _, attr = entry.partition(":")
        if source is not None:
            folder = Path(source).resolve()
            _prepend_path(folder if folder.is_dir() else folder.parent)
        _prepend_path(Path.cwd())
        try:
            module = importlib.import_module(module_name)
        except ImportError as exc:
            raise EntryError(f"--entry {entry}: cannot import module {module_name!r}: {exc}") from None
        return _wrap(_get_callable(module, attr, f"module {module_name}"), label=entry)
    if source is None:
        raise EntryError("--trace needs a Python file that defines an entry function, or --hf-config PATH")
    path = Path(source)
    if path.is_dir():
        raise EntryError(f"{path} is a folder; --trace needs the file that defines the entry function "
                         f"(or use --entry module:callable)")
    if not path.is_file():
        raise EntryError(f"{path}: no such file")
    name = entry or DEFAULT_ENTRY
    _check_defined(path, name)
    module = _import_file(path)
    return _wrap(_get_callable(module, name, str(path)), label=f"{path.name}:{name}")


def _prepend_path(folder: Path) -> None:
    if str(folder) not in sys.path:
        sys.path.insert(0, str(folder))


def definition_line(path: Path, name: str) -> int | None:
    """Line of the top-level function or class `name` in a file, read without running it; None if absent."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (OSError, SyntaxError, UnicodeDecodeError, ValueError):
        return None
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)) and node.name == name:
            return node.lineno
    return None


def _check_defined(path: Path, name: str) -> None:
    """Look for the entry in the file's syntax tree, so a missing entry is reported without running it."""
    try:
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    except (SyntaxError, UnicodeDecodeError) as exc:
        raise EntryError(f"{path}: cannot parse: {exc}") from None
    defined: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            defined.add(node.name)
        elif isinstance(node, ast.Assign):
            defined.update(t.id for t in node.targets if isinstance(t, ast.Name))
        elif isinstance(node, (ast.AnnAssign, ast.AugAssign)) and isinstance(node.target, ast.Name):
            defined.add(node.target.id)
        elif isinstance(node, (ast.Import, ast.ImportFrom)):
            defined.update((a.asname or a.name).split(".")[0] for a in node.names)
    if name not in defined:
        raise EntryError(
            f"{path} defines no entry function {name!r}. --trace runs one training step of a model the "
            f"file builds; add a function like this (any name, then pass --entry NAME):\n\n"
            + ENTRY_TEMPLATE.format(name=name)
            + "\n\nIt may also return (model, inputs, loss_fn, optimizer_factory) or a dict with keys "
              "model, inputs, loss_fn, optimizer. Or audit an architecture from its config alone: "
              "--hf-config path/to/config.json")


def _import_file(path: Path):
    path = path.resolve()
    _prepend_path(path.parent)  # so the user's sibling modules import
    module_name = f"_npu_audit_entry_{path.stem}"
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise EntryError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    spec.loader.exec_module(module)  # user code: exceptions propagate with their own traceback
    return module


def _get_callable(module, name: str, where: str) -> Callable:
    obj = getattr(module, name, None)
    if obj is None:
        raise EntryError(f"{where} has no attribute {name!r}")
    if not callable(obj):
        raise EntryError(f"{where}: {name!r} is a {type(obj).__name__}, not a function")
    return obj


def _wrap(func: Callable, label: str) -> Callable[..., EntrySpec]:
    def factory(context: dict[str, Callable[[], Any]] | None = None) -> EntrySpec:
        spec = normalize_entry_result(func(**entry_arguments(func, context)), where=label)
        spec.label = spec.label or label
        return spec

    return factory


def entry_arguments(func: Callable, context: dict[str, Callable[[], Any]] | None) -> dict[str, Any]:
    """The values of `context` (name -> zero-argument provider) that the entry declares as parameters.

    `--trace --world-size N` offers world_size, rank, mesh and device_mesh; an entry taking none of them
    runs unchanged, one taking **kwargs receives them all. A provider runs only when its value is taken."""
    if not context:
        return {}
    import inspect

    try:
        params = inspect.signature(func).parameters
    except (TypeError, ValueError):
        return {}
    if any(p.kind is inspect.Parameter.VAR_KEYWORD for p in params.values()):
        wanted = list(context)
    else:
        wanted = [name for name, p in params.items() if name in context
                  and p.kind in (inspect.Parameter.POSITIONAL_OR_KEYWORD, inspect.Parameter.KEYWORD_ONLY)]
    return {name: context[name]() for name in wanted}


def normalize_entry_result(result: Any, where: str = "entry") -> EntrySpec:
    """Turn any accepted return form into an EntrySpec, or raise EntryError saying what was wrong."""
    import torch

    if isinstance(result, EntrySpec):
        spec = result
    elif isinstance(result, dict):
        unknown = set(result) - {"model", "inputs", "args", "kwargs", "loss_fn", "optimizer",
                                 "optimizer_factory", "label"}
        if unknown:
            raise EntryError(f"{where} returned a dict with unknown keys {sorted(unknown)}; accepted: "
                             "model, inputs (or args/kwargs), loss_fn, optimizer (or optimizer_factory)")
        if "model" not in result:
            raise EntryError(f"{where} returned a dict without the key 'model'")
        args, kwargs = _split_inputs(result.get("inputs", ()), where)
        args = tuple(result.get("args", args))
        kwargs = dict(result.get("kwargs", kwargs))
        spec = EntrySpec(result["model"], args, kwargs, result.get("loss_fn"),
                         result.get("optimizer_factory", result.get("optimizer")), result.get("label", ""))
    elif isinstance(result, (tuple, list)) and 2 <= len(result) <= 4:
        model, inputs, *rest = result
        args, kwargs = _split_inputs(inputs, where)
        spec = EntrySpec(model, args, kwargs, rest[0] if rest else None, rest[1] if len(rest) > 1 else None)
    elif isinstance(result, torch.nn.Module):
        raise EntryError(f"{where} returned only a model; return (model, inputs) so the trace has example "
                         "inputs, e.g. `return model, (torch.randn(8, 3, 224, 224),)`")
    else:
        raise EntryError(f"{where} returned {type(result).__name__}; expected (model, inputs), "
                         "(model, inputs, loss_fn), (model, inputs, loss_fn, optimizer_factory) or a dict")
    if not isinstance(spec.model, torch.nn.Module):
        raise EntryError(f"{where}: the model is a {type(spec.model).__name__}, not a torch.nn.Module")
    for what, value in (("loss_fn", spec.loss_fn), ("optimizer factory", spec.optimizer_factory)):
        if value is not None and not callable(value):
            raise EntryError(f"{where}: the {what} is a {type(value).__name__}, not callable")
    if isinstance(spec.optimizer_factory, torch.optim.Optimizer):
        raise EntryError(f"{where}: pass an optimizer factory (e.g. `lambda params: torch.optim.AdamW(params)`), "
                         "not an optimizer instance: the tracer builds it for the traced parameters")
    return spec


def _split_inputs(inputs: Any, where: str) -> tuple[tuple, dict]:
    import torch

    if isinstance(inputs, dict):
        return (), dict(inputs)
    if isinstance(inputs, (tuple, list)):
        return tuple(inputs), {}
    if isinstance(inputs, torch.Tensor):
        return (inputs,), {}
    raise EntryError(f"{where}: inputs must be a tuple/list (positional), a dict (keyword) or a tensor, "
                     f"not {type(inputs).__name__}")


# --- transformers configs -------------------------------------------------------------------------

def load_hf_config_dict(path: Path) -> dict:
    """Read config.json (or a folder holding one) with a clear error for anything else."""
    path = Path(path)
    if path.is_dir():
        path = path / "config.json"
    if not path.is_file():
        raise EntryError(f"--hf-config {path}: no such file")
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except (json.JSONDecodeError, UnicodeDecodeError) as exc:
        raise EntryError(f"--hf-config {path}: not valid JSON: {exc}") from None
    if not isinstance(data, dict) or "model_type" not in data:
        raise EntryError(f"--hf-config {path}: a transformers config.json needs a 'model_type' key")
    return data


def _hf_factory(path: Path, seq_len: int | None = None, batch: int | None = None) -> Callable[[], EntrySpec]:
    data = load_hf_config_dict(path)  # validated now, in whatever process calls resolve_entry

    def factory() -> EntrySpec:
        return build_hf_entry(data, label=f"{data['model_type']} ({Path(path).name})", seq_len=seq_len, batch=batch)

    return factory


def _hf_kind(config) -> str:
    """'speech-seq2seq' (Whisper), 'seq2seq' (T5, BART), 'vision', or 'causal'."""
    if getattr(config, "is_encoder_decoder", False):
        return "speech-seq2seq" if hasattr(config, "num_mel_bins") else "seq2seq"
    if hasattr(config, "image_size") and hasattr(config, "num_channels") and not hasattr(config, "vocab_size"):
        return "vision"
    return "causal"


def _hf_heads(transformers, kind: str) -> tuple:
    return {"speech-seq2seq": (transformers.AutoModelForSpeechSeq2Seq, transformers.AutoModel),
            "seq2seq": (transformers.AutoModelForSeq2SeqLM, transformers.AutoModel),
            "vision": (transformers.AutoModelForImageClassification, transformers.AutoModel),
            "causal": (transformers.AutoModelForCausalLM, transformers.AutoModel)}[kind]


def build_hf_model(data: dict):
    """The transformers model of a config dict (weights as the current mode makes them) and its kind."""
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    os.environ.setdefault("TRANSFORMERS_OFFLINE", "1")
    try:
        import transformers
    except ImportError:
        raise EntryError("--hf-config needs transformers: pip install 'npu-audit[trace]'") from None

    config_kwargs = {k: v for k, v in data.items() if k not in ("model_type", "transformers_version")}
    try:
        config = transformers.AutoConfig.for_model(data["model_type"], **config_kwargs)
    except (ValueError, KeyError) as exc:
        raise EntryError(f"--hf-config: transformers {transformers.__version__} cannot build "
                         f"model_type {data['model_type']!r}: {exc}") from None
    if hasattr(config, "_experts_implementation"):
        # MoE experts: the reference loop. transformers' grouped_mm default needs bf16 CUDA kernels, and
        # it is the per-expert loop whose ops torch_npu must cover unless the user opts into a fused path.
        config._experts_implementation = data.get("_experts_implementation", "eager")
    kind = _hf_kind(config)
    model, errors = None, []
    # SDPA is what transformers picks on a GPU (the tracer maps its CPU kernel back to the API call);
    # architectures without an SDPA path (Mamba, some encoders) get their eager attention.
    attn_choices = [data["_attn_implementation"]] if "_attn_implementation" in data else ["sdpa", "eager"]
    for attn in attn_choices:
        config._attn_implementation = attn
        for auto in _hf_heads(transformers, kind):
            try:
                model = auto.from_config(config)
                break
            except ValueError as exc:  # this head (or attention path) does not exist for the architecture
                errors.append(f"{auto.__name__} ({attn}): {exc}")
        if model is not None:
            break
    if model is None:
        raise EntryError(f"--hf-config: no model class for {data['model_type']!r}: " + "; ".join(errors))
    return model, config, kind


def build_hf_entry(data: dict, label: str = "", seq_len: int | None = None, batch: int | None = None) -> EntrySpec:
    """Model and training inputs from a config alone: token ids (decoder-only), encoder ids and labels
    (encoder-decoder; the model shifts the labels into decoder inputs), log-mel features and labels
    (speech encoder-decoder such as Whisper), pixels and a class label (vision)."""
    import torch

    model, config, kind = build_hf_model(data)
    batch = batch or HF_BATCH
    kwargs: dict[str, Any]
    if kind == "vision":
        size = config.image_size if isinstance(config.image_size, int) else config.image_size[0]
        kwargs = {"pixel_values": torch.randn(batch, config.num_channels, size, size)}
        if "ForImageClassification" in type(model).__name__:
            kwargs["labels"] = torch.randint(0, max(config.num_labels, 1), (batch,))
        return EntrySpec(model, (), kwargs, loss_fn=_hf_loss, label=label or data["model_type"])
    vocab = config.vocab_size
    if kind in ("seq2seq", "speech-seq2seq") and getattr(config, "decoder_start_token_id", None) is None:
        # the model shifts the labels right behind this token to make the decoder inputs; its value does
        # not matter to a trace, only that there is one
        model.config.decoder_start_token_id = getattr(config, "pad_token_id", None) or 0
    if kind == "speech-seq2seq":
        # Whisper's encoder takes exactly 2 * max_source_positions mel frames (its conv stride is 2)
        frames = 2 * getattr(config, "max_source_positions", 1500)
        target = min(seq_len or 448, getattr(config, "max_target_positions", None) or 448)
        kwargs = {"input_features": torch.randn(batch, config.num_mel_bins, frames),
                  "labels": torch.randint(0, vocab, (batch, target))}
    else:
        limit = _max_positions(config)
        default = HF_SSM_SEQ_LEN if _is_state_space(config) else HF_SEQ_LEN
        seq = min(seq_len or default, limit) if limit else (seq_len or default)
        input_ids = torch.randint(0, vocab, (batch, seq))
        kwargs = {"input_ids": input_ids}
        if kind == "seq2seq":
            kwargs["labels"] = torch.randint(0, vocab, (batch, seq))
        elif "ForCausalLM" in type(model).__name__ or "LMHead" in type(model).__name__:
            kwargs["labels"] = input_ids.clone()
    kwargs["use_cache"] = False
    return EntrySpec(model, (), kwargs, loss_fn=_hf_loss, optimizer_factory=None,
                     label=label or data["model_type"])


def _is_state_space(config) -> bool:
    """Mamba-style layers (Mamba, Jamba, hybrids): without the CUDA kernels their scan is a Python loop
    over the sequence, so the trace time grows with the sequence length."""
    return any(hasattr(config, key) for key in ("state_size", "mamba_d_state", "ssm_state_size"))


def _max_positions(config) -> int | None:
    """The longest sequence the position embeddings allow (None: relative positions, no limit)."""
    for key in ("max_position_embeddings", "n_positions", "max_sequence_length"):
        value = getattr(config, key, None)
        if isinstance(value, int) and value > 0:
            return value
    return None


def _hf_loss(output: Any):
    """transformers outputs carry .loss when labels were given; otherwise reduce the first tensor."""
    loss = getattr(output, "loss", None)
    if loss is not None:
        return loss
    first = output[0] if isinstance(output, (tuple, list)) or hasattr(output, "to_tuple") else output
    return first.float().mean()
