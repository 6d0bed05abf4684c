"""1 ps + 2 worker processes (samples/ps_training.py) with worker 1 slowed about 3x by a
sleep after each step: sync (SyncReplicasOptimizer), async, and SSP (StalenessBoundHook,
staleness 3). Prints per mode each worker's steps per second, the global steps per
second and, for SSP, the largest clock lead a worker started a step with. With
`--plot out.png` (matplotlib installed) also plots each mode's loss against wall time.

    python benchmarks/parameter_server.py [--last-step 60] [--staleness 3] [--plot loss.png]
"""
import argparse
import io
import os
import sys
from contextlib import redirect_stdout

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "samples"))
from _util import emit  # noqa: E402
import ps_training  # noqa: E402


def run(mode, last_step, staleness, slow_sleep):
    with redirect_stdout(io.StringIO()):  # the workers' progress lines; only JSON goes to stdout
        return ps_training.launch(mode, last_step, staleness=staleness, slow_sleep=slow_sleep)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--last-step", type=int, default=60)
    parser.add_argument("--staleness", type=int, default=3)
    parser.add_argument("--plot", help="write loss against wall time for the three modes to this PNG")
    args = parser.parse_args()
    # The unslowed pace first: worker 1 then sleeps twice its step time (about 3x slower).
    base = run("async", args.last_step, args.staleness, 0.0)
    step_time = 1.0 / max(r["runs_per_sec"] for r in base)
    slow_sleep = 2.0 * step_time
    figures, curves = {"unslowed_step_ms": round(1000 * step_time, 2), "slow_sleep_ms": round(1000 * slow_sleep, 2),
                       "staleness": args.staleness, "last_step": args.last_step}, {}
    for mode in ("sync", "async", "ssp"):
        results = run(mode, args.last_step, args.staleness, slow_sleep)
        elapsed = max(r["loss_curve"][-1][0] for r in results)
        figures[mode] = {
            "fast_worker_steps_per_sec": round(results[0]["runs_per_sec"], 2),
            "slow_worker_steps_per_sec": round(results[1]["runs_per_sec"], 2),
            "global_steps_per_sec": round(max(r["global_step"] for r in results) / elapsed, 2),
            "final_loss": results[0]["last_loss"],
            **({"max_clock_gap": max(r["max_gap"] for r in results)} if mode == "ssp" else {}),
        }
        curves[mode] = results[0]["loss_curve"]
    if args.plot:
        try:
            import matplotlib
            matplotlib.use("Agg")
            import matplotlib.pyplot as plt
        except ImportError:
            figures["plot"] = "matplotlib is not installed (pip install matplotlib)"
        else:
            for mode, curve in curves.items():
                plt.plot([t for t, _ in curve], [v for _, v in curve], label=mode)
            plt.yscale("log")
            plt.xlabel("wall time (s)")
            plt.ylabel("chief's loss")
            plt.legend()
            plt.savefig(args.plot)
            figures["plot"] = args.plot
    emit("parameter_server", figures)


if __name__ == "__main__":
    main()
