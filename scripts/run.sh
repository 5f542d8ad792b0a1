#!/usr/bin/env bash
# Install what Talus needs, build it (Release: the library, the talus command, the benchmarks,
# the examples and the Python module in build/python) and run the default simulation (the
# README's first command). Extra arguments go to `talus simulate`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
# the Python module, built when CMake found Python 3 with NumPy: check that it imports
python=$(sed -n 's/^Python3_EXECUTABLE:[A-Z]*=//p' build/CMakeCache.txt)
if [[ -n "$python" ]] && compgen -G "build/python/talus/_talus*.so" >/dev/null; then
  PYTHONPATH=build/python "$python" -c \
    "import talus; print('python: PYTHONPATH=build/python $python -c \"import talus\" (talus', talus.__version__ + ')')"
fi
./build/talus simulate "$@"
