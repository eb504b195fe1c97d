"""pd45 (session 29, project split test50): a launched script named from the calling script's own folder
(`$(dirname "$0")/train.py`, SegmenTron's tools/dist_train.sh) is read like a plain path, from that folder; its
hard-coded NCCL backend (in a module the script imports) makes the multi-process launch line NPU143. Controls: the
same launch of a script that takes its backend from the environment, and a folder held in another variable."""
from __future__ import annotations

from tests.test_project_pd37 import _launch_codes
from tests.test_project_t23c import _tree

# Tramac/SegmenTron segmentron/utils/default_setup.py and tools/train.py, cut down
DEFAULT_SETUP = """\
    import os
    import torch


    def default_setup(args):
        num_gpus = int(os.environ["WORLD_SIZE"]) if "WORLD_SIZE" in os.environ else 1
        args.distributed = num_gpus > 1
        if args.distributed:
            torch.cuda.set_device(args.local_rank)
            torch.distributed.init_process_group(backend="nccl", init_method="env://")
    """

TRAIN = """\
    import argparse
    import os
    import sys

    cur_path = os.path.abspath(os.path.dirname(__file__))
    root_path = os.path.split(cur_path)[0]
    sys.path.append(root_path)

    from segmentron.utils.default_setup import default_setup


    def parse_args():
        parser = argparse.ArgumentParser()
        parser.add_argument("--config-file", type=str)
        parser.add_argument("--local_rank", type=int, default=0)
        return parser.parse_args()


    if __name__ == "__main__":
        args = parse_args()
        default_setup(args)
    """

DIST_TRAIN = """\
    #!/usr/bin/env bash

    PYTHON=${PYTHON:-"python"}

    CONFIG=$1
    GPUS=$2

    $PYTHON -m torch.distributed.launch --nproc_per_node=$GPUS \\
        $(dirname "$0")/train.py --config-file $CONFIG ${@:3}
    """


def _files(setup: str = DEFAULT_SETUP, launch: str = DIST_TRAIN) -> dict[str, str]:
    return {"segmentron/__init__.py": "", "segmentron/utils/__init__.py": "",
            "segmentron/utils/default_setup.py": setup, "tools/train.py": TRAIN, "tools/dist_train.sh": launch}


def test_a_script_named_from_the_callers_folder_is_read(tmp_path):
    root = _tree(tmp_path, _files())
    assert _launch_codes(root, "tools/dist_train.sh") == [(8, "NPU143")]


def test_the_backticks_and_bash_source_spellings(tmp_path):
    for word in ("`dirname $0`/train.py", '$(dirname "${BASH_SOURCE[0]}")/train.py'):
        root = _tree(tmp_path / str(len(word)), _files(launch=DIST_TRAIN.replace('$(dirname "$0")/train.py', word)))
        assert _launch_codes(root, "tools/dist_train.sh") == [(8, "NPU143")]


def test_a_backend_from_the_environment_stays_quiet(tmp_path):
    setup = DEFAULT_SETUP.replace('backend="nccl"', 'backend=os.environ.get("BACKEND", "gloo")')
    root = _tree(tmp_path, _files(setup=setup))
    assert _launch_codes(root, "tools/dist_train.sh") == []


def test_a_folder_in_another_variable_stays_quiet(tmp_path):
    root = _tree(tmp_path, _files(launch=DIST_TRAIN.replace('$(dirname "$0")', "$WORK_DIR")))
    assert _launch_codes(root, "tools/dist_train.sh") == []
