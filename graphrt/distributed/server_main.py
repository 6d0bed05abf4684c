"""`graphrt server --cluster cluster.json --job worker --task 0`: one task in the foreground.

Prints one line when it is serving (`graphrt server: <task> listening on
tcp://host:port and ipc://@graphrt/host:port ...`, the second for processes
of this machine, see loopback.py), then serves until SIGINT or SIGTERM, stops cleanly
(aborting running steps) and exits with status 0. A bad cluster file, an
unknown task or a port already in use exit with status 2 and a message.
"""
import os
import signal
import sys
import threading

from .. import errors


def main(args):
    from ..client.config import ConfigProto
    from ..framework.device_spec import parse_device_count
    from .cluster import ClusterSpec, Server
    try:
        cluster = getattr(args, "cluster_spec", None) or ClusterSpec.from_json_file(args.cluster)
        counts = parse_device_count(getattr(args, "device_count", None) or "CPU:1")
        config = ConfigProto(device_count=counts)
        max_bytes = getattr(args, "max_message_bytes", None)
        if max_bytes:
            config.max_message_bytes = int(max_bytes)
        server = Server(cluster, args.job, args.task, config=config,
                        bind_address=getattr(args, "bind", None) or "127.0.0.1",
                        curve_secret_key=getattr(args, "curve_secret_key", None),
                        curve_authorized=getattr(args, "curve_authorized", None))
    except (ValueError, TypeError, OSError, errors.OpError) as e:
        print(f"graphrt server: {e}", file=sys.stderr)
        return 2
    except Exception as e:  # noqa: BLE001 - zmq.ZMQError (address in use) and friends
        print(f"graphrt server: cannot start {args.job}:{args.task}: {type(e).__name__}: {e}", file=sys.stderr)
        return 2
    stopping = threading.Event()

    def on_signal(signum, frame):
        if not stopping.is_set():
            stopping.set()
            print(f"graphrt server: {signal.Signals(signum).name}, stopping {server.task_name}", flush=True)
            threading.Thread(target=server.stop, daemon=True).start()

    previous = {s: signal.signal(s, on_signal) for s in (signal.SIGINT, signal.SIGTERM)}
    devices = ", ".join(d.name.rsplit("/", 1)[1] for d in server.service.devices)
    secure = " (CURVE)" if getattr(args, "curve_secret_key", None) else ""
    also = "".join(f" and {e}" for e in server.service.loopback_endpoints)  # loopback.py
    print(f"graphrt server: {server.task_name} listening on {server.service.endpoint}{also}{secure} "
          f"pid {os.getpid()} devices [{devices}]", flush=True)
    try:
        server.join()
    finally:
        for s, handler in previous.items():
            signal.signal(s, handler)
        server.stop()
    if server.failure is not None:
        # A live process that no longer serves is worse than a dead one: exit so a supervisor restarts it.
        print(f"graphrt server: {server.task_name} failed: {server.failure.message}", file=sys.stderr, flush=True)
        return 70
    print(f"graphrt server: {server.task_name} stopped", flush=True)
    return 0
