# Guards: nothing by itself: the pytest fixtures and paths of python/tests.
"""pytest setup for the talus Python package.

Run by scripts/test.sh through ctest (tests/CMakeLists.txt: PYTHONPATH=<build>/python,
TALUS_BUILD_DIR=<build>), or by hand:
    PYTHONPATH=build/python TALUS_BUILD_DIR=build /usr/bin/python3 -m pytest python/tests
Tests that need the shared robot corpus (../shared beside the source tree, or
$TALUS_SHARED_ROBOTS) are SKIPPED with the reason when it is absent.
"""
import os
import pathlib

import pytest

import talus

SOURCE_DIR = pathlib.Path(__file__).resolve().parents[2]
ROBOTS = SOURCE_DIR / "robots"


def _shared_robots():
    env = os.environ.get("TALUS_SHARED_ROBOTS")
    if env:
        return pathlib.Path(env)
    if talus.vecenv.SHARED_ROBOTS_DEFAULT:
        return pathlib.Path(talus.vecenv.SHARED_ROBOTS_DEFAULT)
    return SOURCE_DIR.parent / "shared" / "robots"


SHARED_ROBOTS = _shared_robots()
SHARED_REFERENCE = SHARED_ROBOTS.parent / "reference"
ANYMAL = SHARED_ROBOTS / "anymal_c" / "urdf" / "anymal.urdf"
CARTPOLE = SHARED_ROBOTS / "cartpole" / "cartpole.urdf"


def build_dir():
    """The CMake build folder: $TALUS_BUILD_DIR, else the one holding the imported package."""
    env = os.environ.get("TALUS_BUILD_DIR")
    if env:
        return pathlib.Path(env)
    return pathlib.Path(talus.__file__).resolve().parents[2]


def needs(path, what):
    """Skip (with the reason) when a shared file is missing."""
    if not pathlib.Path(path).exists():
        pytest.skip(f"{what} not found at {path} ({SHARED_MISSING}; set TALUS_SHARED_ROBOTS)")


@pytest.fixture
def anymal_urdf():
    needs(ANYMAL, "ANYmal C")
    return str(ANYMAL)


@pytest.fixture
def cartpole_urdf():
    needs(CARTPOLE, "cartpole")
    return str(CARTPOLE)


SHARED_MISSING = "the shared robot corpus ../shared is absent"
SANITIZED = bool(os.environ.get("TALUS_SANITIZED"))


def pytest_sessionfinish(session, exitstatus):
    """Under ctest (TALUS_SKIP_EXIT_CODE=77): a run in which everything that ran passed but some
    tests were skipped because the shared robots are absent exits with that code, so ctest reports
    the test as skipped instead of passed."""
    code = os.environ.get("TALUS_SKIP_EXIT_CODE")
    if not code or exitstatus != 0:
        return
    reporter = session.config.pluginmanager.get_plugin("terminalreporter")
    skipped = reporter.stats.get("skipped", []) if reporter is not None else []
    if any(SHARED_MISSING in str(getattr(r, "longrepr", "")) for r in skipped):
        session.exitstatus = int(code)
