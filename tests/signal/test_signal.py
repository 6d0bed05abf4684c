"""graphrt.signal: FFT values against numpy.fft, gradients against finite
differences, run-time errors, dynamic shapes, and the complex-tensor gaps
filled for it (tf.complex, tf.abs of complex, DType.real_dtype)."""
import numpy as np
import pytest

import graphrt as tf
from graphrt import errors
from graphrt.framework.op_builder import apply_op
from tests.ops.gradcheck import check_gradients

RNG = np.random.RandomState(3)


def run(fetches, feed=None):
    with tf.Session() as sess:
        return sess.run(fetches, feed)


def parts(y):
    """A complex tensor as one real tensor: real parts, then imaginary parts."""
    return tf.concat([tf.real(y), tf.imag(y)], 0)


@pytest.mark.parametrize("dtype", [np.complex64, np.complex128])
def test_complex_ffts_match_numpy(dtype):
    with tf.Graph().as_default():
        c = (RNG.randn(2, 3, 4, 5) + 1j * RNG.randn(2, 3, 4, 5)).astype(dtype)
        fns = [(tf.fft, np.fft.fft), (tf.ifft, np.fft.ifft),
               (tf.fft2d, np.fft.fft2), (tf.ifft2d, np.fft.ifft2),
               (tf.fft3d, lambda a: np.fft.fftn(a, axes=(-3, -2, -1))),
               (tf.ifft3d, lambda a: np.fft.ifftn(a, axes=(-3, -2, -1)))]
        got = run([f(tf.constant(c)) for f, _ in fns])
        tol = 1e-5 if dtype == np.complex64 else 1e-12
        for value, (_, ref) in zip(got, fns):
            assert value.dtype == dtype
            np.testing.assert_allclose(value, ref(c.astype(np.complex128)), rtol=tol, atol=tol * 10)


def test_real_ffts_match_numpy_with_fft_length():
    with tf.Graph().as_default():
        x = RNG.randn(2, 6, 7)
        cases = [(tf.signal.rfft(x.astype(np.float32)), np.fft.rfft(x)),
                 (tf.signal.rfft(x, [4]), np.fft.rfft(x, 4)),
                 (tf.signal.rfft(x, [11]), np.fft.rfft(x, 11)),
                 (tf.signal.rfft2d(x, [5, 9]), np.fft.rfft2(x, (5, 9))),
                 (tf.signal.rfft3d(x), np.fft.rfftn(x)),
                 (tf.signal.irfft(np.fft.rfft(x)), np.fft.irfft(np.fft.rfft(x), 6)),
                 (tf.signal.irfft(np.fft.rfft(x), [7]), np.fft.irfft(np.fft.rfft(x), 7)),
                 (tf.signal.irfft2d(np.fft.rfft2(x), [6, 7]), np.fft.irfft2(np.fft.rfft2(x), (6, 7))),
                 (tf.spectral.irfft3d(np.fft.rfftn(x), [2, 6, 7]), x)]
        got = run([t for t, _ in cases])
        for (t, want), value in zip(cases, got):
            assert t.shape.as_list() == list(want.shape)
            np.testing.assert_allclose(value, want, rtol=1e-5, atol=1e-5)
        # as in TF, numpy float64 and complex128 values convert to the preferred float32 / complex64
        assert cases[1][0].dtype == tf.complex64 and cases[5][0].dtype == tf.float32
        assert tf.signal.rfft(tf.constant(x)).dtype == tf.complex128


def test_fft_lengths_fed_at_run_time():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float64, [None, None])
        n = tf.placeholder(tf.int32, [1])
        y = tf.signal.rfft(x, n)
        assert y.shape.as_list() == [None, None]
        xv = RNG.randn(3, 5)
        np.testing.assert_allclose(run(y, {x: xv, n: [8]}), np.fft.rfft(xv, 8), atol=1e-12)
        np.testing.assert_allclose(run(y, {x: xv, n: [3]}), np.fft.rfft(xv, 3), atol=1e-12)
        with pytest.raises(errors.InvalidArgumentError, match="non-negative"):
            run(y, {x: xv, n: [-2]})
        z = tf.signal.irfft(tf.placeholder_with_default(np.fft.rfft(xv), [None, None]))
        np.testing.assert_allclose(run(z), np.fft.irfft(np.fft.rfft(xv), 4), atol=1e-12)


def test_rfft_op_rejects_wrong_fft_length_at_run_time():
    with tf.Graph().as_default():
        n = tf.placeholder(tf.int32, [None])
        y = apply_op("RFFT", [tf.ones([2, 4]), n]).outputs[0]
        with pytest.raises(errors.InvalidArgumentError, match="fft_length must be length 1"):
            run(y, {n: [4, 4]})


def test_build_time_errors():
    with tf.Graph().as_default():
        with pytest.raises(TypeError):
            tf.fft(tf.constant([1.0]))
        with pytest.raises(ValueError, match="RFFT requires tf.float32 or tf.float64"):
            tf.signal.rfft(tf.constant([1, 2]))
        with pytest.raises(ValueError, match="IRFFT requires"):
            tf.signal.irfft(tf.constant([1.0]))
        with pytest.raises(ValueError, match="rank at least 2"):
            tf.signal.rfft2d(tf.constant([1.0, 2.0]))
        with pytest.raises(TypeError, match="incorrect types"):
            tf.complex(tf.constant(1.0), tf.constant(1.0, tf.float64))
        with pytest.raises(ValueError, match="Type-I DCT"):
            tf.signal.dct(tf.constant([1.0, 2.0]), type=1, norm="ortho")
        with pytest.raises(ValueError, match="frame_step must be an integer"):
            tf.signal.overlap_and_add(tf.ones([2, 2]), 1.0)
        with pytest.raises(LookupError):
            x = tf.ones([2, 2, 2])
            tf.gradients(tf.reduce_sum(tf.real(tf.signal.rfft3d(x))), x)


def test_complex_gaps_filled():
    """tf.complex, tf.abs of complex (ComplexAbs, a real dtype) and DType.real_dtype."""
    assert tf.complex64.real_dtype == tf.float32 and tf.complex128.real_dtype == tf.float64
    assert tf.float16.real_dtype == tf.float16
    with tf.Graph().as_default():
        a = tf.abs(tf.constant(np.array([3 + 4j, 0j], np.complex64)))
        assert a.dtype == tf.float32 and a.op.type == "ComplexAbs"
        re = tf.constant([1.0, 0.0])
        im = tf.constant([2.0, 0.0])
        g = tf.gradients(tf.reduce_sum(tf.abs(tf.complex(re, im))), [re, im])
        values, grads = run([a, g])
        np.testing.assert_allclose(values, [5.0, 0.0])
        np.testing.assert_allclose(grads, [[1 / np.sqrt(5), 0.0], [2 / np.sqrt(5), 0.0]], rtol=1e-6)
        assert run(tf.split(tf.ones([2, 3]), 1, axis=1))[0].shape == (2, 3)


def _complex_input(fn):
    return lambda re, im: parts(fn(tf.complex(re, im)))


@pytest.mark.parametrize("fn", [tf.fft, tf.ifft, tf.fft2d, tf.ifft2d, tf.fft3d, tf.ifft3d])
def test_complex_fft_gradients(fn):
    check_gradients(_complex_input(fn), RNG.randn(2, 3, 4), RNG.randn(2, 3, 4))


@pytest.mark.parametrize("n", [None, [10]])
def test_rfft_gradients(n):
    check_gradients(lambda x: parts(tf.signal.rfft(x, n)), RNG.randn(2, 7))
    check_gradients(lambda x: parts(tf.signal.rfft(x, n)), RNG.randn(2, 8))


def test_rfft_gradient_of_a_cropping_fft_length_is_a_value_error_as_in_tf():
    with tf.Graph().as_default():
        x = tf.constant(RNG.randn(2, 7))
        with pytest.raises(ValueError):
            tf.gradients(tf.reduce_sum(tf.real(tf.signal.rfft(x, [5]))), x)


@pytest.mark.parametrize("n", [None, [7]])
def test_irfft_gradients(n):
    # the DC (and, for even lengths, Nyquist) imaginary parts do not reach the output: zero gradient there
    check_gradients(lambda re, im: tf.signal.irfft(tf.complex(re, im), n), RNG.randn(2, 4), RNG.randn(2, 4))


def test_rfft2d_and_irfft2d_gradients():
    check_gradients(lambda x: parts(tf.signal.rfft2d(x)), RNG.randn(3, 4))
    check_gradients(lambda x: parts(tf.signal.rfft2d(x)), RNG.randn(2, 3, 5))
    check_gradients(lambda re, im: tf.signal.irfft2d(tf.complex(re, im)), RNG.randn(3, 3), RNG.randn(3, 3))


def test_signal_gradients():
    check_gradients(lambda x: tf.signal.frame(x, 4, 3, pad_end=True), RNG.randn(2, 11))
    check_gradients(lambda x: tf.signal.frame(x, 3, 2, axis=0), RNG.randn(7, 2))
    check_gradients(lambda x: tf.signal.overlap_and_add(x, 3), RNG.randn(2, 4, 5))
    check_gradients(lambda x: tf.abs(tf.signal.stft(x, 8, 4)), RNG.randn(2, 24), rtol=1e-4)
    for k in (1, 2, 3, 4):
        check_gradients(lambda x, k=k: tf.signal.dct(x, type=k), RNG.randn(2, 5))


def test_frame_and_overlap_add_match_numpy_with_unknown_shapes():
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, None)
        step = tf.placeholder(tf.int32, [])
        framed = tf.signal.frame(x, 4, step, pad_end=True, pad_value=9.0, axis=1)
        frames = tf.placeholder(tf.float32, [None, None, None])
        ola = tf.signal.overlap_and_add(frames, step)
        xv = RNG.randn(2, 7, 3).astype(np.float32)
        fv = RNG.randn(2, 3, 5).astype(np.float32)
        got, got_ola = run([framed, ola], {x: xv, step: 2, frames: fv})
        padded = np.concatenate([xv, np.full([2, 3, 3], 9.0, np.float32)], 1)
        want = np.stack([padded[:, i:i + 4] for i in range(0, 7, 2)], 1)
        np.testing.assert_array_equal(got, want)
        want_ola = np.zeros([2, 9], np.float32)
        for i in range(3):
            want_ola[:, 2 * i:2 * i + 5] += fv[:, i]
        np.testing.assert_allclose(got_ola, want_ola, rtol=1e-6)


def test_windows_dct_and_shifts_match_numpy():
    with tf.Graph().as_default():
        d = RNG.randn(3, 6)
        n = np.arange(6)
        k = n[:, None]
        dct2 = 2 * np.sum(d[:, None, :] * np.cos(np.pi * k * (2 * n + 1) / 12), -1)
        x = np.arange(35.0).reshape(5, 7)
        got = run([tf.signal.hann_window(9, periodic=False, dtype=tf.float64), tf.signal.hamming_window(8),
                   tf.signal.dct(d), tf.signal.idct(tf.signal.dct(d, norm="ortho"), norm="ortho"),
                   tf.signal.fftshift(x), tf.signal.ifftshift(x, axes=[1]), tf.signal.fftshift(x, axes=0)])
        np.testing.assert_allclose(got[0], np.hanning(9), atol=1e-12)
        np.testing.assert_allclose(got[1], 0.54 - 0.46 * np.cos(2 * np.pi * np.arange(8) / 8), atol=1e-6)
        np.testing.assert_allclose(got[2], dct2, atol=1e-10)
        np.testing.assert_allclose(got[3], d, atol=1e-12)
        np.testing.assert_array_equal(got[4], np.fft.fftshift(x))
        np.testing.assert_array_equal(got[5], np.fft.ifftshift(x, axes=1))
        np.testing.assert_array_equal(got[6], np.fft.fftshift(x, axes=0))


def test_stft_round_trip():
    with tf.Graph().as_default():
        audio = RNG.randn(2, 64)
        stfts = tf.signal.stft(audio, 16, 4)
        back = tf.signal.inverse_stft(stfts, 16, 4, window_fn=tf.signal.inverse_stft_window_fn(4))
        got = run(back)
        # samples covered by a full set of overlapping frames come back exactly
        np.testing.assert_allclose(got[:, 12:-12], audio[:, 12:got.shape[1] - 12], atol=1e-10)
