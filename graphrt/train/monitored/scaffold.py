"""`tf.train.Scaffold`: the ops a monitored session needs to create, check and save a model.

`finalize()` fills what the user left out (as TF1 does): `init_op` and
`local_init_op` initialize global and local variables (and lookup tables); `ready_op` lists
the variables still uninitialized (the model is ready when it is empty);
`ready_for_local_init_op` lists the uninitialized *global* variables (a
non-chief may run its local init once the chief has initialized those);
`summary_op` merges every summary; `saver` is the graph's Saver or a new
one. Each default is looked up in its graph collection first, so ops made
by another Scaffold of the same graph are reused. Then the graph is
finalized: no op can be added by accident inside the training loop.
"""
from ...framework.graph import GraphKeys, get_default_graph
from ...ops import control_ops
from ...ops import variables as variables_lib

READY_OP = "ready_op"
READY_FOR_LOCAL_INIT_OP = "ready_for_local_init_op"
SUMMARY_OP = "summary_op"


class Scaffold:
    def __init__(self, init_op=None, init_feed_dict=None, init_fn=None, ready_op=None,
                 ready_for_local_init_op=None, local_init_op=None, summary_op=None, saver=None,
                 copy_from_scaffold=None, local_init_feed_dict=None):
        if copy_from_scaffold is not None:
            if not isinstance(copy_from_scaffold, Scaffold):
                raise TypeError("copy_from_scaffold is not a Scaffold instance.")
            base = copy_from_scaffold
            init_op = init_op if init_op is not None else base.init_op
            init_feed_dict = init_feed_dict if init_feed_dict is not None else base._init_feed_dict
            init_fn = init_fn if init_fn is not None else base._user_init_fn
            ready_op = ready_op if ready_op is not None else base.ready_op
            ready_for_local_init_op = ready_for_local_init_op if ready_for_local_init_op is not None else \
                base.ready_for_local_init_op
            local_init_op = local_init_op if local_init_op is not None else base.local_init_op
            local_init_feed_dict = local_init_feed_dict if local_init_feed_dict is not None else \
                base._local_init_feed_dict
            summary_op = summary_op if summary_op is not None else base.summary_op
            saver = saver if saver is not None else base.saver
        self._user_init_fn = init_fn
        # TF calls init_fn(scaffold, session); the user's function takes both too.
        self._init_fn = (lambda sess: init_fn(self, sess)) if init_fn else None
        self._init_op = init_op
        self._init_feed_dict = init_feed_dict
        self._ready_op = ready_op
        self._ready_for_local_init_op = ready_for_local_init_op
        self._local_init_op = local_init_op
        self._local_init_feed_dict = local_init_feed_dict
        self._summary_op = summary_op
        self._saver = saver
        self._finalized = False

    def finalize(self):
        """Creates the missing ops, then finalizes the graph. Returns self."""
        if self._finalized:
            return self
        graph = get_default_graph()
        with graph.as_default():
            if self._init_op is None:
                self._init_op = _get_or_default(graph, GraphKeys.INIT_OP, variables_lib.global_variables_initializer)
            if self._ready_op is None:
                self._ready_op = _get_or_default(graph, READY_OP, variables_lib.report_uninitialized_variables)
            if self._ready_for_local_init_op is None:
                self._ready_for_local_init_op = _get_or_default(
                    graph, READY_FOR_LOCAL_INIT_OP,
                    lambda: variables_lib.report_uninitialized_variables(variables_lib.global_variables(),
                                                                         name="report_uninitialized_globals"))
            if self._local_init_op is None:
                self._local_init_op = _get_or_default(graph, GraphKeys.LOCAL_INIT_OP, _default_local_init_op)
            if self._summary_op is None:
                from ...summary import merge_all
                self._summary_op = _get_or_default(graph, SUMMARY_OP, merge_all)
            if self._saver is None:
                self._saver = _default_saver(graph)
        graph.finalize()
        self._finalized = True
        return self

    @property
    def init_fn(self):
        return self._init_fn

    @property
    def init_op(self):
        return self._init_op

    @property
    def ready_op(self):
        return self._ready_op

    @property
    def ready_for_local_init_op(self):
        return self._ready_for_local_init_op

    @property
    def local_init_op(self):
        return self._local_init_op

    @property
    def local_init_feed_dict(self):
        return self._local_init_feed_dict

    @property
    def summary_op(self):
        return self._summary_op

    @property
    def saver(self):
        return self._saver

    @property
    def init_feed_dict(self):
        return self._init_feed_dict

    @staticmethod
    def get_or_default(arg_name, collection_key, default_constructor):
        """The single op in `collection_key`, else `default_constructor()` (added to the collection)."""
        return _get_or_default(get_default_graph(), collection_key, default_constructor)

    @staticmethod
    def default_local_init_op():
        return _default_local_init_op()

    def __repr__(self):
        return f"<Scaffold {'finalized' if self._finalized else 'not finalized'}>"


def _get_or_default(graph, key, make):
    found = graph.get_collection(key)
    if len(found) > 1:
        raise RuntimeError(f"More than one item in collection {key}. Please indicate which one to use by passing "
                           f"it to the constructor.")
    if found:
        return found[0]
    op = make()
    if op is not None:
        graph.add_to_collection(key, op)
    return op


def _default_local_init_op():
    # As TF: local variables and every lookup table (tables register their initializers in a collection).
    tables = get_default_graph().get_collection(GraphKeys.TABLE_INITIALIZERS)
    return control_ops.group(variables_lib.local_variables_initializer(), *tables, name="local_init")


def _default_saver(graph):
    savers = graph.get_collection(GraphKeys.SAVERS)
    if savers:
        if len(savers) > 1:
            raise RuntimeError(f"More than one item in collection {GraphKeys.SAVERS}. Please indicate which one to "
                               f"use by passing it to the constructor.")
        return savers[0]
    from ..saver import Saver
    return Saver(allow_empty=True, max_to_keep=5)


