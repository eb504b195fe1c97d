"""Device / dtype parameter defaults that every caller in the tree overrides (auditor/static/call_defaults.py, t11o,
issue 11; tuned on heldout10): a diffusion engine's building blocks default to `device="cuda:0"`, and the model that
owns them always passes its own device. The default is then never used: no finding. A public entry point's default
(called from nowhere, or only from tests / examples), a caller that lets the default through, a caller that passes
CUDA itself or a local it chose, and a block handed on as a value (a registry) keep theirs."""
from __future__ import annotations

from pathlib import Path

from auditor.runner import run_static
from auditor.static.call_defaults import default_facts
from tests.static_snippets import write_tree

ATTENTION = '''\
    import torch
    import torch.nn as nn


    class Attention(nn.Module):
        def __init__(
            self,
            q_dim,
            num_heads,
            head_dim,
            bias_q=False,
            device: str = "cuda:0",
            dtype: torch.dtype = torch.float16,
        ):
            super().__init__()
            self.to_q = nn.Linear(q_dim, num_heads * head_dim, bias=bias_q, device=device, dtype=dtype)
            self.to_out = nn.Linear(num_heads * head_dim, q_dim, device=device, dtype=dtype)

        def forward(self, x):
            return self.to_out(self.to_q(x))


    class DownSampler(nn.Module):
        def __init__(self, channels, padding=1, device: str = "cuda:0", dtype: torch.dtype = torch.float16):
            super().__init__()
            self.conv = nn.Conv2d(channels, channels, 3, stride=2, padding=padding, device=device, dtype=dtype)

        def forward(self, x):
            return self.conv(x)


    def enable_sequential_cpu_offload(module: nn.Module, device: str = "cuda:0"):
        for child in module.children():
            enable_sequential_cpu_offload(child, device)
        module.to(device)
    '''

VAE = '''\
    import torch
    import torch.nn as nn

    from ..basic.attention import Attention, DownSampler


    class VAEEncoder(nn.Module):
        def __init__(self, device: str, dtype: torch.dtype):
            super().__init__()
            self.attn = Attention(512, 1, 512, bias_q=True, device=device, dtype=dtype)
            self.down = nn.ModuleList([
                DownSampler(128, padding=0, device=device, dtype=dtype),
                DownSampler(256, 0, device, dtype),
            ])

        def forward(self, x):
            for block in self.down:
                x = block(x)
            return self.attn(x)
    '''

PIPELINE = '''\
    import torch

    from ..models.basic import attention


    class BasePipeline:
        def __init__(self, device="cuda:0", dtype=torch.float16):
            self.device = device
            self.dtype = dtype
            self.models = []

        def enable_sequential_cpu_offload(self):
            for model in self.models:
                attention.enable_sequential_cpu_offload(model, self.device)
    '''


def _tree(root: Path, extra: dict[str, str] | None = None) -> Path:
    return write_tree(root, {
        "engine/__init__.py": "", "engine/models/__init__.py": "", "engine/models/basic/__init__.py": "",
        "engine/models/basic/attention.py": ATTENTION, "engine/models/components/__init__.py": "",
        "engine/models/components/vae.py": VAE, "engine/pipelines/__init__.py": "",
        "engine/pipelines/base.py": PIPELINE, **(extra or {}),
    })


def _defaults(run, rel: str) -> set[tuple[int, str]]:
    """Device / dtype findings at their own severity (policy (f) lowers an always-overridden default to info)."""
    r = next(r for r in run.results if r.path == rel)
    return {(f.line, f.code) for f in r.findings if f.category in ("device", "precision")
            and f.data.get("context") != "overridden-default"}


def _overridden(run, rel: str) -> dict[int, object]:
    """line -> the finding policy (f) reported at info (every caller in the tree passes the argument)."""
    r = next(r for r in run.results if r.path == rel)
    return {f.line: f for f in r.findings if f.data.get("context") == "overridden-default"}


def _line(src: str, text: str) -> int:
    return next(i + 1 for i, line in enumerate(src.splitlines()) if text in line)


def test_defaults_every_caller_overrides_are_quiet(tmp_path):
    run = run_static([_tree(tmp_path / "t")], jobs=1)
    found = _defaults(run, "engine/models/basic/attention.py")
    quiet = {_line(ATTENTION, 'device: str = "cuda:0",'), _line(ATTENTION, "dtype: torch.dtype = torch.float16,"),
             _line(ATTENTION, "def __init__(self, channels")}
    assert not {line for line, _ in found} & quiet
    # policy (f): reported at info, never dropped, saying why (the recall labels count such a default)
    overridden = _overridden(run, "engine/models/basic/attention.py")
    assert quiet <= set(overridden)
    assert all(f.severity == "info" and "every caller in this tree passes" in f.message and
               "callers outside" in f.message and f.fix == "none" for f in overridden.values())
    # a module function whose every caller (the pipeline, its own recursion) passes the device: info too (t11s)
    assert _line(ATTENTION, "def enable_sequential_cpu_offload") in overridden
    # the pipeline's constructor is called from nowhere in the tree: a public entry point keeps its default
    assert _line(PIPELINE, 'def __init__(self, device="cuda:0"') in {line for line, _ in _defaults(run, "engine/pipelines/base.py")}


def test_a_caller_that_lets_the_default_through_or_passes_cuda_keeps_it(tmp_path):
    lets_through = '''\
        from ..basic.attention import Attention


        def build_text_encoder(dim):
            return Attention(dim, 8, dim // 8)
        '''
    run = run_static([_tree(tmp_path / "a", {"engine/models/components/clip.py": lets_through})], jobs=1)
    lines = {line for line, _ in _defaults(run, "engine/models/basic/attention.py")}
    assert _line(ATTENTION, 'device: str = "cuda:0",') in lines
    assert _line(ATTENTION, "def __init__(self, channels") not in lines      # DownSampler: still always passed

    passes_cuda = '''\
        from ..basic.attention import DownSampler


        def build_down(channels):
            return DownSampler(channels, device="cuda", dtype=None)
        '''
    run = run_static([_tree(tmp_path / "b", {"engine/models/components/down.py": passes_cuda})], jobs=1)
    found = _defaults(run, "engine/models/basic/attention.py")
    down = _line(ATTENTION, "def __init__(self, channels")
    assert (down, "NPU003") in found                  # the caller chose CUDA: the default is no quieter than it


def test_only_test_callers_or_a_registry_keep_the_default(tmp_path):
    only_tests = {"engine/models/components/vae.py": "x = 1\n",
                  "tests/test_attention.py": '''\
        from engine.models.basic.attention import Attention, DownSampler


        def test_attention_shapes():
            attn = Attention(64, 4, 16, device="cpu", dtype=None)
            down = DownSampler(64, device="cpu", dtype=None)
            assert attn is not None and down is not None
        '''}
    run = run_static([_tree(tmp_path / "c", only_tests)], jobs=1)
    lines = {line for line, _ in _defaults(run, "engine/models/basic/attention.py")}
    assert _line(ATTENTION, 'device: str = "cuda:0",') in lines
    registry = '''\
        from ..basic.attention import Attention

        BLOCKS = {"attention": Attention}
        '''
    run = run_static([_tree(tmp_path / "d", {"engine/models/components/registry.py": registry})], jobs=1)
    lines = {line for line, _ in _defaults(run, "engine/models/basic/attention.py")}
    assert _line(ATTENTION, 'device: str = "cuda:0",') in lines


def test_facts_are_written_by_the_worker():
    import textwrap

    facts = default_facts(textwrap.dedent(VAE).encode())
    # (forwarded positions, forwarded keywords, `*` / `**`, keywords passed any value, positional count: t11q;
    # each keyword's value, a constant's repr or `*`: pd25)
    assert facts["calls"]["Attention"] == [[[], ["device", "dtype"], False, ["device", "dtype"], 3,
                                            ["bias_q=True", "device=*", "dtype=*"]]]
    assert [shape[:5] for shape in facts["calls"]["DownSampler"]] == [
        [[], ["device", "dtype"], False, ["device", "dtype"], 1], [[2, 3], [], False, [], 4]]
    assert [d[4:] for d in facts.get("defaults", [])] == []           # the encoder's own parameters have no default
    launcher = default_facts(textwrap.dedent('''\
        import torch
        from .blocks import Block


        def main(args):
            device = torch.device("cuda") if args.device == "cuda" else torch.device("cpu")
            return Block(64, device=device)
        ''').encode())
    # a local chosen here overrides the class default too (pd17: BrushNet's `device = mm.get_torch_device()`): its
    # own CUDA choice is reported where the local is set
    assert launcher["calls"]["Block"] == [[[], ["device"], False, ["device"], 1, ["device=*"]]]
    assert default_facts(b"def f(:\n") == {"unparsed": True}     # pd29: read as before by the passes that need it


def test_a_warm_run_keeps_the_facts_and_the_result(tmp_path):
    root = _tree(tmp_path / "w")
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert warm.cached_files == len(warm.results)
    assert _defaults(warm, "engine/models/basic/attention.py") == _defaults(cold, "engine/models/basic/attention.py")
    assert not {line for line, _ in _defaults(warm, "engine/models/basic/attention.py")} & \
        {_line(ATTENTION, 'device: str = "cuda:0",')}


def test_a_subclass_forwarding_to_its_base_hands_on_its_own_value(tmp_path):
    """The variant's `super().__init__(channels, 0, device, dtype)` passes the base its own parameters: built by name
    elsewhere or not, the base's default never applies through it; the variant's own default is the finding that
    stays (tq54c; before, t11o read the base's call as unknown). A call through `super()` outside `__init__`, or one
    that lets the default through, stays unknown (tests/test_tq54c.py)."""
    variant = '''\
        import torch

        from ..basic.attention import DownSampler


        class DownSamplerNoPad(DownSampler):
            def __init__(self, channels, device: str = "cuda:0", dtype: torch.dtype = torch.float16):
                super().__init__(channels, 0, device, dtype)
        '''
    run = run_static([_tree(tmp_path / "s", {"engine/models/components/variants.py": variant})], jobs=1)
    lines = {line for line, _ in _defaults(run, "engine/models/basic/attention.py")}
    assert _line(ATTENTION, "def __init__(self, channels") not in lines
    assert _defaults(run, "engine/models/components/variants.py")      # the variant's own defaults keep theirs


def test_an_attribute_of_the_callers_parameter_is_handed_on(tmp_path):
    """DiffSynth's pipelines (tuned_t19g): `from_model_manager(model_manager)` builds the pipeline with
    `device=model_manager.device`, the device the model manager was given: the pipeline's `device="cuda"` default
    never applies (policy (f), info). A local's attribute chosen at the call (`cfg = Config(); Pipe(device=cfg.device)`)
    is not its caller's value and keeps the default's severity."""
    pipeline = '''\
        import torch


        class SDXLImagePipeline(torch.nn.Module):
            def __init__(self, device="cuda", torch_dtype=torch.float16):
                super().__init__()
                self.device = device
                self.torch_dtype = torch_dtype

            @staticmethod
            def from_model_manager(model_manager):
                pipe = SDXLImagePipeline(
                    device=model_manager.device,
                    torch_dtype=model_manager.torch_dtype,
                )
                return pipe
        '''
    local = '''\
        import torch


        class Config:
            device = "cpu"


        class Sampler(torch.nn.Module):
            def __init__(self, device="cuda"):
                super().__init__()
                self.device = device


        def build():
            cfg = Config()
            return Sampler(device=cfg.device)
        '''
    root = write_tree(tmp_path / "t", {"pipe/__init__.py": "", "pipe/sdxl.py": pipeline, "pipe/sampler.py": local})
    run = run_static([root], jobs=1)
    assert _line(pipeline, 'def __init__(self, device="cuda"') in _overridden(run, "pipe/sdxl.py")
    assert _line(local, 'def __init__(self, device="cuda"') in {line for line, _ in _defaults(run, "pipe/sampler.py")}


def test_a_public_method_whose_every_call_passes_the_device(tmp_path):
    """DiffSynth's `SDLoRA.add_lora_to_text_encoder(..., device="cuda")` (tuned_t19g): its one call passes
    `device=self.device`, so the default never applies (policy (f), info). A method some call lets the default through
    keeps it."""
    lora = '''\
        import torch


        class SDLoRA:
            def add_lora_to_text_encoder(self, text_encoder, state_dict, alpha=1.0, device="cuda"):
                return {k: v.to(device) for k, v in state_dict.items()}

            def add_lora_to_unet(self, unet, state_dict, alpha=1.0, device="cuda"):
                return {k: v.to(device) for k, v in state_dict.items()}
        '''
    manager = '''\
        from .lora import SDLoRA


        class ModelManager:
            def __init__(self, device):
                self.device = device

            def load_lora(self, encoder, unet, state_dict):
                SDLoRA().add_lora_to_text_encoder(encoder, state_dict, alpha=1.0, device=self.device)
                SDLoRA().add_lora_to_unet(unet, state_dict)
        '''
    root = write_tree(tmp_path / "t", {"pkg/__init__.py": "", "pkg/lora.py": lora, "pkg/manager.py": manager})
    run = run_static([root], jobs=1)
    assert _line(lora, "def add_lora_to_text_encoder") in _overridden(run, "pkg/lora.py")
    assert _line(lora, "def add_lora_to_unet") in {line for line, _ in _defaults(run, "pkg/lora.py")}
