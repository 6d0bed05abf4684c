"""ParsedKey, create_key and parse_key: canonical form, round trips, and one error per bad field."""
import pickle

import pytest
from hypothesis import given
from hypothesis import strategies as st

from graphrt import errors
from graphrt.rendezvous import ParsedKey, create_key, parse_key

CPU0 = "/job:localhost/replica:0/task:0/device:CPU:0"
CPU1 = "/job:localhost/replica:0/task:0/device:CPU:1"
EXAMPLE = f"{CPU0};00000000deadbeef;{CPU1};edge_5_a;0:0"


def test_create_key_matches_the_documented_example():
    assert create_key(CPU0, 0xDEADBEEF, CPU1, "edge_5_a") == EXAMPLE
    assert create_key(CPU0, 0xDEADBEEF, CPU1, "edge_5_a", (3, -1)) == EXAMPLE[:-3] + "3:-1"


def test_parse_key_exposes_every_field():
    key = parse_key(EXAMPLE)
    assert key.src_device == CPU0
    assert key.src_incarnation == 0xDEADBEEF
    assert key.dst_device == CPU1
    assert key.edge_name == "edge_5_a"
    assert (key.frame_id, key.iter_id) == key.frame_iter == (0, 0)
    assert key.full_key == str(key) == EXAMPLE
    assert repr(key) == f"ParsedKey('{EXAMPLE}')"
    assert key.src.device_type == "CPU" and key.dst.device_index == 1


def test_parse_accepts_upper_case_and_short_incarnations_and_prints_canonically():
    assert parse_key(f"{CPU0};00000000DEADBEEF;{CPU1};edge_5_a;0:0").full_key == EXAMPLE
    assert parse_key(f"{CPU0};deadbeef;{CPU1};edge_5_a;0:0").full_key == EXAMPLE


def test_legacy_device_spellings_are_canonicalized():
    legacy = "/job:localhost/replica:0/task:0/cpu:0;1;/job:localhost/replica:0/task:0/cpu:1;e;0:0"
    assert parse_key(legacy).full_key == f"{CPU0};0000000000000001;{CPU1};e;0:0"


def test_extreme_incarnation_frame_and_iteration():
    full = create_key(CPU0, 2**64 - 1, CPU1, "e", (2**64 - 1, -(2**63)))
    assert full == f"{CPU0};ffffffffffffffff;{CPU1};e;18446744073709551615:-9223372036854775808"
    assert parse_key(full).full_key == full


def test_keys_compare_and_hash_by_full_key():
    a, b = parse_key(EXAMPLE), ParsedKey(CPU0, 0xDEADBEEF, CPU1, "edge_5_a")
    assert a == b and hash(a) == hash(b) and len({a, b}) == 1
    assert a != a.with_frame_iter(0, 1)
    assert a != EXAMPLE  # a key is not its string


def test_keys_are_immutable():
    key = parse_key(EXAMPLE)
    with pytest.raises(AttributeError, match="immutable"):
        key.iter_id = 3
    with pytest.raises(AttributeError):
        key.src_device = CPU1
    with pytest.raises(AttributeError):
        del key.full_key


def test_with_frame_iter_derives_the_key_of_another_iteration():
    base = parse_key(EXAMPLE)
    derived = base.with_frame_iter(12, 5)
    assert derived.full_key == EXAMPLE[:-3] + "12:5"
    assert derived == parse_key(derived.full_key)
    assert (derived.src_device, derived.src_incarnation, derived.edge_name) == (CPU0, 0xDEADBEEF, "edge_5_a")
    assert base.full_key == EXAMPLE


@pytest.mark.parametrize("frame_iter, problem", [
    ((-1, 0), "frame_id -1 is out of range"),
    ((2**64, 0), "frame_id 18446744073709551616 is out of range"),
    ((0, 2**63), "iter_id 9223372036854775808 is out of range"),
    ((0, 1.5), "must be integers"),
])
def test_with_frame_iter_rejects_out_of_range_ids(frame_iter, problem):
    with pytest.raises(errors.InvalidArgumentError, match=problem):
        parse_key(EXAMPLE).with_frame_iter(*frame_iter)


def test_keys_pickle_by_their_string():
    key = parse_key(EXAMPLE).with_frame_iter(1, 2)
    assert pickle.loads(pickle.dumps(key)) == key


# -- one error per malformed field -----------------------------------------------------

def parse_error(text):
    with pytest.raises(errors.InvalidArgumentError) as raised:
        parse_key(text)
    message = raised.value.message
    assert message.startswith("Invalid rendezvous key: ")
    assert message.endswith(f"'{text}'")  # the key is quoted
    assert raised.value.key == text
    return message


@pytest.mark.parametrize("text, count", [
    (f"{CPU0};00000000deadbeef;{CPU1};edge_5_a", 4),
    (f"{CPU0};00000000deadbeef;{CPU1};edge;5_a;0:0", 6),
    ("", 1),
])
def test_wrong_number_of_fields(text, count):
    assert f"expected 5 ';'-separated fields" in parse_error(text)
    assert f"got {count}:" in parse_error(text)


def test_src_device_not_a_full_name():
    message = parse_error(f"/job:localhost/device:CPU:0;1;{CPU1};e;0:0")
    assert "src_device '/job:localhost/device:CPU:0' is not a full device name" in message
    assert "missing replica, task" in message


def test_dst_device_not_a_device_name():
    message = parse_error(f"{CPU0};1;/job:localhost/replica:0/task:0/bogus:1;e;0:0")
    assert "dst_device '/job:localhost/replica:0/task:0/bogus:1' is not a full device name" in message


def test_incarnation_empty():
    assert "src_incarnation is empty" in parse_error(f"{CPU0};;{CPU1};e;0:0")


@pytest.mark.parametrize("incarnation", ["xyz", "0x10", "-1", "1_0", " 1"])
def test_incarnation_not_hex(incarnation):
    assert f"src_incarnation '{incarnation}' is not hexadecimal" in \
        parse_error(f"{CPU0};{incarnation};{CPU1};e;0:0")


def test_incarnation_too_long():
    assert "src_incarnation '10000000000000000' has 17 hex digits (at most 16)" in \
        parse_error(f"{CPU0};10000000000000000;{CPU1};e;0:0")


def test_edge_name_empty():
    assert "edge_name is empty" in parse_error(f"{CPU0};1;{CPU1};;0:0")


@pytest.mark.parametrize("frame_iter", ["", "0", "0:", ":0", "a:0", "0:b", "-1:0", "0:0:0", "+1:0", "1 :0"])
def test_frame_iter_malformed(frame_iter):
    assert f"frame_iter '{frame_iter}' is not '<frame_id>:<iter_id>'" in \
        parse_error(f"{CPU0};1;{CPU1};e;{frame_iter}")


def test_frame_id_and_iter_id_out_of_range():
    assert "frame_id 18446744073709551616 is out of range for an unsigned 64-bit integer" in \
        parse_error(f"{CPU0};1;{CPU1};e;18446744073709551616:0")
    assert "iter_id -9223372036854775809 is out of range for a signed 64-bit integer" in \
        parse_error(f"{CPU0};1;{CPU1};e;0:-9223372036854775809")


def test_keys_of_an_edge_already_parsed_are_checked_and_printed_alike():
    # parse_key parses an edge's part once; the keys of its other iterations come from that
    edge = f"{CPU0};00000000DEADBEEF;{CPU1};edge_5_a;"
    first = parse_key(edge + "0:0")
    again = parse_key(edge + "7:-2")
    assert again.full_key == EXAMPLE[:-3] + "7:-2" and again.frame_iter == (7, -2)
    assert again == first.with_frame_iter(7, 2 - 4) and again.src_incarnation == 0xDEADBEEF
    assert parse_key(edge + "007:02").full_key == EXAMPLE[:-3] + "7:2"
    for bad in ("0:0:0", "a:0", "-1:0", ""):
        assert f"frame_iter '{bad}' is not '<frame_id>:<iter_id>'" in parse_error(edge + bad)
    assert "frame_id 18446744073709551616 is out of range" in parse_error(edge + "18446744073709551616:0")
    assert "expected 5 ';'-separated fields" in parse_error(edge + "0:0;1")


def test_parse_key_of_a_non_string():
    with pytest.raises(errors.InvalidArgumentError, match="expected a string, got int"):
        parse_key(5)


@pytest.mark.parametrize("args, problem", [
    (("/cpu:0", 1, CPU1, "e"), "src_device '/cpu:0' is not a full device name"),
    ((CPU0, 1, "", "e"), "dst_device '' is not a full device name"),
    ((CPU0, -1, CPU1, "e"), "src_incarnation -1 is out of range"),
    ((CPU0, 2**64, CPU1, "e"), "src_incarnation 18446744073709551616 is out of range"),
    ((CPU0, "1", CPU1, "e"), "src_incarnation must be an integer"),
    ((CPU0, 1, CPU1, ""), "edge_name is empty"),
    ((CPU0, 1, CPU1, "a;b"), "edge_name 'a;b' contains ';'"),
])
def test_create_key_rejects_bad_fields(args, problem):
    with pytest.raises(errors.InvalidArgumentError, match="^Cannot make a rendezvous key: " + problem):
        create_key(*args)


# -- property: create_key and parse_key round-trip ------------------------------------------

job_names = st.from_regex(r"[a-zA-Z][_a-zA-Z0-9]{0,11}", fullmatch=True)
device_types = st.sampled_from(["CPU", "GPU", "SIM"]) | st.from_regex(r"[A-Z][A-Z_]{0,5}", fullmatch=True)
small = st.integers(min_value=0, max_value=1000)


@st.composite
def device_names(draw):
    return (f"/job:{draw(job_names)}/replica:{draw(small)}/task:{draw(small)}"
            f"/device:{draw(device_types)}:{draw(small)}")


edge_names = st.text(st.characters(blacklist_characters=";", blacklist_categories=("Cs",)), min_size=1)
u64 = st.integers(min_value=0, max_value=2**64 - 1)
i64 = st.integers(min_value=-(2**63), max_value=2**63 - 1)


@given(src=device_names(), incarnation=u64, dst=device_names(), name=edge_names, frame_id=u64, iter_id=i64)
def test_create_and_parse_round_trip(src, incarnation, dst, name, frame_id, iter_id):
    full = create_key(src, incarnation, dst, name, (frame_id, iter_id))
    key = parse_key(full)
    assert key.full_key == full == str(key)
    assert (key.src_device, key.src_incarnation, key.dst_device, key.edge_name, key.frame_id, key.iter_id) == \
        (src, incarnation, dst, name, frame_id, iter_id)
    assert full.split(";")[1] == f"{incarnation:016x}"
    parts = full.split(";")
    parts[1] = parts[1].upper()
    assert parse_key(";".join(parts)) == key
    assert key.with_frame_iter(frame_id, iter_id) == key
    assert repr(key) == f"ParsedKey({full!r})"
