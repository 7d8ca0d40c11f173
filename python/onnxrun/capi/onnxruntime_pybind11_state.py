"""ONNX Runtime's exception classes. Each is onnxrun's own class or a parent of the onnxrun
classes raised where ONNX Runtime raises it, so `except` clauses written for ONNX Runtime
catch the same failures (docs/python.md, 'Errors'):

    InvalidArgument   is onnxrun.InvalidArgument (parent of InvalidInput: a wrong feed)
    Fail              parent of OutOfMemory, InvalidModel, Unsupported, LimitExceeded, Cancelled
    NoSuchFile        parent of FileError
    InvalidProtobuf   parent of InvalidModel
    InvalidGraph      parent of InvalidModel and Unsupported (ORT: "No Op registered for ...")
    NotImplemented    parent of Unsupported
    RuntimeException  parent of RuntimeFailure
    NoModel, EngineError, ModelLoaded, EPFail: never raised by onnxrun
"""
from typing import Type

from .._onnxrun import ORT_EXCEPTIONS as _ORT

Fail: Type[Exception] = _ORT["Fail"]
InvalidArgument: Type[Exception] = _ORT["InvalidArgument"]
NoSuchFile: Type[Exception] = _ORT["NoSuchFile"]
NoModel: Type[Exception] = _ORT["NoModel"]
EngineError: Type[Exception] = _ORT["EngineError"]
RuntimeException: Type[Exception] = _ORT["RuntimeException"]
InvalidProtobuf: Type[Exception] = _ORT["InvalidProtobuf"]
ModelLoaded: Type[Exception] = _ORT["ModelLoaded"]
NotImplemented: Type[Exception] = _ORT["NotImplemented"]
InvalidGraph: Type[Exception] = _ORT["InvalidGraph"]
EPFail: Type[Exception] = _ORT["EPFail"]

__all__ = ["Fail", "InvalidArgument", "NoSuchFile", "NoModel", "EngineError", "RuntimeException",
           "InvalidProtobuf", "ModelLoaded", "NotImplemented", "InvalidGraph", "EPFail"]
