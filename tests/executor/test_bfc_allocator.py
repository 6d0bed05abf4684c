"""BFCAllocator: TF's rounding, bins, best fit, split and coalesce rules, stats and errors."""
import threading

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from graphrt import errors
from graphrt.executor import BFCAllocator, bin_for_size, round_bytes
from graphrt.executor.bfc_allocator import MAX_INTERNAL_FRAGMENTATION, NUM_BINS

KiB, MiB = 1 << 10, 1 << 20


def test_requests_round_up_to_256_bytes():
    assert [round_bytes(n) for n in (1, 255, 256, 257, 512, 1000)] == [256, 256, 256, 512, 512, 1024]


def test_bin_boundaries():
    assert NUM_BINS == 21
    assert bin_for_size(256) == 0 and bin_for_size(511) == 0
    assert bin_for_size(512) == 1 and bin_for_size(1023) == 1 and bin_for_size(1024) == 2
    assert bin_for_size(128 * MiB - 256) == 18 and bin_for_size(128 * MiB) == 19
    assert bin_for_size(256 * MiB - 256) == 19 and bin_for_size(256 * MiB) == 20
    assert bin_for_size(64 << 30) == 20  # the last bin takes everything larger


def test_free_chunk_lands_in_the_bin_of_its_size():
    bfc = BFCAllocator(4 * KiB)
    a = bfc.allocate(1024)
    bfc.allocate(256)
    bfc.deallocate(a)
    assert bfc.free_chunks(bin_index=2) == [(1024, 0)]  # [1 KiB, 2 KiB)
    assert bfc.free_chunks(bin_index=3) == [(2816, 1280)]  # 2.75 KiB left at the end


def test_zero_bytes_is_null_and_offsets_are_aligned():
    bfc = BFCAllocator(64 * KiB)
    assert bfc.allocate(0) is None
    bfc.deallocate(None)
    offsets = [bfc.allocate(n) for n in (1, 300, 700, 5)]
    assert offsets == [0, 256, 768, 1536]
    assert all(offset % 256 == 0 for offset in offsets)


def test_split_when_the_chunk_is_at_least_twice_the_request():
    bfc = BFCAllocator(1024)
    a = bfc.allocate(512)  # 1024 >= 2 * 512: split
    assert bfc.allocated_size(a) == 512
    assert [(c.offset, c.size, c.in_use) for c in bfc.chunks()] == [(0, 512, True), (512, 512, False)]


def test_no_split_below_twice_the_request():
    bfc = BFCAllocator(1024)
    a = bfc.allocate(513)  # rounded to 768; 1024 < 1536 and the 256 left is small: hand out all
    assert bfc.allocated_size(a) == 1024 and bfc.requested_size(a) == 513
    assert bfc.stats().bytes_in_use == 1024
    assert len(bfc.chunks()) == 1


def test_split_when_the_leftover_is_at_least_128_mib():
    bfc = BFCAllocator(384 * MiB)  # only offsets: no memory is touched
    a = bfc.allocate(200 * MiB)  # 384 < 400, but 184 MiB would be wasted: split
    assert bfc.allocated_size(a) == 200 * MiB
    bfc.deallocate(a)
    b = bfc.allocate(384 * MiB - MAX_INTERNAL_FRAGMENTATION + 256)  # leftover just under 128 MiB
    assert bfc.allocated_size(b) == 384 * MiB


def test_best_fit_prefers_the_smallest_chunk_then_the_lowest_address():
    bfc = BFCAllocator(16 * KiB)
    big_hole = bfc.allocate(1024)
    bfc.allocate(256)
    small_hole_1 = bfc.allocate(512)
    bfc.allocate(256)
    small_hole_2 = bfc.allocate(512)
    bfc.allocate(256)
    for offset in (big_hole, small_hole_2, small_hole_1):
        bfc.deallocate(offset)
    assert bfc.allocate(400) == small_hole_1  # smallest fit, lowest of the two equal holes
    assert bfc.allocate(400) == small_hole_2
    assert bfc.allocate(400) == big_hole  # 1024 >= 2 * 512: split, first half
    assert bfc.allocate(400) == big_hole + 512


def test_free_coalesces_with_both_neighbours():
    bfc = BFCAllocator(4 * KiB)
    a, b, c = bfc.allocate(1024), bfc.allocate(1024), bfc.allocate(2048)
    bfc.deallocate(a)
    bfc.deallocate(c)
    assert len(bfc.chunks()) == 3
    bfc.deallocate(b)  # merges with a before it and c after it
    assert [(c.offset, c.size, c.in_use) for c in bfc.chunks()] == [(0, 4 * KiB, False)]
    assert bfc.stats().largest_free_chunk == 4 * KiB


def test_stats():
    bfc = BFCAllocator(64 * KiB, name="dev")
    a = bfc.allocate(1000)
    b = bfc.allocate(5000)
    stats = bfc.stats()
    assert stats.num_allocs == 2
    assert stats.bytes_in_use == 1024 + 5120
    assert stats.largest_alloc_size == 5120
    assert stats.bytes_limit == 64 * KiB
    assert stats.largest_free_chunk == 64 * KiB - 6144
    bfc.deallocate(b)
    stats = bfc.stats()
    assert stats.bytes_in_use == 1024 and stats.peak_bytes_in_use == 6144
    bfc.clear_stats()
    stats = bfc.stats()
    assert (stats.num_allocs, stats.largest_alloc_size, stats.peak_bytes_in_use) == (0, 0, 1024)
    assert bfc.allocation_id(a) == 1
    assert bfc.allocation_id(bfc.allocate(1)) == 3  # ids keep increasing


def test_out_of_memory_message_summarises_the_arena():
    bfc = BFCAllocator(8 * KiB, name="sim:3")
    bfc.allocate(3 * KiB)
    hole = bfc.allocate(1 * KiB)
    bfc.allocate(2 * KiB)
    bfc.allocate(2 * KiB)
    bfc.deallocate(hole)  # 1 KiB free in the middle: fragmentation, not exhaustion
    before = bfc.stats()
    with pytest.raises(errors.ResourceExhaustedError) as info:
        bfc.allocate(2000)
    message = str(info.value)
    assert message.startswith("Allocator (sim:3) ran out of memory trying to allocate 2.0 KiB "
                              "(2000 bytes, rounded to 2048). Arena: 7.0 KiB in use, 1.0 KiB free, "
                              "largest free chunk 1.0 KiB, limit 8.0 KiB, 4 chunks (3 in use, 1 free).")
    assert "bin  2 (>= 1.0 KiB): 1 free chunk, 1.0 KiB" in message
    assert "in use by size: 2 x 2.0 KiB, 1 x 3.0 KiB" in message
    assert info.value.device == "sim:3"
    assert bfc.stats() == before


def test_double_free_and_foreign_offsets_are_internal_errors():
    bfc = BFCAllocator(4 * KiB, name="dev")
    a = bfc.allocate(256)
    bfc.deallocate(a)
    with pytest.raises(errors.InternalError, match=r"Allocator \(dev\): deallocate of offset 0x0.*double free"):
        bfc.deallocate(a)
    with pytest.raises(errors.InternalError, match="not the start of any chunk"):
        bfc.deallocate(100)
    with pytest.raises(errors.InternalError, match="not a live allocation"):
        bfc.requested_size(a)


def test_a_waiting_allocation_succeeds_when_memory_is_freed():
    bfc = BFCAllocator(4 * KiB)
    full = bfc.allocate(4 * KiB)
    result = []
    waiter = threading.Thread(target=lambda: result.append(bfc.allocate(1024, timeout=5.0)))
    waiter.start()
    bfc.deallocate(full)
    waiter.join(5.0)
    assert result == [0]


def test_the_search_skips_bins_whose_chunks_are_too_small():
    bfc = BFCAllocator(64 * KiB)
    small = bfc.allocate(512)  # bin 1 will hold a 512 B hole: too small for 768
    bfc.allocate(256)
    mid = bfc.allocate(4 * KiB)  # bin 4 a 4 KiB hole: the best fit above
    bfc.allocate(256)
    bfc.deallocate(small)
    bfc.deallocate(mid)
    assert bfc.allocate(600) == mid  # rounded to 768, bin 1; split off the 4 KiB hole
    assert bfc.free_chunks(bin_index=1) == [(512, small)]
    assert bfc.allocate(300) == small  # bin 1 again, now it fits
    assert bfc.free_chunks(bin_index=1) == []


def test_allocate_with_id_and_release_check_the_allocation_they_free():
    bfc = BFCAllocator(4 * KiB)
    offset, alloc_id = bfc.allocate_with_id(1000)
    assert (offset, alloc_id) == (0, bfc.allocation_id(0)) and bfc.allocate_with_id(0) == (None, 0)
    assert bfc.release(offset, alloc_id)
    assert not bfc.release(offset, alloc_id)  # already free
    again, new_id = bfc.allocate_with_id(1000)
    assert again == offset and new_id > alloc_id
    assert not bfc.release(offset, alloc_id)  # a stale id leaves the new allocation alone
    assert bfc.is_live(again, new_id) and bfc.stats().bytes_in_use == 1024


def test_stats_stay_exact_when_a_freed_chunk_is_reused():
    bfc = BFCAllocator(64 * KiB)
    keep = bfc.allocate(2048)
    for _ in range(100):  # the pattern of a loop's temporaries: the same sizes freed and taken again
        a = bfc.allocate(1000)
        b = bfc.allocate(100)
        bfc.deallocate(a)
        bfc.deallocate(b)
    stats = bfc.stats()
    assert stats.num_allocs == 201 and stats.bytes_in_use == 2048
    assert stats.peak_bytes_in_use == 2048 + 1024 + 256 and stats.largest_alloc_size == 2048
    assert bfc.chunks()[0].offset == keep and len(bfc.chunks()) == 2  # merged back every time
    assert stats.largest_free_chunk == 64 * KiB - 2048


def test_a_waiting_allocation_times_out_with_the_arena_summary():
    bfc = BFCAllocator(4 * KiB, name="sim:1")
    bfc.allocate(4 * KiB)
    with pytest.raises(errors.ResourceExhaustedError, match=r"Allocator \(sim:1\) ran out of memory"):
        bfc.allocate(1024, timeout=0.05)
    assert bfc._waiters == 0


def test_readable_repr_summary_and_map():
    bfc = BFCAllocator(1 * MiB, name="sim:0")
    bfc.allocate(300 * KiB)
    assert repr(bfc) == "<BFCAllocator sim:0 300.0 KiB/1.0 MiB in use, 2 chunks>"
    occupancy = bfc.occupancy_map(10)
    assert occupancy == "***_______"
    assert bfc.summary().splitlines()[0] == (
        "BFCAllocator sim:0: 300.0 KiB in use (peak 300.0 KiB) of 1.0 MiB, 2 chunks, "
        "largest free chunk 724.0 KiB")


def test_arena_too_small_is_rejected():
    with pytest.raises(errors.InvalidArgumentError, match="at least 256 bytes"):
        BFCAllocator(100)


def check_invariants(bfc, live):
    chunks = bfc.chunks()
    end = 0
    for chunk in chunks:  # chunks tile the arena: contiguous, no overlap, no gap
        assert chunk.offset == end and chunk.size > 0 and chunk.size % 256 == 0
        end = chunk.offset + chunk.size
    assert end == bfc.arena_size
    for before, after in zip(chunks, chunks[1:]):
        assert before.in_use or after.in_use, "two free neighbours were not coalesced"
    in_use = {c.offset: c for c in chunks if c.in_use}
    assert set(in_use) == set(live)
    for offset, requested in live.items():
        chunk = in_use[offset]
        assert chunk.requested_size == requested <= chunk.size
        assert 0 <= offset and offset + chunk.size <= bfc.arena_size
    assert bfc.stats().bytes_in_use == sum(c.size for c in in_use.values())
    assert sorted(bfc.free_chunks()) == sorted((c.size, c.offset) for c in chunks if not c.in_use)


operations = st.lists(
    st.one_of(st.tuples(st.just("alloc"), st.integers(1, 6000)),
              st.tuples(st.just("free"), st.integers(0, 1 << 30))),
    max_size=60)


@settings(max_examples=150, deadline=None)
@given(operations)
def test_random_alloc_free_sequences_keep_the_arena_consistent(ops):
    arena = 32 * KiB
    bfc = BFCAllocator(arena)
    live = {}  # offset -> requested bytes
    for op, value in ops:
        if op == "alloc":
            # best fit over the whole arena: the smallest free chunk that fits, then the lowest address
            fits = [(c.size, c.offset) for c in bfc.chunks() if not c.in_use and c.size >= round_bytes(value)]
            try:
                offset = bfc.allocate(value)
            except errors.ResourceExhaustedError:
                assert bfc.stats().largest_free_chunk < round_bytes(value) and not fits
                continue
            assert offset == min(fits)[1]
            assert offset not in live
            live[offset] = value
        elif live:
            offset = sorted(live)[value % len(live)]
            bfc.deallocate(offset)
            del live[offset]
        check_invariants(bfc, live)
    for offset in list(live):
        bfc.deallocate(offset)
    assert [(c.offset, c.size, c.in_use) for c in bfc.chunks()] == [(0, arena, False)]
    assert bfc.stats().bytes_in_use == 0


def test_a_release_from_inside_a_locked_section_is_applied_when_the_section_ends():
    # A DeviceTensor frees its memory in __del__, which the garbage collector can run on a thread that is
    # inside one of the allocator's locked sections: the free must neither deadlock nor change the bins
    # half way through that section's own work.
    bfc = BFCAllocator(1 << 16)
    a, b = bfc.allocate(1024), bfc.allocate(2048)
    result = []

    def inside_a_section():
        with bfc._lock:  # where allocate() would be when the collector runs
            result.append(bfc.release(a, bfc.allocation_id(a)))
            result.append(bfc.stats().bytes_in_use)
        bfc.deallocate(b)  # the next operation applies the deferred free first
        result.append(bfc.stats().bytes_in_use)

    thread = threading.Thread(target=inside_a_section, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "release() deadlocked inside the allocator's own locked section"
    assert result == [True, 1024 + 2048, 0]
    assert bfc.stats().num_allocs == 2
    assert bfc.allocate(1 << 16) == 0  # the arena is one free chunk again: both frees coalesced


def test_the_host_heap_defers_a_release_from_inside_its_locked_section_too():
    from graphrt.executor.heap_allocator import HeapAllocator
    heap = HeapAllocator()
    a, b = heap.allocate(100), heap.allocate(50)
    result = []

    def inside_a_section():
        with heap._lock:
            result.append(heap.release(a, heap.allocation_id(a)))
            result.append(heap.stats().bytes_in_use)
        heap.deallocate(b)
        result.append(heap.stats().bytes_in_use)

    thread = threading.Thread(target=inside_a_section, daemon=True)
    thread.start()
    thread.join(10)
    assert not thread.is_alive(), "release() deadlocked inside the heap's own locked section"
    assert result == [True, 150, 0]
