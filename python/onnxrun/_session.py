"""InferenceSession with onnxruntime.InferenceSession's shape, over onnxrun._onnxrun.Session."""
import enum
import os
import warnings

from . import _onnxrun
from ._common import parse_memory
from ._onnxrun import InvalidArgument

_CPU = "CPUExecutionProvider"


def get_available_providers():
    """Like onnxruntime's: onnxrun runs on the CPU only."""
    return [_CPU]


def get_all_providers():
    return [_CPU]


def get_device():
    return "CPU"


class GraphOptimizationLevel(enum.IntEnum):
    """ONNX Runtime's levels, accepted for source compatibility. onnxrun has no graph rewriter:
    every level runs the graph as written (its kernels are chosen per node at load)."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class SessionOptions:
    """The part of onnxruntime.SessionOptions that means something for onnxrun.

    intra_op_num_threads: threads for each run (0: all online cores, like the CLI).
    max_memory: onnxrun's memory cap (bytes or "512M"; None: the library's default, 8G).
    inter_op_num_threads, graph_optimization_level, log_severity_level: accepted so that
    ORT code runs unchanged; onnxrun runs nodes one after another, has no graph rewriter and
    reports load warnings through Python's warnings module, so they change nothing.
    Setting any other attribute raises AttributeError rather than being silently ignored.
    """
    __slots__ = ("intra_op_num_threads", "inter_op_num_threads", "graph_optimization_level",
                 "log_severity_level", "max_memory")

    def __init__(self):
        self.intra_op_num_threads = 0
        self.inter_op_num_threads = 0
        self.graph_optimization_level = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.log_severity_level = 2
        self.max_memory = None


class NodeArg:
    """An input or output: .name, .type ('tensor(float)', ...) and .shape, a list of ints
    (known dims), strs (symbolic dims) and None (unknown dims); None when even the rank is
    unknown."""
    __slots__ = ("name", "type", "shape")

    def __init__(self, name, dtype_code, shape):
        self.name = name
        self.type = "tensor(%s)" % _onnxrun.dtype_name(dtype_code)
        self.shape = shape

    def __repr__(self):
        return "NodeArg(name=%r, type=%r, shape=%r)" % (self.name, self.type, self.shape)

    def __eq__(self, other):
        return (isinstance(other, NodeArg) and self.name == other.name
                and self.type == other.type and self.shape == other.shape)

    __hash__ = None


class NodeInfo:
    """A node in execution order: name, op_type, domain ('' for ai.onnx), since_version (of
    the implementation onnxrun chose), inputs and outputs (value names, '' when absent)."""
    __slots__ = ("name", "op_type", "domain", "since_version", "inputs", "outputs")

    def __init__(self, name, op_type, domain, since_version, inputs, outputs):
        self.name, self.op_type, self.domain = name, op_type, domain
        self.since_version, self.inputs, self.outputs = since_version, inputs, outputs

    def __repr__(self):
        return "NodeInfo(name=%r, op_type=%r, domain=%r, since_version=%r, inputs=%r, outputs=%r)" % (
            self.name, self.op_type, self.domain, self.since_version, self.inputs, self.outputs)


class ModelMetadata:
    """What the C API tells about a model: ir_version and opset_import ({domain: version},
    '' for ai.onnx). ONNX Runtime's producer_name, graph_name, description, version and
    custom_metadata_map are not exposed by include/onnxrun.h, so they are not offered here."""
    __slots__ = ("ir_version", "opset_import")

    def __init__(self, ir_version, opset_import):
        self.ir_version = ir_version
        self.opset_import = opset_import

    def __repr__(self):
        return "ModelMetadata(ir_version=%r, opset_import=%r)" % (self.ir_version, self.opset_import)


def _default_threads():
    # Like the CLI: every online core.
    return os.cpu_count() or 1


def _check_providers(providers):
    if providers is None:
        return
    if isinstance(providers, str):
        raise TypeError("providers must be a list of provider names, not a str")
    for p in providers:
        name = p[0] if isinstance(p, tuple) else p
        if name != _CPU:
            warnings.warn("onnxrun runs on the CPU only; provider %r is not available, using %s"
                          % (name, _CPU), RuntimeWarning, stacklevel=3)


class InferenceSession:
    """A loaded model ready to run, with onnxruntime.InferenceSession's methods.

    InferenceSession(path_or_bytes, threads=None, max_memory=None)
      path_or_bytes: a file path (external data is read next to it) or the serialized model
        (bytes, bytearray, memoryview; external data then needs base_dir=).
      threads: threads per run; None: sess_options.intra_op_num_threads or all online cores.
      max_memory: cap on weight and run-time tensor bytes (int or "512M"); None: 8G.
    Also accepted, for code written for ONNX Runtime: sess_options (a SessionOptions, also as
    the second positional argument), providers (only CPUExecutionProvider exists; others warn)
    and provider_options (ignored).

    Raises onnxrun.InvalidModel, Unsupported, FileError, LimitExceeded, OutOfMemory... with
    the library's message. One session may be used from several threads: runs on one
    session take turns, runs on different sessions proceed in parallel (the GIL is released).
    """

    def __init__(self, path_or_bytes, threads=None, max_memory=None, *, sess_options=None,
                 providers=None, provider_options=None, base_dir=None):
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
        if isinstance(path_or_bytes, (bytes, bytearray, memoryview)):
            source = path_or_bytes
            self._model_path = None
        else:
            source = os.fspath(path_or_bytes)
            self._model_path = source
        self._sess = _onnxrun.Session(source, threads, cap,
                                      None if base_dir is None else os.fspath(base_dir))
        self._run = self._sess.run
        self._inputs = [NodeArg(*t) for t in self._sess.inputs()]
        self._outputs = [NodeArg(*t) for t in self._sess.outputs()]
        self._sess_options = sess_options

    # --- ONNX Runtime's API ---

    def get_inputs(self):
        """The inputs to feed (graph inputs without an initializer), in graph order."""
        return list(self._inputs)

    def get_outputs(self):
        return list(self._outputs)

    def get_modelmeta(self):
        ir_version, opsets = self._sess.model_info()
        return ModelMetadata(ir_version, dict(opsets))

    def get_providers(self):
        return [_CPU]

    def get_provider_options(self):
        return {_CPU: {}}

    def get_session_options(self):
        opts = SessionOptions()
        opts.intra_op_num_threads = self._sess.threads
        opts.max_memory = self._sess.max_memory or None
        return opts

    def run(self, output_names, input_feed, run_options=None):
        """Runs the model. output_names: names of the outputs to return, in that order (None or
        empty: every output); input_feed: {input name: array}. An initializer that is also a
        graph input may be fed by name to override it for this run. Returns a list of numpy
        arrays that own their memory."""
        if run_options is not None:
            raise TypeError("onnxrun has no run options; pass run_options=None")
        return self._run(output_names or None, input_feed)

    # --- onnxrun's additions ---

    @property
    def threads(self):
        return self._sess.threads

    @property
    def max_memory(self):
        """The memory cap in bytes, or None for the library's default."""
        return self._sess.max_memory or None

    def get_nodes(self):
        """The nodes in execution order (NodeInfo)."""
        return [NodeInfo(*t) for t in self._sess.nodes()]

    def get_value_info(self, name):
        """Type and shape of any value (input, initializer, intermediate, output) as inferred at
        load, as a NodeArg."""
        return NodeArg(*self._sess.value_info(name))

    def __repr__(self):
        return "<onnxrun.InferenceSession %s>" % (self._model_path or "(from bytes)")

