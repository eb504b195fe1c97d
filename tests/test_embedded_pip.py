"""pip commands that Python code runs (t19b, auditor/project/embedded_pip.py): install helpers that call pip through a
string or an argument list are read by the shell reader and reported on the Python lines; texts that only tell a user
what to type, and installs of packages with an Ascend path, stay quiet. Also the t19b DeepSpeed engine calls (NPU418)
and the fbgemm_gpu import (NPU449) at their lines."""
from __future__ import annotations

import textwrap

from auditor.rules import load_rules
from auditor.static import StaticEngine

ENGINE = StaticEngine(load_rules())


def audit(text: str, name: str = "install.py") -> list[tuple[str, int, str]]:
    result = ENGINE.analyze_bytes(textwrap.dedent(text).encode(), name)
    assert result.error is None, result.error
    return [(f.code, f.line, f.symbol) for f in result.findings]


def test_pip_helper_strings_name_cuda_packages_and_nvidia_indexes():
    # streamv2v's src/streamv2v/tools/install-tensorrt.py, abridged
    found = audit('''
        from ..pip_utils import is_installed, run_pip, version


        def install(cu="12"):
            if is_installed("tensorrt"):
                if version("tensorrt") < Version("9.0.0"):
                    run_pip("uninstall -y tensorrt")
            if not is_installed("tensorrt"):
                run_pip(
                    "install --pre --extra-index-url https://pypi.nvidia.com tensorrt==9.0.1.post11.dev4 --no-cache-dir"
                )
            if not is_installed("polygraphy"):
                run_pip(
                    "install polygraphy==0.47.1 --extra-index-url https://pypi.ngc.nvidia.com"
                )
            if not is_installed("onnxruntime"):
                run_pip("install onnxruntime")
    ''')
    assert ("NPU430", 7, "version") in found
    assert ("NPU440", 11, "tensorrt") in found and ("NPU026", 11, "index:https://pypi.nvidia.com") in found
    assert ("NPU440", 15, "polygraphy") in found and ("NPU026", 15, "index:https://pypi.ngc.nvidia.com") in found
    assert not [f for f in found if f[1] in (8, 18)]     # an uninstall; the CPU onnxruntime


def test_subprocess_and_os_system_pip_commands():
    found = audit('''
        import os
        import subprocess
        import sys

        subprocess.check_call([sys.executable, "-m", "pip", "install",
                               "bitsandbytes>=0.41.1"])
        os.system("pip install flash-attn --no-build-isolation")
        subprocess.run(f"{sys.executable} -m pip install xformers==0.0.23", shell=True)
        subprocess.check_call([sys.executable, "-m", "pip", "install", "einops"])
    ''')
    lines = {line for code, line, _ in found if code.startswith("NPU")}
    assert {7, 8, 9} <= lines                      # the package's own line in a list that spans two
    assert 6 not in lines and 10 not in lines


def test_texts_that_tell_the_user_what_to_type_are_quiet():
    found = audit('''
        try:
            import flash_attn_interface
        except ImportError:
            raise ImportError("FlashAttention 3 is missing: pip install flash-attn")
        print("run `pip install bitsandbytes` to enable 8-bit Adam")
    ''')
    assert not [f for f in found if f[1] in (5, 6)]


def test_deepspeed_engine_calls_and_fbgemm_import():
    found = audit('''
        import deepspeed
        from fbgemm_gpu.split_embedding_configs import EmbOptimType

        with deepspeed.zero.Init():
            model = build()
        engine, _, _, _ = deepspeed.initialize(model=model, model_parameters=model.parameters(), config_params=cfg)
        optimizer = EmbOptimType.EXACT_ROWWISE_ADAGRAD
    ''', "train.py")
    assert ("NPU418", 5, "deepspeed.zero.Init") in found
    assert ("NPU418", 7, "deepspeed.initialize") in found
    assert ("NPU449", 3, "fbgemm_gpu.split_embedding_configs.EmbOptimType") in found
    assert not [f for f in found if f[1] == 8]      # an enum member of fbgemm_gpu's configs is no kernel use


def test_install_helpers_take_requirements_not_their_labels():
    found = audit('''
        def build(builder):
            builder.install_pip_package('torch==1.13.1+cu117 -f https://download.pytorch.org/whl/torch_stable.html')
            builder.install_pip_package('onnxruntime-gpu==1.15.1')
            pip_install(
                "CUDA torch repair",
                "--force-reinstall",
                "--no-cache-dir",
            )
            pip_install_try("bitsandbytes (AMD Windows, pre-release main)", "--force-reinstall")
    ''')
    lines = {line for _, line, _ in found}
    assert 3 in lines and 4 in lines                 # DeepFaceLive's Windows builder: CUDA torch, onnxruntime-gpu
    assert not lines & {5, 6, 10}                    # unsloth studio's step labels
