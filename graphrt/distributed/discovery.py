"""DeviceDiscovery: the devices of every task of a cluster, cached per task.

The master (a cluster session's backend) learns every task's devices once (ListDevices), when it is
created. After a failed step, a task may have died, restarted (new device
incarnations: its graphs must be registered again) or be fine; the session
marks every task *stale*, and a stale task is asked again only when a step
is about to use it (`refresh(tasks)`). So a dead task fails the steps that
touch it, with UnavailableError naming it, and only those: steps on live
tasks run, as in TensorFlow; and it works again when the task is back.
"""
import threading

from .. import errors


class DeviceDiscovery:
    """`list_devices(tasks) -> {task: (error, result)}` asks tasks in parallel (the session's channels)."""

    def __init__(self, tasks, client_task, list_devices, make_device):
        self.tasks = list(tasks)
        self.client_task = client_task
        self._list_devices = list_devices
        self._make_device = make_device
        self._lock = threading.Lock()
        self._info = {}          # task -> its last ListDevices result
        self._stale = set()      # tasks to ask again before a step uses them

    def learn(self, known=None):
        """Asks every task not in `known` (all must answer): the session's start."""
        known = dict(known or {})
        missing = [t for t in self.tasks if t not in known]
        replies = self._list_devices(missing)
        for task in missing:
            known[task] = self._check(task, *replies[task])
        with self._lock:
            self._info = known
            self._stale.clear()

    def mark_stale(self, tasks=None):
        with self._lock:
            self._stale.update(self.tasks if tasks is None else tasks)

    def stale(self, tasks):
        with self._lock:
            return self._stale.intersection(tasks)

    def refresh(self, tasks):
        """Asks the stale ones of `tasks` again; returns the tasks whose devices changed (a restart).

        A task that does not answer stays stale and its error (naming it) is raised."""
        if not self._stale:  # lock-free fast path: every step asks, almost none find a stale task
            return set()
        tasks = self.stale(tasks)
        if not tasks:
            return set()
        replies = self._list_devices(sorted(tasks))
        changed, failure = set(), None
        for task in sorted(tasks):
            try:
                info = self._check(task, *replies[task])
            except errors.OpError as e:
                failure = failure or e
                continue
            with self._lock:
                if _incarnations(self._info.get(task)) != _incarnations(info):
                    changed.add(task)
                self._info[task] = info
                self._stale.discard(task)
        if failure is not None:
            raise failure
        return changed

    def devices(self):
        """Every known device, the client task's first CPU first (the client device)."""
        with self._lock:
            info = dict(self._info)
        devices = []
        for task in sorted(info, key=lambda t: (t != self.client_task, t)):
            for d in info[task]["devices"]:
                devices.append(self._make_device(d["name"], d["device_type"], d["incarnation"]))
        client = [d for d in devices if d.task == self.client_task and d.device_type == "CPU"]
        if not client:
            raise errors.InternalError(f"The client task {self.client_task} has no CPU device")
        devices.remove(client[0])
        return [client[0]] + devices

    def _check(self, task, error, message):
        if error is None:
            error = message.error
        if error is not None:
            raise _from_task(task, error)
        info = message.fields.get("result")
        if not isinstance(info, dict) or info.get("task") != task or not isinstance(info.get("devices"), list):
            raise errors.InternalError(f"The server of {task} answered ListDevices for "
                                       f"{info.get('task') if isinstance(info, dict) else info!r}")
        return info

    def __repr__(self):
        return f"<DeviceDiscovery {len(self._info)} tasks, stale: {sorted(self._stale)}>"


def _incarnations(info):
    if info is None:
        return None
    return sorted((d["name"], d["incarnation"]) for d in info["devices"])


def _from_task(task, error):
    from .master import _from_task as prefixed
    return prefixed(task, error)
