"""A hostile peer must not flood the logs: repeated lines are rate-limited, and the
number suppressed is reported once the burst is over."""
import io

from graphrt.distributed.log_limit import RateLimitedLog


class Clock:
    now = 0.0


def test_repeated_lines_are_limited_and_the_suppressed_count_is_reported(monkeypatch):
    import graphrt.distributed.log_limit as log_limit
    monkeypatch.setattr(log_limit.time, "monotonic", lambda: Clock.now)
    out = io.StringIO()
    log = RateLimitedLog("graphrt", per_interval=3, interval_s=10, stream=out)
    printed = [log(f"dropped a malformed reply {i}") for i in range(1000)]
    assert printed.count(True) == 3 and log.suppressed == 997
    assert out.getvalue().splitlines() == [f"dropped a malformed reply {i}" for i in range(3)]
    Clock.now = 11.0
    log("a later line")
    lines = out.getvalue().splitlines()
    assert lines[3] == "graphrt: 997 similar messages suppressed in the last 10s" and lines[4] == "a later line"
    assert log.total_suppressed == 997


def test_a_channel_logs_dropped_replies_through_the_limit():
    from graphrt.distributed.channel import ChannelPool
    pool = ChannelPool(name="test-pool")
    try:
        assert isinstance(pool._log, RateLimitedLog) and pool._log.per_interval <= 10
    finally:
        pool.close()
