"""SIM devices with modelled kernel costs: the executor queues the next kernel while
the stream is still busy with the modelled time of the one before (as a host runs
ahead of a GPU), so queued kernels run back to back on the device's clock, and work
on other devices still waits for a kernel's modelled end."""
import numpy as np

import graphrt as tf

LATENCY = 0.05  # seconds per kernel: far longer than the executor needs to queue the next one


def _traced(fetches, sim_count=1):
    config = tf.ConfigProto(device_count={"SIM": sim_count}, sim_options={"kernel_launch_latency": LATENCY})
    with tf.Session(config=config) as sess:
        sess.run(fetches)  # builds the kernels and uploads the constants
        md = tf.RunMetadata()
        out = sess.run(fetches, options=tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE), run_metadata=md)
    return out, md.step_stats


def _events(step_stats, device_index, stream):
    for dev in step_stats.dev_stats:
        if dev.device.endswith(f"SIM:{device_index}"):
            return {ns.node_name: ns for ns in dev.node_stats if ns.stream == stream}
    raise AssertionError(f"no SIM:{device_index} in the step stats")


def test_a_chain_of_queued_kernels_runs_back_to_back(graph):
    with tf.device("/device:SIM:0"):
        x = tf.constant(np.arange(6, dtype=np.float32), name="x")
        y = tf.tanh(tf.add(tf.multiply(x, 2.0, name="a"), 1.0, name="b"), name="c")
        z = tf.multiply(y, 3.0, name="d")
    out, stats = _traced(z)
    np.testing.assert_allclose(out, np.tanh(np.arange(6) * 2.0 + 1.0) * 3.0, rtol=1e-6)
    kernels = _events(stats, 0, "compute")
    chain = [kernels[name] for name in "abcd"]
    for before, after in zip(chain, chain[1:]):
        end = before.all_start_micros + before.all_end_rel_micros
        # Each kernel spans its modelled time, and the next, queued meanwhile, starts where it ends:
        # no gap for the executor's bookkeeping or the stream thread waking late from its sleep.
        assert before.all_end_rel_micros >= LATENCY * 1e6 - 1
        assert 0 <= after.all_start_micros - end <= 1, (before.node_name, after.node_name)


def test_another_device_receives_a_kernels_output_after_its_modelled_end(graph):
    with tf.device("/device:SIM:0"):
        x = tf.constant(np.ones(4, np.float32), name="x")
        y = tf.multiply(x, 2.0, name="y")
    with tf.device("/device:SIM:1"):
        z = tf.add(y, 1.0, name="z")
    out, stats = _traced(z, sim_count=2)
    np.testing.assert_array_equal(out, np.full(4, 3.0, np.float32))
    producer = _events(stats, 0, "compute")["y"]
    copies = list(_events(stats, 0, "d2d").values())
    consumer = _events(stats, 1, "compute")["z"]
    produced = producer.all_start_micros + producer.all_end_rel_micros
    assert copies and all(c.all_start_micros >= produced for c in copies)
    assert consumer.all_start_micros >= max(c.all_start_micros + c.all_end_rel_micros for c in copies)


def test_only_modelled_kernel_costs_make_sim_kernels_complete_at_an_event(graph):
    from graphrt.executor import SimOptions
    assert SimOptions(kernel_launch_latency=1e-6).models_kernel_costs
    assert SimOptions(kernel_bandwidth=1e9).models_kernel_costs
    # A modelled copy alone leaves kernels as they were: finished, outputs ready, when done is called.
    assert not SimOptions(copy_latency=1e-5).models_kernel_costs and SimOptions(copy_latency=1e-5).models_costs
