"""Composite values in `Session.run` (TF's `register_session_run_conversion_functions`).

A composite (a SparseTensor) is a few tensors to the runtime. The package that
defines it registers how a fetch of it expands into tensors (and how their
values contract back into one value) and how a feed of it expands into
(tensor, value) pairs; the session consults this table, so the client never
imports the package.
"""
_CONVERSIONS = []  # (type, fetch_fn(fetch) -> (tensors, contract), feed_fn(feed, value) -> [(tensor, value)])


def register_session_run_conversion_functions(tensor_type, fetch_function, feed_function=None,
                                              feed_function_for_partial_run=None):  # noqa: ARG001 - TF's signature
    for registered, _, _ in _CONVERSIONS:
        if issubclass(registered, tensor_type):
            raise ValueError(f"{tensor_type} has already been registered so ignore it.")
    _CONVERSIONS.insert(0, (tensor_type, fetch_function, feed_function))


def fetch_function(fetch):
    """`fn(fetch) -> (tensors, contract(values))` of a registered composite, else None."""
    for tensor_type, fetch_fn, _ in _CONVERSIONS:
        if isinstance(fetch, tensor_type):
            return fetch_fn
    return None


def feed_function(feed):
    """`fn(feed, value) -> [(tensor, value)]` of a registered composite, else None."""
    for tensor_type, _, feed_fn in _CONVERSIONS:
        if isinstance(feed, tensor_type):
            return feed_fn
    return None
