"""Small helpers shared by test modules."""
import graphrt as tf


def run(fetches, feed_dict=None):
    """Evaluates `fetches` in a fresh session on the current default graph."""
    with tf.Session(graph=tf.get_default_graph()) as sess:
        return sess.run(fetches, feed_dict)


def graphrt_cycles(run, steps=20):
    """Counts, by type, the graphrt objects that `steps` calls of `run` made and left in reference
    cycles: garbage only the cyclic collector frees (a step's tensors with it, and late). Calls
    `run` a few times first, so that caches filled once do not count, and leaves out objects that
    existed before (an earlier test's session may become garbage meanwhile)."""
    import collections
    import gc
    for _ in range(3):
        run()
    gc.collect()
    before = {id(o) for o in gc.get_objects()}
    gc.set_debug(gc.DEBUG_SAVEALL)  # what the collector finds is kept in gc.garbage, not freed
    try:
        for _ in range(steps):
            run()
        gc.collect()
        return collections.Counter(type(o).__qualname__ for o in gc.garbage
                                   if type(o).__module__.startswith("graphrt") and id(o) not in before)
    finally:
        gc.set_debug(0)
        gc.garbage.clear()
