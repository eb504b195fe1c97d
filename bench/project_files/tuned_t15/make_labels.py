import hashlib, json, re, sys
from pathlib import Path
sys.path.insert(0, '/work/t15/bench')
import project_labels as pl
import yaml
D='device'; P='precision'; T='third_party'; A='attention'; K='kernel'; Di='distributed'; N='none'
L = {
("NeMo","examples/nlp/language_modeling/conf/megatron_t5_config_finetune_eval.yaml"): [(6,D,"Lightning accelerator: gpu")],
("NeMo","scripts/installers/Dockerfile.ngramtools"): [(19,N,"comment (git clone of NeMo)"),(20,N,"comment (how to build)"),(22,D,"FROM an NGC NeMo image (nvcr.io/nvidia, CUDA image; lower-case from)")],
("NeMo","tutorials/tts/Pronunciation_customization.ipynb"): [(6,N,"docstring prose about a Colab GPU runtime"),(14,N,"commented-out pip install")],
("NeMo","pyproject.toml"): [(32,N,"keywords text 'gpu'"),(37,N,"keywords text 'nvidia'")],
("NeMo","requirements/requirements_automodel.txt"): [(1,T,"bitsandbytes (no NPU build)"),(2,N,"commented-out liger-kernel")],
("NeMo","scripts/asr_language_modeling/ngram_lm/install_beamsearch_decoders.sh"): [(16,N,"comment naming the Flashlight decoder (CPU text decoder, not FlashAttention)"),(65,N,"comment '# install Flashlight'")],
("TransformerEngine",".github/workflows/community_label.yml"): [(1,N,"copyright comment naming NVIDIA")],
("TransformerEngine","transformer_engine/common/recipe/mxfp8_scaling.cu"): [(27,K,"first __global__ kernel of a CUDA source")],
("TransformerEngine",".github/actions/build-pytorch-wheel/Dockerfile"): [(1,N,"copyright comment"),(9,D,"ENV CUDA_HOME=/usr/local/cuda (CUDA toolkit path)"),(10,D,"PATH from $CUDA_HOME/bin (CUDA toolkit path)"),(11,D,"LD_LIBRARY_PATH /usr/local/cuda/lib64 (CUDA toolkit path)"),(12,D,"TORCH_CUDA_ARCH_LIST"),(16,D,"ARG CUDA_VERSION build parameter"),(17,D,"ARG CUDNN_MAJOR_VERSION build parameter (cuDNN)"),(30,N,"comment '# Install cuda-toolkit'"),(36,D,"dpkg -i cuda-keyring (NVIDIA CUDA apt repository)"),(39,D,"apt-get install cuda-toolkit / cudnn / libnccl"),(45,D,"pip install torch from the download.pytorch.org/whl/cuXXX index")],
("TransformerEngine","docs/examples/te_mixtral/requirements.txt"): [(2,T,"transformer_engine[pytorch] (no NPU build)"),(9,A,"flash-attn (no NPU build)"),(10,T,"nvidia-cudnn-frontend (nvidia-* wheel)")],
("TransformerEngine","transformer_engine/jax/setup.py"): [(126,T,"requirement transformer_engine_cu{N} (CUDA build of TE core) fed to install_requires")],
("TransformerEngine","docs/examples/advanced_optimizations.ipynb"): [(2,T,"import transformer_engine.pytorch (no NPU build)"),(3,T,"import from transformer_engine"),(15,D,".cuda()"),(16,D,".cuda()"),(23,D,".cuda()"),(48,Di,"init_process_group backend 'nccl'"),(53,Di,"backend='nccl'"),(54,Di,"backend='nccl'"),(55,Di,"backend='nccl'"),(65,D,".cuda()"),(96,D,".cuda()"),(124,D,".cuda()")],
("xformers",".github/workflows/rocm_docker.yml"): [],
("xformers","xformers/csrc/pt_stable_utils.cu"): [(10,K,"CUDA source: first CUDA runtime use (cudaDeviceProp); no __global__ in the file")],
("xformers","docs/source/2d_attention_patterns.ipynb"): [(3,A,"import from xformers (no NPU build)")],
("xformers","examples/llama_inference/requirements.txt"): [(2,D,"plain torch pin (info: pick the torch-npu release)"),(3,A,"xformers (no NPU build)")],
("xformers",".github/workflows/wheels_upload_pip.yml"): [(18,N,"input description text naming a cu121 wheel filter"),(63,N,"comment"),(81,D,"pip install torch (plain torch install, info)")],
("xformers","xformers/csrc/nvcc_info.cu"): [(8,K,"CUDA source: __CUDACC_VER_* (nvcc-only) macros")],
("torchtune","recipes/configs/llama3_2/3B_lora.yaml"): [(16,N,"comment '2+ GPUs'"),(95,D,"device: cuda"),(96,P,"dtype: bf16"),(111,D,"profiler cuda: True (CUDA activity)")],
("torchtune","pyproject.toml"): [(53,T,"bitsandbytes"),(77,T,"vllm==0.8.4")],
("torchtune","recipes/dev/multinode_grpo.sbatch"): [(11,D,"#SBATCH --constraint=volta32gb (GPU node feature)"),(15,D,"#SBATCH --gpus-per-task=8 (GPU request)"),(31,N,"commented export NCCL_SOCKET_IFNAME")],
("torchtune","recipes/configs/llama3_1/8B_lora_dpo.yaml"): [(16,N,"comment '2+ GPUs'"),(89,D,"device: cuda"),(90,P,"dtype: bf16")],
("torchtune","recipes/dev/gsm8k_sft.sbatch"): [(3,D,"#SBATCH --constraint=volta32gb"),(6,D,"#SBATCH --gpus-per-node=8")],
("torchtune","recipes/configs/qwen2_5/7B_lora.yaml"): [(16,N,"comment '2+ GPUs'"),(97,D,"device: cuda"),(98,P,"dtype: bf16"),(114,D,"profiler cuda: True")],
("composer","composer/algorithms/low_precision_groupnorm/metadata.json"): [(6,N,"tldr text 'fp16 or bf16'")],
("composer","composer/algorithms/low_precision_layernorm/metadata.json"): [(6,N,"tldr text 'fp16 or bf16'")],
("composer","examples/training_with_submitit.ipynb"): [(65,D,"torch.cuda.device_count()"),(103,D,"device='gpu' if torch.cuda.is_available()"),(119,D,"submitit gpus_per_node (GPU request)"),(124,D,"slurm_partition='gpu'"),(191,D,"torch.cuda.device_count()"),(228,D,"device='gpu' if torch.cuda.is_available()"),(244,D,"submitit gpus_per_node"),(249,D,"slurm_partition='gpu'")],
("composer","setup.py"): [(83,D,"plain torch pin in install_requires (info)"),(148,T,"pynvml (NVML bindings)"),(222,T,"pynvml"),(272,D,"dependency_links NVIDIA's redist index")],
("composer","examples/auto_microbatching.ipynb"): [(3,N,"commented %pip install"),(114,D,"assert torch.cuda.is_available()"),(123,D,"device='gpu'")],
("pytorch-lightning",".lightning/workflows/pytorch.yml"): [(8,D,"machine L4_X_2 (NVIDIA L4 GPU machine request)"),(9,D,"image nvidia/cuda"),(14,D,"image nvidia/cuda"),(19,N,"commented image"),(28,D,"CUDA_TOOLKIT_ROOT_DIR /usr/local/cuda"),(30,Di,"NCCL_DEBUG"),(51,D,"apt-get install libnccl2"),(52,D,"apt-get install libnccl-dev"),(75,D,"nvidia-smi"),(81,N,"comment"),(84,N,"echo message"),(87,D,"UV_TORCH_BACKEND=cu${...} (CUDA torch builds)"),(125,N,"comment"),(126,D,"extra test_gpu (CUDA dependency group)"),(127,D,"--find-links download.pytorch.org/whl/${UV_TORCH_BACKEND} (CUDA index)"),(128,D,"--find-links .../torch-tensorrt (CUDA)"),(144,D,"python -c torch.cuda.device_count()"),(146,T,"python -c import bitsandbytes"),(187,N,"comment"),(193,D,"--trainer.accelerator=gpu"),(194,D,"--trainer.accelerator=gpu"),(195,D,"--trainer.accelerator=gpu")],
("pytorch-lightning","examples/pytorch/bug_report/bug_report_model.ipynb"): [],
("pytorch-lightning","src/lightning/pytorch/trainer/setup.py"): [(164,N,"log message text"),(176,N,"warning message text")],
("pytorch-lightning","tests/parity_fabric/run_standalone_tasks.sh"): [(21,N,"comment")],
("pytorch-lightning",".github/ISSUE_TEMPLATE/1_bug_report.yaml"): [(110,N,"issue-template text"),(111,N,"issue-template text")],
("pytorch-lightning","tests/tests_pytorch/run_standalone_tasks.sh"): [(24,D,"--trainer.accelerator gpu")],
}
# composer build_matrix: every CUDA base image and CUDA_VERSION value
bm=("composer","docker/build_matrix.yaml")
lines = pl.file_lines(pl.tree('tuned_t15', bm[0]) / bm[1])
items=[]
for i,t in enumerate(lines,1):
    if re.search(r'BASE_IMAGE: nvidia/cuda', t): items.append((i,D,"CUDA base image"))
    elif re.search(r'CUDA_VERSION: \d', t): items.append((i,D,"CUDA version build parameter (info)"))
L[bm]=items
sel = json.load(open('/work/t15/bench/project_files/tuned_t15/selection.json'))['files']
assert set((e['repo'],e['path']) for e in sel) == set(L), set((e['repo'],e['path']) for e in sel) ^ set(L)
out = Path('/work/t15/bench/project_files/tuned_t15/labels'); out.mkdir(exist_ok=True)
for (repo,path),its in L.items():
    f = pl.tree('tuned_t15', repo) / path
    fl = pl.file_lines(f)
    d = {"repo": repo, "path": path, "sha256": hashlib.sha256(f.read_bytes()).hexdigest(),
         "lines": [{"line": ln, "category": c, "note": n, "text": fl[ln-1].strip()} for ln,c,n in sorted(its)]}
    pl.label_file('tuned_t15', repo, path).write_text(yaml.safe_dump(d, sort_keys=False, allow_unicode=True))
print(sum(1 for v in L.values() for x in v if x[1]!='none'), 'positive', sum(1 for v in L.values() for x in v if x[1]=='none'),'none')
