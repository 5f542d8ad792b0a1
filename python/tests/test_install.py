# Guards: CMakeLists.txt (install rules), cmake/TalusConfig.cmake.in, cmake/talus.pc.in,
# examples/installed/, python/CMakeLists.txt.
"""The installed package: `cmake --install` of the build into a temporary prefix, then
- examples/installed/ (outside the source tree) configured with find_package(Talus) against that
  prefix, built and run on the installed robot (both the Talus::talus and the
  Talus::talus_controllers programs), and compiled once more with `pkg-config --cflags --libs
  talus` alone;
- the installed `talus simulate`, run from another folder, finds its default robot in
  <prefix>/share/talus (no path of the build machine compiled in), and `talus bench --python
  --help` finds the benchmark script;
- the installed Python package imports from <prefix>/lib/pythonX.Y/site-packages."""
import os
import shutil
import subprocess
import sys

import pytest

from conftest import SOURCE_DIR, build_dir


def run(cmd, **kw):
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, **kw)
    assert proc.returncode == 0, f"{' '.join(map(str, cmd))} failed ({proc.returncode}):\n{proc.stdout[-2000:]}\n" \
                                 f"{proc.stderr[-2000:]}"
    return proc.stdout


@pytest.fixture(scope="module")
def prefix(tmp_path_factory):
    build = build_dir()
    if not (build / "CMakeCache.txt").exists():
        pytest.skip(f"no CMake build at {build} (set TALUS_BUILD_DIR)")
    if not shutil.which("cmake"):
        pytest.skip("cmake not on PATH")
    p = tmp_path_factory.mktemp("prefix")
    run(["cmake", "--install", str(build), "--prefix", str(p)])
    return p


def test_installed_files(prefix):
    for rel in ["bin/talus", "bin/talus_bench", "include/talus/talus.h", "include/talus/batch.h",
                "include/talus/task.h", "include/talus/controllers/stand.h", "lib/libtalus.a",
                "lib/libtalus_controllers.a", "lib/pkgconfig/talus.pc", "lib/cmake/Talus/TalusConfig.cmake",
                "share/talus/robots/talus_quadruped/talus_quadruped.urdf", "share/talus/bench/vecenv_bench.py"]:
        assert (prefix / rel).exists(), rel


def test_example_builds_with_find_package(prefix, tmp_path):
    app = tmp_path / "app"
    run(["cmake", "-S", str(SOURCE_DIR / "examples" / "installed"), "-B", str(app), f"-DCMAKE_PREFIX_PATH={prefix}",
         "-DCMAKE_BUILD_TYPE=Release"])
    run(["cmake", "--build", str(app), "-j2"])
    urdf = prefix / "share/talus/robots/talus_quadruped/talus_quadruped.urdf"
    for program in ("batch_stand", "batch_stand_controller"):
        out = run([str(app / program), str(urdf)], cwd=tmp_path)
        heights = [float(line.split()[-2]) for line in out.splitlines() if "base height" in line]
        assert len(heights) == 4 and all(0.3 < z < 0.7 for z in heights), out


def test_example_builds_with_pkg_config(prefix, tmp_path):
    if not shutil.which("pkg-config") or not shutil.which("cc"):
        pytest.skip("pkg-config or cc not on PATH")
    env = dict(os.environ, PKG_CONFIG_PATH=str(prefix / "lib" / "pkgconfig"))
    flags = run(["pkg-config", "--cflags", "--libs", "talus"], env=env).split()
    exe = tmp_path / "batch_stand_pc"
    run(["cc", str(SOURCE_DIR / "examples" / "installed" / "main.c"), "-o", str(exe)] + flags)
    out = run([str(exe), str(prefix / "share/talus/robots/talus_quadruped/talus_quadruped.urdf")])
    assert out.count("base height") == 4


def test_installed_cli_finds_its_data(prefix, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "TALUS_DATA_DIR"}
    out = run([str(prefix / "bin" / "talus"), "simulate", "--duration", "0.05"], cwd=tmp_path, env=env)
    assert f"{prefix}/bin/../share/talus/robots/talus_quadruped/talus_quadruped.urdf" in out
    # a moved install tree still works: nothing absolute was compiled in
    moved = tmp_path / "moved"
    shutil.copytree(prefix, moved, symlinks=True)
    out = run([str(moved / "bin" / "talus"), "simulate", "--duration", "0.05"], cwd=tmp_path, env=env)
    assert f"{moved}/bin/../share/talus/robots" in out
    out = run([str(prefix / "bin" / "talus"), "bench", "--python", "--help"], cwd=tmp_path, env=env)
    assert "vecenv" in out.lower() or "VecEnv" in out


def test_installed_python_package_imports(prefix, tmp_path):
    site = next((prefix / "lib").glob("python3*/site-packages"))
    env = dict(os.environ, PYTHONPATH=str(site))
    out = run([sys.executable, "-c", "import talus; print(talus.__file__); print(talus.Model.__name__)"],
              cwd=tmp_path, env=env)
    assert str(site) in out.splitlines()[0]
