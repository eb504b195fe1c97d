"""Lead mends of session 55 (review54): the launch choices' argparse defaults come from launched.option_defaults (its
`dest=`, short aliases and dataclass fields), and a launch's option words are paired once (`ones`, `values`)."""
from __future__ import annotations

import ast
import textwrap

from tests.static_snippets import tree_codes_by_line, write_tree
from tests.test_tp54b import DETECTOR_TREE


def _defaults(source: str):
    from auditor.project.launched import name_defaults

    return name_defaults(ast.parse(textwrap.dedent(source)))


def test_name_defaults_follow_dest_and_aliases():
    found = _defaults("""\
        import argparse
        parser = argparse.ArgumentParser()
        parser.add_argument('--model-arch', '-a', dest='arch', default='dla_34')
        parser.add_argument('--lr', type=float, default=1.25e-4)
        parser.add_argument('--out', default='runs/exp')
        """)
    assert found == {"arch": ["dla_34", ["model_arch", "a"]]}     # a number or a path is no name


def test_name_defaults_of_dataclass_fields():
    found = _defaults("""\
        from dataclasses import dataclass, field

        @dataclass
        class ModelArguments:
            attn_impl: str = field(default="flash_attention_2")
            max_len: int = 2048
        """)
    assert found == {"attn_impl": ["flash_attention_2", ["attn_impl"]]}


def _with_opts(opts_line: str) -> dict[str, str]:
    tree = dict(DETECTOR_TREE)
    tree["src/lib/opts.py"] = tree["src/lib/opts.py"].replace(
        "self.parser.add_argument('--arch', default='dla_34',", opts_line)
    return tree


def test_a_default_given_by_its_short_alias_is_not_the_run_s_choice(tmp_path):
    # `-a hourglass` gives the option: its default dla_34 (DCN) is not what the launch runs
    tree = _with_opts("self.parser.add_argument('--arch', '-a', default='dla_34',")
    tree["experiments/ddd_3dop.sh"] = "cd src\npython main.py ddd --exp_id 3dop -a hourglass --gpus 0,1\ncd ..\n"
    root = write_tree(tmp_path / "CenterNet", tree)
    assert "NPU992" not in tree_codes_by_line(root, "experiments/ddd_3dop.sh").get(2, set())


def test_a_default_under_dest_is_still_the_run_s_choice(tmp_path):
    tree = _with_opts("self.parser.add_argument('--network', dest='arch', default='dla_34',")
    root = write_tree(tmp_path / "CenterNet", tree)
    assert "NPU992" in tree_codes_by_line(root, "experiments/ddd_3dop.sh").get(2, set())
    # given by its flag's other spelling, `--network hourglass`: quiet
    tree["experiments/ddd_3dop.sh"] = "cd src\npython main.py ddd --network hourglass --gpus 0,1\ncd ..\n"
    root = write_tree(tmp_path / "CenterNet2", tree)
    assert "NPU992" not in tree_codes_by_line(root, "experiments/ddd_3dop.sh").get(2, set())


def test_backends_of_an_expression_read_without_its_source():
    from auditor.backend_words import backends_in_expression

    def backends(source: str) -> set[str]:
        return backends_in_expression(ast.parse(source, mode="eval").body)

    assert backends('device.type == "npu"') == {"npu"}
    assert backends("is_torch_npu_available() or is_torch_cuda_available()") == {"npu", "cuda"}
    assert backends("f(use_npu=True)") == {"npu"}                 # a keyword's name is a word of the test
    assert backends("torch.npu.is_available()") == {"npu"}
    assert backends("self.enable_flash_attn and x > 0") == set()
