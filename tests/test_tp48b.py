"""tp48b (session 48, project test134): families the project-file readers missed on session 47's blind project split
test134 (recommender systems, medical imaging, speech serving). Recall: IBM LSF GPU requests (`bsub -gpu`, a GPU
queue, `#BSUB` lines; NPU928), PaddlePaddle's `FLAGS_selected_gpus` and PaddleRec's GPUBox mode (NPU929), TensorRT-LLM
example engine builds (NPU930, on the command's first line), `runtime="tensorrt"` (NPU931), `spark_rapids_ml` imports,
the RAPIDS Accelerator jar from Maven Central, a MONAI bundle's declared packages, a `pip list | grep` query of a CUDA
package. Quiet: a sed substitution's pattern (the text it takes out), comments and messages, CPU values. Shaped on
nnUNet, PaddleRec, WhisperFusion, SynapseML and MONAI bundles; each with controls."""
from __future__ import annotations

from tests.static_snippets import audit_file, codes_of_line, tree_findings, write_tree


LSF_COMMANDS = """\
bsub -q gpu.legacy -gpu num=1:j_exclusive=yes:gmem=1G -L /bin/bash ". /home/u/load_env.sh && . run_test.sh 9"
bsub -q gpu -gpu num=2:j_exclusive=yes:gmem=1G -L /bin/bash "python train.py"
bsub -q normal -n 4 -L /bin/bash "python preprocess.py"
# bsub -gpu num=1 -L /bin/bash "python train.py"
echo "run bsub -gpu num=1 for the GPU tests"
"""


def test_lsf_gpu_requests(tmp_path):
    found = audit_file(tmp_path, "tests/integration_tests/lsf_commands.sh", LSF_COMMANDS)
    assert codes_of_line(found, 1) == {"NPU928"}
    assert codes_of_line(found, 2) == {"NPU928"}
    for line in (3, 4, 5):                         # a CPU queue, a comment, a message
        assert not codes_of_line(found, line), line


LSF_JOB = """\
#!/bin/bash
#BSUB -J train
#BSUB -gpu "num=4:mode=exclusive_process"
#BSUB -q gpu
#BSUB -n 8
# submit with: bsub < job.lsf; it asks -gpu num=4
python train.py
"""


def test_lsf_job_directives(tmp_path):
    found = audit_file(tmp_path, "jobs/train.sh", LSF_JOB)
    assert codes_of_line(found, 3) == {"NPU928"}
    assert codes_of_line(found, 4) == {"NPU928"}
    for line in (2, 5, 6):
        assert not codes_of_line(found, line), line


GPUBOX_SCRIPT = """\
#!/bin/bash
export NCCL_LAUNCH_MODE=GROUP
export PADDLE_TRAINERS=1
# set gpu numbers according to your device
export FLAGS_selected_gpus="0,1,2,3,4,5,6,7"
export FLAGS_selected_npus="0,1"
echo "FLAGS_selected_gpus picks the cards"
python3.7 -u tools/static_trainer.py -m config.yaml
"""


def test_paddle_selected_gpus(tmp_path):
    found = audit_file(tmp_path, "tools/run_gpubox.sh", GPUBOX_SCRIPT)
    assert codes_of_line(found, 5) == {"NPU929"}
    for line in (3, 4, 6, 7):                      # a count, a comment, the NPU flag, a message
        assert not codes_of_line(found, line), line


GPUBOX_CONFIG = """\
runner:
  train_data_dir: "train_data"
  use_gpu: True
  # sync_mode: "gpubox"
  sync_mode: "gpubox"
  thread_num: 30
  reader_type: "InmemoryDataset"
"""

ASYNC_CONFIG = """\
runner:
  train_data_dir: "train_data"
  sync_mode: "async"
"""


def test_paddlerec_gpubox_mode(tmp_path):
    found = audit_file(tmp_path, "models/rank/dnn/benchmark_gpubox.yaml", GPUBOX_CONFIG)
    assert "NPU957" in codes_of_line(found, 5)
    assert not codes_of_line(found, 4)
    other = audit_file(tmp_path / "async", "models/rank/dnn/config.yaml", ASYNC_CONFIG)
    assert not any(c == "NPU957" for _, c, _ in other)


TRTLLM_BUILD = """\
#!/bin/bash -e

cd /root/TensorRT-LLM-examples/llama

## Build TensorRT for Mistral with `fp16`

python build.py --model_dir teknium/OpenHermes-2.5-Mistral-7B \\
                --dtype float16 \\
                --remove_input_padding \\
                --use_gpt_attention_plugin float16 \\
                --enable_context_fmha \\
                --use_gemm_plugin float16 \\
                --output_dir ./tmp/mistral/7B/trt_engines/fp16/1-gpu/ \\
                --max_input_len 5000

python3 build.py --output_dir whisper_small_en --use_gpt_attention_plugin --use_gemm_plugin --model_name small.en
python build.py --model_dir ./model --dtype float16 --output_dir ./out
echo "python build.py --use_gpt_attention_plugin float16"
"""


def test_tensorrt_llm_engine_builds(tmp_path):
    found = audit_file(tmp_path, "docker/scripts/build-mistral.sh", TRTLLM_BUILD)
    assert codes_of_line(found, 7) == {"NPU930"}
    assert len([c for ln, c, _ in found if c == "NPU930" and ln == 7]) == 1     # one finding for the build
    assert codes_of_line(found, 16) == {"NPU930"}
    for line in (5, 10, 12, 13, 17, 18):           # a comment, its options, a plain build, a message
        assert not codes_of_line(found, line), line


KNN_NOTEBOOK_CODE = """\
from spark_rapids_ml.knn import NearestNeighbors
from synapse.ml.hf import HuggingFaceSentenceEmbedder

# embedder = HuggingFaceSentenceEmbedder(modelName="intfloat/e5-large-v2", runtime="tensorrt")
embedder = HuggingFaceSentenceEmbedder(
    modelName="sentence-transformers/all-MiniLM-L6-v2",
    inputCol="data",
    outputCol="embeddings",
    runtime="tensorrt",
)
cpu_embedder = HuggingFaceSentenceEmbedder(modelName="m", runtime="cpu")
knn = NearestNeighbors(k=5)
"""


def test_spark_rapids_ml_and_tensorrt_runtime(tmp_path):
    found = audit_file(tmp_path, "docs/knn.py", KNN_NOTEBOOK_CODE)
    assert "NPU413" in codes_of_line(found, 1)
    assert codes_of_line(found, 9) == {"NPU931"}
    for line in (2, 4, 11):                        # SynapseML itself, a comment, the CPU runtime
        assert not codes_of_line(found, line), line


INIT_SCRIPT = """\
#!/bin/bash
set -ex
V=23.10.0
curl -L https://repo1.maven.org/maven2/com/nvidia/rapids-4-spark_2.12/${V}/rapids-4-spark_2.12-${V}-cuda11.jar -o /databricks/jars/r.jar
curl -L https://repo1.maven.org/maven2/org/apache/spark/spark-avro_2.12/3.5.0/spark-avro_2.12-3.5.0.jar -o /tmp/a.jar
export str_tmp=$(echo `pip list|grep paddlepaddle-gpu|awk -F ' ' '{print $2}'`)
export torch_version=$(pip list | grep torch | awk '{print $2}')
export frame_commit=$(echo `python -c "import paddle;print(paddle.version.commit)"`)
pip freeze | grep -v tensorrt | grep -v cupy-cuda12x > requirements-cpu.txt
pip list | grep -q paddlepaddle-gpu && pip uninstall -y paddlepaddle-gpu
if pip list | grep -q nvidia-dali-cuda120; then echo "remove DALI first"; exit 1; fi
if pip list | grep nvidia-dali-cuda120; then exit 1; fi
"""


def test_rapids_jar_and_package_query(tmp_path):
    found = audit_file(tmp_path, "tools/init_scripts/init-rapidsml.sh", INIT_SCRIPT)
    assert codes_of_line(found, 4) == {"NPU440"}
    assert {(ln, code, sev) for ln, code, sev in found if ln == 6} == {(6, "NPU440", "warning")}   # a query
    # a version, Spark's own jar, torch's version, a commit; greps that remove the CUDA packages or whose status alone
    # the script reads (review48 item 8, p11)
    for line in (3, 5, 7, 8, 9, 10, 11, 12):
        assert not codes_of_line(found, line), line


SED_PORT = """\
#!/bin/bash
for file in ${config_files}; do
   sed -i "s/runner.use_gpu/runner.use_npu/g" $file
   sed -i "s/--use_gpu:/--use_npu:/g" $file
done
sed -i "s/^#\\(.*--device cuda\\)/\\1/" run.sh
python tools/trainer.py --use_gpu true
"""


def test_sed_pattern_is_the_text_taken_out(tmp_path):
    found = audit_file(tmp_path, "test_tipc/prepare_npu_test.sh", SED_PORT)
    for line in (3, 4):
        assert not codes_of_line(found, line), line
    assert "NPU019" in codes_of_line(found, 6)      # `\1` puts the pattern back: uncommented (review48 item 9, p4)


BUNDLE_METADATA = """\
{
    "version": "0.2.0",
    "changelog": {
        "0.1.4": "add unit tests and use monai 1.3.1 with pytorch_version 2.2"
    },
    "monai_version": "1.3.1",
    "pytorch_version": "2.2.2",
    "numpy_version": "1.24.4",
    "optional_packages_version": {
        "scikit-image": "0.22.0",
        "cucim-cu12": "24.2.0",
        "torchvision": "0.17.2",
        "pynvml": "11.5.0"
    },
    "name": "VISTA-Cell"
}
"""

OTHER_METADATA = """\
{
    "pytorch_version": "2.2.2",
    "optional_packages_version": {"cucim-cu12": "24.2.0"}
}
"""


def test_monai_bundle_packages(tmp_path):
    found = audit_file(tmp_path, "vista2d/configs/metadata.json", BUNDLE_METADATA)
    assert codes_of_line(found, 7) == {"NPU011"}
    assert codes_of_line(found, 11) == {"NPU440"}
    assert codes_of_line(found, 13) == {"NPU440"}
    for line in (4, 6, 8, 10, 12, 15):             # a changelog text, MONAI, numpy, CPU packages, the name
        assert not codes_of_line(found, line), line
    other = audit_file(tmp_path / "other", "app/configs/settings.json", OTHER_METADATA)   # no `monai_version`: not a bundle's
    assert not other


HELD_TRAINER = """\
#!/bin/bash
# set your model yaml
SC="tools/static_gpubox_trainer.py -m models/rank/dnn/config_gpubox.yaml"
CPU="tools/static_ps_trainer.py -m models/rank/dnn/config.yaml"
NOT_RUN="tools/static_gpubox_trainer.py"
for((i=0;i<$PADDLE_PSERVER_NUMS;i++))
do
    python3.7 -u $SC &> ./log/pserver.$i.log &
done
python3.7 -u $CPU &> ./log/cpu.log
python -u tools/static_gpubox_trainer.py -m config_gpubox.yaml
echo "run tools/static_gpubox_trainer.py for GPUBox"
"""


def test_gpubox_trainer_launches(tmp_path):
    found = audit_file(tmp_path, "tools/run_gpubox.sh", HELD_TRAINER)
    assert codes_of_line(found, 3) == {"NPU957"}    # the held launch, on its assignment
    assert codes_of_line(found, 11) == {"NPU957"}   # a direct launch
    for line in (2, 4, 5, 8, 10, 12):              # a comment, the CPU trainer, a path never launched, a message
        assert not codes_of_line(found, line), line


def test_sourced_functions_after_an_empty_launch_variable(tmp_path):
    # review48 item 1 (q4): an empty assignment to the variable a `python $VAR` launch expands must not stop the
    # sourced file's functions from being recorded (the launch's locals once rebound scan_shell's `script` flag)
    root = write_tree(tmp_path, {
        "env.sh": "#!/bin/bash\nEXTRA_ARGS=\"\"\n\nsetup_gpu() {\n    export CUDA_VISIBLE_DEVICES=0,1\n"
                  "    nvidia-smi -L\n}\n\nrun_train() {\n    python $EXTRA_ARGS train.py \"$@\"\n}\n",
        "train.py": "import torch\nprint(torch.ones(1))\n",
        "train.sh": "#!/bin/bash\nsource ./env.sh\nsetup_gpu\nrun_train --epochs 3\n",
    })
    assert "NPU004" in {code for line, code, _sev in tree_findings(root, "train.sh") if line == 3}
