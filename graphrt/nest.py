"""tf.nest: TF's nested-structure utilities over graphrt/ops/nest.py.

Unlike the internal nest (where a loop's list and tuple count as one
structure), these keep TF's rules: the sequence types must match unless
`check_types=False`, a string is a leaf, dicts flatten by sorted key.
"""
from .ops import nest as _nest


def is_nested(seq):
    """True for a list, tuple (namedtuple) or dict."""
    return _nest.is_sequence(seq)


def flatten(structure, expand_composites=False):
    return _nest.flatten(structure)


def pack_sequence_as(structure, flat_sequence, expand_composites=False):
    flat_sequence = list(flat_sequence)
    n = len(flatten(structure))
    if n != len(flat_sequence):
        raise ValueError(f"Could not pack sequence. Structure had {n} atoms, but flat_sequence had "
                         f"{len(flat_sequence)} items.  Structure: {structure}, flat_sequence: {flat_sequence}.")
    return _in_key_order(structure, _nest.pack_sequence_as(structure, flat_sequence))


def _in_key_order(structure, packed):
    """`packed` with its dicts in `structure`'s key order, as TF packs them (flatten sorts the keys)."""
    if isinstance(structure, dict):
        items = [(k, _in_key_order(structure[k], packed[k])) for k in structure]
        try:
            return type(structure)(items)
        except TypeError:  # a dict subclass with another constructor (defaultdict)
            return dict(items)
    if is_nested(structure):
        values = [_in_key_order(s, p) for s, p in zip(structure, packed)]
        return type(structure)(*values) if hasattr(structure, "_fields") else type(structure)(values)
    return packed


def _describe(s):
    return f"type={type(s).__name__} str={s}"


def _check_same(a, b, check_types, top_a, top_b):
    def fail(cls, detail):
        raise cls(f"The two structures don't have the same nested structure.\n\nFirst structure: "
                  f"{_describe(top_a)}\n\nSecond structure: {_describe(top_b)}\n\nMore specifically: {detail}")
    if is_nested(a) != is_nested(b):
        nested, other = (a, b) if is_nested(a) else (b, a)
        fail(ValueError, f'Substructure "{_describe(nested)}" is a sequence, while substructure '
                         f'"{_describe(other)}" is not')
    if not is_nested(a):
        return
    if check_types and type(a) is not type(b):
        fail(TypeError, f"The two namedtuples don't have the same sequence type. First structure "
                        f"{_describe(a)} has type {type(a).__name__}, while second structure {_describe(b)} has "
                        f"type {type(b).__name__}")
    if isinstance(a, dict) and sorted(a) != sorted(b):
        fail(ValueError, f"The two dictionaries don't have the same set of keys. First structure has keys "
                         f"{sorted(a)}, while second structure has keys {sorted(b)}.")
    if len(a) != len(b):
        fail(ValueError, f"The two structures don't have the same number of elements. First structure: "
                         f"{_describe(a)}, second structure: {_describe(b)}.")
    for x, y in zip(_nest.children(a), _nest.children(b)):
        _check_same(x, y, check_types, top_a, top_b)


def assert_same_structure(nest1, nest2, check_types=True, expand_composites=False):
    """ValueError unless the two nest alike; TypeError when only their sequence types differ."""
    _check_same(nest1, nest2, check_types, nest1, nest2)


def map_structure(func, *structure, **kwargs):
    """func over the leaves of the structures (which must nest alike), in the first one's structure."""
    check_types = kwargs.pop("check_types", True)
    kwargs.pop("expand_composites", None)
    if kwargs:
        raise ValueError(f"Only valid keyword arguments are `check_types` and `expand_composites`, not: "
                         f"`{'`, `'.join(kwargs)}`")
    if not callable(func):
        raise TypeError(f"func must be callable, got: {func}")
    if not structure:
        raise ValueError("Must provide at least one structure")
    for other in structure[1:]:
        assert_same_structure(structure[0], other, check_types=check_types)
    flat = [flatten(s) for s in structure]
    return pack_sequence_as(structure[0], [func(*leaves) for leaves in zip(*flat)])


def flatten_up_to(shallow_tree, input_tree, check_types=True, expand_composites=False):
    """input_tree flattened only as deep as shallow_tree nests (deeper parts are leaves)."""
    if not is_nested(shallow_tree):
        return [input_tree]
    if not is_nested(input_tree):
        raise TypeError(f"If shallow structure is a sequence, input must also be a sequence. Input has type: "
                        f"{type(input_tree).__name__}.")
    if check_types and type(shallow_tree) is not type(input_tree):
        raise TypeError(f"The two structures don't have the same sequence type. Input structure has type "
                        f"{type(input_tree)}, while shallow structure has type {type(shallow_tree)}.")
    if isinstance(shallow_tree, dict):
        missing = [k for k in shallow_tree if k not in input_tree]
        if missing:
            raise ValueError(f"The input_tree has keys that are not in the shallow_tree: {missing}")
        children = [input_tree[k] for k in sorted(shallow_tree)]
    else:
        if len(shallow_tree) != len(input_tree):
            raise ValueError(f"The two structures don't have the same sequence length. Input structure has "
                             f"length {len(input_tree)}, while shallow structure has length {len(shallow_tree)}.")
        children = list(input_tree)
    out = []
    for s, i in zip(_nest.children(shallow_tree), children):
        out.extend(flatten_up_to(s, i, check_types))
    return out
