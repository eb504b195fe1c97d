"""Model facts the tracer and a planner need: repeated layers, their kinds, parameters (tied once),
active parameters of mixture-of-experts models, and tracing one layer per kind scaled to the full depth.

A transformer repeats a few kinds of block (dense / MoE, full / linear attention, encoder / decoder).
Fake tensors make every block cost the same to trace however large it is, so the time of a trace grows
with the number of blocks and, in an MoE block, with the number of experts its loop visits. Tracing
`per_kind` blocks of each kind (in their original order) and weighting every op, count and FLOP
recorded inside a block by (blocks of its kind) / (traced blocks of its kind) gives the full model's
figures in bounded time: blocks of one kind run the same ops on the same shapes.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import torch
from torch import nn

# Config keys for the number of routed experts and the experts each token visits (transformers spells
# them per family).
EXPERT_KEYS = ("num_local_experts", "num_experts", "n_routed_experts", "moe_num_experts")
TOP_K_KEYS = ("num_experts_per_tok", "moe_topk", "top_k", "num_experts_per_token")


def unique_parameters(model: nn.Module) -> list[nn.Parameter]:
    """Each parameter once: tied weights (GPT-2's lm_head and wte) share one Parameter object, and two
    Parameter objects viewing one storage count once as well."""
    seen_ids: set[int] = set()
    seen_storage: set[tuple] = set()
    out = []
    for p in model.parameters():
        if id(p) in seen_ids:
            continue
        seen_ids.add(id(p))
        try:
            key = (p.untyped_storage()._cdata, p.storage_offset(), tuple(p.shape))
        except (RuntimeError, NotImplementedError, AttributeError):
            key = None
        if key is not None:
            if key in seen_storage:
                continue
            seen_storage.add(key)
        out.append(p)
    return out


def count_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in unique_parameters(model))


def moe_shape(config) -> tuple[int, int] | None:
    """(routed experts, experts per token) from a transformers config (or its text_config)."""
    for cfg in (config, getattr(config, "text_config", None)):
        if cfg is None:
            continue
        experts = next((getattr(cfg, k) for k in EXPERT_KEYS if isinstance(getattr(cfg, k, None), int)), None)
        top_k = next((getattr(cfg, k) for k in TOP_K_KEYS if isinstance(getattr(cfg, k, None), int)), None)
        if experts and top_k and experts > 1:
            return experts, top_k
    return None


def _is_experts(name: str, module: nn.Module) -> bool:
    return name.rsplit(".", 1)[-1] in ("experts", "routed_experts") or type(module).__name__.endswith("Experts")


def active_parameters(model: nn.Module, config=None) -> dict:
    """Parameters per token: routed experts count top_k / n_experts of theirs; the input embedding
    (a lookup, no multiply) is listed apart unless it is tied to the output head.

    Returns {"total", "experts", "active", "embedding", "active_matmul"}: active_matmul is what a
    token multiplies by, the N in the closed form 6 * N * tokens of a training step.
    """
    params = unique_parameters(model)
    total = sum(p.numel() for p in params)
    shape = moe_shape(config) if config is not None else None
    expert_ids: set[int] = set()
    if shape:
        for name, module in model.named_modules():
            if _is_experts(name, module):
                expert_ids.update(id(p) for p in module.parameters())
    experts = sum(p.numel() for p in params if id(p) in expert_ids)
    active = total - experts + (experts * shape[1] // shape[0] if shape else 0)
    embedding = 0
    get_output = getattr(model, "get_output_embeddings", None)
    output = get_output() if get_output is not None else None
    out_weight = getattr(output, "weight", None)
    for module in model.modules():
        if isinstance(module, nn.Embedding) and module.weight is not out_weight:
            embedding += module.weight.numel()
    return {"total": total, "experts": experts, "active": active, "embedding": embedding,
            "active_matmul": active - embedding}


def layer_lists(model: nn.Module) -> list[tuple[str, nn.ModuleList]]:
    """The outermost ModuleLists of repeated blocks (model.layers, encoder.block, transformer.h, ...)."""
    found: list[tuple[str, nn.ModuleList]] = []
    for name, module in model.named_modules():
        if not isinstance(module, nn.ModuleList) or len(module) < 2:
            continue
        if any(name.startswith(prefix + ".") for prefix, _ in found):
            continue  # a list inside a block (per-expert lists, sub-layers): the block is the unit
        if _is_experts(name, module):
            continue
        if all(any(True for _ in child.parameters()) and any(True for _ in child.children()) for child in module):
            found.append((name, module))
    return found


def layer_kind(module: nn.Module) -> tuple:
    """Blocks of one kind run the same ops on the same shapes: same classes, same parameter shapes,
    same attention type."""
    classes = tuple(type(m).__name__ for m in module.modules())
    shapes = tuple((n, tuple(p.shape)) for n, p in module.named_parameters())
    attrs = tuple(str(getattr(m, a, None)) for m in module.modules()
                  for a in ("attention_type", "layer_type", "is_sliding", "sliding_window")
                  if hasattr(m, a) and not isinstance(getattr(m, a), (nn.Module, torch.Tensor)))
    return classes, shapes, attrs


@dataclass
class LayerPlan:
    """Which blocks were traced and what each traced block stands for."""
    lists: list[dict] = field(default_factory=list)   # {"path", "layers", "kinds", "traced"}
    weights: dict[str, float] = field(default_factory=dict)  # module path prefix (after pruning) -> weight

    @property
    def pruned(self) -> bool:
        return any(item["traced"] < item["layers"] for item in self.lists)

    def weight(self, module_path: str) -> float:
        """The weight of a record made inside `module_path` (1 outside the pruned lists)."""
        if not self.weights or not module_path:
            return 1.0
        best = None
        for prefix, w in self.weights.items():
            if module_path == prefix or module_path.startswith(prefix + "."):
                best = w
                break
        return best if best is not None else 1.0

    def describe(self) -> str:
        parts = []
        for item in self.lists:
            if item["traced"] < item["layers"]:
                parts.append(f"{item['path']}: {item['traced']} of {item['layers']} ({item['kinds']} kind"
                             f"{'s' * (item['kinds'] != 1)})")
        return "; ".join(parts)


def prune_layers(model: nn.Module, per_kind: int | None, root: str) -> LayerPlan:
    """Keep the first `per_kind` blocks of each kind in every layer list (None: keep all) and return the
    weights that scale the traced blocks to the full depth. `root` is the name the recorder gives the
    model (its class name), so the weights' prefixes match the recorder's module paths.

    Config lists indexed by layer (`layer_types`, `mlp_layer_types`) and `num_hidden_layers` are cut to
    the kept blocks, since forwards index them by position.
    """
    plan = LayerPlan()
    for path, modules in layer_lists(model):
        kinds: "OrderedDict[tuple, list[int]]" = OrderedDict()
        for index, block in enumerate(modules):
            kinds.setdefault(layer_kind(block), []).append(index)
        keep = sorted(i for indices in kinds.values() for i in indices[:per_kind or len(indices)])
        plan.lists.append({"path": path, "layers": len(modules), "kinds": len(kinds), "traced": len(keep)})
        if len(keep) == len(modules):
            continue
        weight_of = {}
        for indices in kinds.values():
            traced = indices[:per_kind]
            for i in traced:
                weight_of[i] = len(indices) / len(traced)
        new = nn.ModuleList([modules[i] for i in keep])
        _cut_config(model, len(modules), keep)
        parent_path, _, attr = path.rpartition(".")
        parent = model.get_submodule(parent_path) if parent_path else model
        setattr(parent, attr, new)
        full_path = f"{root}.{path}" if path else root
        for new_index, old_index in enumerate(keep):
            plan.weights[f"{full_path}.{new_index}"] = weight_of[old_index]
    return plan


def _cut_config(model: nn.Module, length: int, keep: list[int]) -> None:
    configs = {id(c): c for c in (getattr(m, "config", None) for m in model.modules()) if c is not None}
    for cfg in list(configs.values()):
        for sub in (getattr(cfg, k, None) for k in ("text_config", "encoder", "decoder")):
            if sub is not None and hasattr(sub, "to_dict"):
                configs[id(sub)] = sub
    for cfg in configs.values():
        for key, value in list(vars(cfg).items()):
            if isinstance(value, list) and len(value) == length and key.endswith(("layer_types", "block_type",
                                                                                  "block_types")):
                setattr(cfg, key, [value[i] for i in keep])
        for key in ("num_hidden_layers", "num_layers", "num_decoder_layers", "n_layer", "encoder_layers",
                    "decoder_layers"):
            if getattr(cfg, key, None) == length:
                try:
                    setattr(cfg, key, len(keep))
                except (AttributeError, TypeError):
                    pass
