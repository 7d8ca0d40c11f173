#!/usr/bin/env python3
"""Writes the raw-byte malformed inputs of tests/malformed (run from anywhere; standard
library only). test_malformed.c loads every file here through the public file API:

  bad_*.onnx / bad_*.npy / bad_*.pb   must fail with a clean error naming the file;
  crash_*                             regression inputs found by the fuzzers: any status
                                      is accepted, the test (under ASan/UBSan) only checks
                                      that loading and running them is clean.
  slow_*                              fuzzer finds that are valid but far too slow (CPU
                                      amplification); kept for whoever fixes them, not run.

Models built from protobuf structure live in test_malformed.c itself (model_builder.h).
"""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))


def varint(n):
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out.append(b | 0x80)
        else:
            out.append(b)
            return bytes(out)


def key(field, wire):
    return varint(field << 3 | wire)


def ld(field, payload):
    return key(field, 2) + varint(len(payload)) + payload


def npy(header, data=b"", version=(1, 0), declared_len=None):
    text = header.encode("latin1")
    pre = 10 if version[0] == 1 else 12
    pad = (64 - (pre + len(text) + 1) % 64) % 64
    text = text + b" " * pad + b"\n"
    n = len(text) if declared_len is None else declared_len
    size = struct.pack("<H", n) if version[0] == 1 else struct.pack("<I", n)
    return b"\x93NUMPY" + bytes(version) + size + text + data


def write(name, data):
    with open(os.path.join(HERE, name), "wb") as f:
        f.write(data)


def main():
    with open(os.path.join(ROOT, "models", "upsampler", "model.onnx"), "rb") as f:
        good = f.read()
    # ---- models ----
    write("bad_truncated.onnx", good[: len(good) // 2])
    write("bad_garbage.onnx", b"this is not a protobuf, it is text\n")
    # ir_version (field 1, varint) sent as a length-delimited field.
    write("bad_wire_type.onnx", ld(1, b"\x07") + good)
    # ir_version as an 11-byte varint (protobuf allows at most 10).
    write("bad_overlong_varint.onnx", key(1, 0) + b"\xff" * 10 + b"\x01")
    # graph (field 7) whose length runs past the end of the file.
    write("bad_length_overrun.onnx", key(1, 0) + varint(8) + key(7, 2) + varint(1000) + b"\x00" * 10)
    write("bad_empty.onnx", b"")
    # ---- .npy ----
    f4 = "{'descr': '<f4', 'fortran_order': False, 'shape': (2,), }"
    write("bad_magic.npy", b"\x93NUMPX\x01\x00" + npy(f4, b"\0" * 8)[8:])
    write("bad_version.npy", npy(f4, b"\0" * 8, version=(4, 0)))
    write("bad_header_overrun.npy", npy(f4, b"", declared_len=60000))
    write("bad_not_dict.npy", npy("['descr', '<f4']", b""))
    write("bad_missing_shape.npy", npy("{'descr': '<f4', 'fortran_order': False}", b""))
    write("bad_unknown_key.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (1,), 'x': 1}", b"\0" * 4))
    write("bad_negative_dim.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (-1,), }", b""))
    write("bad_dim_overflow.npy", npy("{'descr': '<f4', 'fortran_order': False, 'shape': (99999999999999999999,), }"))
    write("bad_size_overflow.npy", npy("{'descr': '<f8', 'fortran_order': False, 'shape': (4294967296, 4294967296), }"))
    write("bad_short_data.npy", npy(f4, b"\0" * 7))
    write("bad_long_data.npy", npy(f4, b"\0" * 9))
    write("bad_fortran.npy", npy("{'descr': '<f4', 'fortran_order': True, 'shape': (2, 2), }", b"\0" * 16))
    write("bad_object.npy", npy("{'descr': '|O', 'fortran_order': False, 'shape': (1,), }", b"\0" * 8))
    write("bad_unterminated.npy", npy("{'descr': '<f4, 'fortran_order': False, 'shape': (2,), }", b"\0" * 8))
    # ---- .pb tensors (TensorProto: dims 1, data_type 2, name 8, raw_data 9) ----
    write("bad_garbage.pb", b"\xff\xff\xff\xff\xff\xff")
    write("bad_raw_short.pb", key(1, 0) + varint(4) + key(2, 0) + varint(1) + ld(8, b"t") + ld(9, b"\0" * 15))
    write("bad_huge_dims.pb", key(1, 0) + varint(1 << 40) + key(1, 0) + varint(1 << 40) + key(2, 0) + varint(1)
          + ld(8, b"t") + ld(9, b"\0" * 4))
    write("bad_unknown_dtype.pb", key(1, 0) + varint(1) + key(2, 0) + varint(99) + ld(8, b"t"))
    ext = ld(13, ld(1, b"location") + ld(2, b"/etc/passwd"))  # external_data entry
    write("bad_external.pb", key(1, 0) + varint(1) + key(2, 0) + varint(1) + ld(8, b"t") + ext + key(14, 0) + varint(1))


if __name__ == "__main__":
    main()
