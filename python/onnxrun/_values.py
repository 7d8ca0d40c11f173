"""OrtValue and IOBinding with ONNX Runtime's API, over numpy arrays and the C library's
caller-owned outputs: an output bound to an array is computed straight into that array's
memory (onnxrun_session_set_output), with no copy."""
from __future__ import annotations

import ctypes
from typing import TYPE_CHECKING, Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _onnxrun
from ._onnxrun import InvalidArgument

if TYPE_CHECKING:
    from ._session import InferenceSession

Array = npt.NDArray[Any]
DTypeLike = npt.DTypeLike

# numpy dtype -> ONNX TensorProto data type (what OrtValue.element_type() returns).
_ONNX_TYPE = {
    np.dtype(np.float32): 1, np.dtype(np.uint8): 2, np.dtype(np.int8): 3, np.dtype(np.uint16): 4,
    np.dtype(np.int16): 5, np.dtype(np.int32): 6, np.dtype(np.int64): 7, np.dtype(np.object_): 8,
    np.dtype(np.bool_): 9, np.dtype(np.float16): 10, np.dtype(np.float64): 11,
    np.dtype(np.uint32): 12, np.dtype(np.uint64): 13, np.dtype(np.complex64): 14,
    np.dtype(np.complex128): 15,
}


def _check_cpu(device_type: str, device_id: int) -> None:
    if str(device_type).lower() != "cpu" or device_id != 0:
        raise InvalidArgument("onnxrun runs on the CPU only: device %r %r is not available"
                              % (device_type, device_id))


def _array_at(buffer_ptr: int, element_type: DTypeLike, shape: Sequence[int]) -> Array:
    """A numpy array over caller memory at buffer_ptr (no copy), as ORT's raw-pointer bindings
    take it. The caller keeps the memory alive and large enough."""
    dtype = np.dtype(element_type)
    dims = tuple(int(d) for d in shape)
    nbytes = int(np.prod(dims, dtype=np.int64)) * dtype.itemsize
    if not buffer_ptr and nbytes:
        raise InvalidArgument("buffer_ptr is NULL")
    raw: Any = (ctypes.c_char * nbytes).from_address(buffer_ptr) if nbytes else bytearray()
    array: Array = np.frombuffer(raw, dtype=dtype).reshape(dims)
    return array


class OrtValue:
    """A tensor in CPU memory: a numpy array, shared, not copied. numpy() returns that array
    (writes to it are seen by the OrtValue and the other way round)."""
    __slots__ = ("_array",)

    def __init__(self, array: Array) -> None:
        if not isinstance(array, np.ndarray):
            raise TypeError("OrtValue wraps a numpy array, not %s" % type(array).__name__)
        self._array = array

    @staticmethod
    def ortvalue_from_numpy(numpy_obj: Array, device_type: str = "cpu", device_id: int = 0) -> OrtValue:
        """Wraps numpy_obj without a copy when it is C-contiguous (otherwise a C-contiguous
        copy, as ONNX Runtime makes one)."""
        _check_cpu(device_type, device_id)
        if not isinstance(numpy_obj, np.ndarray):
            raise TypeError("ortvalue_from_numpy takes a numpy array, not %s" % type(numpy_obj).__name__)
        return OrtValue(np.ascontiguousarray(numpy_obj))

    @staticmethod
    def ortvalue_from_shape_and_type(shape: Sequence[int], element_type: DTypeLike = np.float32,
                                     device_type: str = "cpu", device_id: int = 0) -> OrtValue:
        """A new zero-filled tensor (e.g. to bind as an output with bind_ortvalue_output)."""
        _check_cpu(device_type, device_id)
        return OrtValue(np.zeros(tuple(int(d) for d in shape), dtype=element_type))

    def numpy(self) -> Array:
        return self._array

    def data_ptr(self) -> int:
        return int(self._array.ctypes.data)

    def shape(self) -> List[int]:
        return list(self._array.shape)

    def data_type(self) -> str:
        code = self.element_type()
        return "tensor(%s)" % _onnxrun.dtype_name(code)

    def element_type(self) -> int:
        """The ONNX TensorProto data type code of the elements."""
        kind = self._array.dtype
        if kind.kind in "US":
            return 8
        return _ONNX_TYPE.get(kind, 0)

    def device_name(self) -> str:
        return "cpu"

    def is_tensor(self) -> bool:
        return True

    def is_sparse_tensor(self) -> bool:
        return False

    def has_value(self) -> bool:
        return True

    def update_inplace(self, np_arr: Array) -> None:
        """Copies np_arr (same shape and dtype) into this value's memory."""
        src = np.asarray(np_arr)
        if src.shape != self._array.shape or src.dtype != self._array.dtype:
            raise InvalidArgument("update_inplace needs a %s array of shape %s, got %s %s"
                                  % (self._array.dtype, self._array.shape, src.dtype, src.shape))
        np.copyto(self._array, src)

    def __repr__(self) -> str:
        return "OrtValue(%s, shape=%s)" % (self.data_type(), self.shape())


class IOBinding:
    """onnxruntime.IOBinding for a session: inputs bound once and outputs written into bound
    arrays (no copy) by InferenceSession.run_with_iobinding."""

    def __init__(self, session: InferenceSession) -> None:
        self._session = session
        self._inputs: Dict[str, Array] = {}
        # Bound outputs in binding order: name -> the array written in place, or None for an
        # output onnxrun allocates (bound by name).
        self._outputs: Dict[str, Optional[Array]] = {}
        self._results: Optional[List[Array]] = None

    # --- inputs ---

    def bind_cpu_input(self, name: str, arr_on_cpu: Array) -> None:
        """Binds an input to a numpy array (read in place when C-contiguous)."""
        self._inputs[name] = np.asarray(arr_on_cpu) if not isinstance(arr_on_cpu, np.ndarray) else arr_on_cpu

    def bind_input(self, name: str, device_type: str, device_id: int, element_type: DTypeLike,
                   shape: Sequence[int], buffer_ptr: int) -> None:
        """Binds an input to raw CPU memory (ONNX Runtime's form)."""
        _check_cpu(device_type, device_id)
        self._inputs[name] = _array_at(buffer_ptr, element_type, shape)

    def bind_ortvalue_input(self, name: str, ortvalue: OrtValue) -> None:
        self._inputs[name] = ortvalue.numpy()

    def clear_binding_inputs(self) -> None:
        self._inputs.clear()

    # --- outputs ---

    def bind_output(self, name: str, device_type: str = "cpu", device_id: int = 0,
                    element_type: Optional[DTypeLike] = None, shape: Optional[Sequence[int]] = None,
                    buffer_ptr: Optional[int] = None) -> None:
        """Without buffer_ptr: onnxrun allocates the output (by name). With element_type, shape
        and buffer_ptr: the output is computed straight into that memory."""
        _check_cpu(device_type, device_id)
        if buffer_ptr is None:
            self._outputs[name] = None
            return
        if element_type is None or shape is None:
            raise InvalidArgument("bind_output with buffer_ptr also needs element_type and shape")
        self._outputs[name] = _array_at(buffer_ptr, element_type, shape)

    def bind_ortvalue_output(self, name: str, ortvalue: OrtValue) -> None:
        """The output is computed straight into the OrtValue's array."""
        self._outputs[name] = ortvalue.numpy()

    def clear_binding_outputs(self) -> None:
        self._outputs.clear()
        self._results = None

    def synchronize_inputs(self) -> None:
        """No-op: CPU memory needs no synchronization."""

    def synchronize_outputs(self) -> None:
        """No-op: CPU memory needs no synchronization."""

    # --- results ---

    def _bound(self) -> Tuple[Dict[str, Array], List[str], Dict[str, Array]]:
        placed = {name: arr for name, arr in self._outputs.items() if arr is not None}
        return self._inputs, list(self._outputs), placed

    def _set_results(self, results: List[Array]) -> None:
        self._results = results

    def get_outputs(self) -> List[OrtValue]:
        """The outputs of the last run_with_iobinding, in binding order: the bound arrays
        themselves for outputs bound to memory."""
        if self._results is None:
            raise InvalidArgument("no outputs: run_with_iobinding has not run with this binding")
        return [OrtValue(a) for a in self._results]

    def copy_outputs_to_cpu(self) -> List[Array]:
        """Copies of the outputs of the last run_with_iobinding, in binding order."""
        return [v.numpy().copy() for v in self.get_outputs()]


def arrays_of(values: Dict[str, Union[OrtValue, Array]]) -> Dict[str, Array]:
    """The feed of run_with_ort_values as arrays."""
    return {name: (v.numpy() if isinstance(v, OrtValue) else v) for name, v in values.items()}
