"""Builds the onnxrun Python package from the repository it sits in.

The extension module `onnxrun._onnxrun` wraps the public C API (include/onnxrun.h) and is
linked against the static library that the repository's own CMake build makes; the same
build makes the `onnxrun` command-line tool, which the package ships and `python3 -m onnxrun`
runs. Nothing is downloaded: the build needs CMake, a C compiler, protobuf-c and libonnx-dev
(the library's dependencies) plus python3-dev, python3-setuptools and python3-numpy.

    python3 -m pip install --no-build-isolation ./python

Environment:
    ONNXRUN_SOURCE_DIR   repository root (default: the folder above this file)
    ONNXRUN_BUILD_JOBS   parallel compile jobs for the library (default: CPU count)
    ONNXRUN_CMAKE_ARGS   extra arguments for CMake's configure step
    ONNXRUN_WERROR=1     compile the extension with -Werror
"""
import os
import re
import shlex
import shutil
import subprocess
import sys

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

HERE = os.path.dirname(os.path.abspath(__file__))


def source_root():
    root = os.path.abspath(os.environ.get("ONNXRUN_SOURCE_DIR") or os.path.dirname(HERE))
    if not (os.path.isfile(os.path.join(root, "include", "onnxrun.h"))
            and os.path.isfile(os.path.join(root, "CMakeLists.txt"))):
        sys.exit("onnxrun: the library sources are not at %s; build from a checkout of the "
                 "repository or set ONNXRUN_SOURCE_DIR" % root)
    return root


def library_version(root):
    with open(os.path.join(root, "include", "onnxrun.h"), encoding="utf-8") as f:
        m = re.search(r'#define ONNXRUN_VERSION_STRING "([^"]+)"', f.read())
    if not m:
        sys.exit("onnxrun: no ONNXRUN_VERSION_STRING in include/onnxrun.h")
    return m.group(1)


def pkg_config_libs(package):
    try:
        out = subprocess.run(["pkg-config", "--libs", package], check=True, capture_output=True,
                             text=True).stdout
    except (OSError, subprocess.CalledProcessError) as e:
        sys.exit("onnxrun: pkg-config cannot find %s (install libprotobuf-c-dev): %s" % (package, e))
    return shlex.split(out)


class BuildExt(build_ext):
    """Builds libonnxrun.a and the onnxrun CLI with CMake, then the extension against them."""

    def run(self):
        root = source_root()
        cmake_dir = os.path.abspath(os.path.join(self.build_temp, "cmake"))
        jobs = os.environ.get("ONNXRUN_BUILD_JOBS") or str(os.cpu_count() or 1)
        configure = ["cmake", "-S", root, "-B", cmake_dir, "-DCMAKE_BUILD_TYPE=Release",
                     "-DONNXRUN_BUILD_TESTS=OFF"]
        configure += shlex.split(os.environ.get("ONNXRUN_CMAKE_ARGS", ""))
        self.spawn(configure)
        self.spawn(["cmake", "--build", cmake_dir, "-j", jobs, "--target", "onnxrun_static",
                    "onnxrun_cli"])

        import numpy
        for ext in self.extensions:
            ext.include_dirs += [os.path.join(root, "include"), numpy.get_include()]
            ext.extra_objects += [os.path.join(cmake_dir, "libonnxrun.a")]
            # Keep the static library's symbols out of the extension's dynamic symbol table.
            ext.extra_link_args += ["-Wl,--exclude-libs,ALL"] + pkg_config_libs("libprotobuf-c")
            ext.libraries += ["m", "pthread"]
            ext.depends += [os.path.join(cmake_dir, "libonnxrun.a"),
                            os.path.join(root, "include", "onnxrun.h")]
        super().run()

        # The CLI goes into the package: python3 -m onnxrun execs it.
        pkg_dir = os.path.join(HERE, "onnxrun") if self.inplace else os.path.join(self.build_lib, "onnxrun")
        dest = os.path.join(pkg_dir, "bin")
        os.makedirs(dest, exist_ok=True)
        shutil.copy2(os.path.join(cmake_dir, "onnxrun"), os.path.join(dest, "onnxrun"))


warnings = ["-Wall", "-Wextra", "-Wno-unused-parameter", "-Wno-missing-field-initializers"]
if os.environ.get("ONNXRUN_WERROR") == "1":
    warnings.append("-Werror")

setup(
    name="onnxrun",
    version=library_version(source_root()),
    description="Python binding of onnxrun, a small ONNX interpreter for ConvTranspose and "
                "DepthToSpace: ONNX Runtime's session API over numpy, and an ONNX backend.",
    license="see the repository",
    python_requires=">=3.9",
    install_requires=["numpy"],
    packages=["onnxrun", "onnxrun.capi"],
    # Typing (PEP 561): the package is typed, and _onnxrun.pyi describes the C extension.
    package_data={"onnxrun": ["py.typed", "_onnxrun.pyi"]},
    ext_modules=[Extension("onnxrun._onnxrun", sources=["src/onnxrun_module.c"],
                           extra_compile_args=["-std=c11", "-O2"] + warnings)],
    cmdclass={"build_ext": BuildExt},
    zip_safe=False,
)
