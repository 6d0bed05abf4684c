"""tf.distribute.cluster_resolver: TFConfigClusterResolver and SlurmClusterResolver
from synthetic environments, and the errors for bad ones."""
import json
import sys

import pytest

import graphrt as tf
from graphrt.distribute.cluster_resolver import expand_hostlist, expand_tasks_per_node

resolvers = tf.distribute.cluster_resolver


def _tf_config(**config):
    return {"TF_CONFIG": json.dumps(config)}


def test_tf_config_resolver():
    env = _tf_config(cluster={"ps": ["ps-0.svc:2222"], "worker": ["w-0.svc:2222", "w-1.svc:2222"]},
                     task={"type": "worker", "index": 1}, environment="cloud")
    r = resolvers.TFConfigClusterResolver(environ=env)
    assert (r.task_type, r.task_id) == ("worker", 1)
    assert r.cluster_spec().as_dict() == {"ps": ["ps-0.svc:2222"], "worker": ["w-0.svc:2222", "w-1.svc:2222"]}
    assert r.master() == "zmq://w-1.svc:2222"
    assert r.master("ps", 0) == "zmq://ps-0.svc:2222"
    assert r.environment == "cloud"
    assert resolvers.TFConfigClusterResolver(environ={}).master() == ""


@pytest.mark.parametrize("text, message", [
    ("{not json", "TF_CONFIG is not valid JSON"),
    ("[1, 2]", "TF_CONFIG must be a JSON object"),
    (json.dumps({"cluster": {"worker": ["a:1"]}, "task": {"type": "worker", "index": 3}}),
     "TF_CONFIG task index 3 is out of range for job 'worker'"),
    (json.dumps({"cluster": {"worker": ["a:1"]}, "task": {"type": "chief", "index": 0}}),
     "TF_CONFIG task type 'chief' is not a job of its cluster"),
    (json.dumps({"cluster": {"worker": ["no-port"]}}), "TF_CONFIG 'cluster' is invalid"),
])
def test_tf_config_errors_name_the_variable(text, message):
    with pytest.raises(ValueError, match=message):
        resolvers.TFConfigClusterResolver(environ={"TF_CONFIG": text})


def test_master_of_a_missing_task():
    r = resolvers.TFConfigClusterResolver(environ=_tf_config(cluster={"worker": ["a:1"]}))
    with pytest.raises(ValueError, match=r"Task /job:worker/task:5 is not in the cluster"):
        r.master("worker", 5)


def test_hostlist_and_tasks_per_node_expansion():
    assert expand_hostlist("n[01-03,7],gpu5") == ["n01", "n02", "n03", "n7", "gpu5"]
    assert expand_hostlist("rack[1-2]-n[0-1]") == ["rack1-n0", "rack1-n1", "rack2-n0", "rack2-n1"]
    assert expand_tasks_per_node("2(x3),1") == [2, 2, 2, 1]
    with pytest.raises(ValueError, match="Unbalanced brackets"):
        expand_hostlist("n[1-2")
    with pytest.raises(ValueError, match="Bad SLURM_STEP_TASKS_PER_NODE entry"):
        expand_tasks_per_node("2(y3)")


def _slurm(proc_id, nodes="node[1-2]", per_node="2(x2)", ntasks="4"):
    return {"SLURM_PROCID": str(proc_id), "SLURM_STEP_NODELIST": nodes, "SLURM_STEP_TASKS_PER_NODE": per_node,
            "SLURM_STEP_NUM_TASKS": ntasks}


def test_slurm_resolver_splits_tasks_into_jobs():
    jobs = {"ps": 1, "worker": 3}
    got = [resolvers.SlurmClusterResolver(jobs=jobs, port_base=9000, environ=_slurm(i)) for i in range(4)]
    assert got[0].cluster_spec().as_dict() == {"ps": ["node1:9000"],
                                              "worker": ["node1:9001", "node2:9000", "node2:9001"]}
    assert [(r.task_type, r.task_id) for r in got] == [("ps", 0), ("worker", 0), ("worker", 1), ("worker", 2)]
    assert got[2].master() == "zmq://node2:9000"
    default = resolvers.SlurmClusterResolver(environ=_slurm(3))
    assert (default.task_type, default.task_id) == ("worker", 3)


@pytest.mark.parametrize("env, message", [
    ({}, "SLURM_PROCID is not set"),
    (_slurm(4), "SLURM_PROCID 4 is out of range for 4 tasks"),
    (_slurm(0, per_node="2"), "SLURM_STEP_TASKS_PER_NODE gives 1 nodes but SLURM_STEP_NODELIST has 2"),
    (_slurm(0, ntasks="5"), "SLURM_STEP_NUM_TASKS is 5 but the nodes hold 4 tasks"),
])
def test_slurm_errors_name_the_variable(env, message):
    with pytest.raises(ValueError, match=message):
        resolvers.SlurmClusterResolver(environ=env)


def test_slurm_jobs_must_cover_the_tasks():
    with pytest.raises(ValueError, match=r"ask for 2 tasks but the Slurm step has 4"):
        resolvers.SlurmClusterResolver(jobs={"ps": 1, "worker": 1}, environ=_slurm(0))


def _server(env_extra, *args):
    import os
    import subprocess
    root = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    env = dict(os.environ, PYTHONPATH=root, **env_extra)
    return subprocess.Popen([sys.executable, "-m", "graphrt.cli", "server", *args], env=env, cwd=root,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def test_graphrt_server_takes_its_task_from_tf_config():
    from graphrt.distributed.cluster import free_port
    port = free_port()
    env = _tf_config(cluster={"ps": [f"127.0.0.1:{port}"], "worker": ["127.0.0.1:1"]}, task={"type": "ps", "index": 0})
    proc = _server(env, "--resolver", "tf_config")
    try:
        line = proc.stdout.readline()
        assert f"/job:ps/replica:0/task:0 listening on tcp://127.0.0.1:{port}" in line, proc.stderr.read()
        if sys.platform.startswith("linux"):  # and on the Unix socket processes of this machine use
            assert f"tcp://127.0.0.1:{port} and ipc://@graphrt/127.0.0.1:{port}" in line
    finally:
        proc.terminate()
        proc.wait(30)
        proc.stdout.close()
        proc.stderr.close()


def test_graphrt_server_rejects_a_bad_tf_config_in_bounded_time():
    proc = _server({"TF_CONFIG": "{oops"}, "--resolver", "tf_config")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 2
    assert "TF_CONFIG is not valid JSON" in err
