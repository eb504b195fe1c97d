"""The lead's decisions (u) and (v) of session 50, implemented by tq50c (auditor/static/release_members.py,
auditor/static/env_readbacks.py).

(u) A package that imports one sibling subpackage per installed release of another library (verl's
`third_party/vllm/__init__.py`: `if package_version == "0.5.4": from .vllm_v_0_5_4.llm import LLM elif ...`) loads an
adapter for a release below the library's first Ascend release (vLLM Ascend: vLLM 0.7 on) never on Ascend: its
error / warning findings are info. The adapter for a newer release, and a dispatch whose every release has an Ascend
build, keep theirs.
(v) A read of `CUDA_VISIBLE_DEVICES` that the same script or package set itself reads the tree's own value: info; the
setting line keeps its finding, and a read of a value the tree never sets keeps its own. Code written afresh in the
shape of verl's vLLM adapters, a conversational-recommender package and a launch script, not copied."""
from __future__ import annotations

from pathlib import Path

from tests.static_snippets import first_line_of
from tests.test_tq38 import _in, _tree

DISPATCH = """\
from importlib.metadata import PackageNotFoundError, version

from packaging import version as vs


def get_version(pkg):
    try:
        return version(pkg)
    except PackageNotFoundError:
        return None


package_name = "vllm"
package_version = get_version(package_name)
vllm_version = None

if package_version == "{old}":
    vllm_version = "{old}"
    from .vllm_v_{old_}.llm import LLM, LLMEngine
    from .vllm_v_{old_} import parallel_state
elif package_version == "0.6.3" or package_version.startswith("{old2}"):
    vllm_version = "{old2}"
    from .vllm_v_{old2_}.llm import LLM, LLMEngine
    from .vllm_v_{old2_} import parallel_state
elif vs.parse(package_version) >= vs.parse("0.8.5"):
    vllm_version = package_version
    from .vllm_v_0_8_5.llm import LLM, LLMEngine
    from .vllm_v_0_8_5 import parallel_state
else:
    raise ValueError(f"vllm version {{package_version}} not supported")
"""

WORKER = """\
import torch
import torch.distributed


class Worker:
    def init_device(self):
        self.device = torch.device(f"cuda:{self.local_rank}")
        torch.cuda.set_device(self.device)
        torch.distributed.all_reduce(torch.zeros(1).cuda())
        torch.cuda.empty_cache()
"""

ROLLOUT = """\
import torch

from verl.third_party.vllm import LLM


def generate(prompts):
    llm = LLM()
    torch.cuda.empty_cache()
    return llm.generate(prompts)
"""


def _verl(old: str, old2: str) -> dict[str, str]:
    base = "verl/third_party/vllm"
    files = {"verl/__init__.py": "", "verl/third_party/__init__.py": "", "verl/workers/__init__.py": "",
             "verl/workers/rollout.py": ROLLOUT,
             f"{base}/__init__.py": DISPATCH.format(old=old, old_=old.replace(".", "_"), old2=old2,
                                                    old2_=old2.replace(".", "_"))}
    for release in (old, old2, "0.8.5"):
        folder = f"{base}/vllm_v_{release.replace('.', '_')}"
        files[f"{folder}/__init__.py"] = ""
        files[f"{folder}/worker.py"] = WORKER
    return files


def test_adapters_only_releases_before_vllm_ascend_load_are_info(tmp_path: Path):
    found = _tree(tmp_path, _verl("0.5.4", "0.6.3"))
    for release in ("0_5_4", "0_6_3"):
        worker = _in(found, f"vllm_v_{release}/worker.py")
        assert worker[first_line_of(WORKER, ".cuda()")]["NPU001"] == "info"
        assert worker[first_line_of(WORKER, "empty_cache")]["NPU002"] == "info"
    # the adapter for a release vLLM Ascend runs, and the tree's own rollout, keep theirs
    assert _in(found, "vllm_v_0_8_5/worker.py")[first_line_of(WORKER, ".cuda()")]["NPU001"] == "error"
    assert _in(found, "workers/rollout.py")[first_line_of(ROLLOUT, "empty_cache")]["NPU002"] == "error"


def test_a_dispatch_whose_every_release_has_an_ascend_build_changes_nothing(tmp_path: Path):
    files = _verl("0.7.3", "0.9.2")
    files["verl/third_party/vllm/__init__.py"] = files["verl/third_party/vllm/__init__.py"].replace(
        'package_version == "0.6.3" or ', "")
    found = _tree(tmp_path, files)
    for release in ("0_7_3", "0_9_2", "0_8_5"):
        assert _in(found, f"vllm_v_{release}/worker.py")[first_line_of(WORKER, ".cuda()")]["NPU001"] == "error"


BOUNDS = """\
from importlib.metadata import version as get_version

from packaging import version as vs

package_version = get_version("vllm")

if {left} <= {v054}:
    from .vllm_v_0_5_4.llm import LLM
elif {left} <= {v063}:
    from .vllm_v_0_6_3.llm import LLM
else:
    from vllm import LLM

__all__ = ["LLM"]
"""


def test_a_release_bound_is_read_only_through_a_version_parser(tmp_path: Path):
    # review50 item 14: `package_version <= "0.5.4"` on the raw string is True for "0.10.1" too (vLLM Ascend has
    # 0.10.x releases), so that arm is no release bound; through `vs.parse` it is, and the note says "and older"
    def tree(left: str, literal: str) -> dict:
        base = "myrl/third_party/vllm"
        files = {"myrl/__init__.py": "", "myrl/third_party/__init__.py": "",
                 f"{base}/__init__.py": BOUNDS.format(left=left, v054=literal.format("0.5.4"),
                                                      v063=literal.format("0.6.3"))}
        for release in ("0_5_4", "0_6_3"):
            files[f"{base}/vllm_v_{release}/__init__.py"] = ""
            files[f"{base}/vllm_v_{release}/worker.py"] = WORKER
        return files

    raw = _tree(tmp_path / "raw", tree("package_version", '"{}"'))
    for release in ("0_5_4", "0_6_3"):
        assert _in(raw, f"vllm_v_{release}/worker.py")[first_line_of(WORKER, ".cuda()")]["NPU001"] == "error"
    from auditor.runner import run_static
    from tests.static_snippets import write_tree

    write_tree(tmp_path / "parsed", tree("vs.parse(package_version)", 'vs.parse("{}")'))
    notes = {r.path.split("/")[-2]: f.message for r in run_static([tmp_path / "parsed"], jobs=1).results
             for f in r.findings if f.code == "NPU001" and f.severity == "info"}
    assert "vllm 0.5.4 and older, which" in notes["vllm_v_0_5_4"]
    assert "vllm 0.6.3 and older, which" in notes["vllm_v_0_6_3"]


CONFIG = """\
import os


class Config:
    def __init__(self, config_file, gpu="-1", debug=False):
        self.opt = self.load_yaml_configs(config_file)
        os.environ["CUDA_VISIBLE_DEVICES"] = gpu
        if gpu != "-1":
            self.opt["gpu"] = [i for i in range(len(gpu.split(",")))]
        else:
            self.opt["gpu"] = [-1]
"""

SYSTEM = """\
import os


class KBRDSystem:
    def train_conversation(self):
        if os.environ["CUDA_VISIBLE_DEVICES"] == "-1":
            self.model.freeze_parameters()
        elif len(os.environ["CUDA_VISIBLE_DEVICES"]) == 1:
            self.model.freeze_parameters()
        else:
            self.model.module.freeze_parameters()
"""

SCRIPT = """\
import argparse
import os

parser = argparse.ArgumentParser()
parser.add_argument("--gpu_id", type=str, default="0")
args = parser.parse_args()
os.environ["CUDA_VISIBLE_DEVICES"] = args.gpu_id
n_gpu = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))
print(f"training on {n_gpu} devices")
"""

MAIN_SET = """\
import argparse
import os


def count_devices():
    return len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", type=str, default="0,1")
    args = parser.parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
    print(count_devices())
"""

WORKER_SET = """\
import multiprocessing as mp
import os


def worker_fn(gpu_ids, queue):
    os.environ["CUDA_VISIBLE_DEVICES"] = gpu_ids
    queue.put(gpu_ids)


def main():
    all_gpus = os.environ["CUDA_VISIBLE_DEVICES"].split(",") if "CUDA_VISIBLE_DEVICES" in os.environ else []
    queue = mp.Queue()
    for gpu in all_gpus:
        mp.Process(target=worker_fn, args=(gpu, queue)).start()


class Worker:
    def __init__(self):
        if os.environ.get("ROCR_VISIBLE_DEVICES"):
            os.environ["CUDA_VISIBLE_DEVICES"] = os.environ.get("ROCR_VISIBLE_DEVICES")

    def get_cuda_visible_devices(self):
        return os.environ.get("CUDA_VISIBLE_DEVICES", "not set")
"""

RUN_CRS = """\
import argparse

from crs.config import Config

if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpu", type=str, default="-1")
    args, _ = parser.parse_known_args()
    config = Config(args.config, args.gpu, args.debug)
    from crs.quick_start import run_crs

    run_crs(config)
"""

QUICK_START = """\
from crs.system.kbrd import KBRDSystem


def run_crs(config):
    system = KBRDSystem(config)
    system.fit()
"""

LAUNCHER = """\
import argparse
import os
import subprocess
import sys


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--gpus", default="0,1,2,3")
    args = parser.parse_args()
    os.environ["CUDA_VISIBLE_DEVICES"] = args.gpus
    subprocess.run([sys.executable, "-m", "trainer.train"], check=True)


if __name__ == "__main__":
    main()
"""

DEVICES = """\
import os

import torch


def world_devices() -> list[int]:
    visible = os.environ.get("CUDA_VISIBLE_DEVICES")
    if visible is None:
        return list(range(torch.cuda.device_count()))
    return [int(d) for d in visible.split(",")]
"""

EVALUATE = """\
from trainer.utils import world_devices


def main() -> None:
    print(f"evaluating on {len(world_devices())} devices")


if __name__ == "__main__":
    main()
"""

READER = """\
import os

n_gpu = len(os.environ.get("CUDA_VISIBLE_DEVICES", "0").split(","))
print(f"training on {n_gpu} devices")
"""

LAUNCH = """\
#!/bin/bash
set -e
export CUDA_VISIBLE_DEVICES=0,1,2,3
NUM_GPUS=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)
torchrun --nproc_per_node=$NUM_GPUS train.py --config configs/asr.yaml
"""

LAUNCH_USER = """\
#!/bin/bash
set -e
NUM_GPUS=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)
torchrun --nproc_per_node=$NUM_GPUS train.py --config configs/asr.yaml
"""


def test_reads_of_the_visible_devices_a_package_or_script_set_itself_are_info(tmp_path: Path):
    found = _tree(tmp_path, {"crs/__init__.py": "", "crs/config/__init__.py": "from .config import Config\n",
                             "crs/config/config.py": CONFIG, "crs/system/__init__.py": "", "crs/system/kbrd.py": SYSTEM,
                             "crs/quick_start.py": QUICK_START, "run_crs.py": RUN_CRS, "run_train.py": SCRIPT,
                             "scripts/run.sh": LAUNCH, "infer.py": MAIN_SET})
    system = _in(found, "crs/system/kbrd.py")
    assert system[first_line_of(SYSTEM, '== "-1"')]["NPU004"] == "info"
    assert system[first_line_of(SYSTEM, "len(os.environ")]["NPU004"] == "info"
    # the lines that set it keep their findings
    assert _in(found, "crs/config/config.py")[first_line_of(CONFIG, "os.environ")]["NPU004"] == "warning"
    script = _in(found, "run_train.py")
    assert script[first_line_of(SCRIPT, "os.environ[")]["NPU004"] == "warning"
    assert script[first_line_of(SCRIPT, "n_gpu =")]["NPU004"] == "info"
    # set in the `__main__` block, read in a function it calls
    assert _in(found, "infer.py")[first_line_of(MAIN_SET, "return len")]["NPU004"] == "info"
    launch = _in(found, "scripts/run.sh")
    assert launch[first_line_of(LAUNCH, "export")]["NPU004"] == "warning"
    assert launch[first_line_of(LAUNCH, "NUM_GPUS=")]["NPU004"] == "info"


def test_reads_of_a_visible_devices_the_tree_never_sets_keep_their_severity(tmp_path: Path):
    conditional = CONFIG.replace('        os.environ["CUDA_VISIBLE_DEVICES"] = gpu\n',
                                 '        if gpu:\n            os.environ["CUDA_VISIBLE_DEVICES"] = gpu\n')
    found = _tree(tmp_path, {"train.py": READER, "scripts/run.sh": LAUNCH_USER, "eval_parallel.py": WORKER_SET,
                             "crs/__init__.py": "", "crs/config/__init__.py": "", "crs/config/config.py": conditional,
                             "crs/system/__init__.py": "", "crs/system/kbrd.py": SYSTEM})
    assert _in(found, "train.py")[first_line_of(READER, "n_gpu")]["NPU004"] == "warning"
    assert _in(found, "scripts/run.sh")[first_line_of(LAUNCH_USER, "NUM_GPUS=")]["NPU004"] == "warning"
    # a parent reading the user's devices to hand out to workers that each set their own; a read after a setting
    # only another arm makes (ROCm's)
    evaluate = _in(found, "eval_parallel.py")
    assert evaluate[first_line_of(WORKER_SET, "all_gpus =")]["NPU004"] == "warning"
    assert evaluate[first_line_of(WORKER_SET, '"not set"')]["NPU004"] == "warning"
    # a package that sets it only under a condition (a worker handed its devices) keeps its reads
    assert _in(found, "crs/system/kbrd.py")[first_line_of(SYSTEM, '== "-1"')]["NPU004"] == "warning"


def test_a_package_setting_in_another_process_leaves_the_read(tmp_path: Path):
    # review50 item 2: the launcher sets it for the training process it starts; the evaluation module, run on its own
    # by the scheduler's script, reads the scheduler's value (nothing on Ascend: the device-count fallback runs)
    files = {"trainer/__init__.py": "", "trainer/launch.py": LAUNCHER, "trainer/utils.py": DEVICES,
             "trainer/evaluate.py": EVALUATE, "eval.sh": "#!/bin/bash\npython -m trainer.evaluate\n"}
    found = _tree(tmp_path, files)
    assert _in(found, "trainer/utils.py")[first_line_of(DEVICES, "os.environ.get")]["NPU004"] == "warning"
    assert _in(found, "trainer/launch.py")[first_line_of(LAUNCHER, "os.environ[")]["NPU004"] == "warning"
    # the same package whose entry imports the reader before it starts: one process sets and reads
    files["trainer/launch.py"] = LAUNCHER.replace("import sys\n", "import sys\n\nfrom trainer.utils import world_devices\n")
    found = _tree(tmp_path / "imported", files)
    assert _in(found, "trainer/utils.py")[first_line_of(DEVICES, "os.environ.get")]["NPU004"] == "info"

EVAL_PREFIX = """\
#!/bin/bash
export CUDA_VISIBLE_DEVICES=0,1,2,3
NUM_GPUS=$(echo $CUDA_VISIBLE_DEVICES | tr ',' '\\n' | wc -l)
torchrun --nproc_per_node=$NUM_GPUS train.py --config configs/base.yaml
CUDA_VISIBLE_DEVICES=0 python eval.py --ckpt out/last.pt
if [ -n "$EXTRA" ]; then
  CUDA_VISIBLE_DEVICES=$EXTRA python eval.py --ckpt out/best.pt
fi
"""

PER_WORKER = LAUNCHER.replace('    subprocess.run([sys.executable, "-m", "trainer.train"], check=True)\n', """\
    procs = []
    for rank, gpu in enumerate(args.gpus.split(",")):
        child = os.environ.copy()
        child["CUDA_VISIBLE_DEVICES"] = gpu
        procs.append(subprocess.Popen([sys.executable, "worker.py", str(rank)], env=child))
    procs.append(subprocess.Popen([sys.executable, "monitor.py"], env={**os.environ, "CUDA_VISIBLE_DEVICES": ""}))
    for p in procs:
        p.wait()
    n_gpus = len(os.environ["CUDA_VISIBLE_DEVICES"].split(","))
    print(f"ran on {n_gpus} devices")

""")


def test_settings_after_the_files_own_setting_are_not_reads(tmp_path: Path):
    # review50 item 1: only an expansion / lookup is a read; a command prefix `X=v cmd`, a per-worker env dict's key
    # and an `env={..., "X": ""}` mapping set the value for a child process and keep their findings
    found = _tree(tmp_path, {"scripts/run.sh": EVAL_PREFIX, "launch.py": PER_WORKER})
    launch = _in(found, "scripts/run.sh")
    assert launch[first_line_of(EVAL_PREFIX, "NUM_GPUS=")]["NPU004"] == "info"
    assert launch[first_line_of(EVAL_PREFIX, "CUDA_VISIBLE_DEVICES=0 python")]["NPU004"] == "warning"
    assert launch[first_line_of(EVAL_PREFIX, "CUDA_VISIBLE_DEVICES=$EXTRA")]["NPU004"] == "warning"
    workers = _in(found, "launch.py")
    assert workers[first_line_of(PER_WORKER, 'child["CUDA')]["NPU004"] == "warning"
    assert workers[first_line_of(PER_WORKER, '"CUDA_VISIBLE_DEVICES": ""')]["NPU004"] == "warning"
    assert workers[first_line_of(PER_WORKER, "n_gpus =")]["NPU004"] == "info"


def test_a_warm_run_reads_no_python_file_for_either_pass(tmp_path: Path, monkeypatch):
    # release_members / env_readbacks keep what they read of a file in its summary (saved with the cache)
    from auditor.runner import run_static
    from tests.static_snippets import write_tree
    from tests.test_tree_facts import _findings, _refuse_python_reads

    root = tmp_path / "tree"
    write_tree(root, {**_verl("0.5.4", "0.6.3"), "crs/__init__.py": "", "crs/config/__init__.py": "",
                      "crs/config/config.py": CONFIG, "crs/system/__init__.py": "", "crs/system/kbrd.py": SYSTEM,
                      "crs/quick_start.py": QUICK_START, "run_crs.py": RUN_CRS.replace("crs.config ", "crs.config.config ")})
    cache = tmp_path / "cache"
    cold = run_static([root], jobs=1, cache_dir=cache)
    contexts = {f.data.get("context") for r in cold.results for f in r.findings}
    assert {"per-release", "set-here"} <= contexts
    _refuse_python_reads(monkeypatch)
    warm = run_static([root], jobs=1, cache_dir=cache)
    assert _findings(warm) == _findings(cold)
    assert warm.project_reads == 0


def test_a_warm_run_checks_the_kept_adapters_against_the_tree(tmp_path: Path):
    # review50 item 14: the dispatcher's kept fact names the folders its arms import; whether each is a subpackage is
    # read from this run's file list (a folder that lost its `__init__.py` is no adapter the dispatcher can import)
    from auditor.runner import run_static
    from tests.static_snippets import write_tree

    root = tmp_path / "tree"
    write_tree(root, _verl("0.5.4", "0.6.3"))
    cache = tmp_path / "cache"

    def severity(run) -> str:
        return next(f.severity for r in run.results if r.path.endswith("vllm_v_0_5_4/worker.py")
                    for f in r.findings if f.code == "NPU001")

    assert severity(run_static([root], jobs=1, cache_dir=cache)) == "info"
    (root / "verl/third_party/vllm/vllm_v_0_5_4/__init__.py").unlink()
    assert severity(run_static([root], jobs=1, cache_dir=cache)) == "error"
