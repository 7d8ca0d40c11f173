"""onnxrun for Python: ONNX Runtime's session API and an ONNX backend over the onnxrun C library.

    import onnxrun as ort            # code written for onnxruntime.InferenceSession runs as is
    sess = ort.InferenceSession("model.onnx")
    y, = sess.run(None, {sess.get_inputs()[0].name: x})

Everything runs in the C library (include/onnxrun.h): this package converts numpy arrays to
and from its tensors and raises its errors as exceptions. See docs/python.md.
"""
import os as _os
from typing import Any as _Any, Optional as _Optional


class ModelWarning(UserWarning):
    """A warning the C library logged while loading a model (e.g. an unused initializer)."""


from . import _onnxrun  # noqa: E402  (ModelWarning must exist first: the extension looks it up)
from ._onnxrun import (  # noqa: E402,F401
    Cancelled,
    Error,
    FileError,
    InvalidArgument,
    InvalidInput,
    InvalidModel,
    LimitExceeded,
    OutOfMemory,
    RuntimeFailure,
    Unsupported,
)
from ._options import (  # noqa: E402,F401
    ExecutionMode,
    ExecutionOrder,
    GraphOptimizationLevel,
    RunOptions,
    SessionOptions,
    set_default_logger_severity,
    set_default_logger_verbosity,
)
from ._session import (  # noqa: E402,F401
    InferenceSession,
    ModelMetadata,
    NodeArg,
    NodeInfo,
    disable_telemetry_events,
    enable_telemetry_events,
    get_all_providers,
    get_available_providers,
    get_build_info,
    get_device,
    get_version_string,
    set_seed,
)
from ._values import IOBinding, OrtValue  # noqa: E402,F401
from . import capi  # noqa: E402,F401
from ._tensors import load_tensor, save_tensor  # noqa: E402,F401

__version__: str = _onnxrun.version()

# bfloat16 has no numpy dtype of its own. With ml_dtypes importable, bfloat16 tensors come
# out as ml_dtypes.bfloat16 arrays and such arrays go in; without it they are uint16 arrays
# holding the raw bits (a uint16 array fed to a bfloat16 input is taken as such bits).
bfloat16: _Optional[_Any]
try:
    import ml_dtypes as _ml_dtypes
    import numpy as _np

    bfloat16 = _np.dtype(_ml_dtypes.bfloat16)
    _onnxrun.set_bfloat16_dtype(bfloat16)
except ImportError:
    bfloat16 = None


def cli_path() -> str:
    """Path of the onnxrun command-line tool shipped in the package (python3 -m onnxrun runs it)."""
    return _os.path.join(_os.path.dirname(_os.path.abspath(__file__)), "bin", "onnxrun")


__all__ = [
    "Cancelled", "Error", "FileError", "InvalidArgument", "InvalidInput", "InvalidModel", "LimitExceeded",
    "OutOfMemory", "RuntimeFailure", "Unsupported", "ModelWarning",
    "InferenceSession", "NodeArg", "NodeInfo", "ModelMetadata", "SessionOptions",
    "GraphOptimizationLevel", "ExecutionMode", "ExecutionOrder", "RunOptions", "OrtValue",
    "IOBinding", "capi", "get_all_providers", "get_available_providers", "get_device",
    "get_build_info", "get_version_string", "set_seed", "set_default_logger_severity",
    "set_default_logger_verbosity", "enable_telemetry_events", "disable_telemetry_events",
    "load_tensor", "save_tensor", "cli_path", "bfloat16", "__version__",
]
