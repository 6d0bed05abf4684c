"""samples/char_rnn.py in a quick mode: the tf.data-fed LSTM's loss falls and it
prints a generated line."""
import os
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def test_char_rnn_trains_and_generates():
    result = subprocess.run([sys.executable, os.path.join(ROOT, "samples", "char_rnn.py"), "--steps", "60",
                             "--print-every", "20"], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    assert lines[0].startswith("text: ") and "vocabulary of" in lines[0]
    losses = [float(line.split("loss")[1].split()[0]) for line in lines if line.startswith("step")]
    assert len(losses) == 4  # steps 1, 20, 40, 60
    assert 3.5 < losses[0] < 4.5  # about log(vocabulary size) before training
    assert losses[-1] < losses[0] - 1.0 and losses[-1] < losses[1]
    generated = [line for line in lines if line.startswith("generated: ")]
    assert len(generated) == 1
    text = generated[0][len("generated: "):]
    assert text.startswith("Alice ") and len(text) > len("Alice ") + 5
