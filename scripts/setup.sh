#!/usr/bin/env bash
# Install the Debian packages Talus needs to build and test, if any is missing.
# Idempotent: when everything is installed it only checks (dpkg -s) and prints a summary.
# Runs apt-get as root, or through sudo when not root and sudo exists.
set -euo pipefail

PACKAGES=(
  build-essential   # C compiler, make
  cmake
  pkg-config
  libxml2-dev       # URDF parsing
  libopenblas-dev   # BLAS
  liblapacke-dev    # LAPACKE (dense factorizations)
  libcjson-dev      # JSON (command line, recordings)
  libassimp-dev     # mesh files (STL, OBJ, DAE) of URDF collision geometry
  libqhull-dev      # convex hulls of collision meshes (reentrant libqhull_r)
  libccd-dev        # convex-convex collision (MPR)
  libmujoco-dev     # benchmark peer: talus_bench times MuJoCo 2.2 beside Talus (optional; bookworm main)
)

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg -s "$p" 2>/dev/null || true)
  if [[ "$status" != *"Status: install ok installed"* ]]; then
    missing+=("$p")
  fi
done

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed (${PACKAGES[*]})"
  exit 0
fi

SUDO=()
if [[ $(id -u) -ne 0 ]]; then
  if command -v sudo >/dev/null 2>&1; then
    SUDO=(sudo)
  else
    echo "setup: missing packages: ${missing[*]}" >&2
    echo "setup: not root and sudo is not available; install them as root" >&2
    exit 1
  fi
fi

echo "setup: installing ${missing[*]}"
log=$(mktemp)
trap 'rm -f "$log"' EXIT
if ! { "${SUDO[@]}" apt-get update -qq &&
       "${SUDO[@]}" env DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"; } >"$log" 2>&1; then
  cat "$log" >&2
  echo "setup: apt-get failed (log above)" >&2
  exit 1
fi
echo "setup: installed ${#missing[@]} package(s); all ${#PACKAGES[@]} present"
