"""tp54b (issue 15, session 54): launch lines whose option value picks a model of the tree's registry built on the
project's own CUDA-only kernel (NPU992), passed or left at its argparse default; a value picking another model quiet."""
from __future__ import annotations

from tests.static_snippets import tree_codes_by_line, write_tree

# CenterNet's shape: `experiments/*.sh` run `src/main.py`, which reads its options from `src/lib/opts.py` (put on
# sys.path by `_init_paths`); `create_model` keys `_model_factory` by the arch's name before `_`; the DCN nets import
# DCNv2, whose function module imports the extension its own make.sh / build.py compile
DETECTOR_TREE = {
    "experiments/ctdet_resdcn18.sh": """\
        cd src
        # train
        python main.py ctdet --exp_id coco_resdcn18 --arch resdcn_18 --batch_size 114 --gpus 0,1,2,3
        python test.py ctdet --exp_id coco_resdcn18 --arch=resdcn_18 --keep_res --resume
        cd ..
        """,
    "experiments/ddd_3dop.sh": """\
        cd src
        python main.py ddd --exp_id 3dop --dataset kitti --batch_size 16 --gpus 0,1
        cd ..
        """,
    "experiments/multi_pose_hg.sh": """\
        cd src
        python main.py multi_pose --exp_id hg_1x --arch hourglass --batch_size 24 --gpus 0,1,2,3,4
        python main.py ctdet --exp_id res18 --arch res_18 --gpus 0
        cd ..
        """,
    "src/_init_paths.py": """\
        import os.path as osp
        import sys

        lib_path = osp.join(osp.dirname(__file__), 'lib')
        if lib_path not in sys.path:
            sys.path.insert(0, lib_path)
        """,
    "src/main.py": """\
        import _init_paths

        import torch
        from opts import opts
        from models.model import create_model


        def main(opt):
            model = create_model(opt.arch, opt.heads, opt.head_conv)
            return model


        if __name__ == '__main__':
            main(opts().parse())
        """,
    "src/test.py": """\
        import _init_paths

        from opts import opts
        from models.model import create_model

        if __name__ == '__main__':
            opt = opts().parse()
            create_model(opt.arch, opt.heads, opt.head_conv)
        """,
    "src/lib/opts.py": """\
        import argparse


        class opts(object):
            def __init__(self):
                self.parser = argparse.ArgumentParser()
                self.parser.add_argument('task', default='ctdet')
                self.parser.add_argument('--exp_id', default='default')
                self.parser.add_argument('--arch', default='dla_34',
                                         help='res_18 | resdcn_18 | dla_34 | hourglass')

            def parse(self):
                return self.parser.parse_args()
        """,
    "src/lib/models/__init__.py": "",
    "src/lib/models/model.py": """\
        from .networks.msra_resnet import get_pose_net
        from .networks.pose_dla_dcn import get_pose_net as get_dla_dcn
        from .networks.resnet_dcn import get_pose_net as get_pose_net_dcn
        from .networks.large_hourglass import get_large_hourglass_net

        _model_factory = {
          'res': get_pose_net,
          'dla': get_dla_dcn,
          'resdcn': get_pose_net_dcn,
          'hourglass': get_large_hourglass_net,
        }


        def create_model(arch, heads, head_conv):
          num_layers = int(arch[arch.find('_') + 1:]) if '_' in arch else 0
          arch = arch[:arch.find('_')] if '_' in arch else arch
          return _model_factory[arch](num_layers=num_layers, heads=heads, head_conv=head_conv)
        """,
    "src/lib/models/networks/__init__.py": "",
    "src/lib/models/networks/msra_resnet.py": """\
        import torch.nn as nn


        def get_pose_net(num_layers, heads, head_conv):
            return nn.Identity()
        """,
    "src/lib/models/networks/large_hourglass.py": """\
        import torch.nn as nn


        def get_large_hourglass_net(num_layers, heads, head_conv):
            return nn.Identity()
        """,
    "src/lib/models/networks/pose_dla_dcn.py": """\
        import torch.nn as nn
        from .DCNv2.dcn_v2 import DCN


        def get_pose_net(num_layers, heads, head_conv):
            return DCN(64, 64, kernel_size=(3, 3), stride=1, padding=1, deformable_groups=1)
        """,
    "src/lib/models/networks/resnet_dcn.py": """\
        import torch.nn as nn
        from .DCNv2.dcn_v2 import DCN


        def get_pose_net(num_layers, heads, head_conv):
            return DCN(64, 64, kernel_size=(3, 3), stride=1, padding=1, deformable_groups=1)
        """,
    "src/lib/models/networks/DCNv2/__init__.py": "",
    "src/lib/models/networks/DCNv2/dcn_v2.py": """\
        import torch
        from torch import nn
        from .dcn_v2_func import DCNv2Function


        class DCN(nn.Module):
            def forward(self, input, offset, mask):
                return DCNv2Function(1, 1)(input, offset, mask)
        """,
    "src/lib/models/networks/DCNv2/dcn_v2_func.py": """\
        import torch
        from torch.autograd import Function

        from ._ext import dcn_v2 as _backend


        class DCNv2Function(Function):
            def forward(self, input, offset, mask):
                output = input.new(*input.shape)
                _backend.dcn_v2_cuda_forward(input, offset, mask, output)
                return output
        """,
    "src/lib/models/networks/DCNv2/make.sh": """\
        cd src/cuda
        nvcc -c -o dcn_v2_im2col_cuda.cu.o dcn_v2_im2col_cuda.cu -x cu -Xcompiler -fPIC
        cd -
        python build.py
        """,
}


def test_launch_option_value_picking_a_dcn_model(tmp_path):
    root = write_tree(tmp_path / "CenterNet", DETECTOR_TREE)
    found = tree_codes_by_line(root, "experiments/ctdet_resdcn18.sh")
    assert "NPU992" in found.get(3, set())         # `--arch resdcn_18`: the 'resdcn' entry, DCN
    assert "NPU992" in found.get(4, set())         # `--arch=resdcn_18`
    assert all("NPU992" not in found.get(n, set()) for n in (1, 2, 5))
    # the option left out: argparse's default `dla_34` picks the DLA-DCN net
    assert "NPU992" in tree_codes_by_line(root, "experiments/ddd_3dop.sh").get(2, set())


def test_launch_option_value_picking_a_plain_model_quiet(tmp_path):
    root = write_tree(tmp_path / "CenterNet", DETECTOR_TREE)
    found = tree_codes_by_line(root, "experiments/multi_pose_hg.sh")
    assert "NPU992" not in found.get(2, set())     # `--arch hourglass`: no DCN op
    assert "NPU992" not in found.get(3, set())     # `--arch res_18`: the plain ResNet


def test_a_registry_outside_the_launched_folder_is_not_read(tmp_path):
    tree = {k.replace("src/", "tools/", 1) if k.startswith("src/lib") else k: v for k, v in DETECTOR_TREE.items()}
    root = write_tree(tmp_path / "CenterNet", tree)
    assert "NPU992" not in tree_codes_by_line(root, "experiments/ctdet_resdcn18.sh").get(3, set())


def test_option_values_of_a_launch():
    from auditor.project.launched import option_pairs, option_values

    words = ["--arch", "resdcn_18", "--lr", "5e-4", "--gpus", "0,1", "--model=dla_34", "--resume", "--out",
             "runs/x", "--name", "$NAME", "--world-size=1"]
    pairs = option_pairs(words)
    assert ("gpus", "0,1") in pairs and ("world-size", "1") in pairs
    assert option_values(pairs) == {"arch": "resdcn_18", "model": "dla_34"}


def test_a_warm_run_takes_the_defaults_from_the_summaries(tmp_path, monkeypatch):
    """The argparse defaults are a per-file fact, as the registries are: a warm run parses no Python file for them."""
    import auditor.project.registry_choices as registry_choices
    from auditor.runner import run_static

    root = write_tree(tmp_path / "CenterNet", DETECTOR_TREE)
    computed: list[int] = []
    real = registry_choices.option_defaults_fact

    def counted(tree):
        computed.append(1)
        return real(tree)
    monkeypatch.setattr(registry_choices, "option_defaults_fact", counted)

    def choices(run):
        return sorted((r.path, f.line) for r in run.results for f in r.findings if f.code == "NPU992")
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    assert ("experiments/ddd_3dop.sh", 2) in choices(cold)
    assert ("experiments/multi_pose_hg.sh", 2) not in choices(cold)
    computed.clear()
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert choices(warm) == choices(cold) and warm.cached_files == len(warm.results)
    assert not computed


def _notebook(*cells: str) -> str:
    import json

    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "outputs": [], "execution_count": None,
                                  "source": c.splitlines(keepends=True)} for c in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 4})


def test_a_notebook_import_no_cell_uses_is_quiet(tmp_path):
    """ssd.pytorch's demo: `import torch.backends.cudnn as cudnn` that no cell uses; a name a later cell uses keeps
    its finding (each cell is read alone, so the engine's "never used" is checked against the whole notebook)."""
    unused = _notebook("import os\nimport torch\nimport torch.backends.cudnn as cudnn\nfrom ssd import build_ssd\n",
                       "net = build_ssd('test', 300, 21)\nnet.load_weights('../weights/ssd300_mAP_77.43_v2.pth')\n")
    root = write_tree(tmp_path / "ssd", {"demo/demo.ipynb": unused})
    assert not tree_codes_by_line(root, "demo/demo.ipynb").get(3)
    used = _notebook("import torch\nimport torch.backends.cudnn as cudnn\n", "cudnn.benchmark = True\n")
    root = write_tree(tmp_path / "used", {"demo/demo.ipynb": used})
    found = tree_codes_by_line(root, "demo/demo.ipynb")
    assert found.get(2) or found.get(3)      # the import or its use in the next cell keeps a finding


def test_a_notebook_fp16_load_dtype_is_quiet(tmp_path):
    """simple-llm-finetuner's inference notebook: `torch_dtype=torch.float16` of a `from_pretrained` (decision 30's
    project-file reading); a float16 compute dtype in the same notebook keeps its hint."""
    nb = _notebook(
        "import torch\nfrom transformers import LlamaForCausalLM\n"
        "model = LlamaForCausalLM.from_pretrained(\n    'decapoda-research/llama-7b-hf',\n"
        "    load_in_8bit=True,\n    torch_dtype=torch.float16,\n    device_map='auto'\n)\n",
        "x = torch.zeros(4, dtype=torch.float16)\n")
    root = write_tree(tmp_path / "ft", {"inference.ipynb": nb})
    found = tree_codes_by_line(root, "inference.ipynb")
    assert "NPU202" not in found.get(6, set())
    assert "NPU202" in found.get(9, set())


def test_a_script_fp16_load_dtype_keeps_its_hint(tmp_path):
    from tests.static_snippets import audit_file, codes_of_line

    found = audit_file(tmp_path, "infer.py", """\
        import torch
        from transformers import AutoModelForCausalLM
        model = AutoModelForCausalLM.from_pretrained("gpt2", torch_dtype=torch.float16)
        """)
    assert "NPU202" in codes_of_line(found, 3)


def test_nvidia_index_of_the_scripts_own_nvidia_requirement_is_quiet(tmp_path):
    """solo-learn's setup.py: the DALI extra is the finding; the redist index it resolves from is not another one."""
    from tests.static_snippets import audit_file, codes_of_line

    found = audit_file(tmp_path / "solo", "setup.py", """\
        from setuptools import find_packages, setup

        EXTRA_REQUIREMENTS = {
            "dali": ["nvidia-dali-cuda110"],
            "umap": ["matplotlib", "seaborn", "pandas", "umap-learn"],
        }

        setup(
            name="solo-learn",
            packages=find_packages(exclude=["tests"]),
            extras_require=EXTRA_REQUIREMENTS,
            dependency_links=["https://developer.download.nvidia.com/compute/redist"],
        )
        """)
    assert codes_of_line(found, 4)
    assert not codes_of_line(found, 12)
    # no NVIDIA requirement of its own: the index line is the only word of NVIDIA's packages, and keeps its finding
    found = audit_file(tmp_path / "composer", "setup.py", """\
        from setuptools import find_packages, setup

        install_requires = ['torch>=2.6.0,<2.7.1', 'pynvml>=11.5.0,<12']

        setup(
            name='mosaicml',
            packages=find_packages(exclude=['tests*']),
            install_requires=install_requires,
            dependency_links=['https://developer.download.nvidia.com/compute/redist'],
        )
        """)
    assert codes_of_line(found, 9)
