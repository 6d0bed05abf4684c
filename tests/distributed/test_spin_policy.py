"""SpinPolicy: a waiting thread polls before it sleeps only while that makes its waits shorter."""
from graphrt.distributed import spin_policy
from graphrt.distributed.spin_policy import MAX_SPIN_S, SpinPolicy


def _run(policy, waits, seconds):
    """`waits` waits, each taking seconds[spinning?] (whatever the policy asked for)."""
    asked = []
    for _ in range(waits):
        spin_s = policy.spin_for()
        asked.append(spin_s)
        policy.waited(seconds[spin_s > 0])
    return asked


def test_it_sleeps_at_first_and_tries_spinning_now_and_then():
    policy = SpinPolicy()
    assert not policy.spinning
    asked = _run(policy, 2 * policy.TRIAL_EVERY, {False: 0.0003, True: 0.0003})  # spinning gains nothing
    spun = [i for i, s in enumerate(asked) if s]
    assert spun == list(range(policy.TRIAL_WAITS)) + \
        list(range(policy.TRIAL_EVERY, policy.TRIAL_EVERY + policy.TRIAL_WAITS))
    assert not policy.spinning and policy.switches == 0


def test_it_spins_while_spinning_makes_waits_clearly_shorter_and_stops_when_it_does_not():
    policy = SpinPolicy()
    seconds = {False: 0.0004, True: 0.0002}  # an idle machine: no wake-up to wait for
    _run(policy, 3 * policy.TRIAL_EVERY, seconds)
    assert policy.spinning and policy.switches == 1
    asked = _run(policy, policy.TRIAL_EVERY, seconds)
    assert sum(1 for s in asked if not s) == policy.TRIAL_WAITS  # now the sleeping ones are the trial
    assert all(0 < s <= MAX_SPIN_S for s in asked if s)
    seconds.update({False: 0.0004, True: 0.0007})  # a CPU hog: the spinner starves the other task
    _run(policy, 2 * policy.TRIAL_EVERY, seconds)
    assert not policy.spinning and policy.switches == 2
    seconds.update({False: 0.0004, True: 0.00038})  # a small edge does not bring it back
    _run(policy, 3 * policy.TRIAL_EVERY, seconds)
    assert not policy.spinning


def test_a_spin_lasts_twice_the_recent_wait_at_most_and_long_waits_are_not_spun():
    policy = SpinPolicy()
    policy.spinning = True
    policy.waits = policy.TRIAL_WAITS  # out of the first trial
    policy.mean = [0.0004, 0.0002]
    assert policy.spin_for() == 0.0004
    policy.mean = [0.0004, 0.0008]
    assert policy.spin_for() == MAX_SPIN_S
    policy.mean = [0.02, 0.02]  # slow steps: a spin would only burn the core
    assert policy.spin_for() == 0.0
    assert "spinning" in repr(policy)


def test_spin_polls_until_something_fires_or_the_time_is_up(monkeypatch):
    now = [0.0]
    monkeypatch.setattr(spin_policy.time, "perf_counter", lambda: now[0])
    calls = []

    def poll(timeout):
        assert timeout == 0  # never sleeps
        calls.append(now[0])
        now[0] += 0.0001
        return [(5, 1)] if len(calls) == 3 else []
    assert spin_policy.spin(poll, 0.001) == [(5, 1)] and len(calls) == 3
    calls.clear()
    now[0] = 0.0

    def nothing(timeout):
        calls.append(now[0])
        now[0] += 0.0004
        return []
    assert spin_policy.spin(nothing, 0.001) == []
    assert calls == [0.0, 0.0004, 0.0008]  # polled at 0, 0.4 and 0.8 ms; at 1.2 ms the time was up
