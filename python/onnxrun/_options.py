"""ONNX Runtime's option objects and module-level settings: SessionOptions, RunOptions, the
enums, the default logger severity. What each option does in onnxrun is in docs/python.md
(options that have no meaning here are accepted and listed there as no-ops)."""
from __future__ import annotations

import enum
from typing import Dict, List, Optional, Tuple, Union

from . import _onnxrun
from ._onnxrun import InvalidArgument


class GraphOptimizationLevel(enum.IntEnum):
    """ONNX Runtime's levels, accepted for source compatibility. onnxrun has no graph rewriter:
    every level runs the graph as written (its kernels are chosen per node at load)."""
    ORT_DISABLE_ALL = 0
    ORT_ENABLE_BASIC = 1
    ORT_ENABLE_EXTENDED = 2
    ORT_ENABLE_ALL = 99


class ExecutionMode(enum.IntEnum):
    """ONNX Runtime's execution modes, accepted as no-ops: onnxrun runs nodes one after
    another and parallelizes inside each node."""
    ORT_SEQUENTIAL = 0
    ORT_PARALLEL = 1


class ExecutionOrder(enum.IntEnum):
    """ONNX Runtime's node orders, accepted as no-ops: onnxrun always runs the graph in its
    topological order (ties broken by file order)."""
    DEFAULT = 0
    PRIORITY_BASED = 1
    MEMORY_EFFICIENT = 2


# ONNX Runtime's severities: 0 verbose, 1 info, 2 warning, 3 error, 4 fatal. Warnings the
# library logs while loading a model reach Python's warnings module while the effective
# level is 2 or lower.
_WARNING = 2
_default_severity = _WARNING

# Session config keys onnxrun reads; every other key is stored and otherwise ignored.
ALLOW_NEWER_OPSET_KEY = "onnxrun.allow_newer_opset"


def _check_severity(level: int, what: str) -> int:
    if isinstance(level, bool) or not isinstance(level, int) or not -1 <= level <= 4:
        raise ValueError("%s must be an int from 0 (verbose) to 4 (fatal), not %r" % (what, level))
    return level


def set_default_logger_severity(severity: int) -> None:
    """Like onnxruntime's: sessions whose options do not set log_severity_level use it; 3 or
    more silences the load warnings (onnxrun.ModelWarning)."""
    global _default_severity
    _default_severity = _check_severity(severity, "severity")
    if _default_severity < 0:
        _default_severity = _WARNING


def set_default_logger_verbosity(verbosity: int) -> None:
    """Accepted as a no-op: onnxrun has no verbose log."""
    if isinstance(verbosity, bool) or not isinstance(verbosity, int):
        raise TypeError("verbosity must be an int")


def _warnings_enabled(level: int) -> bool:
    return (level if level >= 0 else _default_severity) <= _WARNING


class SessionOptions:
    """onnxruntime.SessionOptions. What maps to onnxrun: intra_op_num_threads (threads per
    run, 0: all online cores), enable_profiling and profile_file_prefix (end_profiling()),
    log_severity_level (3 or more silences load warnings; -1: the default logger's),
    add_free_dimension_override_by_name (binds a symbolic dim), and onnxrun's own max_memory
    and allow_newer_opset. The other attributes are accepted and change nothing (see
    docs/python.md). Setting an attribute that does not exist raises AttributeError."""
    __slots__ = ("intra_op_num_threads", "inter_op_num_threads", "graph_optimization_level",
                 "execution_mode", "execution_order", "enable_mem_pattern", "enable_mem_reuse",
                 "enable_cpu_mem_arena", "enable_profiling", "profile_file_prefix",
                 "optimized_model_filepath", "log_severity_level", "log_verbosity_level",
                 "logid", "use_deterministic_compute", "max_memory", "allow_newer_opset",
                 "_config", "_dims")

    def __init__(self) -> None:
        self.intra_op_num_threads: int = 0
        self.inter_op_num_threads: int = 0
        self.graph_optimization_level: GraphOptimizationLevel = GraphOptimizationLevel.ORT_ENABLE_ALL
        self.execution_mode: ExecutionMode = ExecutionMode.ORT_SEQUENTIAL
        self.execution_order: ExecutionOrder = ExecutionOrder.DEFAULT
        self.enable_mem_pattern: bool = True
        self.enable_mem_reuse: bool = True
        self.enable_cpu_mem_arena: bool = True
        self.enable_profiling: bool = False
        self.profile_file_prefix: str = "onnxrun_profile"
        self.optimized_model_filepath: str = ""
        self.log_severity_level: int = -1
        self.log_verbosity_level: int = 0
        self.logid: str = ""
        self.use_deterministic_compute: bool = False
        self.max_memory: Union[int, str, None] = None
        self.allow_newer_opset: bool = False
        self._config: Dict[str, str] = {}
        self._dims: List[Tuple[str, int]] = []

    def add_session_config_entry(self, key: str, value: str) -> None:
        """Stores a config entry. onnxrun reads "onnxrun.allow_newer_opset" ("1": allow);
        other keys (ORT's "session.*") are kept and change nothing."""
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError("config keys and values are str")
        self._config[key] = value

    def get_session_config_entry(self, key: str) -> str:
        try:
            return self._config[key]
        except KeyError:
            raise InvalidArgument("SessionOptions has no config entry %r" % key) from None

    def add_free_dimension_override_by_name(self, dim_name: str, dim_value: int) -> None:
        """Binds the symbolic dim dim_name to dim_value in sessions made with these options
        (inputs must then agree with it)."""
        if not isinstance(dim_name, str):
            raise TypeError("dim_name must be a str")
        if isinstance(dim_value, bool) or not isinstance(dim_value, int) or dim_value < 0:
            raise ValueError("dim_value must be an int >= 0, not %r" % (dim_value,))
        self._dims.append((dim_name, dim_value))

    def disable_per_session_threads(self) -> None:
        """Accepted as a no-op: onnxrun has no process-wide thread pool to switch to; each
        session keeps one pool shared by its concurrent runs."""

    def register_custom_ops_library(self, library_path: str) -> None:
        """ONNX Runtime custom-op libraries cannot be loaded into onnxrun (its custom ops are
        registered through the C API, onnxrun_env_register_op): raises Unsupported."""
        raise _onnxrun.Unsupported("cannot load the ONNX Runtime custom-op library %r: onnxrun "
                                   "registers custom ops through its C API (onnxrun_env_register_op)"
                                   % (library_path,))

    def _allows_newer_opset(self) -> bool:
        return bool(self.allow_newer_opset) or self._config.get(ALLOW_NEWER_OPSET_KEY) == "1"


class RunOptions(_onnxrun.RunControl):
    """onnxruntime.RunOptions. terminate: set True (from any thread) to stop the runs using
    these options, which raise onnxrun.Cancelled (an ONNX Runtime Fail), and to refuse new
    ones until it is set False again. onnxrun_deadline_s (onnxrun's own, not in ONNX
    Runtime): a run still going that many seconds after it started stops the same way (0:
    no deadline). log_severity_level, log_verbosity_level, logid and
    only_execute_path_to_fetches are accepted no-ops (a run logs nothing; every output's
    path is what runs anyway)."""
    __slots__ = ("log_severity_level", "log_verbosity_level", "logid",
                 "only_execute_path_to_fetches", "_config")

    def __init__(self) -> None:
        super().__init__()
        self.log_severity_level: int = -1
        self.log_verbosity_level: int = 0
        self.logid: str = ""
        self.only_execute_path_to_fetches: bool = False
        self._config: Dict[str, str] = {}

    def add_run_config_entry(self, key: str, value: str) -> None:
        """Stores a run config entry (kept, no effect)."""
        if not isinstance(key, str) or not isinstance(value, str):
            raise TypeError("config keys and values are str")
        self._config[key] = value

    def get_run_config_entry(self, key: str) -> str:
        try:
            return self._config[key]
        except KeyError:
            raise InvalidArgument("RunOptions has no config entry %r" % key) from None
