#!/usr/bin/env bash
# Install what Talus needs, build it (Release) and run the default simulation
# (the README's first command). Extra arguments go to `talus simulate`.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
bash scripts/setup.sh
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
./build/talus simulate "$@"
