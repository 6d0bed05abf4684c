"""Cross-process tensor transfer: the remote rendezvous next to raw pyzmq.

Two processes on 127.0.0.1. The child runs a graphrt worker service (task 0
of a two-task cluster) plus a raw pyzmq ROUTER; the parent runs task 1.
For each size (4 B, 64 KiB, 1 MiB, 16 MiB, 64 MiB) the child sends a tensor
into its step rendezvous under N keys, and the parent's RemoteRendezvous
receives them one after another: each recv is one RecvTensor round trip
(request, the sender's long-poll answer, a zero-copy tensor frame into
np.frombuffer). The raw figure is a DEALER->ROUTER round trip of a tiny
request answered with the same bytes (copy=False both ways) between the same
two processes, over the transport the pulls use (`transports`: a Unix socket
between processes of one machine, see graphrt/distributed/loopback.py). Over
that socket, tensors of 64 KiB to 16 MiB are handed over in shared memory
(graphrt/distributed/shared_payload.py): `shared_share` says which share of
each size's timed pulls took that path (GRAPHRT_SHARED_PAYLOAD=0 in the
environment measures the socket path alone). Prints one JSON object: per size the median (and p90)
latency, the throughput, and the ratios rendezvous/raw.

    python benchmarks/remote_transfer.py [--quick]
"""
import argparse
import json
import multiprocessing as mp
import os
import sys
import time

import numpy as np

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, ".."))
sys.path.insert(0, HERE)
from _util import cpu_model  # noqa: E402

SIZES = [4, 64 << 10, 1 << 20, 16 << 20, 64 << 20]
REFERENCE = {"tensorflow_grpc": {"1MiB_MBps": 625, "4B_latency_us": 1200}, "raw_pyzmq_note": "~3.2 GB/s"}


def iterations(size, quick):
    n = 2000 if size <= 4096 else 1000 if size <= 1 << 16 else 200 if size <= 1 << 20 else \
        30 if size <= 16 << 20 else 10
    return max(5, n // 5) if quick else n


def value_of(size):
    if size % 4 == 0:
        return np.ones(size // 4, np.float32)
    return np.ones(size, np.uint8)


def child(cluster, raw_port, control_port):
    import zmq
    from graphrt.distributed import loopback
    from graphrt.distributed.worker import WorkerService
    from graphrt.rendezvous import ParsedKey
    service = WorkerService(cluster, "worker", 0)
    device = service.devices[0]
    ctx = zmq.Context()
    raw = ctx.socket(zmq.ROUTER)
    # Where a graphrt server listens too (loopback.py): the floor uses the transport graphrt's pulls use.
    for endpoint in [f"tcp://127.0.0.1:{raw_port}"] + loopback.server_endpoints("127.0.0.1", raw_port):
        raw.bind(endpoint)
    control = ctx.socket(zmq.REP)
    control.bind(f"tcp://127.0.0.1:{control_port}")
    buffers = {}
    poller = zmq.Poller()
    poller.register(raw, zmq.POLLIN)
    poller.register(control, zmq.POLLIN)
    while True:
        for sock, _ in poller.poll():
            if sock is raw:
                ident, request = raw.recv_multipart(copy=False)
                size = int(bytes(request.buffer))
                buf = buffers.get(size)
                if buf is None:
                    buf = buffers[size] = value_of(size)
                raw.send_multipart([ident, buf], copy=False)
            else:
                cmd = json.loads(control.recv())
                if cmd["op"] == "device":
                    control.send_json({"name": device.name, "incarnation": device.incarnation})
                elif cmd["op"] == "prepare":
                    rendezvous = service.rendezvous.find_or_create(cmd["step"])
                    value = value_of(cmd["size"])
                    base = ParsedKey(device.name, device.incarnation, cmd["dst"], "edge_1_bench")
                    for i in range(cmd["n"]):
                        rendezvous.send(base.with_frame_iter(0, i), value)
                    control.send_json({"ok": True})
                elif cmd["op"] == "cleanup":
                    service.rendezvous.cleanup(cmd["step"])
                    control.send_json({"ok": True})
                else:
                    control.send_json({"ok": True})
                    service.stop()
                    return


def summarize(times, size):
    times = np.asarray(times)
    median = float(np.median(times))
    return {"median_us": round(median * 1e6, 1), "p90_us": round(float(np.percentile(times, 90)) * 1e6, 1),
            "MBps": round(size / median / 1e6, 3 if size < 1 << 16 else 1), "_median": median}


def chained_recvs(receiver, command, base, step, size, n, dst):
    """Seconds per recv when each one is asked for from the previous one's callback, as a step's
    executor does (it continues on the thread that delivered the tensor): no hand-off back to a
    waiting caller between round trips. The figure to set against the raw mean round trip."""
    import threading
    command(op="prepare", step=step, size=size, n=n, dst=dst)
    rendezvous = receiver.rendezvous.find_or_create(step)
    finished = threading.Event()
    failures = []

    def ask(i):
        def done(error, value, is_dead):
            if error is not None or value.nbytes != size:
                failures.append(error or value.nbytes)
                finished.set()
            elif i + 1 < n:
                ask(i + 1)
            else:
                finished.set()
        rendezvous.recv_async(base.with_frame_iter(0, i), done)
    t0 = time.perf_counter()
    ask(0)
    if not finished.wait(120) or failures:
        raise RuntimeError(f"chained recvs failed: {failures or 'timed out'}")
    took = (time.perf_counter() - t0) / n
    receiver.rendezvous.cleanup(step)
    command(op="cleanup", step=step)
    return took


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--quick", action="store_true", help="fewer iterations")
    args = ap.parse_args(argv)
    import zmq
    from graphrt.distributed import loopback
    from graphrt.distributed.cluster import ClusterSpec, free_port
    from graphrt.distributed.worker import WorkerService
    from graphrt.rendezvous import ParsedKey
    ports = []
    while len(ports) < 4:
        p = free_port()
        if p not in ports:
            ports.append(p)
    cluster = ClusterSpec({"worker": [f"127.0.0.1:{ports[0]}", f"127.0.0.1:{ports[1]}"]})
    ctx = mp.get_context("spawn")
    proc = ctx.Process(target=child, args=(cluster.as_dict(), ports[2], ports[3]), daemon=True)
    proc.start()
    zctx = zmq.Context()
    control = zctx.socket(zmq.REQ)
    control.connect(f"tcp://127.0.0.1:{ports[3]}")
    receiver = WorkerService(cluster, "worker", 1)
    dst = receiver.devices[0].name

    def command(**cmd):
        control.send_json(cmd)
        return control.recv_json()

    src = command(op="device")  # the child listens from now on: both connections can choose their transport
    raw = zctx.socket(zmq.DEALER)
    raw_endpoint = loopback.connect_endpoint(f"tcp://127.0.0.1:{ports[2]}")
    raw.connect(raw_endpoint)
    base = ParsedKey(src["name"], src["incarnation"], dst, "edge_1_bench")
    results = []
    step = 1
    try:
        for size in SIZES:
            n = iterations(size, args.quick)
            request = str(size).encode()
            raw_times, rdv_times = [], []
            # warm up both paths (connections, allocator, page cache)
            for _ in range(3):
                raw.send(request)
                np.frombuffer(raw.recv(copy=False).buffer, np.uint8)
            command(op="prepare", step=step, size=size, n=3, dst=dst)
            rendezvous = receiver.rendezvous.find_or_create(step)
            for i in range(3):
                rendezvous.recv(base.with_frame_iter(0, i), timeout=60)
            receiver.rendezvous.cleanup(step)
            command(op="cleanup", step=step)
            step += 1
            # Interleave raw and rendezvous round trips one by one, so that load from anything
            # else on the machine hits both alike; N keys are sent (by reference) up front.
            command(op="prepare", step=step, size=size, n=n, dst=dst)
            rendezvous = receiver.rendezvous.find_or_create(step)
            policy = receiver.channels.spin_policy
            ops_before, spun_before = policy.operations, policy.spun
            reader = receiver.channels.payload_reader(f"tcp://127.0.0.1:{ports[0]}")
            reads_before = reader.reads if reader is not None else 0
            for i in range(n):
                t0 = time.perf_counter()
                raw.send(request)
                frame = raw.recv(copy=False)
                arr = np.frombuffer(frame.buffer, np.uint8)
                raw_times.append(time.perf_counter() - t0)
                assert arr.nbytes == size
                del arr, frame
                key = base.with_frame_iter(0, i)
                t0 = time.perf_counter()
                value, _ = rendezvous.recv(key, timeout=60)
                rdv_times.append(time.perf_counter() - t0)
                assert value.nbytes == size
                del value
            measured = policy.operations - ops_before  # pulls whose reply came while they waited
            spun_share = (policy.spun - spun_before) / measured if measured else None
            shared_share = ((reader.reads - reads_before) / n) if reader is not None else 0.0
            receiver.rendezvous.cleanup(step)
            command(op="cleanup", step=step)
            step += 1
            chained = chained_recvs(receiver, command, base, step, size, n, dst)
            step += 1
            raw_mean = float(np.mean(raw_times))
            raw_s, rdv_s = summarize(raw_times, size), summarize(rdv_times, size)
            ratio = raw_s.pop("_median") / rdv_s.pop("_median")
            results.append({"bytes": size, "iterations": len(rdv_times), "remote_rendezvous": rdv_s,
                            "raw_pyzmq": raw_s, "throughput_ratio": round(ratio, 3),
                            "spun_share": None if spun_share is None else round(spun_share, 3),
                            "shared_share": round(shared_share, 3),
                            "latency_ratio": round(1.0 / ratio, 3),
                            "chained_us_per_recv": round(chained * 1e6, 1),
                            "raw_mean_us": round(raw_mean * 1e6, 1),
                            "chained_throughput_ratio": round(raw_mean / chained, 3)})
        transport = receiver.channels.connections()[f"tcp://127.0.0.1:{ports[0]}"].partition("://")[0]
    finally:
        try:
            command(op="stop")
        except Exception:  # noqa: BLE001
            pass
        proc.join(10)
        if proc.is_alive():
            proc.kill()
        receiver.stop()
        control.close(0)
        raw.close(0)
        zctx.term()
    out = {"benchmark": "remote_transfer", "python": sys.version.split()[0], "numpy": np.__version__,
           "zmq": zmq.zmq_version(), "pyzmq": zmq.__version__, "cpus": os.cpu_count(), "cpu": cpu_model(),
           "what": "one RecvTensor pull of a tensor already sent on the other process vs a raw pyzmq "
                   "DEALER/ROUTER round trip returning the same bytes; `spun_share`: of the timed pulls, "
                   "the share whose wait spun before it slept (graphrt/distributed/spin_policy.py); "
                   "`shared_share`: the share handed over in shared memory (graphrt/distributed/shared_payload.py); "
                   "`chained`: each pull asked for from the previous one's callback (as a step's executor "
                   "continues), against the raw mean round trip",
           "transports": {"remote_rendezvous": transport, "raw_pyzmq": raw_endpoint.partition("://")[0]},
           "results": results, "reference": REFERENCE}
    json.dump(out, sys.stdout, indent=1)
    sys.stdout.write("\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
