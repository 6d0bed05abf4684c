"""SlurmClusterResolver: the cluster of an `srun` step from its SLURM_* variables.

The step's tasks are numbered in node order (SLURM_STEP_NODELIST, expanded,
with SLURM_STEP_TASKS_PER_NODE tasks on each); task k on a node listens on
`port_base + k`. `jobs` splits the tasks into jobs in order ({"ps": 1,
"worker": 2}: task 0 is ps:0, tasks 1 and 2 are worker:0 and worker:1), and
SLURM_PROCID says which one this process is.
"""
import os
import re

from .base import ClusterResolver


def expand_hostlist(hostlist):
    """Slurm's compressed host list: 'n[01-03,7],gpu5' -> ['n01', 'n02', 'n03', 'n7', 'gpu5']."""
    hosts = []
    for item in _split_top_level(hostlist):
        hosts.extend(_expand_one(item))
    return hosts


def _split_top_level(text):
    parts, depth, current = [], 0, ""
    for ch in text:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
            if depth < 0:
                raise ValueError(f"Unbalanced brackets in host list {text!r}")
        if ch == "," and depth == 0:
            parts.append(current)
            current = ""
        else:
            current += ch
    if depth:
        raise ValueError(f"Unbalanced brackets in host list {text!r}")
    parts.append(current)
    return [p for p in parts if p]


def _expand_one(item):
    m = re.match(r"^([^\[]*)\[([^\]]*)\](.*)$", item)
    if not m:
        return [item]
    prefix, ranges, rest = m.groups()
    out = []
    for r in ranges.split(","):
        if "-" in r:
            lo, hi = r.split("-", 1)
            if not (lo.isdigit() and hi.isdigit()) or int(hi) < int(lo):
                raise ValueError(f"Bad range {r!r} in host list item {item!r}")
            width = len(lo)
            names = [str(i).zfill(width) for i in range(int(lo), int(hi) + 1)]
        else:
            if not r.isdigit():
                raise ValueError(f"Bad number {r!r} in host list item {item!r}")
            names = [r]
        for name in names:
            out.extend(prefix + name + tail for tail in _expand_one(rest) or [""])
    return out


def expand_tasks_per_node(text):
    """'2(x3),1' -> [2, 2, 2, 1]."""
    counts = []
    for part in text.split(","):
        m = re.fullmatch(r"(\d+)(?:\(x(\d+)\))?", part.strip())
        if not m:
            raise ValueError(f"Bad SLURM_STEP_TASKS_PER_NODE entry {part!r} in {text!r}")
        counts.extend([int(m.group(1))] * int(m.group(2) or 1))
    return counts


class SlurmClusterResolver(ClusterResolver):
    def __init__(self, jobs=None, port_base=8888, gpus_per_node=None, gpus_per_task=None, tasks_per_node=None,
                 auto_set_gpu=True, rpc_layer="zmq", environ=None):
        env = environ if environ is not None else os.environ
        self.rpc_layer = rpc_layer
        self._port_base = int(port_base)
        self._gpus_per_node, self._gpus_per_task = gpus_per_node, gpus_per_task
        proc_id = int(_need(env, "SLURM_PROCID"))
        nodes = expand_hostlist(_first(env, "SLURM_STEP_NODELIST", "SLURM_JOB_NODELIST", "SLURM_NODELIST"))
        if tasks_per_node is not None:
            per_node = tasks_per_node if isinstance(tasks_per_node, dict) else {n: int(tasks_per_node) for n in nodes}
            counts = [int(per_node[n]) for n in nodes]
        else:
            counts = expand_tasks_per_node(_first(env, "SLURM_STEP_TASKS_PER_NODE", "SLURM_TASKS_PER_NODE"))
        if len(counts) != len(nodes):
            raise ValueError(f"SLURM_STEP_TASKS_PER_NODE gives {len(counts)} nodes but SLURM_STEP_NODELIST has "
                             f"{len(nodes)}: {nodes}")
        addresses = [f"{node}:{self._port_base + k}" for node, n in zip(nodes, counts) for k in range(n)]
        num_tasks = int(_first(env, "SLURM_STEP_NUM_TASKS", "SLURM_NTASKS", default=str(len(addresses))))
        if num_tasks != len(addresses):
            raise ValueError(f"SLURM_STEP_NUM_TASKS is {num_tasks} but the nodes hold {len(addresses)} tasks")
        jobs = dict(jobs) if jobs else {"worker": num_tasks}
        if sum(jobs.values()) != num_tasks:
            raise ValueError(f"The jobs {jobs} ask for {sum(jobs.values())} tasks but the Slurm step has {num_tasks}")
        if not 0 <= proc_id < num_tasks:
            raise ValueError(f"SLURM_PROCID {proc_id} is out of range for {num_tasks} tasks")
        self._cluster, start = {}, 0
        for job, n in jobs.items():
            self._cluster[job] = addresses[start:start + n]
            if start <= proc_id < start + n:
                self.task_type, self.task_id = job, proc_id - start
            start += n

    def cluster_spec(self):
        from ...distributed.cluster import ClusterSpec
        return ClusterSpec(self._cluster)

    def num_accelerators(self, task_type=None, task_id=None, config_proto=None):
        gpus = self._gpus_per_task or self._gpus_per_node or 0
        return {"GPU": gpus} if gpus else {}


def _need(env, name):
    if name not in env or env[name] == "":
        raise ValueError(f"{name} is not set: SlurmClusterResolver runs inside an srun step")
    return env[name]


def _first(env, *names, default=None):
    for name in names:
        if env.get(name):
            return env[name]
    if default is not None:
        return default
    raise ValueError(f"None of {', '.join(names)} is set: SlurmClusterResolver runs inside an srun step")
