"""Precision fixes of tq51c (session 51, tuned on heldout65's labels).

A renamed fork (auditor/static/unreached_defs.py, `_fork_programs`): a research tree keeps a chat-serving framework's
fork under its own name (`graphchat/`), whose upstream modules still import the installed framework (`chatserve.*`),
so the folder reads as a renamed copy; but the tree's own programs in it (a `__main__` block importing the fork by its
own path, `from graphchat.model.builder import ...`) run, and so does what they import. The fork's modules nothing
imports stay info (policy (j)). Code written afresh in the shape of those trees, not copied."""
from __future__ import annotations

from tests.static_snippets import dedented_tree, first_line_of

CONVERSATION = """\
    import dataclasses


    @dataclasses.dataclass
    class Conversation:
        system: str = ""


    def get_conv_template(name):
        return Conversation(name)
    """
CONSTANTS = """\
    WORKER_HEART_BEAT_INTERVAL = 15
    SERVER_ERROR_MSG = "network error"
    """
UTILS = """\
    import logging


    def build_logger(name):
        return logging.getLogger(name)
    """
WORKER = """\
    import torch

    from chatserve.constants import WORKER_HEART_BEAT_INTERVAL, SERVER_ERROR_MSG
    from chatserve.conversation import get_conv_template
    from chatserve.utils import build_logger

    logger = build_logger("worker")


    def generate(model, ids):
        torch.cuda.synchronize()
        return model(ids)
    """
COMPRESSION = """\
    import torch


    def compress(weights):
        out = [w.half() for w in weights]
        torch.cuda.empty_cache()
        return out
    """
BUILDER = """\
    import torch
    from graphchat.model.graph_llama import GraphLlama


    def load_pretrained_model(path):
        model = GraphLlama.from_pretrained(path)
        return model.to(device="cuda")
    """
GRAPH_LLAMA = """\
    import torch


    class GraphLlama(torch.nn.Module):
        @classmethod
        def from_pretrained(cls, path):
            return cls()
    """
EVAL = """\
    import argparse

    import torch
    from graphchat.model.builder import load_pretrained_model
    from graphchat.conversation import get_conv_template


    def run(args):
        model = load_pretrained_model(args.model)
        ids = torch.tensor([[1, 2, 3]]).cuda()
        return model(ids)


    if __name__ == "__main__":
        parser = argparse.ArgumentParser()
        parser.add_argument("--model")
        run(parser.parse_args())
    """
UPSTREAM_CLI = """\
    import torch

    from chatserve.conversation import get_conv_template


    def main():
        print(get_conv_template("vicuna"), torch.cuda.device_count())


    if __name__ == "__main__":
        main()
    """


def _files() -> dict[str, str]:
    return {"graphchat/__init__.py": "", "graphchat/conversation.py": CONVERSATION,
            "graphchat/constants.py": CONSTANTS, "graphchat/utils.py": UTILS,
            "graphchat/serve/__init__.py": "", "graphchat/serve/worker.py": WORKER,
            "graphchat/serve/cli.py": UPSTREAM_CLI,
            "graphchat/model/__init__.py": "", "graphchat/model/compression.py": COMPRESSION,
            "graphchat/model/builder.py": BUILDER, "graphchat/model/graph_llama.py": GRAPH_LLAMA,
            "graphchat/eval/__init__.py": "", "graphchat/eval/run_graph_eval.py": EVAL}


def _severities(found: dict, path: str, src: str, needle: str) -> set[str]:
    return set(found.get((path, first_line_of(src, needle)), {}).values())


def test_a_program_importing_a_renamed_fork_by_its_own_path_runs(tmp_path):
    found = dedented_tree(tmp_path, _files())
    assert "error" in _severities(found, "graphchat/eval/run_graph_eval.py", EVAL, ".cuda()")
    # what the program imports runs with it
    assert "error" in _severities(found, "graphchat/model/builder.py", BUILDER, 'device="cuda"')


def test_the_forks_upstream_modules_nothing_imports_stay_info(tmp_path):
    found = dedented_tree(tmp_path, _files())
    assert _severities(found, "graphchat/model/compression.py", COMPRESSION, "empty_cache") == {"info"}
    assert _severities(found, "graphchat/serve/worker.py", WORKER, "synchronize") == {"info"}
    # an upstream program importing only the upstream name is upstream's, nothing of the tree's
    assert _severities(found, "graphchat/serve/cli.py", UPSTREAM_CLI, "device_count") == {"info"}
