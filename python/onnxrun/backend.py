"""onnxrun as an ONNX backend (onnx.backend.base.Backend), so ONNX's backend machinery can
drive it:

    import onnxrun.backend as backend
    rep = backend.prepare(model)              # an onnx.ModelProto
    outputs = rep.run([x])                    # or {name: x}
    outputs = backend.run_node(node, [x, w])  # one NodeProto on its own

is_compatible(model) is False when onnxrun reports the model as unsupported (an op it does not
implement), which ONNX's test runner turns into a skip. Needs the onnx Python package.
"""
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt
import onnx
from onnx import TensorProto, helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType, namedtupledict

from . import Unsupported
from ._session import InferenceSession

# numpy dtype -> TensorProto data type, for run_node's declared inputs.
_NP_TO_ONNX = {
    np.dtype(np.bool_): TensorProto.BOOL,
    np.dtype(np.int8): TensorProto.INT8,
    np.dtype(np.int16): TensorProto.INT16,
    np.dtype(np.int32): TensorProto.INT32,
    np.dtype(np.int64): TensorProto.INT64,
    np.dtype(np.uint8): TensorProto.UINT8,
    np.dtype(np.uint16): TensorProto.UINT16,
    np.dtype(np.uint32): TensorProto.UINT32,
    np.dtype(np.uint64): TensorProto.UINT64,
    np.dtype(np.float16): TensorProto.FLOAT16,
    np.dtype(np.float32): TensorProto.FLOAT,
    np.dtype(np.float64): TensorProto.DOUBLE,
    np.dtype(np.complex64): TensorProto.COMPLEX64,
    np.dtype(np.complex128): TensorProto.COMPLEX128,
}


def _onnx_dtype(dtype_like: npt.DTypeLike) -> int:
    dtype = np.dtype(dtype_like)
    if dtype.kind in "OUS":
        return int(TensorProto.STRING)
    try:
        return int(_NP_TO_ONNX[dtype.newbyteorder("=")])
    except KeyError:
        raise TypeError("numpy dtype %s has no ONNX tensor type" % dtype) from None


def _session_kwargs(kwargs: Dict[str, Any]) -> Dict[str, Any]:
    return {k: kwargs[k] for k in ("threads", "max_memory") if k in kwargs}


class OnnxrunBackendRep(BackendRep):
    """A prepared model: run(inputs) with a list (in get_inputs() order) or a dict by name;
    returns the outputs as a namedtuple that can also be indexed by output name."""

    def __init__(self, session: InferenceSession) -> None:
        self.session = session
        self._input_names = [i.name for i in session.get_inputs()]
        self._outputs = namedtupledict("Outputs", [o.name for o in session.get_outputs()])

    def run(self, inputs: Any, **kwargs: Any) -> Tuple[Any, ...]:
        if isinstance(inputs, dict):
            feed = inputs
        else:
            if isinstance(inputs, np.ndarray):
                inputs = [inputs]
            inputs = list(inputs)
            if len(inputs) != len(self._input_names):
                raise ValueError("the model has %d inputs to feed (%s), got %d arrays"
                                 % (len(self._input_names), ", ".join(self._input_names), len(inputs)))
            feed = dict(zip(self._input_names, inputs))
        outputs: Tuple[Any, ...] = self._outputs(*self.session.run(None, feed))
        return outputs


class OnnxrunBackend(Backend):
    @classmethod
    def supports_device(cls, device: str) -> bool:
        try:
            return bool(Device(device).type == DeviceType.CPU)
        except (AttributeError, ValueError):
            return False

    @classmethod
    def _session(cls, model: Any, device: str, **kwargs: Any) -> InferenceSession:
        if not cls.supports_device(device):
            raise RuntimeError("onnxrun runs on the CPU only, not on %r" % (device,))
        data = model if isinstance(model, (bytes, bytearray)) else model.SerializeToString()
        return InferenceSession(data, **_session_kwargs(kwargs))

    @classmethod
    def is_compatible(cls, model: Any, device: str = "CPU", **kwargs: Any) -> bool:
        """False when onnxrun cannot run the model because something in it is unsupported
        (its message says what); other errors are left to prepare to report."""
        if not cls.supports_device(device):
            return False
        try:
            cls._session(model, device, **kwargs)
        except Unsupported:
            return False
        except Exception:
            return True
        return True

    @classmethod
    def prepare(cls, model: Any, device: str = "CPU", **kwargs: Any) -> OnnxrunBackendRep:
        """Checks the model with onnx.checker (as every ONNX backend does), loads it into
        onnxrun and returns an OnnxrunBackendRep. kwargs: threads, max_memory."""
        super().prepare(model, device, **kwargs)
        return OnnxrunBackendRep(cls._session(model, device, **kwargs))

    @classmethod
    def run_model(cls, model: Any, inputs: Any, device: str = "CPU", **kwargs: Any) -> Tuple[Any, ...]:
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: Any, inputs: Any, device: str = "CPU",
                 outputs_info: Optional[Sequence[Tuple[Any, Any]]] = None, **kwargs: Any) -> Tuple[Any, ...]:
        """Runs one node: builds a one-node model (inputs typed from the arrays, outputs from
        outputs_info when given), opset kwargs['opset_version'] or onnx's current one."""
        super().run_node(node, inputs, device=device, outputs_info=outputs_info, **kwargs)
        present = [name for name in node.input if name]
        if isinstance(inputs, dict):
            feed = {name: np.asarray(inputs[name]) for name in present}
        else:
            arrays = list(inputs)
            if len(arrays) != len(present):
                raise ValueError("node %r has %d inputs, got %d arrays"
                                 % (node.name or node.op_type, len(present), len(arrays)))
            feed = {name: np.asarray(a) for name, a in zip(present, arrays)}
        graph_inputs = [helper.make_tensor_value_info(name, _onnx_dtype(a.dtype), a.shape)
                        for name, a in feed.items()]
        outputs = [name for name in node.output if name]
        graph_outputs = []
        for i, name in enumerate(outputs):
            if outputs_info is not None and i < len(outputs_info):
                dtype, shape = outputs_info[i]
                graph_outputs.append(helper.make_tensor_value_info(name, _onnx_dtype(dtype), shape))
            else:
                # The type is left for onnxrun to infer.
                graph_outputs.append(helper.make_empty_tensor_value_info(name))
        graph = helper.make_graph([node], "run_node_" + (node.name or node.op_type),
                                  graph_inputs, graph_outputs)
        opset = kwargs.get("opset_version") or onnx.defs.onnx_opset_version()
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid(node.domain or "", opset)])
        session = cls._session(model, device, **kwargs)
        result: Tuple[Any, ...] = namedtupledict("Outputs", outputs)(*session.run(outputs, feed))
        return result


prepare = OnnxrunBackend.prepare
run_model = OnnxrunBackend.run_model
run_node = OnnxrunBackend.run_node
supports_device = OnnxrunBackend.supports_device
is_compatible = OnnxrunBackend.is_compatible
