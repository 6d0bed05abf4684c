"""FFTs and tf.signal: tf.fft/ifft/fft2d/ifft2d/fft3d/ifft3d on complex64 and
complex128, rfft/irfft (1-3-D) with inferred, shorter, longer and odd
fft_length, under tf.signal and tf.spectral; their gradients; tf.complex and
tf.abs of complex tensors; frame (pad_end, pad_value, axis), overlap_and_add,
windows, stft/inverse_stft, mel weights, MFCCs, dct/idct types 1-4 (ortho),
mdct, fftshift; static shapes and build-time error classes.

Complex results are returned as [..., (real, imag)] float arrays (the
golden comparison is exact for complex dtypes); float32 FFTs are single
precision in both, compared at the golden's tolerance.
"""


def err(fn):
    try:
        fn()
    except Exception as e:
        return type(e).__name__
    return "no error"


def run(tf, np):
    rng = np.random.RandomState(7)
    out = {}
    g = tf.Graph()
    with g.as_default():
        t = {}
        x8 = rng.randn(2, 8).astype(np.float32)
        x7 = rng.randn(3, 7).astype(np.float32)
        c = (rng.randn(2, 3, 4) + 1j * rng.randn(2, 3, 4))
        for name, dt in (("c64", np.complex64), ("c128", np.complex128)):
            z = tf.constant(c.astype(dt))
            t[f"fft_{name}"] = tf.fft(z)
            t[f"ifft_{name}"] = tf.ifft(z)
            t[f"fft2d_{name}"] = tf.fft2d(z)
            t[f"ifft2d_{name}"] = tf.signal.ifft2d(z)
            t[f"fft3d_{name}"] = tf.spectral.fft3d(z)
            t[f"ifft3d_{name}"] = tf.ifft3d(z)
        t["rfft"] = tf.signal.rfft(x8)
        t["rfft_odd"] = tf.signal.rfft(x7)
        t["rfft_short"] = tf.signal.rfft(x8, fft_length=[5])
        t["rfft_long"] = tf.spectral.rfft(x7, fft_length=[12])
        t["rfft_f64"] = tf.signal.rfft(x8.astype(np.float64))
        spec = tf.signal.rfft(x8)
        t["irfft"] = tf.signal.irfft(spec)
        t["irfft_odd"] = tf.signal.irfft(tf.signal.rfft(x7), fft_length=[7])
        t["irfft_long"] = tf.signal.irfft(spec, fft_length=[12])
        t["irfft_short"] = tf.signal.irfft(spec, fft_length=[4])
        t["irfft_imag_dc"] = tf.signal.irfft(tf.constant(np.array([1 + 2j, 3 - 1j, 2 + 5j], np.complex64)))
        x34 = rng.randn(2, 3, 4).astype(np.float32)
        t["rfft2d"] = tf.signal.rfft2d(x34)
        t["rfft2d_len"] = tf.signal.rfft2d(x34, fft_length=[4, 6])
        t["irfft2d"] = tf.signal.irfft2d(tf.signal.rfft2d(x34))
        t["irfft2d_odd"] = tf.signal.irfft2d(tf.signal.rfft2d(x34, [3, 5]), fft_length=[3, 5])
        x3d = rng.randn(2, 3, 4, 5).astype(np.float64)
        t["rfft3d"] = tf.signal.rfft3d(x3d)
        t["irfft3d"] = tf.signal.irfft3d(tf.signal.rfft3d(x3d), fft_length=[3, 4, 5])
        t["complex"] = tf.complex(tf.constant([1.0, -2.0]), tf.constant([[0.5], [3.0]]))
        t["abs_c64"] = tf.abs(tf.constant(c.astype(np.complex64)))
        t["abs_c128"] = tf.abs(tf.constant(c))
        sig = np.arange(10, dtype=np.float32).reshape(1, 10) + 1.0
        t["frame"] = tf.signal.frame(sig, 4, 3)
        t["frame_pad"] = tf.signal.frame(sig, 4, 3, pad_end=True, pad_value=-1.0)
        t["frame_axis0"] = tf.signal.frame(np.arange(12, dtype=np.float32).reshape(6, 2), 3, 2, axis=0)
        t["frame_axis_mid"] = tf.signal.frame(rng.randn(2, 9, 3).astype(np.float32), 4, 2, axis=1, pad_end=True)
        t["frame_short"] = tf.signal.frame(sig, 12, 3)
        t["frame_int"] = tf.signal.frame(np.arange(7, dtype=np.int32), 3, 2, pad_end=True)
        frames = rng.randn(2, 5, 6).astype(np.float32)
        t["ola"] = tf.signal.overlap_and_add(frames, 2)
        t["ola_fast"] = tf.signal.overlap_and_add(frames, 6)
        t["ola_gap"] = tf.signal.overlap_and_add(frames[0], 8)
        for wname in ("hann_window", "hamming_window"):
            fn = getattr(tf.signal, wname)
            t[f"{wname}_8"] = fn(8)
            t[f"{wname}_7_sym"] = fn(7, periodic=False)
            t[f"{wname}_8_sym_f64"] = fn(8, periodic=False, dtype=tf.float64)
            t[f"{wname}_1"] = fn(1)
        t["vorbis"] = tf.signal.vorbis_window(6)
        t["kaiser"] = tf.signal.kaiser_window(7, beta=4.0)
        t["kbd"] = tf.signal.kaiser_bessel_derived_window(8)
        audio = rng.randn(2, 64).astype(np.float32)
        stfts = tf.signal.stft(audio, frame_length=16, frame_step=4)
        t["stft"] = stfts
        t["stft_pad"] = tf.signal.stft(audio, 15, 6, fft_length=32, pad_end=True, window_fn=tf.signal.hamming_window)
        t["stft_nowin"] = tf.signal.stft(audio, 8, 8, window_fn=None)
        t["istft"] = tf.signal.inverse_stft(
            stfts, 16, 4, window_fn=tf.signal.inverse_stft_window_fn(4))
        t["istft_default"] = tf.signal.inverse_stft(stfts, 16, 4)
        t["istft_crop"] = tf.signal.inverse_stft(stfts, 12, 4, fft_length=16)
        t["inv_window"] = tf.signal.inverse_stft_window_fn(3, forward_window_fn=tf.signal.hamming_window)(
            10, tf.float32)
        mel = tf.signal.linear_to_mel_weight_matrix(8, 9, 8000, 100.0, 3900.0)
        t["mel"] = mel
        t["mel_f64"] = tf.signal.linear_to_mel_weight_matrix(num_mel_bins=4, num_spectrogram_bins=17,
                                                             sample_rate=16000, dtype=tf.float64)
        log_mel = tf.log(tf.matmul(tf.reshape(tf.abs(stfts), [-1, 9]), mel) + 1e-6)
        t["mfcc"] = tf.signal.mfccs_from_log_mel_spectrograms(log_mel)
        d = rng.randn(3, 6).astype(np.float32)
        for k in (1, 2, 3, 4):
            t[f"dct{k}"] = tf.signal.dct(d, type=k)
            t[f"idct{k}"] = tf.signal.idct(d, type=k)
        for k in (2, 3, 4):
            t[f"dct{k}_ortho"] = tf.signal.dct(d, type=k, norm="ortho")
            t[f"idct{k}_ortho_round"] = tf.signal.idct(tf.signal.dct(d, type=k, norm="ortho"), type=k, norm="ortho")
        t["dct_n_pad"] = tf.spectral.dct(d, n=9)
        t["dct_n_crop"] = tf.signal.dct(d.astype(np.float64), n=4, norm="ortho")
        t["mdct"] = tf.signal.mdct(audio, 8)
        t["imdct"] = tf.signal.inverse_mdct(tf.signal.mdct(audio, 8, norm="ortho"), norm="ortho")
        sh = np.arange(15, dtype=np.float32).reshape(3, 5)
        t["fftshift"] = tf.signal.fftshift(sh)
        t["ifftshift"] = tf.signal.ifftshift(sh)
        t["fftshift_axis"] = tf.signal.fftshift(sh, axes=1)
        t["ifftshift_axes"] = tf.signal.ifftshift(sh, axes=[-1, 0])

        # gradients, of sum(real * w1 + imag * w2) or sum(y * w)
        def cplx_loss(y):
            w = tf.constant(rng.randn(*y.shape.as_list()).astype(y.dtype.real_dtype.as_numpy_dtype))
            w2 = tf.constant(rng.randn(*y.shape.as_list()).astype(y.dtype.real_dtype.as_numpy_dtype))
            return tf.reduce_sum(tf.real(y) * w + tf.imag(y) * w2)

        def real_loss(y):
            w = tf.constant(rng.randn(*y.shape.as_list()).astype(y.dtype.as_numpy_dtype))
            return tf.reduce_sum(y * w)

        grads = {}
        zr = tf.constant(c.real.astype(np.float32))
        zi = tf.constant(c.imag.astype(np.float32))
        z = tf.complex(zr, zi)
        for name, fn in (("fft", tf.fft), ("ifft", tf.ifft), ("fft2d", tf.fft2d), ("ifft2d", tf.ifft2d),
                         ("fft3d", tf.fft3d), ("ifft3d", tf.ifft3d)):
            grads[name] = tf.gradients(cplx_loss(fn(z)), [zr, zi])
        grads["abs"] = tf.gradients(real_loss(tf.abs(z)), [zr, zi])
        for name, xv, n in (("rfft_even", x8, None), ("rfft_odd", x7, None), ("rfft_len", x7, [10])):
            xt = tf.constant(xv)
            grads[name] = tf.gradients(cplx_loss(tf.signal.rfft(xt, n)), xt)[0]
        xt = tf.constant(x34)
        grads["rfft2d"] = tf.gradients(cplx_loss(tf.signal.rfft2d(xt)), xt)[0]
        xt = tf.constant(x3d[0, 0, :3])
        grads["rfft2d_odd"] = tf.gradients(cplx_loss(tf.signal.rfft2d(xt)), xt)[0]
        sr = tf.constant(rng.randn(2, 5).astype(np.float32))
        si = tf.constant(rng.randn(2, 5).astype(np.float32))
        s = tf.complex(sr, si)
        grads["irfft_even"] = tf.gradients(real_loss(tf.signal.irfft(s)), [sr, si])
        grads["irfft_odd"] = tf.gradients(real_loss(tf.signal.irfft(s, [9])), [sr, si])
        s2r = tf.constant(rng.randn(3, 4).astype(np.float64))
        s2 = tf.complex(s2r, tf.constant(rng.randn(3, 4)))
        grads["irfft2d"] = tf.gradients(real_loss(tf.signal.irfft2d(s2)), s2r)[0]
        at = tf.constant(audio)
        grads["stft"] = tf.gradients(real_loss(tf.abs(tf.signal.stft(at, 16, 4))), at)[0]
        grads["frame_pad"] = tf.gradients(real_loss(tf.signal.frame(at, 10, 7, pad_end=True)), at)[0]
        ft = tf.constant(frames)
        grads["ola"] = tf.gradients(real_loss(tf.signal.overlap_and_add(ft, 2)), ft)[0]
        dt_ = tf.constant(d)
        grads["dct2"] = tf.gradients(real_loss(tf.signal.dct(dt_, norm="ortho")), dt_)[0]
        grads["dct3"] = tf.gradients(real_loss(tf.signal.dct(dt_, type=3)), dt_)[0]
        grads["dct1"] = tf.gradients(real_loss(tf.signal.dct(dt_, type=1)), dt_)[0]

        shapes = {k: str(v.shape) for k, v in t.items()}
        dtypes = {k: v.dtype.name for k, v in t.items()}
        ph = tf.placeholder(tf.float32, [None, 8])
        phc = tf.placeholder(tf.complex64, [None, None])
        shapes["rfft_ph"] = str(tf.signal.rfft(ph).shape)
        shapes["rfft_ph_len"] = str(tf.signal.rfft(ph, [6]).shape)
        shapes["irfft_unknown"] = str(tf.signal.irfft(phc).shape)
        shapes["fft_ph"] = str(tf.fft(phc).shape)
        shapes["frame_ph"] = str(tf.signal.frame(ph, 3, 2).shape)
        shapes["frame_ph_pad"] = str(tf.signal.frame(ph, 3, 2, pad_end=True).shape)
        shapes["stft_ph"] = str(tf.signal.stft(ph, 4, 2).shape)
        fed = {"rfft_ph": tf.signal.rfft(ph), "irfft_ph": tf.signal.irfft(phc),
               "frame_ph": tf.signal.frame(tf.placeholder_with_default(x7, [None, None]), 3, 2, pad_end=True)}
        with tf.Session() as sess:
            vals, gvals, fvals = sess.run([t, grads, fed], {ph: x8, phc: c[0].astype(np.complex64)})
        out["values"] = {k: np.stack([v.real, v.imag], -1) if np.iscomplexobj(v) else v for k, v in vals.items()}
        out["fed"] = {k: np.stack([v.real, v.imag], -1) if np.iscomplexobj(v) else v for k, v in fvals.items()}
        out["grads"] = gvals
        out["shapes"] = shapes
        out["dtypes"] = dtypes
        out["errors"] = {
            "fft_float": err(lambda: tf.fft(tf.constant([1.0, 2.0]))),
            "rfft_int": err(lambda: tf.signal.rfft(tf.constant([1, 2]))),
            "rfft_complex": err(lambda: tf.signal.rfft(tf.constant(c))),
            "rfft_scalar": err(lambda: tf.signal.rfft(tf.constant(1.0))),
            "rfft2d_rank1": err(lambda: tf.signal.rfft2d(tf.constant([1.0, 2.0]))),
            "irfft_float": err(lambda: tf.signal.irfft(tf.constant([1.0, 2.0]))),
            "complex_mixed": err(lambda: tf.complex(tf.constant(1.0), tf.constant(1.0, tf.float64))),
            "complex_int": err(lambda: tf.complex(tf.constant(1), tf.constant(2))),
            "dct_type5": err(lambda: tf.signal.dct(tf.constant([1.0, 2.0]), type=5)),
            "dct1_ortho": err(lambda: tf.signal.dct(tf.constant([1.0, 2.0]), type=1, norm="ortho")),
            "dct1_short": err(lambda: tf.signal.dct(tf.constant([1.0]), type=1)),
            "dct_axis": err(lambda: tf.signal.dct(tf.constant([1.0, 2.0]), axis=0)),
            "dct_norm": err(lambda: tf.signal.dct(tf.constant([1.0, 2.0]), norm="forward")),
            "frame_vector_length": err(lambda: tf.signal.frame(tf.constant([1.0, 2.0]), [1, 2], 1)),
            "frame_scalar": err(lambda: tf.signal.frame(tf.constant(1.0), 1, 1)),
            "ola_float_step": err(lambda: tf.signal.overlap_and_add(tf.ones([2, 2]), 1.0)),
            "ola_rank1": err(lambda: tf.signal.overlap_and_add(tf.ones([2]), 1)),
            "window_int": err(lambda: tf.signal.hann_window(4, dtype=tf.int32)),
            "mel_bins": err(lambda: tf.signal.linear_to_mel_weight_matrix(0)),
            "mel_nyquist": err(lambda: tf.signal.linear_to_mel_weight_matrix(upper_edge_hertz=5000.0)),
            "mdct_len": err(lambda: tf.signal.mdct(tf.ones([16]), 6)),
        }
        xg = tf.ones([2, 2, 2])
        out["errors"]["rfft3d_grad"] = err(lambda: tf.gradients(
            tf.reduce_sum(tf.real(tf.signal.rfft3d(xg))), xg))
    return out
