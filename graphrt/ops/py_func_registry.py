"""The callbacks behind `tf.py_func` ops, and who may call them.

A PyFunc node names its callback by a token. Tokens are random
(`secrets.token_hex`), so a peer cannot guess one; and because a token can
still leak (it travels inside every graph that uses it), a graph that
arrives over the network may only call callbacks this process *granted*:

* `grant(token_or_tensor)` allows graphs registered by other processes to
  call a callback (the hosting program's explicit decision);
* a cluster session (its master backend) of this process grants the callbacks of the graphs it
  registers itself (its workers may live in this process too).

`check_registered_graph(graph_def, task)` is what a worker runs on every
RegisterGraph: a PyFunc whose token is not granted is refused with an
InvalidArgumentError naming the node and the token. A callback and its
grant are forgotten when the graph that created it is garbage-collected.
"""
import secrets
import threading
import weakref

from .. import errors

PY_FUNC_OPS = frozenset(("PyFunc", "PyFuncStateless"))

_lock = threading.Lock()
_funcs = {}       # token -> callable
_granted = set()  # tokens graphs from other processes may call


def register(func, graph):
    """A new unguessable token for `func`, valid while `graph` lives."""
    token = f"pyfunc_{secrets.token_hex(16)}"
    with _lock:
        _funcs[token] = func
    weakref.finalize(graph, _forget, token)
    return token


def _forget(token):
    with _lock:
        _funcs.pop(token, None)
        _granted.discard(token)


def lookup(token):
    """The callback for `token`, or None."""
    return _funcs.get(token)


def grant(token_or_op):
    """Lets graphs registered by other processes call this py_func (a token, its op or an output tensor)."""
    token = _token_of(token_or_op)
    with _lock:
        if token not in _funcs:
            raise errors.NotFoundError(f"No py_func callback with token {token!r} in this process")
        _granted.add(token)
    return token


def revoke(token_or_op):
    with _lock:
        _granted.discard(_token_of(token_or_op))


def is_granted(token):
    return token in _granted


def _token_of(value):
    if isinstance(value, str):
        return value
    op = getattr(value, "op", value)
    if getattr(op, "type", None) not in PY_FUNC_OPS:
        raise TypeError(f"Expected a py_func token, op or tensor, got {value!r}")
    return op.get_attr("token")


def tokens_in(graph_def):
    """(node name, token) of every PyFunc node of a GraphDef."""
    return [(n.name, n.attrs.get("token")) for n in graph_def.node if n.op in PY_FUNC_OPS]


def grant_graph(graph_def):
    """Grants the callbacks a graph of this process uses (its own cluster session registers it)."""
    with _lock:
        for _, token in tokens_in(graph_def):
            if token in _funcs:
                _granted.add(token)


def check_registered_graph(graph_def, task):
    """Refuses a graph from the network that calls a callback this process has not granted."""
    for name, token in tokens_in(graph_def):
        if type(token) is not str or token not in _granted or token not in _funcs:
            raise errors.InvalidArgumentError(
                f"Node {name} calls py_func {str(token)[:80]!r}, which {task} has not granted to graphs "
                f"registered by other processes (py_func callbacks run only in the process that created "
                f"them, or where that process granted them)", node=name)
