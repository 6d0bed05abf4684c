"""Nested structures of tensors (TF's `nest`, the part cond and while_loop use).

A structure is a leaf or a list, tuple, namedtuple or dict of structures.
`flatten` lists the leaves in a fixed order (dicts by sorted key) and
`pack_sequence_as` rebuilds a structure from such a list. Lists and tuples
of the same length count as the same structure, because loop bodies
commonly return a tuple for list loop variables.
"""


def is_sequence(value):
    return isinstance(value, (list, tuple, dict))


def children(value):
    if isinstance(value, dict):
        return [value[k] for k in sorted(value)]
    return list(value)


def flatten(structure, is_structure=is_sequence):
    """The leaves in order. `is_structure` says what nests (tf.data passes its own
    rule, under which a list is one component)."""
    if not is_structure(structure):
        return [structure]
    out = []
    for child in children(structure):
        out.extend(flatten(child, is_structure))
    return out


def _pack(structure, flat, index, is_structure=is_sequence):
    if not is_structure(structure):
        return flat[index], index + 1
    packed = []
    for child in children(structure):
        value, index = _pack(child, flat, index, is_structure)
        packed.append(value)
    if isinstance(structure, dict):
        # flattened by sorted key, rebuilt in the structure's own key order (an OrderedDict keeps its order)
        by_key = dict(zip(sorted(structure), packed))
        items = [(key, by_key[key]) for key in structure]
        try:
            return type(structure)(items), index
        except TypeError:  # a dict subclass with another constructor (defaultdict)
            return dict(items), index
    if hasattr(structure, "_fields"):  # namedtuple
        return type(structure)(*packed), index
    return type(structure)(packed), index


def pack_sequence_as(structure, flat_sequence, is_structure=is_sequence):
    flat_sequence = list(flat_sequence)
    n = len(flatten(structure, is_structure))
    if n != len(flat_sequence):
        raise ValueError(f"Could not pack sequence. Structure had {n} elements, but flat_sequence had "
                         f"{len(flat_sequence)} elements.")
    return _pack(structure, flat_sequence, 0, is_structure)[0]


def map_structure(fn, structure, *more):
    """`fn` over the leaves of `structure` (and, given, of `more` structures nested the same way)."""
    for other in more:
        assert_same_structure(structure, other)
    columns = [flatten(s) for s in (structure,) + more]
    return pack_sequence_as(structure, [fn(*leaves) for leaves in zip(*columns)])


def assert_same_structure(a, b):
    """ValueError unless `a` and `b` nest the same way (list and tuple are interchangeable)."""
    if is_sequence(a) != is_sequence(b):
        raise ValueError(f"The two structures don't have the same nested structure.\n\nFirst structure: {a!r}"
                         f"\n\nSecond structure: {b!r}")
    if not is_sequence(a):
        return
    if isinstance(a, dict) != isinstance(b, dict):
        raise ValueError(f"The two structures don't have the same sequence type: {type(a).__name__} and "
                         f"{type(b).__name__}.")
    if isinstance(a, dict) and sorted(a) != sorted(b):
        raise ValueError(f"The two dictionaries don't have the same set of keys: {sorted(a)} and {sorted(b)}.")
    if len(a) != len(b):
        raise ValueError(f"The two structures don't have the same number of elements: {len(a)} and {len(b)}.\n\n"
                         f"First structure: {a!r}\n\nSecond structure: {b!r}")
    for x, y in zip(children(a), children(b)):
        assert_same_structure(x, y)
