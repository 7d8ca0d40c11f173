"""ONNX Runtime's other spelling of the capi module (onnxruntime.capi._pybind_state)."""
from .onnxruntime_pybind11_state import *  # noqa: F401,F403
from .onnxruntime_pybind11_state import __all__  # noqa: F401
