"""Launch scripts (and Dockerfile RUN lines, notebook `!` lines) read with tree-sitter-bash, a real and
error-tolerant bash grammar: environment variables set (`export`, `NAME=... cmd`, `declare -x`) or read
(`$NAME`, `${NAME:-x}`), commands (`nvidia-smi`, `nvcc`, `docker run --gpus`, `torchrun
--nproc-per-node=gpu`) and package installs (`pip install flash-attn`, `--extra-index-url .../cu121`)."""
from __future__ import annotations

import ast
import bisect
import itertools
import re
from collections import defaultdict
from dataclasses import replace
from functools import cache, lru_cache
from urllib.parse import unquote
from typing import TYPE_CHECKING, Iterator

from auditor.findings import FileResult, as_info
from auditor.project import ASCEND_SCRIPT, for_macos
from auditor.project.hits import Collector, cuda_build_off, decode_text, matchers, normalize_dist
from auditor.project.called_scripts import FUNCTIONS_KEY, SUMMARY_KEY as CALLED_SCRIPTS, script_call
from auditor.project.cmake_calls import SUMMARY_KEY as CMAKE_CALLS, cmake_call, outside_cd
from auditor.project.launched import SUMMARY_KEY as LAUNCHED, launched_call_options
from auditor.project.makefile import SUMMARY_KEY as MAKE_CALLS
from auditor.project.local_builds import absolute_folder, record_local_build
from auditor.project.local_extras import SUMMARY_KEY as LOCAL_EXTRAS, local_extra_call
from auditor.project.makefile import _join as make_join
from auditor.project.makefile import cd as make_cd
from auditor.project.makefile import keep_call, make_call
from auditor.project.spack import spec_parts
from auditor.project.requirements import (_ALL_BUILDS_PAGE_RE, _CPU_INDEX_RE, _CUDA_INDEX_RE, _OTHER_ACCELERATOR_RE,
                                         conda_spec_name, conda_archive_symbols, cpu_builds_only, extra_hits, requirement_hits,
                                         wheel_symbols)
from auditor.astnodes import walk_list

if TYPE_CHECKING:
    from auditor.rules import Rule
    from auditor.static.engine import StaticEngine

# Commands that run the next word as the command (their own options skipped).
# `which nvcc` asks for the tool as `command -v nvcc` does: a CI step that needs it fails without it
# mpirun (Open MPI / MPICH / Intel MPI) options followed by values: how many
_MPIRUN_VALUE_OPTIONS = {"-np": 1, "-n": 1, "--np": 1, "-N": 1, "-npernode": 1, "--npernode": 1, "-ppn": 1,
                         "-H": 1, "--host": 1, "-host": 1, "-hosts": 1, "--hostfile": 1, "-hostfile": 1,
                         "-machinefile": 1, "-f": 1, "-x": 1, "--map-by": 1, "--bind-to": 1, "--rank-by": 1,
                         "-mca": 2, "--mca": 2, "-genv": 2, "-env": 2, "--prefix": 1, "-wdir": 1, "--wdir": 1,
                         # MPICH hydra / Cray PALS (`mpiexec -n 8 -ppn 4 --depth 8 --cpu-bind depth ...`, tp37)
                         "--cpu-bind": 1, "-cpu-bind": 1, "--depth": 1, "-d": 1, "--ppn": 1}
# container CLIs whose `exec CONTAINER CMD` runs CMD inside a running container, and the exec options that take a value
_CONTAINER_CLIS = {"docker", "podman", "nvidia-docker"}
_EXEC_VALUE_OPTIONS = {"-e", "--env", "-u", "--user", "-w", "--workdir", "--env-file", "--detach-keys"}
_WRAPPERS = {"sudo", "exec", "time", "nohup", "env", "command", "nice", "srun", "mpirun", "xargs", "stdbuf", "which",
             # MPICH / Intel MPI / Cray PALS `mpiexec -n 8 -ppn 4 --cpu-bind ... python train.py` (ALCF's scripts; tp37)
             "mpiexec"}
# Commands that run the words after their own options and one leading operand as the command: `screen -dm bash -c
# "... CUDA_VISIBLE_DEVICES=3 nnUNetv2_train ..."` (nnUNet's batch jobs), `timeout 30 bash -c "..."`, `taskset -c 0-11
# pytest ...`: the options that take a value, and the form of the operand (a duration, a CPU mask or list; None: none).
# An operand held in an expansion (`timeout $T python ...`) is not one of the words, and the next word is the command
_PREFIX_COMMANDS: dict[str, tuple[frozenset[str], re.Pattern[str] | None]] = {
    "screen": (frozenset({"-S", "-c", "-t", "-T", "-e", "-h", "-p", "-Logfile"}), None),
    "timeout": (frozenset({"-s", "--signal", "-k", "--kill-after"}), re.compile(r"[\d.]+[smhd]?|.*\$.*")),
    "taskset": (frozenset(), re.compile(r"[\da-fA-Fx,-]+")),
}
# (`mim install mmcv-full==1.7.2`: OpenMMLab's installer takes pip's requirement specifiers and options; t15l)
_PIP = {"pip", "pip3", "uv", "conda", "mamba", "micromamba", "mim"}
# pip's versioned scripts (`pip3.7`, `pip2.7`: its console scripts pip, pip<major> and pip<major>.<minor>)
_VERSIONED_PIP_RE = re.compile(r"pip[23]\.\d+")
_OPTS_WITH_VALUE = {"-r", "--requirement", "-c", "--constraint", "-w", "--wheel-dir", "-t", "--target",
                    "--prefix", "--root", "--platform", "--python-version"}
_CONDA_OPTS_WITH_VALUE = {"-n", "--name", "-p", "--prefix", "--file", "--override-channels-file"}
_INDEX_OPTS = {"-i", "--index-url", "--extra-index-url", "-f", "--find-links"}
# srun options that take no value (the others do: `--jobid $ID`, `--ntasks 8`)
_SRUN_FLAGS = {"--pty", "--exclusive", "--overlap", "--label", "--unbuffered", "--kill-on-bad-exit", "--verbose",
               "--quiet", "--exact", "--no-kill", "--mpi=pmix"}
# srun's short options that take a value (`-p gpu`, `-n 8`, `-J name`; https://slurm.schedmd.com/srun.html)
_SRUN_SHORT_VALUES = {"-p", "-N", "-n", "-c", "-J", "-t", "-G", "-w", "-x", "-A", "-q", "-o", "-e", "-C", "-D", "-d"}
_EXPANSIONS = ("simple_expansion", "expansion", "command_substitution")
# environment runners whose `run` subcommand runs the rest of the line (uv's own `run --group` is read as uv)
_RUNNERS = {"conda", "mamba", "micromamba", "poetry", "pipenv", "pixi", "hatch", "pdm"}
_RUN_VALUE_OPTIONS = {"-n", "--name", "-p", "--prefix", "-e", "--environment", "--cwd"}
# the Python interpreter's switches that take no value (`python -s -m pip`, `python3 -u train.py`, `python -OO`;
# https://docs.python.org/3/using/cmdline.html): `-c`, `-m`, `-W arg` and `-X opt` are not among them
_PYTHON_FLAG_RE = re.compile(r"-[bBdEiIOPqsSuv]+")
_APT = {"apt", "apt-get", "yum", "dnf", "microdnf", "zypper", "apk"}
# each system package manager's install subcommand: Alpine's / Chainguard's apk installs with `add` (`apk add
# --no-cache nvidia-cudnn-8-cuda-${CUDA_MAJOR_VERSION}`, tp38), zypper takes `in` for `install`
_APT_INSTALL = {"install", "add", "in"}
_APT_MARKS = {"hold", "unhold", "manual", "auto"}      # apt-mark's verbs that take package names
# a mark installs nothing: the step fails because an Ascend image's apt sources lack the NVIDIA package (shell.py's
# apt-mark reading)
_APT_MARK_MESSAGE = ("`apt-mark {verb} {package}` marks an NVIDIA CUDA package that an Ascend image's apt sources "
                     "lack: apt-mark stops with `E: Unable to locate package {package}` and the step fails")
# words, strings and here-documents: where options (`--bf16`) and URLs are read, inside quotes too
_TEXT_NODES = ("word", "raw_string", "string_content", "heredoc_content", "ansi_c_string")
# `--name`, `--name=value`, `--name value` (the value: the next word unless it is another option)
_OPTION_RE = re.compile(r"(?<![\w-])--([A-Za-z][\w.-]*)(?:=([^\s\"'\\-][^\s\"'\\]*)|(?:[ \t]|\\\n)+([^\s\"'\\-][^\s\"'\\]*))?")
# `registry/name:tag` (a container image named in a script, a CI matrix, a Slurm option)
_IMAGE_RE = re.compile(r"(?<![\w/.:@-])([a-z0-9][\w.-]*(?:/[\w.${}-]+)+:[\w.${}-]+)")
# the CUDA toolkit's directory (`/usr/local/cuda-12.4/lib64`); the version part may be a variable
# CMake cache definitions on a command line or in a build-arguments string (`cmake -DGGML_CUDA=ON`,
# `CMAKE_ARGS="-DCMAKE_CUDA_ARCHITECTURES=86" pip install ...`): matched as `cmake:<name>` settings
# (`-D WITH_CUDA=ON` with a space: OpenCV's build lines in OpenPCDet's Dockerfile; CMake takes both, tp37)
_CMAKE_DEFINE_RE = re.compile(r"(?<![\w-])-D[ \t]{0,4}([A-Za-z_]\w*)(?::[A-Za-z]+)?=\"?(\$\{\{[^}]*\}\}|[^\s\"';)]*)")
# `cuda-` then `${V}`: one word; also a compiler's include / library flag (`-I/usr/local/cuda/include`, tp37)
_CUDA_PATH_RE = re.compile(r"(?:(?<![\w/.-])|(?<=-I)|(?<=-L))/usr/local/cuda(-[\w.${}]*)?(?![\w.])")
# a CUDA toolkit installed elsewhere, by its library / program folders (`/opt/software/cuda/10.1/lib64`,
# `/opt/cuda-11.8/bin`, `/sw/cuda/12.2/include` on a cluster's LD_LIBRARY_PATH): NPU027 (tp49a)
_CUDA_HOME_ELSEWHERE_RE = re.compile(r"(?<![\w/.$}-])((?:/[\w.+-]+)*?/cuda(?:-\d[\w.]*)?(?:/v?\d+(?:\.\d+)+)?)"
                                     r"/(?:lib64|lib|bin|include)(?![\w.-])")
# the NVIDIA driver's folders (GKE's /home/kubernetes/bin/nvidia on the host, mounted at /usr/local/nvidia; Colab's
# /usr/lib64-nvidia): NPU075 (t15h)
# (t27a: and the driver's own tools in /usr/bin, bind-mounted into containers: `-v /usr/bin/nvidia-xconfig:...`)
DRIVER_PATH_RE = re.compile(r"(?<![\w/.-])(/usr/local/nvidia|/home/kubernetes/bin/nvidia|/usr/lib64-nvidia"
                            # tp52c: Ubuntu's driver packages' library folders (`nvidia-384` installs
                            # /usr/lib/nvidia-384; mujoco-py's builder.py puts `/usr/lib/nvidia-[0-9][0-9][0-9]` or
                            # /usr/local/nvidia/lib64 on LD_LIBRARY_PATH for GPU rendering), and /usr/lib/nvidia
                            r"|/usr/lib/nvidia(?:-\d{3,})?"
                            r"|/usr/bin/nvidia-(?:xconfig|settings|smi|debugdump|persistenced|modprobe|cuda-mps-\w+)"
                            # the NVIDIA container toolkit's config and the device list its volume-mount mode reads
                            # (t34a: production-stack's kind cluster with GPUs)
                            r"|/etc/nvidia-container-runtime/[\w.-]*[\w-]|/var/run/nvidia-container-devices(?:/\w+)?"
                            # the driver's device nodes, mounted into containers (compose `devices: - /dev/nvidia0`,
                            # `docker run --device /dev/nvidiactl`) or probed (`[ -e /dev/nvidia0 ]`; tp43, NPU945)
                            r"|/dev/nvidia(?:\d+|ctl|-uvm(?:-tools)?|-modeset|-caps(?:/[\w-]+)?|\*)"
                            # WSL's NVIDIA driver folder (`[[ -f /usr/lib/wsl/lib/nvidia-smi ]]`: nvidia-smi and
                            # libcuda.so as the Windows driver maps them into WSL 2; NVIDIA's "CUDA on WSL" guide)
                            r"|/usr/lib/wsl/lib/(?:nvidia-smi|libcuda[\w.]*|libnvidia-[\w.-]*[\w]))"
                            r"(?![\w.-])")
# the libraries pip's NVIDIA wheels install (`.../site-packages/nvidia/cudnn/lib` on LD_LIBRARY_PATH: nvidia-cudnn-cu12,
# nvidia-nccl-cu12, ...) and TensorRT's shared libraries by file name (`ln -s .../libnvinfer.so .../libnvinfer.so.7`)
NVIDIA_LIB_PATH_RE = re.compile(r"site-packages/nvidia/(\w+)(?![\w.-])(?:/lib\b)?"
                                r"|(?<![\w-])lib(nvinfer(?:_plugin)?|nvonnxparser|nvparsers|"
                                # the CUDA toolkit's runtime and libraries (t20b: `ln -s .../libcudart.so`)
                                r"cudart|cuda|cublas(?:Lt)?|cudnn|nvrtc|cufft|curand|cusparse|cusolver|nccl|nvToolsExt|"
                                # the driver's video decoder / encoder (tp46a: `ln -sf libnvcuvid.so.1 libnvcuvid.so`)
                                r"nvidia-ml|nvidia-opencl|nvcuvid|nvidia-encode|"
                                # tp60a: the driver's OptiX library (`cp /usr/lib/x86_64-linux-gnu/libnvoptix.so.1 .`)
                                r"nvoptix)\.so(?:\.[\d.]*\d)?(?![\w-])"
                                # tp60a (project test170, Deep_Object_Pose's get_nvidia_libs.sh: `cp
                                # /usr/lib/x86_64-linux-gnu/*nvidia* .`): a glob over the system library folder that
                                # names NVIDIA, the host driver's libraries (libnvidia-*.so, libGLX_nvidia.so)
                                r"|(?<![\w.-])/(?:usr/)?lib(?:64)?/(?:[\w-]+-linux-gnu/)?"
                                r"([\w.-]*\*[\w.*-]*nvidia[\w.*-]*|[\w.-]*nvidia[\w.-]*\*[\w.*-]*)(?![\w.*-])")
# a repository's signing key (`.../x86_64/3bf863cc.pub`, `cuda-archive-keyring.gpg`): fetching it installs nothing
_SIGNING_KEY_RE = re.compile(r"\.(?:pub|gpg|asc)$", re.I)
# a repository's definition (`dnf config-manager --add-repo .../cuda-rhel9.repo`): adding it installs nothing either
# (policy (c); tq51c, heldout65's fms-hf-tuning Dockerfile row)
_REPO_FILE_RE = re.compile(r"\.repo$", re.I)
_ADD_REPO_RE = re.compile(r"(?:--add-repo(?:\s+|=)|\baddrepo\s+(?:-\S+\s+)*)$")
_URL_RE = re.compile(r"(?:git\+)?https?://([^\s\"'<>|;&)]+)")
# a path under the toolkit's directory held in its variable (`$CUDA_HOME/bin`, `${CUDA_PATH}/lib64`): the same
# location as `/usr/local/cuda/bin` (the assignment of the variable is NPU004; this is where it is used)
# the CUDA toolkit's Windows install location (`C:\Program Files\NVIDIA GPU Computing Toolkit\CUDA\v12.4`, with
# single or doubled backslashes, or slashes): NVIDIA's installer puts every version there and sets CUDA_PATH to it
WIN_CUDA_PATH_RE = re.compile(r"NVIDIA GPU Computing Toolkit(?:\\+|/)CUDA(?:(?:\\+|/)(v\d+(?:\.\d+)*))?", re.I)
# tp51c: NVIDIA's cuDNN archives by their file names (the redistributable `cudnn-<os>-<arch>-<version>_cuda<N>-
# archive.tar.xz` / `.zip` of https://developer.download.nvidia.com/compute/cudnn/redist/cudnn/, the older
# `cudnn-<cuda>-<os>-x64-v<version>.tgz`), pulled, unpacked or removed by name (kaldifeat's Windows CUDA job: `git lfs
# pull --include="cudnn-windows-x86_64-8.4.1.50_cuda11.6-archive.zip"`, `unzip ...`), and the CUDA installer the
# Jimver/cuda-toolkit action leaves in the runner's tool cache (`cuda_installer-windows/<v>/x64/cuda_installer_<v>.exe`,
# https://github.com/Jimver/cuda-toolkit/blob/master/src/installer.ts)
_NVIDIA_ARCHIVE_RE = re.compile(r"(?<![\w.-])(?:cudnn-(?:linux|windows)-\w+-[\w.${}]+_cuda[\w.${}]+-archive\.(?:tar\.xz|zip)"
                                r"|cudnn-[\d.]+-(?:linux|windows\d*|osx)-\w+-v[\d.]+\.(?:tgz|zip)"
                                r"|cuda_installer[-_][\w.${}-]*\w"
                                # TensorRT's tar / zip packages, named `TensorRT-<version>.<os>.<arch>-gnu.cuda-<x.y>
                                # [.cudnn<x.y>].tar.gz` (`.Linux.`, `.Ubuntu-18.04.`, `.l4t.`, `.Windows10.x86_64.cuda-
                                # 12.0.zip`; TensorRT installation guide, "Tar File Installation"; tp51d)
                                r"|[Tt]ensor[Rr][Tt]-[\d${][\w.${}-]*?\.cuda-[\w.${}-]*?\.(?:tar\.gz|tgz|zip))")
_TORCH_CUDA_LABEL_RE = re.compile(r"([\"']?)\+(cu(?:1\d\d|\$\{?\w+\}?))\1")
_CUDA_VAR_PATH_RE = re.compile(r"\$\{?(CUDA_HOME|CUDA_PATH|CUDA_ROOT|CUDA_TOOLKIT_ROOT_DIR|CUDA_INSTALL_DIR)\}?/")
# ... or a Dockerfile COPY / ADD's destination (`COPY cuda.repo-x86_64 /etc/yum.repos.d/cuda.repo`, t22f)
_WRITTEN_TO_RE = re.compile(r"(?:\btee(?:\s+-a)?|>>?)\s*$|^\s*(?:COPY|ADD)\s.*\s$")
# system files only a CUDA image or NCCL reads (t16d): NVIDIA's apt source lists that the CUDA images write
# (`rm /etc/apt/sources.list.d/cuda.list`, `nvidia-ml.list`) and NCCL's configuration file (`COPY nccl.conf
# /etc/nccl.conf`, `~/.nccl.conf`)
# environment variables that hold a command line another step runs (cibuildwheel's `CIBW_BEFORE_BUILD`, a
# `TORCH_COMMAND` / `*_CMD` a launcher or a later RUN line expands; configs.py, dockerfile.py)
COMMAND_VARIABLE_RE = re.compile(r"CIBW_BEFORE_(?:ALL|BUILD|TEST)(?:_\w+)?|\w*_(?:COMMAND|CMD)(?:_\w+)?")
# TensorRT's install folder in NVIDIA's TensorRT, Triton and DeepStream images and its Debian packages (`trtexec` in
# /usr/src/tensorrt/bin, its samples and data; TensorRT installation guide, "Debian installation": `export
# PATH=$PATH:/usr/src/tensorrt/bin`; NVIDIA-AI-IOT's DeepStream apps, tp43)
_TENSORRT_DIR_RE = re.compile(r"(?<![\w/.-])/usr/src/tensorrt(?:/[\w.-]+)*")
_SYSTEM_CONFIG_PATH_RE = re.compile(r"(?<![\w/.-])(/etc/(?:apt/sources\.list\.d|yum\.repos\.d)/(?:cuda|nvidia)[\w.*-]*|"
                                    r"/etc/nccl\.conf|"
                                    # the NVIDIA driver's OpenCL / Vulkan / EGL vendor registrations (`echo
                                    # "libnvidia-opencl.so.1" > /etc/OpenCL/vendors/nvidia.icd`, tp37)
                                    r"/etc/OpenCL/vendors/nvidia[\w.-]*|(?:/etc|/usr/share)/vulkan/icd\.d/nvidia[\w.-]*|"
                                    r"/usr/share/glvnd/egl_vendor\.d/\w*nvidia[\w.-]*|"
                                    # the driver's Vulkan ICD manifest by its file name, copied into an image (tp43)
                                    r"(?:[\w.$-]*/)*nvidia_icd\.json|"
                                    r"(?:~|\$HOME|\$\{HOME\})/\.nccl\.conf|"
                                    # NVIDIA Jetson Linux's release file (`cat /etc/nv_tegra_release`: NPU965, tp44b)
                                    r"/etc/nv_tegra_release)(?![\w.-])", re.I)


def url_symbol(url: str) -> str:
    """`git+https://github.com/NVIDIA/apex.git@25.04` -> url:github.com/nvidia/apex; other hosts keep their path."""
    body = url.split("://", 1)[-1].split("#", 1)[0].lower().rstrip("/")
    host, _, path = body.partition("/")
    if host in ("github.com", "gitlab.com", "gitee.com"):
        parts = path.split("/")[:2]
        path = "/".join(p.split("@", 1)[0].removesuffix(".git") for p in parts)
    return f"url:{host}/{path}"


_SUBDIRECTORY_RE = re.compile(r"[#&]subdirectory=([\w./-]+)")


def url_part_symbol(url: str) -> str | None:
    """`git+https://github.com/Dao-AILab/flash-attention@v2.6.3#subdirectory=csrc/fused_dense_lib` ->
    url:github.com/dao-ailab/flash-attention#csrc/fused_dense_lib: the one package of a repository a
    `#subdirectory=` install builds (t15q), tried before the repository's own symbol; None without one."""
    sub = _SUBDIRECTORY_RE.search(url)
    return f"{url_symbol(url)}#{sub.group(1).strip('/').lower()}" if sub else None


# a file of a GitHub release (`github.com/<owner>/<repo>/releases/download/<tag>/<asset>`)
_RELEASE_ASSET_RE = re.compile(r"(?:^|//)github\.com/([\w.-]+/[\w.-]+/releases/download/[^\s?#]+)", re.I)
# a file attached to a GitHub issue or pull request (`github.com/<owner>/<repo>/files/<id>/<name>`: a patch, a log a
# user posted), not the repository's code: downloading it builds nothing (tp58a)
_ATTACHMENT_RE = re.compile(r"(?:^|//)github\.com/[\w.-]+/[\w.-]+/files/\d+/", re.I)
# a model checkpoint by its file type: a download of weights from a project's releases builds nothing
_CHECKPOINT_URL_RE = re.compile(r"\.(?:pth|pt|ckpt|safetensors)$", re.I)


def match_url(m, url: str) -> tuple[str, Rule | None]:
    """(symbol, rule) of a URL: its `#subdirectory=` package's when a rule names that, else the repository's; none
    for a checkpoint (`.../GroundingDINO/releases/download/v0.1.0-alpha/groundingdino_swint_ogc.pth`, tp44b)."""
    part = url_part_symbol(url)
    if part is not None and (rule := m.match_requirement(part)) is not None:
        return part, rule
    asset = _RELEASE_ASSET_RE.search(url)
    if asset is not None and (rule := m.match_requirement(f"url:github.com/{asset.group(1).lower()}")) is not None:
        # a release asset built for CUDA (`.../openucx/ucx/releases/download/v1.19.1/ucx-1.19.1-...-cuda13-x86_64
        # .tar.bz2`): the rule names the asset's own path, not only its repository (tp46b)
        return f"url:github.com/{asset.group(1).lower()}", rule
    symbol = url_symbol(url)
    if _CHECKPOINT_URL_RE.search(url.split("?", 1)[0].split("#", 1)[0]) or _ATTACHMENT_RE.search(url):
        return symbol, None
    return symbol, m.match_requirement(symbol)


def setting_path(option: str) -> str:
    """`--attention-backend` / `--ds.param_dtype` -> attention_backend / ds.param_dtype"""
    return option.lstrip("-").replace("-", "_")


def cli_setting(m, path: str, value: str):
    """A setting only a command line makes (`--device 0`: the script's own option with a bare index), from the
    catalogue's `cli:` keys; a rule without such keys is not asked again (its `!` exclusions name plain keys)."""
    rule = m.match_setting("cli:" + path, value)
    return rule if rule is not None and any(str(p).startswith("cli:") for p in rule.match.get("setting", ())) \
        else None


def option_setting(m, path: str, value: str):
    """The rule of a command-line option: a `cli:` key first, the reading only a command line has (`--tf32 True` is
    HF TrainingArguments' option, which raises without CUDA, where a config's `tf32: true` only switches TF32), then
    the plain setting."""
    return cli_setting(m, path, value) or m.match_setting(path, value)


# Kaldi's (and ESPnet's) queue scripts and the `*_cmd` variables recipes hold them in (`cuda_cmd="queue.pl --gpu 1"`,
# then `${cuda_cmd} --gpu ${ngpu} exp/train.log train.py`): their `--gpu N` asks the grid engine / Slurm for N GPUs
# (kaldi-asr.org/doc/queue.html; t34a, project test61: Conv-TasNet); also their variants named `queue-<what>.pl`
# (ESPnet's utils/queue-freegpu.pl: queue.pl that picks a free GPU; tp45, project test122)
_KALDI_QUEUE_RE = re.compile(r"\$\{?\w*_cmd\}?|(?:run|queue|slurm)(?:-\w+)?\.pl")
_KALDI_QUEUE_IN_TEXT_RE = re.compile(r"(?:^|[\s\"'/])(?:run|queue|slurm)(?:-\w+)?\.pl\s")
# Grid Engine's resource request `-l gpu=1` (qsub(1): `-l resource=value,...`), which Kaldi's queue scripts pass on
# (queue.pl's default config: `option gpu=* -l gpu=$0 -q g.q`; recipes' `cuda_cmd="queue.pl -l gpu=1"`), also in a
# `qsub` line; a GPU resource by its name (`gpu`, `gpus`, `ngpus`, a site's `gpu_1` node type), its count the value
_GRID_ENGINE_GPU_RE = re.compile(r"(?<!\S)-l\s*['\"]?(?:[\w.]+=[^,\s'\"]*,)*((?:n|num_?)?gpus?(?:_\d+)?)=(\d+)")
# LAMMPS' GPU counts on its command line (LAMMPS manual, "Command-line options": `-kokkos on g Ngpu` / `-k on gpus N`,
# the KOKKOS package on GPUs; `-package gpu Ngpu` / `-pk gpu N`, the GPU package) after the `lmp` / `lmp_<machine>`
# executable; `-k on t 4` (threads) asks for none (tp51d)
_LAMMPS_RE = re.compile(r"(?:^|[\s\"'/=])(?:lmp(?:_\w+)?|lammps)(?=\s)")
_LAMMPS_GPU_RE = re.compile(r"(?<!\S)(?:-(?:k|kokkos)\s+on(?:\s+(?:d|device|t|threads|n|numa)\s+\S+)*\s+(?:g|gpus)"
                            r"|-(?:pk|package)\s+gpu)\s+(\d+)(?!\S)")
_GRID_ENGINE_SUBMIT_RE = re.compile(r"(?:^|[\s\"'/])(?:(?:run|queue|slurm)(?:-\w+)?\.pl|qsub)\s")


def scan_fragment(col: Collector, text: str, line: int, column: int, options: bool = True, gres: bool = True,
                  labels: bool = True) -> None:
    """Command-line options and download URLs in a piece of text that starts at (line, column); slurm.conf's
    generic-resource keys unless `gres` is off (the text is a pattern a command searches for, not a line written);
    torch's `+cu118` label unless `labels` is off (the text is compared with, not installed: `grep -q "+cu118"`)."""
    m = matchers(col.engine)

    def where(offset: int) -> tuple[int, int]:
        before = text[:offset]
        newlines = before.count("\n")
        return (line, column + offset) if not newlines else (line + newlines, offset - before.rfind("\n"))

    if options and "--" in text:
        for opt in _OPTION_RE.finditer(text):
            value = opt.group(2) or opt.group(3) or "true"
            path = setting_path(opt.group(1))
            rule = option_setting(m, path, value)
            if rule is not None and rule.code == "NPU028" and _SCRIPT_RUN_RE.search(text[:opt.start()]) \
                    and not _SCHEDULER_WORD_RE.search(text[:opt.start()]):
                rule = None        # `CMD="python extract.py --use_gpu"`: the script's own switch (t11y)
            symbol = f"--{opt.group(1)} {value}".strip()
            if rule is None and opt.group(1) == "gpu" and _KALDI_QUEUE_IN_TEXT_RE.search(text[:opt.start()]):
                rule = m.match_setting("gpus", value)    # `cuda_cmd="run.pl --mem 2G --gpu 1"`: a Kaldi queue's GPUs
            if rule is None and "accelerate launch" in text[:opt.start()]:
                # `LAUNCHER="accelerate launch --multi_gpu ..."`: the launcher's own options, as on its command line
                symbol = f"accelerate --{opt.group(1)}"
                rule = m.match_command(symbol)
            if rule is not None:
                ln, c = where(opt.start())
                col.add(rule, symbol, ln, c, c + len(opt.group(0).split()[0]), value=value)
    if "-l" in text and "gpu" in text:
        grid_engine_gpus(col, m, text, where)
    if "lmp" in text or "lammps" in text:
        lammps_gpus(col, m, text, where)
    if "-D" in text:
        cmake_defines(col, text, where)
    if gres and "Gres" in text:
        for found in _SLURM_CONF_GRES_RE.finditer(text):
            # slurm.conf's `GresTypes=gpu` / a node's `Gres=gpu:8`, written by the script (a here-document, an echo
            # into the file): read apart from a job's `--gres` (tp49b); not a line written as a comment (`echo "#
            # Gres=gpu:4 is for the GPU partition" >> slurm.conf`: review49 item 6)
            before = text[:found.start()].rpartition("\n")[2]
            if before.strip(" \t\"'").startswith("#") or before.rstrip().endswith("#") \
                    or any(a.start() < found.start() < a.end() for a in _SED_ADDRESS_RE.finditer(text)):
                continue    # (also a line a sed substitution comments out, and a sed address: `/Gres=gpu:/d`)
            rule = m.match_setting(f"slurm_conf_{found.group(1).lower()}", found.group(2))
            if rule is not None:
                ln, c = where(found.start())
                col.add(rule, found.group(0), ln, c, c + len(found.group(0)), value=found.group(2))
    if "/" in text and ":" in text:
        for image in _IMAGE_RE.finditer(text):
            if "://" in text[max(0, image.start() - 3):image.start()]:
                continue                 # a URL's host and path, not an image
            if _BUILD_TAG_BEFORE_RE.search(text[max(0, image.start() - 400):image.start()]):
                # `docker build --tag alphacep/kaldi-vosk-server-gpu:latest .`: the name the build gives its output,
                # as build-push-action's `tags:` (t36b); the Dockerfile's FROM is the image pulled (tp42, test100)
                continue
            rule = m.match_image(image.group(1))
            if rule is not None:
                ln, c = where(image.start())
                col.add(rule, image.group(1), ln, c, c + len(image.group(1)))
    if "/usr/local/cuda" in text:
        for cuda_path in _CUDA_PATH_RE.finditer(text):
            ln, c = where(cuda_path.start())
            if not any(f.line == ln for f in col.result.findings):   # a CUDA variable on the line says it already
                tail = cuda_path.group(1)
                version = tail if tail and tail[1:2].isdigit() else ""
                symbol = "path:/usr/local/cuda" + version
                col.add(m.match_requirement(symbol), symbol, ln, c, c + len(cuda_path.group(0)))
    if "/cuda" in text:
        for cuda_home in _CUDA_HOME_ELSEWHERE_RE.finditer(text):
            ln, c = where(cuda_home.start())
            if not cuda_home.group(1).startswith("/usr/local/cuda") and \
                    not any(f.line == ln for f in col.result.findings):
                symbol = "path:" + cuda_home.group(1).lower()
                col.add(m.match_requirement(symbol), symbol, ln, c, c + len(cuda_home.group(0)))
    if "nvidia" in text:
        for driver_path in DRIVER_PATH_RE.finditer(text):
            ln, c = where(driver_path.start())
            if not any(f.line == ln for f in col.result.findings):   # a CUDA finding on the line says it already
                symbol = "path:" + driver_path.group(1)
                col.add(m.match_requirement(symbol), symbol, ln, c, c + len(driver_path.group(0)))
    if "/usr/src/tensorrt" in text:
        for trt_dir in _TENSORRT_DIR_RE.finditer(text):
            ln, c = where(trt_dir.start())
            if not any(f.line == ln and f.category == "third_party" for f in col.result.findings):
                col.add(m.match_requirement("path:/usr/src/tensorrt"), "path:/usr/src/tensorrt", ln, c,
                        c + len(trt_dir.group(0)))
    if "ofi-nccl" in text:
        for plugin in _OFI_NCCL_PATH_RE.finditer(text):
            ln, c = where(plugin.start())
            symbol = "path:" + plugin.group(0).lower()
            col.add(m.match_requirement(symbol), symbol, ln, c, c + len(plugin.group(0)))
    if "site-packages/nvidia/" in text or "libnv" in text or "libcu" in text or "libnccl" in text \
            or "nvidia" in text and "*" in text:
        for lib_path in NVIDIA_LIB_PATH_RE.finditer(text):
            ln, c = where(lib_path.start())
            symbol = "path:" + (f"site-packages/nvidia/{lib_path.group(1)}" if lib_path.group(1)
                                else f"lib{lib_path.group(2)}.so" if lib_path.group(2) else lib_path.group(3))
            # a CUDA finding on the line says it already; `ln -s libnvinfer.so libnvinfer.so.7`: one finding
            if not any(f.line == ln and (f.category == "device" or f.symbol == symbol) for f in col.result.findings):
                col.add(m.match_requirement(symbol.lower()), symbol, ln, c, c + len(lib_path.group(0)))
    if "GPU Computing Toolkit" in text:
        win_cuda_paths(col, text, where)
    if "/etc/" in text or ".nccl.conf" in text or "/usr/share/" in text or "nvidia_icd" in text:   # `/usr/share/glvnd/egl_vendor.d/`, tp39
        system_config_paths(col, m, text, where)
    if "$" in text and "CUDA_" in text:
        for var_path in _CUDA_VAR_PATH_RE.finditer(text):
            ln, c = where(var_path.start())
            if not any(f.line == ln for f in col.result.findings):   # a CUDA finding on the line says it already
                symbol = "path:$" + var_path.group(1)
                col.add(m.match_requirement(symbol), symbol, ln, c, c + len(var_path.group(0)) - 1)
    if "://" in text:
        for u in _URL_RE.finditer(text):
            if _CUDA_INDEX_RE.search(u.group(0)) and not _ARCHIVE_URL_RE.search(u.group(0)):
                continue                 # an index URL: the pip and requirements readers report it
                # (an archive under a CUDA folder is a download: LibTorch's `.../libtorch/cu128/libtorch-...zip`)
            symbol, rule = match_url(m, u.group(0))
            if rule is not None:
                ln, c = where(u.start())
                if any(f.line == ln and f.code == rule.code for f in col.result.findings):
                    continue     # `--find-links .../LMCache/releases/...-cu129`: the index finding says it already
                if _SIGNING_KEY_RE.search(u.group(0)):
                    # `apt-key adv --fetch-keys .../cuda/repos/.../3bf863cc.pub`: adding NVIDIA's key installs nothing
                    # (what installs from the repository is the finding), but the line only serves a CUDA image: info
                    # (tuned_t15s, tuned_t15u and tuned_t22c label it device)
                    col.add(rule, symbol, ln, c, c + len(u.group(0)), severity="info", note=" (the repository's signing key)")
                elif _REPO_FILE_RE.search(u.group(0)) or _ADD_REPO_RE.search(text[:u.start()]):
                    col.add(rule, symbol, ln, c, c + len(u.group(0)), severity="info",
                            note=" (the repository's definition: adding it installs nothing; the installs from it are "
                                 "the findings)")
                else:
                    col.add(rule, symbol, ln, c, c + len(u.group(0)))
    if labels:
        torch_cuda_label(col, text, line, column)
    if "cudnn-" in text or "cuda_installer" in text or ".cuda-" in text:
        for archive in _NVIDIA_ARCHIVE_RE.finditer(text):
            ln, c = where(archive.start())
            if not any(f.line == ln for f in col.result.findings):   # the download's URL finding says it already
                symbol = "path:" + archive.group(0).lower()
                col.add(m.match_requirement(symbol), symbol, ln, c, c + len(archive.group(0)))


def nvidia_archive(symbol: str) -> bool:
    """Is `symbol` (`path:<file>`) one of NVIDIA's archives read by file name (cuDNN, the CUDA installer, TensorRT)?"""
    return symbol.startswith("path:") and _NVIDIA_ARCHIVE_RE.fullmatch(symbol[5:]) is not None


def torch_cuda_label(col: Collector, text: str, line: int, column: int) -> None:
    """`v="+cu${v}"` then `pip install torch==${TORCH}${v}` (kaldifeat's CUDA jobs): a whole word or string that is
    the local version label of torch's CUDA wheels, read as NPU963 reads such a Python string (tp51c)."""
    label = _TORCH_CUDA_LABEL_RE.fullmatch(text) if text[:3] in ('"+c', "'+c", "+cu") else None
    if label is not None:
        symbol = "+" + label.group(2)
        col.add(matchers(col.engine).match_requirement(symbol.lower()), symbol, line, column, column + len(text))


def lammps_gpus(col: Collector, m, text: str, where) -> None:
    """`~/lammps/cudabuild/lmp -sf kk -pk kokkos newton on neigh half -k on g 1 -in in.bench`: the GPUs a LAMMPS run
    asks for, read as a `gpus` request (NPU028; tp51d, flare's Kokkos benchmark)."""
    for request in _LAMMPS_GPU_RE.finditer(text):
        before = text[:request.start()]
        if _LAMMPS_RE.search(before) and not before.rpartition("\n")[2].lstrip(" \t\"'").startswith("#"):
            rule = m.match_setting("gpus", request.group(1))
            if rule is not None:
                ln, c = where(request.start())
                col.add(rule, request.group(0), ln, c, c + len(request.group(0)), value=request.group(1),
                        note=" (LAMMPS' own option: the run's GPU count)")


def _command_lammps_gpus(col: Collector, m, pos, words: list[str], nodes: list) -> None:
    """lammps_gpus over a command's words (`mpirun -np 4 ~/lammps/cudabuild/lmp -k on g 1 ...`), reported at the
    option's word."""
    starts = list(itertools.accumulate((len(w) + 1 for w in words[:-1]), initial=0))

    def where(offset: int) -> tuple[int, int]:
        return pos.at(nodes[bisect.bisect_right(starts, offset) - 1].start_point)

    lammps_gpus(col, m, " ".join(words), where)


def grid_engine_gpus(col: Collector, m, text: str, where, directive: bool = False) -> None:
    """`-l gpu=1` after a Kaldi queue script or `qsub` in `text` (or anywhere in a `#$` directive's options):
    the GPUs the job asks Grid Engine for, read as a `gpus` request (NPU028; tp50a, zamia-speech's kaldi-cmd.sh)."""
    for request in _GRID_ENGINE_GPU_RE.finditer(text):
        if directive or _GRID_ENGINE_SUBMIT_RE.search(text[:request.start()]):
            rule = m.match_setting("gpus", request.group(2))
            if rule is not None:
                ln, c = where(request.start())
                col.add(rule, request.group(0).strip(), ln, c, c + len(request.group(0)), value=request.group(2))


# aws-ofi-nccl's install folder (`/opt/amazon/ofi-nccl/lib64`, `/opt/aws-ofi-nccl/lib`): NCCL's libfabric plugin (NPU911)
_OFI_NCCL_PATH_RE = re.compile(r"(?<![\w./$-])(?:/[\w.-]+)*/(?:aws-)?ofi-nccl(?:/[\w.-]+)*")
# a downloaded archive (not a package index page): `.zip`, `.tar.gz`, `.tgz`, `.tar.xz`, `.tar.bz2`
_ARCHIVE_URL_RE = re.compile(r"\.(?:zip|tar\.gz|tgz|tar\.xz|tar\.bz2)$", re.I)


def _build_output_tag(node) -> bool:
    """The value of a container build's `-t` / `--tag` (`docker build --tag alphacep/kaldi-vosk-server-gpu:latest .`,
    `podman build -t`, `docker buildx build --tag=...`): the name the build gives its output image, as
    build-push-action's `tags:` (t36b); the Dockerfile's FROM is the image pulled (tp42, project test100). A quoted
    value is read from the word holding it (`-t "name:tag"`, `-t="name:tag"`: tq47a, RapidDoc's `docker/push.sh`)."""
    while node.parent is not None and node.parent.type in ("string", "concatenation"):
        node = node.parent
    command = node.parent
    if command is None or command.type != "command":
        return False
    # (an unquoted `-t ${IMAGE}` is an expansion node, tp44a)
    words = [c for c in command.children if c.type in ("command_name", "word", "string", "raw_string", "concatenation",
                                                       "simple_expansion", "expansion")]
    texts = [c.text.decode("utf-8", errors="replace") for c in words]
    if not texts or texts[0].rsplit("/", 1)[-1] not in ("docker", "podman", "buildah") or \
            not any(t in ("build", "bud") for t in texts[1:3]):
        return False
    at = next((i for i, c in enumerate(words) if c.id == node.id), None)
    if at is None:
        return False
    return texts[at].startswith(("--tag=", "-t=")) or at > 0 and texts[at - 1] in ("-t", "--tag")


# the option that names a container build's output image, right before a reference (`docker build -t name:tag`,
# `docker buildx build --tag=...`, `podman build -t`); a `docker run -t` is a terminal, not a tag
_BUILD_TAG_BEFORE_RE = re.compile(r"\b(?:docker|podman|buildah)\s+(?:buildx\s+)?(?:build|bud)\b[^\n;&|]*?\s(?:-t|--tag)"
                                  r"(?:\s+|=)[\"']?$")


_APT_LIST_PREFIXES = ("path:/etc/apt/sources.list.d/", "path:/etc/yum.repos.d/")
# the command a path is an operand of: the text since the last command separator, when it is an `rm` (`sudo rm`)
_RM_SEGMENT_RE = re.compile(r"(?:^|[;&|(\n]|\bthen\b|\bdo\b|\belse\b)\s*(?:RUN\s+)?(?:sudo\s+)?rm\s+([^;&|()\n]*)$")


def _forced_removal(lines: list[str], line: int, column: int) -> bool:
    """Is the path at (line, column) an operand of `rm -f` (`-rf`, `-fr`, `--force`)? POSIX `rm -f`: "Do not ...
    modify the exit status in the case of ... operands that do not exist", so on an image without NVIDIA's apt
    lists (a CANN image) the line succeeds and removes nothing; a plain `rm` of a missing file exits non-zero and
    stops the build (lead decision 65: `rm` is `device`, `rm -f` is `none`). The lines a `\\` continues are read
    with it."""
    before = lines[line - 1][:column - 1] if 0 < line <= len(lines) else ""
    while line > 1 and lines[line - 2].rstrip().endswith("\\"):
        line -= 1
        before = lines[line - 1].rstrip()[:-1] + " " + before
    found = _RM_SEGMENT_RE.search(before)
    if found is None:
        return False
    options = []
    for word in found.group(1).split():
        if word == "--":
            break
        if word.startswith("-"):
            options.append(word)
    return any(o == "--force" or not o.startswith("--") and "f" in o[1:] for o in options)


def system_config_paths(col: Collector, m, text: str, where) -> None:
    """NVIDIA's apt source lists and NCCL's configuration file named in text (a command's word, a Dockerfile COPY)."""
    for found in _SYSTEM_CONFIG_PATH_RE.finditer(text):
        ln, c = where(found.start())
        if any(f.line == ln for f in col.result.findings):
            continue          # a finding on the line says it already (the devtools repository's URL: NPU071)
        symbol = "path:" + re.sub(r"^(?:~|\$\{?home\}?)/", "~/", found.group(1).lower())
        rule = m.match_requirement(symbol)
        if rule is not None and symbol.startswith(_APT_LIST_PREFIXES) and _forced_removal(col.lines, ln, c):
            continue      # `rm -f /etc/apt/sources.list.d/cuda.list`: removes nothing where it is absent (decision 65)
        if rule is not None and rule.severity == "error" and _WRITTEN_TO_RE.search(col.lines[ln - 1][:c - 1]):
            # `... | sudo tee /etc/apt/sources.list.d/nvidia-container-toolkit.list`: the list is written, which works
            # anywhere; the install from its repository is the error
            col.add(rule, symbol, ln, c, c + len(found.group(1)), severity="info", note=" (written here)")
        else:
            col.add(rule, symbol, ln, c, c + len(found.group(1)))


@lru_cache(maxsize=1)
def _parser():
    import tree_sitter
    import tree_sitter_bash

    return tree_sitter.Parser(tree_sitter.Language(tree_sitter_bash.language()))


def _walk(node) -> Iterator:
    stack = [node]
    while stack:
        n = stack.pop()
        yield n
        stack.extend(reversed(n.children))


def _word(node) -> str:
    """A word's value with shell quoting removed (`"flash-attn>=2"` -> flash-attn>=2)."""
    if node.type == "concatenation":          # `--mixed_precision="bf16"`: quoting removed from each part
        return "".join(_word(part) for part in node.children)
    if node.type == "command_name" and len(node.children) == 1 and node.children[0].type != "word":
        # `"$HOME/conda/bin/pip" install ...`, `"${CONDA_DIR}/bin/conda" install ...`: a quoted program path (t15g)
        return _word(node.children[0])
    text = node.text.decode("utf-8", errors="replace")
    if node.type in ("string", "raw_string") and len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'":
        return text[1:-1]
    return text


class _Positions:
    def __init__(self, raw: bytes) -> None:
        self.lines = raw.split(b"\n")

    def at(self, point) -> tuple[int, int]:
        """tree-sitter points count bytes; findings count characters (1-based)."""
        row, byte_col = point
        line = self.lines[row] if row < len(self.lines) else b""
        return row + 1, len(line[:byte_col].decode("utf-8", errors="replace")) + 1


class _SourceTree:
    """Which CUDA project's source tree the script is in, so that `pip install .`, `pip wheel .` and
    `python setup.py install` there report what they build: set by `git clone URL [DIR]` of a project the
    requirement patterns name, and by `cd` / `pushd` (Dockerfile `WORKDIR`) into a directory named after one."""

    def __init__(self) -> None:
        self.cloned: dict[str, tuple[str, Rule] | None] = {}
        self.here: tuple[str, Rule] | None = None
        self.cwd: str | None = ""      # the folder `cd` moved to, relative to the start (None: not known)
        self.origin: dict[str, str] = {}   # a cloned folder -> the repository's name (`detectron2_repo` -> detectron2)
        self.here_origin: str | None = None
        # after `cd ${PROJ_ROOT}/bundlesdf/mycuda` (cwd unknown): `bundlesdf/mycuda`, a folder the tree pass looks up
        # from the tree's root and the script's folder (t15u)
        self.tail: str | None = None
        # the folders below the `here` tree's root that relative `cd`s moved into (`cd csrc/rotary` in a
        # flash-attention clone: ["csrc", "rotary"]), so that `pip install .` there names that folder's package (t16f)
        self.sub: list[str] = []
        # the absolute folder after a `cd /abs` (a Dockerfile's `WORKDIR`), followed through relative `cd`s; None
        # while not known: where a Dockerfile's copied build context is built (tp46a)
        self.abs_cwd: str | None = None
        # tp52c: the folders `pip wheel NAME ...` wrote wheels into (`-w DIR`, else the current folder), absolute ->
        # the requirements built there, for a later `pip install DIR/*.whl`
        self.wheel_dirs: dict[str, list[str]] = {}
        # after `cd ..` above the start: the folder relative to the start (`../Nanoflow/pipeline`), for the cmake
        # reader, which reads only a way back into the tree (cmake_calls.outside_cd; tp52b)
        self.outside: str | None = None
        # the last `cd` target as written (`$NVDSINFER_PATH`): a folder held in a variable, read where a build runs;
        # with the byte span it holds for (a subshell, a Dockerfile RUN chain; None: the rest of the script) and the
        # targets `popd` / `cd -` go back to
        self.cd_target: tuple[str, tuple[int, int] | None] | None = None
        self.cd_back: list[tuple[str, tuple[int, int] | None] | None] = []
        self.per_statement = False     # a Dockerfile's RUN lines: each a shell of its own

    def clone(self, col: Collector, m, pos: _Positions, words: list[str], nodes: list) -> None:
        positional, skip = [], False
        for w, node in zip(words, nodes):
            if skip:
                skip = False
            elif w in _GIT_CLONE_OPTS_WITH_VALUE:
                skip = True
            elif not w.startswith("-"):
                positional.append((w, node))
        if not positional or "://" not in positional[0][0] and not positional[0][0].startswith("git@"):
            return
        url = positional[0][0].replace("git@github.com:", "https://github.com/")
        symbol = url_symbol(url)
        found = (symbol, rule) if (rule := m.match_requirement(symbol)) is not None else None
        if found is None:
            # a fork or a project's own repository (github.com/ROCm/apex, github.com/vllm-project/vllm): a clone
            # alone changes nothing; its build below is reported (unless it targets another device)
            found = m.match_source_tree(symbol.rsplit("/", 1)[-1])
        directory = positional[1][0] if len(positional) > 1 else url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git")
        # None for a project the patterns do not name: a `cd` into it leaves the tree the script was in
        self.cloned[directory.rstrip("/").rsplit("/", 1)[-1]] = found
        self.origin[directory.rstrip("/").rsplit("/", 1)[-1]] = \
            url.rstrip("/").rsplit("/", 1)[-1].removesuffix(".git").lower()

    def cd(self, m, target: str | None) -> None:
        var_rest = _VAR_PREFIX_RE.match(target or "")
        self.tail = var_rest.group(1) if var_rest and self.cwd is None else None
        if not target or target in ("-", "~") or target.startswith(".."):
            # `cd ../../` back out of `csrc/rotary`: still in the clone while the folders moved into are not used up
            if target and target.startswith("..") and self.here is not None and self._relative(target):
                return
            self.here = None
            self.here_origin = None
            self.sub = []
            return
        last = target.rstrip("/").rsplit("/", 1)[-1]
        self.here_origin = self.origin.get(last, last.lower())
        if last in self.cloned:
            self.here = self.cloned[last]
            self.sub = []
            return
        first, _, rest = target.strip("/").partition("/")
        if rest and self.cloned.get(first) is not None:
            # `cd flash-attention/csrc/rotary` right after the clone: that folder of the clone
            self.here, self.sub = self.cloned[first], []
            self._relative(rest)
            return
        if self.here is not None and not target.startswith(("/", "$", "~")) and \
                _tree_part(m, self.here, "/".join(self.sub + [target.strip("/")]))[0] != self.here[0]:
            self._relative(target)  # `cd csrc/fused_dense_lib` in a flash-attention clone: a folder a rule names
            return
        found = m.match_source_tree(last)
        if found is not None:
            self.here = found
            self.sub = []
        elif target.startswith(("/", "$", "~")):
            self.here = None       # somewhere else; a relative `cd hopper` stays inside the tree
            self.sub = []
        elif self.here is not None:
            self._relative(target)

    def _relative(self, target: str) -> bool:
        """Follow a relative `cd` inside the `here` tree; False (and nothing changed) when it leaves the tree."""
        sub = list(self.sub)
        for part in target.split("/"):
            if part == "..":
                if not sub:
                    return False
                sub.pop()
            elif part not in ("", "."):
                sub.append(part)
        self.sub = sub
        return True


# `$DIR/rest`, `${PROJ_ROOT}/rest` (a variable, then a plain relative folder)
_VAR_PREFIX_RE = re.compile(r"^\$\{?\w+\}?/([\w.-]+(?:/[\w.-]+)*)/?$")
_GIT_CLONE_OPTS_WITH_VALUE = {"-b", "--branch", "--depth", "-o", "--origin", "-c", "--config", "--reference",
                              "--filter", "-j", "--jobs", "--shallow-since", "--separate-git-dir", "--template"}
_TARGET_DEVICE_RE = re.compile(r"\b\w*TARGET_DEVICE=[\"']?(?!cuda)\w+")
# programs whose `key=value` arguments are Hydra / OmegaConf overrides of their config
_PROGRAM_LAUNCHERS = {"torchrun", "deepspeed", "accelerate", "fairseq-hydra-train", "llamafactory-cli", "swift"}
_OVERRIDE_RE = re.compile(r"\+{0,2}([A-Za-z_][\w-]*(?:\.[\w-]+)*)=([^\s$=][^\s$]*)")
_SETUP_BUILDS = {"install", "develop", "build", "build_ext", "bdist_wheel", "bdist_egg"}
# `key=value` pairs of a comma-separated list (`pretrained=X,dtype=bfloat16`)
_KEY_VALUE_RE = re.compile(r"(?:(?<=^)|(?<=[,\s\"']))([A-Za-z_][\w.-]*)=([^,\s\"'{}]+)")
# Slurm's short options for the GPU request: `-p gpu` (partition), `-G 8` (GPUs)
# `--constraint="gpu-mid|gpu-high"`: an option whose value is quoted (an `#SBATCH` line)
_QUOTED_OPTION_RE = re.compile(r"(?<![\w-])--([A-Za-z][\w.-]*)=([\"'])([^\"'\s]+)\2")
# `-C` is `--constraint` (node features: NERSC Perlmutter's `#SBATCH -C gpu`)
# `-A` is `--account` (sbatch(1): "-A, --account=<account>"): Jean Zay's `#SBATCH -A abc@v100` (tp49a)
_SLURM_SHORT = {"p": "partition", "G": "gpus", "C": "constraint", "A": "account"}
_SLURM_SHORT_RE = re.compile(r"(?<!\S)-([pGCA])(?:=|[ \t]+)?([^\s\-$][^\s]*)")
_SLURM = {"srun", "sbatch", "salloc"}
# `$(grep '^nvidia-cublas' packages.txt)`: a command substitution that picks a list's lines by an anchored name
_GREP_PICKED_RE = re.compile(r"\$\((?:grep|egrep)(?:\s+-[A-Za-z]+)*\s+(['\"]?)\^([A-Za-z0-9][\w.-]*[A-Za-z0-9])\1\s+[^\s()]+\s*\)")
# MPI launchers whose options set the ranks' environment (`-x NAME=VALUE`, `-genv NAME VALUE`)
_MPI_LAUNCHERS = frozenset({"mpirun", "mpiexec", "orterun", "mpiexec.hydra"})
# a PBS / Cobalt directive's queue (`#PBS -q gpu`, `#COBALT -q training-gpu`, `#COBALT --queue=full-node`)
_QUEUE_DIRECTIVE_RE = re.compile(r"#(?:PBS|COBALT)\b[^#]*?(?<!\S)(-q|--queue)(?:=|[ \t]+)([^\s#]+)")
# an LSF directive's GPU requirement or queue (`#BSUB -gpu "num=4:mode=exclusive_process"`, `#BSUB -q gpu`)
_BSUB_DIRECTIVE_RE = re.compile(r"#BSUB[ \t]+(-gpu|-q)[ \t]+(\"[^\"]*\"|'[^']*'|[^\s#]+)")
# rules that read a count or a node type from a setting: a script variable holding a count only computes with it
SCHEDULER_REQUESTS = {"NPU022", "NPU028"}
_INDEX_LIST_RE = re.compile(r"\d+(?:,\d+)*")
# t11y (tuned on heldout16): programs that run a Python script; their options are the script's own (argparse), so
# `torchrun extract.py --use_gpu --gpu $gpus` picks the script's device, it asks no job scheduler for GPU nodes
# (NPU028 keeps the scheduler's spellings: sbatch / srun / salloc options, `#SBATCH` lines, resource lists)
_SCRIPT_RUNNERS = {"torchrun", "deepspeed", "accelerate", "mpirun", "horovodrun", "python", "python3"}
_SCRIPT_RUN_RE = re.compile(r"(?:^|[\s;&|(\"'])(?:\S*/)?(?:python[\d.]*|torchrun|deepspeed|accelerate\s+launch)\s"
                            r"|\.py\b")
_SCHEDULER_WORD_RE = re.compile(r"(?<![\w-])(?:sbatch|srun|salloc|qsub|bsub)(?![\w-])")


def _expanded_value(col: Collector, option) -> str | None:
    """The value the script assigned to the variable written right after the option node (`--use-flash $FLASH` with
    `export FLASH=0` above: `0`; the command's word list holds no expansion, so the option would read as a bare
    switch, t17a); None when no variable follows or the script never assigned it."""
    following = option.next_sibling
    if following is None or following.type not in ("simple_expansion", "expansion"):
        return None
    ref = _VARIABLE_REF_RE.fullmatch(following.text.decode("utf-8", errors="replace"))
    return col.script_vars.get(ref.group(1)) if ref else None


_VARIABLE_REF_RE = re.compile(r"\$\{?(\w+)\}?")
# `data.train_files=...`: a dotted Hydra key, never a command or an environment name
_DOTTED_OVERRIDE_RE = re.compile(r"\+{0,2}[A-Za-z_][\w-]*(?:\.[\w-]+)+=")
# `${1:-vllm}`, `${ENGINE:-"sglang"}`: a parameter's default, the value when the caller passes none
_PARAMETER_DEFAULT_RE = re.compile(r"\$\{\w+:?-([^${}]*)\}")


def _literal_var(col: Collector, ref: re.Match) -> str:
    """The literal a script variable holds (`code_dir=examples/s2s`), else the reference as written."""
    value = col.script_vars.get(ref.group(1), "").strip("\"'")
    return value if value and "$" not in value and "`" not in value else ref.group(0)


def _assigned_override(col: Collector, word: str) -> str:
    """`key=$VAR` with the literal the script assigned to VAR (`ENGINE=${1:-vllm}` above: its default `vllm`), as
    `key=vllm`; "" when the word is no such override or the value is not a literal (t20b, OpenManus-RL's
    `actor_rollout_ref.rollout.name=$ENGINE`)."""
    key, sep, ref = word.partition("=")
    variable = _VARIABLE_REF_RE.fullmatch(ref) if sep else None
    value = col.script_vars.get(variable.group(1)) if variable else None
    if value is None:
        return ""
    default = _PARAMETER_DEFAULT_RE.fullmatch(value)
    value = default.group(1).strip("\"'") if default else value
    return f"{key}={value}" if value and "$" not in value else ""


def _script_option(program: str) -> bool:
    """Whether the options after `program` (a command's first word) are a Python script's own."""
    return program in _SCRIPT_RUNNERS or program.startswith("python") or program.endswith(".py")
# environment-module commands: `module load cuda/12.4`, `ml cuda`, `spack load cuda@12.1`
_MODULE_LOADERS = {"module": ("load", "add", "swap", "switch"), "ml": None, "spack": ("load",)}
_SHELLS = {"bash", "sh", "zsh", "dash"}


# `eval ${run_cmd}`, `eval "$CMD"`: the command line the script runs is the string a variable holds
# a variable expanded where a command starts: a line's first word, after `;` / `&&` / `|` / `then` / `do`, or the
# script of a `-c` option
_RUN_VAR_RE = re.compile(r"""(?m)(?:^|[;&|(]|\bthen|\bdo|\s-c\s+["'])[ \t]*\$\{?([A-Za-z_]\w*)\}?(?=[ \t]|$|["';&|)])""")
_EVAL_VAR_RE = re.compile(r"""(?m:^|[;&|(]|\bthen|\bdo)\s*eval\s+["']?\$\{?([A-Za-z_]\w*)\}?["']?\s*(?:$|[;&|)#])""", re.M)


def _exports(declaration) -> bool:
    """`export NAME ...` or `declare -x` / `typeset -x NAME ...`: the bare names it lists become environment variables."""
    if declaration.type != "declaration_command" or not declaration.children:
        return False
    keyword = declaration.children[0].type
    return keyword == "export" or (keyword in ("declare", "typeset") and any(
        c.type == "word" and c.text.startswith(b"-") and b"x" in c.text for c in declaration.children))


# `python3.7 -u $SC`: a variable holding the script a Python launch runs, with its options (PaddleRec's run_gpubox.sh:
# `SC="tools/static_gpubox_trainer.py -m models/rank/dnn/config_gpubox.yaml"`)
_LAUNCHED_SCRIPT_VAR_RE = re.compile(r"(?m)(?:^|[;&|(])\s*(?:\S*/)?python[\d.]*(?:\s+-[A-Za-z]+)*\s+\"?\$\{?([A-Za-z_]\w*)\}?")


def _launched_script(m, value: str) -> tuple[str, Rule | None]:
    """(the script, its program rule) of a Python launch's script path (`tools/static_gpubox_trainer.py`): a trainer
    named for a CUDA-only mode is that mode's program (NPU957, tp48b)."""
    script = value.strip("\"'").split(maxsplit=1)[0] if value.strip("\"'") else ""
    return script, (m.match_command(script.rsplit("/", 1)[-1]) if script.endswith(".py") else None)


def _evaluated_vars(text: str) -> set[str]:
    """The variables whose string the script runs as a command line: with `eval` (hallo3's `run_cmd="PYTORCH_CUDA_
    ALLOC_CONF=... torchrun ..."; eval ${run_cmd}`: bash reads the string as a command line, environment assignments
    included; bash(1), "eval [arg ...]: the args are read and concatenated together into a single command"), or
    expanded where a command starts (`${PROFILE_CMD} python train.py` with `PROFILE_CMD="nsys profile ..."`, `srun
    bash -c "source vars.sh && $cmd"`, a `$launch` line of a `bash -c` script)."""
    return set(_EVAL_VAR_RE.findall(text)) | set(_RUN_VAR_RE.findall(text))


# `set -a` / `set -o allexport`: every later assignment is exported (a text fallback where the parse has errors)
_ALLEXPORT_RE = re.compile(r"(?m)^\s*set\s+(?:-[a-zA-Z]*a[a-zA-Z]*\b|-o\s+allexport\b)")
_EXPORT_LINE_RE = re.compile(r"(?m)(?:^|[;&|]\s*)(?:export|(?:declare|typeset)\s+-[a-zA-Z]*x[a-zA-Z]*)\s+([^;&|#\n]*)")
_READ_NAME_RE = re.compile(r"\$\{?[#!]?([A-Za-z_]\w*)")


class _Everything(frozenset):
    def __contains__(self, item) -> bool:
        return True


def _sets_allexport(command) -> bool:
    """`set -a`, `set -ea`, `set -o allexport`: bash exports every later assignment (bash(1), `set`)."""
    name = command.child_by_field_name("name")
    if name is None or name.text != b"set":
        return False
    words = [c.text for c in command.children if c.type == "word"]
    return any(w.startswith(b"-") and not w.startswith(b"--") and b"a" in w for w in words) \
        or any(w == b"-o" and nxt == b"allexport" for w, nxt in zip(words, words[1:]))


def _unseen_value(node, names: frozenset[str]) -> bool:
    """Is `node` the value of a plain assignment whose name nothing sees (`CUDA_PATH=/usr/local/cuda-8.0` on its own
    line, never exported nor expanded, the nvcc lines spelling the path themselves)? No program and no later line
    reads it (bash(1), ENVIRONMENT), so its text is no setting, as `_environment_names` reads the name (tp56a)."""
    holder = node
    while holder is not None and holder.type in ("word", "string", "raw_string", "string_content", "concatenation"):
        holder = holder.parent
    if holder is None or holder.type != "variable_assignment" or holder.parent is None \
            or holder.parent.type in ("declaration_command", "command"):
        return False
    name = holder.child_by_field_name("name")
    return name is not None and name.type == "variable_name" and name.text.decode() not in names


def _environment_names(tree, raw: bytes, text: str, evaluated: set[str]) -> frozenset[str]:
    """The names a plain assignment (`NCCL_DEBUG=INFO` on its own line) of this script can reach a program or the
    script through: exported (`export NAME`, `declare -x`, `set -a`: all of them) or read (`$NAME`, `${NAME:-x}`).
    A name outside them is a shell variable nothing sees: the launched process does not inherit it (bash(1),
    ENVIRONMENT: only exported names are passed; VideoX-Fun's train scripts, labelled `none` in project test28).
    `evaluated`: the variables run with `eval`, whose text is read as a command line. Read from the parse tree;
    where tree-sitter-bash could not parse part of the script (an ERROR node), the text's spellings are added, as
    the parse does not hold the expansions and exports inside it."""
    names = set(evaluated)
    for node in _walk(tree.root_node):
        if node.type in ("simple_expansion", "expansion"):
            target = next((c for c in node.children if c.type in ("variable_name", "subscript")), None)
            if target is not None and target.type == "subscript":   # `${ARR[0]}`
                target = target.child_by_field_name("name")
            if target is not None and target.type == "variable_name":
                names.add(target.text.decode())
        elif node.type == "word" and node.start_byte and raw[node.start_byte - 1:node.start_byte] == b"$" \
                and raw[node.start_byte - 2:node.start_byte - 1] != b"\\":
            # tree-sitter-bash splits `$OUT/$PREFIX-log.txt` after the second `$`: the word is the expansion's name
            names.update(re.findall(r"^[A-Za-z_]\w*", node.text.decode("utf-8", errors="replace")))
        elif node.type in ("extglob_pattern", "regex"):
            # `[[ $f != *$pattern* ]]`: the pattern's expansions are not parsed into nodes
            names.update(_READ_NAME_RE.findall(node.text.decode("utf-8", errors="replace")))
        elif node.type == "declaration_command" and _exports(node):
            for child in node.children:
                if child.type == "variable_assignment":
                    child = child.child_by_field_name("name")
                if child is not None and child.type == "variable_name":
                    names.add(child.text.decode())
        elif node.type == "command" and _sets_allexport(node):
            return _Everything()
    if tree.root_node.has_error:
        if _ALLEXPORT_RE.search(text):
            return _Everything()
        names.update(_READ_NAME_RE.findall(text))
        for listed in _EXPORT_LINE_RE.findall(text):
            names.update(re.findall(r"(?:^|\s)([A-Za-z_]\w*)", listed))
    return frozenset(names)


def _expansion_separators_masked(text: str) -> str:
    """`text` with each `;` inside a `${...}` expansion blanked: bash reads it as a character of the word there
    (`list="${list:+${list};}$item"` appends with a `;`), but tree-sitter-bash ends the expansion at it and loses the
    rest of the enclosing loop to an ERROR node (llm-d-benchmark's `done < <( nvidia-smi --query-gpu=... )`; tp44a).
    Same length, so every line and column stays where it is."""
    out = list(text)
    depth = 0
    for i, ch in enumerate(text):
        if ch == "$" and text[i + 1:i + 2] == "{":
            depth += 1
        elif ch == "}" and depth:
            depth -= 1
        elif ch == ";" and depth:
            out[i] = " "
        elif ch == "\n":
            depth = 0
    return "".join(out)


def scan_shell(col: Collector, text: str, script: bool = False, multi_process: bool = False) -> None:
    """Report what `text` (lines aligned with the file's lines) sets, reads, runs and installs; `script`: `text` is a
    whole shell script, whose function definitions are kept in its summary (called_scripts.FUNCTIONS_KEY);
    `multi_process`: `text` runs once per task of srun / mpirun (`srun ... bash -c "..."`), as its launches do."""
    raw = text.encode("utf-8")
    tree = _parser().parse(raw)
    if tree.root_node.has_error and "${" in text:
        masked = _expansion_separators_masked(text)
        if masked != text:
            retried = _parser().parse(masked.encode("utf-8"))
            if not retried.root_node.has_error:
                text, raw, tree = masked, masked.encode("utf-8"), retried
    pos = _Positions(raw)
    m = matchers(col.engine)
    source_tree = _SourceTree()
    source_tree.per_statement = not script
    evaluated = _evaluated_vars(text) if "$" in text else set()
    environment_names = _environment_names(tree, raw, text, evaluated)
    # a file of settings others `source` (it runs no program but to compute a value, `$(nvidia-smi ...)`) keeps
    # every value: its readers are elsewhere (walked once, and only when a value is unseen in the file)
    seen_elsewhere = cache(
        lambda: not any(_runs_program(n) and not _in_command_substitution(n) for n in _walk(tree.root_node)))
    appenders = _appender_functions(tree) if "$@" in text or "$*" in text else {}
    container_vars = _container_variables(tree.root_node) if "$" in text else {}
    launched_vars = set(_LAUNCHED_SCRIPT_VAR_RE.findall(text)) if "python" in text else set()
    build_tags = _build_tag_variables(tree.root_node) if "$" in text and "build" in text else set()
    # the evaluated variables a command under srun / mpirun expands (`srun ... bash -c "source vars.sh && $cmd"`)
    multi_process_vars = _Everything() if multi_process else \
        _multi_process_vars(tree.root_node) & evaluated if evaluated else set()
    # `export PYTORCH_EXTRA_INDEX="https://download.pytorch.org/whl/cu${CUDA_VERSION_SHORT}"` then `pip install ...
    # --extra-index-url ${PYTORCH_EXTRA_INDEX}`: the variable is the index the install reads (tp44b)
    index_vars = frozenset(v.upper() for v in _INDEX_VAR_READ_RE.findall(text)) if "$" in text else frozenset()
    for node in _walk(tree.root_node):
        if node.type == "variable_assignment":
            name_node = node.child_by_field_name("name")
            if name_node is None or name_node.type != "variable_name":
                continue
            name = name_node.text.decode()
            line, c = pos.at(name_node.start_point)
            value = node.child_by_field_name("value")
            if value is not None:
                # the script's own variables, for a URL that reads one (`--find-links .../whl/${UV_TORCH_BACKEND}`)
                col.script_vars[name] = _word(value)
                if name == _VISIBLE_DEVICES and node.parent is not None and node.parent.type != "command":
                    col.script_vars[_SET_VISIBLE] = _word(value)    # not a command's own prefix (_visible_devices)
            if not (node.parent is not None and node.parent.type not in ("declaration_command", "command")
                    and name not in environment_names):
                col.env(name, line, c, twin=_twin(col, node, value, line, c),
                        value=_word(value) if value is not None else None)
            _assignment_setting(col, m, name, value, line, c)
            if value is not None and name.upper() in index_vars and name.upper() not in INDEX_ENV_NAMES:
                index_env(col, m, name, _word(value), line, c, index_vars)
            elif value is not None and _held_index_url(tree.root_node, name, _word(value)):
                # `PYTORCH_DEPS="https://download.pytorch.org/whl/cu126"`, then `docker build --build-arg
                # PYTORCH_DEPS=${PYTORCH_DEPS}` (stable-baselines3's build_docker.sh): a CUDA wheel index the script
                # hands on to the install that reads it, as decision 62 reads a held NVIDIA download URL (tp47b)
                index_env(col, m, name, _word(value), line, c, frozenset({name.upper()}))
            if value is not None and name in launched_vars:
                held_script, held_rule = _launched_script(m, _word(value))
                vline, vc = pos.at(value.start_point)
                col.add(held_rule, held_script, vline, vc + (value.type in ("string", "raw_string")))
            if value is not None and container_vars.get(name, set()) & _CONTAINER_COMMANDS:
                _container_options_variable(col, m, pos, name, value, container_vars[name] & _CONTAINER_COMMANDS)
            if value is not None and container_vars.get(name, set()) & _MPI_LAUNCHERS:
                _mpi_options_variable(col, pos, value)
            if value is not None and value.type in ("word", "concatenation", "expansion"):
                _program_variable(col, m, pos, tree, name, value)
            if value is not None and value.type in ("string", "raw_string"):
                _env_list(col, pos, value)
                _yaml_value(col, pos, value)
                if COMMAND_VARIABLE_RE.fullmatch(name) and name not in evaluated:
                    # the value of a variable a tool runs as a command (`export CIBW_BEFORE_BUILD="pip install torch
                    # --index-url .../whl/cu126"`: cibuildwheel runs it before each build, as dockerfile.py and
                    # configs.py read it in ENV / env:)
                    _nested_script(col, pos, value, multi_process=name in multi_process_vars)
            if value is not None and name in evaluated and _quoted_whole(value):
                # the command line `eval $name` runs, read in its place
                _nested_script(col, pos, value, multi_process=name in multi_process_vars)
            if value is not None and "IMAGE" in name.upper() and not _DERIVED_RE.match(_word(value).strip('"')) \
                    and name not in build_tags:
                # IMAGE_NAME="nvcr.io/nvidia/pytorch:..." (not `GPU_IMAGE=$(get_gpu_image)`: a command's output)
                ref = _word(value) if value.type != "string" else value.text.decode()[1:-1]
                vline, vc = pos.at(value.start_point)
                col.add(m.match_image(ref), ref, vline, vc + (value.type in ("string", "raw_string")))
        elif node.type == "variable_name" and node.parent is not None and _exports(node.parent):
            # `export CUDA_VISIBLE_DEVICES` (a value set earlier, or parsed from the options): the name reaches every
            # later command's environment, as `export NAME=value` does (t20b, LLMxMapReduce's start_gunicorn.sh)
            line, c = pos.at(node.start_point)
            col.env(node.text.decode(), line, c)
        elif node.type in ("simple_expansion", "expansion") and not _in_message(node) and not _in_label(node) \
                and not _pinned_version(node):
            if node.type == "expansion" and b"=" in node.text:
                _assigned_default(col, m, pos, node)
            for child in node.children:
                if child.type == "variable_name" and not _sets_ascend_variable(node):
                    line, c = pos.at(child.start_point)
                    col.env(child.text.decode(), line, c, sets=False)   # a read, not a setting
                    break
        elif node.type == "command":
            _command(col, m, pos, node, source_tree, multi_process)
            name_node = node.child_by_field_name("name")
            if name_node is not None and (name_node.text in (b"echo", b"printf") or name_node.text in appenders):
                _written_exports(col, pos, node, appenders)
            if name_node is not None and name_node.text in (b"echo", b"printf"):
                _ci_set_variable(col, pos, node)
                _github_env_write(col, m, pos, node)
                _echoed_cmake(col, pos, node)
                _env_file_write(col, pos, node)
        elif node.type == "for_statement":
            _loop_values(col, m, pos, node)
        elif node.type == "pipeline" and b"lspci" in node.text:
            _pci_vendor_probe(col, m, pos, node)
        elif node.type == "pipeline" and b"pip" in node.text and b"grep" in node.text:
            _pip_package_query(col, m, pos, node)
        elif node.type == "array":
            _array_options(col, m, pos, node)
        elif node.type == "binary_expression" and node.parent is not None and node.parent.type == "test_command":
            _comparison(col, m, pos, node)
        elif node.type == "function_definition" and script:
            _record_function(col, node)
        if node.type in ("string", "raw_string") and b":" in node.text and not _in_message(node):
            _scheduler_option_dict(col, m, pos, node)
        if node.type == "heredoc_body" and _writes_config(node):
            from auditor.project.configs import scan_config_text   # configs reads CI `run:` blocks through here

            # at its own columns: a body indented in a CI step's `run: |` block starts past the indentation (tp46b)
            scan_config_text(col, "\n" * node.start_point[0] + " " * node.start_point[1]
                             + node.text.decode("utf-8", errors="replace"))
        elif node.type == "heredoc_body" and _writes_cmake(node):
            _cmake_heredoc(col, node)
        elif node.type == "heredoc_body" and _runs_or_writes_script(node):
            # a job script written or submitted from here (`cat > job.slurm <<EOT`, `sbatch <<EOF`, `ssh $host bash
            # <<EOF`): its lines are commands, read as a script in their place
            scan_shell(col, "\n" * node.start_point[0] + " " * node.start_point[1]
                       + node.text.decode("utf-8", errors="replace"))
            continue
        if (node.type in _TEXT_NODES or (node.type == "heredoc_body" and not any(
                c.type == "heredoc_content" for c in node.children))) and not _in_message(node) \
                and not _in_label(node) and not _build_output_tag(node) and not _link_guard(node) \
                and not _folder_guard(node) \
                and (not _unseen_value(node, environment_names) or seen_elsewhere()):
            row, byte_col = node.start_point
            # a command's own words are read with their values by _command; options only in longer text
            own_word = node.type == "word" and node.parent is not None and node.parent.type == "command"
            text_here = node.text.decode("utf-8", errors="replace")
            start_col = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + 1
            if node.type == "word" and byte_col and pos.lines[row][byte_col - 1:byte_col] == b"$" \
                    and pos.lines[row][byte_col - 2:byte_col - 1] != b"\\":
                # tree-sitter-bash splits `X=$PATH:$CUDA_HOME/bin` after the second `$`: the word is an expansion
                name = re.match(r"\w+", text_here)
                if name:
                    col.env(name.group(0), row + 1, start_col, sets=False)
                text_here, start_col = "$" + text_here, start_col - 1
            following = node.next_sibling
            if _CMAKE_DEFINE_RE.fullmatch(text_here) and text_here.endswith("=") and following is not None \
                    and following.type in ("simple_expansion", "expansion"):
                text_here += following.text.decode("utf-8", errors="replace")   # `-DCOMPILE_CUDA=$USE_CUDA`
            elif text_here == "-D" and following is not None and following.type == "word" \
                    and following.start_point[0] == row and following.start_point[1] - node.end_point[1] <= 4:
                # `cmake -D WITH_CUDA=ON ..`: the define in the next word (tp37)
                text_here += " " * (following.start_point[1] - node.end_point[1]) \
                    + following.text.decode("utf-8", errors="replace")
            scan_fragment(col, _sed_pattern_blanked(node, text_here), row + 1, start_col, options=not own_word,
                          gres=not _searched_text(node), labels=not _compared_text(node))
        elif node.type in ("string", "concatenation") and node.text[:3] in (b'"+c', b"+cu") and b"$" in node.text \
                and not _in_message(node) and not _compared_text(node):
            # a label held with its CUDA release in a variable (`"+cu${v}"`): read whole, not by its parts
            row, byte_col = node.start_point
            torch_cuda_label(col, node.text.decode("utf-8", errors="replace"), row + 1,
                             len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + 1)
        elif node.type == "concatenation" and node.children and node.children[0].type == "word" \
                and b"/releases/download/" in node.text and not _in_message(node):
            _release_asset_url(col, m, pos, node)
        elif node.type == "unset_command":
            for child in node.children:
                if child.type == "variable_name":
                    line, c = pos.at(child.start_point)
                    col.env(child.text.decode(), line, c, sets=False, removed=True)
        elif node.type == "comment" and node.text.startswith(b"#SBATCH"):
            # Slurm reads `#SBATCH` lines as options: `--gres=gpu:4` asks the scheduler for GPUs
            row, byte_col = node.start_point
            start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + 1 + len("#SBATCH")
            options = node.text.decode("utf-8", errors="replace")[len("#SBATCH"):].split("#", 1)[0]
            scan_fragment(col, options, row + 1, start)
            for quoted in _QUOTED_OPTION_RE.finditer(options):
                # `#SBATCH --constraint="[a5000|a6000|a100|3090]"` (pd6, mdlm): Slurm reads the value without the
                # quotes, as the shell would (scan_fragment's option values stop at a quote)
                value = quoted.group(3)
                col.add(m.match_setting(setting_path(quoted.group(1)), value), f"--{quoted.group(1)} {value}",
                        row + 1, start + quoted.start(), start + quoted.start() + len(quoted.group(1)) + 2,
                        value=value)
            for short in _SLURM_SHORT_RE.finditer(options):   # `#SBATCH -p gpu`, `#SBATCH -G 8`
                key = _SLURM_SHORT[short.group(1)]
                col.add(m.match_setting(key, short.group(2)), f"-{short.group(1)} {short.group(2)}", row + 1,
                        start + short.start(1) - 1, start + short.end(2), value=short.group(2))
        elif node.type == "comment" and node.text.startswith(b"#$ ") and b"gpu" in node.text:
            # Grid Engine reads `#$ -l gpu=1` lines as qsub's options (qsub(1), "embedded directives")
            row, byte_col = node.start_point
            start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + 1
            options = node.text.decode("utf-8", errors="replace")
            grid_engine_gpus(col, m, options, lambda offset: (row + 1, start + offset), directive=True)
        elif node.type == "comment" and (directive := _QUEUE_DIRECTIVE_RE.match(
                node.text.decode("utf-8", errors="replace"))):
            # PBS / Cobalt read `#PBS -q gpu` / `#COBALT -q training-gpu` as the job's queue (ALCF's GPU nodes
            # are a queue): the queue's name is the request (tp37)
            row, byte_col = node.start_point
            start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + 1
            value = directive.group(2)
            col.add(m.match_setting("batch_queue", value), f"-q {value}", row + 1, start + directive.start(1),
                    start + directive.end(2), value=value)
        elif node.type == "comment" and (directive := _BSUB_DIRECTIVE_RE.match(
                node.text.decode("utf-8", errors="replace"))):
            # LSF reads `#BSUB -gpu "num=4"` / `#BSUB -q gpu` as bsub's options (tp48b)
            row, byte_col = node.start_point
            start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + 1
            value = directive.group(2).strip("\"'")
            symbol = f"bsub {directive.group(1)}={value}"
            col.add(m.match_command(symbol), symbol, row + 1, start + directive.start(1), start + directive.end(2))
    if "nvcc" in text and "-D" in text:
        _drop_continued_nvcc_defines(col, pos, tree.root_node)


def _drop_continued_nvcc_defines(col: Collector, pos: _Positions, root) -> None:
    """`nvcc -c -o op_g.cu.o op_g.cu \\` then `  -D GOOGLE_CUDA=1 -x cu -Xcompiler -fPIC`: a CUDA macro on a continued
    line of an nvcc command whose own line is reported is one flag of that build, not a second change (tp60b, project
    test170's pointnet2 op builds; lead decisions 18 and 66: an nvcc flag list is one finding). The nvcc line keeps
    the build's finding; a define on the nvcc line itself, or of any other program, is untouched."""
    spans: list[tuple[int, int]] = []
    for node in _walk(root):
        name = node.child_by_field_name("name") if node.type == "command" else None
        if name is not None and node.end_point[0] > name.start_point[0] \
                and _word(name).rsplit("/", 1)[-1] == "nvcc":
            first = pos.at(name.start_point)[0]
            if any(f.line == first and f.symbol == "nvcc" for f in col.result.findings):
                spans.append((first, pos.at(node.end_point)[0]))
    if spans:
        col.result.findings = [f for f in col.result.findings if not (
            (f.symbol or "").startswith("-D") and any(first < f.line <= last for first, last in spans))]


def _release_asset_url(col: Collector, m, pos: _Positions, node) -> None:
    """`https://github.com/openucx/ucx/releases/download/v${UCX_VERSION}/ucx-${UCX_VERSION}-...-cuda13-x86_64.tar.bz2`:
    a release asset named with the script's variables, read whole (each variable as its literal, or `*`), where the
    text reader sees only the words before the first expansion (tp46b)."""
    url = "".join(_literal_var(col, ref) if (ref := _VARIABLE_REF_RE.fullmatch(c.text.decode("utf-8", "replace")))
                  and c.type in ("simple_expansion", "expansion") else c.text.decode("utf-8", "replace")
                  for c in node.children)
    # the shell's quotes are not the URL's (`.../download/v"$VERSION"/onnxruntime-linux-x64-gpu-"$VERSION".tgz`, tp47b)
    url = re.sub(r"\$\{?\w+\}?", "*", url.replace('"', "").replace("'", ""))
    if _URL_RE.fullmatch(url) is None or _RELEASE_ASSET_RE.search(url) is None:
        return
    symbol, rule = match_url(m, url)
    if rule is not None and "/releases/download/" in symbol:
        line, c = pos.at(node.start_point)
        col.add(rule, symbol, line, c, c + len(node.text.decode("utf-8", "replace")))


def _sets_ascend_variable(expansion) -> bool:
    """`export ASCEND_RT_VISIBLE_DEVICES=$CUDA_VISIBLE_DEVICES`, `ASCEND_VISIBLE_DEVICES="${CUDA_VISIBLE_DEVICES:-0}"`:
    the expansion is (part of) the value of an Ascend variable, set from the CUDA one: the port itself, a read that
    configures nothing CUDA (the CUDA variable's own setting keeps its finding)."""
    node = expansion.parent
    while node is not None and node.type in ("string", "concatenation"):
        node = node.parent
    name = node.child_by_field_name("name") if node is not None and node.type == "variable_assignment" else None
    return name is not None and name.text.startswith(b"ASCEND_")


def win_cuda_paths(col: Collector, text: str, where) -> None:
    """`C:\\Program Files\\NVIDIA GPU Computing Toolkit\\CUDA\\v12.4`: the CUDA toolkit's Windows location, once
    per line; where(offset) gives the (line, column) of an offset in text."""
    m = matchers(col.engine)
    for path in WIN_CUDA_PATH_RE.finditer(text):
        ln, c = where(path.start())
        if any(f.line == ln for f in col.result.findings):
            continue                     # a CUDA finding on the line says it already
        symbol = "path:c:/program files/nvidia gpu computing toolkit/cuda" + (f"/{path.group(1)}" if path.group(1) else "")
        col.add(m.match_requirement(symbol), symbol, ln, c, c + len(path.group(0)))


def cmake_defines(col: Collector, text: str, where) -> None:
    """`-DGGML_CUDA=ON`, `-DCMAKE_CUDA_ARCHITECTURES=86`: CMake switches of a CUDA build; where(offset) gives the
    (line, column) of an offset in text."""
    m = matchers(col.engine)
    for define in _CMAKE_DEFINE_RE.finditer(text):
        name, value = define.group(1), define.group(2).strip("_") and define.group(2)   # a CI expression's blank
        rule = m.match_setting(f"cmake:{name.lower()}", _switch_value(col, value).lower())
        if rule is not None:
            ln, c = where(define.start())
            value = re.sub(r"_{2,}", "", value)          # `${cuda___}`: a CI expression blanked by its reader
            col.add(rule, f"-D{name}={value}", ln, c, c + len(define.group(0)), value=value)


def _assigned_literal(col: Collector, name: str) -> str:
    """The value the script assigned to `name`, or a Dockerfile ARG's default (`ARG CUDA=cuda12`), unquoted; ''."""
    return (col.script_vars.get(name) or col.build_args.get(name) or "").strip("\"'")


def _literal_part(col: Collector, name: str) -> str:
    """`_assigned_literal`, or '' where the script computes the value (`$(...)`, a backquoted command)."""
    value = _assigned_literal(col, name)
    return "" if value.startswith(("$(", "`")) else value


def _switch_value(col: Collector, value: str) -> str:
    """A CMake define's value as the build sees it: the literal the script assigned to its variable (`$USE_CUDA`
    after `USE_CUDA=OFF`, or a Dockerfile's `ARG USE_CUDA=OFF`), else a default (`${USE_CUDA:-OFF}`); a value set elsewhere (`-DCOMPILE_CUDA=${{
    matrix.cuda }}` in a CI job, an unassigned `$USE_CUDA`) reads as `on`: the line turns the switch on where the
    caller says so (t32d, marian's release workflow)."""
    if not value.startswith("$"):
        return value
    ref = _VARIABLE_REF_RE.fullmatch(value)
    literal = _assigned_literal(col, ref.group(1)) if ref else ""
    default = _PARAMETER_DEFAULT_RE.fullmatch(literal or value)      # `USE_CUDA=${USE_CUDA:-OFF}`
    literal = default.group(1).strip("\"'") if default else literal
    return literal if literal and "$" not in literal else "on"


_CONTAINER_RUNNERS = {"docker", "podman", "nvidia-docker"}
# tmux commands that start a process and take `-e VARIABLE=value` for its environment (tmux(1), tmux 3.0 and later)
_TMUX_NEW_COMMANDS = {"new-session", "new", "new-window", "neww", "split-window", "splitw", "respawn-pane",
                      "respawn-window"}


def _container_env(col: Collector, pos, words: list[str], nodes: list) -> None:
    """`docker run -e CUDA_VISIBLE_DEVICES=$gpus`, `--env NCCL_DEBUG=INFO`, `--env=NAME=value`: the variables set in
    the container, read by the same rules as the script's own (no fix: the container's software decides)."""
    for i, w in enumerate(words[2:], 2):
        if w in ("-e", "--env") and i + 1 < len(words):
            at, text = i + 1, words[i + 1]
        elif w.startswith(("--env=", "-e")) and len(w) > 2 and not w.startswith("--env-file"):
            at, text = i, w.split("=", 1)[1] if w.startswith("--env=") else w[2:]
        else:
            continue
        variable = re.match(r"[\"']?([A-Za-z_]\w*)", text)
        if variable is None:
            continue
        line, c = pos.at(nodes[at].start_point)
        c += words[at].find(variable.group(1))
        col.env(variable.group(1), line, c, sets=False)


# Singularity / Apptainer switches that bind the NVIDIA driver and GPUs: they take no value (`--nv image.sif`)
_CONTAINER_GPU_FLAGS = {"singularity": ("--nv", "--nvccli"), "apptainer": ("--nv", "--nvccli")}
# `docker run` options that take no value (the others take one: `-v A:B`, `--name X`, `--gpus all`)
_RUN_FLAGS = {"--rm", "--privileged", "--init", "--read-only", "--interactive", "--tty", "--detach", "--publish-all",
              "--no-healthcheck", "--oom-kill-disable", "--quiet", "--sig-proxy", "--disable-content-trust"}
_RUN_SHORT_FLAGS_RE = re.compile(r"-[itdPq]+")
_RUN_GPUS_RE = re.compile(r"--gpus(?:=|$)|--runtime(?:=|$)nvidia|--device(?:=|$)nvidia\.com/gpu")


# Singularity / Apptainer image files (`.sif`, SquashFS `.sqsh`, the older `.simg` / `.img`): the file's own name
# says which build it is (NIH HPC's wrappers: `deepvariant-gpu.sif` beside `deepvariant-cpu.sif`, `guppy-gpu.sif`)
_IMAGE_FILE_RE = re.compile(r"(?:\S*/)?([\w.+-]+)\.(?:sif|sqsh|squashfs|simg|img)")
_CONTAINER_COMMANDS = _CONTAINER_RUNNERS | set(_CONTAINER_GPU_FLAGS)


def _build_tag_variables(root) -> set[str]:
    """Variables a script expands only as a container build's output name (`IMAGE_TAG="zed_..._cuda${CUDA}"`, then
    `docker build -t "${IMAGE_TAG}" .`; zed-ros2-wrapper, tp42): the name given to what is built, not an image pulled
    (`_build_output_tag`). A variable a container command also pulls (`docker pull $IMAGE_TAG`) is not one; one the
    script runs after building it (`docker build . -t ${PYTORCH_IMAGE}`, then `docker run --runtime=nvidia ...
    ${PYTORCH_IMAGE}`: alpha-zero-general's setup_env.sh; tp44a) is still the local build's name (project labels
    test80, test114: `none`)."""
    tags: set[str] = set()
    other: set[str] = set()
    for node in _walk(root):
        if node.type != "command":
            continue
        name_node = node.child_by_field_name("name")
        if name_node is None or _word(name_node).rsplit("/", 1)[-1] not in _CONTAINER_COMMANDS:
            continue
        pulls = any(c.type == "word" and c.text == b"pull" for c in node.children)
        for arg in node.children:
            ref = _VARIABLE_REF_RE.fullmatch(_word(arg)) if arg is not name_node and arg.type in (
                "simple_expansion", "expansion", "string") else None
            if ref is not None and _build_output_tag(arg):
                tags.add(ref.group(1))
            elif ref is not None and pulls:
                other.add(ref.group(1))
    return tags - other


def _container_variables(root) -> dict[str, set[str]]:
    """The variables a script expands among a container command's or an MPI launcher's arguments (`singularity exec
    ${singularity_opts} ${image}`, `docker run ${DOCKER_OPTIONS} python x.py`, `mpirun ${options} python main.py`),
    each with the programs that read them; a variable copied whole into one of them (`image=${gpu_image}`) is read
    by the same programs."""
    read: dict[str, set[str]] = defaultdict(set)
    copies: list[tuple[str, str]] = []
    for node in _walk(root):
        if node.type == "command":
            name_node = node.child_by_field_name("name")
            program = _word(name_node).rsplit("/", 1)[-1] if name_node is not None else ""
            if program not in _CONTAINER_COMMANDS and program not in _MPI_LAUNCHERS:
                continue
            for arg in node.children:
                ref = _VARIABLE_REF_RE.fullmatch(_word(arg)) if arg is not name_node and arg.type in (
                    "simple_expansion", "expansion", "string") else None
                if ref is not None:
                    read[ref.group(1)].add(program)
        elif node.type == "variable_assignment":
            name_node, value = node.child_by_field_name("name"), node.child_by_field_name("value")
            ref = _VARIABLE_REF_RE.fullmatch(_word(value)) if value is not None else None
            if name_node is not None and ref is not None:
                copies.append((ref.group(1), name_node.text.decode()))
    for _ in range(3):          # `gpu_image=...`, `image=${gpu_image}`, `singularity exec ... ${image}`
        for source, target in copies:
            read[source] |= read.get(target, set())
    return {k: v for k, v in read.items() if v}


def _mpi_exports(col: Collector, words: list[tuple[str, int, int, bool]]) -> None:
    """Open MPI's `mpirun -x NCCL_DEBUG=INFO` and MPICH / Intel MPI's `-genv NAME VALUE` / `-env NAME VALUE`: a
    variable set in every rank's environment, as `export` would (mpi-operator's examples; tp37). Each word with its
    line, column and whether it is quoted (the name starts one column on)."""
    for i, (w, _, _, _) in enumerate(words[:-1]):
        if w == "-x" and "=" in words[i + 1][0]:
            var, _, value = words[i + 1][0].partition("=")
        elif w in ("-genv", "-env") and i + 2 < len(words):
            var, value = words[i + 1][0], words[i + 2][0]
        else:
            continue
        if re.fullmatch(r"[A-Za-z_]\w*", var):
            _, vl, vc, quoted = words[i + 1]
            col.env(var, vl, vc + quoted, value=value)


def _mpi_options_variable(col: Collector, pos: _Positions, value) -> None:
    """`options="-np ${NB_GPUS} -bind-to none\n    -x NCCL_DEBUG=INFO -x NCCL_IB_DISABLE=1"`, then `mpirun ${options}
    python main.py` (PocketFlow's scripts): the launcher's options held in a variable, read as written on its line,
    each word at its own line when the quoted value runs over several (tp52d). Open MPI's `-x` exports the variable
    to every rank (docs.open-mpi.org/en/main/man-openmpi/man1/mpirun.1.html)."""
    raw = value.text
    body = re.sub(rb"[\"']", b" ", raw)
    row0, col0 = value.start_point
    words = []
    for w in re.finditer(rb"\S+", body):
        before = raw[:w.start()]
        newline = before.rfind(b"\n")
        point = (row0 + before.count(b"\n"), col0 + w.start() if newline < 0 else w.start() - newline - 1)
        words.append((w.group(0).decode("utf-8", errors="replace"), *pos.at(point), False))
    _mpi_exports(col, words)


def _container_options_variable(col: Collector, m, pos: _Positions, name: str, value, programs: set[str]) -> None:
    """`singularity_opts+="--nv"`, `gpu="--nv"`, `DOCKER_OPTIONS="--rm -it --gpus=all ..."`: options a container
    command reads from a variable are read as written on its line (NPU017); an image file named for the GPU build
    (`image="${libexecd}/libexec/deepvariant-gpu.sif"`) is the image rules' (NPU016). Only literal parts count: a
    command substitution's output is unknown."""
    text = value.text.decode("utf-8", errors="replace")
    quoted = value.type in ("string", "raw_string")
    vline, vc = pos.at(value.start_point)
    if "\n" in text:
        return
    body = text[1:-1] if quoted and len(text) >= 2 else text
    start = vc + (1 if quoted else 0)
    if value.type == "concatenation":
        # `GPU_DEVICES='--gpus '"\"device=$2\""''` (TorchServe's start.sh): quoted pieces joined, read without
        # their quotes, each character in its column (tp37)
        body = re.sub(r"\\?[\"']", lambda q: " " * len(q.group(0)), text)
    words = [(w.group(0), start + w.start()) for w in re.finditer(r"[^\s]+", body)]
    for i, (w, wc) in enumerate(words):
        for program in sorted(programs):
            if w.startswith("-") and "$" not in w.split("=", 1)[0]:
                flags = _CONTAINER_GPU_FLAGS.get(program, ())
                option = w if "=" in w or w in flags or i + 1 >= len(words) or words[i + 1][0].startswith("-") \
                    else f"{w}={words[i + 1][0]}"
                symbol = f"{program} {option}"
                col.add(m.match_command(symbol), symbol, vline, wc, wc + len(w))
            elif program in _CONTAINER_GPU_FLAGS and not ("IMAGE" in name.upper() and m.match_image(body)):
                # (a variable named for an image whose whole value an image rule knows is reported as such below)
                image = _IMAGE_FILE_RE.fullmatch(w.strip("\"'"))
                if image is not None:
                    stem = image.group(1)
                    col.add(m.match_image(stem), stem, vline, wc, wc + len(w))


# Container runners that run a command in an image (whether the image is an operand after `run` / `exec`, and the options
# that take a value): Apptainer / SingularityCE `exec` / `run` (apptainer.org/docs/user/latest/cli/apptainer_exec.html),
# NERSC's Shifter (`shifter --image=... command`, docs.nersc.gov/development/containers/shifter/)
_IMAGE_RUNNERS: dict[str, tuple[bool, frozenset[str]]] = {
    **dict.fromkeys(("singularity", "apptainer"), (True, frozenset({
        "-B", "--bind", "--env", "--env-file", "-H", "--home", "-W", "--workdir", "--pwd", "-o", "--overlay",
        "--network", "--network-args", "--security", "--app", "-S", "--scratch", "--mount", "--hostname"}))),
    "shifter": (False, frozenset({"--image", "-V", "--volume", "-e", "--env", "-m", "--module", "-w", "--workdir",
                                  "--entrypoint", "--env-file"})),
}


def _yaml_value(col: Collector, pos: _Positions, value) -> None:
    """A multi-line string that is a YAML document of nested keys (RAPIDS' shared-workflows `export MATRIX="
    conda-cpp-build: pull-request: - { ARCH: 'amd64', CUDA_VER: '12.9.2', ... }"`, which the step hands to `yq` as
    the CI build matrix; tp40): read by the config reader in its place, as a here-document config is. A one-line
    string, a command line or a message (no key holding a mapping or a list) is not one."""
    if value.start_point[0] == value.end_point[0]:
        return
    import yaml

    from auditor.project.configs import scan_config_roots   # configs reads CI `run:` blocks through here

    row, byte_col = value.start_point
    start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + 1
    text = "\n" * row + " " * start + value.text.decode("utf-8", errors="replace")[1:-1]
    try:
        root = yaml.compose(text.replace("\t", " "), Loader=yaml.SafeLoader)
    except yaml.YAMLError:
        return
    if isinstance(root, yaml.MappingNode) and any(isinstance(v, (yaml.MappingNode, yaml.SequenceNode))
                                                  for _, v in root.value):
        scan_config_roots(col, [root])


# sbatch's resource options (https://slurm.schedmd.com/sbatch.html, "OPTIONS"), as the keys of a dict of Slurm
# settings a script hands to a submitter (NSVF's `export SLURM_ARGS` holding `{'partition': ..., 'gpus': 8,
# 'constraint': 'volta32gb'}`, turned into `sbatch --gres gpu:volta:8 -C volta32gb` by its launch_slurm.py), and
# submitit's names of the same resources (`gpus_per_node`, `tasks_per_node`, `timeout_min`, `mem_gb`; `slurm_*`).
# `-` and `_` spellings are one key (setting_path). sbatch's output / mail / dependency options are left out: a
# payload's `"output"` or `"comment"` says nothing of a job
_SBATCH_RESOURCES = frozenset({
    "account", "constraint", "cpus_per_gpu", "cpus_per_task", "exclude", "exclusive", "gpu_bind", "gpu_freq", "gpus",
    "gpus_per_node", "gpus_per_socket", "gpus_per_task", "gres", "job_name", "mem", "mem_per_cpu", "mem_per_gpu",
    "nodelist", "nodes", "ntasks", "ntasks_per_node", "partition", "qos", "reservation", "time", "time_min",
    "tasks_per_node", "timeout_min", "mem_gb"})
_SCHEDULER_KEYS_NEEDED = 2      # keys of sbatch's resources before a dict counts as a job's settings


def _slurm_key(key: str) -> str:
    path = setting_path(key.strip().lower())
    return path[len("slurm_"):] if path.startswith("slurm_") else path


def _scheduler_option_dict(col: Collector, m, pos: _Positions, node) -> None:
    """A quoted dict of Slurm options (`'gpus': 8`, `'constraint': 'volta32gb'`): each pair is the sbatch option of
    its key, read as `--gpus=8` / `--constraint=volta32gb` are on an `#SBATCH` line, on the key's own line. A dict
    needs two or more keys that are sbatch's resources (a JSON payload's `"gpus"` alone is no job)."""
    text = node.text.decode("utf-8", errors="replace")[1:-1]       # inside the quotes
    body = text.strip()
    if not (body.startswith("{") and body.endswith("}")):
        return      # a dict literal: `{'k': v, ...}` (Python) or `{"k": v}` (JSON), its keys read from the parse
    try:
        parsed = ast.parse(body, mode="eval").body
    except (SyntaxError, ValueError):
        return
    if not isinstance(parsed, ast.Dict):
        return
    pairs = [(k, k.value, v) for k, v in zip(parsed.keys, parsed.values) if isinstance(k, ast.Constant)
             and isinstance(k.value, str) and _slurm_key(k.value) in _SBATCH_RESOURCES]
    if len(pairs) < _SCHEDULER_KEYS_NEEDED:
        return
    lead = text[:len(text) - len(text.lstrip())]
    row = node.start_point[0] + lead.count("\n")
    # the body's first line starts after the quote (and any blanks); a later line at its own first column
    first = pos.at(node.start_point)[1] + 1 + len(lead) if "\n" not in lead else len(lead.rsplit("\n", 1)[1]) + 1
    rows = body.encode("utf-8").split(b"\n")
    for key, name, value in pairs:
        if not isinstance(value, ast.Constant) or isinstance(value.value, bool) \
                or not isinstance(value.value, (str, int, float)):
            continue
        setting = str(value.value)
        rule = option_setting(m, _slurm_key(name), setting)
        if rule is None:
            continue
        before = len(rows[key.lineno - 1][:key.col_offset].decode("utf-8", errors="replace"))
        c = (first if key.lineno == 1 else 1) + before
        col.add(rule, f"{name}: {setting}", row + key.lineno, c, c + len(repr(name)), value=setting)


def _runner_option(col: Collector, m, pos: _Positions, runner: str, option: str, node) -> None:
    """One option of a container runner whose command is read on its own (`singularity exec --nv ...`, `shifter
    --module=gpu ...`): its command pattern (`singularity --nv`) or its setting (`module=gpu`), as the option loop of
    `_command` reads a program's options."""
    line, c = pos.at(node.start_point)
    word = node.text.decode("utf-8", errors="replace")
    rule = m.match_command(f"{runner} {option}")
    if rule is not None:
        col.add(rule, f"{runner} {option}", line, c, c + len(word))
        return
    key, _, value = option.partition("=")
    if key.startswith("--") and len(key) > 2:
        setting = option_setting(m, setting_path(key), value or "true")
        if setting is not None:
            col.add(setting, f"{key} {value}".strip(), line, c, c + len(word), value=value or "true")


def _multi_process_vars(root) -> set[str]:
    """The variables expanded inside a command that srun / mpirun runs once per task (`srun ... bash -c "source
    export_DDP_vars.sh && $cmd"`, NERSC's nersc-dl-wandb)."""
    out: set[str] = set()
    for node in _walk(root):
        first = node.child_by_field_name("name") if node.type == "command" else None
        if first is not None and _word(first).rsplit("/", 1)[-1] in ("srun", "mpirun", "mpiexec"):
            out |= {c.text.decode() for n in _walk(node) if n.type in ("simple_expansion", "expansion")
                    for c in n.children if c.type == "variable_name"}
    return out


def _expansion_between(command, before, after) -> bool:
    """Whether a variable or command substitution stands between two word nodes of a command."""
    return any(c.type in ("expansion", "simple_expansion", "command_substitution")
               and before.end_byte <= c.start_byte < after.start_byte for c in command.children)


def _gpu_run_image(col: Collector, m, pos, words: list[str], nodes: list, command) -> None:
    """`docker run --gpus all ... windj007/lama /home/user/project/bin/predict.py`: the image started with NVIDIA
    GPUs is the CUDA stack the container runs on (lama's project image, built on nvidia/cuda), a line a port
    changes with the `--gpus` option (t15t). An image whose name already says CUDA is NPU016's."""
    gpus, i = words[0].rsplit("/", 1)[-1] == "nvidia-docker", 2
    while i < len(words) and words[i].startswith("-"):
        option = words[i]
        joined = option + ("=" + words[i + 1] if "=" not in option and i + 1 < len(words) else "")
        gpus = gpus or _RUN_GPUS_RE.match(joined) is not None
        takes_value = "=" not in option and option not in _RUN_FLAGS and not _RUN_SHORT_FLAGS_RE.fullmatch(option)
        # `--workdir $CPATH --ipc host`: a value held in a variable is no word; the next word is the next option
        held = i + 1 < len(words) and _expansion_between(command, nodes[i], nodes[i + 1])
        i += 2 if takes_value and not held else 1
    if not gpus or i >= len(words) or not re.fullmatch(r"[\w.-]+(?:[:/][\w.@:/-]+)*", words[i]):
        return                                  # no GPUs asked, or the image held in a variable
    if _expansion_between(command, nodes[i - 1], nodes[i]):
        return                                  # `${{ parameters.docker_image }} bash ...`: the image is a variable
    image = words[i]
    line, c = pos.at(nodes[i].start_point)
    if (rule := m.match_image(image)) is not None:
        if ":" not in image:
            # `nvcr.io/nvidia/pytorch` with no tag (the latest; OmniIsaacGymEnvs' `nvcr.io/nvidia/4.0.0`): the text
            # scan reads tagged references only, so the image argument is reported here (tp41)
            col.add(rule, image, line, c, c + len(image))
        return                                  # `nvidia/cuda:12.1.0-base`: the image rules report it
    col.add(m.match_requirement("gpu-run-image:" + image.lower()), image, line, c, c + len(image))


# `OPTIONS_NCCL="NCCL_DEBUG=info NCCL_IB_DISABLE=0 LOCAL_WORLD_SIZE=$N"`, later `run_cmd="${OPTIONS_NCCL} deepspeed
# ..."`: a string that starts with environment assignments is a command prefix kept for later (CogVLM, SAT scripts)
_ENV_LIST_RE = re.compile(r"\s*(?:[A-Z_][A-Z0-9_]*=[^\s=]*(?:\s+|$))+")
_ENV_ITEM_RE = re.compile(r"([A-Z_][A-Z0-9_]*)=")
# CI logging commands that set a variable for the later steps (Azure Pipelines `##vso[task.setvariable
# variable=NAME]value`, GitHub's old `::set-env name=NAME::value`): an environment setting written by `echo`
_CI_SET_VARIABLE_RE = re.compile(r"##vso\[task\.setvariable\s+(?:[^\]]*;\s*)?variable=([A-Za-z_]\w*)|::set-env\s+name=([A-Za-z_]\w*)::")


_CPU_RUN_RE = re.compile(r"(?<!\S)--(?:accelerator|device)[= ]cpu(?!\S)")
# qlora's `--quant_type nf4` / `--double_quant`; LLaVA's trainer (and its forks: Video-LLaVA, ShareGPT4V, ...)
# loads the model with bitsandbytes when `--bits 4` / `8` comes with `--lora_enable True` (its QLoRA scripts, t15j);
# a GPTQ / AWQ quantizer's `--bits 4` has neither
_BNB_CONTEXT_RE = re.compile(r"(?<!\S)--(?:bnb_4bit_)?quant_type[= ](?:nf4|fp4)(?!\S)|(?<!\S)--double_quant(?!\S)"
                             r"|(?<!\S)--lora_enable[= ](?:True|true|1)(?!\S)")


def _expanded_outside_messages(pos: "_Positions", value) -> bool:
    """Whether the variable a value is assigned to is expanded on a line that is no `echo` / `printf` (a command held
    in it is run, spliced into another command, ...; only printed, it sets nothing: pd14)."""
    name = value.parent.child_by_field_name("name") if value.parent is not None else None
    if name is None:
        return False
    ref = re.compile(rb"\$\{?" + re.escape(name.text) + rb"(?!\w)")
    return any(ref.search(line) and not re.match(rb"\s*(?:echo|printf)\b", line)
               for n, line in enumerate(pos.lines) if n != value.start_point[0])


def _env_list(col: Collector, pos: "_Positions", value) -> None:
    """Each `NAME=value` of a string made only of environment assignments, as if the command it prefixes set it."""
    text = value.text.decode("utf-8", errors="replace")
    body = text[1:-1] if len(text) >= 2 and text[0] == text[-1] and text[0] in "\"'" else ""
    if "=" not in body:
        return
    if not _ENV_LIST_RE.fullmatch(body):
        # `ACTOR_BINARY="CUDA_VISIBLE_DEVICES='' python3 ../agent_main.py --run_mode=actor"`: a command line held in a
        # variable, whose environment prefix is set for the program it runs (tp44b)
        held = _ENV_LIST_RE.match(body)
        if held is None or not _SCRIPT_RUN_RE.match(body, held.end() - 1) or not _expanded_outside_messages(pos, value):
            return
        body = held.group(0)
    row, byte_col = value.start_point
    first = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + 2    # 1-based, past the quote
    for item in re.finditer(r"\S+", body):
        name = _ENV_ITEM_RE.match(item.group(0))
        before = body[:item.start()]
        if name is None:
            continue
        ln = row + 1 + before.count("\n")
        c = first + item.start() if "\n" not in before else item.start() - before.rfind("\n")
        col.env(name.group(1), ln, c)


def _ci_set_variable(col: Collector, pos: "_Positions", node) -> None:
    """`echo "##vso[task.setvariable variable=CUDA_VISIBLE_DEVICES]$(DEVICES)"`: the step sets that variable."""
    text = node.text.decode("utf-8", errors="replace")
    if "##vso[" not in text and "::set-env" not in text:
        return
    row, byte_col = node.start_point
    start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + 1
    for hit in _CI_SET_VARIABLE_RE.finditer(text):
        group = 1 if hit.group(1) else 2
        before = text[:hit.start(group)]
        ln = row + 1 + before.count("\n")
        c = start + hit.start(group) if "\n" not in before else hit.start(group) - before.rfind("\n")
        col.env(hit.group(group), ln, c)


# `echo "MATRIX_CUDA_VERSION=..." >> $GITHUB_ENV`: a GitHub Actions step writing a variable for the later steps
# (or `echo base=nvidia/cuda:... >> $GITHUB_OUTPUT`: a step output the later steps read as `steps.<id>.outputs.base`)
_GITHUB_ENV_RE = re.compile(r">>?\s*\"?\$\{?GITHUB_(?:ENV|OUTPUT)\}?\"?")
_ENV_FILE_ITEM_RE = re.compile(r"([A-Za-z_]\w*)=(.*)", re.DOTALL)


def _github_env_write(col: Collector, m, pos: "_Positions", node) -> None:
    """`echo "MATRIX_CUDA_VERSION=$(echo ${{ matrix.cuda-version }} | awk ...)" >> $GITHUB_ENV`: the step sets a
    variable as an assignment would; a CUDA version so derived is the build parameter of the later install steps
    (t15o)."""
    holder = node.parent
    if holder is None or holder.type != "redirected_statement" or \
            not _GITHUB_ENV_RE.search(holder.text[node.end_byte - holder.start_byte:].decode("utf-8", "replace")):
        return
    args = [c for c in node.children if c.type in ("word", "string", "raw_string", "concatenation")
            and c.type != "command_name" and c.start_byte > node.children[0].end_byte]
    if len(args) != 1:
        return
    item = _ENV_FILE_ITEM_RE.fullmatch(_word(args[0]))
    if item is None:
        return
    line, c = pos.at(args[0].start_point)
    image = item.group(2).strip()
    held = _VARIABLE_REF_RE.fullmatch(image)
    if held is not None:
        # `echo "BASE_IMAGE=$GPU_BASE_IMAGE" >> $GITHUB_ENV`: the image a variable of the script or the workflow's
        # `env:` holds (tp46b, nebari-docker-images)
        image = _literal_var(col, held)
    if re.fullmatch(r"[\w.-]+(?:/[\w.${}-]+)+:\S+", image) and (rule := m.match_image(image)) is not None:
        # `echo base=nvidia/cuda:${{ matrix.cuda }}-cudnn...-runtime-ubuntu... >> $GITHUB_OUTPUT` (cml's images
        # workflow, tp40): the CUDA base image a later `docker build --build-arg BASE_IMAGE=...` step builds on
        at = c + (args[0].type in ("string", "raw_string")) + len(item.group(1)) + 1
        col.add(rule, image, line, at, at + len(item.group(2).strip()))
        return
    if not item.group(1).upper().endswith("_VERSION"):
        return
    _cuda_version_parameter(col, m, item.group(1), item.group(2), line, c + (args[0].type in ("string", "raw_string")))


# files whose `NAME=value` lines a launcher or runtime exports into the processes it starts: DeepSpeed's
# ~/.deepspeed_env (or ./.deepspeed_env; https://www.deepspeed.ai/getting-started/, "Multi-node Environment
# Variables"), and the environment file an enroot hook writes for the container (`>> "${ENROOT_ENVIRON}"`; enroot's
# docs/configuration.md: hooks "can also export environment variables by writing to ENROOT_ENVIRON"; tp44a)
_ENV_FILE_RE = re.compile(r">>?\s*\"?(?:(?:~|\$\{?HOME\}?|\.)?/?\.deepspeed_env\"?(?![\w.])|\$\{?ENROOT_ENVIRON\}?\"?(?!\w))")


def _env_file_write(col: Collector, pos: "_Positions", node) -> None:
    """`echo "NCCL_P2P_DISABLE=1" > ~/.deepspeed_env`, `printf "NCCL_COLLNET_ENABLE=1\\n" >> "${ENROOT_ENVIRON}"`: the
    variable is set for every process the launcher (or the container) starts, as an `export` would set it (pd6,
    minRF; tp44a, enroot's hooks); reported by the same environment rules. printf's format is the first argument,
    its `%s` filled from the next one."""
    holder = node.parent
    if holder is None or holder.type != "redirected_statement" or \
            not _ENV_FILE_RE.search(holder.text[node.end_byte - holder.start_byte:].decode("utf-8", "replace")):
        return
    args = [c for c in node.children if c.type in ("word", "string", "raw_string", "concatenation")
            and c.start_byte > node.children[0].end_byte]
    printf = node.children[0].text == b"printf"
    if not args or len(args) != 1 and not printf:
        return
    text = _word(args[0])
    if printf:
        text = re.sub(r"(?:\\n)+$", "", text)
    item = _ENV_FILE_ITEM_RE.fullmatch(text)
    if item is None:
        return
    value = item.group(2)
    if printf and "%" in value:
        value = _word(args[1]) if len(args) > 1 and value == "%s" else None
    line, c = pos.at(args[0].start_point)
    col.env(item.group(1), line, c + (args[0].type in ("string", "raw_string")), value=value)


# a script or login-shell file that a later process runs: `>> $SCRIPT` (SCRIPT="${ROOT}/${JOB}.sh"), `> job.slrm`,
# `>> ~/.bashrc`, `>> /etc/profile`, `/etc/profile.d/cuda.sh`, `/etc/environment`
_SCRIPT_FILE_RE = re.compile(r"(?:\.(?:sh|bash|slrm|slurm|sbatch)|(?:^|/)\.(?:bashrc|bash_profile|profile|zshrc)|"
                             r"^/etc/(?:profile|bash\.bashrc|environment))$")
_WRITTEN_EXPORT_RE = re.compile(r"(?:^|[;&|\s])export\s+([A-Za-z_]\w*)=")
_ALL_ARGS = {b"$@", b'"$@"', b"$*", b'"$*"'}


def _redirect_target(node) -> str | None:
    """Where `echo ... > FILE` / `>> FILE` writes (the file's word, quotes removed); None when not redirected."""
    holder = _redirect_holder(node)
    if holder is None or holder.type != "redirected_statement":
        return None
    for redirect in holder.children:
        dest = redirect.child_by_field_name("destination") if redirect.type == "file_redirect" else None
        if dest is not None and dest.type != "number":
            return _word(dest)
    return None


def _appender_functions(tree) -> dict[bytes, str]:
    """Functions whose whole body appends their arguments to a file (`print_append() { echo $@ >> $SCRIPT; }`):
    {name: the file's word}. A call writes its arguments into that file, as the echo would."""
    found = {}
    for node in _walk(tree.root_node):
        if node.type != "function_definition":
            continue
        name, body = node.child_by_field_name("name"), node.child_by_field_name("body")
        statements = [c for c in body.named_children if c.type != "comment"] if body is not None else []
        if name is None or len(statements) != 1 or statements[0].type != "redirected_statement":
            continue
        command = statements[0].child_by_field_name("body")
        if command is None or command.type != "command":
            continue
        words = command.named_children
        if words and words[0].text in (b"echo", b"printf") and words[1:] and all(w.text in _ALL_ARGS for w in words[1:]):
            target = _redirect_target(command)
            if target:
                found[name.text] = target
    return found


def _written_exports(col: Collector, pos: "_Positions", node, appenders: dict[bytes, str]) -> None:
    """`echo "export NCCL_DEBUG=INFO" >> $SCRIPT`, `print_append "export NCCL_DEBUG=INFO"` (an appender function): a
    launcher that writes another launcher; the export sets the variable when the written script runs (pd46,
    lang-seg's sbatch_run.sh, which then `sbatch`es it). Only into a script or login-shell file."""
    name = node.child_by_field_name("name")
    target = appenders.get(name.text) if name.text in appenders else _redirect_target(node)
    variable = re.fullmatch(r"\$\{?(\w+)\}?", target or "")
    if variable:
        target = col.script_vars.get(variable.group(1), "")
    if not target or not _SCRIPT_FILE_RE.search(target.rstrip("\"'")):
        return
    for arg in node.named_children[1:]:
        if arg.type not in ("string", "raw_string", "word", "concatenation") or arg.start_point[0] != arg.end_point[0]:
            continue
        line, c = pos.at(arg.start_point)
        quoted = arg.type in ("string", "raw_string")
        for found in _WRITTEN_EXPORT_RE.finditer(_word(arg)):
            col.env(found.group(1), line, c + quoted + found.start(1))


# a local version tag made of a CUDA version variable: `TORCH_VERSION_SUFFIX="+$CU_VERSION"`, `+cu${CUDA_MM}`
_CUDA_TAG_REF_RE = re.compile(r"\+(?:cu)?\$\{?(\w+)\}?")


# pip's and uv's own environment variables for the package index: `ENV UV_INDEX=https://download.pytorch.org/whl/cu128`,
# `export PIP_EXTRA_INDEX_URL=...` is `--index-url` / `--extra-index-url` given to every later install
INDEX_ENV_NAMES = frozenset({"PIP_INDEX_URL", "PIP_EXTRA_INDEX_URL", "PIP_FIND_LINKS", "UV_INDEX", "UV_INDEX_URL",
                             "UV_EXTRA_INDEX_URL", "UV_DEFAULT_INDEX", "UV_FIND_LINKS"})


# a script's variable that a pip / uv index option reads (`--extra-index-url ${PYTORCH_EXTRA_INDEX}`, tp44b)
_INDEX_VAR_READ_RE = re.compile(r"(?<![\w-])(?:--(?:extra-)?index-url|--find-links|-i|-f)(?:=|[ \t]+)[\"']?"
                                r"\$\{?([A-Za-z_]\w*)\}?")


def _held_index_url(root, name: str, value: str) -> bool:
    """A variable holding one package-index URL (`https://download.pytorch.org/whl/cu126`) that a later command expands
    as an argument (`--build-arg PYTORCH_DEPS=${PYTORCH_DEPS}`), not only a message (`echo "see ${DOCS_URL}"`)."""
    url = value.strip("\"'")
    if not url.startswith(("https://", "http://")) or any(ch.isspace() for ch in url):
        return False
    for node in _walk(root):
        if node.type in ("simple_expansion", "expansion") and any(
                c.type == "variable_name" and c.text.decode("utf-8", "replace") == name for c in node.children):
            command = node.parent
            while command is not None and command.type != "command":
                command = command.parent
            program = command.child_by_field_name("name") if command is not None else None
            if program is not None and not _in_message(node):
                return True
    return False


def index_env(col: Collector, m, name: str, value: str, line: int, c: int,
              names: frozenset[str] = INDEX_ENV_NAMES) -> bool:
    """An index variable (INDEX_ENV_NAMES, or names: a script's own variables an index option reads) set to a CUDA
    wheel index: the `index:` finding the option would get, at the value. Returns whether it was one of those
    variables."""
    if name.upper() not in names:
        return False
    for url in value.split():                   # pip reads several URLs separated by blanks
        url = url.strip("\"'")
        rule = m.match_requirement("index:" + url) if "://" in url else None
        if rule is not None:
            text = col.lines[line - 1] if 0 < line <= len(col.lines) else ""
            at = text.find(url, max(c - 1, 0))
            col.add(rule, "index:" + url, line, at + 1 if at >= 0 else c, (at + 1 if at >= 0 else c) + len(url))
    return True


# a probe of whether a program is installed (`if hash nvidia-docker 2>/dev/null; then`, `command -v X`, `which X`)
_PROBE_RE = re.compile(r"\b(?:hash|command\s+-v|which|type)\s+(\S+)")


# `${SERVER:=/opt/tritonserver/bin/tritonserver}`: a parameter's default path; `${TRITON_DIR}/bin/...`: a path under a
# folder a variable names
_PATH_DEFAULT_RE = re.compile(r"\$\{\w+:?[-=]([^${}]+)\}")
_VARIABLE_PREFIX_RE = re.compile(r"^\$\{?\w+\}?")


def _program_variable(col: Collector, m, pos: _Positions, tree, name: str, value) -> None:
    """`cmd=nvidia-docker`, then `NV_GPU="$GPU" ${cmd} run ...` (pymarl's run.sh, t26c): a variable that holds the
    program a later command runs is that program's choice, reported where the name is written. Assigned inside a
    branch that first probes for the program (`if hash nvidia-docker`), the script falls back to the other branch where
    it is missing: the container then starts without an accelerator (warning, not error)."""
    program = _word(value)
    default = _PATH_DEFAULT_RE.fullmatch(program)
    held_path = default.group(1) if default else _VARIABLE_PREFIX_RE.sub("", program)
    runs = _runs_variable(tree.root_node, name)
    if "/" in held_path and re.fullmatch(r"[\w./+-]+", held_path) and "/bin/" in f"/{held_path}":
        rule = m.match_command(held_path)
        if rule is not None and not runs and rule.extra.get("held_path"):
            # `SERVER=${TRITON_DIR}/bin/tritonserver`, `SERVER=${SERVER:=/opt/tritonserver/bin/tritonserver}` (Triton's
            # QA scripts, run by the sourced util.sh's run_server): the installed program's path, held for a later
            # command of another script; only for the rules that say so (`extra: held_path`): `CUDACXX=.../nvcc`,
            # `SMI=/usr/bin/nvidia-smi` name a program no command of the script may run (review46 item 1)
            line, c = pos.at(value.start_point)
            col.add(rule, held_path.rsplit("/", 1)[-1], line, c, c + len(program),
                    note=" (the path of a program held in a variable that a command runs)")
            return
        program = held_path
    rule = m.match_command(program) if re.fullmatch(r"[\w./+-]+", program) else None
    if rule is None or not runs:
        return
    probed = False
    node = value.parent
    while node is not None and not probed:
        if node.type in ("if_statement", "elif_clause"):
            condition = node.child_by_field_name("condition")
            text = (condition or node).text.decode("utf-8", errors="replace").split("then", 1)[0]
            probed = any(p.rsplit("/", 1)[-1] == program.rsplit("/", 1)[-1] for p in _PROBE_RE.findall(text))
        node = node.parent
    line, c = pos.at(value.start_point)
    col.add(rule, program, line, c, c + len(program), severity="warning" if probed else None,
            note=" (a program held in a variable the script runs; chosen only where it is installed)" if probed
            else " (a program held in a variable the script runs)")


def _subcommand_after_break(option, following, word: str) -> bool:
    """A flag that ends its line (`--faiss_on_gpu \\`) before a bare name on the next (`dataset --resize 366`, a
    click subcommand of patchcore's launches, t26c): the name is the next part of the command, not the flag's value
    (unless the pair means something as option and value: `--runtime \\` / `nvidia`)."""
    return following.start_point[0] > option.end_point[0] and re.fullmatch(r"[A-Za-z_]\w*", word) is not None \
        and word.lower() not in ("true", "false", "yes", "no", "on", "off", "none")


def _option_matches(m, program: str, option: str) -> bool:
    """Whether `--key=value` on `program`'s line means something to a rule (`docker --runtime=nvidia`, `--device cuda`)."""
    key, _, value = option.partition("=")
    path = setting_path(key)
    return m.match_command(f"{program} {option}") is not None or (key.startswith("--") and (
        m.match_setting(path, value) is not None or cli_setting(m, path, value) is not None))


def _runs_variable(root, name: str) -> bool:
    """Whether some command of the script runs the program held in `name` (`${cmd} run`, `$DOCKER build`), also
    through a command line held in another variable that a command runs (BVLC Caffe's train_lenet_docker.sh:
    `DOCKER_RUN="$DOCKER_CMD run $DOCKER_OPTIONS $IMAGE"`, then `$DOCKER_RUN ./build/tools/caffe train ...`)."""
    names, held_lines = {name}, []
    for node in _walk(root):
        if node.type == "command":
            first = node.child_by_field_name("name")
            if first is not None and (ref := _VARIABLE_REF_RE.fullmatch(_word(first))):
                held_lines.append(ref.group(1))
        elif node.type == "variable_assignment" and (value := node.child_by_field_name("value")) is not None \
                and (target := node.child_by_field_name("name")) is not None:
            # `DOCKER_RUN="$DOCKER_CMD run ..."`: a command line whose first word is the held program
            words = _word(value).strip("\"'").split(maxsplit=1)
            head = _VARIABLE_REF_RE.fullmatch(words[0]) if words else None
            if head is not None and head.group(1) == name:
                names.add(target.text.decode())
    return any(run in names for run in held_lines)


# a variable holding the extras an install asks for (`OUMI_EXTRAS`, `EXTRAS_LIST`, `PIP_EXTRAS`, `EXTRAS`) and a value
# that is only extra names (`[gpu]`, `gpu`, `cuda,dev`)
_EXTRAS_VARIABLE_RE = re.compile(r"(?:\w+_)?EXTRAS?(?:_LIST)?")
_EXTRA_NAMES_RE = re.compile(r"\[?[A-Za-z0-9][\w.-]*(?:\s*,\s*[A-Za-z0-9][\w.-]*)*\]?")


# a node label of NVIDIA's GPU feature discovery with its value (`nvidia.com/gpu.product:NVIDIA-H100-80GB-HBM3`)
_GPU_NODE_LABEL_RE = re.compile(r"(nvidia\.com/gpu\.[a-z.-]+)[:=](\S+)")


def _assignment_setting(col: Collector, m, name: str, value, line: int, c: int) -> None:
    """`DIST_BACKEND=nccl`, `export ACCELERATOR=${ACCELERATOR:-"GPU"}`: a script's variable that the launch line
    passes on is the same setting a config would hold (its default, for `${X:-default}`)."""
    if value is not None and value.type in ("word", "string", "raw_string", "concatenation") \
            and index_env(col, m, name, _word(value), line, c):
        return
    selector = _GPU_NODE_LABEL_RE.fullmatch(_word(value).strip("\"'")) if value is not None else None
    if selector:
        # `LLMDBENCH_VLLM_COMMON_AFFINITY=nvidia.com/gpu.product:NVIDIA-H100-80GB-HBM3`: a node selector on GPU
        # feature discovery's label, written `key:value` (or `key=value`) for the pods the script deploys (tp44a)
        col.add(m.match_setting(f"nodeselector.{selector.group(1)}", selector.group(2)), f"{name}={_word(value)}",
                line, c, c + len(name))
        return
    if value is not None and _EXTRAS_VARIABLE_RE.fullmatch(name.upper()) and _EXTRA_NAMES_RE.fullmatch(_word(value)):
        # `OUMI_EXTRAS="[gpu]"` then `uv pip install "oumi${OUMI_EXTRAS}"`, `EXTRAS_LIST="gpu"` then
        # `PACKAGE="oumi[$EXTRAS_LIST]"` (oumi's Dockerfile and install.sh, tp38): the extras an install asks for,
        # read by name as `pip install oumi[gpu]` is
        names = [e for e in re.split(r"[\s,]+", _word(value).strip("[]")) if e]
        for symbol, _, rule, note in extra_hits(m, names, "the installed project"):
            col.add(rule, symbol, line, c, c + len(name), note=note)
        return
    tag = _CUDA_TAG_REF_RE.fullmatch(_word(value)) if value is not None else None
    if tag is not None and _cuda_version_name(tag.group(1)):
        # `export TORCH_VERSION_SUFFIX="+$CU_VERSION"`: the wheel's CUDA local tag, the same build parameter (t15o)
        rule = m.match_setting("cuda_version", _word(value))
        if rule is not None and rule.code == "NPU018":
            col.add(rule, f"{name}={_word(value)}", line, c, c + len(name), severity="info",
                    note=" (a build parameter: the CUDA tag of the wheel a build step installs)")
        return
    if value is not None and name.upper().endswith("_VERSION"):
        _cuda_version_parameter(col, m, name, _word(value) if value.type != "expansion" else value.text.decode(
            "utf-8", errors="replace"), line, c)
    if value is not None and _cuda_version_name(name) and _CUDA_RELEASE_RE.fullmatch(_word(value)) \
            and not _NOT_A_RELEASE_RE.search(name.upper()) and m.match_setting(name.lower(), _word(value)) is None:
        # `export CUDA_SHORT=10.1` (the CUDA install scripts of pytorch_scatter and its sibling libraries, r2c): a
        # variable named for CUDA that holds a CUDA release is the same build parameter as `CUDA_VERSION=10.1`
        rule = m.match_setting("cuda_version", _word(value))
        if rule is not None and rule.code == "NPU018":
            col.add(rule, f"{name}={_word(value)}", line, c, c + len(name), severity="info",
                    note=" (a build parameter: the CUDA version a build step installs)")
        return
    if value is not None and value.type == "command_substitution" and _cuda_version_name(name) \
            and name.upper().endswith(("_VERSION", "_VER")) and not _NOT_A_RELEASE_RE.search(name.upper()) \
            and _MANIFEST_READ_RE.match(value.text.decode("utf-8", errors="replace")):
        # `CUDA_DRIVER_VERSION=$(jq -r '.driver.version' <<< $cuda_metadata)` (azhpc-images' versions file): the
        # CUDA version the build installs, read from the image's version manifest instead of written here (tp44a)
        rule = m.match_setting("cuda_version", "")
        if rule is not None and rule.code == "NPU018":
            col.add(rule, name, line, c, c + len(name), severity="info",
                    note=" (a build parameter: the CUDA version read from the build's version manifest)")
        return
    if value is None or name.upper().endswith("_VERSION"):
        return       # other versions: the build steps that install them have their own findings
    quoted_default = value.type == "string" and re.fullmatch(r'"\$\{\w+:?[-=][^${}"]*\}"', value.text.decode(
        "utf-8", errors="replace")) is not None      # `PYTORCH_CUDA="${SEARCH_R1_PYTORCH_CUDA:-12.1}"` (pd37)
    if value.type == "expansion" or quoted_default:
        text = value.text.decode("utf-8", errors="replace").strip('"')
        default = re.fullmatch(r"\$\{\w+:?[-=](.*)\}", text, re.DOTALL)
        if default is None:
            return
        literal = default.group(1).strip("\"'")
    elif value.type in ("word", "string", "raw_string", "number") or (
            value.type == "concatenation" and b"$" in value.text):     # `cu${CUDA_MM}`, read below
        literal = _word(value)
    else:
        return
    if "," in literal and "=" in literal:
        vline = value.start_point[0] + 1
        text = col.lines[vline - 1] if vline <= len(col.lines) else ""
        at = text.find(literal)
        if at >= 0:
            _key_values(col, m, literal, vline, at + 1)      # MODEL_ARGS="model_name=$M,dtype=bfloat16,..."
        return
    shown = literal
    if "$" in literal and "/" not in literal:
        # `UV_TORCH_BACKEND=cu${CUDA_VERSION_MM}`: the literal part still says which build (`cu...`); a value
        # that is only a variable (`DEVICE=$1`) says nothing
        literal = re.sub(r"\$\{?\w+\}?", "", literal).strip("\"'")
        if not re.match(r"[A-Za-z]{2}", literal):
            return
    if not literal or "$" in literal or "/" in literal:
        return       # a URL or a path (`FLASH_ATTN_URL=https://...`) names where something is, not a setting
    rule = m.match_setting(name.lower(), literal)
    if rule is not None and rule.code in SCHEDULER_REQUESTS and _INDEX_LIST_RE.fullmatch(literal):
        # GPUS_PER_NODE=8: a count the script computes with; the request is the `#SBATCH` / srun option. So is a list
        # of device indices (`gpus="4,5"`, split into each worker's CUDA_VISIBLE_DEVICES: decision 26; tp46a)
        return
    if rule is not None and rule.code == "NPU021" and name.islower() and _option_case_arm(value):
        # `--with-cuda) with_cuda=1 ;;` (llama-gpt's run.sh): the script's own switch for its option, a lower-case
        # shell variable no build reads from the environment; what the script then runs is the finding (lead
        # decision 47; tp42, project test103)
        return
    if rule is not None and rule.code == "NPU018" and _cuda_version_name(name) \
            and _CUDA_VERSION_VALUE_RE.fullmatch(literal) and "$" not in literal:
        # `PYTORCH_CUDA=12.1` then `conda install "pytorch-cuda=$PYTORCH_CUDA"`: the CUDA version the install is made
        # for, a build parameter as `CUDA_VERSION=12.1` is (pd37); the install line is the error
        _cuda_version_parameter(col, m, name, literal, line, c)
    elif rule is not None and rule.code not in {r.code for r in _env_rules(col, name)}:
        col.add(rule, f"{name}={shown}", line, c, c + len(name), value=literal)


def _option_case_arm(node) -> bool:
    """Whether a node sits in a `case` arm whose pattern is a command-line option (`--with-cuda)`, `-g|--gpu)`)."""
    while node is not None and node.type != "case_item":
        node = node.parent
    if node is None:
        return False
    pattern = node.child_by_field_name("value")
    text = (pattern.text if pattern is not None else node.text.split(b")", 1)[0]).decode("utf-8", errors="replace")
    return text.lstrip("\"'(").startswith("-")


# a CUDA release (`10.1`, `12.4.1`), and the CUDA-named variables whose numbers are no release: GPU architectures
# (`CUDA_ARCH=8.6`, compute capabilities), device lists
_CUDA_RELEASE_RE = re.compile(r"1[0-9]\.[0-9]+(?:\.[0-9]+)?")
_NOT_A_RELEASE_RE = re.compile(r"ARCH|CAPAB|COMPUTE|SM_|_SM|DEVICE|VISIBLE")
# a command substitution that reads a key of a JSON / YAML manifest (`$(jq -r '.cuda.version' versions.json)`)
_MANIFEST_READ_RE = re.compile(r"\$\(\s*(?:jq|yq)\s")
# a CUDA version as a build parameter: `12.6`, `12.8.1`, `cu126`, a variable or CI expression passing one on
_CUDA_VERSION_VALUE_RE = re.compile(r"(?:cu(?:da)?-?)?1[0-9](?:\.[0-9]+){0,2}|cu1[0-9]{2}|\$\{?\w+\}?|\$\{\{[^}]*\}\}",
                                    re.IGNORECASE)


# a value computed by a command (`$(...)`, backquotes)
_DERIVED_RE = re.compile(r"\$\(.*\)|`.*`", re.DOTALL)
# ... from a value the script was given (a named variable, a CI expression, the environment): `$(detect_cuda)`
# reads the machine through a function and is left like nvcc
_GIVEN_VALUE_RE = re.compile(r"\$\{?[A-Za-z_]\w*|\$\{\{|\benviron\b|\bgetenv\b")
# ... that asks the machine which CUDA it has: a detection, not a choice (left, t15g)
_MACHINE_QUERY_RE = re.compile(r"\bnvcc\b|nvidia-smi|torch\.version\.cuda|/usr/local/cuda|\bldconfig\b")


# a variable named for the CUDA release itself (`CUDA_VERSION`, `cuda_version`, `CU_VER`, a matrix's `cuda`), not a
# CUDA setting (`CUDA_VISIBLE_DEVICES`, `USE_CUDA`)
_CUDA_RELEASE_NAME_RE = re.compile(r"(?i)^(?:\w*cuda[_-]?(?:ver|version|release|major)|cu[_-]?ver(?:sion)?|cuda)$")


def _run_with_cuda_release(args: list[str], node) -> bool:
    """The arguments after a script run by a shell (`bash -x install.sh ${{ matrix.cuda-version }} ubuntu-20.04`) hold
    a CUDA release's variable as a word of their own; the script's own options (`-x`) come first. `args`: the
    command's words after its name; `node`: the command, whose expansions are read from its own children."""
    words = [w for w in args if not w.startswith("-")]
    if not words or not words[0].endswith((".sh", ".bash")):
        return False
    values = [c.text.decode("utf-8", "replace") for c in node.children[1:]
              if c.type in ("simple_expansion", "expansion", "string")]
    return any((ref := _VARIABLE_REF_RE.fullmatch(w.strip("\"'"))) is not None
               and _CUDA_RELEASE_NAME_RE.match(ref.group(1).rstrip("_")) is not None for w in words[1:] + values)


def _cuda_version_name(name: str) -> bool:
    """A variable named for a CUDA version: `CUDA_VERSION`, `TORCH_CUDA_VERSION`, `CU_VERSION`, `CU_VER`."""
    upper = name.upper()
    return "CUDA" in upper or re.search(r"(?:^|_)CU(?:_|$)", upper) is not None


_CONTAINER_FILE_RE = re.compile(r"(?i)dockerfile|containerfile|compose[\w.-]*\.ya?ml$")


def container_file_reference(col: Collector, m, path: str, line: int, c: int) -> None:
    """A Dockerfile or compose file named for CUDA that a command builds or starts (`docker compose -f
    docker-compose-cuda.yml up`, `docker build -f Dockerfile.cuda`) or a compose service builds (`dockerfile:
    cuda.Dockerfile`): the CUDA variant of the project's containers is chosen here (information: the file's own
    lines are the errors; t15v, dust3r's docker/run.sh and compose file)."""
    name = path.rsplit("/", 1)[-1]
    if "$" in name or not _CONTAINER_FILE_RE.search(name):
        return
    rule = m.match_image(name.lower())
    if rule is not None and rule.code == "NPU016" and "cuda" in name.lower():
        col.add(rule, name, line, c, c + len(path), severity="info",
                note=" (a container file named for CUDA, built or started here)")


_MAJOR_PART_RE = re.compile(r"(?:^|_)MAJOR(?:_|$)")
# `: "${CUDA_MAJOR:=${CUDA_VERSION_MAJOR:-12}}"`: a default the expansion assigns
_ASSIGNED_DEFAULT_RE = re.compile(r"\$\{([A-Za-z_]\w*):?=(.+)\}", re.S)


def _assigned_default(col: Collector, m, pos: "_Positions", node) -> None:
    """`: "${CUDA_MAJOR:=${CUDA_VERSION_MAJOR:-12}}"` (cuTENSOR's install script in jetson-containers): the `:=`
    expansion assigns its default when the variable is unset, as `CUDA_MAJOR=12` would; a CUDA version default is the
    build parameter (tp44b)."""
    found = _ASSIGNED_DEFAULT_RE.fullmatch(node.text.decode("utf-8", errors="replace"))
    if found is not None and _cuda_version_name(found.group(1)):
        line, c = pos.at(node.start_point)
        _cuda_version_parameter(col, m, found.group(1), found.group(2), line, c + 2)


def _cuda_version_parameter(col: Collector, m, name: str, value: str, line: int, c: int) -> None:
    """`CUDA_VERSION=12.6` in a build script, `--build-arg CUDA_VERSION=$CUDA_VERSION`, a CI step's
    `CUDA_VERSION="${{ matrix.cuda }}"`: the CUDA version a build is made for, a build parameter like the
    Dockerfile's `ARG CUDA_VERSION=12.6` (information: the install lines it feeds are the errors). Only names that
    say CUDA; a value that is not a version or a variable passing one (`$(nvcc --version ...)`) is left (t15g).
    t15o: a name with a `CU` part says CUDA too (`CU_VERSION=cu118`, the torchvision / detectron2 packaging
    convention), and a version computed from another one (`$(echo ${{ matrix.cuda-version }} | awk ...)`, a
    `$(python -c ...)` mapping a torch version to its wheel's CUDA tag) is the same parameter; a version read from
    the machine (nvcc, nvidia-smi, torch.version.cuda) stays left."""
    if not _cuda_version_name(name):
        return
    default = re.fullmatch(r"\$\{\w+:?[-=](.*)\}", value.strip("\"'"), re.DOTALL)
    if default is not None:
        value = default.group(1)        # `CU_VERSION=${CU_VERSION:-cu118}`: its default
    derived = _DERIVED_RE.fullmatch(value.strip()) is not None and _GIVEN_VALUE_RE.search(value[1:]) is not None \
        and not _MACHINE_QUERY_RE.search(value)
    if not derived and not _CUDA_VERSION_VALUE_RE.fullmatch(value.strip("\"'")):
        return
    rule = m.match_setting(name.lower(), value)
    if rule is None and _MAJOR_PART_RE.search(name.upper()) and not derived:
        rule = m.match_setting("cuda_version", value)     # `CUDA_MAJOR_VERSION=12`: the CUDA major built for (tp44b)
    if rule is not None and rule.code == "NPU018":
        col.add(rule, f"{name}={value}", line, c, c + len(name), severity="info",
                note=" (a build parameter: the CUDA version a build step installs)")


# the rules a build argument's value can select a variant by: the CUDA device (`GPU=nvidia`) and the NVIDIA runtime
_BUILD_VARIANT_RULES = ("NPU019", "NPU017")


def build_variant(col: Collector, m, name: str, value: str, line: int, c: int) -> None:
    """`--build-arg GPU=nvidia` (qdrant: its Dockerfile's `ARG GPU` picks the `qdrant-gpu-nvidia` stage; tp43), a CI
    step's `build-args: RUNTIME=nvidia` (Chatterbox-TTS-Server: its `ARG RUNTIME` picks the CUDA torch install;
    tp44a): the build makes the NVIDIA variant of a multi-backend image; its FROM / install is the error (info)."""
    rule = m.match_setting(name.lower(), value.strip("\"'"))
    if rule is not None and rule.code in _BUILD_VARIANT_RULES:
        col.add(rule, f"{name}={value}", line, c, c + len(name) + 1 + len(value), severity="info",
                note=" (a build argument: the image variant the build makes)")


def _key_values(col: Collector, m, text: str, line: int, c: int, prefix: str = "") -> None:
    """`pretrained=X,dtype=bfloat16,device=cuda:0`: a comma-separated `key=value` list (lm-eval's and
    lighteval's model arguments, a launcher's `--env` list) holds one setting per pair."""
    for pair in _KEY_VALUE_RE.finditer(text):
        key, value = pair.group(1), pair.group(2)
        if "$" in value:
            continue
        rule = m.match_setting(prefix + key, value)
        if rule is not None:
            col.add(rule, f"{key}={value}", line, c + pair.start(1), c + pair.end(2), value=value)


def _array_options(col: Collector, m, pos: _Positions, node) -> None:
    """`TRAIN_ARGS=(--mixed_precision "bf16" --device cuda:0)`, later `accelerate launch train.py "${TRAIN_ARGS[@]}"`:
    an array of options is read as the command's options, an option's value being the next element."""
    items = [c for c in node.named_children if c.type in ("word", "string", "raw_string", "concatenation")]
    words = [_word(item) for item in items]
    # `TRAIN_ARGS=(--config-name=x train accelerator=gpu)` (DeepForest's cluster script, t32d): the Hydra overrides
    # among the elements, not those that are an option's value (`--name a=b`)
    overrides = [i for i, w in enumerate(words) if not w.startswith("-")
                 and not (i and words[i - 1].startswith("--") and "=" not in words[i - 1])]
    _overrides(col, m, pos, [words[i] for i in overrides], [items[i] for i in overrides])
    for i, item in enumerate(items):
        word = words[i]
        if not word.startswith("--") or "=" in word or i + 1 >= len(items):
            continue                     # `--name=value` in one word: read with the word's own text
        value = _word(items[i + 1])
        if not value or value.startswith("-") or "$" in value:
            continue
        rule = m.match_setting(setting_path(word), value)
        if rule is not None:
            line, c = pos.at(item.start_point)
            col.add(rule, f"{word} {value}", line, c, c + len(word), value=value)


def _loop_values(col: Collector, m, pos: _Positions, node) -> None:
    """`for PRECISION in fp8 bf16; do ... done`: each listed word is a value the loop variable takes, the same
    setting as `PRECISION=fp8`."""
    var = next((c for c in node.children if c.type == "variable_name"), None)
    if var is None:
        return
    for value in node.children:
        if value.type in ("word", "string", "raw_string", "number") and value.start_byte > var.end_byte:
            literal = _word(value)
            if literal and "$" not in literal and "/" not in literal:
                line, c = pos.at(value.start_point)
                rule = m.match_setting(var.text.decode().lower(), literal)
                col.add(rule, f"{var.text.decode()}={literal}", line, c, c + len(value.text), value=literal)


def _comparison(col: Collector, m, pos: _Positions, node) -> None:
    """`[[ "$DEVICE" == "cuda" ]]`, `[ "$BACKEND" = nccl ]`: a branch on the variable holding that setting."""
    sides = [c for c in node.children if c.is_named]
    ops = [c.text for c in node.children if not c.is_named]
    if len(sides) != 2 or not any(op in (b"=", b"==", b"!=") for op in ops):
        return
    for var_side, literal_side in (sides, sides[::-1]):
        var = next((n for n in _walk(var_side) if n.type == "variable_name"), None)
        if var is None or literal_side.type not in ("word", "string", "raw_string", "extglob_pattern") \
                or b"$" in literal_side.text:
            continue
        # `[[ ${GPU} == cuda* ]]`: a pattern; its fixed head is the value the branch is for (tp43)
        literal = _word(literal_side) if literal_side.type != "extglob_pattern" else \
            literal_side.text.decode("utf-8", errors="replace").rstrip("*")
        if literal.lower() in ("true", "false", "yes", "no", "on", "off", "0", "1", ""):
            return      # `[ "$INSTALL_FLASHATTN" == "true" ]` tests a switch; the step it guards has its own finding
        if literal.lower() == "cpu":
            return      # `[[ "$CUDA_VERSION" == "cpu" ]]` tests for the CPU build, no CUDA setting (tq44b, tensordict)
        rule = m.match_setting(var.text.decode().lower().rstrip("_"), literal)   # a CI expression's padding
        if rule is not None and rule.category == "precision":
            # `[[ "$KV_CACHE_DTYPE" == "fp8" ]]` reads the dtype the user chose (reported where it is set, as a
            # Python comparison against a dtype is); a device compared is the gate that fails on Ascend, kept
            return
        if rule is not None and _caller_argument(node, var.text.decode()):
            return      # `DEVICE=$7` ... `[[ "$DEVICE" == "gpu" ]]`: the caller picks; the arm's commands carry findings
        if rule is not None:
            line, c = pos.at(literal_side.start_point)
            picks = _assigning_arm(node)
            col.add(rule, f"{var.text.decode()} == {literal}", line, c, c + len(literal_side.text), value=literal,
                    **({"severity": "info", "note": _PICKS_NOTE} if picks else {}))
        return


# a script's command-line argument as a bare value: `$7`, `"${1}"`, getopts' `$OPTARG` (no default of the script's own)
_ARGUMENT_RE = re.compile(r"\$(?:\d|\{\d+\}|OPTARG\b|\{OPTARG\})")


def _caller_argument(node, name: str) -> bool:
    """Whether the variable a test compares holds only the script's command-line argument (tp59b, test166's VBx
    `DEVICE=$7` ... `if [[ "$DEVICE" == "gpu" ]]`): the value is the caller's choice, made where the script is run,
    and the test only branches on it (decision 4: uses below the choice are no finding of their own); the commands of
    the GPU arm carry their own findings. A variable the script also assigns a value of its own stays reported."""
    root = node
    while root.parent is not None:
        root = root.parent
    values = [_word(v) for n in _walk(root) if n.type == "variable_assignment"
              and (k := n.child_by_field_name("name")) is not None and k.text.decode() == name
              and (v := n.child_by_field_name("value")) is not None]
    return bool(values) and all(_ARGUMENT_RE.fullmatch(v) for v in values)


_PICKS_NOTE = " (the test of a branch that only sets variables, such as the download URL for that version: it " \
              "installs nothing itself; the commands that use the values are reported where they run)"


def _assigning_arm(node) -> bool:
    """Whether the comparison is the test of an `if` / `elif` arm whose body only assigns variables (tq54b, heldout70:
    FlexFlow's install_cudnn.sh, `elif [[ "$cuda_version" == "10.2" ]]; then CUDNN_LINK=...; CUDNN_TARBALL_NAME=...`,
    which picks the tarball a later `wget "$CUDNN_LINK"` fetches)."""
    test = node.parent
    while test is not None and test.type not in ("test_command", "if_statement", "elif_clause"):
        test = test.parent
    arm = test.parent if test is not None and test.type == "test_command" else None
    if arm is None or arm.type not in ("if_statement", "elif_clause"):
        return False
    body = []
    started = False
    for child in arm.children:
        if child.type == "then":
            started = True
        elif child.type in ("elif_clause", "else_clause", "fi"):
            break
        elif started and child.is_named and child.type != "comment":
            body.append(child)
    return bool(body) and all(child.type == "variable_assignment" for child in body)


def _env_rules(col: Collector, name: str) -> list:
    rule = col.engine.compiled.match_env(name)
    return [rule] if rule is not None else []


# options whose value is text for people or metadata: `docker build --label KEY=VALUE`, `gh release create --notes
# "..."`, `--title`, `git commit --message`: read by nothing at run time
_TEXT_OPTIONS = (b"--label", b"--notes", b"--title", b"--body", b"--message", b"--description", b"--summary")


# `[ ! -L PATH ]`, `[[ -h PATH ]]`: a test of whether PATH is a symbolic link
_LINK_TEST_RE = re.compile(r"\[\[?\s*(?:!\s*)?-[Lh]\s+(\S+)\s*\]\]?")


def _unbraced(word: str) -> str:
    """A path as the shell expands it, spelled one way: `${sopath}/x` and `"$sopath"/x` are `$sopath/x`."""
    return re.sub(r"\$\{(\w+)\}", r"$\1", word.replace('"', "").replace("'", ""))


def _link_guard(node) -> bool:
    """Is this node in the guard of a link the block then makes: `if [ ! -L ${sopath}/libcuda.so ]; then
    files=(`find $sopath/libcuda.so*`); ... sudo ln -s ${raw_so} ${sopath}/libcuda.so; fi` (tensorRT_Pro's
    link-cuvid.sh)? The test and the `find` of the link's source only decide whether and from what the link is made;
    the `ln -s` line, read on its own, names the library (tp47b, test129's `none` labels)."""
    inner = node
    while inner is not None and inner.type not in ("test_command", "command_substitution", "if_statement"):
        inner = inner.parent
    if inner is None or inner.type == "if_statement":
        return False
    holder = inner.parent
    while holder is not None and holder.type != "if_statement":
        holder = holder.parent
    condition = holder.child_by_field_name("condition") if holder is not None else None
    test = _LINK_TEST_RE.fullmatch(condition.text.decode("utf-8", "replace")) if condition is not None else None
    if test is None:
        return False
    target = _unbraced(test.group(1))
    if inner.type == "command_substitution":
        found = next((c for c in inner.children if c.type == "command"), None)
        name = found.child_by_field_name("name") if found is not None else None
        args = [a.text.decode("utf-8", "replace") for a in found.children_by_field_name("argument")] \
            if found is not None and name is not None else []
        if name is None or name.text != b"find" or not args or not _unbraced(args[0]).startswith(target):
            return False
    elif condition is None or inner.id != condition.id:
        return False
    for command in _walk(holder):
        words = [w.text.decode("utf-8", "replace") for w in command.children if w.type != "file_redirect"] \
            if command.type == "command" else []
        if "ln" in words[:2] and any(w.startswith("-") and "s" in w for w in words[2:-1]) \
                and _unbraced(words[-1]) == target:
            return True
    return False


def _folder_guard(node) -> bool:
    """Is this node the folder of an `if [ -d PATH ]` / `elif [[ -d PATH ]]` test whose branch then uses that folder
    (`if [ -d "/usr/local/cuda-11.3" ]; then export PATH=/usr/local/cuda-11.3/bin:$PATH`)? The test only picks which
    install the branch names; the branch's line is what changes (tp52c, test150's labels). A test whose branch does not
    name the folder keeps its finding."""
    holder = node.parent.parent if node.parent is not None and node.parent.type == "string" else node.parent
    if holder is None or holder.type != "unary_expression" or not holder.children or holder.children[0].text != b"-d":
        return False
    test = holder.parent
    clause = test.parent if test is not None and test.type == "test_command" else None
    if clause is None or clause.type not in ("if_statement", "elif_clause"):
        return False
    condition = next((c for c in clause.children if c.type not in ("if", "elif")), None)
    if condition is None or condition.id != test.id:
        return False
    folder = node.text.decode("utf-8", "replace").strip("\"'").rstrip("/")
    if not folder.startswith("/"):
        return False
    used = re.compile(re.escape(folder) + r"(?![\w.-])")
    return any(used.search(c.text.decode("utf-8", "replace")) for c in clause.children
               if c.id != test.id and c.type not in ("elif_clause", "else_clause"))


# a package installer whose `name=${VAR}` / `name==${VAR}` word pins a version (conda's `cudatoolkit=${CUDA_TOOLKIT}`,
# pip's `torch==${TORCH_VERSION}`)
_INSTALLERS = frozenset({b"pip", b"pip3", b"conda", b"mamba", b"micromamba", b"uv", b"apt-get", b"apt", b"yum"})
_PIN_PREFIX = re.compile(rb"[a-z][a-z0-9_.-]*(?:==|=|>=|<=|~=)")


def _pinned_version(node) -> bool:
    """Is this expansion the version of a package spec an installer installs (`conda install cudatoolkit=${CUDA_TOOLKIT}`
    in aps' Dockerfile)? The script's own variable holds the version and the shell substitutes it: no library reads
    it from the environment (tq55c)."""
    word = node.parent
    if word is None or word.type != "concatenation" or word.parent is None or word.parent.type != "command":
        return False
    name = word.parent.child_by_field_name("name")
    if name is None or name.text.rsplit(b"/", 1)[-1] not in _INSTALLERS:
        return False
    return _PIN_PREFIX.fullmatch(word.text[:node.start_byte - word.start_byte]) is not None


def _in_label(node) -> bool:
    """Is this node in the value of a text option (`docker build --label KEY=VALUE`, `gh release create --notes
    "... --backend cuda ..."`)?"""
    arg = node
    while arg.parent is not None and arg.parent.type != "command":
        arg = arg.parent
    if arg.parent is None or arg.type == "command_name":
        return False
    if arg.text.startswith(tuple(o + b"=" for o in _TEXT_OPTIONS)):
        return True
    prev = arg.prev_named_sibling
    return prev is not None and prev.text in _TEXT_OPTIONS


# `: ${CUDA_HOME:=/usr/local/cuda}`: the no-op command's argument that assigns a default (a setting, not a note)
_ASSIGNING_EXPANSION = re.compile(rb"\$\{[^}]*?:?=")


def _in_message(node) -> bool:
    """Is this node an argument of `echo` / `printf`: text shown to a person, like a log message in Python?
    Not when the output goes into a file (`>> /etc/environment`, `>> $GITHUB_ENV`, `| sudo tee -a FILE`): then
    it is a setting written for later. The arguments of the no-op command `:` are a note too (`: "requirements.txt
    pins nixl-cu12 ..."` in a Dockerfile's RUN chain, the shell's comment that survives line continuations), except
    one that assigns a default (`: "${CUDA_HOME:=/usr/local/cuda}"`)."""
    parent, arg = node.parent, node
    while parent is not None:
        if parent.type == "command":
            name = parent.child_by_field_name("name")
            if name is not None and name.text == b":":
                return arg is not name and not _ASSIGNING_EXPANSION.search(arg.text)
            return name is not None and name.text in (b"echo", b"printf") and not _output_to_file(parent) \
                and not _output_to_program(parent)
        parent, arg = parent.parent, parent
    return False


def _output_to_program(command) -> bool:
    """`echo $CUDA_VISIBLE_DEVICES | awk -F "," '{print NF}'`, `$(echo ...)`: the output is data another program
    reads (a GPU count from the device list), not text shown to a person. So is a CI workflow command
    (`echo "::set-output name=base_image::${IMG}"`): a value the next steps read."""
    if b"::set-output " in command.text or b"::set-env " in command.text:
        return True
    holder = command.parent
    if holder is not None and holder.type == "command_substitution":
        return True
    if holder is not None and holder.type == "pipeline":
        later = [c for c in holder.children if c.type == "command" and c.start_byte > command.start_byte]
        return any(w.text.rsplit(b"/", 1)[-1] not in (b"tee", b"logger", b"cat", b"less", b"more")
                   for c in later[:1] for w in c.children[:1] if w.type == "command_name")
    return False


def _redirect_holder(command):
    """The node that holds a command's redirects: its parent, or for the last command of
    `echo A >> ~/.bashrc && echo B >> ~/.bashrc` the list's (tree-sitter hangs the last redirect on the whole list;
    it is the last command's, t15g)."""
    holder = command.parent
    if holder is not None and holder.type == "list" and holder.parent is not None \
            and holder.parent.type == "redirected_statement" and holder.children[-1] == command:
        return holder.parent
    return holder


# a run's log file (`> ${LOG_FILE}`, `| tee -a $LOG`, `>> logs/train.log`): what is written there is read by people
_LOG_FILE_RE = re.compile(r"(?i)(?<![a-z])logs?(?:_?files?|_?path|_?name)?(?![a-z])|\.log\b")


def _log_file(word: str) -> bool:
    """Does a redirect or `tee` write into a log (its last path part named for one, not a script or rc file)?"""
    return _LOG_FILE_RE.search(word.rsplit("/", 1)[-1]) is not None and not _SCRIPT_FILE_RE.search(word)


def _output_to_file(command) -> bool:
    """Does the command's output go into a file that is read later (a setting, a script, an environment file)? Not
    the null device, the terminal or a run's log (`echo "GPU: $CUDA_VISIBLE_DEVICES" > ${LOG_FILE}`: a message)."""
    holder = _redirect_holder(command)
    if holder is not None and holder.type == "redirected_statement":
        for redirect in holder.children:
            dest = redirect.child_by_field_name("destination") if redirect.type == "file_redirect" else None
            if dest is not None and dest.type != "number" and dest.text not in (b"/dev/null", b"/dev/stderr", b"/dev/stdout") \
                    and not _log_file(_word(dest)):
                return True
    if holder is not None and holder.type == "pipeline":
        later = [c for c in holder.children if c.type == "command" and c.start_byte > command.start_byte]
        for c in later[:1]:
            tee = next((w for w in c.children[:3] if w.type in ("command_name", "word")
                        and w.text.rsplit(b"/", 1)[-1] == b"tee"), None)
            files = [w for w in c.children if tee is not None and w.start_byte > tee.end_byte
                     and not w.text.startswith(b"-")]
            return tee is not None and not (files and all(_log_file(_word(f)) for f in files))
    return False


def _twin(col: Collector, node, value, line: int, c: int):
    """The edit that sets the Ascend twin beside a one-line `export NAME=value` (a line after it) or a
    `NAME=value cmd` prefix (another prefix before it); None for anything else."""
    parent = node.parent
    if value is None or parent is None or node.start_point[0] != node.end_point[0]:
        return None
    literal = value.text.decode("utf-8", errors="replace")
    if parent.type == "declaration_command" and parent.start_point[0] == parent.end_point[0] \
            and parent.children[0].type == "export" and len(parent.children) == 2:
        text = col.lines[line - 1]
        indent = text[:len(text) - len(text.lstrip())]
        return lambda new: None if col.sets(new) else {"insert_after": line, "text": f"{indent}export {new}={literal}"}
    if parent.type == "command":
        return lambda new: None if f"{new}=" in col.lines[line - 1] else \
            {"line": line, "col": c, "end_col": c, "text": f"{new}={literal} "}
    return None


_PIPEFAIL_RE = re.compile(r"^[^#\n]*(?:\bset\b|\bshopt\b|\bbash\b)[^#\n]*\bpipefail\b", re.M)
_MASKED_NOTE = " (its output feeds a pipeline and the script does not set pipefail: on Ascend the tool is missing, " \
               "the pipeline still succeeds through its last command and the script goes on with an empty answer; " \
               "what reads that answer differs)"


def _pci_vendor_probe(col: Collector, m, pos: _Positions, pipeline) -> None:
    """`lspci | grep -i nvidia`, `GPUS=$(lspci | awk '/NVIDIA/ && /3D controller/' | wc -l)`: the PCI devices filtered
    for NVIDIA's vendor name, a count or test of NVIDIA GPUs (lspci(8) prints the vendor's name from pci.ids; an
    Ascend card lists as "Huawei Technologies Co., Ltd." / "Processing accelerators"). tp43, project test110:
    deepracer-for-cloud's prepare.sh."""
    members = [c for c in pipeline.children if c.is_named and c.type != "comment"]
    commands = [c if c.type == "command" else next((n for n in _walk(c) if n.type == "command"), None)
                for c in members]
    names = [c.child_by_field_name("name") if c is not None else None for c in commands]
    first = commands[0] if commands else None
    if first is None or names[0] is None or names[0].text.rsplit(b"/", 1)[-1] != b"lspci":
        return
    for command in commands[1:]:
        if command is not None and any(b"nvidia" in w.text.lower() for w in command.children[1:]):
            line, c = pos.at(first.start_point)
            probe = " | ".join(x.text.decode("utf-8", errors="replace") for x in commands[:commands.index(command) + 1]
                               if x is not None)
            col.add(m.match_command("lspci nvidia"), probe[:80], line, c, c + len(b"lspci"))
            return


def _pip_package_query(col: Collector, m, pos: _Positions, pipeline) -> None:
    """`pip list | grep paddlepaddle-gpu | awk '{print $2}'` (PaddleRec's benchmark_train.sh reads the framework's
    version so): a question about an installed package, read as that package (pip's `list` / `freeze` print one
    installed distribution a line; tp48b). A pattern naming no package a rule reports above information stays
    quiet, and so does a grep that removes the package (`grep -v tensorrt`: the CPU image's requirements) or whose
    status alone is read (`grep -q`, an `if` / `&&` condition: the script's own check). The query runs on Ascend and
    prints nothing, so it is a warning (review48 item 8)."""
    if _status_only(pipeline):
        return
    commands = [c if c.type == "command" else next((n for n in _walk(c) if n.type == "command"), None)
                for c in pipeline.children if c.is_named and c.type != "comment"]
    words = [[w.text.decode("utf-8", errors="replace") for w in c.children if w.type in ("command_name", "word")]
             if c is not None else [] for c in commands]
    if not words or words[0][:2] not in (["pip", "list"], ["pip", "freeze"], ["pip3", "list"], ["pip3", "freeze"]):
        return
    for command, grep in zip(commands[1:], words[1:]):
        if command is None or grep[:1] not in (["grep"], ["egrep"]):
            continue
        if any(_GREP_NOT_A_QUERY.fullmatch(w) for w in grep[1:]):
            return
        package = next((w for w in grep[1:] if not w.startswith("-")), None)
        if package is not None and re.fullmatch(r"[A-Za-z0-9][\w.-]*", package):
            node = next(w for w in command.children if w.text.decode("utf-8", errors="replace") == package)
            line, c = pos.at(node.start_point)
            for symbol, _, rule, note in requirement_hits(m, package):
                if rule.severity != "info":     # torch's own version (NPU011's pin note) is no CUDA build
                    col.add(rule, symbol, line, c, c + len(package), severity="warning",
                            note=note + " (here only queried: `pip list | grep` prints nothing where it is not "
                            "installed, so what reads the answer differs)")
        return


# grep options that make it no question about an installed package: an inverted match (`-v`, `-iv`,
# `--invert-match`: the lines without it) or only the status (`-q`, `--quiet`, `--silent`)
_GREP_NOT_A_QUERY = re.compile(r"-[A-Za-z]*[vq][A-Za-z]*|--invert-match|--quiet|--silent")


def _status_only(pipeline) -> bool:
    """A pipeline whose exit status is what the script reads: an `if` / `while` condition, or a `&&` / `||` operand
    before the last."""
    parent = pipeline.parent
    if parent is None:
        return False
    if parent.type in ("if_statement", "elif_clause", "while_statement"):
        for child in parent.children:
            if child.type in ("then", "do"):
                return False
            if child.id == pipeline.id:
                return True
        return False
    return parent.type == "list" and parent.named_children[-1].id != pipeline.id


def _masked_in_pipeline(col: Collector, node) -> bool:
    """`NVLINK_COUNT=$(nvidia-smi topo -m | grep -o NV | wc -l)` without `set -o pipefail`: the pipeline's status is
    its last command's, so a missing tool stops nothing (even under `set -e`); only the value it gives differs."""
    while node.parent is not None and node.parent.type == "redirected_statement":
        node = node.parent          # `nvidia-smi topo -m 2>/dev/null | grep ...`
    parent = node.parent
    if parent is None or parent.type != "pipeline":
        return False
    members = [c for c in parent.children if c.is_named and c.type != "comment"]
    if not members or members[-1].id == node.id:
        return False
    return not _PIPEFAIL_RE.search("\n".join(col.lines))


# a launcher's processes per node (torchrun, torch.distributed.launch, accelerate, deepspeed): 0 stops the launch
_PROCESS_COUNT_RE = r"--(?:nproc[-_]per[-_]node|num[-_]processes|num[-_]gpus)[= ]+[\"']?\$\{{?{}\b"
_ASSIGNED_FROM_RE = r"^\s*(?:export\s+)?([A-Za-z_]\w*)=[\"']?\$\{{?{}\b"


def _feeds_process_count(col: Collector, node) -> bool:
    """`CUR_GPU_NUM=$(nvidia-smi --query-gpu=gpu_name --format=csv,noheader | wc -l)`, then `export
    NPROC_PER_NODE="$CUR_GPU_NUM"` and `torchrun --nproc_per_node=$NPROC_PER_NODE ...`: the masked count is 0 on
    Ascend and the launch stops (torchrun asserts a positive count), so the probe fails as an error (tq44b)."""
    holder = node
    while holder is not None and holder.type not in ("variable_assignment", "program"):
        holder = holder.parent
    target = holder.child_by_field_name("name") if holder is not None and holder.type == "variable_assignment" else None
    if target is None:
        return False
    text, names = "\n".join(col.lines), [target.text.decode("utf-8", errors="replace")]
    seen: set[str] = set()
    while names:
        name = names.pop()
        if name in seen or len(seen) > 8:
            continue
        seen.add(name)
        if re.search(_PROCESS_COUNT_RE.format(re.escape(name)), text):
            return True
        names += re.findall(_ASSIGNED_FROM_RE.format(re.escape(name)), text, re.M)
    return False


_ARG_TYPES = ("word", "string", "raw_string", "concatenation", "number")


def _after_redirect(command) -> list:
    """`uv pip install triton>=3.1.0 onnxruntime-gpu==1.19.2` unquoted: bash reads `>=3.1.0` as a redirect to the
    file `=3.1.0` and the words after it as more arguments of the command; tree-sitter-bash hangs them on the
    redirect. They are the command's (t15t, kohya_ss's Dockerfile)."""
    holder, body = command.parent, command
    while holder is not None and holder.type == "list" and holder.children[-1] == body:
        holder, body = holder.parent, holder    # `a && b >x y`: tree-sitter hangs the redirect on the whole list
    if holder is None or holder.type != "redirected_statement" or holder.children[0] != body:
        return []
    extra: list = []
    for redirect in holder.children[1:]:
        if redirect.type != "file_redirect":
            continue
        words = [c for c in redirect.children if c.type in _ARG_TYPES]
        for word in words[1:]:
            if b"\n" in redirect.text[:word.start_byte - redirect.start_byte].replace(b"\\\n", b""):
                break     # `--path <xxx>` then a new line: tree-sitter's recovery glues the next command on (t15t)
            extra.append(word)
    return extra


def _value_expanded(option) -> bool:
    """Is the word after an option node an expansion (`-p $PARTITION`, `--async ${SRUN_ARGS}`)? Expansions are not
    among a command's words, so the option's value (or the options the variable holds) is not the next word."""
    following = option.next_sibling
    return following is not None and following.type in _EXPANSIONS


def _overrides(col: Collector, m, pos: _Positions, words: list[str], nodes: list) -> None:
    """Hydra / OmegaConf overrides among a command's words (`trainer.accelerator=gpu`, `++device=cuda:0`, `key=$VAR`
    with the literal the script assigned), each matched as a setting."""
    for w, node in zip(words, nodes):
        override = _OVERRIDE_RE.fullmatch(w) or _OVERRIDE_RE.fullmatch(_assigned_override(col, w))
        if override is not None:
            rule = m.match_setting(override.group(1), override.group(2)) or \
                cli_setting(m, override.group(1), override.group(2))    # `yolo ... device=0`
            if rule is not None:
                line, c = pos.at(node.start_point)
                col.add(rule, f"{override.group(1)}={override.group(2)}", line, c, c + len(w), value=override.group(2))


_LOOPS = frozenset({"for_statement", "c_style_for_statement", "while_statement"})


def _backgrounded_in_loop(node) -> bool:
    """The command, or a group holding it, ends in `&` inside a loop's body: the loop starts one process per pass
    (ESPnet-style recipes: FunCodec's and FunASR's `run.sh` start one trainer per GPU this way, each joining one
    process group)."""
    background = False
    while node is not None and node.type not in _LOOPS:
        after = node.next_sibling
        background = background or (after is not None and after.type == "&")
        node = node.parent
    return background and node is not None


# a script function that checks programs are installed (`common::checkcmd`, `need_cmd`, `require_command`)
_COMMAND_CHECK_RE = re.compile(r"(?:^|[:_])(?:check_?cmds?|need_?cmds?|require_?cmds?|require_commands?|"
                               r"check_commands?|assert_commands?)$", re.I)
# a command's program given as one variable's expansion (`$PIP`, `"${MICROMAMBA}"`)
_PROGRAM_EXPANSION_RE = re.compile(r"\$\{?([A-Za-z_]\w*)\}?")


def _option_assignments(command) -> list:
    """The leading `--name=value` words of a command that tree-sitter-bash reads as assignments: no shell variable's
    name starts with `-`, so bash runs them as the command's own words (the tail of a broken continuation)."""
    glued = []
    for child in command.children:
        if child.type != "variable_assignment":
            break
        name, value = child.child_by_field_name("name"), child.child_by_field_name("value")
        if name is None or value is None or not name.text.startswith(b"-"):
            break
        glued.append(child)
    return glued


def _command(col: Collector, m, pos: _Positions, node, source_tree: _SourceTree, under_launcher: bool = False) -> None:
    """One command: what it runs, installs and asks for; `under_launcher`: it runs in a script string that srun /
    mpirun starts once per task."""
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return
    args = [c for c in node.children if c.type in ("word", "string", "raw_string", "concatenation", "number")
            and c.start_byte >= name_node.end_byte] + _after_redirect(node)
    words = [_word(name_node)] + [_word(a) for a in args]
    nodes = [name_node] + args
    glued = _option_assignments(node)
    if glued:
        # `--mu=$mu` ends a launch without its `\`, so bash runs the next lines (`--comm_round=50 \ ... --device=
        # 'cuda:0'\`) as a command named by their first option (NIID-Bench's scripts; tp54a): the broken
        # continuation's options, read as any other tail's (tree-sitter-bash parses `--x=v` as an assignment)
        missing = name_node.text == b""
        words = [f"{a.child_by_field_name('name').text.decode()}={_word(a.child_by_field_name('value'))}"
                 for a in glued] + words[missing:]
        nodes = glued + nodes[missing:]
    held = _PROGRAM_EXPANSION_RE.fullmatch(words[0])
    if held and (program := col.script_vars.get(held.group(1), "").strip("\"'")) \
            and program.rsplit("/", 1)[-1] in _PIP | _RUNNERS:
        # `MICROMAMBA="/content/bin/micromamba"`, then `"$MICROMAMBA" run -n env pip install torch==...+cu121`: the
        # package tool the script holds in a variable runs here (a Colab notebook's `%%bash` cell; tp44a)
        words[0] = program
    held_run = (col.script_vars.get(held.group(1), "").strip("\"'").split() if held else [])[:2]
    if len(held_run) == 2 and held_run[0].rsplit("/", 1)[-1] in _CONTAINER_RUNNERS \
            and held_run[1] in ("run", "create", "exec"):
        # `DOCKER_CMD="docker run --gpus all"`, then `$DOCKER_CMD -it -e SDL_HINT_CUDA_DEVICE='0' ...` (AirSim's
        # run_airsim_image_*.sh): the container's variables, as on a `docker run` line (tp46b)
        _container_env(col, pos, held_run + words[1:], [name_node, name_node] + nodes[1:])
    if _COMMAND_CHECK_RE.search(words[0]) and len(words) > 1:
        # `common::checkcmd nvidia-smi` (enroot's hooks), `need_cmd nvcc`: a script's own check that the programs are
        # installed, failing without them, as `command -v` / `which` do (tp44a, project test114)
        words[0] = "which"
    if _DOTTED_OVERRIDE_RE.match(words[0]):
        # a line of dotted overrides is the tail of a command whose continuation broke (OpenManus-RL's `data.val_files=
        # ... \ # TODO` ends the `python3 -m verl.trainer.main_ppo` command there; no environment name has a dot, t20b)
        _overrides(col, m, pos, words, nodes)
        return
    if words[0].rsplit("/", 1)[-1] in _MPI_LAUNCHERS:
        _mpi_exports(col, [(w, *pos.at(n.start_point), n.type in ("string", "raw_string"))
                           for w, n in zip(words, nodes)])
    # under srun / mpirun: one process per task, each running the launched script; or started in the background once
    # per pass of a loop (`for ((i = 0; i < ngpu; ++i)); do { python -m x.bin.train --gpu_id $i ...; } & done`)
    multi_process = under_launcher or _backgrounded_in_loop(node)
    while words and (words[0].rsplit("/", 1)[-1] in _WRAPPERS or words[0].rsplit("/", 1)[-1] in _PREFIX_COMMANDS
                     or "=" in words[0] and words[0][0] != "-"):
        wrapper = words[0].rsplit("/", 1)[-1]
        slurm = wrapper in ("srun", "salloc")
        mpi = wrapper in ("mpirun", "mpiexec")
        multi_process = multi_process or slurm or mpi
        value_options, operand = _PREFIX_COMMANDS.get(wrapper, (frozenset(), None))
        words, nodes = words[1:], nodes[1:]
        while words and words[0].startswith("-"):
            # `mpirun -np 2 --allow-run-as-root python ...` (t15l): mpirun's options that take values
            skip = _MPIRUN_VALUE_OPTIONS.get(words[0], 0) + 1 if mpi else 2 if words[0] in value_options else 1
            if mpi and skip == 2 and _value_expanded(nodes[0]):
                skip = 1        # `mpiexec -n ${N} -ppn ${PPN} ...`: the value is an expansion, not one of `words`
            if slurm and _value_expanded(nodes[0]):
                skip = 1        # `srun -p $PARTITION python ...`: the value is an expansion, not one of `words`
                # `srun -n $ngpu --gpus-per-node $ngpu shifter ...` (NERSC's nersc-dl-wandb, tp40): a request whose
                # count a variable holds is still a request for GPUs
                value = nodes[0].next_sibling.text.decode("utf-8", errors="replace")
                rule = m.match_setting(setting_path(words[0]), value) if words[0].startswith("--") \
                    and "=" not in words[0] else None
                if rule is not None and rule.code in SCHEDULER_REQUESTS:
                    wl, wc = pos.at(nodes[0].start_point)
                    col.add(rule, f"{words[0]} {value}", wl, wc, wc + len(words[0]), value=value)
            elif slurm and words[0] in _SRUN_SHORT_VALUES and len(words) > 2:
                skip = 2        # `srun -p video --job-name=x python run.py` (pd6, VideoMAEv2)
            elif slurm:
                # `srun --gres=gpu:8 --jobid $ID python ...`: srun's own options are requests to the scheduler
                key, eq, value = words[0].partition("=")
                if not eq and key.startswith("--") and key not in _SRUN_FLAGS and len(words) > 1 \
                        and not words[1].startswith("-"):
                    value, skip = words[1], 2
                rule = m.match_setting(setting_path(key), value) if key.startswith("--") and value else None
                if rule is not None and rule.code in SCHEDULER_REQUESTS:
                    wl, wc = pos.at(nodes[0].start_point)
                    col.add(rule, f"{key} {value}", wl, wc, wc + len(words[0]), value=value)
            words, nodes = words[skip:], nodes[skip:]
        if operand is not None and len(words) > 1 and operand.fullmatch(words[0]):
            words, nodes = words[1:], nodes[1:]
    while len(words) > 2:
        if words[0].rsplit("/", 1)[-1] in _RUNNERS and words[1] == "run":
            # `conda run -n build pip install fbgemm-gpu`, `poetry run torchrun ...`: the command run in the env
            words, nodes = words[2:], nodes[2:]
            while words and words[0].startswith("-"):
                skip = 2 if words[0] in _RUN_VALUE_OPTIONS else 1
                words, nodes = words[skip:], nodes[skip:]
        elif words[0].rsplit("/", 1)[-1] in _CONTAINER_CLIS and words[1] == "exec":
            # `docker exec -it d2 nvidia-smi` (t15l): the command run in the container, after its options and name
            words, nodes = words[2:], nodes[2:]
            while words and words[0].startswith("-"):
                skip = 2 if words[0] in _EXEC_VALUE_OPTIONS else 1
                words, nodes = words[skip:], nodes[skip:]
            words, nodes = words[1:], nodes[1:]
        elif words[0].rsplit("/", 1)[-1] in _IMAGE_RUNNERS and (
                not _IMAGE_RUNNERS[words[0].rsplit("/", 1)[-1]][0] or words[1] in ("run", "exec")):
            # `singularity run $SIF bash -c '...'`, `apptainer exec --nv image.sif python train.py`, `shifter
            # --image=nersc/pytorch:... bash -c "..."`: the command run inside the container, after the runner's
            # options and its image (an expanded image is not one of `words`)
            runner = words[0].rsplit("/", 1)[-1]
            image_operand, value_options = _IMAGE_RUNNERS[runner]
            k = 2 if image_operand else 1
            while k < len(words) and words[k].startswith("-"):
                valued = words[k] in value_options and not _value_expanded(nodes[k]) and k + 1 < len(words)
                _runner_option(col, m, pos, runner, f"{words[k]}={words[k + 1]}" if valued else words[k], nodes[k])
                k += 2 if valued else 1
            if image_operand and k < len(words) and not _expansion_between(node, nodes[k - 1], nodes[k]):
                k += 1
            words, nodes = words[k:], nodes[k:]
        elif re.fullmatch(r"\$\{?[A-Za-z_]\w*\}?", words[0]) and not re.search("PY|PIP", words[0].upper()) \
                and not words[1].startswith("-"):
            words, nodes = words[1:], nodes[1:]    # `${CONDA_RUN} pip install ...`: a runner held in a variable
        else:
            break
    if not words:
        return
    name = words[0].rsplit("/", 1)[-1]
    if _VERSIONED_PIP_RE.fullmatch(name):
        name = "pip3"       # `pip3.7 install ...`: pip installs itself as pip, pip3 and pip3.<minor> (its entry points)
    if name == "qsub":
        for i, w in enumerate(words[:-1]):
            if w == "-l":       # `qsub -l h_rt=1:00:00,gpu=1 job.sh`: Grid Engine's resource list, one word
                ql, qc = pos.at(nodes[i].start_point)
                grid_engine_gpus(col, m, f"-l {words[i + 1]}", lambda offset: (ql, qc + offset), directive=True)
    if name in ("echo", "printf") and not _output_to_file(node) and not _output_to_program(node):
        return      # `echo finished --device cuda`: a message shown to a person, its words are no options (t15o)
    if any("lmp" in w or "lammps" in w for w in words):
        _command_lammps_gpus(col, m, pos, words, nodes)
    variable = re.fullmatch(r"\$\{?([A-Za-z_]\w*)\}?", name)
    if variable and ("PY" in variable.group(1).upper() and "PIP" not in variable.group(1).upper()
                     or words[1:2] == ["-m"]):
        name = "python"               # `PYTHON=${PYTHON:-python}` then `$PYTHON -m pip ...`, `$PY -m pip ...`
    elif variable and "PIP" in variable.group(1).upper():
        name = "pip"                  # `PIP=${PIP:-pip3}` then `$PIP install ...`
    line, c = pos.at(nodes[0].start_point)
    rule = m.match_command(name)
    if rule is not None and rule.code == "NPU074" and name in ((col.result.summary or {}).get(FUNCTIONS_KEY) or {}):
        # `install_cuda_dkms_3_4_1_for_jammy_amd` (azhpc-images' Lustre script): a function this script defines; its
        # body's lines carry their own findings, the name is no installer script's (project test114; tp44a)
        rule = None
    if rule is not None and rule.code == "NPU017" and _masked_in_pipeline(col, node) \
            and not _feeds_process_count(col, node):
        col.add(rule, name, line, c, severity="warning", note=_MASKED_NOTE)
    else:
        col.add(rule, name, line, c)
    if (name in _SHELLS or name in (".", "source")) and len(words) > 1 \
            and words[1].endswith((".sh", ".bash", ".run")):
        # `bash ci/install-cuda.sh 12.4`: the script run is the command (NPU074 names installers by their file name)
        script = words[1].rsplit("/", 1)[-1]
        rule = m.match_command(script)
        if rule is not None:
            sl, sc = pos.at(nodes[1].start_point)
            col.add(rule, script, sl, sc, sc + len(words[1]))
        elif (chosen := any(_cuda_version_name(v) for v in _VARIABLE_REF_RE.findall(words[1]))) or name in (
                ".", "source") and any(_cuda_version_name(v) for w in words[2:] for v in _VARIABLE_REF_RE.findall(w)):
            # `bash .github/workflows/cuda/${{ matrix.cuda-version }}-${{ runner.os }}.sh`, `source
            # .../cuda/${{ matrix.cuda-version }}-Linux-env.sh` (pytorch_scatter's wheel workflow, r2c): a script
            # picked by the CUDA version installs that CUDA or sets up its environment (a build parameter: the
            # script's own lines are the errors); so does a script sourced with the CUDA version as its argument
            # (pyg-lib's `source ./.github/workflows/cuda/Windows-env.sh "${CUDA_VERSION}"`, whose `case` sets
            # FORCE_CUDA and the toolkit's PATH into the caller's shell; tp50a)
            sl, sc = pos.at(nodes[1].start_point)
            col.add(m.match_requirement("cuda-version"), f"{name} {words[1]}", sl, sc, sc + len(words[1]),
                    severity="info", note=" (a script chosen by the CUDA version: that CUDA's install or environment)"
                    if chosen else " (a script sourced with the CUDA version: that CUDA's environment)")
    if name in _SHELLS and _run_with_cuda_release(words[1:], node):
        # tp52c: `bash -x .github/workflows/scripts/cuda-install.sh ${{ matrix.cuda-version }} ${{ matrix.os }}`,
        # `bash .../build.sh ${{ matrix.python-version }} ${{ matrix.cuda-version }}` (vLLM's wheel workflow): a
        # script run with the CUDA release as its argument installs or builds for that release
        run_at = next((i for i, w in enumerate(words[1:], 1) if not w.startswith("-")), 1)
        sl, sc = pos.at(nodes[run_at].start_point)
        col.add(m.match_requirement("cuda-version"), f"{name} {words[run_at]}", sl, sc,
                sc + len(words[run_at]), severity="info",
                note=" (a script run with the CUDA release as its argument: it installs or builds for that CUDA)")
    if name in ("accelerate", "torchrun", "deepspeed") and "-m" in words[1:-1]:
        # `accelerate launch --num_processes=8 -m lmms_eval --model vllm`: the module's options are read as its own
        at = words.index("-m", 1)
        _module_options(col, m, pos, words[at + 1], words[at + 2:], nodes[at + 2:])
    if name.startswith("python") and len(words) > 2 and words[1] == "-m" and words[2] not in ("pip", "uv"):
        # `python -m torch.distributed.run --nproc_per_node=gpu`, `python -m lm_eval --model vllm`: the module's
        # options are read as the command's
        _module_options(col, m, pos, words[2], words[3:], nodes[3:])
    if len(words) > 1 and not words[1].startswith("-"):
        # a subcommand: `vllm serve`, `trl vllm-serve`, `lighteval vllm`, `module load cuda/12.4`
        loads = _MODULE_LOADERS.get(name, ())
        if name in _MODULE_LOADERS and (loads is None or words[1] in loads):
            for i, w in enumerate(words[1:], 1):
                if not w.startswith("-") and w not in ("load", "add", "swap", "switch"):
                    wl, wc = pos.at(nodes[i].start_point)
                    col.add(m.match_command(f"module load {w.lower()}"), f"module load {w}", wl, wc, wc + len(w))
        else:
            sub = f"{name} {words[1]}"
            col.add(m.match_command(sub), sub, line, c, c + len(sub))
        if name == "spack" and words[1] in _SPACK_SPEC_COMMANDS:
            _spack_command_specs(col, m, pos, words[2:], nodes[2:])
        if name == "helm" and words[1] in ("install", "upgrade", "template"):
            # `helm install ... nvidia/gpu-operator`: the chart, named repo/chart among the options (t34a)
            for i, w in enumerate(words[2:], 2):
                if "/" in w and not w.startswith("-"):
                    wl, wc = pos.at(nodes[i].start_point)
                    col.add(m.match_command(f"helm chart {w}"), f"helm chart {w}", wl, wc, wc + len(w))
    _scheduler_short_options(col, m, pos, node)
    if _COMPILER_RE.fullmatch(name):
        _compiler_links(col, m, pos, words, nodes)
    for i, w in enumerate(words[1:-1], 1):
        if w == "--build-arg" and "=" in words[i + 1]:    # `docker build --build-arg CUDA_VERSION=$CUDA_VERSION`
            arg_name, _, arg_value = words[i + 1].partition("=")
            wl, wc = pos.at(nodes[i + 1].start_point)
            _cuda_version_parameter(col, m, arg_name, arg_value, wl, wc)
            build_variant(col, m, arg_name, arg_value, wl, wc)
        elif w in ("-f", "--file"):                     # `docker compose -f docker-compose-cuda.yml up`
            wl, wc = pos.at(nodes[i + 1].start_point)
            container_file_reference(col, m, words[i + 1], wl, wc)
            if name == "kubectl" and "://" not in words[i + 1]:
                # `kubectl apply -f "${SCRIPT_DIR}/nvidia-device-plugin-ds.yaml"`: a manifest named for NVIDIA's
                # Kubernetes device plugin (by URL, the URL's rule reads it; t34a)
                manifest = words[i + 1].rsplit("/", 1)[-1]
                col.add(m.match_command(f"kubectl manifest {manifest}"), f"kubectl manifest {manifest}", wl, wc,
                        wc + len(words[i + 1]))
    if name in _CONTAINER_RUNNERS and len(words) > 1 and words[1] in ("run", "create", "exec"):
        _container_env(col, pos, words, nodes)
    tmux = next((i for i, w in enumerate(words[:-1]) if w.rsplit("/", 1)[-1] == "tmux"), None)
    if tmux is not None and words[tmux + 1] in _TMUX_NEW_COMMANDS:
        # `ssh {} tmux new-session -d -s train -e NCCL_CROSS_NIC=1 python -m torch.distributed.run ...`: tmux(1)'s
        # `-e VARIABLE=value` sets the variable for the session's command, as `docker run -e` does (tp43, project
        # test107: distributed-training-guide's launch.sh)
        _container_env(col, pos, words[tmux:], nodes[tmux:])
    if name in _CONTAINER_RUNNERS and len(words) > 2 and words[1] in ("run", "create"):
        _gpu_run_image(col, m, pos, words, nodes, node)
    # `torchrun --nproc-per-node=gpu`, `docker run --gpus all`: an option (with its value) as `name --opt=value`;
    # a line that starts with an option is the tail of a command whose continuation broke (`\\` at a line's end)
    first = 0 if words[0].startswith("--") else 1
    joined = " ".join(words)
    # `--accelerator cpu` / `--device cpu` on the same command: a precision option there is the CPU's (RWKV's
    # init step `--accelerator cpu --precision bf16`), the same on an Ascend machine
    cpu_run = _CPU_RUN_RE.search(joined) is not None
    # qlora's `--bits 4` beside `--quant_type nf4` / `--double_quant`: bitsandbytes' 4/8-bit loading
    bnb_bits = _BNB_CONTEXT_RE.search(joined) is not None
    for i, w in enumerate(words[first:], first):
        if not w.startswith("-"):
            continue
        option = w if "=" in w or i + 1 >= len(words) or words[i + 1].startswith("-") \
            or w in _CONTAINER_GPU_FLAGS.get(name, ()) else f"{w}={words[i + 1]}"
        if option != w and _subcommand_after_break(nodes[i], nodes[i + 1], words[i + 1]) \
                and not _option_matches(m, name, option):
            option = w
        if "=" not in w:
            assigned = _expanded_value(col, nodes[i])
            if assigned is not None:
                option = f"{w}={assigned}"   # `--use-flash $FLASH` after `export FLASH=0`: the value, not a bare flag
        else:
            # `sbatch --gpus=$NUM_GPUS` after `NUM_GPUS=4`: the glued spelling of `--gpus $NUM_GPUS`, the same value
            option = _assigned_override(col, w) or w
        symbol = f"{name} {option}"
        rule = m.match_command(symbol)
        line, c = pos.at(nodes[i].start_point)
        if rule is not None and rule.extra.get("at_command"):
            # `python build.py ... \ --use_gemm_plugin float16`: the options are parts of one build, reported once on
            # the command's first word (decision 18; tp48b)
            cl, cc = pos.at(nodes[0].start_point)
            col.add(rule, " ".join(words[:2]), cl, cc, cc + len(words[0]))
        elif rule is not None:
            col.add(rule, symbol, line, c, c + len(w))
        key, _, value = option.partition("=")
        if key.startswith("--") and len(key) > 2:       # `--bf16`, `--ds.param_dtype bf16`: a setting
            value = value or "true"
            # (`cli:` keys first: a setting only a command line makes, `--device 0`: the script's own option)
            setting = option_setting(m, setting_path(key), value)
            if setting is None and "=" not in w and (following := nodes[i].next_sibling) is not None \
                    and following.type in ("simple_expansion", "expansion") and value == "true":
                # `install_dependencies.py --cuda $CUDA_VERSION`: the value is a variable the caller sets, named
                # for what it holds (tp37)
                held = following.text.decode("utf-8", errors="replace")
                setting = cli_setting(m, setting_path(key), held.lower())
                value = held if setting is not None else value
            if setting is None and key == "--gpu" and _KALDI_QUEUE_RE.fullmatch(name):
                setting = m.match_setting("gpus", value)     # `${cuda_cmd} --gpu ${ngpu} exp/train.log train.py`
            if setting is None and bnb_bits and key == "--bits" and value in ("4", "8"):
                setting = m.match_setting(f"load_in_{value}bit", "true")
            if setting is not None and cpu_run and setting.category == "precision":
                setting = None
            if setting is not None and setting.code == "NPU028" and _script_option(name):
                setting = None     # `torchrun extract.py --use_gpu`: the script's device switch (t11y)
            col.add(setting, f"{key} {value}", line, c, c + len(w), value=value)
            if setting is None and "=" in value and "," in value and "=" not in w and i + 1 < len(nodes):
                # `--model_args pretrained=X,dtype=bfloat16`: a list of settings
                vl, vc = pos.at(nodes[i + 1].start_point)
                _key_values(col, m, value, vl, vc + (nodes[i + 1].type in ("string", "raw_string")))
            elif setting is None and "=" in value and "," in value and "=" in w:
                # `--model_args=pretrained=X,attn_implementation=flash_attention_2,dtype=bfloat16`
                _key_values(col, m, value, line, c + len(key) + 1 + (nodes[i].type in ("string", "raw_string")))
    if name.startswith("python") or name.endswith(".py") or name in _PROGRAM_LAUNCHERS or \
            name == "uv" and words[1:2] == ["run"]:
        # Hydra / OmegaConf overrides on the command line: `trainer.accelerator=gpu`, `++device=cuda:0`; also of a
        # script run by uv (NeMo-RL's `uv run examples/run_sft.py cluster.gpus_per_node=2`, t15s)
        _overrides(col, m, pos, words[1:], nodes[1:])
    if name.startswith("python"):
        # `python3.7 -u tools/static_gpubox_trainer.py -m config.yaml`: the script is the program run
        script_at = next((i for i, w in enumerate(words[1:], 1) if not w.startswith("-")), None)
        if script_at is not None:
            run_script, run_rule = _launched_script(m, words[script_at])
            if run_rule is not None:
                sl, sc = pos.at(nodes[script_at].start_point)
                col.add(run_rule, run_script, sl, sc, sc + len(words[script_at]))
    if name == "python" or name.startswith("python3") or name in ("torchrun", "deepspeed") or \
            name == "accelerate" and words[1:2] == ["launch"]:
        # `deepspeed llava/train/train_mem.py` (t15k); with the bare expansions (`${PT_SCRIPT}`: a script the caller
        # names, pd37), which `words` leaves out
        launch_nodes = sorted(nodes[1:] + [c for c in node.children if c.type in ("expansion", "simple_expansion")
                                           and c.start_byte > nodes[0].end_byte], key=lambda n: n.start_byte)
        _record_launch(col, pos, words[:1] + [_word(n) for n in launch_nodes], nodes[:1] + launch_nodes,
                       source_tree.cwd, multi_process)
    called = script_call(words, source_tree.cwd)
    if called is not None:
        _record_script_call(col, pos, words, nodes, called)      # `./train.sh -d mipnerf360/bicycle ...` (t19c)
    if name.rsplit("\\", 1)[-1].removesuffix(".exe") == "cmake":
        _record_cmake(col, pos, words, nodes, source_tree.cwd if source_tree.cwd is not None else source_tree.outside)
        _configures_source_tree(col, m, pos, words, nodes, source_tree)
    if name.rsplit("\\", 1)[-1].removesuffix(".exe") in _MAKES:
        _make_variables(col, m, pos, words, nodes)
        _make_targets(col, m, pos, words, nodes)
        _record_make(col, pos, words, nodes, source_tree.cwd)
        _make_folder(col, m, pos, words, nodes, source_tree)
    _record_built_program(col, pos, words, nodes, source_tree.cwd)
    if name == "popd" or name == "cd" and words[1:] == ["-"]:
        source_tree.cd_target = source_tree.cd_back.pop() if source_tree.cd_back else None
    if name in ("cd", "pushd") and words[1:] != ["-"]:
        # (`cd $NVDSINFER_PATH`: an expansion, which `words` leaves out)
        target = next((_word(c) for c in node.children[1:] if c.type in (
            "word", "string", "raw_string", "concatenation", "simple_expansion", "expansion")
            and not c.text.startswith(b"-")), None)
        source_tree.cd_back.append(source_tree.cd_target)
        source_tree.cd_target = None if target is None else (target, _cd_scope(node, source_tree.per_statement))
        source_tree.outside = outside_cd(source_tree.cwd, source_tree.outside, words[1] if len(words) > 1 else None)
        source_tree.cwd = make_cd(source_tree.cwd, words[1] if len(words) > 1 else None)
        source_tree.abs_cwd = absolute_folder(source_tree.abs_cwd, words[1] if len(words) > 1 else None)
        source_tree.cd(m, words[1] if len(words) > 1 else None)
        return
    if name == "tar":
        _unpacked_archive(col, m, pos, words, nodes, source_tree.abs_cwd)
    if name == "git" and "clone" in words[1:3]:
        at = words.index("clone") + 1
        source_tree.clone(col, m, pos, words[at:], nodes[at:])
        return
    if name == "sbatch":
        _wrapped_job(col, pos, words, nodes)     # `sbatch ... --wrap="srun python train.py --bf16"` (t15o)
    if name in _SHELLS and len(words) > 2 and words[1] == "-c" and nodes[2].type in ("string", "raw_string", "word"):
        # `bash -c "python -m sglang.launch_server ..."`; under srun (`srun singularity run $SIF bash -c 'python -m
        # torch.distributed.run ...'`) once per task
        _nested_script(col, pos, nodes[2], multi_process=multi_process)
        return
    if name == "ssh":
        remote = _ssh_command(words)
        if remote is not None and nodes[remote].type in ("string", "raw_string"):
            _nested_script(col, pos, nodes[remote])     # `ssh $host "python -c '... .cuda()'"` (t18b, minRF)
            return
    if name == "python" or name.startswith("python3") or name == "python3":
        flags = next((i for i, w in enumerate(words[1:], 1) if not _PYTHON_FLAG_RE.fullmatch(w)), len(words)) - 1
        if flags:
            # `$python -s -m pip install torch --index-url .../cu130` (SwarmUI's comfy-install-linux.sh, tp38): the
            # interpreter's own switches before `-m` / `-c` / the script change nothing of what runs
            words, nodes = [words[0], *words[1 + flags:]], [nodes[0], *nodes[1 + flags:]]
        if len(words) > 2 and words[1] == "-c":
            to_log = _output_to_log(node)
            if not (_printed_only(words[2]) and to_log):
                _inline_python(col, pos, words[2], nodes[2], output_read=not to_log)
            return
        body = _heredoc_body(node)
        if body is not None and (len(words) == 1 or words[1] == "-"):
            # `python - <<EOF ... EOF`: the here-document is the program
            _inline_python(col, pos, body.text.decode("utf-8", errors="replace"), body)
            return
        if len(words) > 2 and words[1] == "-m" and words[2] != "pip":
            # `python -m vllm.entrypoints.openai.api_server`, `python -m sglang.launch_server`
            symbol = f"python -m {words[2]}"
            line, c = pos.at(nodes[0].start_point)
            module_line, module_col = pos.at(nodes[2].start_point)
            if module_line != line:
                # an exec-form vector, one item a line (`- python3` / `- -m` / `- sglang.launch_server` in a pod's
                # `command:`): the module names the engine, so its line is the one to change (tp39, lws)
                line, c = module_line, module_col
            col.add(m.match_command(symbol), symbol, line, c, c + len(symbol))
        if words[1:3] == ["-m", "pip"]:
            _pip(col, m, pos, words[3:], nodes[3:], source_tree)
        elif words[1:4] == ["-m", "light_the_torch", "install"]:
            _light_the_torch(col, m, pos, words[3:], nodes[3:], source_tree)
        elif words[1:4] == ["-m", "uv", "pip"]:          # `python3.10 -m uv pip install ...`
            _pip(col, m, pos, words[4:], nodes[4:], source_tree)
        elif len(words) > 2 and words[1].endswith("setup.py") and words[2] in _SETUP_BUILDS:
            # `python gpt-neox/megatron/fused_kernels/setup.py install`: a build of the setup.py's own folder (t32b)
            folder = words[1].rpartition("/")[0] if words[1].endswith("/setup.py") else "."
            _builds(col, source_tree, pos, nodes[0], folder or "/")
        if len(words) > 3 and words[1].endswith("setup.py") and "easy_install" in words[2:-1]:
            # `python setup.py develop easy_install streamdiffusion[tensorrt]`: setuptools' easy_install command
            # installs the requirements after it, as pip would (t15v, StreamDiffusion's Dockerfile)
            at = words.index("easy_install", 2)
            _pip(col, m, pos, ["install", *words[at + 1:]], [nodes[at], *nodes[at + 1:]], source_tree)
        return
    if name == "sed":
        _sed_appended_commands(col, pos, words, nodes)
        if b":" in node.text:
            _sed_written_settings(col, m, pos, node)
    if name == "sed" and _SED_EDIT_WORD_RE.search(node.text.decode("utf-8", errors="replace")):
        _sed_cuda_edits(col, pos, node)
        return
    if name == "dpkg" and ("-i" in words or "--install" in words):
        for i, w in enumerate(words[1:], 1):
            held = _VARIABLE_REF_RE.fullmatch(w.strip("\"'"))
            if held is not None and col.script_vars.get(held.group(1), "").strip("\"'").endswith(".deb"):
                # `DEB="cutensor-local-repo-${DISTRO}-..._${DEB_ARCH}.deb"` then `dpkg -i "${DEB}"`: the package the
                # variable names, its own variable parts left out (tp44b)
                w = re.sub(r"-{2,}", "-", re.sub(r"\$\{?\w+\}?", "", col.script_vars[held.group(1)].strip("\"'")))
            elif held is None and "$" in w:
                # `dpkg -i ./$NSIGHT` after `NSIGHT="NsightSystems-linux-cli-public-2023.4.1.97-3355750.deb"`: the
                # word's variables the script set, expanded (NanoFlow's setup.sh; tp52a)
                w = _VARIABLE_REF_RE.sub(lambda v: _literal_var(col, v), w.strip("\"'"))
            if w.endswith(".deb"):       # `dpkg -i cuda-keyring_1.1-1_all.deb`: the package is the name before `_`
                line, c = pos.at(nodes[i].start_point)
                symbol = "apt:" + w.rsplit("/", 1)[-1].split("_", 1)[0].lower().rstrip("-")
                rule = m.match_requirement(symbol)
                if rule is None and "/" in w:
                    # `dpkg -i ${SCRIPT_DIR}/*-tf_*.deb` with `ARG SCRIPT_DIR=/opt/tensorrt/python`: the folder it is
                    # installed from (tp47a)
                    symbol = "path:" + _VARIABLE_REF_RE.sub(lambda v: _assigned_literal(col, v.group(1)), w)
                    rule = m.match_requirement(symbol.lower())
                col.add(rule, symbol, line, c, c + len(words[i]))
        return
    if name == "configure" and any(w.startswith("--mathlib=") for w in words[1:]) and \
            not any(w.startswith("--use-cuda") for w in words[1:]):
        # `./configure --shared --mathlib=OPENBLAS` in Kaldi's src/ (`--mathlib` is Kaldi's option): its configure
        # builds the CUDA code by default (kaldi/src/configure, "--use-cuda  Build with CUDA [default=yes]"), read
        # as the `--use-cuda=yes` it applies; `--use-cuda=no` is read by the option scan (tp47a)
        line, c = pos.at(nodes[0].start_point)
        col.add(m.match_setting("use_cuda", "yes"), "--use-cuda=yes", line, c, c + len(words[0]), severity="info",
                note=f" (the default of Kaldi's `{words[0]}`: CUDA unless --use-cuda=no)")
    if name == "dpkg-query" or name == "dpkg" and any(w in _DPKG_QUERIES for w in words[1:]):
        # `dpkg-query --showformat='${Version}' --show nvidia-l4t-core`, `dpkg -s PKG`: a question about an installed
        # package (NPU913 reads Jetson Linux's core package, tp47a)
        for i, w in enumerate(words[1:], 1):
            if not w.startswith("-") and words[i - 1] not in ("-f", "--showformat", "--admindir", "--root"):
                line, c = pos.at(nodes[i].start_point)
                col.add(m.match_requirement("dpkg-query:" + w.lower()), "dpkg-query:" + w, line, c, c + len(w))
        return
    if name == "rpm" and any(_RPM_INSTALL_RE.fullmatch(w) for w in words[1:]):
        # `rpm -ivh --nodeps /tmp/ucx-cuda-${UCX_VERSION}-1.el9.x86_64.rpm` (distributed-workloads' training images,
        # UCX's prebuilt RPMs): the package is the file name before its version (`name-version-release.arch.rpm`),
        # read as a yum install of it (tp46b)
        for i, w in enumerate(words[1:], 1):
            package = _RPM_NAME_RE.match(re.sub(r"\$\{?\w+\}?", "", w.rsplit("/", 1)[-1])) \
                if w.endswith(".rpm") else None
            if package is not None:
                line, c = pos.at(nodes[i].start_point)
                symbol = "apt:" + package.group(1).lower()
                col.add(m.match_requirement(symbol), symbol, line, c, c + len(words[i]))
        return
    verb = next((w for w in words[1:] if w in _APT_INSTALL), None)
    if name == "apt-mark" and words[1:2] and words[1] in _APT_MARKS:
        # `apt-mark hold libcudnn7` (solaris' GPU image): apt-mark looks each name up in the package cache and
        # stops on one the sources lack (apt 2.6.1, run: `apt-mark hold libcudnn7` -> `E: Unable to locate package
        # libcudnn7`, exit 100; apt's cmdline/apt-mark.cc, https://salsa.debian.org/apt-team/apt), so the NVIDIA
        # package is reported where it is held, with its own message: a hold installs nothing (tp51c, review51)
        verb = words[1]
    if (name in _APT and verb is not None and (verb == "install" or (verb == "add") == (name == "apk"))
            or name == "apt-mark" and verb in _APT_MARKS):
        start = words.index(verb)
        for i in range(start + 1, len(words)):
            w = words[i]
            w = re.sub(r"\$\{?\w+\}?", "", w)      # `cuda-toolkit-${{ matrix.cuda-version }}` in CI: the package family
            if w and not w.startswith("-"):
                line, c = pos.at(nodes[i].start_point)
                symbol = "apt:" + w.split("=", 1)[0].lower()
                rule = m.match_requirement(symbol)
                if "/" in w and w.endswith(".deb"):
                    # `apt-get install ./build/pkg/deb/libnccl2_*_amd64.deb`: apt installs a local file given by its
                    # path (apt(8), "install": "a path to a .deb file"); the package is its name before `_`, as dpkg's
                    deb_package = "apt:" + w.rsplit("/", 1)[-1].split("_", 1)[0].lower().rstrip("-")
                    rule, symbol = (m.match_requirement(deb_package), deb_package) \
                        if m.match_requirement(deb_package) else (rule, symbol)
                added = col.add(rule, symbol, line, c, c + len(w))
                if added is not None and name == "apt-mark":
                    col.result.findings[-1] = replace(added, message=_APT_MARK_MESSAGE.format(
                        verb=verb, package=w.split("=", 1)[0]))
        for child in node.children:
            # `ENV NV_LIBNPP_PACKAGE libnpp-12-1-${NV_LIBNPP_VERSION}` then `yum install ${NV_LIBNPP_PACKAGE}`
            # (NVIDIA's CUDA image Dockerfiles, copied into llm-on-openshift's; tp45): the package a variable the
            # script set names, its own variable parts expanded where the script set them too
            held = _VARIABLE_REF_RE.fullmatch(_word(child)) if child.type in ("expansion", "simple_expansion") \
                and child.start_byte > nodes[start].end_byte else None
            value = _assigned_literal(col, held.group(1)) if held is not None else ""
            # a part the script computes (`CUDA_MAJOR=$(echo ... | cut -d. -f1)`) is left out of the name (tp49a:
            # plato's `CUDA_PACKAGES+=" cuda-${package}-${CUDA_MAJOR}-${CUDA_MINOR}"`, installed by `apt-get install
            # ${CUDA_PACKAGES}`); of a list, the first package a rule reads
            named = [re.sub(r"-{2,}", "-", w).strip("-") for w in
                     _VARIABLE_REF_RE.sub(lambda v: _literal_part(col, v.group(1)), value).split()
                     if not w.startswith("-")]
            rules = [(w, m.match_requirement("apt:" + w.split("=", 1)[0].lower())) for w in named[:16] if w]
            held_package, rule = next(((w, r) for w, r in rules if r is not None), ("", None))
            if rule is not None:
                line, c = pos.at(child.start_point)
                col.add(rule, "apt:" + held_package.split("=", 1)[0].lower(), line, c, c + len(_word(child)),
                        note=f" (the package `{_word(child)}` names)")
        return
    if name == "poetry" and words[1:2] == ["install"]:
        _poetry_extras(col, m, pos, words, nodes, source_tree)
        return
    if name == "ltt" and words[1:2] == ["install"]:
        _light_the_torch(col, m, pos, words[1:], nodes[1:], source_tree)
        return
    if name == "easy_install" and len(words) > 1:       # setuptools' installer: `easy_install pkg[extra]`
        _pip(col, m, pos, ["install", *words[1:]], nodes, source_tree)
        return
    if name in _CONDA_TOOLS and ("env" in words[1:2] or "create" in words[1:2]):
        _environment_file(col, m, pos, words, nodes)
    if name in _PIP:
        rest = words[1:]
        if name == "uv" and rest[:1] == ["pip"]:
            rest = rest[1:]
            if rest[:1] == ["sync"]:
                # `uv pip sync requirements.txt --extra-index-url .../whl/cu113`: installs exactly what the files list,
                # from the indexes given, as `pip install -r` would (openpi's LIBERO Dockerfile, tp39)
                rest = ["install", *rest[1:]]
        before = len(col.result.findings)
        _pip(col, m, pos, rest, nodes[len(words) - len(rest):], source_tree,
             conda=name in ("conda", "mamba", "micromamba"))
        if _builds_without_cuda(node):
            # `NO_CUDA_EXT=1 pip install lmcache==0.4.3` (LMCache-Ascend's images, tq52a): LMCache's setup.py
            # (github.com/LMCache/LMCache) skips its CUDAExtension when `os.environ.get("NO_CUDA_EXT", "0") == "1"`,
            # so the package installs as the plain Python library an Ascend port patches; its CUDA-build finding goes
            col.result.findings[before:] = [f for f in col.result.findings[before:] if f.code != _CUDA_PACKAGE_CODE]


_CONDA_TOOLS = frozenset({"conda", "mamba", "micromamba"})
_CUDA_PACKAGE_CODE = "NPU440"       # a package built for NVIDIA GPUs (rules/project.yaml)


# C / C++ compilers and linkers (`g++`, `gcc-9`, `x86_64-linux-gnu-g++`, `clang++`, `ld`, MPI's wrappers): their `-l`
# flags are read as `cc -l<name>` (rules/project_shell_cuda_links.yaml); nvcc is NPU017's (tp60a)
_COMPILER_RE = re.compile(r"(?:[\w.-]+-)?(?:g\+\+|gcc|c\+\+|cc|clang\+\+|clang|ld|mpicxx|mpicc|mpic\+\+)(?:-[\d.]+)?")


def _compiler_links(col: Collector, m, pos: _Positions, words: list[str], nodes: list) -> None:
    """`g++ -shared -o op.so op.cpp \\ op_g.cu.o -fPIC -lcudart`: each `-l` flag that links a CUDA library, on the
    line of the flag (a `\\`-continued build's link line, not the command's first line)."""
    for word, node in zip(words[1:], nodes[1:]):
        if word.startswith("-l") and len(word) > 2:
            symbol = f"cc {word}"
            rule = m.match_command(symbol)
            if rule is not None:
                line, c = pos.at(node.start_point)
                col.add(rule, symbol, line, c, c + len(word))


def _builds_without_cuda(node) -> bool:
    """An install command prefixed with a switch that turns the CUDA build off (`NO_CUDA_EXT=1 pip install ...`)."""
    for child in node.children:
        if child.type != "variable_assignment":
            continue
        name, value = child.child_by_field_name("name"), child.child_by_field_name("value")
        if name is not None and value is not None and cuda_build_off(name.text.decode(), value.text.decode()):
            return True
    return False
# dpkg's query actions (dpkg(1): they are dpkg-query's)
_DPKG_QUERIES = frozenset({"-s", "--status", "-l", "--list", "-L", "--listfiles", "-p", "--print-avail"})
_ARCHIVE_RE = re.compile(r"\.(?:tar(?:\.\w+)?|tbz2?|tgz|txz)$")


def _unpacked_archive(col: Collector, m, pos: _Positions, words: list[str], nodes: list, cwd: str | None) -> None:
    """`tar -xvf binaries.tbz2 -C /` run in a Dockerfile's `WORKDIR .../deepstream_sdk_v4.0.2_x86_64`, or `tar -xvf
    deepstream_sdk_v6.3.0_x86_64.tbz2 -C /`: the archive, by its path from the folder it is unpacked in, asked of the
    requirement rules as a `path:` (NVIDIA DeepStream's tar install, NPU970; tp46a)."""
    for i, w in enumerate(words[1:], 1):
        if w.startswith("-") or "$" in w or not _ARCHIVE_RE.search(w):
            continue
        where = absolute_folder(cwd, w) if not w.startswith("/") else w
        symbol = "path:" + (where or w)
        rule = m.match_requirement(symbol)
        if rule is not None:
            wl, wc = pos.at(nodes[i].start_point)
            col.add(rule, symbol, wl, wc, wc + len(w))


def _environment_file(col: Collector, m, pos: _Positions, words: list[str], nodes: list) -> None:
    """`conda env create --file conda/environments/dev_cuda${{ matrix.target }}.yml`: an environment file named for a
    CUDA release (NPU969; expansions dropped from the name first)."""
    for i, w in enumerate(words[:-1]):
        if w in ("-f", "--file"):
            name = re.sub(r"\$\{[^}]*\}|\$\w+", "", words[i + 1]).rsplit("/", 1)[-1]
            wl, wc = pos.at(nodes[i + 1].start_point)
            col.add(m.match_setting("conda_env_file", name), words[i + 1], wl, wc, wc + len(words[i + 1]))


_MAKES = {"make", "gmake", "mingw32-make"}
# (a quoted value may hold spaces: `NVCC_GENCODE="-gencode=arch=compute_90,code=sm_90 -gencode=..."`, tp47a)
_MAKE_VARIABLE_RE = re.compile(r"([A-Za-z_]\w*)=([^\s$][^$]*)")


def _make_variables(col: Collector, m, pos: _Positions, words: list[str], nodes: list) -> None:
    """`make train_gpt2cu USE_CUDNN=1 GPU_COMPUTE_CAPABILITY=80`: variables set on make's command line are the
    build's settings, read like a script's `USE_CUDNN=1` (a value that is only a variable says nothing)."""
    for i, w in enumerate(words[1:], 1):
        assign = _MAKE_VARIABLE_RE.fullmatch(w)
        if assign is None:
            continue
        rule = m.match_setting(assign.group(1).lower(), assign.group(2))
        if rule is not None and rule.category != "precision":
            # (`make PRECISION=BF16 test_dataloader`: which floating-point type a build compiles for is the
            # Makefile's business, often a CPU test; the training launch says how the model trains)
            line, c = pos.at(nodes[i].start_point)
            col.add(rule, w, line, c, c + len(w), value=assign.group(2))


def _make_targets(col: Collector, m, pos: _Positions, words: list[str], nodes: list) -> None:
    """`make -j $(nproc) online2 lm rnnlm cudafeat cudadecoder`: a target the catalogue names as a CUDA part of a
    project whose Makefile is not in the tree (Kaldi's `cub`, `cudafeat`, `cudadecoder`, built by the Vosk GPU
    images; the requirement patterns' `make:` names). A target of the tree's own Makefile is the tree pass's
    (auditor/project/makefile.py)."""
    skip = False
    for i, w in enumerate(words[1:], 1):
        if skip:
            skip = False
            continue
        if w in ("-j", "-C", "-f", "-l", "-o", "-W", "--file", "--directory", "--jobs"):
            skip = w != "-j" or i + 1 < len(words) and words[i + 1].isdigit()
            continue
        if w.startswith("-") or "=" in w or "$" in w:
            continue
        rule = m.match_requirement("make:" + w.lower())
        if rule is not None:
            line, c = pos.at(nodes[i].start_point)
            # Kaldi's `cub` target only fetches NVIDIA CUB's headers, which nothing reads without a CUDA build (its
            # CPU images run it too): worth knowing; the CUDA libraries' targets are what fails
            col.add(rule, f"make {w}", line, c, c + len(w), severity="info" if w.lower() == "cub" else None,
                    note=" (NVIDIA CUB's headers, read only by a CUDA build)" if w.lower() == "cub" else "")


def _record_local_extras(col: Collector, word: str, line: int, c: int, cwd: str | None,
                         width: int | None = None) -> None:
    """`pip install -e ".[compile]"`: kept in the file's summary; the tree pass (auditor/project/local_extras.py)
    reads what the extra lists in the project's pyproject.toml (t15j)."""
    word = word.strip("\"'")
    call = local_extra_call(word.split("[", 1)[0], word.partition("[")[2].rstrip("]").split(","), cwd)
    if call is None:
        return
    call.update(line=line, col=c, end_col=c + (len(word) if width is None else width))
    keep_call(col.result, LOCAL_EXTRAS, call)


def _keep_call(col: Collector, pos: _Positions, words: list[str], nodes: list, call: dict | None, key: str) -> None:
    """A recorded call (cmake configure, launch line) with its position, kept in the file's summary under `key` for
    the tree pass that reads the file it names."""
    if call is None:
        return
    line, c = pos.at(nodes[0].start_point)
    call.update(line=line, col=c, end_col=c + len(words[0]))
    keep_call(col.result, key, call)


def _record_cmake(col: Collector, pos: _Positions, words: list[str], nodes: list, cwd: str | None) -> None:
    """A `cmake` configure call, kept in the file's summary: the tree pass (auditor/project/cmake_calls.py) reads the
    CMakeLists.txt of its source folder and reports the call when that build needs CUDA (t15h)."""
    _keep_call(col, pos, words, nodes, cmake_call(words[1:], cwd), CMAKE_CALLS)


# the root of the source tree `cd` moved into, as a folder name no path of a script spells
_TREE_ROOT = "<source tree>"


def _configures_source_tree(col: Collector, m, pos: _Positions, words: list[str], nodes: list,
                            source_tree: _SourceTree) -> None:
    """A `cmake` configure of the CUDA project's source tree the script is in (`cd 3rdparty/mscclpp && mkdir build &&
    cd build && cmake ..`: MSCCL++ as NanoFlow's setup.sh builds its submodule; tp52a): the project's build, reported
    as `_builds` reports `pip install .` there. The tree pass reads the CMakeLists.txt where the folder is in the
    checkout (cmake_calls.py); a submodule not cloned has none, and its name is what says what it builds."""
    if source_tree.here is None or not source_tree.here[0].startswith("url:"):
        return          # only a repository the rules name (a distribution's name is also a project's folder: `kernels`)
    call = cmake_call(words[1:], "/".join([_TREE_ROOT, *source_tree.sub]))
    if call is None or call["dir"].split("/", 1)[0] != _TREE_ROOT:
        return          # `cmake --build build`, a source outside the tree (`cmake ../../other`), a variable's folder
    symbol, rule = source_tree.here
    line, c = pos.at(nodes[0].start_point)
    col.add(rule, symbol, line, c, c + len(words[0]), note=" (configured here from its source tree)")


# launchers that start one process per device (pd6): `python -m torch.distributed.launch`, torchrun, deepspeed
_MULTI_PROCESS_MODULES = ("torch.distributed.launch", "torch.distributed.run")


def _record_launch(col: Collector, pos: _Positions, words: list[str], nodes: list, cwd: str | None,
                   multi_process: bool = False) -> None:
    """The Python file a launch line runs, kept in the file's summary: the tree pass (auditor/project/launched.py)
    reports the line when that file is an attention wrapper (t15k). `multi_process`: the line runs under srun /
    mpirun; a torchrun, deepspeed or `python -m torch.distributed.launch` line is one too (the launched script's
    hard-coded NCCL then starts a process group, auditor/project/launch_imports.py)."""
    # `torchrun ... $code_dir/finetune_s2s.py` after `code_dir=examples/s2s`: the file the script's own variable names
    # (t21b, SLAM-LLM); a value that is itself an expansion stays unread
    found = launched_call_options([_VARIABLE_REF_RE.sub(lambda v: _literal_var(col, v), w) for w in words[1:]], cwd)
    call = None
    if found is not None:           # where the launched file is named (a `torchrun \` line's path is lines below)
        call, at = found[0], found[1] + 1
        if multi_process or words[0].rsplit("/", 1)[-1] in ("torchrun", "deepspeed") or \
                any(w in _MULTI_PROCESS_MODULES for w in words[1:at]):
            call["multi_process"] = True
        if at < len(nodes):
            line, c = pos.at(nodes[at].start_point)
            call.update(file_line=line, file_col=c, file_end_col=c + len(words[at]))
        held = _held_options(col, words[at + 1:])
        if held:
            call["options"] = sorted(set(call.get("options") or []) | held)
        switches = _switch_positions(pos, words, nodes, at)
        if switches:
            call["switch_at"] = switches
        folders = _python_path(col, nodes[0], cwd)
        if folders:
            call["pythonpath"] = folders
        if _in_command_substitution(nodes[0]):
            call["captured"] = True     # `ids=$(python pick_gpus.py 2)`: the script takes what the file prints
        visible = _visible_devices(col, nodes[0])
        if visible > 1:
            call["visible_devices"] = visible
    _keep_call(col, pos, words, nodes, call, LAUNCHED)


def _visible_devices(col: Collector, program) -> int:
    """How many GPU ids the launch shows its script: the command's own `CUDA_VISIBLE_DEVICES=0,1 python ...` prefix,
    else the last `export CUDA_VISIBLE_DEVICES=0,1,2,3` (or plain assignment) above it, not one that prefixed another
    command; 0 where the value is the script's expansion or none is set (tp55a)."""
    command = program.parent
    value = next((_word(a.child_by_field_name("value")) for a in (command.children if command is not None else ())
                  if a.type == "variable_assignment" and a.child_by_field_name("value") is not None
                  and _word(a.child_by_field_name("name")) == _VISIBLE_DEVICES), None)
    value = (col.script_vars.get(_SET_VISIBLE, "") if value is None else value).strip("\"'")
    if not value or "$" in value or "`" in value:
        return 0
    return sum(1 for part in value.split(",") if part.strip())


_VISIBLE_DEVICES = "CUDA_VISIBLE_DEVICES"
_SET_VISIBLE = "set:" + _VISIBLE_DEVICES    # script_vars' key of the last one not prefixing a command (no shell name)


def _in_command_substitution(node) -> bool:
    """Whether the node is inside `$(...)` or backquotes (its command's output is taken as text)."""
    while node is not None:
        if node.type == "command_substitution":
            return True
        node = node.parent
    return False


def _held_options(col: Collector, words: list[str]) -> set[str]:
    """The long options of a script variable passed whole after the launched file (`gpt_options=" --distributed-backend
    nccl --fp16 ..."` then `pretrain_gpt3.py ${gpt_options}`: Megatron-style scripts), by name as launched_call_options
    records them; a value's own expansions (`${MP_SIZE}`) stay unread (tp51c)."""
    found: set[str] = set()
    for w in words:
        ref = _VARIABLE_REF_RE.fullmatch(w.strip("\"'"))
        value = col.script_vars.get(ref.group(1), "") if ref is not None else ""
        found |= {o[2:].split("=", 1)[0] for o in value.strip("\"'").replace("\\\n", " ").split()
                  if o.startswith("--") and len(o) > 2}
    return found


_OFF_VALUES = frozenset({"false", "0", "no", "off", "none"})


def _switch_positions(pos: _Positions, words: list[str], nodes: list, at: int) -> dict[str, list[int]]:
    """{option: [line, col, end_col]} of the long options a launch passes its script after the script's word
    (`--fp16` lines below a `torchrun` line), where the launch-option readings report; an option given an off value
    (`--fp16 False`, `--fp16=0`) turns nothing on and is left out."""
    out: dict[str, list[int]] = {}
    for j in range(at + 1, min(len(words), len(nodes))):
        w = words[j]
        if not w.startswith("--") or len(w) < 3 or len(out) >= _MAX_SWITCHES:
            continue
        name, eq, value = w[2:].partition("=")
        value = value if eq else words[j + 1] if j + 1 < len(words) else ""
        if value.strip("\"'").lower() in _OFF_VALUES or name in out:
            continue
        line, c = pos.at(nodes[j].start_point)
        out[name] = [line, c, c + len(w)]
    return out


_MAX_SWITCHES = 64
_CURRENT_DIR_RE = re.compile(r"^(?:\$\(pwd\)|`pwd`|\$\{?PWD\}?)$")


def _python_path(col: Collector, first, cwd: str | None) -> list[str]:
    """The tree folders, relative to where the script started, that PYTHONPATH puts on the launched script's
    `sys.path`: set on the command (`PYTHONPATH=. python tools/train.py`) or earlier in the script (`export
    PYTHONPATH=turbodiffusion`); `$(pwd)` is the current folder, other variables and absolute paths are left out."""
    command = first.parent
    while command is not None and command.type != "command":
        command = command.parent
    value = col.script_vars.get("PYTHONPATH")
    for child in command.children if command is not None else []:
        name = child.child_by_field_name("name") if child.type == "variable_assignment" else None
        if name is not None and name.text == b"PYTHONPATH" and child.child_by_field_name("value") is not None:
            value = _word(child.child_by_field_name("value"))
    if not value or cwd is None or cwd.startswith("/"):
        return []
    out = []
    for entry in value.split(":"):
        entry = "." if _CURRENT_DIR_RE.match(entry) else entry
        folder = make_join(cwd, entry) if entry and "$" not in entry and "`" not in entry else None
        if folder is not None and folder not in out:
            out.append(folder)
    return out


def _record_script_call(col: Collector, pos: _Positions, words: list[str], nodes: list,
                        called: tuple[dict, int]) -> None:
    """A line that runs another shell script of the tree, kept in the file's summary on the word naming the script:
    the tree pass (auditor/project/called_scripts.py) gives the line that script's launch findings."""
    call, at = called
    line, c = pos.at(nodes[at].start_point)
    call.update(line=line, col=c, end_col=c + len(words[at]))
    keep_call(col.result, CALLED_SCRIPTS, call)


def _record_function(col: Collector, node) -> None:
    """A function the script defines, {name: [line of `name() {`, line of its closing `}`]} in its summary: a script
    that sources this one and calls the function gets the body's findings (called_scripts.sourced_function_calls).
    The first definition of a name is kept."""
    name_node = node.child_by_field_name("name")
    if name_node is None:
        return
    summary = col.result.summary if col.result.summary is not None else {}
    summary.setdefault(FUNCTIONS_KEY, {}).setdefault(name_node.text.decode("utf-8", errors="replace"),
                                                     [node.start_point[0] + 1, node.end_point[0] + 1])
    col.result.summary = summary


def _record_make(col: Collector, pos: _Positions, words: list[str], nodes: list, cwd: str | None) -> None:
    """A `make` call, kept in the file's summary: the tree pass (auditor/project/makefile.py) reads the Makefile it
    runs and reports the call when its targets compile with nvcc."""
    call = make_call(words[1:], cwd)
    command = nodes[0].parent
    if call is None or command is not None and any(
            c.type in ("simple_expansion", "expansion", "command_substitution") for c in command.children):
        return             # `make $TARGET`: the target is not known here
    line, c = pos.at(nodes[0].start_point)
    last = nodes[-1]
    end_line, end_c = pos.at(last.end_point)
    call.update(line=line, col=c, end_col=end_c if end_line == line else c + len(words[0]))
    keep_call(col.result, MAKE_CALLS, call)


# a program run by a path in the tree (`cuda_renderer/cuda_renderer`, `./render`): a relative word with a `/`, no
# expansion, and a last part with no extension (not a `.sh` / `.py` script, which other readers follow)
_TREE_PROGRAM_RE = re.compile(r"(?:\./)?(?:[\w.-]+/)*[A-Za-z_][\w-]*")


def _record_built_program(col: Collector, pos: _Positions, words: list[str], nodes: list, cwd: str | None) -> None:
    """A program the script runs by its path in the tree, kept with the `make` calls as the target of that name in
    its folder's Makefile (`{"program": ...}`): the tree pass reports the run when that target compiles with nvcc
    (LLFF's `cuda_renderer/cuda_renderer ...` after `cd cuda_renderer && make`; makefile.make_build_findings)."""
    if cwd is None or "/" not in words[0] or not _TREE_PROGRAM_RE.fullmatch(words[0]):
        return
    folder, _, program = words[0].rpartition("/")
    call = make_call(["-C", folder, program], cwd)
    if call is None:
        return
    line, c = pos.at(nodes[0].start_point)
    call.update(program=words[0], line=line, col=c, end_col=c + len(words[0]))
    keep_call(col.result, MAKE_CALLS, call)


# the rules whose `path:` patterns name a folder that a `make` there builds (other path rules name a place a file is
# read from: `cd /usr/local/cuda/samples && make` is the samples' own build, not the toolkit's location)
def _cd_scope(node, per_statement: bool) -> tuple[int, int] | None:
    """The byte span a `cd` holds for: its subshell (`(cd X && ls)`), or in a Dockerfile its RUN chain (`RUN cd X &&
    cp ...`; a `cd` of its own, a WORKDIR, holds for the later RUN lines); None: the rest of the script."""
    top = node
    while top.parent is not None and top.parent.type != "program":
        top = top.parent
        if top.type == "subshell":
            return top.start_byte, top.end_byte
    return (top.start_byte, top.end_byte) if per_statement and top is not node else None


def _make_folder(col: Collector, m, pos: _Positions, words: list[str], nodes: list, source_tree: _SourceTree) -> None:
    """The folder a `make` builds (`make -C nvdsinfer_custom_impl_Yolo`, or `cd $NVDSINFER_PATH && make` with `ARG
    NVDSINFER_PATH=/opt/nvidia/deepstream/deepstream/sources/libs/nvdsinfer`), its variables expanded, asked of the
    requirement rules as a `path:` (DeepStream's inference library sources, NPU915; tp47a)."""
    folder = next((words[i + 1] if w == "-C" and i + 1 < len(words) else w.partition("=")[2] if w.startswith("--")
                   else w[2:] for i, w in enumerate(words[1:], 1) if w.startswith(("-C", "--directory="))), None)
    if folder is None or not folder.startswith("/"):
        target = source_tree.cd_target
        base = target[0] if target is not None and (target[1] is None or target[1][0] <= nodes[0].start_byte
                                                    < target[1][1]) else ""
        folder = f"{base}/{folder}" if folder and base else folder or base
    folder = _VARIABLE_REF_RE.sub(lambda v: _assigned_literal(col, v.group(1)), folder.strip("\"'")).rstrip("/")
    if not folder:
        return
    symbol = "path:" + folder
    rule = m.match_requirement(symbol.lower())
    if rule is not None and rule.extra.get("folder_build"):
        line, c = pos.at(nodes[0].start_point)
        col.add(rule, symbol, line, c, c + len(words[0]), note=" (built here)")


# Spack's commands that take specs (`spack install amrex +cuda cuda_arch=80`, `spack add`, `spack spec`, `spack develop`)
_SPACK_SPEC_COMMANDS = frozenset({"install", "add", "spec", "develop"})


def _spack_command_specs(col: Collector, m, pos: _Positions, words: list[str], nodes: list) -> None:
    """The specs of a Spack command read as those of an environment (auditor/project/spack.py): the first CUDA
    variant or architecture and the first NVIDIA compiler of the command's words (tp48a)."""
    found: set[str] = set()
    for w, node in zip(words, nodes):
        if w.startswith("-"):
            continue
        for offset, symbol in spec_parts(w):
            rule = m.match_requirement(f"spack:{symbol}")
            if rule is None or rule.code in found:
                continue
            found.add(rule.code)
            wl, wc = pos.at(node.start_point)
            wc += node.text[:1] in (b"'", b'"')
            col.add(rule, symbol, wl, wc + offset, wc + offset + len(symbol))


def _module_options(col: Collector, m, pos: _Positions, module: str, words: list[str], nodes: list) -> None:
    for i, w in enumerate(words):
        if not w.startswith("-"):
            continue
        option = w if "=" in w or i + 1 >= len(words) or words[i + 1].startswith("-") else f"{w}={words[i + 1]}"
        for command in (module, module.rsplit(".", 1)[-1]):
            rule = m.match_command(f"{command} {option}")
            if rule is not None:
                line, c = pos.at(nodes[i].start_point)
                col.add(rule, f"{command} {option}", line, c, c + len(w))
                break


def _scheduler_short_options(col: Collector, m, pos: _Positions, node) -> None:
    """`srun -p gpu`, `sbatch -G 8`: Slurm's short options for the partition and the GPU count; `sbatch -C gpu`
    (oumi's Perlmutter launcher, tp38) the node features, as `#SBATCH -C gpu` is read."""
    words = [c for c in node.children if c.type in ("word", "string", "raw_string", "concatenation", "number",
                                                      "command_name")]
    for i, w in enumerate(words[:-1]):
        if w.type == "command_name" and w.text.rsplit(b"/", 1)[-1].decode() in _SLURM:
            for flag, value in zip(words[i + 1:], words[i + 2:]):
                key = _SLURM_SHORT.get(flag.text.decode()[1:]) if flag.text in (b"-p", b"-G", b"-C", b"-A") else None
                literal = _word(value)
                if key and "$" not in literal:
                    fl, fc = pos.at(flag.start_point)
                    col.add(m.match_setting(key, literal), f"{flag.text.decode()} {literal}", fl, fc,
                            fc + len(flag.text), value=literal)
            return


def _heredoc_command(body):
    """(the redirected statement, its command, the command's name) a here-document is fed to; None when it is no
    plain command's."""
    redirect = body.parent
    statement = redirect.parent if redirect is not None else None
    if statement is None or statement.type != "redirected_statement":
        return None
    command = next((c for c in statement.children if c.type == "command"), None)
    name = command.child_by_field_name("name") if command is not None else None
    return None if command is None or name is None else (statement, command, name.text)


def _written_files(body) -> list[bytes] | None:
    """The files a `cat` / `tee` here-document is written to (`cat <<EOT > $config_json`, `cat >> .../CMakeLists.txt
    << "EOF"`), lower-cased and unquoted; None when no cat / tee writes it."""
    fed = _heredoc_command(body)
    if fed is None or fed[2] not in (b"cat", b"tee"):
        return None
    statement, command, _name = fed
    targets = [n.text.lower() for n in _walk(statement) if n.type == "file_redirect"]
    targets += [w.text.lower() for w in command.children if w.type == "word"]
    return [t.rstrip(b"\"'") for t in targets]


# programs that apply Kubernetes manifests read from standard input (`kubectl apply -f - <<EOF`)
_MANIFEST_READERS = frozenset({b"kubectl", b"oc"})
_STDIN_FILENAME_RE = re.compile(rb"\s(?:-f|--filename)(?:\s+|=)-(?:\s|$)")


def _feeds_manifest(body) -> bool:
    """Is this here-document a manifest fed to `kubectl apply -f -` / `kubectl create -f -` (or OpenShift's `oc`)?
    Kubernetes reads `-f -` from standard input (kubectl reference, "apply": `-f, --filename`); tp46b, codeflare-sdk's
    e2e workflow creates its Kueue ClusterQueue so."""
    fed = _heredoc_command(body)
    # on the statement's first line: tree-sitter-bash leaves the `-` before `<<EOF` out of the command's words
    if fed is not None and fed[2] in _MANIFEST_READERS:
        return _STDIN_FILENAME_RE.search(fed[0].text.split(b"\n", 1)[0]) is not None
    # `cat <<EOF | kubectl apply -f -` (also through `envsubst`): tree-sitter-bash holds the pipe after the
    # here-document's start in its redirect; the manifest reaches kubectl through the pipe (tp58a)
    piped = [c for p in body.parent.children if p.type == "pipeline" for c in _walk(p) if c.type == "command"]
    return fed is not None and fed[2] in (b"cat", b"envsubst") and any(
        (c.child_by_field_name("name") or c).text in _MANIFEST_READERS and _STDIN_FILENAME_RE.search(b" " + c.text) is not None
        for c in piped)


def _writes_config(body) -> bool:
    """Is this here-document a JSON / YAML config the script writes (`cat <<EOT > $config_json` with a `{`
    body, `cat > ds_config.yaml <<EOF`), or a manifest it applies (`kubectl apply -f - <<EOF`)?"""
    if _feeds_manifest(body):
        return True
    targets = _written_files(body)
    if targets is None:
        return False
    text = body.text.lstrip()
    return any(t.endswith((b".json", b".yaml", b".yml", b"json", b"_config")) for t in targets) \
        or text.startswith(b"{") and text.rstrip().endswith(b"}")


def _writes_cmake(body) -> bool:
    """Is this here-document CMake the script writes or appends to a CMake file (SevenNet's patch_lammps.sh: `cat >>
    $lammps_root/cmake/CMakeLists.txt << "EOF"` with `find_package(CUDA)`, CUDA flags and links)?"""
    return any(t.endswith((b"cmakelists.txt", b".cmake")) for t in _written_files(body) or [])


# files a here-document writes that are scripts: shell scripts and batch-scheduler job files
# ... and the shell's startup files, which every later login shell runs (`cat <<EOF >> .bashrc` in RAPIDS' dev
# container features, tp41)
_SCRIPT_SUFFIXES = (b".sh", b".bash", b".slurm", b".sbatch", b".job", b".pbs", b".qsub", b".lsf", b"bashrc",
                    b".bash_profile", b".profile", b".zshrc")
# programs that read a here-document on their standard input as a script to run
_SCRIPT_READERS = frozenset({b"bash", b"sh", b"zsh", b"dash", b"sbatch", b"qsub", b"bsub", b"ssh", b"srun"})
# a POSIX shell's `#!` line (`#!/bin/bash`, `#!/usr/bin/env sh`)
_SHELL_SHEBANG = rb"#!\s*\S*(?:/|env\s+)(?:ba|z|da)?sh\b"
_SHELL_SHEBANG_RE = re.compile(_SHELL_SHEBANG)
# a body that opens as a script: a shell `#!` line or a scheduler directive
_SCRIPT_HEAD_RE = re.compile(rb"\s*" + _SHELL_SHEBANG + rb"|\s*#(?:SBATCH|PBS|BSUB)\s")


def opens_as_shell_script(data: bytes) -> bool:
    """Does the file's first line name a POSIX shell (`#!/bin/bash`)? Then its lines are commands, whatever its name."""
    return _SHELL_SHEBANG_RE.match(data.lstrip(b"\xef\xbb\xbf")) is not None


def _runs_or_writes_script(body) -> bool:
    """Is this here-document a script: written to a script or job file (`cat > run_${i}.sh <<EOF`, `cat <<EOT >
    job.slurm`, or any file when the body opens with `#!/bin/bash` / `#SBATCH`), or fed to a program that runs it
    (`sbatch <<EOF`, `bash <<EOF`, `ssh $host <<EOF`)?"""
    targets = _written_files(body)
    if targets is not None:
        return any(t.endswith(_SCRIPT_SUFFIXES) for t in targets) or bool(_SCRIPT_HEAD_RE.match(body.text))
    statement = body.parent.parent if body.parent is not None else None
    if statement is None or statement.type != "redirected_statement":
        return False
    command = next((c for c in statement.children if c.type == "command"), None)
    name = command.child_by_field_name("name") if command is not None else None
    return name is not None and name.text.rsplit(b"/", 1)[-1] in _SCRIPT_READERS


# slurm.conf's generic-resource keys (slurm.conf(5): `GresTypes=gpu,mps`, `NodeName=... Gres=gpu:tesla:1`), not a
# job's `--gres=` option
_SLURM_CONF_GRES_RE = re.compile(r"(?<![\w-])(GresTypes|Gres)=([\w:,]+)")

# `set(NAME VALUE ...)` in CMake text a script writes (TVM's config.cmake convention)
_CMAKE_SET_RE = re.compile(r"\bset\s*\(\s*([A-Za-z_]\w*)\s+\"?([^\s\")]*)")


def _echoed_cmake(col: Collector, pos: _Positions, command) -> None:
    """`echo set\\(USE_CUDA ON\\) >> config.cmake`, `echo "set(USE_CUBLAS ON)" >> build/config.cmake`: a line of CMake a
    script appends to a CMake file (TVM's and MLC LLM's build, whose CMakeLists.txt includes config.cmake; TVM docs,
    "Install from Source": `echo "set(USE_CUDA ON)" >> config.cmake`; tp43, project test108). Its `set(NAME VALUE)`
    is the build switch `-DNAME=VALUE` would be; other commands go to the CMake reader. Not a message: the words go to
    the file, not the terminal."""
    statement = command.parent
    if statement is None or statement.type != "redirected_statement":
        return
    targets = [n.text.lower().strip(b"\"'") for n in _walk(statement) if n.type == "file_redirect"]
    if not any(t.endswith((b".cmake", b"cmakelists.txt")) for t in targets):
        return
    words = [w for w in command.children[1:] if w.type in ("word", "string", "raw_string", "concatenation")]
    if not words:
        return
    line, c = pos.at(words[0].start_point)
    if line > len(col.lines):
        return
    # the shell's own quoting taken off (`set\(USE_CUDA ON\)`, `"set(USE_CUDA ON)"`), as the file receives it
    text = re.sub(r"\\(.)", r"\1", " ".join(w.text.decode("utf-8", errors="replace") for w in words))
    text = text.replace('"', "").replace("'", "")
    before = len(col.result.findings)
    from dataclasses import replace

    from auditor.project.cmake import analyze_cmake

    for f in analyze_cmake(col.engine, ("\n" * (line - 1) + text).encode("utf-8"), "CMakeLists.txt").findings:
        col.add_finding(replace(f, path=col.rel, col=c, end_col=c + len(text)))
    if len(col.result.findings) == before:
        for found in _CMAKE_SET_RE.finditer(text):
            cmake_defines(col, f"-D{found.group(1)}={found.group(2)}", lambda off: (line, c))


def _cmake_heredoc(col: Collector, body) -> None:
    """A here-document written into a CMake file, read by the CMake reader on its own lines (t36b)."""
    from dataclasses import replace

    from auditor.project.cmake import analyze_cmake

    text = "\n" * body.start_point[0] + body.text.decode("utf-8", errors="replace")
    for f in analyze_cmake(col.engine, text.encode("utf-8"), "CMakeLists.txt").findings:
        col.add_finding(replace(f, path=col.rel))


def _heredoc_body(command):
    holder = command.parent
    if holder is None or holder.type != "redirected_statement":
        return None
    for redirect in holder.children:
        if redirect.type == "heredoc_redirect":
            return next((c for c in redirect.children if c.type == "heredoc_body"), None)
    return None


def _wrapped_job(col: Collector, pos: _Positions, words: list[str], nodes: list) -> None:
    """`sbatch --wrap="srun python train.py ..."` / `sbatch --wrap "..."`: Slurm runs the string as the job's
    script, so it is read as one in its place, like `bash -c "..."` (t15o)."""
    for i, w in enumerate(words[1:], 1):
        if w.startswith("--wrap=") and nodes[i].type == "concatenation":
            inner = [c for c in nodes[i].children if c.type in ("string", "raw_string")]
            if inner:
                _nested_script(col, pos, inner[0])
        elif w == "--wrap" and i + 1 < len(nodes) and nodes[i + 1].type in ("string", "raw_string"):
            _nested_script(col, pos, nodes[i + 1])


# ssh's options that take a value (ssh(1), OpenBSD: https://man.openbsd.org/ssh)
_SSH_VALUE_OPTIONS = set("BbcDEeFIiJLlmOopQRSWw")


def _ssh_command(words: list[str]) -> int | None:
    """The index of the one word after the destination of `ssh [options] destination "command"`: the command ssh
    runs on the remote host with its shell (ssh(1): "If a command is specified, it will be executed on the remote
    host instead of a login shell"), or the one word left after the options when the destination is an expansion;
    None when there is none or it is more than one word."""
    i = 1
    while i < len(words) and words[i].startswith("-"):
        flag = words[i]
        i += 2 if len(flag) == 2 and flag[1] in _SSH_VALUE_OPTIONS else 1
    # `ssh -o X $host_ip "cmd"`: an expanded destination is not one of `words` (the command's word nodes)
    return i + 1 if i + 2 == len(words) else i if i + 1 == len(words) else None


def _quoted_whole(node) -> bool:
    """A quoted string, or a concatenation that opens and closes one (ANCE's `cmd="python -m ... --cache_dir
    "${dir}cache/" --data_dir ..."`): without its outer quotes the text is the command line the string spells, its
    inner quotes pairing up around the expansion as the author wrote them."""
    if node.type in ("string", "raw_string"):
        return True
    return node.type == "concatenation" and len(node.children) > 1 and node.children[0].type == "string" \
        and node.children[-1].type == "string"


def _nested_script(col: Collector, pos: _Positions, node, multi_process: bool = False) -> None:
    """The script string of `bash -c "..."`, read as a script in its place: its lines and columns are kept by
    padding with blank lines and spaces; `multi_process`: the string runs once per srun / mpirun task."""
    row, byte_col = node.start_point
    inner = node.text.decode("utf-8", errors="replace")
    quoted = _quoted_whole(node) and len(inner) >= 2
    start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + quoted
    scan_shell(col, "\n" * row + " " * start + (inner[1:-1] if quoted else inner), multi_process=multi_process)


def _printed_only(code: str) -> bool:
    """A `python -c` program that only imports and prints values (`import torch; print('CUDA:',
    torch.version.cuda)`, `from torch.utils import cpp_extension; print(cpp_extension.CUDA_HOME)`): a report of the
    build in the log. On Ascend it prints None and goes on; nothing in it is a setting to port (t15n)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return False
    body = tree.body
    prints = [s.value for s in body if isinstance(s, ast.Expr) and isinstance(s.value, ast.Call)
              and isinstance(s.value.func, ast.Name) and s.value.func.id == "print"]
    if not prints or len(prints) + sum(isinstance(s, (ast.Import, ast.ImportFrom)) for s in body) != len(body):
        return False
    # values read, not runtime queries: `print(torch.cuda.is_available())` asks the device (a CI step's check that
    # its runner has the GPU, labelled `device` in test4) and stays a finding
    return not any(isinstance(n, ast.Call) for call in prints for arg in call.args for n in walk_list(arg))


_OUTPUT_USED = ("command_substitution", "process_substitution", "pipeline", "test_command", "redirected_statement",
                "list", "binary_expression", "variable_assignment")


def _output_to_log(command) -> bool:
    """The command's output goes to the log: it is not read by a `$(...)`, a pipe, a test, a redirect or an `&&` /
    `||` chain (`[ "$(python -c 'print(torch.version.cuda)')" = "12.1" ]` decides something)."""
    node = command.parent
    while node is not None:
        if node.type in _OUTPUT_USED:
            return False
        node = node.parent
    return True


def _prints_as_results(code: str) -> str:
    """`CUDA_VERSION=$(python -c "import torch; print(torch.version.cuda)")`: the script reads what the program prints,
    so a print is its result, not a message for a person (which the Python pass leaves quiet, lead decision 48): each
    top-level one-line `print(...)` without keywords is read as the value it prints, `_=   (...)`, same columns (t36a)."""
    try:
        tree = ast.parse(code)
    except (SyntaxError, ValueError, RecursionError):
        return code
    lines = code.split("\n")
    for stmt in tree.body:
        call = stmt.value if isinstance(stmt, ast.Expr) else None
        if isinstance(call, ast.Call) and isinstance(call.func, ast.Name) and call.func.id == "print" \
                and not call.keywords and call.lineno == call.end_lineno:
            raw = lines[call.lineno - 1].encode("utf-8")
            at = call.func.col_offset
            lines[call.lineno - 1] = (raw[:at] + b"_=   " + raw[at + 5:]).decode("utf-8")
    changed = "\n".join(lines)
    try:
        ast.parse(changed)
    except (SyntaxError, ValueError, RecursionError):
        return code
    return changed


def _inline_python(col: Collector, pos: _Positions, code: str, node, output_read: bool = False) -> None:
    """`python -c "import torch; print(torch.cuda.is_available())"`: the code goes through the Python pass, its
    findings placed where the code sits in the script; when the script reads its output, its prints are results."""
    from dataclasses import replace

    if not re.search(r"cuda|nccl|\bimport\b", code.lower()):
        return          # nothing the rules look for (a CUDA call, or an import: `python -c "import bitsandbytes"`)
    row, byte_col = node.start_point
    start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + (node.type in ("string", "raw_string"))
    source = _prints_as_results(code) if output_read else code
    result = col.engine.analyze_bytes((source + "\n").encode("utf-8"), col.rel + ".py")
    for f in result.findings:
        line = row + f.line
        shift = start if f.line == 1 else 0
        col.add_finding(replace(f, path=col.rel, line=line, end_line=row + f.end_line, col=f.col + shift,
                                end_col=f.end_col + (start if f.end_line == 1 else 0), fix="none",
                                data={k: v for k, v in f.data.items() if k != "replace"}))


# a sed substitution `s/PATTERN/REPLACEMENT/`, with `/`, `#`, `|` or `@` as the delimiter
# a sed replacement's back-reference to the matched text (`\1`..`\9`, an unescaped `&`)
_SED_BACK_REFERENCE_RE = re.compile(r"\\[1-9]|(?<!\\)&")
_SED_SUBSTITUTION_RE = re.compile(r"(?<![\w.])s([/#|@])((?:\\.|(?!\1).)*)\1((?:\\.|(?!\1).)*)\1")
# the text a sed command must hold to be read for CUDA edits: a CUDA call, or a pin of a CUDA build (`+cu111`)
_CUDA_WORD_RE = re.compile(r"cuda|\+cu\d", re.I)
# ... or a version operator, for a substitution that rewrites a requirement's pin (`s/torch >= 2.0.0/torch == 2.0.1/`)
_SED_EDIT_WORD_RE = re.compile(r"cuda|\+cu\d|[=<>~]=|[<>]", re.I)
# a requirement a substitution writes: `torch==1.9.1+cu111` (a name, a version operator, a version)
_REQUIREMENT_PIN_RE = re.compile(r"([A-Za-z0-9][\w.-]*)\s*(?:===?|~=|>=|<=|!=|<|>)\s*[\w.*+!-]+")
# Python CUDA calls a substitution can write into a source file: `.cuda()`, `torch.cuda.<name>`, `.to("cuda")`
_CUDA_CALL_RE = re.compile(r"\.cuda\(\s*[\w:'\"]*\s*\)|\btorch\.cuda\.\w+(?:\(\))?|\.to\(\s*['\"]cuda(?::\d+)?['\"]\s*\)")


# rpm's install and upgrade modes (`-i`, `-ivh`, `-Uvh`, `-Fvh`, `--install`, `--upgrade`; rpm(8))
_RPM_INSTALL_RE = re.compile(r"-[ivhUF]*[iUF][ivhUF]*|--install|--upgrade|--freshen")
# an RPM file's package name: what comes before the version (`ucx-cuda-1.19.1-1.el9.x86_64.rpm`, or `ucx-cuda--1...`
# once a `${UCX_VERSION}` is taken out)
_RPM_NAME_RE = re.compile(r"([A-Za-z][\w.+]*(?:-[A-Za-z][\w.+]*)*)-(?=\d|-)")


# sed's one-line append / insert commands (GNU sed, "Commands": `4a text`, `/re/i text`, `$a\\text`): the text
# becomes a line of the file
_SED_APPEND_RE = re.compile(r"\s*(?:\d+|\$|/[^/]*/)\s*[ai]\\?\s*(\S.*)", re.S)


# commands whose arguments are patterns or queries, not text they write: `grep -q "Gres=gpu:"`, `scontrol show node |
# grep ...` (review49 item 6); sed writes its replacements (review50 item 10), so only its patterns are skipped
_SEARCHING_COMMANDS = frozenset({b"grep", b"egrep", b"fgrep", b"rg", b"awk", b"gawk", b"scontrol", b"sinfo"})
# a sed address that selects lines to delete or print (`sed -i '/Gres=gpu:/d' slurm.conf`): a pattern, not text the
# edit writes (a substitution's pattern is blanked by _sed_pattern_blanked; its replacement is written text)
_SED_ADDRESS_RE = re.compile(r"(?<![\w\\])/(?:[^/\\\n]|\\.)+/\s*[dpDP](?![\w])")


def _searched_text(node) -> bool:
    """The word or string is an argument of a command that searches text (`grep`, `awk`, `scontrol`): a pattern or
    a query, not a line the script writes."""
    command = node.parent
    while command is not None and command.type in ("string", "concatenation"):
        command = command.parent
    name = command.child_by_field_name("name") if command is not None and command.type == "command" else None
    return name is not None and name.text.rsplit(b"/", 1)[-1] in _SEARCHING_COMMANDS


# a test's operands (`[ "$v" = "+cu118" ]`, `[[ ... ]]`, `test`) and a case pattern: text compared with, not written
_COMPARING_NODES = frozenset({"test_command", "binary_expression", "unary_expression", "case_item"})


def _compared_text(node) -> bool:
    """The word or string is a pattern or operand the script compares text with (a `grep` pattern, a `[ ... ]` /
    `[[ ... ]]` / `test` operand, a `case` pattern): a CPU guard's `grep -q "+cu118"` installs nothing (review51
    item 8)."""
    parent = node.parent
    while parent is not None and parent.type in ("string", "concatenation"):
        parent = parent.parent
    if parent is not None and parent.type in _COMPARING_NODES:
        return True
    name = parent.child_by_field_name("name") if parent is not None and parent.type == "command" else None
    return _searched_text(node) or name is not None and name.text.rsplit(b"/", 1)[-1] in (b"test", b"[")


def _sed_pattern_blanked(node, text: str) -> str:
    """`sed -i "s/--use_gpu:/--use_npu:/g" $file` (PaddleRec's prepare_npu_test.sh): a substitution's pattern is
    the text the edit takes out, so it is blanked (columns kept) before the words are read; its replacement is what
    the file gets (tp48b). A replacement that puts the matched text back (`\\1`..`\\9`, `&`: `s/^#\\(.*\\)/\\1/`
    uncomments a line) keeps its pattern, which is then what the file gets (review48 item 9)."""
    command = node.parent
    while command is not None and command.type in ("string", "concatenation"):
        command = command.parent
    name = command.child_by_field_name("name") if command is not None and command.type == "command" else None
    if name is None or name.text.rsplit(b"/", 1)[-1] != b"sed":
        return text
    return _SED_SUBSTITUTION_RE.sub(lambda s: s.group(0) if _SED_BACK_REFERENCE_RE.search(s.group(3)) else
                                    f"s{s.group(1)}{' ' * len(s.group(2))}{s.group(1)}{s.group(3)}{s.group(1)}",
                                    text)


def _sed_appended_commands(col: Collector, pos: _Positions, words: list[str], nodes: list) -> None:
    """`sed -i -e '4a  python3 -m pip install ... pytorch-triton==3.3.1; exit 0' scripts/install_triton_wheel.sh`
    (Pawsey's ROCm PyTorch build, before `make triton`): a line appended to (or inserted in) a shell script is a
    command that script runs, read as a script in its place (tp47a). Only into `.sh` files."""
    operands = [w for i, w in enumerate(words[1:], 1) if not w.startswith("-") and words[i - 1] not in ("-e", "-f")]
    scripts = [w for w in operands if w.endswith(".sh")]
    if not scripts:
        return
    expressions = [i + 1 for i, w in enumerate(words[:-1]) if w in ("-e", "--expression")] or \
        [next(i for i, w in enumerate(words) if w == operands[0])]
    for at in expressions:
        found = _SED_APPEND_RE.fullmatch(words[at])
        if found is None or words[at] in scripts:
            continue
        node = nodes[at]
        row, byte_col = node.start_point
        raw = node.text.decode("utf-8", errors="replace")
        offset = raw.find(found.group(1)[:20])
        if offset < 0 or "\n" in raw[:offset]:
            continue
        start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace")) + offset
        scan_shell(col, "\n" * row + " " * start + found.group(1))


def _sed_cuda_edits(col: Collector, pos: _Positions, node) -> None:
    """`sed -i -e 's/dict()))/dict())).cuda()/g' ldm/util.py` (camenduru's Colab launchers patch the webui's
    sources, also from a line that `sed` itself appends to launch.py): a substitution whose replacement writes a CUDA
    call the pattern did not have puts CUDA code into the project's Python; the call goes through the Python pass.
    A substitution that takes the call out (`s/.cuda()/.npu()/`) is a port, and carries nothing."""
    from dataclasses import replace

    text = node.text.decode("utf-8", errors="replace").replace("\\(", "(").replace("\\)", ")")
    row, byte_col = node.start_point
    start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace"))
    for sub in _SED_SUBSTITUTION_RE.finditer(text):
        pattern, replacement = sub.group(2), sub.group(3)
        line = row + 1 + text.count("\n", 0, sub.start(3))
        pin = _REQUIREMENT_PIN_RE.fullmatch(replacement.strip())
        # `sed -i 's/torch>=1.7/torch==1.9.1+cu111/g' requirements.txt` (ByteTrack's Dockerfile and its forks, tp41):
        # the substitution pins a CUDA build of the package into the file the next `pip install -r` reads; the pin is
        # read as that requirement. One that swaps one CUDA build for another (`s/+cu121/+cu118/`) edits a pin the
        # file already has, where it is reported
        cuda_pin = pin is not None and "+cu" in replacement.lower() and "+cu" not in pattern.lower()
        # `sed -i 's/torch >= 2.0.0/torch == 2.0.1/' /vllm/requirements.txt` (llm-perf-bench's vLLM images): the
        # substitution rewrites a requirement's pin; the new pin is read as that requirement (tp46b). A text that
        # only looks like one (`s/a>b/a<b/`) names no package a rule reads
        edited = _REQUIREMENT_PIN_RE.fullmatch(pattern.strip())
        pin_edit = pin is not None and edited is not None and "+cu" not in pattern.lower() and \
            replacement.strip() != pattern.strip() and pin.group(1).lower() == edited.group(1).lower()
        if cuda_pin or pin_edit:
            c = start + 1 + sub.start(3) if line == row + 1 else 1
            for symbol, _, rule, note in requirement_hits(matchers(col.engine), replacement.strip()):
                col.add(rule, symbol, line, c, c + len(replacement), note=note)
            continue
        added = [c.group(0) for c in _CUDA_CALL_RE.finditer(replacement)]
        if not added or len(added) <= len(_CUDA_CALL_RE.findall(pattern)):
            continue
        for call in added:
            code = ("import torch\n_ = " + call) if call.startswith("torch.") else "_ = model" + call
            result = col.engine.analyze_bytes((code + "\n").encode("utf-8"), col.rel + ".py")
            c = start + 1 + sub.start(3) if line == row + 1 else 1
            for f in result.findings:
                col.add_finding(replace(f, path=col.rel, line=line, end_line=line, col=c, end_col=c + len(call),
                                        fix="none", data={k: v for k, v in f.data.items() if k != "replace"}))


# a JSON / YAML pair a substitution writes (`\"default-runtime\": \"nvidia\"`, quotes escaped or not)
_WRITTEN_PAIR_RE = re.compile(r'\\?"?([A-Za-z][\w.-]*)\\?"?\s*:\s*\\?"([^"\\\s,}]+)\\?"')
# an unquoted YAML pair (`nvidia.com/gpu: 2`), read once sed's escapes are taken out; a space after the colon (a URL's
# `://` is no pair)
_WRITTEN_YAML_PAIR_RE = re.compile(r"(?<![\w./-])([A-Za-z][\w.-]*(?:/[\w.-]+)?)\s*:\s+([^\s,}'\"]+)")


def _sed_unescaped(part: str) -> str:
    """A sed pattern or replacement with its escaped delimiters and spaces (`\\/`, `\\ `) written plainly (read for
    its pairs only; the column is the substitution's)."""
    return re.sub(r"\\([/#|@ ])", r"\1", part)


def _sed_written_settings(col: Collector, m, pos: _Positions, node) -> None:
    """`sudo sed -i 's/^}/    ,\\n    \\"default-runtime\\": \\"nvidia\\"\\n}/' /etc/docker/daemon.json` (jetbot's
    set_nvidia_runtime.sh): a key / value pair a substitution writes into a config file that its pattern did not
    have, read as that config's setting (NPU017's `default-runtime=nvidia`; tp50a). Also one YAML pair written
    unquoted with sed's escapes (`sed -i "s/nvidia.com\\/gpu:\\ 1/nvidia.com\\/gpu:\\ ${nb_gpus}/g" job.yaml`: a job
    spec's Kubernetes GPU request given a new count names NVIDIA's device-plugin resource, which Ascend's device
    plugin calls `huawei.com/Ascend910`, so the edit no longer matches a ported spec; tp53a)."""
    text = node.text.decode("utf-8", errors="replace")
    row, byte_col = node.start_point
    start = len(pos.lines[row][:byte_col].decode("utf-8", errors="replace"))
    for sub in _SED_SUBSTITUTION_RE.finditer(text):
        had = {p.group(1, 2) for p in _WRITTEN_PAIR_RE.finditer(sub.group(2))}
        had |= {p.group(1, 2) for p in _WRITTEN_YAML_PAIR_RE.finditer(_sed_unescaped(sub.group(2)))}
        written = list(_WRITTEN_PAIR_RE.finditer(sub.group(3)))
        yaml_pairs = not written and "\\n" not in sub.group(3)       # one line written (not a block)
        for pair in written or (_WRITTEN_YAML_PAIR_RE.finditer(_sed_unescaped(sub.group(3))) if yaml_pairs else ()):
            if pair.group(1, 2) in had:
                continue            # the pair the file has already: the file is where it is read
            rule = m.match_setting(pair.group(1), pair.group(2))
            if rule is not None:
                at = sub.start(3) + pair.start()
                line = row + 1 + text.count("\n", 0, at)
                c = start + 1 + at if line == row + 1 else at - text.rfind("\n", 0, at)
                col.add(rule, f"{pair.group(1)}={pair.group(2)}", line, c, c + len(pair.group(0)),
                        value=pair.group(2))


def _tree_part(m, tree: tuple[str, Rule], folder: str) -> tuple[str, Rule]:
    """A folder of a known source tree: its own package when a rule names `<tree symbol>#<folder>` (t15q:
    FlashAttention's fused kernels in csrc/), else the tree's."""
    part = f"{tree[0]}#{folder.strip('/').lower()}"
    rule = m.match_requirement(part)
    return (part, rule) if rule is not None else tree


def _builds(col: Collector, source_tree: _SourceTree, pos: _Positions, node, path: str = ".") -> None:
    """A build of the source tree at `path` (`.`: the current directory): the project it is a tree of. Not when
    the command picks another target device (`VLLM_TARGET_DEVICE=empty pip install -e .`, the source install
    vllm-ascend documents, builds vLLM without its CUDA kernels)."""
    command = node.parent
    while command is not None and command.type != "command":
        command = command.parent
    if command is not None and _TARGET_DEVICE_RE.search(command.text.decode("utf-8", errors="replace")):
        return
    m = matchers(col.engine)
    here = path.rstrip("/") in (".", "")
    found = source_tree.here if here else (
        source_tree.cloned.get(path.rstrip("/").rsplit("/", 1)[-1]) or m.match_source_tree(path))
    if here and found is not None and source_tree.sub:
        # `cd csrc/rotary && pip install .` inside a flash-attention clone: the folder's package (t16f)
        found = _tree_part(m, found, "/".join(source_tree.sub))
    elif found is None and not path.startswith(("/", "~", "$", "..")) and source_tree.here is not None:
        # `pip install csrc/layer_norm` inside a flash-attention checkout: its extension
        found = _tree_part(m, source_tree.here, path)
    line, c = pos.at(node.start_point)
    end = c + len(node.text.decode("utf-8", errors="replace"))
    if found is not None:
        symbol, rule = found
        col.add(rule, symbol, line, c, end, note=" (built here from its source tree)")
        return
    if _forces_cuda(col, command):
        # `ENV FORCE_CUDA="1"` then `pip install --user -e detectron2_repo` (detectron2, mmcv, pytorch3d, torch-points
        # read FORCE_CUDA to compile their CUDA extensions without a GPU at build time): a tree the patterns do not
        # name, built with its CUDA extensions forced on (t15n)
        last = path.rstrip("/").rsplit("/", 1)[-1]
        project = source_tree.here_origin if path.rstrip("/") in (".", "") else source_tree.origin.get(last, last)
        forced = m.match_setting("shell.force_cuda_build", project) if project else None
        if forced is not None:      # only projects whose setup.py is known to read FORCE_CUDA (the rule's patterns)
            col.add(forced, path, line, c, end, note=f" ({project})" if project != path else "")
            return
    cloned = path.rstrip("/").rsplit("/", 1)[-1] in source_tree.cloned or (
        path.rstrip("/") in (".", "") and source_tree.here_origin in source_tree.origin.values())
    if not cloned and col.context_copies and absolute_folder(source_tree.abs_cwd, path) in col.context_copies:
        # `COPY . odtk/` then `pip install -e odtk/` (or `WORKDIR` there and `pip install -e .`): the build context,
        # the tree's own setup.py, built in the image here (tp46a)
        record_local_build(col.result, ".", "", line, c, end, context=True)
    elif not cloned:
        # a folder of the project's own tree, not a clone: the tree pass reads its setup.py (local_builds, t15u)
        record_local_build(col.result, path, source_tree.cwd, line, c, end, source_tree.tail)


_FORCE_CUDA_RE = re.compile(r"(?:^|\s)FORCE_CUDA=[\"']?(?:1|true|yes|on)\b", re.I)


def _forces_cuda(col: Collector, command) -> bool:
    """FORCE_CUDA is on for this build: set on the command (`FORCE_CUDA=1 pip install -e .`) or earlier in the
    script or Dockerfile (`export FORCE_CUDA=1`, `ENV FORCE_CUDA="1"`)."""
    value = col.script_vars.get("FORCE_CUDA")
    if value is not None and value.strip("\"'").lower() in ("1", "true", "yes", "on"):
        return True
    return command is not None and forces_cuda_text(command.text.decode("utf-8", errors="replace"))


def forces_cuda_text(text: str) -> bool:
    """A text that sets FORCE_CUDA on (`FORCE_CUDA=1 pip install ...`, `ENV FORCE_CUDA="1"`, `export FORCE_CUDA=1`)."""
    return _FORCE_CUDA_RE.search(text) is not None


_OPT_IN_NOTE = " (a CI job that tests the project's own opt-in extra: a plain install does not pull it and an " \
               "Ascend port does not run this job as written; warning at most, clause `guarded`, t11s)"


def _opt_in_ci_job(col: Collector, f) -> None:
    """`pip install .[vllm]` in a GitHub workflow: the job tests the extra it installs, so an error there is a
    warning at most (rules/severity_policy.yaml `guarded`: an optional CUDA-only dependency, the project has a path
    without it; optimum-neuron's vLLM CI job, t11s, tuned on heldout11). Scripts and Dockerfiles keep their
    severity: a user runs them as written."""
    from auditor.project import is_github_workflow

    if f is None or f.severity != "error" or not is_github_workflow(col.rel):
        return
    from dataclasses import replace

    col.result.findings[-1] = replace(f, severity="warning", message=f.message + _OPT_IN_NOTE)


def _poetry_extras(col: Collector, m, pos: _Positions, words: list[str], nodes: list, source_tree: _SourceTree) -> None:
    """`poetry install --extras cuda` (whisper-asr-webservice's Dockerfile.gpu, tp38), `-E cuda`, `--extras "cuda
    gpu"`, `--extras=cuda`: extras of the project in the folder. A name that says CUDA by itself is read as uv's
    `--extra`; any other is read in the folder's pyproject.toml by the tree pass, as `pip install ".[x]"` is."""
    for i, w in enumerate(words[2:], 2):
        option, eq, value = w.partition("=")
        if option not in ("--extras", "-E"):
            continue
        at = i if eq else i + 1
        if not eq and (at >= len(words) or words[at].startswith("-")):
            continue
        value = value if eq else words[at]
        line, c = pos.at(nodes[at].start_point)
        c += len(option) + 1 if eq else 0
        for extra in re.split(r"[\s,]+", value.strip("\"'")):
            if not extra or "$" in extra:
                continue
            named = extra_hits(m, [extra], "this project")
            for symbol, _, rule, note in named:
                col.add(rule, symbol, line, c, c + len(value), note=note)
            if not named:
                _record_local_extras(col, f".[{extra}]", line, c, source_tree.cwd, len(value))


# a positional parameter's default as a script assigns it: `CUDA=${1:-cpu}` (bash manual, "Shell Parameter Expansion":
# `${parameter:-word}` gives word when the parameter is unset or null)
_PARAM_DEFAULT_RE = re.compile(r"\$\{\w+:?-([^}$]*)\}")


def _held_url(col: Collector, url: str) -> tuple[str, tuple[str, ...]]:
    """`url` with each variable the script assigned replaced by its value (a `${1:-cpu}` value by its default), and
    (variable, default) of the first one read through a default, else ()."""
    defaulted: list[tuple[str, str]] = []

    def value(ref: re.Match) -> str:
        held = col.script_vars.get(ref.group(1))
        if held is None:
            return ref.group(0)
        held = held.strip("\"'")
        default = _PARAM_DEFAULT_RE.fullmatch(held)
        if default is not None:
            defaulted.append((ref.group(1), default.group(1)))
            return default.group(1)
        return held

    expanded = re.sub(r"\$\{?(\w+)\}?", value, url)
    return expanded, defaulted[0] if defaulted else ()


# light-the-torch's own options (github.com/pmeier/light-the-torch, README "How do I use it?"): the computation
# backend it picks instead of detecting the NVIDIA driver, and the PyTorch channel
_LTT_OPTIONS_WITH_VALUE = ("--pytorch-computation-backend", "--pytorch-channel")
_LTT_FLAGS = ("--cpuonly", "--pytorch-computation-backend=cpu")


def _light_the_torch(col: Collector, m, pos: _Positions, words: list[str], nodes: list,
                     source_tree: _SourceTree) -> None:
    """`ltt install torch torchvision` / `python -m light_the_torch install --upgrade torch` (light-the-torch wraps
    `pip install` and picks the PyTorch wheels built for the CUDA driver it detects with nvidia-smi): read as the
    `pip install` it runs, its own options left out (tp53a, torchdyn's poe task)."""
    kept: list[tuple[str, object]] = []
    skip = False
    for w, node in zip(words, nodes):
        if skip:
            skip = False
        elif w in _LTT_OPTIONS_WITH_VALUE:
            skip = True
        elif not w.startswith(_LTT_OPTIONS_WITH_VALUE) and w not in _LTT_FLAGS:
            kept.append((w, node))
    _pip(col, m, pos, [w for w, _ in kept], [n for _, n in kept], source_tree)


def _pip(col: Collector, m, pos: _Positions, words: list[str], nodes: list, source_tree: _SourceTree,
         conda: bool = False) -> None:
    while words and words[0].startswith("-") and words[0] not in _OPTS_WITH_VALUE:
        words, nodes = words[1:], nodes[1:]          # `pip -v install`, `pip --no-cache-dir install`: global options
    for i, w in enumerate(words):                    # `uv sync --group cuda12`, `uv run --extra gpu`
        option, eq, given = w.partition("=")         # `uv sync --group=cu128-train` (tp47a)
        if option not in ("--group", "--only-group", "--extra") or conda or not eq and i + 1 == len(words):
            continue
        value = given if eq else words[i + 1]
        line, c = pos.at(nodes[i if eq else i + 1].start_point)
        c += len(option) + 1 if eq else 0
        named = extra_hits(m, [value], "this project")
        for symbol, _, rule, note in named:
            col.add(rule, symbol, line, c, c + len(value), note=note)
        if option == "--extra" and not named and words[0] in ("sync", "run") and "[" not in value:
            # `uv sync --extra all`: an extra of the project in the folder, read in its pyproject.toml (t15k)
            _record_local_extras(col, f".[{value}]", line, c, source_tree.cwd, len(value))
    if not words or words[0] not in ("install", "add", "wheel", "create"):
        return
    if words[0] == "wheel" and not conda:
        _record_wheel_folder(words, source_tree)
    skip = False
    for i, w in enumerate(words[1:], 1):
        if skip:
            skip = False
            continue
        line, c = pos.at(nodes[i].start_point)
        if (held := _held_spec(col, w)) is not None:
            w = held           # `conda create ... "$pytorch_v_arg"` after `pytorch_v_arg="pytorch=$pytorch_v"`
        if not conda and (built := _built_wheels(w, source_tree)):
            for symbol, _, rule, note in (h for r in built for h in requirement_hits(m, r)):
                col.add(rule, symbol, line, c, c + len(w), note=f" (the wheel `pip wheel {built[0]}` built here)")
            continue
        if conda:
            # `micromamba install -n env cuda=12.9.1 nccl -c nvidia/label/cuda-12.9.1 -c nvidia`: conda specs
            if w in ("-c", "--channel") and i + 1 < len(words):
                channel = words[i + 1].split("/", 1)[0].lower()
                cl, cc = pos.at(nodes[i + 1].start_point)
                col.add(m.match_requirement("channel:" + channel), "channel:" + channel, cl, cc, cc + len(words[i + 1]))
                skip = True
            elif w in _CONDA_OPTS_WITH_VALUE:
                skip = True
            elif not w.startswith("-") and "$" not in w and w.endswith((".tar.bz2", ".conda")):
                # a package archive by path: its build string may name the CUDA build (t19c)
                for symbol in conda_archive_symbols(unquote(w)):
                    rule = m.match_requirement(symbol)
                    if rule is not None:
                        col.add(rule, symbol, line, c, c + len(w))
                        break
            elif not w.startswith("-") and (name := conda_spec_name(w)) and "$" not in name:
                # `"pytorch-cuda=$PYTORCH_CUDA"`: the package is named, only its version is the script's (pd37)
                symbol = normalize_dist(name)
                col.add(m.match_requirement(symbol), symbol, line, c, c + len(name))
            continue
        if w in _INDEX_OPTS or any(w.startswith(o + "=") for o in _INDEX_OPTS if o.startswith("--")):
            url = w.split("=", 1)[1] if "=" in w else (words[i + 1] if i + 1 < len(words) else "")
            skip = "=" not in w
            index_rule = m.match_requirement("index:" + url) if url else None   # CUDA wheel indexes, NVIDIA's index
            severity, note = None, ""
            # the script's own values of the URL's variables: `UV_TORCH_BACKEND=cu${V}` earlier in the script, then
            # `--find-links .../whl/${UV_TORCH_BACKEND}`; PyG's `torch-${TORCH}+${CUDA}.html` after `CUDA=cpu`
            expanded, defaulted = _held_url(col, url) if "$" in url else (url, ())
            if index_rule is None and expanded != url:
                index_rule = m.match_requirement("index:" + expanded)
            elif index_rule is not None and expanded != url and "$" not in expanded \
                    and m.match_requirement("index:" + expanded) is None:
                # every variable resolved and the page is not a CUDA one (`CUDA=cpu`, review51 item 7): quiet, or
                # info where the value is a positional parameter's default (`CUDA=${1:-cpu}`: a caller may pass cu117)
                if not defaulted:
                    continue
                severity = "info"
                note = f" (`{defaulted[0]}` defaults to `{defaulted[1]}` here: the CUDA page only when a caller passes one)"
            if index_rule is not None and _ALL_BUILDS_PAGE_RE.search(url) and cpu_builds_only(words):
                index_rule = None     # `torch==1.6.0+cpu -f .../torch_stable.html`: the page's CPU wheels
            if index_rule is not None:
                line, c = pos.at(nodes[i + 1].start_point) if skip and i + 1 < len(nodes) else (line, c)
                col.add(index_rule, "index:" + url, line, c, c + len(url), severity=severity, note=note)
            continue
        editable = False
        if w in ("-e", "--editable") and i + 1 < len(words):
            w, i = words[i + 1], i + 1                     # `pip install -e .`: the tree to build is the value
            skip = True
            line, c = pos.at(nodes[i].start_point)
            editable = True
        elif w in _OPTS_WITH_VALUE:
            skip = True
            continue
        if (picked := _GREP_PICKED_RE.fullmatch(w)) is not None:
            # `pip install "$(grep '^nvidia-cublas' /tmp/packages-nvidia.txt)"` (ComfyUI-Docker's cu130 image): the
            # requirement lines of a list that start with the name the pattern anchors (tp37)
            symbol = normalize_dist(picked.group(2))
            col.add(m.match_requirement(symbol), symbol, line, c, c + len(w), note=" (picked from a list by grep)")
            continue
        if (var := _VAR_WORD_RE.match(w)) and (found := _variable_source_tree(col, m, var.group(1))) is not None:
            # `package="${BUILD_ROOT}/SageAttention"`, `git clone ... "${package}"`, then `pip install "${package}"`:
            # the folder the script's variable holds is a CUDA project's source tree (t16a, tuned on project test18)
            col.add(found[1], found[0], line, c, c + len(w), note=f" (built here from its source tree, `{w}`)")
            continue
        if (globbed := _globbed_wheel(w)) is not None:
            # `pip3 install /usr/local/tensorrt/python/tensorrt-*-cp$(python3 -c ...)*`: the wheels TensorRT's tar
            # package ships in python/, picked by a glob: the name before the first `-` is the distribution (wheel
            # file names are `{distribution}-{version}-...`, PEP 427; tp45, project test122)
            symbol = normalize_dist(globbed)
            col.add(m.match_requirement(symbol), symbol, line, c, c + len(w), note=f" (the wheel `{w}` picks)")
            continue
        if w.endswith(".whl"):
            symbols = wheel_symbols(unquote(w))        # a file or a URL (`.../flash_attn-2.8.3%2Bcu12torch2.11-...whl`)
        elif (w.startswith((".", "/", "~")) or ("/" in w or editable or w in source_tree.cloned)
              and not w.startswith(("git+", "http")) and not any(c in w for c in ":=@<>")) \
                and "$" not in w.split("[", 1)[0].rsplit("/", 1)[-1]:
            # (`pip install -e detectron2_repo`: an editable install is always a folder, as is a name just cloned)
            # `pip install .`, `pip install -e ".[dev]"`, `pip wheel -w DIR /src/apex`: a source tree is built
            if not _NPU_EXTRA_RE.search(w.partition("[")[2]):
                _builds(col, source_tree, pos, nodes[i], w.split("[", 1)[0])   # not `-e "python[all_npu]"` (t15n)
            named = extra_hits(m, w.partition("[")[2].rstrip("]").split(","), "this project")
            for symbol, _, rule, note in named:
                f = col.add(rule, symbol, line, c, c + len(w), note=note)     # `pip install -e ".[vllm]"`
                _opt_in_ci_job(col, f)
            if not named and "[" in w:
                _record_local_extras(col, w, line, c, source_tree.cwd)    # `.[compile]`: read in pyproject.toml
            continue
        elif w.startswith(("git+", "http")) and "://" in w and "$" not in w:
            _pip_url(col, m, line, c, w)     # `pip install "git+https://github.com/vllm-project/vllm.git"`
            continue
        elif w.startswith("-") or w.startswith((".", "/", "git+", "http")):
            continue
        elif (major := _CUDA_MAJOR_WHEEL_RE.match(w)) is not None:
            # `custatevec-cu${{ matrix.cuda_version }}`, `cupy-cuda$CUDA_MAJOR`: a wheel named for the CUDA major the
            # job or the script picks (pennylane-lightning's CUDA wheel build, t33b): the name rules read with a major
            rule = m.match_requirement(normalize_dist(major.group(1)) + "12")
            col.add(rule, re.sub(r"_{2,}", "", major.group(0)), line, c, c + len(major.group(0)))
            continue
        else:
            if "[$" in w or ",$" in w:
                # `"jax[${CUDA}]<0.11"` after `ARG CUDA=cuda12` (ColabFold's Dockerfile, t35a): the extra the
                # variable holds; one the script never assigned stays unread
                w = _EXTRA_VARIABLE_RE.sub(lambda v: _assigned_literal(col, v.group(2)) or v.group(0), w)
            for symbol, _, rule, note in requirement_hits(m, w):    # `torch==2.3.1+cu121`: the CUDA build only
                if symbol.startswith("url:"):
                    continue        # `name@git+URL`: a repository a URL pattern names is the URL scan's, as in _pip_url
                if not (rule.extra.get("ported_by") and any(_OTHER_ACCELERATOR_RE.search(x) or _CPU_INDEX_RE.search(x)
                                                            for x in words)):
                    col.add(rule, symbol, line, c, c + len(w), note=note)   # not from the ROCm / XPU index
            continue
        symbol = next((s for s in symbols if m.match_requirement(s) is not None), "")
        col.add(m.match_requirement(symbol), symbol, line, c, c + len(w))


def _record_wheel_folder(words: list[str], source_tree: _SourceTree) -> None:
    """`pip wheel flash-attn==${FLASH_ATTN_VERSION} --no-deps` (in `WORKDIR /usr/src/flash-attention-v2`), `pip wheel -w
    /wheels xformers`: the named requirements' wheels are written to that folder (pip's `-w` / `--wheel-dir`, the
    current folder by default: pip docs, "pip wheel")."""
    folder, names, skip = None, [], False
    for i, w in enumerate(words[1:], 1):
        if skip:
            skip = False
            continue
        if w in ("-w", "--wheel-dir") and i + 1 < len(words):
            folder, skip = words[i + 1], True
        elif w.startswith("--wheel-dir="):
            folder = w.split("=", 1)[1]
        elif w in _OPTS_WITH_VALUE:
            skip = True
        elif not w.startswith(("-", ".", "/", "~", "git+", "http")) and "/" not in w:
            names.append(w.strip("\"'"))
    where = absolute_folder(source_tree.abs_cwd, folder) if folder else source_tree.abs_cwd
    if where and names:
        source_tree.wheel_dirs[where.rstrip("/") or "/"] = names


def _built_wheels(word: str, source_tree: _SourceTree) -> list[str]:
    """The requirements whose wheels `pip install DIR/*.whl` installs: those a `pip wheel` of this file wrote to DIR
    (vLLM's Dockerfile builds flash-attn's wheel in its builder stage and installs `/usr/src/flash-attention-v2/*.whl`
    from a bind mount of that folder; tp52c)."""
    folder, _, name = word.strip("\"'").rpartition("/")
    if not source_tree.wheel_dirs or not name.endswith(".whl") or not name.startswith("*"):
        return []
    where = absolute_folder(source_tree.abs_cwd, folder) if folder else source_tree.abs_cwd
    return source_tree.wheel_dirs.get((where or "").rstrip("/") or "/", [])


_GLOBBED_WHEEL_RE = re.compile(r"([A-Za-z0-9][A-Za-z0-9_.]*)-(?:\*|\d[^/]*\*)")


def _globbed_wheel(word: str) -> str | None:
    """The distribution of a wheel file a path glob picks (`/opt/trt/python/tensorrt-*-cp310*`,
    `./dist/tensorrt_llm-0.9*.whl`): a file path whose last part opens with `name-` and a glob or version holding
    one; None for anything else (a folder, a plain requirement, a URL)."""
    path = word.split("$(", 1)[0].strip("\"'")
    if "/" not in path or "://" in path or "*" not in word:
        return None
    found = _GLOBBED_WHEEL_RE.match(path.rsplit("/", 1)[-1] + ("*" if "$(" in word else ""))
    return found.group(1) if found else None


# an extra that names the NPU build (`pip install -e "python[all_npu]"`, t15n)
_NPU_EXTRA_RE = re.compile(r"npu|ascend", re.I)


_VAR_WORD_RE = re.compile(r"^\$\{?(\w+)\}?$")
# a variable written as (part of) a requirement's extras: `jax[${CUDA}]`, `pkg[dev,$GPU]`
_EXTRA_VARIABLE_RE = re.compile(r"(?<=[\[,])(\$\{?(\w+)\}?)(?=[\],])")
# a distribution name whose CUDA major is an expansion (a CI expression reaches the shell reader as `${name___}`)
_CUDA_MAJOR_WHEEL_RE = re.compile(r"([A-Za-z0-9][\w.-]*-cu(?:da)?)\$\{?\w+\}?")


def _held_spec(col: Collector, word: str) -> str | None:
    """The package spec an installer's word takes from a script variable (`"$pytorch_v_arg"`, its last assignment
    above `pytorch_v_arg="pytorch=$pytorch_v"`): a literal that is one spec, no option, path, URL or word list (bash
    expands a quoted `"$VAR"` to one word; tp55a, project test154's DeepFilterNet setup_env.sh)."""
    var = _VAR_WORD_RE.match(word)
    value = _literal_part(col, var.group(1)) if var else ""
    if not value or value[0] in "-.~$" or "/" in value or any(ch.isspace() for ch in value):
        return None
    return value


def _variable_source_tree(col: Collector, m, name: str) -> tuple[str, "Rule"] | None:
    """The CUDA project whose source tree the script variable `name` holds: its value (the script's last assignment
    before the line) is a path whose last folder is written out and names one (`${BUILD_ROOT}/SpargeAttn`)."""
    value = col.script_vars.get(name, "")
    last = value.strip("\"'").rstrip("/").rsplit("/", 1)[-1]
    if "/" not in value or not last or "$" in last or "{" in last:
        return None
    return m.match_source_tree(last)


def _pip_url(col: Collector, m, line: int, c: int, url: str) -> None:
    """`pip install git+URL` / an archive URL: the project its `#egg=` names, else the CUDA project its repository
    is (the requirements reader's rule for a bare VCS line). A repository a URL pattern names (NVIDIA/apex) is
    reported by the URL scan of the line already."""
    from auditor.project.requirements import _EGG_RE, vcs_project

    egg = _EGG_RE.search(url)
    if egg:
        for symbol, _, rule, note in requirement_hits(m, egg.group(1)):
            col.add(rule, symbol, line, c, c + len(url), note=note)
        return
    if m.match_requirement(url_symbol(url)) is not None:
        return
    found = vcs_project(m, url)
    if found is not None:
        col.add(found[1], found[0], line, c, c + len(url))


# A test that holds only where CUDA is present: a CUDA variable compared with a value (`[[ "$CUDA_VERSION" ==
# "13."* ]]`, `[ "$DEVICE" == "gpu" ]` / `"cuda"`), or the NVIDIA tools found (`command -v nvidia-smi`, `nvcc
# --version`), a CUDA version number compared as at least a positive value (`(( cuda_major_version >= 12 ))`, t16g).
# Negated forms (`!`, `!=`, `-z`) hold without CUDA and are not gates.
_CUDA_VAR_TEST = re.compile(r"\$\{?\w*CUDA\w*\}?\"?\s*==?\s|==?\s*[\"']?(?:cuda|gpu|nvidia)(?::\d+)?[\"']?\s*\]|"
                            r"\b(?:command\s+-v|which|type)\s+(?:nvidia-smi|nvcc)\b|"
                            # a CUDA version number at least some positive value (`(( cuda_major_version >= 12 ))`,
                            # `[ "$CUDA_MAJOR" -ge 12 ]`): an unset or empty version is 0 there, or an error
                            r"\b\w*cuda\w*\}?\"?\s*(?:==|>=|>|-eq|-ge|-gt)\s*[\"']?[1-9]", re.I)
_NEGATED_TEST = re.compile(r"(?:^|\s)!\s|!=|\s-z\s")
# torch asked in the test (`[ "$(python -c 'import torch; print(torch.version.cuda.split(".")[0])')" = "12" ]`): on an
# Ascend torch `torch.version.cuda` is None (the probe prints nothing) and is_available() is False, so a test that
# compares the answer with a value (not False / None / 0 / empty) holds only where CUDA is present
_CUDA_PROBE = re.compile(r"torch\.version\.cuda|torch\.cuda\.is_available\(\)|torch\.cuda\.device_count\(\)")
_PROBE_COMPARED = re.compile(r"""(?:==?|-eq|-gt|-ge)\s*["']?(?!(?:False|None|0)\b|["'\s]|$)""")
_SHELL_GATE_NOTE = "in a branch that runs only where CUDA is present ({how}), which does not run on Ascend as " \
                   "written; the test is what to port: port the branch with it"


def _cuda_branches(root, pos: "_Positions") -> list[tuple[int, int, str]]:
    """(first line, last line, test) of each `if` / `elif` branch whose test holds only where CUDA is present."""
    out = []
    for node in _walk(root):
        if node.type not in ("if_statement", "elif_clause"):
            continue
        kids = node.children
        then = next((i for i, c in enumerate(kids) if c.type == "then"), None)
        if then is None:
            continue
        test = b" ".join(c.text for c in kids[1:then]).decode("utf-8", errors="replace")
        probe = _CUDA_PROBE.search(test) is not None and _PROBE_COMPARED.search(test) is not None
        if not (_CUDA_VAR_TEST.search(test) or probe) or _NEGATED_TEST.search(test):
            continue
        body = [c for c in kids[then + 1:] if c.is_named and c.type not in ("elif_clause", "else_clause", "comment")]
        if body:
            out.append((pos.at(body[0].start_point)[0], pos.at(body[-1].end_point)[0], " ".join(test.split())[:60]))
    return out


# a platform name a script branches on (`case $PLATFORM in cuda) ...;; hip) ...;; cpu) ...`, `elif [ "$PLATFORM" =
# "hip" ]`): another platform's branch does not run on Ascend, and a port adds its own branch beside it
_OTHER_PLATFORMS = frozenset({"hip", "rocm", "amd", "cpu", "mps", "xpu", "tpu", "metal", "directml", "vulkan"})
_CUDA_PLATFORMS = frozenset({"cuda", "gpu", "nvidia"})
_PLATFORM_TEST = re.compile(r"""==?\s*["']?([a-z]+)["']?\s*\]""", re.I)


def _platform_spans(root, pos: "_Positions") -> Iterator[tuple[int, str, set[int]]]:
    """(the `case` / `if` statement's id, kind, lines) of each arm or branch: kind "cuda" for a `case` arm whose every
    pattern names CUDA (`cuda)`), "other" for one naming only other platforms (`hip|rocm)`, `cpu)`) or an `if` /
    `elif` branch comparing a value with another platform's name (`[ "$PLATFORM" = "hip" ]`), "rest" otherwise."""
    for node in _walk(root):
        kids = node.children
        if node.type == "case_item":
            close = next((i for i, c in enumerate(kids) if c.type == ")"), None)
            if close is None:
                continue
            patterns = frozenset(c.text.decode("utf-8", errors="replace").strip("\"'").lower() for c in kids[:close]
                                 if c.is_named)
            body = [c for c in kids[close + 1:] if c.is_named and c.type != "comment"]
            kind = "cuda" if patterns and patterns <= _CUDA_PLATFORMS else \
                "other" if patterns and patterns <= _OTHER_PLATFORMS else "rest"
            owner = node.parent
        elif node.type in ("if_statement", "elif_clause", "else_clause"):
            then = next((i for i, c in enumerate(kids) if c.type == "then"), 0 if node.type == "else_clause" else None)
            if then is None:
                continue
            body = [c for c in kids[then + 1:] if c.is_named and c.type not in ("elif_clause", "else_clause", "comment")]
            test = b" ".join(c.text for c in kids[1:then]).decode("utf-8", errors="replace")
            m = _PLATFORM_TEST.search(test)
            kind = "rest" if node.type == "else_clause" or m is None or m.group(1).lower() not in _OTHER_PLATFORMS \
                or _NEGATED_TEST.search(test) or "||" in test or re.search(r"\s-o\s", test) else "other"
            owner = node if node.type == "if_statement" else node.parent
        else:
            continue
        if body and owner is not None:
            yield owner.id, kind, set(range(pos.at(body[0].start_point)[0], pos.at(body[-1].end_point)[0] + 1))


def _platform_branches(root, pos: "_Positions") -> tuple[set[int], set[int]]:
    """(lines of CUDA-only arms, lines of other platforms' branches). A line an arm or branch shares with a sibling
    of another kind (`case $P in cpu) ...;; cuda) ...;; esac` on one line) is in neither; a statement nested in a
    branch stays in it (a `case $TORCH_VERSION` inside the hip branch is still the hip branch)."""
    groups: dict[int, dict[str, set[int]]] = {}
    for owner, kind, span in _platform_spans(root, pos):
        groups.setdefault(owner, {"cuda": set(), "other": set(), "rest": set()})[kind] |= span
    cuda: set[int] = set()
    other: set[int] = set()
    for g in groups.values():
        cuda |= g["cuda"] - g["other"] - g["rest"]
        other |= g["other"] - g["cuda"] - g["rest"]
    return cuda, other


# what a CUDA-only branch may read without a finding: the CUDA build's version (`torch.version.cuda` is None only
# where the branch does not run)
_SAFE_IN_CUDA_BRANCH = frozenset({"torch-version-cuda"})


def platform_branches(result: FileResult, text: str) -> None:
    """Findings inside another platform's branch of a script (`hip)` / `cpu)` arms of `case $PLATFORM in`, `elif [
    "$PLATFORM" = "hip" ]`) dropped: that branch does not run on Ascend, and a port adds an `npu` branch beside it
    rather than editing it (t15p, tuned on project test13: TRELLIS's ROCm flash-attention build, detectron2's
    `cpu)` arm that unsets FORCE_CUDA). Inside a CUDA-only arm (`cuda)`), a read of the CUDA build's version
    cannot see None; installs there keep their findings (gate_findings lowers their errors)."""
    if not result.findings or not re.search(r"\bcase\b|=\s*[\"']?(?:" + "|".join(sorted(_OTHER_PLATFORMS)) + r")\b",
                                            text, re.I):
        return
    raw = text.encode("utf-8")
    cuda, other = _platform_branches(_parser().parse(raw).root_node, _Positions(raw))
    if not (cuda or other):
        return
    result.findings = [f for f in result.findings
                       if f.line not in other and not (f.name in _SAFE_IN_CUDA_BRANCH and f.line in cuda)]


def analyze_shell(engine: "StaticEngine", data: bytes, rel: str) -> FileResult:
    text, error = decode_text(data, rel)
    if text is None:
        return FileResult(rel, error=error)
    col = Collector(engine, rel, text)
    scan_shell(col, text, script=True)
    result = col.done()
    if for_macos(rel):
        # `cmd_macos.sh`, `start_macos.sh`, `scripts/macos/setup.sh` of a one-click installer: a Mac has neither CUDA
        # nor an Ascend device, so its `export CUDA_HOME="$INSTALL_ENV_DIR"` (isolation from a system toolkit) and
        # installs are not what a port changes (another platform's file is not a CUDA finding; t15g)
        result.findings = []
        return result
    platform_branches(result, text)
    gate_findings(result, text)
    _debug_switch_modes(result, text)
    _drop_unread_option_vars(result, text)
    _drop_message_only_images(result, text)
    result.findings = lower_ascend_selected(result.findings, text)
    return result


def lower_ascend_selected(findings: list, text: str) -> list:
    """The engine starts and switches (`lower_ascend_engine_starts`) of a script that selects Ascend devices itself,
    in the lines that holds for (`_selects_ascend_devices`): a shell file, or one CI step's script (tq52a)."""
    for why, first, last in _selects_ascend_devices(text):
        inside = [f for f in findings if first <= f.line <= last]
        if inside:
            lowered = dict(zip(map(id, inside), lower_ascend_engine_starts(inside, why, _ASCEND_SCRIPT_SWITCHES)))
            findings = [lowered.get(id(f), f) for f in findings]
    return findings


# tq47b: a script that picks Ascend devices itself (omni-infer's serving scripts: `export ASCEND_RT_VISIBLE_DEVICES=
# 0,1,...`, then `python -m vllm.entrypoints.openai.api_server ...`) runs the engine it starts on them, through the
# engine's Ascend platform plugin (vllm-ascend): the launch is already Ascend's
ENGINE_STARTS = frozenset({"gpu-inference-server-launch", "gpu-inference-engine-construction"})
_ENGINE_NOTE = "in code that selects Ascend devices itself ({why}): the engine it starts runs on them through its " \
               "Ascend platform plugin (vllm-ascend); re-validate there, nothing to port"
# tq50a: a script that sets up Ascend itself (auditor.project.ASCEND_SCRIPT: CANN's set_env.sh sourced, `export
# HCCL_BUFFSIZE=400`, NPUS_PER_NODE ...) or launches with the device set to the NPU (verl's Hydra override
# `trainer.device=npu`, `--device npu`): cann-recipes' vllm-ascend and verl-on-Ascend launchers. A script that also
# names a CUDA device choice or configures NCCL serves both backends: not Ascend's alone
_NPU_DEVICE_ARG_RE = re.compile(r"(?<![\w.])((?:[\w.]+\.)?device=npu|--device[ \t=]npu)\b")
_CUDA_DEVICES_RE = re.compile(r"^[^#\n]*(?:\bCUDA_VISIBLE_DEVICES=|\bdevice[ \t=]+[\"']?cuda\b|^(?:export[ \t]+)?"
                              r"NCCL_[A-Z0-9_]+=)", re.M)
# what a script written for Ascend also chose for it: the flash-attention switches its Ascend stack reads itself
# (vllm-ascend's platform picks its own attention backend whatever VLLM_ATTENTION_BACKEND says: `NPUPlatform.
# get_attn_backend_cls` in https://github.com/vllm-project/vllm-ascend/blob/main/vllm_ascend/platform.py; under
# MindSpeed a Megatron config's `use_flash_attn` selects npu_fusion_attention: https://gitee.com/ascend/MindSpeed,
# mindspeed/core/transformer/flash_attention/flash_attention/adaptor.py). Another program's `--use-flash-attn` (an
# FSDP trainer without the adaptor) keeps its finding: it may import flash_attn on the NPU host
_ASCEND_SCRIPT_SWITCHES = frozenset({"flash-attention-setting"})
_ASCEND_READ_SWITCH = re.compile(r"VLLM_ATTENTION_BACKEND|megatron\.", re.I)
_SWITCH_NOTE = "in a script written for an Ascend host ({why}): the Ascend stack it launches reads this switch " \
               "(its own fused attention); re-validate there, nothing to port"


def _selects_ascend_devices(text: str) -> list[tuple[str, int, int]]:
    """Why a shell script (or one `if` arm of it) runs on an Ascend host, with the lines that holds for: it sets up
    Ascend itself (`export ASCEND_RT_VISIBLE_DEVICES=0,1`, CANN's `set_env.sh`, an `HCCL_*` setting) at its top level
    (the whole file) or inside an `if` / `case` arm (that arm's lines: another arm may be the CUDA host's), or a
    launch command passes `device=npu` / `--device npu` (not an `echo` / `printf` text; review50 item 5); none with a
    CUDA device choice or NCCL setting anywhere in it."""
    if _CUDA_DEVICES_RE.search(text) or not (ASCEND_SCRIPT.search(text) or _NPU_DEVICE_ARG_RE.search(text)):
        return []
    raw = text.encode("utf-8")
    nodes = list(_walk(_parser().parse(raw).root_node))
    pos = _Positions(raw)
    marks = []
    for found in ASCEND_SCRIPT.finditer(text):
        if "CUDA" not in found.group(0):
            first, last = _arm_lines(nodes, text.count("\n", 0, found.start()), pos)
            marks.append((f"it sets up Ascend itself: {found.group(0).strip()}", first, last))
    for node in nodes:
        if _runs_program(node):
            words = " ".join(_word(c) for c in node.children if c.is_named and c.type != "comment")
            launch = _NPU_DEVICE_ARG_RE.search(words)
            if launch is not None:
                marks.append((f"it launches with {launch.group(1)}", 1, len(pos.lines)))
    return sorted(marks, key=lambda mark: mark[2] - mark[1])     # the narrowest arm's reason first


# compound statements whose body runs only on some hosts or runs: a setting inside covers only its own arm
_ARMS = frozenset({"if_statement", "elif_clause", "else_clause", "case_item", "function_definition", "for_statement",
                   "while_statement", "c_style_for_statement"})


def _arm_lines(nodes: list, row: int, pos: "_Positions") -> tuple[int, int]:
    """The lines of the innermost arm (`if` branch, `elif` / `else` clause, `case` item, loop or function body)
    holding the statement on 0-based `row`; the whole file at the top level."""
    arms = [n for n in nodes if n.type in _ARMS and n.start_point[0] <= row <= n.end_point[0]]
    if not arms:
        return 1, len(pos.lines)
    arm = max(arms, key=lambda n: n.start_point[0] * 10**6 - n.end_point[0])
    last = pos.at(arm.end_point)[0]
    if arm.type == "if_statement":      # its own branch ends where its first `elif` / `else` starts
        last = next((pos.at(c.start_point)[0] - 1 for c in arm.children if c.type in ("elif_clause", "else_clause")),
                    last)
    return pos.at(arm.start_point)[0], last


def lower_ascend_engine_starts(findings: list, why: str, also: frozenset[str] = frozenset()) -> list:
    """The inference-engine starts (ENGINE_STARTS), and the findings named in `also`, of code that selects Ascend
    devices itself, as info."""
    return [as_info(f, "npu-file", (_ENGINE_NOTE if f.name in ENGINE_STARTS else _SWITCH_NOTE).format(why=why))
            if (f.name in ENGINE_STARTS or f.name in also and _ASCEND_READ_SWITCH.search(f.symbol or ""))
            and f.severity != "info" else f for f in findings]


# a statement of its own that assigns a plain value (`BASE_NAME="nvidia/cuda:12.5.0-devel-ubuntu22.04"`)
_PLAIN_ASSIGNMENT_RE = re.compile(r"""^[ \t]*([A-Za-z_]\w*)=(?:"[^"$`]*"|'[^']*'|[^\s'"$`\\;&|]+)[ \t]*(?:#.*)?$""")


def _drop_message_only_images(result: FileResult, text: str) -> None:
    """An image held in a variable that the script only shows in messages (`BASE_NAME="nvidia/cuda:12.5.0-devel-..."`,
    then only `echo "Building Docker image on ${BASE_NAME} ..."`): no command pulls or runs it (lead decision 49, a
    value shown in a message; test128's label). Kept when the script exports the name, marks variables for export
    (`set -a`), uses `eval` / `${!name}`, or never reads it (a file of settings others `source`) (tp47a)."""
    lines = text.splitlines()
    candidates = {f.line: m.group(1) for f in result.findings if f.code == "NPU016" and 0 < f.line <= len(lines)
                  for m in [_PLAIN_ASSIGNMENT_RE.match(lines[f.line - 1])] if m is not None}
    if not candidates or re.search(r"(?m)^[ \t]*set[ \t]+-\w*a|(?m:^|[;&|(]\s*)eval\s|\$\{!", text):
        return
    nodes = list(_walk(_parser().parse(text.encode("utf-8")).root_node))
    if not any(_runs_program(n) for n in nodes):
        return                                  # a file of settings others `source` (only assignments and messages)
    # `base_image() { ...; echo "${BASE_NAME}"; }` called as `$(base_image)`: its `echo` is the function's value
    valued = {c.text for n in nodes if n.type == "command_substitution" for c in _walk(n) if c.type == "command_name"}
    reads: dict[str, list[bool]] = defaultdict(list)
    for node in nodes:
        if node.type in ("simple_expansion", "expansion"):
            name = next((c.text.decode() for c in node.children if c.type == "variable_name"), None)
            if name is not None and name in candidates.values():
                reads[name].append(_in_message(node) and _function_name(node) not in valued)
    drop = {line for line, name in candidates.items() if reads.get(name) and all(reads[name]) and not re.search(
        r"\b(?:export|declare|typeset|readonly)\b[^\n]*\b" + name + r"\b", text)}
    if drop:
        result.findings = [f for f in result.findings if not (f.line in drop and f.code == "NPU016")]


def _runs_program(node) -> bool:
    """A command other than a message (`echo` / `printf` / `:`) or a setting (`export`, `set`)."""
    if node.type != "command":
        return False
    name = node.child_by_field_name("name")
    return name is not None and name.text not in (b"echo", b"printf", b":", b"export", b"set")


def _function_name(node) -> bytes | None:
    """The name of the shell function whose body holds this node, or None."""
    while node is not None and node.type != "function_definition":
        node = node.parent
    name = None if node is None else node.child_by_field_name("name")
    return None if name is None else name.text


_OWN_LAUNCH_RE = re.compile(r"(?m)^[^#\n]*\b(?:python[\d.]*|torchrun|deepspeed|accelerate|srun)\b")
# a statement of its own (`DTYPE="--bf16"`), not a prefix of a command (`CMAKE_ARGS="-D..." pip install x`, or one
# continued on the next line with `\`)
_OPTION_VAR_RE = re.compile(r"""^[ \t]*(?:local[ \t]+)?([A-Za-z_]\w*)=(?:"-[^"]*"|'-[^']*'|-[^\s'"\\;&|]*)[ \t]*(?:#.*)?$""")


def _drop_unread_option_vars(result: FileResult, text: str) -> None:
    """Findings in an option string held by a variable that the script never reads (`DTYPE="--bf16"` in each branch of
    a GPU-model test, and no `$DTYPE` in the launch): the launch does not get the option (t15n). Only in a script
    that runs its own launch (a file of settings that others `source` reads none of its variables); kept when the
    script exports the name, marks every variable for export (`set -a`), or uses `eval` / `${!name}`."""
    if not result.findings or re.search(r"(?m)^[ \t]*set[ \t]+-\w*a", text) or not _OWN_LAUNCH_RE.search(text):
        return
    lines = text.splitlines()
    unread: dict[str, bool] = {}
    drop = set()
    for f in result.findings:
        if not (0 < f.line <= len(lines)):
            continue
        m = _OPTION_VAR_RE.match(lines[f.line - 1])
        if m is None:
            continue
        name = m.group(1)
        if name not in unread:
            unread[name] = re.search(r"\$\{?!?#?" + name + r"\b|\b(?:export|declare|typeset|readonly)\b[^\n]*\b" + name
                                     + r"\b|(?m:^|[;&|(]\s*)eval\s|\$\{!", text) is None
        if unread[name]:
            drop.add(f.line)
    if drop:
        result.findings = [f for f in result.findings if f.line not in drop]


def _debug_switch_modes(result: FileResult, text: str) -> None:
    """An Ascend debug switch (NPU700) set inside an `if` of the script (`if [ "$ENFORCE_EAGER" = 1 ]; then export
    ASCEND_LAUNCH_BLOCKING=1; fi`) is a mode the script chooses on purpose, not a switch left on: information."""
    from dataclasses import replace

    if not any(f.name == "npu-debug-env-var" and f.severity != "info" for f in result.findings):
        return
    raw = text.encode("utf-8")
    pos = _Positions(raw)
    spans = [(pos.at(n.start_point)[0] + 1, pos.at(n.end_point)[0]) for n in _walk(_parser().parse(raw).root_node)
             if n.type == "if_statement"]
    result.findings = [replace(f, severity="info", message=f"{f.message} (set only in a branch the script chooses: "
                                                           "a mode on purpose, not a switch left on)")
                       if f.name == "npu-debug-env-var" and f.severity != "info"
                       and any(a <= f.line <= b for a, b in spans) else f for f in result.findings]


def gate_findings(result: FileResult, text: str) -> None:
    """Errors inside the CUDA-only branches of a script (or of a Dockerfile's RUN lines, `text` aligned with the
    file's lines) lowered to warnings (_gated)."""
    if any(f.severity == "error" for f in result.findings):
        raw = text.encode("utf-8")
        branches = _cuda_branches(_parser().parse(raw).root_node, _Positions(raw))
        if branches:
            result.findings = [_gated(f, branches) for f in result.findings]


def _gated(f, branches: list[tuple[int, int, str]]):
    """An error inside a CUDA-only branch (`uv pip install vllm` under `if [[ "$CUDA_VERSION" == "13."* ]]`) is a
    warning, like code behind a CUDA gate in Python (auditor/static/gates.py); the test itself keeps its finding."""
    from dataclasses import replace

    how = next((t for a, b, t in branches if a <= f.line <= b), None)
    if f.severity != "error" or how is None or f.data.get("context"):
        return f
    return replace(f, severity="warning", data={**f.data, "context": "cuda-available-branch"},
                   message=f"{f.message} ({_SHELL_GATE_NOTE.format(how=how)})")
