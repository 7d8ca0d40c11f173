"""Tensor files (.pb TensorProto, .npy), read and written by the C library like the CLI does."""
import os
from typing import Any, Tuple, Union

from . import _onnxrun
from ._common import parse_memory


def load_tensor(path: Union[str, "os.PathLike[str]"], *, return_name: bool = False,
                max_memory: Union[int, str, None] = None) -> Any:
    """Reads a tensor file: a serialized ONNX TensorProto (.pb, any dtype) or a NumPy .npy
    file (format 1.0-3.0, either byte order, C order), chosen by the extension as the CLI does.

    Returns a numpy array that owns its memory ((array, name) with return_name=True; name is
    the TensorProto's name, '' for .npy). Strings come back as an object array of str (bytes
    for elements that are not UTF-8), bfloat16 as onnxrun.bfloat16 when ml_dtypes is
    importable, otherwise as a uint16 array of the raw bits. max_memory caps the tensor's
    bytes (default 8G). Errors: FileError, InvalidInput, Unsupported, LimitExceeded, with the
    library's message naming the file."""
    array, name = _onnxrun.load_tensor(os.fspath(path), max_memory=parse_memory(max_memory))
    return (array, name) if return_name else array


def save_tensor(path: Union[str, "os.PathLike[str]"], array: Any, name: Any = None, *,
                bfloat16: bool = False) -> None:
    """Writes array to path: .pb (an ONNX TensorProto named `name`, raw_data; string_data for
    strings) or .npy (`name` is not stored), chosen by the extension, as the CLI's -o/--npy do.

    Any dtype onnxrun supports: bool, (u)int8..64, float16/32/64, complex64/128, strings
    (str/bytes/object arrays; .pb only), bfloat16 (.pb only: an ml_dtypes.bfloat16 array, or
    a uint16 array of raw bits with bfloat16=True). Non-contiguous arrays are copied once."""
    _onnxrun.save_tensor(os.fspath(path), array, "" if name is None else str(name),
                         bool(bfloat16))
