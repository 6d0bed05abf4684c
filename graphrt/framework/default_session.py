"""The default session stack, per thread.

It lives in the framework, as TF's ops.py holds it, so that `Tensor.eval`,
`Operation.run`, `Variable.load` and `start_queue_runners` find the session
without importing the client; `client/session.py` pushes sessions onto it
(`Session.as_default()`, `with Session():`, `InteractiveSession`).
"""
import threading


class _DefaultSessionStack(threading.local):
    def __init__(self):
        self.stack = []


_default_sessions = _DefaultSessionStack()


def get_default_session():
    return _default_sessions.stack[-1] if _default_sessions.stack else None


class session_context:
    """Makes `session` the default session of this thread while the context is open."""

    def __init__(self, session):
        self.session = session

    def __enter__(self):
        _default_sessions.stack.append(self.session)
        return self.session

    def __exit__(self, *exc):
        stack = _default_sessions.stack
        if stack and stack[-1] is self.session:
            stack.pop()
        elif self.session in stack:
            stack.remove(self.session)
        return False


def run_with_default(fetch, feed_dict, session, verb):
    """`fetch.eval()` (verb "eval", a tensor) or `fetch.run()` (verb "run", an operation)."""
    session = session or get_default_session()
    if session is None:
        what = "tensor using `eval()`" if verb == "eval" else "operation using `run()`"
        raise ValueError(f"Cannot evaluate {what}: No default session is registered. Use `with "
                         f"sess.as_default()` or pass an explicit session to `{verb}(session=sess)`")
    graph = fetch.graph
    if session.graph is not graph:
        raise ValueError("Cannot use the given session to evaluate tensor: the tensor's graph is different from "
                         "the session's graph.")
    return session.run(fetch, feed_dict)
