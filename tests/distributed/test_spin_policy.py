"""SpinPolicy: a waiting thread polls before it sleeps only while that makes its blocking operations
(a master's step, a blocking RecvTensor) shorter."""
from graphrt.distributed import spin_policy
from graphrt.distributed.spin_policy import MAX_SPIN_S, SpinPolicy


def _run(policy, operations, seconds, wait=0.0002):
    """`operations` operations, each taking seconds[spinning?] (whatever the policy asked for), with one
    wait of `wait` seconds each; returns the spin each was allowed."""
    asked = []
    for _ in range(operations):
        arm, spin_s = policy.begin()
        assert arm == (spin_s > 0)
        asked.append(spin_s)
        policy.finished(arm, seconds[arm], wait)
    return asked


def _trials(asked, spinning):
    """(start, length) of each run of operations that went the other way than `spinning`."""
    runs, start = [], None
    for i, s in enumerate(asked + [None]):
        other = s is not None and (s > 0) != spinning
        if other and start is None:
            start = i
        elif not other and start is not None:
            runs.append((start, i - start))
            start = None
    return runs


def test_it_starts_spinning_and_tries_sleeping_ever_more_rarely_while_that_gains_nothing():
    policy = SpinPolicy()
    assert policy.spinning
    every, length = policy.TRIAL_EVERY, policy.TRIAL_LENGTH
    asked = _run(policy, 16 * every, {0: 0.0003, 1: 0.0003})  # sleeping gains nothing
    assert _trials(asked, True) == [(0, length), (every, length), (3 * every, length), (7 * every, length),
                                    (15 * every, length)]
    assert policy.spinning and policy.switches == 0 and policy.interval == 16 * every


def test_beside_a_cpu_hog_it_stops_spinning_at_its_first_trial_of_sleeping_that_can_be_judged():
    policy = SpinPolicy()
    every, length = policy.TRIAL_EVERY, policy.TRIAL_LENGTH
    asked = _run(policy, every + length + 10, {0: 0.0006, 1: 0.0016})  # the spinner starves the other task
    assert not policy.spinning and policy.switches == 1
    # The first trial (operation 0) had no spinning operations to weigh against; the second decided.
    assert _trials(asked, True) == [(0, length), (every, length + 10)]


def test_a_policy_started_sleeping_tries_spinning_ever_more_rarely_while_that_gains_nothing():
    policy = SpinPolicy(spinning=False)
    assert not policy.spinning
    every, length = policy.TRIAL_EVERY, policy.TRIAL_LENGTH
    asked = _run(policy, 16 * every, {0: 0.0003, 1: 0.0003})  # spinning gains nothing
    # The first trial has nothing to weigh against; then each one that keeps sleeping doubles the gap.
    assert _trials(asked, False) == [(0, length), (every, length), (3 * every, length), (7 * every, length),
                                     (15 * every, length)]
    assert not policy.spinning and policy.switches == 0 and policy.interval == 16 * every and policy.shifts == 0
    assert (policy.operations, policy.spun) == (16 * every, 5 * length)  # the trials' operations spun
    assert f"{5 * length} of {16 * every} operations spun" in repr(policy)
    _run(policy, 100 * every, {0: 0.0003, 1: 0.0003})
    assert policy.interval == policy.MAX_TRIAL_EVERY


def test_it_spins_while_spinning_makes_operations_clearly_shorter_and_stops_when_sleeping_clearly_wins():
    policy = SpinPolicy(spinning=False)
    every, length = policy.TRIAL_EVERY, policy.TRIAL_LENGTH
    seconds = {0: 0.0005, 1: 0.0004}  # an idle machine: no wake-up to wait for, code runs warm
    asked = _run(policy, 2 * every, seconds)
    assert policy.spinning and policy.switches == 1 and policy.interval == every
    assert _trials(asked, False) == [(0, length), (every, every)]  # the second trial switched for good
    # Now the sleeping ones are the trials, ever more rarely while spinning keeps winning...
    asked = _run(policy, 8 * every, seconds)
    assert _trials(asked, True) == [(0, length), (2 * every, length), (6 * every, length)]
    assert all(0 < s <= MAX_SPIN_S for s in asked if s)
    seconds.update({0: 0.0004, 1: 0.00042})  # ...and a small edge either way changes nothing (noise)
    _run(policy, 40 * every, seconds)
    assert policy.spinning and policy.switches == 1 and policy.interval == policy.MAX_TRIAL_EVERY
    seconds.update({0: 0.0006, 1: 0.0016})  # a CPU hog: the spinner starves the other task
    # Found at once, however rare trials had become: the spinning steps' median moved, so a trial comes now.
    _run(policy, 3 * length, seconds)
    assert not policy.spinning and policy.switches == 2 and policy.shifts == 1
    assert policy.interval == every  # and trials come soon again
    seconds.update({0: 0.0004, 1: 0.00038})  # nor does a small edge bring it back
    _run(policy, 40 * every, seconds)
    assert not policy.spinning and policy.switches == 2


def test_the_operations_decide_not_the_waits():
    # A thread that spun reaches its wait sooner and waits longer for the same reply: its waits look
    # worse while its steps are shorter. Only the steps count.
    policy = SpinPolicy()
    for _ in range(3 * policy.TRIAL_EVERY):
        arm, _ = policy.begin()
        policy.finished(arm, 0.0004 if arm else 0.0005, 0.0003 if arm else 0.0002)
    assert policy.spinning


def test_a_trial_is_judged_by_medians_so_one_outlier_does_not_decide():
    policy = SpinPolicy(spinning=False)
    for i in range(3 * policy.TRIAL_EVERY):
        arm, _ = policy.begin()
        # spinning is clearly faster, but one spinning operation in each trial hit a 50 ms stall
        policy.finished(arm, 0.05 if arm and i % policy.TRIAL_EVERY == 3 else (0.0004 if arm else 0.0005), 0.0002)
    assert policy.spinning and policy.switches == 1
    assert policy.medians() == [0.0005, 0.0004]
    assert "spinning" in repr(policy) and "[500, 400] us" in repr(policy)


def test_a_spin_lasts_up_to_max_spin_s_unless_the_long_waits_are_longer():
    policy = SpinPolicy()
    policy.spinning = True
    policy.operations = policy.TRIAL_LENGTH  # out of the first trial
    policy.trial_start = policy.TRIAL_EVERY
    assert policy.begin() == (1, MAX_SPIN_S)  # no wait seen yet
    policy.finished(1, 0.006, 0.005)
    assert policy.begin() == (1, MAX_SPIN_S)  # a session's first, cold operation is no majority
    # A step waits long for its tensor and briefly for the last reply: the long wait is the one to cover.
    for _ in range(policy.TRIAL_LENGTH - 1):
        policy.finished(1, 0.0005, 0.0004)
    policy.finished(1, 0.006, 0.005)  # one long wait among short ones (a 1 MiB pull's page faults)
    assert policy.begin() == (1, MAX_SPIN_S)  # stops nothing
    for _ in range(policy.TRIAL_LENGTH // 2 - 1):
        policy.finished(1, 0.03, 0.02)  # slow steps: a spin would only burn the core
    assert policy.begin() == (1, MAX_SPIN_S)  # ...once most of the latest are long (half are now)
    policy.finished(1, 0.03, 0.02)
    assert policy.begin() == (0, 0.0)  # and the step counts as a sleeping one
    policy.spinning = False
    assert policy.begin() == (0, 0.0)


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


def test_a_spin_yields_its_core_between_polls_and_ends_when_a_yield_ran_another_process(monkeypatch):
    """The process's own ZeroMQ I/O thread, which reads the reply, may be queued on the spinning
    thread's core: a yield lets it run. A yield that took a whole slice means another process wants
    the core: the spin ends, and the caller sleeps."""
    now = [0.0]
    monkeypatch.setattr(spin_policy.time, "perf_counter", lambda: now[0])
    events = []

    def poll(timeout):
        assert timeout == 0
        events.append("poll")
        now[0] += 0.00001
        return []

    def quick_yield():
        events.append("yield")
        now[0] += 0.00001
    assert spin_policy.spin(poll, 0.0001, quick_yield) == []
    assert events[:5] == ["poll", "yield", "poll", "yield", "poll"] and events.count("yield") == 5
    events.clear()
    now[0] = 0.0

    def hog_yield():  # a CPU hog on this core ran for a slice
        events.append("yield")
        now[0] += 0.002
    assert spin_policy.spin(poll, 0.001, hog_yield) == []
    assert events == ["poll", "yield", "poll"]  # one look after the long yield, then no more spinning


def test_when_the_operations_change_the_next_trial_comes_at_once():
    policy = SpinPolicy(spinning=False)
    every, length = policy.TRIAL_EVERY, policy.TRIAL_LENGTH
    _run(policy, 40 * every, {0: 0.0002, 1: 0.00021})  # small pulls: the two ways are close, it sleeps
    assert not policy.spinning and policy.interval == policy.MAX_TRIAL_EVERY and policy.shifts == 0
    # Large pulls now: every operation takes 3x as long, and spinning is clearly faster. Within a trial
    # length of the change the kept way's median has moved; it is measured afresh for another, and the
    # trial that follows switches.
    asked = _run(policy, 4 * length, {0: 0.0006, 1: 0.0004})
    assert policy.spinning and policy.switches == 1 and policy.shifts == 1
    assert _trials(asked, False) == [(2 * length, 2 * length)]  # the trial, then spinning for good
    # Operations that keep their length bring nothing forward, however long they go on.
    _run(policy, 40 * every, {0: 0.0006, 1: 0.0004})
    assert policy.shifts == 1 and policy.interval == policy.MAX_TRIAL_EVERY


def test_after_a_change_the_trial_is_judged_against_the_kept_way_as_it_is_now():
    """The kept way's operations from before a change, and the few slow, cold ones it starts with, must
    not decide the trial: a sleeping trial once won against spinning's operations of both kinds and
    held through 1 MiB pulls that spinning made faster."""
    policy = SpinPolicy()
    length = policy.TRIAL_LENGTH
    _run(policy, 40 * policy.TRIAL_EVERY, {0: 0.0002, 1: 0.00015})  # small pulls: spinning wins
    assert policy.spinning and policy.shifts == 0
    # The change: the first larger pulls run cold (3 ms either way), then spinning is again faster.
    _run(policy, 15, {0: 0.003, 1: 0.003})
    asked = _run(policy, 10 * length, {0: 0.00045, 1: 0.0004})
    assert policy.shifts == 1
    trials = _trials(asked, True)
    assert len(trials) == 1 and trials[0][1] == length  # one sleeping trial, of the usual length
    assert policy.spinning and policy.switches == 0
