"""pytest setup for the onnxrun package tests.

The tests run against the installed package (see .ci/test.sh: pip installs ./python into a
target folder put on PYTHONPATH). Run them from the repository root:

    PYTHONPATH=<install dir> /usr/bin/python3 -m pytest python/tests

Tests that measure something add lines with the `report` fixture; they are printed at the end
of the run (so CI's log shows the ONNX backend counts, RSS figures, ...).
"""
import os

import pytest

_REPORT = []


def pytest_report_header(config):
    import onnxrun
    return "onnxrun %s from %s" % (onnxrun.__version__, os.path.dirname(onnxrun.__file__))


def pytest_configure(config):
    # The source folder python/onnxrun has no compiled extension: importing it instead of the
    # installed package would only fail later, with a less clear message.
    try:
        import onnxrun._onnxrun  # noqa: F401
    except ImportError as e:
        raise pytest.UsageError(
            "cannot import the built onnxrun package (%s); install it (python3 -m pip install "
            "--no-build-isolation ./python) or put its install folder on PYTHONPATH, and run "
            "pytest from the repository root" % e)


@pytest.fixture
def report():
    return _REPORT.append


def pytest_terminal_summary(terminalreporter):
    if _REPORT:
        terminalreporter.section("onnxrun measurements")
        for line in _REPORT:
            terminalreporter.write_line(line)
