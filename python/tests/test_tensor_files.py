"""load_tensor / save_tensor, checked against onnx's and numpy's own readers and writers."""
import glob
import os

import numpy as np
import onnx
import pytest
from onnx import TensorProto, numpy_helper

import onnxrun
from helpers import MODELS, NUMERIC_DTYPES, TEST_DATA, random_array, read_pb

IDS = [str(np.dtype(d[0])) for d in NUMERIC_DTYPES]


def parse_pb(path):
    t = onnx.TensorProto()
    with open(path, "rb") as f:
        t.ParseFromString(f.read())
    return t


@pytest.mark.parametrize("np_dtype,elem_type,_", NUMERIC_DTYPES, ids=IDS)
def test_pb_round_trips_with_onnx(tmp_path, np_dtype, elem_type, _):
    x = random_array(np.random.default_rng(elem_type), np_dtype, (3, 1, 4))
    path = str(tmp_path / "t.pb")
    onnxrun.save_tensor(path, x, "my tensor")
    t = parse_pb(path)
    assert t.name == "my tensor" and t.data_type == elem_type and list(t.dims) == [3, 1, 4]
    np.testing.assert_array_equal(numpy_helper.to_array(t), x)
    # The other way: onnx writes, onnxrun reads.
    with open(path, "wb") as f:
        f.write(numpy_helper.from_array(x[::-1], "from onnx").SerializeToString())
    y, name = onnxrun.load_tensor(path, return_name=True)
    assert name == "from onnx" and y.dtype == x.dtype
    np.testing.assert_array_equal(y, x[::-1])


@pytest.mark.parametrize("np_dtype,elem_type,_", NUMERIC_DTYPES, ids=IDS)
def test_npy_round_trips_with_numpy(tmp_path, np_dtype, elem_type, _):
    x = random_array(np.random.default_rng(elem_type + 100), np_dtype, (2, 5))
    path = str(tmp_path / "t.npy")
    onnxrun.save_tensor(path, x.T, "ignored")  # non-contiguous: copied once
    y = np.load(path)
    assert y.dtype == x.dtype
    np.testing.assert_array_equal(y, x.T)
    np.save(path, x)
    np.testing.assert_array_equal(onnxrun.load_tensor(path), x)
    assert onnxrun.load_tensor(path, return_name=True)[1] == ""
    np.save(path, np.asfortranarray(x.reshape(5, 2)) if x.size > 1 else x)
    if x.size > 1:
        with pytest.raises(onnxrun.Unsupported, match="Fortran"):
            onnxrun.load_tensor(path)


def test_strings(tmp_path):
    x = np.array([["a", "", "héllo"], ["\x00", "b" * 300, "日本"]], dtype=object)
    path = str(tmp_path / "s.pb")
    onnxrun.save_tensor(path, x, "s")
    t = parse_pb(path)
    assert t.data_type == TensorProto.STRING
    assert [s.decode() for s in t.string_data] == x.ravel().tolist()
    y = onnxrun.load_tensor(path)
    assert y.dtype == object and y.tolist() == x.tolist()
    with pytest.raises(onnxrun.Unsupported):
        onnxrun.save_tensor(str(tmp_path / "s.npy"), x)


def test_bfloat16_bits(tmp_path):
    bits = np.array([0x3F80, 0xC000, 0x7FC0, 0x0001], dtype=np.uint16)  # 1, -2, nan, tiny
    path = str(tmp_path / "b.pb")
    onnxrun.save_tensor(path, bits, "b", bfloat16=True)
    t = parse_pb(path)
    assert t.data_type == TensorProto.BFLOAT16
    assert np.frombuffer(t.raw_data, dtype="<u2").tolist() == bits.tolist()
    y = onnxrun.load_tensor(path)
    assert y.view(np.uint16).tolist() == bits.tolist()
    onnxrun.save_tensor(path, bits, "u")  # without the flag: plain uint16
    assert parse_pb(path).data_type == TensorProto.UINT16
    with pytest.raises(onnxrun.InvalidArgument, match="uint16"):
        onnxrun.save_tensor(path, bits.astype(np.int16), bfloat16=True)
    with pytest.raises(onnxrun.Unsupported):
        onnxrun.save_tensor(str(tmp_path / "b.npy"), bits, bfloat16=True)


def test_repository_tensor_files_read_like_onnx():
    files = sorted(glob.glob(os.path.join(TEST_DATA, "*", "test_data_set_*", "*.pb")) +
                   glob.glob(os.path.join(MODELS, "*", "test_data_set_*", "*.pb")))
    assert len(files) > 30
    for path in files:
        want_name, want = read_pb(path)
        got, name = onnxrun.load_tensor(path, return_name=True)
        assert name == want_name, path
        assert got.dtype == want.dtype and got.shape == want.shape, path
        np.testing.assert_array_equal(got, want, err_msg=path)
    npys = sorted(glob.glob(os.path.join(TEST_DATA, "npy", "**", "*.npy"), recursive=True))
    assert len(npys) >= 10
    for path in npys:
        base = os.path.basename(path)
        # The library reads C-order .npy of ONNX's numeric types, either byte order ('<' or
        # '>'), and returns them in the host's order.
        if base in ("f4_fortran.npy", "object.npy", "structured.npy", "unicode.npy"):
            with pytest.raises(onnxrun.Unsupported, match=base):
                onnxrun.load_tensor(path)
            continue
        got, want = onnxrun.load_tensor(path), np.load(path)
        assert got.dtype == want.dtype.newbyteorder("=") and got.dtype.isnative, path
        np.testing.assert_array_equal(got, want, err_msg=path)


def test_file_errors(tmp_path):
    with pytest.raises(onnxrun.InvalidArgument, match=r"\.pb or \.npy"):
        onnxrun.load_tensor(str(tmp_path / "t.txt"))
    with pytest.raises(onnxrun.InvalidArgument, match=r"\.pb or \.npy"):
        onnxrun.save_tensor(str(tmp_path / "t.bin"), np.zeros(2))
    missing = str(tmp_path / "missing.pb")
    with pytest.raises(onnxrun.FileError, match="missing.pb") as e:
        onnxrun.load_tensor(missing)
    assert isinstance(e.value, OSError) and e.value.status == 3
    with pytest.raises(onnxrun.FileError):
        onnxrun.save_tensor(str(tmp_path / "no" / "such" / "dir.pb"), np.zeros(2))
    big = str(tmp_path / "big.npy")
    np.save(big, np.zeros(1 << 16, np.float32))
    with pytest.raises(onnxrun.LimitExceeded):
        onnxrun.load_tensor(big, max_memory="64K")
    assert onnxrun.load_tensor(big, max_memory="1M").shape == (1 << 16,)
