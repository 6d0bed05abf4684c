"""Session backends by target scheme, as TF's SessionFactory table.

`tf.Session(target)` is a front end (feeds, fetches, callables, the plan
cache); what runs a plan comes from this table, keyed by the target's
scheme: '' (the empty target) is the local devices (`local_backend.py`);
the distributed runtime registers 'zmq' and, as `DEFAULT_REMOTE`, every
other non-empty target (it explains the ones it does not serve). A package
that serves targets registers itself when it is imported; the API layer
adds a loader for such packages, run the first time a target's scheme is
not in the table, so `import graphrt` loads no transport it does not use.

A backend is made as `factory(target, config, plans)` (`plans`: the
session's `PlanCache`, which a backend may evict from) and offers
`devices`, `client_device`, `make_plan(graph, feeds, fetches, targets,
options)`, `execute(plan, args, options, run_metadata)`, `describe()`,
`close()`, and `session_attributes`: the names of its own public API that
the session passes through (a cluster's `status()`, `cluster_spec`).
"""
import threading

from .. import errors

DEFAULT_REMOTE = "*"   # the scheme under which a backend takes any non-empty target no other claims
_factories = {}
_loaders = []
_lock = threading.Lock()


def register(schemes, factory):
    """Makes `factory` the backend of targets with these schemes ('' for the empty target)."""
    with _lock:
        for scheme in schemes:
            _factories[scheme] = factory


def add_loader(load):
    """`load()` imports a package that registers backends; run when a target's scheme is missing."""
    with _lock:
        _loaders.append(load)


def scheme_of(target):
    """'' for the empty target, 'zmq' for 'zmq://host:port', DEFAULT_REMOTE for anything else."""
    if not target:
        return ""
    if isinstance(target, str) and "://" in target:
        return target.split("://", 1)[0]
    return DEFAULT_REMOTE


def factory_for(target):
    scheme = scheme_of(target)
    factory = _factories.get(scheme)
    if factory is None:
        with _lock:
            loaders = list(_loaders)
        for load in loaders:
            load()  # an import: a second run costs nothing
        factory = _factories.get(scheme) or (_factories.get(DEFAULT_REMOTE) if scheme else None)
    if factory is None:
        raise errors.InvalidArgumentError(f"No session backend for target {target!r} (registered: "
                                          f"{sorted(_factories)})")
    return factory


class PlanCache(dict):
    """Run signature -> plan; `lock` serializes building (and a backend's evicting)."""

    def __init__(self):
        super().__init__()
        self.lock = threading.Lock()

    def build(self, key, make):
        with self.lock:
            plan = self.get(key)
            if plan is None:
                plan = self[key] = make()
            return plan
