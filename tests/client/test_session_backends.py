"""tf.Session is a front end; what runs its plans comes from a table keyed by the target's scheme."""
import numpy as np
import pytest

import graphrt as tf
from graphrt.client import session_backends
from graphrt.client.local_backend import LocalBackend


class _CountingBackend(LocalBackend):
    """The local devices, counting the plans built and steps run (a stand-in for a remote backend)."""

    kind = "(counting)"
    session_attributes = ("counts",)

    def __init__(self, target, config, plans):
        super().__init__("", config, plans)
        self.counts = {"plans": 0, "steps": 0}

    def make_plan(self, *args):
        self.counts["plans"] += 1
        return super().make_plan(*args)

    def execute(self, *args):
        self.counts["steps"] += 1
        return super().execute(*args)


@pytest.fixture
def counting_scheme():
    session_backends.register(["counting"], _CountingBackend)
    try:
        yield "counting://anywhere"
    finally:
        session_backends._factories.pop("counting", None)


def test_a_registered_scheme_chooses_the_backend(counting_scheme):
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [2])
        y = x * 2.0
        with tf.Session(counting_scheme) as sess:
            assert isinstance(sess, tf.Session)
            for v in ([1.0, 2.0], [3.0, 4.0]):
                np.testing.assert_array_equal(sess.run(y, {x: v}), np.multiply(v, 2.0))
            assert sess.counts == {"plans": 1, "steps": 2}  # the session's plan cache is in front
            assert repr(sess) == "<tf.Session 'counting://anywhere' (counting) 1 devices>"
        assert repr(sess) == "<tf.Session 'counting://anywhere' (counting) closed>"


def test_only_the_backends_declared_names_pass_through(counting_scheme):
    with tf.Graph().as_default(), tf.Session() as sess:
        with pytest.raises(AttributeError, match="'Session' object has no attribute 'counts'"):
            sess.counts
    with tf.Graph().as_default(), tf.Session(counting_scheme) as sess:
        with pytest.raises(AttributeError, match="no attribute 'make_plan'"):
            sess.make_plan


def test_the_scheme_of_a_target():
    assert session_backends.scheme_of("") == ""
    assert session_backends.scheme_of(None) == ""
    assert session_backends.scheme_of("zmq://127.0.0.1:2222") == "zmq"
    assert session_backends.scheme_of("127.0.0.1:2222") == session_backends.DEFAULT_REMOTE


def test_targets_no_backend_serves_keep_their_errors():
    with tf.Graph().as_default():
        with pytest.raises(tf.errors.InvalidArgumentError, match="grpc:// targets are TensorFlow's"):
            tf.Session("grpc://localhost:2222")
        with pytest.raises(tf.errors.InvalidArgumentError, match="A session target must be 'zmq://host:port'"):
            tf.Session(5)
