"""Per-device allocator memory of a traced step in RunMetadata.step_stats."""
import graphrt as tf
from graphrt.executor import BFCAllocator, HeapAllocator

SIM = "/job:localhost/replica:0/task:0/device:SIM:0"
FULL = tf.RunOptions(trace_level=tf.RunOptions.FULL_TRACE)


def test_a_step_reports_peak_and_in_use_bytes_of_the_sim_arena(graph):
    with tf.device("/device:SIM:0"):
        v = tf.Variable(tf.zeros([1024]), name="v")  # 4 KiB, held across steps
        big = tf.reduce_sum(tf.tile(tf.expand_dims(v, 0), [64, 1]))  # a 256 KiB temporary
        small = v + 1.0
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 1, "SIM": 1})) as sess:
        sess.run(v.initializer)
        md_big, md_small = tf.RunMetadata(), tf.RunMetadata()
        sess.run(big, options=FULL, run_metadata=md_big)
        sess.run(small, options=FULL, run_metadata=md_small)
    by_device = {d.device: d for d in md_big.step_stats.dev_stats}
    (used,) = by_device[SIM].memory
    assert used.allocator_name.startswith("sim")
    assert used.peak_bytes >= 4096 + 64 * 4096  # the variable and the tiled temporary at once
    assert 4096 <= used.live_bytes <= 4096 + 4  # the temporary is gone; the variable (and the sum) stay
    assert 4096 <= used.allocator_bytes_in_use < 64 * 4096
    assert used.total_bytes >= 64 * 4096
    # the peak is the step's, not the arena's lifetime high-water mark
    peak_small, in_use_small, live_small = tf.distribute.device_memory(md_small)[SIM]
    assert 4096 <= peak_small < 64 * 4096 and in_use_small >= live_small >= 4096
    # CPU devices have no graphrt allocator: no memory entry
    assert all(not d.memory for d in md_big.step_stats.dev_stats if d.device != SIM)


def test_memory_watches_are_per_interval_on_both_allocators():
    for allocator in (BFCAllocator(1 << 20, name="sim:9"), HeapAllocator(name="host:9")):
        keep = allocator.allocate(1000)
        watch = allocator.start_watch()
        a = allocator.allocate(5000)
        allocator.deallocate(a)
        b = allocator.allocate(100)
        assert allocator.stop_watch(watch) is watch
        allocator.allocate(50000)  # after the watch: not counted
        rounded = 1024 if isinstance(allocator, BFCAllocator) else 1000
        assert watch.start_bytes == rounded
        assert watch.num_allocs == 2
        assert watch.peak_bytes == rounded + (5120 if rounded == 1024 else 5000)
        assert watch.end_bytes == rounded + (256 if rounded == 1024 else 100)
        assert watch.end_requested_bytes == 1100  # what the two live allocations asked for
        allocator.deallocate(b)
        allocator.deallocate(keep)
        assert watch.total_bytes == (5120 + 256 if rounded == 1024 else 5100)
