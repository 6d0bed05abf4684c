"""TF1-style programs with TensorFlow's outputs for them: loading, comparing, and
regenerating the outputs.

The sets, each a directory with `cases/` (modules with
`run(tf, np) -> dict`) and `golden/` (TensorFlow's outputs, one .npz per case):

* `conformance/`: the conformance programs of the API contract (multi-device
  partitions, control flow across devices, gradients, training, savers...);
* `.` (this directory): programs for the APIs beyond them (variable_scope,
  tf.layers, tf.losses, RNNs, ...);
* `../data/`: tf.data pipelines (exact element sequences, the end of each).

The tests read only these files, so a clone of the repository runs all of them.

Run the programs against graphrt (from the repository root):

    python tests/tf1_programs/programs.py [--set conformance] [-k NAME]

Regenerate the goldens with TensorFlow 2.21 (tf.compat.v1, eager execution
disabled, tf-keras for tf.layers), never a dependency of graphrt, using a
Python environment where `tensorflow` and `tf_keras` are installed:

    TF_USE_LEGACY_KERAS=1 python tests/tf1_programs/programs.py --impl tf --write

Values are compared by dtype, shape and value: floats with rtol 1e-4 and atol
1e-5, strings and integers exactly.
"""
import argparse
import importlib
import importlib.util
import os
import sys
import traceback

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
SETS = {"conformance": os.path.join(HERE, "conformance"), "programs": HERE,
        "data": os.path.join(os.path.dirname(HERE), "data")}


def case_names(which):
    cases = os.path.join(SETS[which], "cases")
    return sorted(f[:-3] for f in os.listdir(cases) if f.endswith(".py") and not f.startswith("_"))


def load_case(which, name):
    path = os.path.join(SETS[which], "cases", f"{name}.py")
    spec = importlib.util.spec_from_file_location(f"tf1_{which}_{name}", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def golden_path(which, name):
    return os.path.join(SETS[which], "golden", f"{name}.npz")


def golden(which, name):
    with np.load(golden_path(which, name), allow_pickle=False) as z:
        return {k.replace("|", "/"): z[k] for k in z.files}


def run_case(which, name, tf):
    """The case's outputs from implementation `tf`, flattened to {'a/0/b': array}."""
    return flatten(load_case(which, name).run(tf, np), "", {})


def flatten(value, prefix, out):
    if isinstance(value, dict):
        for k in sorted(value):
            flatten(value[k], f"{prefix}/{k}" if prefix else str(k), out)
    elif isinstance(value, (list, tuple)):
        for i, v in enumerate(value):
            flatten(v, f"{prefix}/{i}", out)
    elif value is None:
        out[prefix] = np.array("<None>")
    elif isinstance(value, bytes):
        out[prefix] = np.array(value.decode())
    elif isinstance(value, str):
        out[prefix] = np.array(value)
    else:
        out[prefix] = np.asarray(value)
    return out


def compare(got, want):
    """A list of differences between two flattened outputs; empty when they agree."""
    problems = []
    for key in sorted(set(got) | set(want)):
        if key not in got or key not in want:
            problems.append(f"{key}: {'missing' if key not in got else 'unexpected output'}")
            continue
        g, w = got[key], want[key]
        if g.shape != w.shape:
            problems.append(f"{key}: shape {g.shape} != {w.shape}")
        elif w.dtype.kind in "US":
            if str(g) != str(w):
                problems.append(f"{key}: {g!r} != {w!r}")
        elif g.dtype != w.dtype:
            problems.append(f"{key}: dtype {g.dtype} != {w.dtype}")
        elif w.dtype.kind == "f":
            if not np.allclose(g, w, rtol=1e-4, atol=1e-5, equal_nan=True):
                problems.append(f"{key}: values differ (max abs err {np.max(np.abs(g.astype(np.float64) - w)):.3g})")
        elif not np.array_equal(g, w):
            problems.append(f"{key}: {g!r} != {w!r}")
    return problems


def _load_impl(name):
    if name == "tf":
        os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
        import tensorflow.compat.v1 as tf
        tf.disable_eager_execution()
        tf.logging.set_verbosity(tf.logging.ERROR)
        return tf
    return importlib.import_module(name)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--impl", default="graphrt", help="'graphrt' (default) or 'tf' (tensorflow.compat.v1)")
    ap.add_argument("--set", choices=sorted(SETS), action="append", help="default: every set")
    ap.add_argument("--write", action="store_true", help="write the outputs as the new goldens")
    ap.add_argument("-k", default="", help="only cases whose name contains this")
    args = ap.parse_args(argv)
    tf = _load_impl(args.impl)
    passed = failed = 0
    for which in args.set or sorted(SETS):
        for name in case_names(which):
            if args.k not in name:
                continue
            label = f"{which}/{name}"
            try:
                got = run_case(which, name, tf)
            except Exception as e:  # noqa: BLE001 - a crash is a failure of the implementation
                failed += 1
                print(f"FAIL {label}: raised {type(e).__name__}: {e}")
                traceback.print_exc()
                continue
            if args.write:
                os.makedirs(os.path.dirname(golden_path(which, name)), exist_ok=True)
                np.savez(golden_path(which, name), **{k.replace("/", "|"): v for k, v in got.items()})
                passed += 1
                print(f"wrote {label}")
                continue
            problems = compare(got, golden(which, name))
            passed += not problems
            failed += bool(problems)
            print(f"FAIL {label}: " + "; ".join(problems[:4]) if problems else f"ok   {label}")
    print(f"{passed} passed, {failed} failed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
