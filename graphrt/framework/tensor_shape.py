"""Static shapes: `TensorShape` and `Dimension`.

A shape may have unknown rank (`TensorShape(None)`) or unknown dimensions
(`[None, 3]`). Shape functions run when the user writes a line, so errors
from incompatible shapes appear at graph-building time.

Indexing and iterating give plain ints and None, and shapes print as
`(None, 3)`, as `tf.compat.v1` does in TensorFlow 2 (`shape.dims` and
`shape.dim(i)` still give `Dimension`s, for arithmetic on unknown sizes).
"""


class Dimension:
    """One dimension; `value` is an int or None (unknown)."""

    __slots__ = ("_value",)

    def __init__(self, value):
        if isinstance(value, Dimension):
            value = value._value
        if value is not None:
            # As TF: only ints and objects with __index__ (numpy ints); floats and strings
            # are a TypeError rather than being truncated or parsed.
            if not isinstance(value, int):
                if not hasattr(value, "__index__"):
                    raise TypeError(f"Dimension value must be integer or None or have an __index__ "
                                    f"method, got value '{value!r}' with type '{type(value)!r}'")
                value = int(value.__index__())
            if value < 0:
                raise ValueError(f"Dimension {value} must be >= 0")
        self._value = value

    @property
    def value(self):
        return self._value

    def is_compatible_with(self, other):
        other = as_dimension(other)
        return self._value is None or other._value is None or self._value == other._value

    def merge_with(self, other):
        other = as_dimension(other)
        if not self.is_compatible_with(other):
            raise ValueError(f"Dimensions {self} and {other} are not compatible")
        return Dimension(self._value if self._value is not None else other._value)

    def _arith(self, other, fn):
        other = as_dimension(other)
        if self._value is None or other._value is None:
            return Dimension(None)
        return Dimension(fn(self._value, other._value))

    def __add__(self, other):
        return self._arith(other, lambda a, b: a + b)

    __radd__ = __add__

    def __sub__(self, other):
        return self._arith(other, lambda a, b: a - b)

    def __mul__(self, other):
        return self._arith(other, lambda a, b: a * b)

    __rmul__ = __mul__

    def __floordiv__(self, other):
        return self._arith(other, lambda a, b: a // b)

    def __eq__(self, other):
        try:
            other = as_dimension(other)
        except (TypeError, ValueError):
            return NotImplemented
        if self._value is None or other._value is None:
            return None
        return self._value == other._value

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is None or eq is NotImplemented else not eq

    def _compare(self, other, fn):
        """`fn` of the two values, or None when either is unknown (TF's Dimension ordering)."""
        other = as_dimension(other)
        if self._value is None or other._value is None:
            return None
        return fn(self._value, other._value)

    def __lt__(self, other):
        return self._compare(other, lambda a, b: a < b)

    def __le__(self, other):
        return self._compare(other, lambda a, b: a <= b)

    def __gt__(self, other):
        return self._compare(other, lambda a, b: a > b)

    def __ge__(self, other):
        return self._compare(other, lambda a, b: a >= b)

    def __hash__(self):
        return hash(self._value)

    def __int__(self):
        if self._value is None:
            raise TypeError("Cannot convert an unknown Dimension to an int")
        return self._value

    __index__ = __int__

    def __repr__(self):
        return f"Dimension({self._value!r})"

    def __str__(self):
        return "?" if self._value is None else str(self._value)


def as_dimension(value):
    return value if isinstance(value, Dimension) else Dimension(value)


class TensorShape:
    """A possibly partial shape. `as_list()` gives ints and Nones."""

    __slots__ = ("_dims",)

    def __init__(self, dims):
        if dims is None:
            self._dims = None
        elif isinstance(dims, TensorShape):
            self._dims = dims._dims
        elif isinstance(dims, (int, Dimension)) and not isinstance(dims, bool):
            self._dims = (as_dimension(dims),)
        else:
            try:
                self._dims = tuple(as_dimension(d) for d in dims)
            except TypeError:
                raise TypeError(f"A shape must be a list of ints or None, got {dims!r}") from None

    @property
    def dims(self):
        return None if self._dims is None else list(self._dims)

    @property
    def ndims(self):
        return None if self._dims is None else len(self._dims)

    rank = ndims

    def as_list(self):
        if self._dims is None:
            raise ValueError("as_list() is not defined on an unknown TensorShape.")
        return [d._value for d in self._dims]

    def as_tuple_or_none(self):
        """Tuple of ints/None, or None for unknown rank (graphrt helper)."""
        return None if self._dims is None else tuple(d._value for d in self._dims)

    def is_fully_defined(self):
        return self._dims is not None and all(d._value is not None for d in self._dims)

    def num_elements(self):
        if not self.is_fully_defined():
            return None
        n = 1
        for d in self._dims:
            n *= d._value
        return n

    def is_compatible_with(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return True
        if len(self._dims) != len(other._dims):
            return False
        return all(a.is_compatible_with(b) for a, b in zip(self._dims, other._dims))

    def merge_with(self, other):
        other = as_shape(other)
        if self._dims is None:
            return other
        if other._dims is None:
            return self
        if len(self._dims) != len(other._dims) or not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {other} are not compatible")
        return TensorShape([a.merge_with(b) for a, b in zip(self._dims, other._dims)])

    def assert_is_compatible_with(self, other):
        if not self.is_compatible_with(other):
            raise ValueError(f"Shapes {self} and {as_shape(other)} are incompatible")

    def assert_same_rank(self, other):
        other = as_shape(other)
        if self._dims is not None and other._dims is not None and len(self._dims) != len(other._dims):
            raise ValueError(f"Shapes {self} and {other} must have the same rank")

    def assert_is_fully_defined(self):
        if not self.is_fully_defined():
            raise ValueError(f"Shape {self} is not fully defined")

    def most_specific_compatible_shape(self, other):
        """Known dims where both shapes agree, None elsewhere; unknown rank when the ranks differ."""
        other = as_shape(other)
        if self._dims is None or other._dims is None or len(self._dims) != len(other._dims):
            return unknown_shape()
        return TensorShape([a._value if a._value is not None and a._value == b._value else None
                            for a, b in zip(self._dims, other._dims)])

    def as_proto(self):
        from .tensor_util import shape_to_proto  # tensor_util imports this module
        return shape_to_proto(self)

    def assert_has_rank(self, rank):
        if self._dims is not None and len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")

    def with_rank(self, rank):
        if self._dims is None:
            return unknown_shape(rank)
        if len(self._dims) != rank:
            raise ValueError(f"Shape {self} must have rank {rank}")
        return self

    def with_rank_at_least(self, rank):
        if self._dims is not None and len(self._dims) < rank:
            raise ValueError(f"Shape {self} must have rank at least {rank}")
        return self

    def with_rank_at_most(self, rank):
        if self._dims is not None and len(self._dims) > rank:
            raise ValueError(f"Shape {self} must have rank at most {rank}")
        return self

    def concatenate(self, other):
        other = as_shape(other)
        if self._dims is None or other._dims is None:
            return TensorShape(None)
        return TensorShape(self._dims + other._dims)

    def __add__(self, other):
        return self.concatenate(other)

    def __radd__(self, other):
        return as_shape(other).concatenate(self)

    def __len__(self):
        if self._dims is None:
            raise ValueError("Cannot take the length of Shape with unknown rank.")
        return len(self._dims)

    def __bool__(self):
        return self._dims is not None

    def __iter__(self):
        if self._dims is None:
            raise ValueError("Cannot iterate over a shape with unknown rank.")
        return iter([d._value for d in self._dims])

    def __getitem__(self, key):
        """An int (or None when unknown) for an index; a TensorShape for a slice."""
        if self._dims is None:
            if isinstance(key, slice):
                return TensorShape(None)
            return None
        if isinstance(key, slice):
            return TensorShape(self._dims[key])
        return self._dims[key]._value

    def dim(self, index):
        """The Dimension at `index` (Dimension(None) when the rank is unknown)."""
        if self._dims is None:
            return Dimension(None)
        return self._dims[index]

    def __eq__(self, other):
        try:
            other = as_shape(other)
        except TypeError:
            return NotImplemented
        return self.as_tuple_or_none() == other.as_tuple_or_none()

    def __ne__(self, other):
        eq = self.__eq__(other)
        return eq if eq is NotImplemented else not eq

    def __hash__(self):
        return hash(self.as_tuple_or_none())

    def __repr__(self):
        if self._dims is None:
            return "TensorShape(None)"
        return f"TensorShape({[d._value for d in self._dims]!r})"

    def __str__(self):
        if self._dims is None:
            return "<unknown>"
        if len(self._dims) == 1:
            return f"({self._dims[0]._value},)"
        return "(" + ", ".join(str(d._value) for d in self._dims) + ")"

    def short(self):
        """Compact form for printed graphs: `[2,?]`, `[]`, `[*]` (unknown rank)."""
        if self._dims is None:
            return "[*]"
        return "[" + ",".join(str(d) for d in self._dims) + "]"


def as_shape(shape):
    return shape if isinstance(shape, TensorShape) else TensorShape(shape)


def unknown_shape(rank=None):
    return TensorShape(None if rank is None else [None] * rank)


def scalar():
    return TensorShape([])
