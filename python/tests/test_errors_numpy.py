"""Bad input raises tilefuse.UserError (a ValueError) carrying the C++ UserError text."""
import numpy as np
import pytest

import tilefuse


def test_user_error_is_a_value_error():
    assert issubclass(tilefuse.UserError, ValueError)


def test_out_dtype_mismatch():
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(tilefuse.UserError, match=r"out has dtype f16, expected f32\. Pass every tensor"):
        tilefuse.softmax(x, out=np.zeros((3, 5), np.float16))


def test_weight_dtype_mismatch():
    x = np.zeros((3, 5), np.float16)
    with pytest.raises(tilefuse.UserError, match=r"weight has dtype f32, expected f16"):
        tilefuse.rmsnorm(x, np.ones(5, np.float32))


def test_out_shape_mismatch():
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(tilefuse.UserError, match=r"out is f32\[3, 4\] on cpu, expected shape \[3, 5\]"):
        tilefuse.softmax(x, out=np.zeros((3, 4), np.float32))


def test_weight_shape_mismatch():
    x = np.zeros((3, 5), np.float32)
    with pytest.raises(tilefuse.UserError, match=r"bias is f32\[4\] on cpu, expected shape \[5\]"):
        tilefuse.layernorm(x, np.ones(5, np.float32), np.ones(4, np.float32))


def test_strided_input_is_refused():
    x = np.zeros((4, 10), np.float32)[:, ::2]
    with pytest.raises(tilefuse.UserError, match=r"x \(f32\[4, 5\] on cpu\) is not contiguous.*ascontiguousarray"):
        tilefuse.softmax(x, out=np.zeros((4, 5), np.float32))


def test_transposed_input_is_refused():
    x = np.zeros((6, 3), np.float32).T
    with pytest.raises(tilefuse.UserError, match=r"is not contiguous"):
        tilefuse.softmax(x)


@pytest.mark.parametrize("dtype,name", [(np.int32, "i32"), (np.float64, "f64")])
def test_unsupported_dtype(dtype, name):
    with pytest.raises(tilefuse.UserError, match=rf"softmax: dtype {name} is not supported.*float32, float16 or bfloat16"):
        tilefuse.softmax(np.zeros((2, 3), dtype))


def test_dtype_without_element_type():
    with pytest.raises(tilefuse.UserError, match=r"dtype complex64, which tilefuse has no element type for"):
        tilefuse.softmax(np.zeros((2, 3), np.complex64))


def test_attention_needs_16_bit_and_matching_shapes():
    q = np.zeros((2, 8, 16), np.float32)
    with pytest.raises(tilefuse.UserError, match=r"attention: dtype f32 is not supported"):
        tilefuse.attention(q, q, q)
    q16 = q.astype(np.float16)
    with pytest.raises(tilefuse.UserError, match=r"k is f16\[2, 7, 16\] on cpu, expected shape \[2, 8, 16\]"):
        tilefuse.attention(q16, np.zeros((2, 7, 16), np.float16), q16)
    q4 = np.zeros((1, 4, 8, 16), np.float16)  # 4 query heads do not split into 3 key/value heads
    with pytest.raises(tilefuse.UserError, match=r"k is f16\[1, 3, 8, 16\] on cpu, expected shape \[1, 4, 8, 16\]"):
        tilefuse.attention(q4, np.zeros((1, 3, 8, 16), np.float16), np.zeros((1, 3, 8, 16), np.float16))
    wide = np.zeros((1, 4, 320), np.float16)
    with pytest.raises(tilefuse.UserError, match=r"1 x 4 x 320 is out of range.*a head dim of at most 256"):
        tilefuse.attention(wide, wide, wide)


def test_matmul_shape_and_activation_errors():
    a = np.zeros((4, 6), np.float16)
    with pytest.raises(tilefuse.UserError, match=r"b is f16\[5, 3\] on cpu, expected shape \[6, 3\]"):
        tilefuse.matmul(a, np.zeros((5, 3), np.float16))
    with pytest.raises(tilefuse.UserError, match=r"unknown activation 'tanh'.*none, relu, gelu_tanh or silu"):
        tilefuse.matmul(a, np.zeros((6, 3), np.float16), activation="tanh")


def test_scalar_input():
    with pytest.raises(tilefuse.UserError, match=r"x is a scalar"):
        tilefuse.softmax(np.zeros((), np.float32))


def test_unknown_framework_needs_out():
    class NotATensor:
        shape = (2, 2)

    with pytest.raises(tilefuse.UserError, match=r"cannot allocate an output like a .*NotATensor; pass out="):
        tilefuse.softmax(NotATensor())


def test_matmul_rank_error():
    with pytest.raises(tilefuse.UserError, match=r"matmul: a is f16\[4\] on cpu; expected \[M, K\]"):
        tilefuse.matmul(np.zeros(4, np.float16), np.zeros((4, 3), np.float16))


def test_read_only_inputs_are_fine_read_only_outputs_are_not():
    rng = np.random.default_rng(3)
    x = rng.standard_normal((3, 5)).astype(np.float32)
    x.setflags(write=False)
    y = tilefuse.softmax(x)
    np.testing.assert_allclose(y.sum(axis=-1), 1.0, rtol=1e-6)
    out = np.zeros((3, 5), np.float32)
    out.setflags(write=False)
    with pytest.raises(tilefuse.UserError, match=r"out is a read-only array"):
        tilefuse.softmax(x, out=out)
    assert not out.any()
