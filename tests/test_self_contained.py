"""The repository stands alone: the tests, README, docs, samples and benchmarks read
nothing outside it, so a fresh clone runs every test (none skips for a
missing file elsewhere)."""
import os
import re

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUTSIDE = re.compile(r"\.\./shared|/work/")


def _files():
    for top in ("tests", "samples", "benchmarks", "graphrt", "docs"):
        for folder, _, names in os.walk(os.path.join(ROOT, top)):
            for name in names:
                if name.endswith((".py", ".md", ".json", ".txt")):
                    yield os.path.join(folder, name)
    yield os.path.join(ROOT, "README.md")


def test_nothing_points_outside_the_repository():
    this = os.path.abspath(__file__)
    found = []
    for path in _files():
        if path == this:
            continue
        with open(path, encoding="utf-8", errors="replace") as f:
            for number, line in enumerate(f, 1):
                if OUTSIDE.search(line):
                    found.append(f"{os.path.relpath(path, ROOT)}:{number}: {line.strip()}")
    assert found == []
