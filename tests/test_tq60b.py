"""tq60b (precision bench, session 60; tuned on heldout78's GaussianDreamer rows, finishing tq59b's branch
`tq59b-imports-wip`): a tree's own code that a registry builds by a config's key is code the tree runs.

- The import graph reads `from . import (` with the names on the lines below (black's layout of a package's
  `__init__.py`) as importing those submodules; it read no name before, so a registry package's systems, guidances
  and renderers were files no import reaches, and their findings were info.
- A top-level definition registered under a string key (`@registry.register("deep-floyd-guidance")`) is reached where
  a config spells its key, or, for a hyphenated key, where a config spells a key of the same family (the key's last
  part, `guidance`): the family is a config choice, and its other members are the values a user may put there
  (policy (k), heldout76's DreamCraft3D). A family no config picks from (renderers of a tree whose config builds
  none) stays info.
"""
from __future__ import annotations

import pytest

from auditor.static.project_imports import _load_time_imports_stack, load_time_imports
from tests.static_snippets import dedented_tree, severity_at

REGISTRY = '''
    __modules__ = {}


    def register(name):
        def decorator(cls):
            __modules__[name] = cls
            return cls

        return decorator


    def find(name):
        return __modules__[name]


    from . import models, systems
'''

LAUNCH = '''
    import argparse

    from omegaconf import OmegaConf


    def main(args):
        import studio

        cfg = OmegaConf.load(args.config)
        system = studio.find(cfg.system_type)(cfg.system)
        system.fit()


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--config", required=True)
        main(parser.parse_args())
'''

SYSTEMS_INIT = '''
    from . import (
        dreamer,
    )
'''

MODELS_INIT = '''
    from . import (
        guidance,
        renderers,  # volume renderers
    )
'''

GUIDANCE_INIT = '''
    from . import (
        deep_floyd_guidance,
        stable_diffusion_guidance,

    )
'''

RENDERERS_INIT = '''
    from . import (
        nerf_volume_renderer,
    )
'''

DREAMER = '''
    import torch

    import studio


    @studio.register("dreamer-system")
    class Dreamer:
        def __init__(self, cfg):
            self.cfg = cfg
            self.guidance = studio.find(cfg.guidance_type)(cfg.guidance)

        def fit(self):
            bg = torch.tensor([1.0, 1.0, 1.0], device="cuda")
            return self.guidance(bg)
'''

FLOYD = '''
    import torch

    import studio


    @studio.register("deep-floyd-guidance")
    class DeepFloydGuidance:
        def __init__(self, cfg):
            self.weights = torch.zeros(4, device="cuda")

        def __call__(self, x):
            return x * self.weights.sum()
'''

SD = '''
    import torch

    import studio


    @studio.register("stable-diffusion-guidance")
    class StableDiffusionGuidance:
        def __init__(self, cfg):
            self.weights = torch.ones(4, device="cuda")

        def __call__(self, x):
            return x * self.weights.mean()
'''

NERF = '''
    import torch

    import studio


    @studio.register("nerf-volume-renderer")
    class NeRFVolumeRenderer:
        def __init__(self, cfg):
            self.grid = torch.zeros(128, 128, 128, device="cuda")

        def forward(self, rays):
            return self.grid[rays]
'''


README = '''
    # Dream

    Text-to-3D with a registry of systems, guidances and renderers.

    ## Acknowledgement

    Some source code of ours is borrowed from [Studio](https://github.com/studio-project/studio). We sincerely
    appreciate the excellent work of its authors.
'''


def _studio_tree(config: str) -> dict[str, str]:
    # (the README credits the `studio` package as code the tree builds on: a copy, read by policy (j))
    return {
        "README.md": README,
        "launch.py": LAUNCH,
        "studio/__init__.py": REGISTRY,
        "studio/systems/__init__.py": SYSTEMS_INIT,
        "studio/systems/dreamer.py": DREAMER,
        "studio/models/__init__.py": MODELS_INIT,
        "studio/models/guidance/__init__.py": GUIDANCE_INIT,
        "studio/models/guidance/deep_floyd_guidance.py": FLOYD,
        "studio/models/guidance/stable_diffusion_guidance.py": SD,
        "studio/models/renderers/__init__.py": RENDERERS_INIT,
        "studio/models/renderers/nerf_volume_renderer.py": NERF,
        "configs/dream.yaml": config,
    }


DREAM_CONFIG = '''
    name: "dream"
    system_type: "dreamer-system"
    system:
      guidance_type: "deep-floyd-guidance"
      guidance:
        guidance_scale: 20.0
'''


def test_parenthesised_names_on_the_lines_below_are_imported():
    text = "from . import (\n    dreamer,\n    zero123 as z,  # the image one\n)\nfrom .base import (BaseSystem,\n    Lift)\n"
    assert load_time_imports(text) == [(".", ["dreamer", "zero123"], True), (".base", ["BaseSystem", "Lift"], True)]
    assert _load_time_imports_stack(text) == load_time_imports(text)
    # a one-line list, and a list that is never closed (a broken file), read as before
    assert load_time_imports("from . import (a, b)\n") == [(".", ["a", "b"], True)]
    assert load_time_imports("def f():\n    from . import (\n        a,\n") == [(".", ["a"], False)]


def test_a_system_built_by_its_config_key_is_reached(tmp_path):
    found = dedented_tree(tmp_path, _studio_tree(DREAM_CONFIG))
    assert severity_at(found, "studio/systems/dreamer.py", DREAMER, 'device="cuda"').get("NPU003") == "error"
    assert severity_at(found, "studio/models/guidance/deep_floyd_guidance.py", FLOYD,
                       'device="cuda"').get("NPU003") == "error"


@pytest.mark.parametrize("guidance, severity", [
    ('guidance_type: "deep-floyd-guidance"', "error"),      # another member of the family the config picks from
    ("guidance_scale: 20.0", "info"),                       # no config picks a guidance
])
def test_a_member_of_a_family_a_config_picks_from_is_reached(tmp_path, guidance, severity):
    config = f'''
    system_type: "dreamer-system"
    system:
      {guidance}
'''
    found = dedented_tree(tmp_path, _studio_tree(config))
    assert severity_at(found, "studio/models/guidance/stable_diffusion_guidance.py", SD,
                       'device="cuda"').get("NPU003") == severity


@pytest.mark.parametrize("renderer, severity", [
    ("", "info"),                                           # the config builds no renderer
    ('renderer_type: "nerf-volume-renderer"', "error"),
])
def test_a_registered_renderer_no_config_names_is_info(tmp_path, renderer, severity):
    config = DREAM_CONFIG + (f"      {renderer}\n" if renderer else "")
    found = dedented_tree(tmp_path, _studio_tree(config))
    assert severity_at(found, "studio/models/renderers/nerf_volume_renderer.py", NERF,
                       'device="cuda"').get("NPU003") == severity


EXPORTER = '''
    import torch

    import studio


    @studio.register("mesh-exporter")
    class MeshExporter:
        def __init__(self, cfg):
            self.scale = torch.ones(3).cuda()
'''


@pytest.mark.parametrize("default, severity", [
    ('"mesh-exporter"', "error"),       # the system's own default spells the key
    ('""', "info"),
])
def test_a_key_a_reached_definition_spells_reaches_its_class(tmp_path, default, severity):
    dreamer = DREAMER.replace("        def fit(self):", f"""        exporter_type: str = {default}

        def fit(self):""")
    files = {**_studio_tree(DREAM_CONFIG), "studio/systems/dreamer.py": dreamer,
             "studio/models/exporters.py": EXPORTER}
    files["studio/models/__init__.py"] = MODELS_INIT.replace("guidance,", "exporters,\n        guidance,")
    found = dedented_tree(tmp_path, files)
    assert severity_at(found, "studio/models/exporters.py", EXPORTER, ".cuda()").get("NPU001") == severity


RASTER_SETUP = '''
    from setuptools import setup
    from torch.utils.cpp_extension import BuildExtension, CUDAExtension

    setup(
        name="diff_raster",
        packages=["diff_raster"],
        ext_modules=[
            CUDAExtension(
                name="diff_raster._C",
                sources=["rasterize_points.cu", "ext.cpp"],
            )
        ],
        cmdclass={"build_ext": BuildExtension},
    )
'''


@pytest.mark.parametrize("install, severity", [
    ("pip install ./studio/submodules/diff-raster", "error"),    # the README's install step builds it
    ("pip install -r requirements.txt", "info"),
])
def test_an_extension_setup_inside_a_copy_the_readme_installs_runs(tmp_path, install, severity):
    files = {**_studio_tree(DREAM_CONFIG), "studio/submodules/diff-raster/setup.py": RASTER_SETUP}
    files["README.md"] = README + f"""
    ## Install

    ```bash
    {install}
    ```
"""
    found = dedented_tree(tmp_path, files)
    assert severity_at(found, "studio/submodules/diff-raster/setup.py", RASTER_SETUP,
                       "CUDAExtension(").get("NPU370") == severity
