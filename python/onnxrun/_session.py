"""InferenceSession with onnxruntime.InferenceSession's shape, over onnxrun._onnxrun.Session."""
from __future__ import annotations

import json
import os
import pickle
import threading
import time
import warnings
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

import numpy as np
import numpy.typing as npt

from . import _onnxrun
from ._common import parse_memory
from ._onnxrun import InvalidArgument
from ._options import (
    GraphOptimizationLevel,
    RunOptions,
    SessionOptions,
    _warnings_enabled,
)
from ._values import IOBinding, OrtValue, arrays_of

Array = npt.NDArray[Any]
Shape = Optional[List[Union[int, str, None]]]
PathOrBytes = Union[str, "os.PathLike[str]", bytes, bytearray, memoryview]

_CPU = "CPUExecutionProvider"

__all__ = ["GraphOptimizationLevel", "InferenceSession", "ModelMetadata", "NodeArg", "NodeInfo",
           "get_all_providers", "get_available_providers", "get_device", "get_build_info",
           "get_version_string", "set_seed", "enable_telemetry_events", "disable_telemetry_events"]


def get_available_providers() -> List[str]:
    """Like onnxruntime's: onnxrun runs on the CPU only."""
    return [_CPU]


def get_all_providers() -> List[str]:
    return [_CPU]


def get_device() -> str:
    return "CPU"


def get_version_string() -> str:
    return _onnxrun.version()


def get_build_info() -> str:
    return "onnxrun %s (C library, CPU)" % _onnxrun.version()


def set_seed(seed: int) -> None:
    """Accepted as a no-op: onnxrun's ops use no random numbers."""


def enable_telemetry_events() -> None:
    """Accepted as a no-op: onnxrun sends nothing anywhere."""


def disable_telemetry_events() -> None:
    """Accepted as a no-op: onnxrun sends nothing anywhere."""


class NodeArg:
    """An input or output: .name, .type ('tensor(float)', ...) and .shape, a list of ints
    (known dims), strs (symbolic dims) and None (unknown dims); None when even the rank is
    unknown."""
    __slots__ = ("name", "type", "shape")

    def __init__(self, name: str, dtype_code: int, shape: Shape) -> None:
        self.name = name
        self.type = "tensor(%s)" % _onnxrun.dtype_name(dtype_code)
        self.shape = shape

    def __repr__(self) -> str:
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)

    def __eq__(self, other: object) -> bool:
        return (isinstance(other, NodeArg) and self.name == other.name
                and self.type == other.type and self.shape == other.shape)

    __hash__ = None  # type: ignore[assignment]


class NodeInfo:
    """A node in execution order: name, op_type, domain ('' for ai.onnx), since_version (of
    the implementation onnxrun chose), inputs and outputs (value names, '' when absent)."""
    __slots__ = ("name", "op_type", "domain", "since_version", "inputs", "outputs")

    def __init__(self, name: str, op_type: str, domain: str, since_version: int,
                 inputs: List[str], outputs: List[str]) -> None:
        self.name, self.op_type, self.domain = name, op_type, domain
        self.since_version, self.inputs, self.outputs = since_version, inputs, outputs

    def __repr__(self) -> str:
        return "NodeInfo(name=%r, op_type=%r, domain=%r, since_version=%r, inputs=%r, outputs=%r)" % (
            self.name, self.op_type, self.domain, self.since_version, self.inputs, self.outputs)


class ModelMetadata:
    """onnxruntime.ModelMetadata: producer_name, graph_name, graph_description (the graph's
    doc string), domain, description (the model's doc string), version (model_version) and
    custom_metadata_map (metadata_props; a later entry wins over an earlier one with the same
    key). onnxrun adds producer_version, ir_version and opset_import ({domain: version}, ''
    for ai.onnx)."""
    __slots__ = ("producer_name", "producer_version", "domain", "description", "version",
                 "graph_name", "graph_description", "custom_metadata_map", "ir_version",
                 "opset_import")

    def __init__(self, producer_name: str, producer_version: str, domain: str, description: str,
                 version: int, graph_name: str, graph_description: str,
                 custom_metadata_map: Dict[str, str], ir_version: int,
                 opset_import: Dict[str, int]) -> None:
        self.producer_name, self.producer_version = producer_name, producer_version
        self.domain, self.description, self.version = domain, description, version
        self.graph_name, self.graph_description = graph_name, graph_description
        self.custom_metadata_map = custom_metadata_map
        self.ir_version, self.opset_import = ir_version, opset_import

    def __repr__(self) -> str:
        return "ModelMetadata(%s)" % ", ".join("%s=%r" % (k, getattr(self, k)) for k in self.__slots__)


def _default_threads() -> int:
    # Like the CLI: every online core.
    return os.cpu_count() or 1


def _check_providers(providers: Optional[Sequence[Any]]) -> None:
    if providers is None:
        return
    if isinstance(providers, str):
        raise TypeError("providers must be a list of provider names, not a str")
    for p in providers:
        name = p[0] if isinstance(p, tuple) else p
        if name != _CPU:
            warnings.warn("onnxrun runs on the CPU only; provider %r is not available, using %s"
                          % (name, _CPU), RuntimeWarning, stacklevel=3)


def _restore(state: Dict[str, Any]) -> InferenceSession:
    """Unpickles a session: loads the pickled model bytes with the pickled options."""
    model = state["model"]
    if isinstance(model, pickle.PickleBuffer):
        model = model.raw()
    return InferenceSession(model, state["threads"], state["max_memory"],
                            sess_options=state["sess_options"], providers=state["providers"],
                            base_dir=state["base_dir"], allow_newer_opset=state["allow_newer_opset"])


class InferenceSession:
    """A loaded model ready to run, with onnxruntime.InferenceSession's methods.

    InferenceSession(path_or_bytes, threads=None, max_memory=None)
      path_or_bytes: a file path (external data is read next to it) or the serialized model
        (bytes, bytearray, memoryview; external data then needs base_dir=).
      threads: threads per run; None: sess_options.intra_op_num_threads or all online cores.
      max_memory: cap on weight and run-time tensor bytes (int or "512M"); None: 8G.
      allow_newer_opset: load a model whose ai.onnx opset is newer than onnxrun knows
        (refused by default; also SessionOptions.allow_newer_opset).
    Also accepted, for code written for ONNX Runtime: sess_options (a SessionOptions, also as
    the second positional argument), providers (only CPUExecutionProvider exists; others warn)
    and provider_options (ignored).

    Raises onnxrun.InvalidModel, Unsupported, FileError, LimitExceeded, OutOfMemory... with
    the library's message. Runs on one session from several threads proceed in parallel (a
    library session per concurrent run over the one loaded model; the GIL is released). A
    session pickles: the model bytes and options travel, and the session is loaded again
    where it is unpickled.
    """

    def __init__(self, path_or_bytes: PathOrBytes, threads: Union[int, SessionOptions, None] = None,
                 max_memory: Union[int, str, Sequence[Any], None] = None, *,
                 sess_options: Optional[SessionOptions] = None,
                 providers: Optional[Sequence[Any]] = None, provider_options: Optional[Sequence[Any]] = None,
                 base_dir: Union[str, "os.PathLike[str]", None] = None,
                 allow_newer_opset: bool = False) -> None:
        # ONNX Runtime's positional order is (path_or_bytes, sess_options, providers).
        if isinstance(threads, SessionOptions):
            if sess_options is not None:
                raise TypeError("sess_options given twice")
            sess_options, threads = threads, None
        if isinstance(max_memory, (list, tuple)):
            if providers is not None:
                raise TypeError("providers given twice")
            providers, max_memory = max_memory, None
        _check_providers(providers)
        if max_memory is not None and not isinstance(max_memory, (int, str)):
            raise TypeError("max_memory must be an int or a string such as '512M'")
        # What pickling re-creates the session from: the arguments as given.
        self._init_threads = threads
        self._init_max_memory = max_memory
        self._providers = list(providers) if providers is not None else None
        self._sess_options = sess_options
        self._allow_newer_opset = bool(allow_newer_opset)
        self._base_dir = None if base_dir is None else os.fspath(base_dir)

        if threads is None and sess_options is not None and sess_options.intra_op_num_threads:
            threads = sess_options.intra_op_num_threads
        if max_memory is None and sess_options is not None:
            max_memory = sess_options.max_memory
        if threads is None:
            threads = _default_threads()
        if isinstance(threads, bool) or not isinstance(threads, int):
            raise TypeError("threads must be an int, not %s" % type(threads).__name__)
        if threads < 1:
            raise InvalidArgument("threads must be >= 1, got %d" % threads)
        cap = parse_memory(max_memory)
        allow = self._allow_newer_opset or (sess_options is not None and sess_options._allows_newer_opset())
        severity = sess_options.log_severity_level if sess_options is not None else -1
        source: Union[str, bytes, bytearray, memoryview]
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            source = path_or_bytes
            self._model_path: Optional[str] = None
            self._model_bytes: Optional[Union[bytes, bytearray, memoryview]] = path_or_bytes
        else:
            source = os.fspath(path_or_bytes)
            self._model_path = source
            self._model_bytes = None
        self._sess = _onnxrun.Session(source, threads, cap, self._base_dir, allow,
                                      _warnings_enabled(severity))
        self._run = self._sess.run
        self._inputs = [NodeArg(*t) for t in self._sess.inputs()]
        self._outputs = [NodeArg(*t) for t in self._sess.outputs()]
        if sess_options is not None:
            for name, value in sess_options._dims:
                self._sess.bind_dim(name, value)
        self._profile_prefix = "onnxrun_profile"
        self._profile_start_ns = 0
        if sess_options is not None and sess_options.enable_profiling:
            self._start_profiling(sess_options.profile_file_prefix)

    # --- ONNX Runtime's API ---

    def get_inputs(self) -> List[NodeArg]:
        """The inputs to feed (graph inputs without an initializer), in graph order."""
        return list(self._inputs)

    def get_outputs(self) -> List[NodeArg]:
        return list(self._outputs)

    def get_overridable_initializers(self) -> List[NodeArg]:
        """Initializers that are also graph inputs: onnxrun's loader does not list them
        separately, so this is empty (they can still be fed by name)."""
        return []

    def get_modelmeta(self) -> ModelMetadata:
        (producer, producer_version, domain, doc, version, graph_name, graph_doc,
         props) = self._sess.metadata()
        ir_version, opsets = self._sess.model_info()
        return ModelMetadata(producer, producer_version, domain, doc, version, graph_name, graph_doc,
                             dict(props), ir_version, dict(opsets))

    def get_providers(self) -> List[str]:
        return [_CPU]

    def get_provider_options(self) -> Dict[str, Dict[str, str]]:
        return {_CPU: {}}

    def set_providers(self, providers: Optional[Sequence[Any]] = None,
                      provider_options: Optional[Sequence[Any]] = None) -> None:
        """Only CPUExecutionProvider exists; other names warn."""
        _check_providers(providers)

    def disable_fallback(self) -> None:
        """No-op: there is no other provider to fall back from."""

    def enable_fallback(self) -> None:
        """No-op: there is no other provider to fall back from."""

    def get_session_options(self) -> SessionOptions:
        opts = SessionOptions()
        if self._sess_options is not None:
            for name in SessionOptions.__slots__:
                setattr(opts, name, getattr(self._sess_options, name))
        opts.intra_op_num_threads = self._sess.threads
        opts.max_memory = self._sess.max_memory or None
        return opts

    def run(self, output_names: Optional[Sequence[str]], input_feed: Dict[str, Any],
            run_options: Optional[RunOptions] = None) -> List[Array]:
        """Runs the model. output_names: names of the outputs to return, in that order (None or
        empty: every output); input_feed: {input name: array}. An initializer that is also a
        graph input may be fed by name to override it for this run. run_options: a
        RunOptions (terminate, onnxrun_deadline_s). Returns a list of numpy arrays that own
        their memory."""
        if run_options is None:
            return self._run(output_names or None, input_feed)
        if not isinstance(run_options, RunOptions):
            raise TypeError("run_options must be an onnxrun.RunOptions, not %s" % type(run_options).__name__)
        return self._run(output_names or None, input_feed, run_options)

    def run_with_ort_values(self, output_names: Optional[Sequence[str]],
                            input_dict_ort_values: Dict[str, Union[OrtValue, Array]],
                            run_options: Optional[RunOptions] = None) -> List[OrtValue]:
        """run() with OrtValues in and out."""
        return [OrtValue(a) for a in self.run(output_names, arrays_of(input_dict_ort_values), run_options)]

    def io_binding(self) -> IOBinding:
        return IOBinding(self)

    def run_with_iobinding(self, iobinding: IOBinding, run_options: Optional[RunOptions] = None) -> None:
        """Runs with the binding's inputs; outputs bound to memory are computed there (no
        copy), the others are kept for iobinding.get_outputs()."""
        if not isinstance(iobinding, IOBinding):
            raise TypeError("run_with_iobinding takes the IOBinding from io_binding()")
        if run_options is not None and not isinstance(run_options, RunOptions):
            raise TypeError("run_options must be an onnxrun.RunOptions, not %s" % type(run_options).__name__)
        feed, names, placed = iobinding._bound()
        if not names:
            raise InvalidArgument("run_with_iobinding: no output is bound")
        # The library writes bound outputs while it reads the inputs: they must not overlap.
        for out_name, out in placed.items():
            for in_name, value in feed.items():
                if isinstance(value, np.ndarray) and np.may_share_memory(out, value):
                    raise InvalidArgument("output %r is bound to memory that input %r also uses"
                                          % (out_name, in_name))
        iobinding._set_results(self._run(names, feed, run_options, placed))

    def end_profiling(self) -> str:
        """Stops profiling and writes what it measured in ONNX Runtime's JSON trace format
        (Chrome's trace events: a "model_run" event per run and a "<node>_kernel_time" event
        per node and run) to <profile_file_prefix>_<date>_<time>.json; returns that path, or
        "" when profiling was off."""
        runs = self._sess.profile()
        if not self._profile_start_ns:
            return ""
        self._sess.set_profiling(False)
        self._profile_start_ns = 0
        nodes = self.get_nodes()
        pid = os.getpid()
        tid = threading.get_ident() & 0x7FFFFFFF
        events: List[Dict[str, Any]] = []
        for start_ns, dur_ns, node_ns in runs:
            events.append({"cat": "Session", "pid": pid, "tid": tid, "dur": int(dur_ns // 1000),
                           "ts": int(start_ns // 1000), "ph": "X", "name": "model_run", "args": {}})
            at = start_ns
            for i, ns in enumerate(node_ns):
                node = nodes[i]
                events.append({"cat": "Node", "pid": pid, "tid": tid, "dur": int(ns // 1000),
                               "ts": int(at // 1000), "ph": "X",
                               "name": "%s_kernel_time" % (node.name or "#%d" % i),
                               "args": {"op_name": node.op_type, "provider": _CPU}})
                at += ns
        path = "%s_%s.json" % (self._profile_prefix, time.strftime("%Y-%m-%d_%H-%M-%S"))
        with open(path, "w", encoding="utf-8") as f:
            json.dump(events, f, indent=0)
        return path

    def get_profiling_start_time_ns(self) -> int:
        return self._profile_start_ns

    # --- onnxrun's additions ---

    @property
    def threads(self) -> int:
        return int(self._sess.threads)

    @property
    def max_memory(self) -> Optional[int]:
        """The memory cap in bytes, or None for the library's default."""
        return int(self._sess.max_memory) or None

    def get_nodes(self) -> List[NodeInfo]:
        """The nodes in execution order (NodeInfo)."""
        return [NodeInfo(*t) for t in self._sess.nodes()]

    def get_value_info(self, name: str) -> NodeArg:
        """Type and shape of any value (input, initializer, intermediate, output) as inferred at
        load, as a NodeArg."""
        return NodeArg(*self._sess.value_info(name))

    def _start_profiling(self, prefix: str) -> None:
        self._profile_prefix = prefix or "onnxrun_profile"
        self._profile_start_ns = time.time_ns()
        self._sess.set_profiling(True)

    def _model_bytes_for_pickle(self) -> bytes:
        if self._model_bytes is not None:
            data = self._model_bytes
            return data if isinstance(data, bytes) else bytes(data)
        assert self._model_path is not None
        with open(self._model_path, "rb") as f:
            return f.read()

    def __reduce_ex__(self, protocol: Any) -> Tuple[Any, Tuple[Dict[str, Any]]]:
        """Pickles the model bytes and the options; unpickling loads the model again (from
        the unpickled bytes object, without another copy). External data is read from
        base_dir (or, for a session made from a path, the model's folder) where it is
        unpickled."""
        model: Union[bytes, pickle.PickleBuffer] = self._model_bytes_for_pickle()
        if isinstance(protocol, int) and protocol >= 5:
            model = pickle.PickleBuffer(model)  # out-of-band capable: no copy into the stream
        base_dir = self._base_dir
        if base_dir is None and self._model_path is not None:
            base_dir = os.path.dirname(os.path.abspath(self._model_path))
        state = {"model": model, "threads": self._init_threads, "max_memory": self._init_max_memory,
                 "sess_options": self._sess_options, "providers": self._providers,
                 "base_dir": base_dir, "allow_newer_opset": self._allow_newer_opset}
        return _restore, (state,)

    def __repr__(self) -> str:
        return "<onnxrun.InferenceSession %s>" % (self._model_path or "(from bytes)")

