#!/usr/bin/env python3
"""Writes the hand-made edge-case seeds of the fuzz corpora (tests/fuzz/corpus/*/edge_*):
small valid models that reach the corners of the loader, the shape inference and both
ops (symbolic dims, strings, zero-sized dims, every auto_pad, output_shape, groups, 1-D
and 3-D, float16/double/bfloat16, tensor attributes), TensorProtos of every data source,
and .npy files of every version. Standard library only: the protobuf encoding is written
out by hand (field numbers from onnx.proto)."""
import os
import struct

HERE = os.path.dirname(os.path.abspath(__file__))

FLOAT, UINT8, INT8, UINT16, INT16, INT32, INT64, STRING, BOOL, FLOAT16, DOUBLE, UINT32, UINT64, \
    COMPLEX64, COMPLEX128, BFLOAT16 = range(1, 17)


def varint(n):
    n &= (1 << 64) - 1
    out = bytearray()
    while True:
        b = n & 0x7F
        n >>= 7
        out.append(b | (0x80 if n else 0))
        if not n:
            return bytes(out)


def vi(field, n):  # varint field
    return varint(field << 3) + varint(n)


def ld(field, payload):  # length-delimited field
    if isinstance(payload, str):
        payload = payload.encode()
    return varint(field << 3 | 2) + varint(len(payload)) + payload


# ---- onnx.proto messages ----

def tensor(name, dtype, dims, raw=None, strings=None, int32=None, int64=None, floats=None,
           doubles=None, uint64=None):
    b = b"".join(vi(1, d) for d in dims) + vi(2, dtype) + ld(8, name)
    if raw is not None:
        b += ld(9, raw)
    for s in strings or []:
        b += ld(6, s)
    if int32 is not None:
        b += ld(5, b"".join(varint(v) for v in int32))
    if int64 is not None:
        b += ld(7, b"".join(varint(v) for v in int64))
    if floats is not None:
        b += ld(4, struct.pack("<%df" % len(floats), *floats))
    if doubles is not None:
        b += ld(10, struct.pack("<%dd" % len(doubles), *doubles))
    if uint64 is not None:
        b += ld(11, b"".join(varint(v) for v in uint64))
    return b


def value(name, dtype, shape):
    dims = b""
    for d in shape or []:
        if isinstance(d, int):
            dims += ld(1, vi(1, d))
        elif d is None:
            dims += ld(1, b"")
        else:
            dims += ld(1, ld(2, d))
    tt = vi(1, dtype) + (ld(2, dims) if shape is not None else b"")
    return ld(1, name) + ld(2, ld(1, tt))


def attr_i(name, v):
    return ld(1, name) + vi(3, v) + vi(20, 2)


def attr_ints(name, vs):
    return ld(1, name) + b"".join(vi(8, v) for v in vs) + vi(20, 7)


def attr_s(name, s):
    return ld(1, name) + ld(4, s) + vi(20, 3)


def attr_t(name, t):
    return ld(1, name) + ld(5, t) + vi(20, 4)


def node(name, op, inputs, outputs, attrs=()):
    return (b"".join(ld(1, i) for i in inputs) + b"".join(ld(2, o) for o in outputs) + ld(3, name)
            + ld(4, op) + b"".join(ld(5, a) for a in attrs))


def model(nodes, inputs, outputs, inits=(), opset=13, ir=8, value_info=()):
    g = (b"".join(ld(1, n) for n in nodes) + ld(2, "g") + b"".join(ld(5, t) for t in inits)
         + b"".join(ld(11, v) for v in inputs) + b"".join(ld(12, v) for v in outputs)
         + b"".join(ld(13, v) for v in value_info))
    return vi(1, ir) + ld(2, "seeds") + ld(7, g) + ld(8, ld(1, "") + vi(2, opset))


def f32(n, start=0.0):
    return struct.pack("<%df" % n, *[(start + i) * 0.125 for i in range(n)])


def convt(name, xshape, wdims, attrs=(), dtype=FLOAT, opset=13, bias=False, esize=4):
    n = 1
    for d in wdims:
        n *= d
    inits = [tensor("w", dtype, wdims, raw=bytes((i * 7) & 0x3F for i in range(n * esize)))]
    ins = ["x", "w"]
    if bias:
        m = wdims[1]
        g = dict(attrs).get("group", 1)
        inits.append(tensor("b", dtype, [m * g], raw=bytes(m * g * esize)))
        ins.append("b")
    attrs_b = [attr_ints(k, v) if isinstance(v, list) else attr_s(k, v) if isinstance(v, str) else attr_i(k, v)
               for k, v in attrs]
    return name, model([node("ct", "ConvTranspose", ins, ["y"], attrs_b)], [value("x", dtype, xshape)],
                       [value("y", dtype, None)], inits, opset=opset)


def d2s(name, xshape, b, mode=None, dtype=FLOAT, opset=13):
    attrs = [attr_i("blocksize", b)] + ([attr_s("mode", mode)] if mode else [])
    return name, model([node("d", "DepthToSpace", ["x"], ["y"], attrs)], [value("x", dtype, xshape)],
                       [value("y", dtype, None)], opset=opset)


def models():
    yield convt("convt_1d", [1, 2, 5], [2, 3, 3], [("strides", [2])], bias=True)
    yield convt("convt_3d", [1, 1, 2, 2, 2], [1, 2, 2, 2, 2], [("pads", [1, 0, 0, 0, 1, 0])])
    yield convt("convt_same_lower", ["N", 2, 3, 3], [2, 1, 3, 3], [("auto_pad", "SAME_LOWER"), ("strides", [2, 2])])
    yield convt("convt_same_upper", [1, 2, 3, 3], [2, 1, 2, 2], [("auto_pad", "SAME_UPPER"), ("strides", [3, 3])])
    yield convt("convt_valid", [1, 2, 3, 3], [2, 1, 2, 2], [("auto_pad", "VALID")])
    yield convt("convt_output_shape", [1, 2, 3, 3], [2, 1, 3, 3], [("strides", [2, 2]), ("output_shape", [9, 8])])
    yield convt("convt_output_shape_full", [1, 2, 3, 3], [2, 1, 3, 3], [("output_shape", [1, 1, 4, 6])])
    yield convt("convt_group", [1, 4, 3, 3], [4, 2, 2, 2], [("group", 2), ("dilations", [2, 1])], bias=True)
    yield convt("convt_depthwise", [1, 4, 4, 4], [4, 1, 3, 3], [("group", 4), ("strides", [2, 2]),
                                                               ("output_padding", [1, 1])])
    yield convt("convt_zero_dim", [1, 2, 0, 3], [2, 1, 2, 2], bias=True)
    yield convt("convt_zero_kernel", [1, 2, 3, 3], [2, 1, 0, 2])
    yield convt("convt_double", [1, 2, 3, 3], [2, 1, 2, 2], dtype=DOUBLE, esize=8)
    yield convt("convt_f16", [1, 2, 3, 3], [2, 1, 2, 2], dtype=FLOAT16, esize=2)
    yield convt("convt_bf16_v22", [1, 2, 3, 3], [2, 1, 2, 2], dtype=BFLOAT16, esize=2, opset=22)
    yield convt("convt_opset1", [1, 2, 3, 3], [2, 1, 2, 2], [("kernel_shape", [2, 2])], opset=1)
    yield convt("convt_long_kernel", [1, 1, 16], [1, 1, 32], [("strides", [8]), ("pads", [12, 12])])
    yield d2s("d2s_dcr", ["N", 8, 2, 3], 2)
    yield d2s("d2s_crd", [1, 18, 1, 2], 3, "CRD")
    yield d2s("d2s_v1", [1, 4, 2, 2], 2, opset=1)
    yield d2s("d2s_bool", [1, 4, 1, 1], 2, dtype=BOOL)
    yield d2s("d2s_c128", [1, 4, 1, 2], 2, dtype=COMPLEX128)
    yield d2s("d2s_bf16", [1, 4, 1, 1], 2, dtype=BFLOAT16, opset=28)
    yield d2s("d2s_unknown_dims", [None, None, None, None], 1)
    # strings through DepthToSpace, from an initializer
    s = tensor("s", STRING, [1, 4, 1, 1], strings=[b"a", b"", b"ccc", b"\x00d"])
    yield "d2s_strings", model([node("d", "DepthToSpace", ["s"], ["y"], [attr_i("blocksize", 2)])], [],
                               [value("y", STRING, None)], [s])
    # two nodes, fan-out, a value_info, an initializer that is also an input (default)
    w = tensor("w", FLOAT, [4, 4, 1, 1], raw=f32(16))
    yield "chain_default", model(
        [node("a", "ConvTranspose", ["x", "w"], ["t"]),
         node("b", "DepthToSpace", ["t"], ["y"], [attr_i("blocksize", 2), attr_s("mode", "CRD")]),
         node("c", "DepthToSpace", ["t"], ["z"], [attr_i("blocksize", 1)])],
        [value("x", FLOAT, ["B", 4, "H", "W"]), value("w", FLOAT, [4, 4, 1, 1])],
        [value("y", FLOAT, ["B", 1, None, None]), value("z", FLOAT, None)], [w],
        value_info=[value("t", FLOAT, ["B", 4, "H", "W"])])
    # a tensor attribute (unused by the op, decoded by the loader)
    yield "tensor_attr", model([node("d", "DepthToSpace", ["x"], ["y"],
                                     [attr_i("blocksize", 1), attr_t("extra", tensor("k", INT64, [2], int64=[1, -1]))])],
                               [value("x", FLOAT, [1, 1, 1, 1])], [value("y", FLOAT, None)])


def tensors():
    yield "pb_f16_int32", tensor("h", FLOAT16, [3], int32=[0x3C00, 0xC000, 0x7E00])
    yield "pb_bf16_raw", tensor("b", BFLOAT16, [2], raw=b"\x80\x3f\x00\xc0")
    yield "pb_u32_uint64", tensor("u", UINT32, [2], uint64=[1, (1 << 32) + 5])
    yield "pb_u64", tensor("u", UINT64, [1], uint64=[(1 << 64) - 1])
    yield "pb_i64", tensor("i", INT64, [2, 1], int64=[-5, 1 << 40])
    yield "pb_f64", tensor("d", DOUBLE, [1], doubles=[2.5])
    yield "pb_c64", tensor("c", COMPLEX64, [1], floats=[1.0, -1.0])
    yield "pb_c128", tensor("c", COMPLEX128, [1], doubles=[1.0, -1.0])
    yield "pb_bool", tensor("q", BOOL, [3], int32=[0, 1, 7])
    yield "pb_i8", tensor("q", INT8, [2], int32=[-1, 300])
    yield "pb_strings", tensor("s", STRING, [2, 1], strings=[b"", b"hello\x00"])
    yield "pb_scalar", tensor("s", FLOAT, [], raw=b"\x00\x00\x80\x3f")
    yield "pb_empty", tensor("e", FLOAT, [0, 3])


def npy(descr, shape, data, version=1):
    text = "{'descr': '%s', 'fortran_order': False, 'shape': %s, }" % (descr, shape)
    pre = 10 if version == 1 else 12
    pad = (64 - (pre + len(text) + 1) % 64) % 64
    text = (text + " " * pad + "\n").encode()
    size = struct.pack("<H", len(text)) if version == 1 else struct.pack("<I", len(text))
    return b"\x93NUMPY" + bytes([version, 0]) + size + text + data


def npys():
    yield "npy_v2", npy("<i2", "(2,)", b"\x01\x00\xff\xff", version=2)
    yield "npy_v3", npy("<u8", "(1, 1)", b"\x07" * 8, version=3)
    yield "npy_0d", npy("<f8", "()", b"\x00" * 8)
    yield "npy_empty", npy("|u1", "(0, 5)", b"")
    yield "npy_no_order", npy("f4", "(1,)", b"\x00" * 4)
    yield "npy_long_dims", npy("<i4", "(1L, 2L)", b"\x00" * 8)
    yield "npy_c8", npy("<c8", "(1,)", b"\x00" * 8)
    yield "npy_bool", npy("|b1", "(3,)", b"\x00\x02\x01")


def main():
    for sub, gen, ext in (("model", models, ".onnx"), ("tensor_pb", tensors, ".pb"), ("npy", npys, ".npy")):
        os.makedirs(os.path.join(HERE, "corpus", sub), exist_ok=True)
        for name, data in gen():
            with open(os.path.join(HERE, "corpus", sub, "edge_" + name + ext), "wb") as f:
                f.write(data)


if __name__ == "__main__":
    main()
