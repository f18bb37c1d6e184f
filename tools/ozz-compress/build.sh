#!/usr/bin/env bash
# Builds ozz-compress against an ozz-animation 0.16 source tree, building
# ozz's runtime and offline libraries first (CMake Release, samples, tools,
# tests, glTF and FBX off), as the ozz-bench harness does. The program must
# be compiled with the same flags as the libraries: ozz picks its SIMD code
# from the compiler's predefined macros (__AVX2__, __FMA__, ...).
#
#   tools/ozz-compress/build.sh OZZ_SRC BUILD_DIR [EXTRA_CXX_FLAGS]
#   tools/ozz-compress/build.sh /tmp/ozz-src /tmp/ozz-build-native -march=native
#
# Produces BUILD_DIR/ozz-compress. No ozz source is kept in this repository.
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
if [[ $# -lt 2 ]]; then
  echo "usage: $0 OZZ_SRC BUILD_DIR [EXTRA_CXX_FLAGS]" >&2
  exit 2
fi
src="$1"
build="$2"
flags="${3:-}"
libs=(ozz_animation_offline ozz_animation ozz_base)
if [[ ! -f "$src/include/ozz/animation/offline/animation_optimizer.h" ]]; then
  echo "$src: not an ozz-animation source tree" >&2
  exit 1
fi

mkdir -p "$build"
cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_CXX_FLAGS="$flags" \
  -Dozz_build_samples=OFF -Dozz_build_howtos=OFF -Dozz_build_tests=OFF \
  -Dozz_build_tools=OFF -Dozz_build_gltf=OFF -Dozz_build_fbx=OFF \
  -Dozz_build_data=OFF -Dozz_build_postfix=OFF >"$build/cmake.log" 2>&1
cmake --build "$build" -j"$(nproc)" --target "${libs[@]}" >"$build/make.log" 2>&1

# Same optimisation level as ozz's Release (-O3 -DNDEBUG).
# shellcheck disable=SC2086
g++ -std=c++17 -O3 -DNDEBUG -Wall -Wextra -Wno-ignored-attributes $flags \
  -I"$src/include" "$here/ozz_compress.cc" \
  -L"$build/src/animation/offline" -L"$build/src/animation/runtime" -L"$build/src/base" \
  -lozz_animation_offline -lozz_animation -lozz_base \
  -o "$build/ozz-compress"
echo "$build/ozz-compress"
