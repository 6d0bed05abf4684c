"""Fixtures for the reliability tests: worker processes and in-process servers, always stopped."""
import pytest

import graphrt as tf

from ..distributed.harness import ProcessCluster


@pytest.fixture
def make_cluster(tmp_path):
    """make_cluster(n, **kw) -> a fresh ProcessCluster, killed after the test."""
    made = []

    def make(num_tasks, **kw):
        cluster = ProcessCluster(num_tasks, tmp_path, **kw)
        made.append(cluster)
        return cluster
    try:
        yield make
    finally:
        for cluster in made:
            cluster.close()


@pytest.fixture
def local_server():
    """An in-process one-task server (this test process hosts it), stopped after the test."""
    server = tf.train.Server.create_local_server()
    try:
        yield server
    finally:
        server.stop()
