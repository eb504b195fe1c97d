"""tp51d (session 51, project test146): families the project-file readers missed on session 51's blind project split
(RLHF, medical imaging, Gaussian splatting, molecular dynamics, video and edge inference trees). Recall: TensorRT's
tar / zip packages named by their files (NPU440), LAMMPS' own GPU counts (`-k on g 1`, `-pk gpu 2`: NPU028). Quiet:
the RUN lines of a Dockerfile that unpack and remove an NVIDIA archive its COPY / ADD put in the image. Shaped on
TensorRT-Alpha's and other TensorRT Dockerfiles, flare's LAMMPS benchmarks and a Slurm LAMMPS job; each with controls
(comments, messages, CPU runs, other archives)."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes


TRT_DOCKERFILE = """\
FROM nvidia/cuda:11.3.1-cudnn8-devel-ubuntu18.04
#copy and unzip tensorrt8.4.2.4 (TensorRT-8.4.2.4.Linux.x86_64-gnu.cuda-11.6.cudnn8.4.tar.gz)
RUN mkdir -p /home/user/
COPY TensorRT-8.4.2.4.Linux.x86_64-gnu.cuda-11.6.cudnn8.4.tar.gz /home/user/
RUN cd /home/user/ && \\
    tar -zxvf TensorRT-8.4.2.4.Linux.x86_64-gnu.cuda-11.6.cudnn8.4.tar.gz && \\
    rm TensorRT-8.4.2.4.Linux.x86_64-gnu.cuda-11.6.cudnn8.4.tar.gz && \\
    mkdir workspace
ADD TensorRT-8.6.1.6.Linux.x86_64-gnu.cuda-12.0.tar.gz /opt/
COPY opencv-4.5.5.tar.gz /opt/
RUN tar -xzf /opt/opencv-4.5.5.tar.gz
"""

TRT_SCRIPT = """\
#!/bin/bash
TRT_VERSION=10.0.1.6
wget https://developer.nvidia.com/downloads/compute/machine-learning/tensorrt/10.0.1/tars/TensorRT-10.0.1.6.Linux.x86_64-gnu.cuda-12.4.tar.gz
tar -xvf TensorRT-7.2.3.4.Ubuntu-18.04.x86_64-gnu.cuda-11.1.cudnn8.1.tar.gz
unzip TensorRT-8.6.1.6.Windows10.x86_64.cuda-12.0.zip
# tar -xzvf TensorRT-8.6.1.6.Linux.x86_64-gnu.cuda-12.0.tar.gz
echo "download TensorRT-8.6.1.6.Linux.x86_64-gnu.cuda-12.0.tar.gz from NVIDIA first"
export LD_LIBRARY_PATH=$LD_LIBRARY_PATH:/opt/TensorRT-8.6.1.6/lib
tar -xzvf onnxruntime-linux-x64-1.16.3.tgz
"""


def test_tensorrt_packages_by_file_name(tmp_path):
    found = audit_file(tmp_path, "docker/ubuntu18.04-cu113.Dockerfile", TRT_DOCKERFILE)
    for line in (4, 9):
        assert "NPU440" in codes_of_line(found, line), line
    # the copied archive unpacked and removed: the COPY is the finding (test146's label)
    expect_line_codes(found, {}, (2, 3, 5, 6, 7, 8, 10, 11))
    found = audit_file(tmp_path / "s", "install_trt.sh", TRT_SCRIPT)
    for line in (3, 4, 5):
        assert "NPU440" in codes_of_line(found, line), line
    expect_line_codes(found, {}, (2, 6, 7, 8, 9))


LAMMPS_BENCH = """\
#!/bin/bash
set -e
for L in 1 2 5 10
do
    echo "L = $L, Serial"
    ~/lammps/build/lmp -sf kk -pk kokkos newton on neigh half -k on t 1 -var L $L -in in.bench | grep ns/day
    mpirun ~/lammps/ompbuild/lmp -sf kk -pk kokkos newton on neigh half -k on t 12 -var L $L -in in.bench
    ~/lammps/cudabuild/lmp -sf kk -pk kokkos newton on neigh half -k on g 1 -var L $L -in in.bench | grep ns/day
    CUDA_LAUNCH_BLOCKING=1 mpirun -np $mpi ~/lammps/cudabuild/lmp -k on g 1 -sf kk -in in.si > /dev/null
    # ~/lammps/cudabuild/lmp -k on g 1 -sf kk -in in.si
    echo "run lmp -k on g 1 for the CUDA build"
done
lmp="${HOME}/lammps/build/lmp -k on g 1 -sf kk -pk kokkos newton on neigh full"
export lmp="$(pwd)/lammps/build/lmp -k on t 4 -sf kk -pk kokkos newton on neigh half"
"""

LAMMPS_SLURM = """\
#!/bin/bash
#SBATCH --nodes=1
srun lmp_kokkos_cuda_mpi -kokkos on gpus 4 -suffix kk -in in.lj
mpirun -np 2 lmp_mpi -sf gpu -pk gpu 2 -in in.lj
mpirun -np 4 lmp_mpi -sf omp -pk omp 4 -in in.lj
lmp -k on g 0 -in in.lj
"""


def test_lammps_gpu_counts(tmp_path):
    found = audit_file(tmp_path, "bench.sh", LAMMPS_BENCH)
    for line in (8, 9, 13):
        assert "NPU028" in codes_of_line(found, line), line
    expect_line_codes(found, {}, (5, 6, 7, 10, 11, 14))
    found = audit_file(tmp_path / "s", "job.slurm", LAMMPS_SLURM)
    for line in (3, 4):
        assert "NPU028" in codes_of_line(found, line), line
    expect_line_codes(found, {}, (5, 6))


MVSPLAT_TREE = {
    "config/main.yaml": """\
        defaults:
          - dataset: re10k
          - model/encoder: costvolume
          - model/decoder: splatting_cuda
          # - model/decoder: splatting_cuda
          - loss: [mse]
        wandb:
          project: mvsplat
          mode: disabled
        decoder_note: splatting_cuda
        """,
    "config/model/decoder/splatting_cuda.yaml": "name: splatting_cuda\n",
    "config/model/encoder/costvolume.yaml": "name: costvolume\nd_feature: 128\n",
    "src/model/decoder/__init__.py": """\
        from .decoder import Decoder
        from .decoder_splatting_cuda import DecoderSplattingCUDA, DecoderSplattingCUDACfg

        DECODERS = {
            "splatting_cuda": DecoderSplattingCUDA,
        }


        def get_decoder(decoder_cfg, dataset_cfg) -> Decoder:
            return DECODERS[decoder_cfg.name](decoder_cfg, dataset_cfg)
        """,
    "src/model/decoder/decoder.py": "class Decoder:\n    pass\n",
    "src/model/decoder/decoder_splatting_cuda.py": """\
        import torch
        from .cuda_splatting import render_cuda
        from .decoder import Decoder


        class DecoderSplattingCUDACfg:
            name = "splatting_cuda"


        class DecoderSplattingCUDA(Decoder):
            def forward(self, gaussians):
                return render_cuda(gaussians)
        """,
    "src/model/decoder/cuda_splatting.py": """\
        import torch
        from diff_gaussian_rasterization import GaussianRasterizationSettings, GaussianRasterizer


        def render_cuda(gaussians):
            settings = GaussianRasterizationSettings(image_height=1, image_width=1)
            return GaussianRasterizer(settings)(gaussians)
        """,
    "src/model/encoder/__init__.py": """\
        from .encoder_costvolume import EncoderCostVolume

        ENCODERS = {"costvolume": EncoderCostVolume}
        """,
    "src/model/encoder/encoder_costvolume.py": "import torch\n\n\nclass EncoderCostVolume(torch.nn.Module):\n    pass\n",
}

# a second shape: a point-cloud backbone registry over MinkowskiEngine, chosen with `override`, beside a plain one
POINT_TREE = {
    "conf/train.yaml": """\
        defaults:
          - override backbone: minkunet
          - _self_
        backbone_name: minkunet
        """,
    "conf/backbone/minkunet.yaml": "type: minkunet\nvoxel_size: 0.05\n",
    "conf/backbone/pointnet.yaml": "type: pointnet\n",
    "models/__init__.py": """\
        from models.minkunet import MinkUNet
        from models.pointnet import PointNet

        BACKBONES = dict()
        BACKBONES.update({'minkunet': MinkUNet, 'pointnet': PointNet})
        """,
    "models/minkunet.py": "import MinkowskiEngine as ME\n\n\nclass MinkUNet(ME.MinkowskiNetwork):\n    pass\n",
    "models/pointnet.py": "import torch\n\n\nclass PointNet(torch.nn.Module):\n    pass\n",
}


def test_hydra_choices_of_a_cuda_kernel_implementation(tmp_path):
    from tests.static_snippets import tree_codes_by_line, write_tree

    root = write_tree(tmp_path / "mvsplat", MVSPLAT_TREE)
    found = tree_codes_by_line(root, "config/main.yaml")
    assert "NPU974" in found.get(4, set())
    assert all("NPU974" not in found.get(n, set()) for n in (1, 2, 3, 5, 6, 8, 10))
    assert "NPU974" in tree_codes_by_line(root, "config/model/decoder/splatting_cuda.yaml").get(1, set())
    assert not tree_codes_by_line(root, "config/model/encoder/costvolume.yaml")
    root = write_tree(tmp_path / "points", POINT_TREE)
    found = tree_codes_by_line(root, "conf/train.yaml")
    assert "NPU974" in found.get(2, set())
    assert "NPU974" not in found.get(4, set())     # a key named otherwise is no choice Hydra reads
    assert "NPU974" in tree_codes_by_line(root, "conf/backbone/minkunet.yaml").get(1, set())
    assert not tree_codes_by_line(root, "conf/backbone/pointnet.yaml")



def test_a_warm_run_finds_the_registry_choice_from_the_summaries(tmp_path, monkeypatch):
    """The registries are a per-file fact: the whole-tree run takes them from each file's summary, so a warm run parses
    no Python file for them (lead, session 52: the pass used to read and parse all of the tree's Python on every run)."""
    import auditor.project.registry_choices as registry_choices
    from auditor.runner import run_static
    from tests.static_snippets import write_tree

    root = write_tree(tmp_path / "mvsplat", MVSPLAT_TREE)
    computed: list[int] = []
    real = registry_choices.registry_fact

    def counted(tree):
        computed.append(1)
        return real(tree)
    monkeypatch.setattr(registry_choices, "registry_fact", counted)

    def choices(run):
        return sorted((r.path, f.line) for r in run.results for f in r.findings if f.code == "NPU974")
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    assert computed and ("config/main.yaml", 4) in choices(cold)
    computed.clear()
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert choices(warm) == choices(cold) and warm.cached_files == len(warm.results)
    assert not computed         # every registry came from a cached summary

MERGE_TREE = {
    "scripts/run.sh": """\
        LAUNCH="accelerate launch --config_file scripts/accelerate_configs/multi_gpu.yaml --num_processes=8"
        PYTHONPATH=. $LAUNCH src/train.py \\
            --bf16 True \\
            --dtype bf16
        # Supervised Fine-Tuning: Merge SFT LoRA weights
        PYTHONPATH=. python src/tools/merge_peft_adapter.py \\
            --adapter_model_name "${output_dir}/best_checkpoint" \\
            --dtype bf16 \\
            --output_name "${output_dir}/merged_checkpoint"
        python src/tools/eval_merged.py --dtype bf16 --model "${output_dir}/merged_checkpoint"
        """,
    "src/tools/merge_peft_adapter.py": """\
        from dataclasses import dataclass, field

        import torch
        from peft import PeftModel
        from transformers import AutoModelForCausalLM, HfArgumentParser


        @dataclass
        class ScriptArguments:
            adapter_model_name: str = field(default=None)
            output_name: str = field(default=None)
            dtype: str = field(default="fp16")


        args = HfArgumentParser(ScriptArguments).parse_args_into_dataclasses()[0]
        str2dtype = {"fp16": torch.float16, "bf16": torch.bfloat16, "fp32": torch.float}
        model = AutoModelForCausalLM.from_pretrained(args.adapter_model_name, torch_dtype=str2dtype[args.dtype])
        model = PeftModel.from_pretrained(model, args.adapter_model_name).merge_and_unload()
        model.save_pretrained(args.output_name)
        """,
    "src/tools/eval_merged.py": """\
        import argparse

        import torch
        from transformers import AutoModelForCausalLM

        parser = argparse.ArgumentParser()
        parser.add_argument("--dtype", default="fp16")
        parser.add_argument("--model")
        args = parser.parse_args()
        model = AutoModelForCausalLM.from_pretrained(args.model, torch_dtype=getattr(torch, args.dtype), device_map="auto")
        model.save_pretrained(args.model + "-copy")
        """,
    "src/train.py": "import torch\n\n\ndef main():\n    torch.zeros(1).cuda()\n",
}


def test_dtype_of_a_host_conversion_script_quiet(tmp_path):
    from tests.static_snippets import tree_codes_by_line, write_tree

    root = write_tree(tmp_path / "modpo", MERGE_TREE)
    found = tree_codes_by_line(root, "scripts/run.sh")
    assert "NPU212" in found.get(4, set())      # the training launch's dtype
    assert "NPU212" not in found.get(8, set())  # the merge script loads, merges and saves on the host
    assert "NPU212" in found.get(10, set())     # a script that places the model (`device_map="auto"`)
