#!/usr/bin/env bash
# vkskin's two commands on a fresh Debian 12 machine:
#   ./dev.sh demo   the main job: the viewer renders the built-in character
#                   headless (PNG frames + a contact sheet); `./dev.sh demo
#                   window` opens the viewer's window where a display exists
#   ./dev.sh test   every test (GPU tests on lavapipe under validation)
# Each first installs the Debian packages that are missing (apt-get when run
# as root; otherwise it prints the exact command and stops), then runs cargo.
set -euo pipefail
cd "$(dirname "$0")"

PACKAGES=(
  # Vulkan: loader, lavapipe (CPU driver), validation layers
  libvulkan-dev mesa-vulkan-drivers vulkan-validationlayers
  # shader compiler (static libs linked by engine/build.rs)
  libshaderc-dev glslang-dev spirv-tools
  # windowed sample and its test under a virtual X server
  xvfb libx11-6 libx11-xcb1 libxcursor1 libxrandr2 libxi6 libxkbcommon-x11-0
  # build tools
  pkg-config gcc g++
  fonts-dejavu-core  # text of gpu-bench's chart
)

ensure_packages() {
  local missing=()
  for p in "${PACKAGES[@]}"; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
      missing+=("$p")
    fi
  done
  [ ${#missing[@]} -eq 0 ] && return 0
  if [ "$(id -u)" -eq 0 ]; then
    echo "dev.sh: installing ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}"
  else
    echo "dev.sh: missing Debian packages. Install them with:"
    echo "  sudo apt-get install -y ${missing[*]}"
    exit 1
  fi
}

cmd="${1:-}"
shift || true
case "$cmd" in
  demo)
    ensure_packages
    if [ "${1:-}" = "window" ]; then
      shift
      if [ -z "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        echo "dev.sh: no display (DISPLAY unset); try: ./dev.sh demo" >&2
        exit 1
      fi
      cargo run --release -p viewer -- "$@"
    else
      cargo run --release -p viewer -- --headless --frames 60 --fps 30 --out out/viewer "$@"
      echo "dev.sh: 60 frames and out/viewer/contact_sheet.png written to out/viewer/"
      if [ -n "${DISPLAY:-}${WAYLAND_DISPLAY:-}" ]; then
        echo "dev.sh: a display is present: ./dev.sh demo window opens the viewer"
      fi
    fi
    ;;
  test)
    ensure_packages
    cargo test --workspace "$@"
    # The animation layer again on its portable scalar paths (the tested
    # definitions the SIMD tiers are compared with run here too).
    VKSKIN_SCALAR=1 cargo test -p vkskin --lib anim::
    ;;
  *)
    echo "usage: ./dev.sh demo [window] | ./dev.sh test" >&2
    exit 2
    ;;
esac
