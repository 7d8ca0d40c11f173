"""A PyTorch model exported with torch.onnx.export runs in onnxrun and matches PyTorch,
including the worked example of docs/python.md (python/examples/pytorch_export.py). Needs
python3-torch, which CI does not install: skipped, with the reason shown, when torch is not
importable."""
import io
import os
import runpy

import numpy as np
import pytest

import onnxrun

torch = pytest.importorskip("torch", reason="PyTorch is not installed (Debian: apt-get install "
                            "python3-torch); the export example is not tested")


class Upsampler(torch.nn.Module):
    """2x super-resolution: ConvTranspose 3->12, PixelShuffle(2), stride-2 ConvTranspose."""

    def __init__(self):
        super().__init__()
        self.features = torch.nn.ConvTranspose2d(3, 12, kernel_size=3, padding=1)
        self.shuffle = torch.nn.PixelShuffle(2)
        self.up = torch.nn.ConvTranspose2d(3, 3, kernel_size=4, stride=2, padding=1)

    def forward(self, x):
        return self.up(self.shuffle(self.features(x)))


def export(model, example, **kwargs):
    f = io.BytesIO()
    torch.onnx.export(model, example, f, input_names=["image"], output_names=["upscaled"],
                      opset_version=13, **kwargs)
    return f.getvalue()


def test_exported_upsampler_matches_pytorch():
    torch.manual_seed(0)
    model = Upsampler().eval()
    example = torch.rand(1, 3, 16, 16)
    onnx_bytes = export(model, example, dynamic_axes={"image": {0: "batch"}, "upscaled": {0: "batch"}})
    sess = onnxrun.InferenceSession(onnx_bytes)
    assert [n.op_type for n in sess.get_nodes()] == ["ConvTranspose", "DepthToSpace", "ConvTranspose"]
    assert sess.get_inputs()[0].shape == ["batch", 3, 16, 16]
    for batch in (1, 3):
        x = torch.rand(batch, 3, 16, 16)
        with torch.no_grad():
            want = model(x).numpy()
        got, = sess.run(None, {"image": x.numpy()})
        assert got.shape == want.shape == (batch, 3, 64, 64)
        np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)


def test_docs_example(tmp_path, capsys):
    example = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "examples",
                           "pytorch_export.py")
    got, expected = runpy.run_path(example)["main"](str(tmp_path / "upsampler.onnx"))
    assert got.shape == expected.shape == (4, 3, 128, 128)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-5)
    out = capsys.readouterr().out
    assert "['ConvTranspose', 'DepthToSpace', 'ConvTranspose']" in out
    assert "max abs difference from PyTorch" in out


def test_exported_grouped_dilated_conv_transpose_1d():
    torch.manual_seed(1)
    model = torch.nn.ConvTranspose1d(8, 6, kernel_size=5, stride=3, padding=2, output_padding=1,
                                     groups=2, dilation=2).eval()
    x = torch.rand(2, 8, 20)
    sess = onnxrun.InferenceSession(export(model, x), threads=1)
    with torch.no_grad():
        want = model(x).numpy()
    got, = sess.run(None, {"image": x.numpy()})
    np.testing.assert_allclose(got, want, rtol=1e-4, atol=1e-5)
