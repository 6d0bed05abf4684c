"""benchmarks/parameter_server.py --plot: loss against wall time for the three
modes written to a PNG (matplotlib is the optional extra `plot`)."""
import importlib.util
import os

import numpy as np
import pytest

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))


def _benchmark():
    spec = importlib.util.spec_from_file_location("parameter_server_benchmark",
                                                  os.path.join(ROOT, "benchmarks", "parameter_server.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_three_loss_curves_are_plotted_to_a_png(tmp_path):
    pytest.importorskip("matplotlib")
    from PIL import Image
    t = np.linspace(0.0, 3.0, 40)
    curves = {mode: [(float(s), float(2.3 * np.exp(-rate * s) + 0.1)) for s in t]
              for mode, rate in (("sync", 0.5), ("async", 2.0), ("ssp", 1.0))}
    path = tmp_path / "loss.png"
    _benchmark().plot_loss_curves(curves, str(path))
    with open(path, "rb") as f:
        assert f.read(8) == b"\x89PNG\r\n\x1a\n"
    image = np.asarray(Image.open(path).convert("RGB")).reshape(-1, 3)
    colors = {tuple(int(v) for v in c) for c in np.unique(image, axis=0)}
    # one line per mode, in matplotlib's first three cycle colors (C0 blue, C1 orange, C2 green)
    for color in ((0x1f, 0x77, 0xb4), (0xff, 0x7f, 0x0e), (0x2c, 0xa0, 0x2c)):
        assert color in colors


def test_the_benchmark_loads_the_sample_under_its_own_name():
    benchmark = _benchmark()
    assert benchmark.sample.__name__ == "parameter_server_sample"
    assert callable(benchmark.sample.launch)
