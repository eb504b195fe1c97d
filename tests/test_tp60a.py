"""tp60a (session 60, project test169-test171): project-file readings the blind splits missed. A compiler's CUDA
link flag on a continued line, NVIDIA driver libraries copied out of the host, NVIDIA's OptiX renderer wheel, a Cog
install command with a YAML comment after its quotes, a `gpu: cuda:0` device string, a Slurm queue named for GPUs,
PyG extensions taken from a find-links page of CUDA builds. Each shaped on real files, with controls."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, expect_line_codes

# a TensorFlow custom-op build (pointnet2's tf_ops): nvcc compiles the kernel, g++ links it with the CUDA runtime on
# the continuation line
TF_OPS_BUILD = """\
    CUDA_ROOT=/usr/local/cuda-10.0
    TF_CFLAGS=$(python -c 'import tensorflow as tf; print(" ".join(tf.sysconfig.get_compile_flags()))')
    cd pointnet2/tf_ops/sampling
    nvcc -std=c++11 -c -o tf_sampling_g.cu.o tf_sampling_g.cu \\
     ${TF_CFLAGS} -x cu -Xcompiler -fPIC
    g++ -std=c++11 -shared -o tf_sampling_so.so tf_sampling.cpp \\
     tf_sampling_g.cu.o ${TF_CFLAGS} -fPIC -lcudart ${TF_LFLAGS} -L${CUDA_ROOT}/lib64
    echo 'testing sampling'
    cd ../3d_interpolation
    g++ -std=c++11 tf_interpolate.cpp -o tf_interpolate_so.so -shared -fPIC ${TF_CFLAGS} -O2 -lcurl -lcurses
    x86_64-linux-gnu-g++-9 -shared -o plugin.so plugin.o -lcublas -lpthread
    """


def test_cuda_link_flag_of_a_compiler_command_sits_on_its_own_line(tmp_path):
    found = audit_file(tmp_path, "tf_ops/compile_ops.sh", TF_OPS_BUILD)
    assert "NPU937" in codes_of_line(found, 7)            # `-lcudart` on the g++ command's continuation
    assert "NPU937" not in codes_of_line(found, 6)        # the command's first line names no CUDA library
    assert "NPU937" in codes_of_line(found, 11)           # a target-prefixed, versioned g++ linking cuBLAS
    assert not codes_of_line(found, 10)                   # `-lcurl` / `-lcurses` are no CUDA libraries
    assert not codes_of_line(found, 8)                    # an echoed message


def test_cuda_link_flag_in_a_message_or_of_nvcc_is_not_this_rule(tmp_path):
    src = """\
        echo "then link it: g++ op.cpp -lcudart"
        nvcc -o saxpy saxpy.cu -lcublas
        """
    found = audit_file(tmp_path, "build.sh", src)
    assert not codes_of_line(found, 1)
    assert "NPU937" not in codes_of_line(found, 2)        # nvcc's own line is NPU017's (flags reported once)


def test_host_driver_libraries_copied_for_an_image(tmp_path):
    # a helper script that gathers the host's NVIDIA driver libraries for the image's `COPY drivers/* ...`
    src = """\
        # Copies the driver files the renderer needs into ./drivers
        mkdir -p drivers && cd drivers/
        cp /usr/lib/x86_64-linux-gnu/libnvoptix.so.1 .
        cp /usr/lib/x86_64-linux-gnu/*nvidia* .
        cp /usr/lib/x86_64-linux-gnu/libGL.so.1 .
        cp /usr/lib64/libnvidia-*.so* .
        ls /usr/lib/nvidia-470
        """
    found = audit_file(tmp_path, "docker/get_libs.sh", src)
    expect_line_codes(found, {3: {"NPU092"}, 4: {"NPU092"}, 6: {"NPU092"}}, quiet=(1, 2, 5))
    assert "NPU092" not in codes_of_line(found, 7)        # a driver folder: NPU075's, not a library glob


def test_visii_renderer_install_in_a_dockerfile(tmp_path):
    src = """\
        FROM python:3.8-slim
        RUN pip install --no-input tensorboardX \\
        && pip install --no-input visii \\
        && pip install --no-input pyrr
        """
    found = audit_file(tmp_path, "docker/Dockerfile", src)
    assert codes_of_line(found, 3) == {"NPU499"}
    assert not codes_of_line(found, 2) and not codes_of_line(found, 4)
    assert codes_of_line(audit_file(tmp_path / "r", "requirements.txt", "nvisii==1.1.72\nnumpy\n"), 1) == {"NPU499"}


def test_quoted_cog_install_command_with_a_trailing_comment(tmp_path):
    src = """\
        build:
          gpu: true
          python_packages:
            - "numpy==1.19.5"
          pre_install:
            - "pip install pytorch-fast-transformers==0.4.0"  # needs to be installed after the main pip install
            - "pip install pyfluidsynth==1.3.0"  # plain package
        predict: "predict.py:Predictor"
        """
    found = audit_file(tmp_path, "cog.yaml", src)
    assert codes_of_line(found, 6) == {"NPU360"}
    assert not codes_of_line(found, 7) and not codes_of_line(found, 4)


def test_gpu_key_holding_a_torch_device_string(tmp_path):
    src = """\
        batch_size: 512
        epochs: 100
        fp16_precision: False
        gpu: cuda:0                             # training GPU
        model_name: resnet
        """
    found = audit_file(tmp_path, "config.yaml", src)
    expect_line_codes(found, {4: {"NPU019"}}, quiet=(1, 2, 3, 5))
    assert not codes_of_line(audit_file(tmp_path / "b", "config.yaml", "gpu: 0\nuse_gpu: true\n"), 1)


def test_slurm_queue_key_naming_gpu_nodes(tmp_path):
    src = """\
        slurm_gpu_queue: 'gpu_p3'
        slurm_qos: 'qos_gpu-t3'
        slurm_cpu_queue: 'cpu_p1'
        default_queue: 'gpu_p1'
        """
    found = audit_file(tmp_path, "config_cluster.yaml", src)
    expect_line_codes(found, {1: {"NPU028"}}, quiet=(2, 3, 4))


def test_pyg_extensions_after_a_find_links_page_of_cuda_builds(tmp_path):
    src = """\
        name: molenv
        channels:
          - pytorch
        dependencies:
          - python==3.7.10
          - pip:
              - docopt
              # torch-scatter and friends:
              - -f https://data.pyg.org/whl/torch-1.10.0+cu113.html
              - torch-scatter
              - torch-sparse==0.6.12
              - xlsxwriter
              - torch-cluster==1.5.9+cpu
        """
    found = audit_file(tmp_path, "environment.yml", src)
    # (a `+cpu` build names its own build: not taken from the page)
    expect_line_codes(found, {9: {"NPU018"}, 10: {"NPU440"}, 11: {"NPU440"}}, quiet=(7, 8, 12, 13))


def test_pyg_extension_without_a_cuda_page_is_not_a_cuda_build(tmp_path):
    src = """\
        -f https://data.pyg.org/whl/torch-1.10.0+cpu.html
        torch-scatter
        numpy
        """
    found = audit_file(tmp_path, "requirements.txt", src)
    assert not codes_of_line(found, 2)
    found = audit_file(tmp_path / "b", "requirements.txt", "torch-scatter\ntorch-sparse\n")
    assert not codes_of_line(found, 1) and not codes_of_line(found, 2)


def _notebook(*cells: list[str]) -> str:
    import json

    return json.dumps({"cells": [{"cell_type": "code", "metadata": {}, "execution_count": None, "outputs": [],
                                  "source": [line + "\n" for line in cell]} for cell in cells],
                       "metadata": {}, "nbformat": 4, "nbformat_minor": 5})


def test_notebook_loads_a_downloaded_checkpoint_without_map_location(tmp_path):
    nb = _notebook(["import os", "import torch", "from models import Generator"],
                   ["!wget -q https://example.org/releases/ckpt/generator_ffhq.zip", "!unzip -q generator_ffhq.zip",
                    "ckpt = './generator_ffhq/g_ema.pt'", "assert os.path.exists(ckpt)"],
                   ["g = Generator(1024).cuda()", "g.load_state_dict(torch.load(ckpt))",
                    "g.load_state_dict(torch.load(ckpt, map_location='cpu'))",
                    "stats = torch.load('generator_ffhq/stats.pt')"])
    found = audit_file(tmp_path, "demo.ipynb", nb)
    assert "NPU938" in codes_of_line(found, 9)
    assert "NPU938" not in codes_of_line(found, 10)      # map_location given
    assert "NPU938" in codes_of_line(found, 11)          # a literal path under the unpacked folder


def test_notebook_checkpoint_it_saves_itself_or_does_not_fetch_is_not_read(tmp_path):
    nb = _notebook(["import torch", "!wget https://example.org/data/train.csv"],
                   ["torch.save(model.state_dict(), 'model.pth')", "checkpoint = torch.load('model.pth')",
                    "other = torch.load('runs/best.pt')"])
    found = audit_file(tmp_path, "train.ipynb", nb)
    assert "NPU938" not in codes_of_line(found, 4) and "NPU938" not in codes_of_line(found, 5)


def test_gpu_count_of_a_job_runner_queue_that_names_a_slurm_partition(tmp_path):
    src = """\
        default_queue: 'gpu_p1'
        gpu_queues:
          gpu_p1:  # the Slurm queue jobs go to
            n_cpus_per_node: 40
            n_gpus_per_node: 4
            flags:
              partition: 'gpu_p1'
              time: '20:00:00'
          local:
            n_cpus_per_node: 'auto'
            n_gpus_per_node: 'auto'
        """
    found = audit_file(tmp_path, "job-runner-config.yaml", src)
    expect_line_codes(found, {5: {"NPU022"}, 7: {"NPU028"}}, quiet=(1, 3, 4, 8, 10, 11))


def test_worker_count_without_a_partition_is_no_request(tmp_path):
    src = """\
        trainer:
          nnodes: 1
          n_gpus_per_node: 8
          total_epochs: 15
        """
    found = audit_file(tmp_path, "verl.yaml", src)
    assert not codes_of_line(found, 3)


def test_gpu_count_beside_an_empty_partition_is_no_queue_definition(tmp_path):
    src = """\
        num_gpus: 1
        mem_per_gpu: 20
        slurm_partition: ''
        """
    found = audit_file(tmp_path, "cfgs/other.yaml", src)
    assert not codes_of_line(found, 1)
