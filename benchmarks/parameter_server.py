"""1 ps + 2 worker processes (samples/parameter_server.py) with worker 1 slowed about 3x by a
sleep after each step: sync (SyncReplicasOptimizer), async, and SSP (StalenessBoundHook,
staleness 3). Prints per mode each worker's steps per second, the global steps per
second and, for SSP, the largest clock lead a worker started a step with. With
`--plot out.png` also plots each mode's loss against wall time (matplotlib, the
optional extra: pip install -e '.[plot]').

    python benchmarks/parameter_server.py [--last-step 60] [--staleness 3] [--plot loss.png]
"""
import argparse
import importlib.util
import io
import os
import sys
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from _util import emit  # noqa: E402

# the sample has this script's module name: load it from its path under another one
_spec = importlib.util.spec_from_file_location(
    "parameter_server_sample", os.path.join(os.path.dirname(HERE), "samples", "parameter_server.py"))
sample = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sample)


def run(mode, last_step, staleness, slow_sleep):
    with redirect_stdout(io.StringIO()):  # the workers' progress lines; only JSON goes to stdout
        return sample.launch(mode, last_step, staleness=staleness, slow_sleep=slow_sleep)


def plot_loss_curves(curves, path):
    """Writes {mode: [(seconds, loss), ...]} as loss against wall time to the PNG `path`."""
    import matplotlib
    matplotlib.use("Agg")  # no display needed
    import matplotlib.pyplot as plt
    fig, ax = plt.subplots(figsize=(6, 4))
    for mode, curve in curves.items():
        ax.plot([t for t, _ in curve], [v for _, v in curve], label=mode)
    ax.set_yscale("log")
    ax.set_xlabel("wall time (s)")
    ax.set_ylabel("chief's training loss")
    ax.set_title("1 ps + 2 workers, worker 1 about 3x slower")
    ax.legend()
    fig.tight_layout()  # keeps the axis labels inside the image
    fig.savefig(path)
    plt.close(fig)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--last-step", type=int, default=60)
    parser.add_argument("--staleness", type=int, default=3)
    parser.add_argument("--plot", help="write loss against wall time for the three modes to this PNG")
    args = parser.parse_args()
    # The unslowed pace first: worker 1 then sleeps twice its step time (about 3x slower).
    base = run("async", args.last_step, args.staleness, 0.0)
    step_time = 1.0 / max(r["runs_per_sec"] or 0.0 for r in base)
    slow_sleep = 2.0 * step_time
    figures, curves = {"unslowed_step_ms": round(1000 * step_time, 2), "slow_sleep_ms": round(1000 * slow_sleep, 2),
                       "staleness": args.staleness, "last_step": args.last_step}, {}
    for mode in ("sync", "async", "ssp"):
        results = run(mode, args.last_step, args.staleness, slow_sleep)
        # (a worker that joined after training ended made no run: no curve, no rate)
        elapsed = max(r["loss_curve"][-1][0] for r in results if r["loss_curve"])
        figures[mode] = {
            "fast_worker_steps_per_sec": round(results[0]["runs_per_sec"] or 0.0, 2),
            "slow_worker_steps_per_sec": round(results[1]["runs_per_sec"] or 0.0, 2),
            "global_steps_per_sec": round(max(r["global_step"] for r in results) / elapsed, 2),
            "final_loss": results[0]["last_loss"],
            **({"max_clock_gap": max(r["max_gap"] for r in results)} if mode == "ssp" else {}),
        }
        curves[mode] = results[0]["loss_curve"]
    if args.plot:
        try:
            plot_loss_curves(curves, args.plot)
            figures["plot"] = args.plot
        except ImportError:
            figures["plot"] = "matplotlib is not installed (pip install -e '.[plot]')"
    emit("parameter_server", figures)


if __name__ == "__main__":
    main()
