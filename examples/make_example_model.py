#!/usr/bin/python3
"""Writes examples/data/leaky_chain: ConvTranspose (ai.onnx) followed by a LeakyRelu in the
custom domain 'com.example', the model examples/custom_op.c runs. Its expected output is
computed here with numpy from the definitions (a scatter loop for ConvTranspose, then
y = x if x >= 0 else alpha * x). Run with /usr/bin/python3 (Debian's python3-onnx)."""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "data", "leaky_chain")
ALPHA = 0.1

rng = np.random.RandomState(7)
x = rng.randn(1, 4, 6, 6).astype(np.float32)
w = (rng.randn(4, 2, 3, 3) * 0.5).astype(np.float32)
b = rng.randn(2).astype(np.float32)

# ConvTranspose, stride 2, pads 1: out size = 2*(6-1) + 3 - 2 = 11
s, p = 2, 1
full = np.zeros((1, 2, 2 * 5 + 3, 2 * 5 + 3), np.float64)
for c in range(4):
    for m in range(2):
        for i in range(6):
            for j in range(6):
                full[0, m, i * s:i * s + 3, j * s:j * s + 3] += x[0, c, i, j] * w[c, m].astype(np.float64)
t = full[:, :, p:p + 11, p:p + 11] + b.reshape(1, 2, 1, 1)
y = np.where(t >= 0, t, ALPHA * t).astype(np.float32)

nodes = [
    helper.make_node("ConvTranspose", ["x", "w", "b"], ["t"], name="up", strides=[2, 2], pads=[1, 1, 1, 1]),
    helper.make_node("LeakyRelu", ["t"], ["y"], name="leaky", domain="com.example", alpha=ALPHA),
]
graph = helper.make_graph(nodes, "leaky_chain",
                          [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 6, 6])],
                          [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 2, 11, 11])],
                          [numpy_helper.from_array(w, "w"), numpy_helper.from_array(b, "b")])
model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13), helper.make_opsetid("com.example", 1)])
model.ir_version = 7
os.makedirs(os.path.join(OUT, "test_data_set_0"), exist_ok=True)
onnx.save(model, os.path.join(OUT, "model.onnx"))
for name, arr in (("input_0", x), ("output_0", y)):
    tp = numpy_helper.from_array(arr, "x" if name == "input_0" else "y")
    with open(os.path.join(OUT, "test_data_set_0", name + ".pb"), "wb") as f:
        f.write(tp.SerializeToString())
print("wrote", OUT)
