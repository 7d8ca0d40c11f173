"""python3 -m onnxrun ARGS...: the onnxrun command-line tool, unchanged.

The package ships the CLI executable built from src/cli by the repository's CMake build (see
setup.py); this module replaces the Python process with it, so options, output and exit
statuses are exactly the CLI's (0 success, 1 an output differs, 2 an error).
"""
import os
import sys
from typing import List, Optional

from . import cli_path


def main(argv: Optional[List[str]] = None) -> int:
    args = sys.argv[1:] if argv is None else list(argv)
    exe = cli_path()
    if not os.access(exe, os.X_OK):
        sys.stderr.write("onnxrun: error: the packaged CLI is missing or not executable: %s\n" % exe)
        return 2
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(exe, ["onnxrun"] + args)
    return 2  # not reached: execv returns only by raising


if __name__ == "__main__":
    sys.exit(main())
