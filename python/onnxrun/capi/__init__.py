"""ONNX Runtime's `capi` package names: onnxrun.capi.onnxruntime_pybind11_state holds ONNX
Runtime's exception classes, so `from onnxruntime.capi.onnxruntime_pybind11_state import ...`
keeps working with onnxrun substituted for onnxruntime."""
from . import onnxruntime_pybind11_state  # noqa: F401
