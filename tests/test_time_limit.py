"""The suite's per-test time limit (conftest.time_limit): a hang fails the test with the stacks."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

HANGING = '''
import threading


def test_hangs():
    threading.Event().wait()


def test_is_quick():
    assert True
'''


def test_a_hanging_test_fails_with_the_stacks_and_the_next_one_runs(tmp_path):
    (tmp_path / "test_hang.py").write_text(HANGING)
    env = dict(os.environ, GRAPHRT_TEST_TIME_LIMIT_S="1")
    result = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "tests.conftest",
                             "--rootdir", str(tmp_path), str(tmp_path / "test_hang.py")],
                            cwd=ROOT, env=env, capture_output=True, text=True, timeout=100)
    out = result.stdout
    assert result.returncode == 1, out + result.stderr
    assert "1 failed, 1 passed" in out
    assert "TimeLimitExceeded: test_hang.py::test_hangs ran over its time limit of 1 s" in out
    assert "in test_hangs" in out  # faulthandler's dump of the stuck thread
