"""pd51 (session 31, TUNED on dev31): general false families found on four new trees (dev31's STAMP, MedSAM2,
continuiti, cccv), each on code shaped like the tree it came from, with a control."""
from __future__ import annotations

from tests.static_snippets import line_of, run_values_by_line


def _severities(tmp_path, files, rel):
    return run_values_by_line(tmp_path, files, rel, "severity")


# -- a CUDA extension build whose errors the setup script tolerates ------------------------------------------------
SAM2_SETUP = """\
import os

from setuptools import find_packages, setup

BUILD_CUDA = os.getenv("SAM2_BUILD_CUDA", "1") == "1"
BUILD_ALLOW_ERRORS = os.getenv("SAM2_BUILD_ALLOW_ERRORS", "1") == "1"
CUDA_ERROR_MSG = "{}\\n\\nFailed to build the SAM 2 CUDA extension due to the error above."


def get_extensions():
    if not BUILD_CUDA:
        return []
    try:
        from torch.utils.cpp_extension import CUDAExtension

        srcs = ["sam2/csrc/connected_components.cu"]
        compile_args = {
            "cxx": [],
            "nvcc": [
                "-DCUDA_HAS_FP16=1",
                "-D__CUDA_NO_HALF_OPERATORS__",
            ],
        }
        ext_modules = [CUDAExtension("sam2._C", srcs, extra_compile_args=compile_args)]
    except Exception as e:
        if BUILD_ALLOW_ERRORS:
            ext_modules = []
            print(CUDA_ERROR_MSG.format(e))
        else:
            raise e
    return ext_modules


try:
    from torch.utils.cpp_extension import BuildExtension

    class BuildExtensionIgnoreErrors(BuildExtension):
        def build_extensions(self):
            try:
                super().build_extensions()
            except Exception as e:
                print(CUDA_ERROR_MSG.format(e))
                self.extensions = []

    cmdclass = {
        "build_ext": (
            BuildExtensionIgnoreErrors.with_options(no_python_abi_suffix=True)
            if BUILD_ALLOW_ERRORS
            else BuildExtension.with_options(no_python_abi_suffix=True)
        )
    }
except Exception as e:
    cmdclass = {}

setup(name="SAM-2", packages=find_packages(), ext_modules=get_extensions(), cmdclass=cmdclass)
"""

# the simplejson shape: the step re-raises and the script retries setup() without the extension: not read here
STRICT_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension


class BuildFailed(Exception):
    pass


class StrictBuild(BuildExtension):
    def build_extensions(self):
        try:
            super().build_extensions()
        except Exception:
            raise BuildFailed()


setup(
    name="warp_ops",
    ext_modules=[CUDAExtension("warp_ops._C", ["csrc/warp_kernel.cu"])],
    cmdclass={"build_ext": StrictBuild},
)
"""

OPTIONAL_SETUP = """\
from setuptools import setup
from torch.utils.cpp_extension import BuildExtension, CUDAExtension

setup(
    name="fastblur",
    ext_modules=[CUDAExtension("fastblur._C", ["csrc/blur_kernel.cu"], optional=True)],
    cmdclass={"build_ext": BuildExtension},
)
"""


def test_a_build_whose_errors_the_setup_script_swallows_is_a_warning(tmp_path):
    sev = _severities(tmp_path, {"setup.py": SAM2_SETUP}, "setup.py")
    assert sev.get(line_of(SAM2_SETUP, "connected_components.cu")) == {"warning"}
    # the nvcc flag list is one finding on its key's line (decision 18, tp55b), a warning as the build is
    assert sev.get(line_of(SAM2_SETUP, '"nvcc": [')) == {"warning"}
    assert line_of(SAM2_SETUP, "-D__CUDA_NO_HALF_OPERATORS__") not in sev
    assert "error" not in set().union(*sev.values())


def test_an_optional_cuda_extension_is_a_warning(tmp_path):
    sev = _severities(tmp_path, {"setup.py": OPTIONAL_SETUP}, "setup.py")
    assert sev.get(line_of(OPTIONAL_SETUP, "blur_kernel.cu")) == {"warning"}


def test_a_build_step_that_re_raises_keeps_the_error(tmp_path):
    sev = _severities(tmp_path, {"setup.py": STRICT_SETUP}, "setup.py")
    assert "error" in sev.get(line_of(STRICT_SETUP, "warp_kernel.cu"), set())


# -- a CuPy kernel module imported only when the importer's cupy probe succeeds -------------------------------------
DRBA = """\
import torch
import torch.nn as nn


class DRBA(nn.Module):
    def __init__(self):
        super().__init__()
        support_cupy = True
        try:
            import cupy

            if cupy.cuda.get_cuda_path() is None:
                support_cupy = False
        except Exception:
            support_cupy = False

        if support_cupy:
            from vfi.softsplat import softsplat as fwarp
        else:
            from vfi.softsplat_torch import softsplat as fwarp

        self.fwarp = fwarp

    def forward(self, x, flow, metric):
        return self.fwarp(x, flow, metric, "soft")
"""

SOFTSPLAT = """\
import cupy
import torch


def cuda_int32(intIn: int):
    return cupy.int32(intIn)


@cupy.memoize(for_each_device=True)
def cuda_launch(strKey: str):
    return cupy.RawModule(code=strKey).get_function("softsplat_out")


def softsplat(tenIn, tenFlow, tenMetric, strMode):
    out = tenIn.new_zeros(tenIn.shape)
    cuda_launch("softsplat_out")(grid=(1, 1, 1), block=(512, 1, 1), args=(cuda_int32(out.nelement()),))
    return out
"""

SOFTSPLAT_TORCH = """\
import torch


def softsplat(tenIn, tenFlow, tenMetric, strMode):
    return tenIn * tenMetric
"""

# control: a flag that is no import probe (set False by a parse error) leaves the import unguarded
TILED = """\
def pick(value):
    use_kernel = True
    try:
        tiles = int(value)
    except ValueError:
        use_kernel = False
    if use_kernel:
        from vfi.softsplat import softsplat as fwarp
    else:
        from vfi.softsplat_torch import softsplat as fwarp
    return fwarp
"""


def test_a_module_imported_under_an_import_probe_flag_is_optional(tmp_path):
    files = {"vfi/__init__.py": "", "vfi/drba.py": DRBA, "vfi/softsplat.py": SOFTSPLAT,
             "vfi/softsplat_torch.py": SOFTSPLAT_TORCH}
    sev = _severities(tmp_path, files, "vfi/softsplat.py")
    assert sev.get(line_of(SOFTSPLAT, "return cupy.int32")) == {"warning"}
    assert sev.get(line_of(SOFTSPLAT, "@cupy.memoize")) == {"warning"}


def test_a_flag_that_is_no_import_probe_keeps_the_error(tmp_path):
    files = {"vfi/__init__.py": "", "vfi/tiled.py": TILED, "vfi/softsplat.py": SOFTSPLAT,
             "vfi/softsplat_torch.py": SOFTSPLAT_TORCH}
    sev = _severities(tmp_path, files, "vfi/softsplat.py")
    assert sev.get(line_of(SOFTSPLAT, "return cupy.int32")) == {"error"}
