"""Device names: `/job:<j>/replica:<r>/task:<t>/device:<TYPE>:<i>`.

A `DeviceSpec` is a possibly partial name. Fields left out are `None`;
merging fills them from another spec, and a spec "matches" a full device
name when every field it sets agrees. Legacy spellings `/cpu:0`, `/gpu:1`
(and graphrt's `/sim:0`) parse to `/device:CPU:0`, `/device:GPU:1`,
`/device:SIM:0`.
"""
import re

from .. import errors

_LEGACY_TYPES = ("CPU", "GPU", "SIM")

# Placement prefers higher priority device types (TF: GPU 210, CPU 60); SIM
# stands in for a GPU, so it outranks CPU too.
DEVICE_TYPE_PRIORITY = {"GPU": 210, "SIM": 200, "CPU": 60}
_JOB_RE = re.compile(r"^[a-zA-Z][_a-zA-Z0-9]*$")


class DeviceSpec:
    """A (partial) device name, as `tf.DeviceSpec`."""

    __slots__ = ("job", "replica", "task", "device_type", "device_index")

    def __init__(self, job=None, replica=None, task=None, device_type=None, device_index=None):
        self.job = job
        self.replica = None if replica is None else int(replica)
        self.task = None if task is None else int(task)
        self.device_type = _device_type(device_type)
        self.device_index = None if device_index in (None, "*") else int(device_index)

    # -- parsing -------------------------------------------------------
    @classmethod
    def from_string(cls, spec):
        return cls().parse_from_string(spec)

    def parse_from_string(self, spec):
        """Parses `spec` into this object (TF1 semantics: in place, returns self)."""
        self.job = self.replica = self.task = self.device_type = self.device_index = None
        if spec is None:
            return self
        if isinstance(spec, DeviceSpec):
            self.merge_from(spec)
            return self
        if not isinstance(spec, str):
            raise TypeError(f"a device spec must be a string, got {type(spec).__name__}: {spec!r}")
        for part in spec.split("/"):
            if not part:
                continue
            fields = part.split(":")
            name = fields[0]
            if len(fields) == 2 and name == "job":
                if not _JOB_RE.match(fields[1]):
                    raise ValueError(f"Invalid job name '{fields[1]}' in device spec '{spec}'")
                self.job = fields[1]
            elif len(fields) == 2 and name in ("replica", "task"):
                try:
                    setattr(self, name, int(fields[1]))
                except ValueError:
                    raise ValueError(f"Invalid {name} '{fields[1]}' in device spec '{spec}'") from None
            elif len(fields) in (1, 2) and name.upper() in _LEGACY_TYPES:
                if self.device_type is not None:
                    raise ValueError(f"Cannot specify multiple device types: {spec}")
                self.device_type = name.upper()
                if len(fields) == 2 and fields[1] != "*":
                    self.device_index = _index(fields[1], spec)
            elif len(fields) == 3 and name == "device":
                if self.device_type is not None:
                    raise ValueError(f"Cannot specify multiple device types: {spec}")
                self.device_type = _device_type(fields[1])
                if fields[2] != "*":
                    self.device_index = _index(fields[2], spec)
            else:
                raise ValueError(f"Unknown attribute: '{name}' in '{spec}'")
        return self

    # -- merging -------------------------------------------------------
    def merge_from(self, dev):
        """Overrides this spec's fields with every field `dev` sets (in place)."""
        if isinstance(dev, str):
            dev = DeviceSpec.from_string(dev)
        for field in self.__slots__:
            value = getattr(dev, field)
            if value is not None:
                setattr(self, field, value)
        return self

    def make_merged_spec(self, dev):
        return self.copy().merge_from(dev)

    def copy(self):
        return DeviceSpec(self.job, self.replica, self.task, self.device_type, self.device_index)

    def replace(self, **fields):
        init = {f: getattr(self, f) for f in self.__slots__}
        init.update(fields)
        return DeviceSpec(**init)

    # -- queries ---------------------------------------------------------
    def to_string(self):
        out = []
        if self.job is not None:
            out.append(f"/job:{self.job}")
        if self.replica is not None:
            out.append(f"/replica:{self.replica}")
        if self.task is not None:
            out.append(f"/task:{self.task}")
        if self.device_type is not None:
            index = "*" if self.device_index is None else self.device_index
            out.append(f"/device:{self.device_type}:{index}")
        return "".join(out)

    def is_empty(self):
        return all(getattr(self, f) is None for f in self.__slots__)

    def is_full(self):
        return all(getattr(self, f) is not None for f in self.__slots__)

    def matches(self, other):
        """True when every field set here equals the same field of `other`."""
        if isinstance(other, str):
            other = DeviceSpec.from_string(other)
        return all(getattr(self, f) is None or getattr(self, f) == getattr(other, f)
                   for f in self.__slots__)

    def task_prefix(self):
        return f"/job:{self.job}/replica:{self.replica}/task:{self.task}"

    @property
    def local_name(self):
        """The task-less part of a device name, e.g. `/device:CPU:0`."""
        return f"/device:{self.device_type}:{self.device_index}"

    def __eq__(self, other):
        if isinstance(other, str):
            other = DeviceSpec.from_string(other)
        return isinstance(other, DeviceSpec) and all(
            getattr(self, f) == getattr(other, f) for f in self.__slots__)

    def __hash__(self):
        return hash(tuple(getattr(self, f) for f in self.__slots__))

    def __str__(self):
        return self.to_string()

    def __repr__(self):
        return f"DeviceSpec('{self.to_string()}')"


def _device_type(device_type):
    """TF accepts lowercase 'cpu'/'gpu' as a device type and upper-cases them."""
    if isinstance(device_type, str) and device_type.upper() in _LEGACY_TYPES and device_type.islower():
        return device_type.upper()
    return device_type


def _index(text, spec):
    try:
        return int(text)
    except ValueError:
        raise ValueError(f"Invalid device index '{text}' in device spec '{spec}'") from None


def canonical_name(spec):
    """Canonical string of a (partial) device spec; '' for no device."""
    if spec is None or spec == "":
        return ""
    if isinstance(spec, DeviceSpec):
        return spec.to_string()
    return DeviceSpec.from_string(spec).to_string()


def full_name(job, replica, task, device_type, index):
    return f"/job:{job}/replica:{replica}/task:{task}/device:{device_type}:{index}"


def parse_full_name(name):
    """Parses a fully specified device name; anything partial is InvalidArgument."""
    try:
        spec = DeviceSpec.from_string(name)
    except (ValueError, TypeError) as e:
        raise errors.InvalidArgumentError(f"Invalid device name '{name}': {e}") from None
    if not spec.is_full():
        missing = [f for f in DeviceSpec.__slots__ if getattr(spec, f) is None]
        raise errors.InvalidArgumentError(
            f"Device name '{name}' is not fully specified (missing {', '.join(missing)})")
    return spec


class DeviceInfo:
    """Just enough of a device for placement and partitioning (name, type,
    priority, incarnation), for tools that place graphs without running them."""

    def __init__(self, name, incarnation=0):
        self.spec = parse_full_name(name)
        self.name = self.spec.to_string()
        self.device_type = self.spec.device_type
        self.incarnation = incarnation

    @property
    def priority(self):
        return DEVICE_TYPE_PRIORITY.get(self.device_type, 0)

    def __repr__(self):
        return f"<DeviceInfo {self.name}>"


def parse_device_count(text):
    """'CPU:3' or 'CPU:1,SIM:2' -> {'CPU': 3} / {'CPU': 1, 'SIM': 2}."""
    counts = {}
    for part in filter(None, (p.strip() for p in text.split(","))):
        kind, _, n = part.partition(":")
        try:
            counts[kind.strip().upper()] = int(n) if n else 1
        except ValueError:
            raise ValueError(f"bad device count {part!r}: expected TYPE:N, e.g. CPU:3") from None
    return counts


def local_device_names(device_count, job="localhost", replica=0, task=0):
    """Full names for a device count ({"CPU": 2, "SIM": 1}); CPU:0 always exists."""
    counts = dict(device_count or {})
    counts["CPU"] = max(1, int(counts.get("CPU", 1)))
    names = []
    for dtype in sorted(counts, key=lambda t: (t != "CPU", t)):
        n = int(counts[dtype])
        if n < 0:
            raise ValueError(f"device_count[{dtype!r}] must be >= 0, got {n}")
        names.extend(full_name(job, replica, task, dtype, i) for i in range(n))
    return names
