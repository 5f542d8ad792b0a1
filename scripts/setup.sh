#!/usr/bin/env bash
# Install the Debian packages Talus needs to build and test, if any is missing, and the web viewer's
# npm packages (web/node_modules, `npm ci` from web/package-lock.json).
# Idempotent: when everything is installed it only checks (dpkg -s) and prints a summary.
# Runs apt-get as root, or through sudo when not root and sudo exists.
set -euo pipefail

PACKAGES=(
  build-essential   # C compiler, make
  clang             # scripts/fuzz.sh: libFuzzer with ASan/UBSan (clang 14 on bookworm)
  libclang-rt-14-dev # ... and its runtimes (libFuzzer, sanitizers): only recommended by clang
  cmake
  pkg-config
  libxml2-dev       # URDF parsing
  libopenblas-dev   # BLAS
  liblapacke-dev    # LAPACKE (dense factorizations)
  libcjson-dev      # JSON (command line, recordings)
  libassimp-dev     # mesh files (STL, OBJ, DAE) of URDF collision geometry
  libqhull-dev      # convex hulls of collision meshes (reentrant libqhull_r)
  libccd-dev        # convex-convex collision (MPR)
  libmujoco-dev     # benchmark peer and engine plugin: MuJoCo 2.2 (bookworm main)
  libode-dev        # engine plugin: ODE 0.16 in maximal coordinates
  openmpi-bin       # sweeps over several processes / hosts (mpirun)
  libopenmpi-dev    # MPI headers and library for `talus sweep`
  libwebsockets-dev # live viewer: poses streamed to the browser
  python3-dev       # the CPython extension module `talus`
  python3-numpy     # NumPy C API (arrays of the Python module)
  python3-pytest    # Python tests
  python3-torch     # examples: PPO training (CPU)
  python3-matplotlib # examples and `--plot`: static figures
  python3-pil       # viewer tests: pixel statistics of browser screenshots
  chromium          # browser tests of the viewer (headless, SwiftShader WebGL)
)

# Node.js and npm (the web viewer's three.js and uPlot, pinned in web/package-lock.json): Debian's
# nodejs + npm, unless an npm is already on PATH (e.g. a NodeSource nodejs, which bundles npm and
# conflicts with Debian's npm package).
if ! command -v npm >/dev/null 2>&1; then
  PACKAGES+=(nodejs npm)
fi

missing=()
for p in "${PACKAGES[@]}"; do
  status=$(dpkg -s "$p" 2>/dev/null || true)
  if [[ "$status" != *"Status: install ok installed"* ]]; then
    missing+=("$p")
  fi
done

# The web viewer's npm packages (three, uplot, esbuild; exact versions in web/package-lock.json):
# `npm ci` into web/node_modules, which CMake bundles into the viewer page. Run when node_modules is
# missing or older than the lockfile. --ignore-scripts: no package needs an install script (esbuild
# finds its platform binary through its optional dependency @esbuild/<platform>).
web_setup() {
  local web
  web="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)/web"
  if [[ -f "$web/node_modules/.package-lock.json" && ! "$web/package-lock.json" -nt "$web/node_modules/.package-lock.json" ]]; then
    echo "setup: web viewer packages already installed (web/node_modules)"
    return 0
  fi
  echo "setup: npm ci in web/ (three.js, uPlot, esbuild for the viewer)"
  if ! (cd "$web" && npm ci --ignore-scripts --no-audit --no-fund --loglevel=error); then
    echo "setup: npm ci in web/ failed (log above); the viewer (--record, --view) will not be built" >&2
    return 1
  fi
}

if [[ ${#missing[@]} -eq 0 ]]; then
  echo "setup: all ${#PACKAGES[@]} packages already installed (${PACKAGES[*]})"
  web_setup
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
web_setup
