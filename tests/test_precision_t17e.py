"""t17e (issue 11, session 17; TUNED on bench/precision/tuned_t17e: kijai's LuminaWrapper, Marigold and
FramePackWrapper, storyicon's comfyui_segment_anything): false classes of that sample, fixed as families. Realistic
code in the shapes met there; no file is copied."""
from __future__ import annotations

import textwrap
from pathlib import Path

from auditor.rules import load_rules
from auditor.runner import run_static
from auditor.static import StaticEngine
from tests.static_snippets import write_tree

ENGINE = StaticEngine(load_rules())

# a ComfyUI node pack: the node calls one helper of its vendored model; the model's training utilities (DDP gather,
# metric logging, launcher set-up) are called by nothing in the pack
PACK_INIT = """\
    from .nodes import GroundingDinoSAMSegment

    NODE_CLASS_MAPPINGS = {"GroundingDinoSAMSegment": GroundingDinoSAMSegment}
"""

NODES = """\
    import torch
    import comfy.model_management as mm

    from .util.misc import nested_tensor_from_tensor_list, is_main_process


    class GroundingDinoSAMSegment:
        FUNCTION = "main"

        def main(self, image):
            device = mm.get_torch_device()
            batch = nested_tensor_from_tensor_list([image.to(device)])
            torch.cuda.empty_cache()
            return (batch,)
"""

MISC = """\
    import functools
    import pickle

    import torch
    import torch.distributed as dist


    def is_dist_avail_and_initialized():
        return dist.is_available() and dist.is_initialized()


    def is_main_process():
        return not is_dist_avail_and_initialized() or dist.get_rank() == 0


    @functools.lru_cache()
    def _get_global_gloo_group():
        if dist.get_backend() == "nccl":
            return dist.new_group(backend="gloo")
        return dist.group.WORLD


    def all_gather_cpu(data):
        cpu_group = _get_global_gloo_group()
        tensor = torch.ByteTensor(list(pickle.dumps(data))).to("cpu")
        dist.all_gather([tensor], tensor, group=cpu_group)


    def all_gather(data):
        tensor = torch.ByteTensor(list(pickle.dumps(data))).to("cuda")
        size_list = [torch.tensor([0], device="cuda") for _ in range(dist.get_world_size())]
        dist.all_gather(size_list, torch.tensor([tensor.numel()], device="cuda"))
        return all_gather_cpu(data)


    class MetricLogger:
        def log_every(self, iterable):
            for obj in iterable:
                yield obj
            if torch.cuda.is_available():
                print(torch.cuda.max_memory_allocated())


    def init_distributed_mode(args):
        torch.cuda.set_device(args.local_rank)
        dist.init_process_group(backend="nccl")


    def nested_tensor_from_tensor_list(tensor_list):
        return torch.stack(tensor_list).cuda()
"""


def _line(src: str, text: str) -> int:
    return next(i + 1 for i, line in enumerate(textwrap.dedent(src).splitlines()) if text in line)


def _pack(root: Path, init: str = PACK_INIT) -> Path:
    return write_tree(root, {"__init__.py": init, "nodes.py": NODES, "util/__init__.py": "", "util/misc.py": MISC})


def _by_line(run, rel: str) -> dict[int, set[tuple[str, str, str]]]:
    out: dict[int, set[tuple[str, str, str]]] = {}
    for r in run.results:
        if r.path == rel:
            for f in r.findings:
                out.setdefault(f.line, set()).add((f.code, f.severity, f.data.get("context") or ""))
    return out


def test_helpers_nothing_in_a_node_pack_calls_are_info(tmp_path):
    run = run_static([_pack(tmp_path / "pack")], jobs=1)
    misc = _by_line(run, "util/misc.py")
    # all_gather, MetricLogger, init_distributed_mode: called by nothing; _get_global_gloo_group and all_gather_cpu
    # only by them (a fixed point), and `dist.all_gather` is torch's, not the pack's own all_gather
    for text in ('.to("cuda")', 'device="cuda") for _', "if torch.cuda.is_available():",
                 "torch.cuda.set_device(args.local_rank)", 'if dist.get_backend() == "nccl":'):
        found = misc[_line(MISC, text)]
        assert found and all(sev == "info" and ctx == "unreached" for _, sev, ctx in found), (text, found)
    # the helper the node calls keeps its error, and so does the node's own line
    assert ("NPU001", "error", "") in misc[_line(MISC, "return torch.stack(tensor_list).cuda()")] or \
        any(sev == "error" for _, sev, _ in misc[_line(MISC, "return torch.stack(tensor_list).cuda()")])
    nodes = _by_line(run, "nodes.py")
    assert any(sev == "error" for _, sev, _ in nodes[_line(NODES, "torch.cuda.empty_cache()")])
    message = next(f.message for r in run.results if r.path == "util/misc.py" for f in r.findings
                   if f.line == _line(MISC, "torch.cuda.set_device(args.local_rank)"))
    assert "NODE_CLASS_MAPPINGS" in message


def test_outside_a_node_pack_nothing_changes(tmp_path):
    # a library (no NODE_CLASS_MAPPINGS at its root): its helpers are its public API, called from outside the tree
    run = run_static([_pack(tmp_path / "lib", init="from .nodes import GroundingDinoSAMSegment\n")], jobs=1)
    misc = _by_line(run, "util/misc.py")
    assert any(sev == "error" for _, sev, _ in misc[_line(MISC, "torch.cuda.set_device(args.local_rank)")])
    assert not any(ctx == "unreached" for found in misc.values() for _, _, ctx in found)


def test_a_registered_or_named_definition_is_reached(tmp_path):
    routes = """\
        import torch
        from server import PromptServer


        @PromptServer.instance.routes.post("/free")
        async def free_memory(request):
            torch.cuda.empty_cache()


        def loadmodel(name):
            return torch.load(name).cuda()
    """
    # `FUNCTION = "loadmodel"` style: a name read as a string reaches the definition of that name
    nodes = """\
        import importlib

        mod = importlib.import_module(".routes", __package__)
        getattr(mod, "loadmodel")("m.pt")
    """
    root = write_tree(tmp_path / "pack", {"__init__.py": PACK_INIT.replace("nodes", "entry"), "entry.py": nodes +
                                          # indented like `nodes`, so the dedented file parses (t18g: an unparsable
                                          # file used to switch the whole pass off, which this test passed by)
                                          "\n\n        class GroundingDinoSAMSegment:\n            pass\n",
                                          "routes.py": routes})
    found = _by_line(run_static([root], jobs=1), "routes.py")
    assert not any(ctx == "unreached" for f in found.values() for _, _, ctx in f)


def _found(src: str, rel: str = "nodes.py") -> list[tuple[int, str, str, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(src).encode(), rel)
    return [(f.line, f.code, f.severity, f.data.get("context") or "") for f in result.findings]


SDP_PROBES = """\
    import torch

    enabled_backends = []
    if torch.backends.cuda.flash_sdp_enabled():
        enabled_backends.append("flash")
    if torch.backends.cuda.math_sdp_enabled():
        enabled_backends.append("math")
    ok = torch.backends.cuda.can_use_flash_attention(params)
"""


def test_sdp_flag_readers_are_warnings():
    found = _found(SDP_PROBES)
    assert {(c, s) for ln, c, s, _ in found if ln in (4, 6)} == {("NPU349", "warning")}
    # a capability probe keeps the rule's error
    assert ("NPU349", "error") in {(c, s) for ln, c, s, _ in found if ln == 8}


VARIANT = """\
    import torch
    from diffusers import MarigoldDepthPipeline


    def load(model, checkpoint_path, device):
        if "GonzaloMG" in model:
            variant = None
        else:
            variant = "fp16"
        pipe = MarigoldDepthPipeline.from_pretrained(checkpoint_path, variant=variant, torch_dtype=torch.float16)
        tiny = MarigoldDepthPipeline.from_pretrained(checkpoint_path, variant="fp16")
        precision = "fp16"
        return pipe.to(device), tiny, precision
"""


def test_a_weights_variant_is_not_a_dtype():
    found = _found(VARIANT)
    assert not [f for f in found if f[0] in (_line(VARIANT, 'variant = "fp16"'), _line(VARIANT, 'variant="fp16")'))]
    assert not [f for f in found if f[0] == _line(VARIANT, "variant=variant") and f[3] == "" and f[1] == "NPU202"
                and "via" in str(f)]
    # the dtype chosen beside it, and a dtype name bound to another name, stay
    line = _line(VARIANT, "variant=variant")
    assert any(c == "NPU202" for ln, c, _, _ in found if ln == line)
    assert any(c == "NPU202" for ln, c, _, _ in found if ln == _line(VARIANT, 'precision = "fp16"'))


UNREAD_LOCAL = """\
    import torch


    class FlowEstimator:
        def load_model(self, model_path, device):
            loc = 'cuda:{}'.format(0)
            checkpoint = torch.load(model_path, map_location=device)
            return checkpoint

        def load_on_gpu(self, model_path):
            loc = 'cuda:{}'.format(0)
            return torch.load(model_path, map_location=loc)

        def warm_up(self):
            x = torch.zeros(3, device="cuda")
"""


def test_a_device_string_nothing_reads_is_info():
    found = _found(UNREAD_LOCAL)
    first = [f for f in found if f[0] == 6]
    assert first and all(s == "info" and ctx == "unread-local" for _, _, s, ctx in first)
    # read on the next line, or a tensor made on the device (it runs even when unread): errors stay
    assert any(s == "error" for ln, _, s, _ in found if ln == 11)
    assert any(s == "error" for ln, _, s, _ in found if ln == 15)


def test_a_config_or_a_sys_path_module_reaches_a_definition(tmp_path):
    # `import impact.core as core` with modules/ on sys.path: `core.ESAMWrapper(...)` is the tree's own class; a
    # YAML config naming a class by its dotted path (`target: vq.GumbelQuantize`) builds it
    core = """\
        import torch


        class ESAMWrapper:
            def __init__(self, model, device):
                self.model = model.to("cuda")


        class GumbelQuantize(torch.nn.Module):
            def forward(self, z):
                return z.cuda()


        class Unused:
            def run(self, z):
                return z.cuda()
    """
    pack = """\
        import sys, os
        sys.path.append(os.path.join(os.path.dirname(__file__), "modules"))
        import impact.core as core


        class SAMLoader:
            def load_model(self, esam):
                return (core.ESAMWrapper(esam, "cpu"),)
    """
    root = write_tree(tmp_path / "pack", {
        "__init__.py": "from .impact_pack import SAMLoader\nNODE_CLASS_MAPPINGS = {'SAMLoader': SAMLoader}\n",
        "impact_pack.py": pack, "modules/impact/__init__.py": "", "modules/impact/core.py": core,
        "configs/vq.yaml": "model:\n  target: impact.core.GumbelQuantize\n"})
    found = _by_line(run_static([root], jobs=1), "modules/impact/core.py")
    for text in ('self.model = model.to("cuda")', "return z.cuda()"):
        assert not any(ctx == "unreached" for _, _, ctx in found[_line(core, text)]), text
    last = max(found)        # the Unused class, named nowhere
    assert all(ctx == "unreached" for _, _, ctx in found[last])
