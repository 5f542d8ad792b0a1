#!/usr/bin/env bash
# Build Talus and run its test suite twice: a Release build, then a Debug build with
# AddressSanitizer + UndefinedBehaviorSanitizer (TALUS_SANITIZE=ON); then fuzz every input format
# for a bounded time (scripts/fuzz.sh, clang).
# This is the README's test command and what CI (.ci/run) runs after scripts/setup.sh.
# ctest --no-tests=error: a build that registers no test fails instead of passing silently.
# The Python tests (pytest, python/tests) are ctest tests too (python, python_install,
# python_train_smoke): in the sanitizer build they run with libasan preloaded into the
# interpreter (tests/CMakeLists.txt), the PyTorch smoke run only in the Release build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

echo "== Release build + tests (build/)"
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release
cmake --build build -j2
ctest --test-dir build --output-on-failure --no-tests=error

# The solver and contact tests again under another OpenBLAS kernel than the one this CPU selects
# (issue 11): a result that changes with OPENBLAS_CORETYPE is a bug. Sandybridge (AVX) runs on
# every x86-64 CPU CI uses; Nehalem (SSE4) when Sandybridge is already the default.
if [[ "$(uname -m)" == x86_64 ]]; then
  core=$(OPENBLAS_VERBOSE=2 build/tests/test_determinism --probe 2>&1 | sed -n 's/^Core: //p' || true)
  other=Sandybridge
  [[ "$core" == Sandybridge ]] && other=Nehalem
  echo "== solver tests under OPENBLAS_CORETYPE=$other (this CPU's default: ${core:-not reported})"
  OPENBLAS_CORETYPE=$other ctest --test-dir build --output-on-failure --no-tests=error -L solver
fi

echo "== Debug build with address and undefined-behaviour sanitizers + tests (build-asan/)"
cmake -S . -B build-asan -DCMAKE_BUILD_TYPE=Debug -DTALUS_SANITIZE=ON
cmake --build build-asan -j2
ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}" \
UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}" \
  ctest --test-dir build-asan --output-on-failure --no-tests=error

# Fuzzing (README "Fuzzing", scripts/fuzz.sh): every libFuzzer harness for TALUS_FUZZ_SECONDS (default 60)
# in a clang build of its own (build-fuzz/); an input that crashes or breaks an invariant fails the run
# and is kept under tests/fuzz/regressions/<harness>/ (the fuzz_* ctest tests above replay those).
echo "== fuzzing: scripts/fuzz.sh, ${TALUS_FUZZ_SECONDS:-60} s per harness (build-fuzz/)"
scripts/fuzz.sh --seconds "${TALUS_FUZZ_SECONDS:-60}"

echo "== test.sh: Release and sanitizer test runs and fuzzing passed"
