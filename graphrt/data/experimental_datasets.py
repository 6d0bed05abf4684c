"""Run-time datasets behind `Dataset.shard`, `Dataset.scan` and
`tf.data.experimental` (choose/sample from datasets, their random source,
get_single_element): what their dataset ops' `variant` outputs hold, as the
ones in datasets.py."""
import numpy as np

from .. import errors
from .datasets import DatasetBase


class ShardDataset(DatasetBase):
    """Every `num_shards`-th element, from element `index` on (TF's ShardDataset)."""

    def __init__(self, node, input_dataset, num_shards, index):
        super().__init__(node)
        if num_shards <= 0:
            raise self.error(errors.InvalidArgumentError,
                             f"Number of shards must be greater than zero (currently num_shards = {num_shards}).")
        if not 0 <= index < num_shards:
            raise self.error(errors.InvalidArgumentError,
                             f"Index must be between 0 and {num_shards - 1} (currently index = {index}).")
        self.input, self.num_shards, self.index = input_dataset, int(num_shards), int(index)

    def iterate(self):
        for n, element in enumerate(self.input.iterate()):
            if n % self.num_shards == self.index:
                yield element


class ScanDataset(DatasetBase):
    """`fn(state, element) -> (new state, output)` over the input: the outputs, in order."""

    def __init__(self, node, input_dataset, fn, initial_state, captured):
        super().__init__(node)
        self.input, self.fn = input_dataset, fn
        self.initial_state, self.captured = list(initial_state), list(captured)

    def iterate(self):
        state, n = self.initial_state, len(self.initial_state)
        for element in self.input.iterate():
            out = list(self.fn(state + list(element) + self.captured))
            state = out[:n]
            yield out[n:]


class DirectedInterleaveDataset(DatasetBase):
    """The next element of input `k` for each `k` the selector yields. An exhausted input is
    skipped, and the whole ends when every input has ended (or, with `stop_on_empty`, when the
    first one does), or when the selector does."""

    def __init__(self, node, selector, inputs, stop_on_empty):
        super().__init__(node)
        self.selector, self.inputs, self.stop_on_empty = selector, list(inputs), bool(stop_on_empty)

    def iterate(self):
        its = [d.iterate() for d in self.inputs]
        active = len(its)
        for choice in self.selector.iterate():
            k = int(np.asarray(choice[0]))
            if not 0 <= k < len(its):
                raise self.error(errors.InvalidArgumentError, f"Selector index out of range: {k} >= {len(its)}")
            if its[k] is None:
                continue
            try:
                yield next(its[k])
            except StopIteration:
                if self.stop_on_empty:
                    return
                its[k] = None
                active -= 1
                if active == 0:
                    return


class RandomDataset(DatasetBase):
    """Endless uniform int64 values in [0, 2**63) from (seed, seed2), as TF's RandomDataset; both
    0 draws a different sequence each run. numpy draws them, so they differ from TensorFlow's."""

    def __init__(self, node, seed, seed2):
        super().__init__(node)
        if seed == 0 and seed2 == 0:
            seed, seed2 = np.random.SeedSequence().generate_state(2)
        self.seeds = (int(seed), int(seed2))

    def iterate(self):
        rng = np.random.Generator(np.random.PCG64(np.random.SeedSequence(list(self.seeds))))
        while True:
            for value in rng.integers(0, np.iinfo(np.int64).max, size=256, dtype=np.int64):
                yield [np.array(value, dtype=np.int64)]


def single_element(dataset, node):
    """The one element of `dataset` (TF's DatasetToSingleElement)."""
    elements = dataset.iterate()
    try:
        try:
            element = next(elements)
        except StopIteration:
            raise errors.InvalidArgumentError("Dataset was empty.", node=node) from None
        try:
            next(elements)
        except StopIteration:
            return element
        raise errors.InvalidArgumentError("Dataset had more than one element.", node=node)
    finally:
        elements.close()


class ListDataset(DatasetBase):
    """Elements held in memory: a window of `WindowDataset` or a group of `GroupByWindowDataset`."""

    def __init__(self, node, elements):
        super().__init__(node)
        self.elements = elements

    def iterate(self):
        for element in self.elements:
            yield list(element)


class WindowDataset(DatasetBase):
    """Windows of `size` elements `stride` apart, one starting every `shift` elements: each
    element is one ListDataset per component. Without `drop_remainder` the last windows may
    be shorter (while a window has any element)."""

    def __init__(self, node, input_dataset, size, shift, stride, drop_remainder):
        super().__init__(node)
        for what, value in (("Window size", size), ("Window shift", shift), ("Window stride", stride)):
            if value <= 0:
                raise self.error(errors.InvalidArgumentError, f"{what} must be greater than zero.")
        self.input, self.size, self.shift, self.stride = input_dataset, int(size), int(shift), int(stride)
        self.drop_remainder = bool(drop_remainder)

    def iterate(self):
        elements = self.input.iterate()
        span = (self.size - 1) * self.stride + 1
        buffer, base, start, ended = [], 0, 0, False  # buffer[i] is input element base + i
        while True:
            while not ended and base + len(buffer) < start + span:
                try:
                    element = next(elements)
                except StopIteration:
                    ended = True
                    break
                if base + len(buffer) >= start:
                    buffer.append(element)
                else:
                    base += 1  # between windows (shift past the span): never in one
            window = [buffer[i - base] for i in range(start, start + span, self.stride) if i - base < len(buffer)]
            if not window or (self.drop_remainder and len(window) < self.size):
                return
            yield [ListDataset(self.node, [[e[c]] for e in window]) for c in range(len(window[0]))]
            start += self.shift
            dropped = min(start - base, len(buffer))
            del buffer[:dropped]
            base += dropped


class GroupByWindowDataset(DatasetBase):
    """Elements grouped by `key_fn`; a group of `window_size_fn(key)` elements (or what is left
    of one at the end, in key order) becomes `reduce_fn(key, group)`, whose elements follow."""

    def __init__(self, node, input_dataset, key_fn, reduce_fn, size_fn, key_args, reduce_args, size_args):
        super().__init__(node)
        self.input, self.fns = input_dataset, (key_fn, reduce_fn, size_fn)
        self.args = list(key_args), list(reduce_args), list(size_args)

    def iterate(self):
        key_fn, reduce_fn, size_fn = self.fns
        key_args, reduce_args, size_args = self.args
        groups, sizes = {}, {}
        for element in self.input.iterate():
            key = int(np.asarray(key_fn(list(element) + key_args)[0]))
            if key not in sizes:
                size = int(np.asarray(size_fn([np.array(key, np.int64)] + size_args)[0]))
                if size <= 0:
                    raise self.error(errors.InvalidArgumentError,
                                     f"Window size must be greater than zero, but got {size}.")
                sizes[key] = size
            group = groups.setdefault(key, [])
            group.append(element)
            if len(group) == sizes[key]:
                del groups[key]
                yield from self._reduce(reduce_fn, key, group, reduce_args)
        for key in sorted(groups):
            yield from self._reduce(reduce_fn, key, groups[key], reduce_args)

    def _reduce(self, reduce_fn, key, group, reduce_args):
        result = reduce_fn([np.array(key, np.int64), ListDataset(self.node, group)] + reduce_args)[0]
        yield from result.iterate()
