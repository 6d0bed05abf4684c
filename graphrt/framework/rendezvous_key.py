"""The text of a rendezvous key, `src;incarnation;dst;edge;frame:iter`.

Written once here, below the partitioner that shows keys (`partition/views.py`)
and the rendezvous that parses and validates them (`rendezvous/parsed_key.py`),
so that showing a key needs no rendezvous. The fields are not checked here:
`rendezvous.create_key` checks them.
"""


def key_prefix(src_device, src_incarnation, dst_device, edge_name):
    """The frame-independent part: one edge between two devices (incarnation as 16 hex digits)."""
    return f"{src_device};{src_incarnation:016x};{dst_device};{edge_name};"


def format_key(src_device, src_incarnation, dst_device, edge_name, frame_id=0, iter_id=0):
    return f"{key_prefix(src_device, src_incarnation, dst_device, edge_name)}{frame_id}:{iter_id}"
