"""The BLAS thread policy (ops/blas.py): applied when a session creates its
devices; overridden by ConfigProto.intra_op_parallelism_threads."""
import pytest

import graphrt as tf
from graphrt.ops import blas


def test_policy_shares_cores_between_host_devices():
    assert blas.thread_policy(0, 1, cores=8) == 8
    assert blas.thread_policy(0, 2, cores=8) == 4
    assert blas.thread_policy(0, 3, cores=2) == 1
    assert blas.thread_policy(3, 4, cores=8) == 3  # intra_op_parallelism_threads wins, as in TF
    assert blas.thread_policy(1, 1, cores=8) == 1   # how a shared machine asks for one thread


@pytest.fixture
def openblas(monkeypatch):
    if blas.blas_threads() is None:
        pytest.skip("numpy's BLAS is not an OpenBLAS with a thread setting")
    before = blas.blas_threads()
    yield
    blas.set_blas_threads(before)


def test_session_applies_policy(openblas):
    tf.Session(config=tf.ConfigProto(device_count={"CPU": 1})).close()
    cores = blas.blas_threads()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})):
        assert blas.blas_threads() == max(1, cores // 3)
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3}, intra_op_parallelism_threads=2)):
        assert blas.blas_threads() == 2
    with tf.Session():
        assert blas.blas_threads() == cores


def test_matmul_values_unchanged_with_one_thread(openblas):
    import numpy as np
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((64, 96)).astype(np.float32), rng.standard_normal((96, 32)).astype(np.float32)
    with tf.Graph().as_default():
        c = tf.matmul(tf.constant(a), tf.constant(b))
        with tf.Session(config=tf.ConfigProto(intra_op_parallelism_threads=1)) as sess:
            assert blas.blas_threads() == 1
            got = sess.run(c)
    np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


class _Clock:
    """The chooser's clock (blas.time) for these tests: fake kernels advance it by exactly their
    time, so what is chosen does not depend on how busy the machine running the tests is."""

    def __init__(self):
        self.now = 1000.0

    def perf_counter(self):
        return self.now

    def monotonic(self):
        return self.now

    def sleep(self, seconds):
        self.now += seconds


@pytest.fixture
def clock(monkeypatch):
    fake = _Clock()
    monkeypatch.setattr(blas, "time", fake)
    monkeypatch.setattr(blas, "_cpu_busy", lambda: None)  # the machine's load: unknown, unless a test says
    return fake


def _gap_between_trials(monkeypatch, seconds):
    for name in ("TRIAL_GAP_S", "FIRST_GAP_S", "MAX_GAP_S"):
        monkeypatch.setattr(blas.ThreadChooser, name, seconds)


def _call_until_trial(chooser, kernels, n):
    """Calls the kernels in turn, as a step would, until the chooser has decided `n` trials."""
    while chooser.trials < n:
        for k in kernels:
            k()


def _kernel_taking(chooser, seconds_by_threads):
    """A fake BLAS kernel whose time depends on the team size the chooser set."""
    timings = blas.ThreadChooser.new_timings()

    def call():
        return chooser.run(lambda: blas.time.sleep(seconds_by_threads[chooser.current]), (), timings)
    return call


@pytest.mark.parametrize("wide_faster", [True, False])
def test_thread_chooser_keeps_the_team_its_kernels_ran_faster_with(openblas, clock, wide_faster):
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    assert chooser.threads == 1  # starts with a device's share
    fast, slow = 0.0005, 0.003
    kernels = [_kernel_taking(chooser, {2: fast if wide_faster else slow, 1: slow if wide_faster else fast})
               for _ in range(2)]
    for _ in range((chooser.FIRST_TRIAL + chooser.TRIAL_CALLS) // 2 + 1):
        for k in kernels:
            k()
    assert chooser.threads == (2 if wide_faster else 1)
    assert chooser.switches == (1 if wide_faster else 0)


def test_the_first_calls_after_a_change_of_team_are_not_held_against_it(openblas, clock):
    """A team that was idle wakes its threads in its first calls: those are slow whichever team is
    faster afterwards, and must not decide the choice (a step's several kernels each get only a few
    calls in a trial, so the slow ones weighed heavily)."""
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    since_switch = {"team": chooser.current, "calls": 0}

    def kernel_time():
        if chooser.current != since_switch["team"]:
            since_switch.update(team=chooser.current, calls=0)
        since_switch["calls"] += 1
        if since_switch["calls"] <= chooser.SETTLE_CALLS:
            return 0.02  # waking the team
        return 0.0005 if chooser.current == 2 else 0.002
    kernels = [blas.ThreadChooser.new_timings() for _ in range(8)]  # one step's eight BLAS kernels, called in turn
    for i in range(chooser.FIRST_TRIAL + chooser.TRIAL_CALLS + 1):
        chooser.run(lambda: clock.sleep(kernel_time()), (), kernels[i % len(kernels)])
    assert chooser.threads == 2 and chooser.switches == 1


def test_no_trials_while_the_wide_team_runs_at_its_best_and_one_when_it_slows(openblas, clock, monkeypatch):
    """A quiet machine keeps the wide team without paying for trials of the narrow one; when
    something takes a core (the wide team slows), the narrow team is tried and kept."""
    _gap_between_trials(monkeypatch, 0.0)
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    seconds = {2: 0.0003, 1: 0.0012}
    kernels = [_kernel_taking(chooser, seconds) for _ in range(2)]
    narrow_calls = 0

    def step():
        nonlocal narrow_calls
        for k in kernels:
            k()
            narrow_calls += chooser.current == 1
    for _ in range((chooser.FIRST_TRIAL + chooser.TRIAL_CALLS) // 2 + 1):
        step()
    assert chooser.threads == 2
    narrow_calls = 0
    for _ in range(3 * chooser.TRIAL_EVERY // 2):  # three trials' worth of calls
        step()
    assert narrow_calls == 0
    seconds.update({2: 0.003, 1: 0.0012})  # a CPU hog arrives: the wide team waits for its slow thread
    for _ in range(chooser.TRIAL_EVERY + chooser.TRIAL_CALLS):
        step()
    assert chooser.threads == 1 and chooser.switches == 2


def test_the_wide_team_must_win_clearly_and_the_narrow_one_is_tried_without_waiting(openblas, clock, monkeypatch):
    """Picking the wide team under a load costs far more than keeping the narrow one on a quiet
    machine: a small edge does not move the choice to the wide team. Once on the wide team, its
    slowing down gets the narrow one tried at the next trial point, whatever the gap between trials."""
    _gap_between_trials(monkeypatch, 60.0)
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    seconds = {2: 0.00085, 1: 0.001}
    kernels = [_kernel_taking(chooser, seconds) for _ in range(2)]
    _call_until_trial(chooser, kernels, 1)
    assert chooser.threads == 1
    _gap_between_trials(monkeypatch, 0.0)
    seconds[2] = 0.0005
    _call_until_trial(chooser, kernels, 2)
    assert chooser.threads == 2
    _gap_between_trials(monkeypatch, 60.0)
    seconds[2] = 0.003  # a CPU hog arrives
    for _ in range(chooser.TRIAL_EVERY + chooser.TRIAL_CALLS):
        for k in kernels:
            k()
    assert chooser.trials == 3 and chooser.threads == 1


def test_a_trial_times_its_team_afresh(openblas, clock, monkeypatch):
    """The narrow team was slow long ago (the machine was busy then); when the wide team slows
    later and the narrow one is tried again, its old times must not count against it: a step's
    kernels each get only a few calls in a trial."""
    _gap_between_trials(monkeypatch, 0.0)
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    seconds = {2: 0.0001, 1: 0.01}
    kernels = [_kernel_taking(chooser, seconds) for _ in range(8)]
    _call_until_trial(chooser, kernels, 1)
    assert chooser.threads == 2
    seconds.update({2: 0.003, 1: 0.002})
    _call_until_trial(chooser, kernels, 2)
    assert chooser.threads == 1


def test_a_trial_is_put_off_only_so_long(openblas, clock, monkeypatch):
    """A wide team at its best is tried against the narrow one anyway once PUT_OFF_S has passed:
    its best may have been measured under a load that was there from the start."""
    _gap_between_trials(monkeypatch, 0.0)
    monkeypatch.setattr(blas.ThreadChooser, "PUT_OFF_S", 0.0)
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    kernel = _kernel_taking(chooser, {2: 0.0001, 1: 0.0004})
    for _ in range(chooser.FIRST_TRIAL + chooser.TRIAL_CALLS):
        kernel()
    assert chooser.threads == 2
    trials = chooser.trials
    for _ in range(2 * chooser.TRIAL_EVERY):
        kernel()
    assert chooser.trials == trials + 1 and chooser.threads == 2


@pytest.mark.parametrize("gap", [0.0, 60.0])
def test_trials_are_at_least_a_gap_apart(openblas, clock, monkeypatch, gap):
    """After a trial of the wide team its idle threads spin for a while: trials every few hundred
    calls kept them spinning for good (on a busy machine, against the work itself)."""
    _gap_between_trials(monkeypatch, gap)
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    kernel = _kernel_taking(chooser, {2: 0.0004, 1: 0.0001})  # the narrow team stays faster
    for _ in range(chooser.FIRST_TRIAL + chooser.TRIAL_CALLS):
        kernel()
    assert chooser.threads == 1
    wide_calls = 0
    for _ in range(2 * chooser.TRIAL_EVERY):
        kernel()
        wide_calls += chooser.current == 2
    assert wide_calls == (0 if gap else chooser.TRIAL_CALLS)


def test_trials_come_less_often_while_the_choice_holds_and_sooner_after_a_switch(openblas, clock):
    """Under a lasting CPU hog every trial of the wide team slowed a second of steps 2-4x: the gap
    doubles while trials keep the choice, up to MAX_GAP_S, and comes back down after a switch."""
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    seconds = {2: 0.004, 1: 0.001}  # the narrow team stays faster (a hog)
    kernel = _kernel_taking(chooser, seconds)
    trial_times = []

    def run_until_trials(n):
        while chooser.trials < n:
            before = chooser.trials
            kernel()
            if chooser.trials != before:
                trial_times.append(clock.now)
    run_until_trials(12)
    assert chooser.threads == 1 and chooser.switches == 0
    gaps = [b - a for a, b in zip(trial_times, trial_times[1:])]
    # Trials can only start every TRIAL_EVERY calls: gaps are measured to that grain.
    grain = chooser.TRIAL_EVERY * seconds[1] + chooser.TRIAL_CALLS * seconds[2]
    assert all(b >= a - grain for a, b in zip(gaps, gaps[1:])), gaps
    assert gaps[-1] >= chooser.MAX_GAP_S and gaps[-1] <= chooser.MAX_GAP_S + 2 * grain, gaps
    assert gaps[2] < chooser.TRIAL_GAP_S  # the first ones come sooner
    seconds.update({2: 0.0005, 1: 0.001})  # the hog is gone
    run_until_trials(13)
    assert chooser.threads == 2 and chooser.switches == 1
    seconds.update({2: 0.004})  # and back: the wide team slows, the narrow one is tried at once
    run_until_trials(14)
    assert chooser.threads == 1 and chooser.switches == 2
    run_until_trials(15)  # a switch brought the gap back down
    assert trial_times[-1] - trial_times[-2] <= chooser.TRIAL_GAP_S + 2 * grain


@pytest.mark.parametrize("then", ["others_stop", "this_process_mostly_sleeps"])
def test_the_wide_team_is_not_tried_while_other_processes_keep_cores_busy(openblas, clock, monkeypatch, then):
    """A wide team waits for the cores another process takes, and its trial is what costs: while
    /proc/stat shows other processes using OTHERS_BUSY cores or more as this one runs, no trial of it
    runs. Once they stop, one does; and so it does when this process mostly slept meanwhile (others
    may have run only then, as in a benchmark that takes turns: the look proves nothing)."""
    _gap_between_trials(monkeypatch, 0.0)
    rates = {"mine": 1.0, "others": 1.0}  # cores' worth of CPU
    machine = {"busy": 0.0, "mine": 0.0, "at": clock.now}

    def cpu_busy():  # the machine's counters, advanced with the fake clock
        elapsed, machine["at"] = clock.now - machine["at"], clock.now
        machine["mine"] += elapsed * rates["mine"]
        machine["busy"] += elapsed * (rates["mine"] + rates["others"])
        return machine["busy"], machine["mine"]
    monkeypatch.setattr(blas, "_cpu_busy", cpu_busy)
    chooser = blas.ThreadChooser(wide=2, narrow=1)
    seconds = {2: 0.001, 1: 0.002}  # were it tried now, the wide team would look faster
    kernel = _kernel_taking(chooser, seconds)
    wide_calls = 0
    for _ in range(20 * chooser.TRIAL_EVERY):
        kernel()
        wide_calls += chooser.current == 2
    assert wide_calls == 0 and chooser.trials == 0 and chooser.threads == 1
    if then == "others_stop":
        rates["others"] = 0.2
    else:
        rates["mine"] = 0.3
    calls = 0
    while chooser.current != 2:
        kernel()
        calls += 1
    # Looks come every LOOK_AGAIN calls while the cores are taken: the first one that sees the change
    # (the one after may be needed, its window starting before) starts the trial.
    assert calls <= 2 * chooser.LOOK_AGAIN + 1
    for _ in range(chooser.TRIAL_CALLS):
        kernel()
    assert chooser.trials == 1 and chooser.threads == 2


def test_the_machines_load_counts_only_the_cpus_this_process_may_use(tmp_path, monkeypatch):
    stat = tmp_path / "stat"
    stat.write_text("cpu  900 0 300 5000 100 0 0 50 0 0\n"
                    "cpu0 100 0 100 2000 50 0 0 0 0 0\n"
                    "cpu1 300 0 100 1000 50 0 0 20 0 0\n"
                    "cpu2 500 0 100 2000 0 0 0 30 0 0\n"
                    "intr 12345 0 0\nctxt 999\n")
    monkeypatch.setattr(blas, "_PROC_STAT", str(stat))
    monkeypatch.setattr(blas.os, "sched_getaffinity", lambda pid: {1, 2})
    busy, mine = blas._cpu_busy()
    # cpu1: user 300 + system 100 + steal 20; cpu2: 500 + 100 + 30 (idle and iowait are not busy)
    assert busy == pytest.approx((420 + 630) * blas._TICK_S) and mine >= 0
    monkeypatch.setattr(blas, "_PROC_STAT", str(tmp_path / "missing"))
    assert blas._cpu_busy() is None


def test_a_session_with_several_host_devices_chooses_and_a_fixed_count_does_not(openblas):
    tf.Session(config=tf.ConfigProto(device_count={"CPU": 1})).close()
    if blas.blas_threads() < 2:
        pytest.skip("one BLAS thread in all: nothing to choose")
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3})):
        chooser = blas.thread_chooser()
        assert chooser is not None and chooser.teams[1] == blas.blas_threads()
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 3}, intra_op_parallelism_threads=1)):
        assert blas.thread_chooser() is None
    with tf.Session(config=tf.ConfigProto(device_count={"CPU": 1})):
        assert blas.thread_chooser() is None


def test_blas_kernels_hand_no_work_to_other_threads_while_their_team_may_fill_the_cores(openblas, monkeypatch):
    """Before an expensive kernel an executor hands the loops waiting on its thread to the runner,
    so they run alongside. Beside a BLAS kernel whose team may use every core they would only fight
    it (BLAS calls never overlap anyway), so its kernels, and optimizer updates done with axpy, do
    not count as expensive then; with one BLAS thread they do."""
    import numpy as np
    from graphrt.runtime import graph_executor as ge
    tf.Session(config=tf.ConfigProto(device_count={"CPU": 1})).close()
    if blas.blas_threads() < 2:
        pytest.skip("one BLAS thread in all: the team never fills more than one core")
    monkeypatch.setattr(ge, "EXPENSIVE_NS", 0)  # every measured kernel is worth a hand-off
    a = np.ones((32, 32), np.float32)
    with tf.Graph().as_default():
        x = tf.placeholder(tf.float32, [32, 32])
        with tf.device("/cpu:0"):
            w = tf.Variable(a)
            h = tf.nn.relu(tf.matmul(x, w))
        with tf.device("/cpu:1"):
            loss = tf.reduce_sum(tf.matmul(h, tf.constant(a)))
        train = tf.train.GradientDescentOptimizer(0.1).minimize(loss, colocate_gradients_with_ops=True)
        for threads, spans in ((0, True), (1, False)):
            config = tf.ConfigProto(device_count={"CPU": 2}, intra_op_parallelism_threads=threads)
            with tf.Session(config=config) as sess:
                sess.run(tf.global_variables_initializer())
                for _ in range(ge.PROFILED_RUNS + 1):
                    sess.run(train, {x: a})
                items = [it for ex in sess.plan_for(train, {x: a}).executors for it in ex.items]
            by_op = {}
            for it in items:
                by_op.setdefault(it.op, []).append(it)
            blas_ops = by_op["MatMul"] + by_op["ApplyGradientDescent"]
            assert len(by_op["MatMul"]) >= 3 and all(it.blas_team for it in blas_ops)
            assert [it.expensive for it in blas_ops] == [not spans] * len(blas_ops)
            assert not any(it.blas_team for it in by_op["Relu"]) and all(it.expensive for it in by_op["Relu"])
