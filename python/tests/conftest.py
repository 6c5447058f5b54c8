"""Shared by the module's tests: the source tree, the command-line binary, and the line that
tells ctest a file's tests were all skipped (no GPU, no CuPy...)."""
import os
import subprocess
import sys

import pytest

SOURCE = os.environ.get("CASCADE_SOURCE_DIR") or os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DECK = os.path.join(SOURCE, "input", "decaying.yaml")
# Run by hand from the source tree: the module of build/ (PYTHONPATH=build/python does the same).
if "CASCADE_SOURCE_DIR" not in os.environ and os.path.isdir(os.path.join(SOURCE, "build", "python")):
    sys.path.insert(0, os.path.join(SOURCE, "build", "python"))


def binary():
    path = os.environ.get("CASCADE_BINARY") or os.path.join(SOURCE, "build", "cascade")
    return path if os.access(path, os.X_OK) else None


@pytest.fixture
def cli():
    """cli(*args) runs `cascade ARGS`; returns (exit code, stdout, stderr)."""
    path = binary()
    if path is None:
        pytest.skip("no cascade binary (set CASCADE_BINARY)")

    def run(*args):
        p = subprocess.run([path, *args], capture_output=True, text=True, timeout=600)
        return p.returncode, p.stdout, p.stderr
    return run


def pytest_terminal_summary(terminalreporter):
    stats = terminalreporter.stats
    if stats.get("skipped") and not any(stats.get(k) for k in ("passed", "failed", "error", "xpassed")):
        terminalreporter.write_line("every test skipped")
