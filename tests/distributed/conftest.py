"""Fixtures for the distributed tests: worker processes that are always killed."""
import pytest

from .harness import ProcessCluster


@pytest.fixture(scope="session")
def cluster2(tmp_path_factory):
    """Two worker processes (one CPU each), shared by the tests that do not hurt them."""
    cluster = ProcessCluster(2, tmp_path_factory.mktemp("cluster2"))
    yield cluster
    cluster.close()


@pytest.fixture
def make_cluster(tmp_path):
    """make_cluster(n, **kw) -> a fresh ProcessCluster, killed after the test."""
    made = []

    def make(num_tasks, **kw):
        cluster = ProcessCluster(num_tasks, tmp_path, **kw)
        made.append(cluster)
        return cluster
    yield make
    for cluster in made:
        cluster.close()


@pytest.fixture(scope="session")
def cluster3(tmp_path_factory):
    """Three worker processes (one CPU each), shared by the MLP and conformance tests."""
    cluster = ProcessCluster(3, tmp_path_factory.mktemp("cluster3"))
    yield cluster
    cluster.close()


@pytest.fixture
def local_task0(make_cluster):
    """(cluster, server): task 0 of a two-task cluster served in this process (its process is killed
    and an in-process server takes its port), task 1 in a process of its own."""
    import graphrt as tf
    cluster = make_cluster(2)
    cluster.kill(0)
    server = tf.train.Server(cluster.cluster, job_name="worker", task_index=0)
    yield cluster, server
    server.stop()
