#!/usr/bin/python3
"""Export a small PyTorch upsampler (ConvTranspose2d + PixelShuffle) to ONNX with
torch.onnx.export, run it with onnxrun and compare with PyTorch's own output.

    /usr/bin/python3 python/examples/pytorch_export.py [OUT.onnx]

Needs python3-torch and the onnxrun package. docs/python.md walks through it;
python/tests/test_torch.py runs it.
"""
import sys

import numpy as np
import torch

import onnxrun


class Upsampler(torch.nn.Module):
    """2x super-resolution: features (ConvTranspose 3->12), PixelShuffle(2) (exported as
    DepthToSpace, CRD mode), then a stride-2 ConvTranspose: [N,3,H,W] -> [N,3,4H,4W]."""

    def __init__(self):
        super().__init__()
        self.features = torch.nn.ConvTranspose2d(3, 12, kernel_size=3, padding=1)
        self.shuffle = torch.nn.PixelShuffle(2)
        self.up = torch.nn.ConvTranspose2d(3, 3, kernel_size=4, stride=2, padding=1)

    def forward(self, x):
        return self.up(self.shuffle(self.features(x)))


def main(path="upsampler.onnx"):
    torch.manual_seed(0)
    model = Upsampler().eval()
    example = torch.rand(1, 3, 32, 32)
    # Opset 13: PixelShuffle becomes one DepthToSpace node; the batch axis stays symbolic.
    torch.onnx.export(model, example, path, input_names=["image"], output_names=["upscaled"],
                      opset_version=13, dynamic_axes={"image": {0: "batch"}, "upscaled": {0: "batch"}})

    sess = onnxrun.InferenceSession(path)
    print("inputs: ", sess.get_inputs())
    print("outputs:", sess.get_outputs())
    print("nodes:  ", [n.op_type for n in sess.get_nodes()])

    x = torch.rand(4, 3, 32, 32)
    with torch.no_grad():
        expected = model(x).numpy()
    got, = sess.run(None, {"image": x.numpy()})
    print("output %s %s, max abs difference from PyTorch: %.3g"
          % (got.dtype, list(got.shape), float(np.abs(got - expected).max())))
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    return got, expected


if __name__ == "__main__":
    main(*sys.argv[1:])
