"""The distributed runtime over ZeroMQ: the wire format (`wire`), client
channels (`channel`), the worker service (`worker`), the cluster and
servers (`cluster`), the master session (`master`), CURVE security
(`security`) and the `graphrt server` entry point (`server_main`).

Importing `graphrt` does not import this package (nor zmq); `tf.train.Server`,
`tf.train.ClusterSpec` and `tf.Session("zmq://...")` load it on first use.
Importing it registers the master as the session backend of 'zmq://' targets
(and of every other non-empty target, whose errors it explains); the master
module itself, and so zmq, loads when the first such session is made.
"""
from ..client import session_backends


def _master_backend(target, config, plans):
    from .master import MasterBackend
    return MasterBackend(target, config, plans)


session_backends.register(["zmq", session_backends.DEFAULT_REMOTE], _master_backend)
