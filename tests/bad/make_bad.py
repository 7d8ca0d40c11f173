#!/usr/bin/python3
"""Writes the malformed-model fixtures used by tests/valgrind_cli.sh (run with Debian's
/usr/bin/python3, which has python3-onnx). Each model is small and wrong in one way."""
import os
import numpy as np
import onnx
from onnx import TensorProto, helper, numpy_helper

HERE = os.path.dirname(os.path.abspath(__file__))


def save(name, nodes, inputs, outputs, inits=(), opset=13, extra_opsets=()):
    g = helper.make_graph(nodes, name, inputs, outputs, list(inits))
    m = helper.make_model(g, opset_imports=[helper.make_opsetid("", opset)] +
                          [helper.make_opsetid(d, v) for d, v in extra_opsets])
    m.ir_version = 7
    with open(os.path.join(HERE, name + ".onnx"), "wb") as f:
        f.write(m.SerializeToString())


x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, 4, 2, 2])
y = helper.make_tensor_value_info("y", TensorProto.FLOAT, None)
d2s = dict(op_type="DepthToSpace", blocksize=2)

# a -> b -> a: a cycle through two nodes
save("cycle", [helper.make_node(inputs=["x_b"], outputs=["x_a"], name="a", **d2s),
               helper.make_node(inputs=["x_a"], outputs=["x_b"], name="b", **d2s),
               helper.make_node(inputs=["x_b"], outputs=["y"], name="c", **d2s)], [x], [y])
# a node that consumes its own output
save("self_loop", [helper.make_node(inputs=["t"], outputs=["t"], name="selfish", **d2s),
                   helper.make_node(inputs=["t"], outputs=["y"], name="after", **d2s)], [x], [y])
# two unsupported nodes, to be listed in one error
save("unsupported", [helper.make_node("Relu", ["x"], ["r"], name="relu1"),
                     helper.make_node("Foo", ["r"], ["y"], name="foo1", domain="com.example")],
     [x], [y], extra_opsets=[("com.example", 1)])
# an input nobody produces
save("dangling", [helper.make_node(inputs=["ghost"], outputs=["y"], name="d", **d2s)], [x], [y])
# blocksize 3 does not divide 4 channels
save("bad_blocksize", [helper.make_node("DepthToSpace", ["x"], ["y"], name="d2s", blocksize=3)], [x], [y])
# two nodes write the same value
save("duplicate_producer", [helper.make_node(inputs=["x"], outputs=["y"], name="p1", **d2s),
                            helper.make_node(inputs=["x"], outputs=["y"], name="p2", **d2s)], [x], [y])
# W's first dim (3) differs from X's channels (4)
w = numpy_helper.from_array(np.ones((3, 1, 2, 2), np.float32), "w")
save("bad_weights", [helper.make_node("ConvTranspose", ["x", "w"], ["y"], name="up")], [x], [y], [w])
