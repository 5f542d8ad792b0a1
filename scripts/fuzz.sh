#!/usr/bin/env bash
# Fuzz Talus's input formats with libFuzzer (clang, -fsanitize=fuzzer,address,undefined): one harness
# per format (tests/fuzz/fuzz_<harness>.c; README "Fuzzing"), each for a bounded time.
#
#   scripts/fuzz.sh [--seconds N] [--build DIR] [HARNESS...]
#
#   --seconds N  fuzzing time per harness (default 60: what CI runs from scripts/test.sh)
#   --build DIR  the clang build folder (default build-fuzz; TALUS_FUZZ=ON, RelWithDebInfo)
#   HARNESS      any of: urdf world snapshot sweep engine_options viewer control (default: all)
#
# Each harness starts from its seeds (the project's own robots, world files, sweep files, snapshots the
# snapshot harness writes of its world, tests/fuzz/seeds/) and its regression inputs, and keeps the
# inputs it found in DIR/fuzz/<harness>/corpus (reused by the next run in the same folder). An input
# that crashes, leaks, breaks a harness's invariant, runs out of memory (-rss_limit_mb=2048) or takes
# more than 10 s is copied to tests/fuzz/regressions/<harness>/, which the ctest tests fuzz_<harness>
# replay in every build (label fuzz): fix the bug, keep the input. The table at the end gives per
# harness the inputs run and libFuzzer's coverage (cov: code edges reached, ft: features) and the result;
# it is also written to DIR/fuzz/summary.txt. Exit status 1 if any harness found something.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."

seconds=60
build=build-fuzz
harnesses=()
while [[ $# -gt 0 ]]; do
  case "$1" in
    --seconds) seconds="$2"; shift 2 ;;
    --seconds=*) seconds="${1#*=}"; shift ;;
    --build) build="$2"; shift 2 ;;
    --build=*) build="${1#*=}"; shift ;;
    -h|--help) sed -n '2,18p' "$0"; exit 0 ;;
    -*) echo "fuzz.sh: unknown option $1 (--seconds N, --build DIR, HARNESS...)" >&2; exit 2 ;;
    *) harnesses+=("$1"); shift ;;
  esac
done
all=(urdf world snapshot sweep engine_options viewer control)
[[ ${#harnesses[@]} -eq 0 ]] && harnesses=("${all[@]}")
for h in "${harnesses[@]}"; do
  [[ " ${all[*]} " == *" $h "* ]] || { echo "fuzz.sh: unknown harness '$h' (${all[*]})" >&2; exit 2; }
done
if ! [[ "$seconds" =~ ^[0-9]+$ ]] || [[ "$seconds" -lt 1 ]]; then
  echo "fuzz.sh: --seconds '$seconds': expected a whole number >= 1" >&2
  exit 2
fi
cc=${TALUS_FUZZ_CC:-clang}
if ! command -v "$cc" >/dev/null 2>&1; then
  echo "fuzz.sh: $cc not found: fuzzing needs clang with libFuzzer (Debian: clang; scripts/setup.sh)" >&2
  exit 1
fi

launcher=()
command -v ccache >/dev/null 2>&1 && launcher=(-DCMAKE_C_COMPILER_LAUNCHER=ccache)
echo "== fuzz.sh: clang build with libFuzzer, ASan and UBSan ($build/)"
cmake -S . -B "$build" -DCMAKE_C_COMPILER="$cc" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTALUS_FUZZ=ON \
  -DTALUS_TESTS=OFF -DTALUS_PYTHON=OFF -DTALUS_MPI=OFF "${launcher[@]}" >/dev/null
targets=()
for h in "${harnesses[@]}"; do targets+=(--target "fuzz_$h"); done
# the engine plugins, for fuzz_engine_options (built when their libraries are installed)
for p in talus_engine_ode talus_engine_mujoco; do
  if cmake --build "$build" --target help 2>/dev/null | grep -q "$p"; then targets+=(--target "$p"); fi
done
cmake --build "$build" -j2 "${targets[@]}"

seeds() { # the seed folders of harness $1 (as tests/CMakeLists.txt's fuzz_<harness> tests)
  case "$1" in
    urdf) echo robots/pendulum robots/double_pendulum robots/talus_quadruped robots/ball tests/urdf_bad robots/four_bar robots/talus_fivebar robots/hinge2_car ;;
    world) echo robots/worlds tests/world_bad tests/world_bad_constraint ;;
    snapshot) echo "$absbuild/fuzz/snapshot/seeds" ;;
    sweep) echo examples/sweeps tests/fuzz/seeds/sweep ;;
    engine_options) echo tests/fuzz/seeds/engine_options ;;
    viewer) echo tests/fuzz/seeds/viewer ;;
    control) echo tests/fuzz/seeds/control ;;
  esac
}

export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
summary="$build/fuzz/summary.txt"
mkdir -p "$build/fuzz"
printf '%-15s %10s %7s %7s %7s  %s\n' harness inputs cov ft corpus result > "$summary"
found=0
absbuild=$(cd "$build" && pwd)
for h in "${harnesses[@]}"; do
  work="$absbuild/fuzz/$h" # absolute: a harness may change directories while it runs
  mkdir -p "$work/corpus" "$work/artifacts"
  rm -f "$work/artifacts/"*
  if [[ "$h" == snapshot ]]; then
    mkdir -p "$work/seeds"
    TALUS_FUZZ_WRITE_SEEDS="$work/seeds" "$build/fuzz_snapshot"
  fi
  dirs=()
  regress="tests/fuzz/regressions/$h"
  [[ -d "$regress" ]] && dirs+=("$regress")
  for d in $(seeds "$h"); do dirs+=("$d"); done
  dict=()
  [[ -f "tests/fuzz/dict/$h.dict" ]] && dict=(-dict="tests/fuzz/dict/$h.dict") # element and attribute names
  echo "== fuzz.sh: $h for ${seconds} s (seeds: ${dirs[*]})"
  set +e
  "$build/fuzz_$h" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -error_exitcode=1 \
    -print_final_stats=1 -artifact_prefix="$work/artifacts/" "${dict[@]}" "$work/corpus" "${dirs[@]}" >"$work/log.txt" 2>&1
  rc=$?
  set -e
  inputs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/log.txt" | tail -1)
  last=$(grep -E '^#[0-9]+' "$work/log.txt" | grep -E 'cov: [0-9]+' | tail -1 || true)
  cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
  ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
  corp=$(sed -n 's/.* corp: \([0-9]*\).*/\1/p' <<<"$last")
  result=ok
  if [[ $rc -eq 77 ]]; then
    result="skipped: $(grep -m1 SKIPPED "$work/log.txt" || true)"
  else
    for a in "$work/artifacts/"*; do
      [[ -e "$a" ]] || continue
      name=$(basename "$a")
      [[ "$name" == slow-unit-* ]] && continue
      mkdir -p "$regress"
      cp "$a" "$regress/$name"
      result="FOUND $name -> $regress/ (log: $work/log.txt)"
      found=1
    done
    if [[ $rc -ne 0 && "$result" == ok ]]; then
      result="FAILED (exit $rc, log: $work/log.txt)"
      found=1
    fi
  fi
  [[ "$result" == ok ]] || tail -n 40 "$work/log.txt"
  printf '%-15s %10s %7s %7s %7s  %s\n' "$h" "${inputs:--}" "${cov:--}" "${ft:--}" "${corp:--}" "$result" >> "$summary"
done
echo "== fuzz.sh: ${seconds} s per harness"
cat "$summary"
exit $found
