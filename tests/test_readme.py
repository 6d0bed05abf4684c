"""The README's Python examples run as written and print what the README says they print.

Every ```python block in README.md must be followed by its expected output:

    Output:

    ```text
    0.28486314
    ```

(a line `Output:`, then a ```text block; blank lines between them are fine).
Each example runs in a fresh interpreter in an empty directory, and what it
prints must match the block:

* `...` stands for any text (say, a random incarnation), even several lines;
* every number must agree within rtol 1e-3 (floats print a little differently
  from one BLAS to another), and an integer as a float too (`768` is `768.0`);
* runs of whitespace only need to be whitespace (tables may be aligned differently).
"""
import os
import re
import subprocess
import sys

import numpy as np
import pytest

README = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "README.md")
TEXT = open(README).read()
EXAMPLE = re.compile(r"```python\n(?P<code>.*?)```\n(?:\s*\nOutput:\n\s*\n```text\n(?P<output>.*?)```)?", re.S)
EXAMPLES = [(m.group("code"), m.group("output")) for m in EXAMPLE.finditer(TEXT)]
NUMBER = r"[-+]?(?:\d+\.\d*|\.\d+|\d+)(?:[eE][-+]?\d+)?"
TOKEN = re.compile(rf"(?P<any>\.\.\.)|(?P<number>{NUMBER})|(?P<space>\s+)")


def output_pattern(expected):
    """A regex for what `expected` allows, and the numbers it expects (one group each)."""
    parts, numbers, last = [], [], 0
    for m in TOKEN.finditer(expected):
        parts.append(re.escape(expected[last:m.start()]))
        if m.group("any"):
            parts.append(r".*?")
        elif m.group("number"):
            parts.append(f"({NUMBER})")
            numbers.append(float(m.group("number")))
        else:
            parts.append(r"\s+")
        last = m.end()
    parts.append(re.escape(expected[last:]))
    return re.compile("".join(parts), re.S), numbers


def output_problem(expected, printed):
    """None if `printed` matches `expected` (rules in the module doc), else why not."""
    pattern, numbers = output_pattern(expected.strip())
    match = pattern.fullmatch(printed.strip())
    if match is None:
        return "the text differs"
    got = [float(g) for g in match.groups()]
    bad = [(i, w, g) for i, (w, g) in enumerate(zip(numbers, got)) if not np.isclose(g, w, rtol=1e-3, atol=1e-6)]
    return f"numbers differ (index, expected, printed): {bad[:5]}" if bad else None


def test_every_example_has_its_output():
    assert len(EXAMPLES) == TEXT.count("```python") >= 5
    missing = [code.splitlines()[-1] for code, output in EXAMPLES if output is None]
    assert not missing, f"examples without an 'Output:' block (their last lines): {missing}"


@pytest.mark.parametrize("index", range(len(EXAMPLES)))
def test_readme_example_prints_its_output(index, tmp_path):
    code, expected = EXAMPLES[index]
    if expected is None:
        pytest.fail("this example has no 'Output:' block after it (see the module doc)")
    result = subprocess.run([sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stderr
    problem = output_problem(expected, result.stdout)
    assert problem is None, f"{problem}\n--- README says:\n{expected}\n--- the example printed:\n{result.stdout}"


@pytest.mark.parametrize("expected, printed, ok", [
    ("0.28486314", "0.2848632\n", True),
    ("0.28486314", "0.2858632\n", False),                   # beyond rtol 1e-3
    ("768.0", "768.\n", True),
    ("[2. 4. 6. 8.]", "[2. 4. 6. 9.]", False),
    ("key;...;edge_2_a;0:0", "key;6ec3073bc54f28b4;edge_2_a;0:0", True),
    ("key;...;edge_2_a;0:0", "key;6ec3073bc54f28b4;edge_3_a;0:0", False),
    ("a  b\n...\nz", "a b\nmany\nlines\nz", True),
    ("['w:0', 'b:0']", "['w:0', 'c:0']", False),
    ("1.0", "1.0\n2.0", False),                              # more output than the README shows
])
def test_outputs_are_compared_as_the_module_doc_says(expected, printed, ok):
    assert (output_problem(expected, printed) is None) == ok


def test_readme_shows_the_two_commands():
    assert "pip install -e . && python samples/model_parallel_mlp.py" in TEXT
    assert "pip install -e '.[test]' && python -m pytest -q" in TEXT
