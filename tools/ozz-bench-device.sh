#!/usr/bin/env bash
# The side-by-side ozz run (the ozz-bench harness: bench.cc, build.sh and
# compare.py, which are not part of this repository; docs/performance.md)
# packed to run on another x86-64 machine that has no Rust toolchain and cannot fetch
# anything: in this workplace, the lent GPU machine (`device` tool), whose
# host CPU may have AVX-512, which this project's own machines have not had.
# There it measures all three pairings in one go, vkskin's highest tier
# (AVX-512 where the CPU has it) against ozz built with -march=native among
# them.
#
#   tools/ozz-bench-device.sh prepare [OZZ_SRC] [HARNESS]
#       here: builds vkskin's anim bench, its animation unit tests and
#       anim-compare (release), and copies them, the ozz-animation 0.16 sources (OZZ_SRC, default
#       /tmp/ozz-src: see the harness README for getting them), the harness
#       (HARNESS: the harness's folder, kept outside this repository;
#       default ../shared/tools/ozz-bench), ozz built here as a
#       fallback, and a font into .ozzbench/ (git-ignored).
#   tools/ozz-bench-device.sh run [ROUNDS] [SECONDS]
#       there (or here, to try it): runs vkskin's animation unit tests
#       (every SIMD tier the CPU has against the scalar definitions), builds
#       ozz twice (SSE2 and -march=native) from the packed sources, then
#       alternates ROUNDS (default 5) times: ozz, vkskin (highest tier),
#       ozz -march=native, vkskin capped at AVX2. After the first round it
#       starts no new one once SECONDS (default: no limit) have passed since
#       the start, so that a lease's time limit still leaves tables. Writes
#       to $OUT (default .ozzbench/out): cpu.txt (lscpu, the test verdict),
#       tests.txt, loadavg.txt, compare.txt (the harness's tables for the
#       three pairings), anim-vs-ozz.png and runs.tar.gz (every round).
#   tools/ozz-bench-device.sh rows ROUNDS FILTER [VERTICES...]
#       there: a follow-up on chosen rows. Builds ozz -march=native only
#       (once per machine, in /tmp), then for each vertex count (ANIM_BENCH_VERTICES, default 100000)
#       alternates ROUNDS times ozz -march=native, vkskin (highest tier) and
#       vkskin capped at AVX2 on the rows whose name contains FILTER
#       (ANIM_BENCH_ONLY), and writes to $OUT rows.txt (the harness's tables
#       per vertex count: -march=native against each tier) and the rounds.
#   tools/ozz-bench-device.sh variant NAME
#       here, after prepare: builds the working tree's anim bench and
#       animation unit tests into .ozzbench/variants/NAME/ (a kernel
#       variant to set beside the packed bench; edit, then run again with
#       another NAME).
#   tools/ozz-bench-device.sh ab ROUNDS FILTER [SECONDS]
#       there: a quick A/B of the variants. Runs each variant's unit tests
#       (every tier the CPU has), builds ozz -march=native once per
#       machine, then alternates ROUNDS times ozz, the packed bench
#       ("base") and each variant, all at their highest tier, then the
#       packed bench capped at AVX2, on the rows whose name contains FILTER;
#       no new round after SECONDS (default 150). Each process is short
#       (the summary's rows alone), so many rounds fit: writes ab.txt (every
#       row) and ab-summary.txt (best and median per row and program, and
#       ozz's best over each best) to $OUT.
#
# With the device tool: `run` with carry [".ozzbench"], command
# `bash tools/ozz-bench-device.sh run 10 400` and timeout_s 560. On the
# 2-core Zen 3 here the tests and the two ozz builds take about 60 s and
# each round about 40 s; on the lent machine's 16-core Emerald Rapids
# about 55 s and 40 s (10 rounds: 7 minutes), and `rows` with 30 rounds of
# the LBS rows, then of the blend, then of local-to-model, about a minute. The packed -march=x86-64-v4 ozz, used only
# where ozz cannot be built, needs a CPU with AVX-512.
set -euo pipefail
cd "$(dirname "$0")/.."
pack=.ozzbench

# The working tree's anim bench to BENCH and its animation unit tests (no
# GPU half: on the other machine they check every SIMD tier its CPU has,
# AVX-512 there, against the scalar definitions) to TESTS: the
# executables cargo names on its last line.
build_vkskin() {
  local exe
  exe=$(cargo bench --locked -p vkskin --no-default-features --bench anim --no-run 2>&1 |
    sed -n 's/.*Executable .*(\(.*\))$/\1/p' | tail -1)
  [ -x "$exe" ] || { echo "ozz-bench-device: no bench executable" >&2; exit 1; }
  cp "$exe" "$1"
  exe=$(cargo test --release --locked -p vkskin --lib --no-default-features --no-run 2>&1 |
    sed -n 's/.*Executable unittests .*(\(.*\))$/\1/p' | tail -1)
  [ -x "$exe" ] || { echo "ozz-bench-device: no unit-test executable" >&2; exit 1; }
  cp "$exe" "$2"
}

prepare() {
  local src="${1:-/tmp/ozz-src}" harness="${2:-../shared/tools/ozz-bench}"
  for f in bench.cc build.sh compare.py; do
    [ -f "$harness/$f" ] || { echo "ozz-bench-device: $harness/$f missing" >&2; exit 1; }
  done
  [ -f "$src/CMakeLists.txt" ] || {
    echo "ozz-bench-device: no ozz sources in $src (see $harness/README.md, step 1)" >&2
    exit 1
  }
  rm -rf "$pack"
  mkdir -p "$pack/harness"
  cp "$harness/bench.cc" "$harness/build.sh" "$harness/compare.py" "$pack/harness/"
  tar -C "$src" -czf "$pack/ozz-src.tar.gz" .
  build_vkskin "$pack/vkskin-anim" "$pack/vkskin-lib-tests"
  cargo build --release --locked -p anim-compare
  cp target/release/anim-compare "$pack/"
  cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf "$pack/" 2>/dev/null || true
  # ozz built here, in case the other machine has no C++ compiler or CMake:
  # the default build, and -march=x86-64-v4 (AVX-512) for -march=native.
  local tmp
  tmp=$(mktemp -d)
  if build_ozz "$tmp/sse2" >/dev/null && build_ozz "$tmp/v4" -march=x86-64-v4 >/dev/null; then
    cp "$tmp/sse2/b/ozz-bench" "$pack/ozz-bench-sse2"
    cp "$tmp/v4/b/ozz-bench" "$pack/ozz-bench-x86-64-v4"
  else
    echo "ozz-bench-device: no ozz built here (CMake or g++ missing?)" >&2
  fi
  rm -rf "$tmp"
  du -sh "$pack"
}

# vkskin's summary from the packed bench (VKSKIN_SIMD, ANIM_BENCH_* pass
# through).
vkbench() { ANIM_BENCH_SUMMARY_ONLY=1 "$pack/vkskin-anim" --bench 2>&1; }

avx512_line() { echo "avx512f: $(grep -c -w avx512f /proc/cpuinfo) of $(nproc) cpus"; }

# ozz from the packed sources, built into DIR/b with the harness's build.sh
# and FLAGS; fails where there is no CMake or g++.
build_ozz() {
  local dir="$1"
  shift
  command -v cmake >/dev/null && command -v g++ >/dev/null || return 1
  rm -rf "$dir"
  mkdir -p "$dir/src"
  tar -C "$dir/src" -xzf "$pack/ozz-src.tar.gz"
  bash "$pack/harness/build.sh" "$dir/src" "$dir/b" "$@"
}

# compare.py on DIR whose ozz-N are ozz -march=native and vkskin-N vkskin's
# highest tier: its first table, titled for what it holds.
compare_top() {
  python3 "$pack/harness/compare.py" "$1" |
    sed 's/^### ozz default build vs vkskin (runtime-dispatched SIMD)/### ozz -march=native vs vkskin (runtime-dispatched SIMD: its highest tier)/'
}

run() {
  local rounds="${1:-5}" limit="${2:-0}" out="${OUT:-$pack/out}" work=/tmp/ozzbench-work
  local start=$SECONDS
  mkdir -p "$out"
  rm -rf "$work"
  mkdir -p "$work/d-default" "$work/d-native" "$work/d-top"
  lscpu >"$out/cpu.txt" 2>&1 || cat /proc/cpuinfo >"$out/cpu.txt"
  avx512_line | tee -a "$out/cpu.txt"
  # Every tier this CPU has against the scalar definitions, first.
  if "$pack/vkskin-lib-tests" >"$out/tests.txt" 2>&1; then
    echo "unit tests: $(grep 'test result' "$out/tests.txt")" | tee -a "$out/cpu.txt"
  else
    echo "unit tests FAILED (tests.txt):" | tee -a "$out/cpu.txt"
    grep -E 'FAILED|panicked|test result' "$out/tests.txt" | head -20 | tee -a "$out/cpu.txt"
  fi
  local ozz ozz_native
  if build_ozz "$work/sse2" >"$out/build.txt" 2>&1 &&
    build_ozz "$work/native" -march=native >>"$out/build.txt" 2>&1; then
    ozz="$work/sse2/b/ozz-bench"
    ozz_native="$work/native/b/ozz-bench"
    echo "ozz: built here (g++ $(g++ -dumpfullversion))" | tee -a "$out/cpu.txt"
  else
    ozz="$pack/ozz-bench-sse2"
    ozz_native="$pack/ozz-bench-x86-64-v4"
    echo "ozz: no build here (see build.txt); the packed builds, -march=x86-64-v4 for native" |
      tee -a "$out/cpu.txt"
  fi
  stamp() { echo "$(date +%T) $1 $(cat /proc/loadavg)" >>"$out/loadavg.txt"; }
  local done_rounds=0
  for r in $(seq 1 "$rounds"); do
    if [ "$done_rounds" -gt 0 ] && [ "$limit" -gt 0 ] && [ $((SECONDS - start)) -ge "$limit" ]; then
      echo "time limit of $limit s reached: $done_rounds of $rounds rounds" | tee -a "$out/cpu.txt"
      break
    fi
    stamp "ozz-$r"
    "$ozz" >"$work/d-default/ozz-$r.txt"
    stamp "vkskin-$r"
    vkbench >"$work/d-default/vkskin-$r.txt"
    stamp "ozz-native-$r"
    "$ozz_native" >"$work/d-native/ozz-native-$r.txt"
    stamp "vkskin-avx2-$r"
    VKSKIN_SIMD=avx2 vkbench >"$work/d-native/vkskin-avx2-$r.txt"
    done_rounds=$r
    echo "round $r of $rounds done ($((SECONDS - start)) s)"
  done
  echo "rounds: $done_rounds" >>"$out/cpu.txt"
  stamp end
  # compare.py pairs ozz-N with vkskin-N and ozz-native-N with
  # vkskin-avx2-N; the third pairing (ozz -march=native against vkskin's
  # highest tier) is the first under other names, its title replaced.
  for r in $(seq 1 "$done_rounds"); do
    cp "$work/d-native/ozz-native-$r.txt" "$work/d-top/ozz-$r.txt"
    cp "$work/d-default/vkskin-$r.txt" "$work/d-top/vkskin-$r.txt"
  done
  mkdir -p "$work/all"
  cp "$work"/d-default/*.txt "$work"/d-native/*.txt "$work/all/"
  {
    compare_top "$work/d-top"
    echo
    python3 "$pack/harness/compare.py" "$work/all"
  } >"$out/compare.txt"
  local font=()
  [ -f "$pack/DejaVuSans.ttf" ] && font=(--font "$pack/DejaVuSans.ttf")
  "$pack/anim-compare" "$work/all" --native-vs-highest "${font[@]}" \
    --out "$out/anim-vs-ozz.png" || echo "anim-compare failed (tables in compare.txt)"
  tar -C "$work" -czf "$out/runs.tar.gz" all
  cat "$out/loadavg.txt"
  grep -E '^###|tree 64' "$out/compare.txt"
}

rows() {
  local rounds="$1" filter="$2" out="${OUT:-$pack/out}" work=/tmp/ozzbench-rows
  shift 2
  local counts=("$@")
  [ ${#counts[@]} -gt 0 ] || counts=(100000)
  mkdir -p "$out"
  rm -rf "$work"
  grep -m1 'model name' /proc/cpuinfo | tee "$out/rows-cpu.txt"
  avx512_line | tee -a "$out/rows-cpu.txt"
  # ozz -march=native, built once per machine (later calls reuse it).
  local ozz=/tmp/ozzbench-native/b/ozz-bench
  if [ ! -x "$ozz" ]; then
    build_ozz /tmp/ozzbench-native -march=native >/tmp/ozzbench-native-build.txt 2>&1 || true
  fi
  if [ ! -x "$ozz" ]; then
    ozz="$pack/ozz-bench-x86-64-v4"
    echo "ozz: the packed -march=x86-64-v4 build" | tee -a "$out/rows-cpu.txt"
  fi
  for r in $(seq 1 "$rounds"); do
    for v in "${counts[@]}"; do
      local d="$work/v$v"
      mkdir -p "$d"
      export ANIM_BENCH_VERTICES="$v" ANIM_BENCH_ONLY="$filter"
      "$ozz" >"$d/ozz-native-$r.txt"
      vkbench >"$d/vkskin-$r.txt"
      VKSKIN_SIMD=avx2 vkbench >"$d/vkskin-avx2-$r.txt"
      cp "$d/ozz-native-$r.txt" "$d/ozz-$r.txt"
    done
    echo "round $r of $rounds done"
  done
  unset ANIM_BENCH_VERTICES ANIM_BENCH_ONLY
  for v in "${counts[@]}"; do
    echo "## ANIM_BENCH_VERTICES=$v (the LBS and DQS rows' vertex count)"
    compare_top "$work/v$v"
  done | tee "$out/rows.txt"
  tar -C "$work" -czf "$out/rows-runs.tar.gz" $(cd "$work" && ls -d v*)
}

# The working tree's bench and unit tests as variant NAME.
variant() {
  local name="$1" dir
  [[ "$name" =~ ^[A-Za-z0-9_-]+$ ]] || { echo "ozz-bench-device: variant names are letters, digits, - and _" >&2; exit 2; }
  [ -f "$pack/vkskin-anim" ] || { echo "ozz-bench-device: run prepare first" >&2; exit 1; }
  dir="$pack/variants/$name"
  mkdir -p "$dir"
  build_vkskin "$dir/anim" "$dir/tests"
  echo "variant $name: $(git rev-parse --short HEAD)$(git diff --quiet HEAD -- engine || echo ' + uncommitted changes')" |
    tee "$dir/what.txt"
}

ab() {
  local rounds="$1" filter="$2" limit="${3:-150}" out="${OUT:-$pack/out}" start=$SECONDS
  mkdir -p "$out"
  rm -f "$out/ab.txt"
  local names=() v
  for v in "$pack"/variants/*/; do
    [ -x "$v/anim" ] && names+=("$(basename "$v")")
  done
  grep -m1 'model name' /proc/cpuinfo | tee "$out/ab-cpu.txt"
  avx512_line | tee -a "$out/ab-cpu.txt"
  for v in "${names[@]}"; do
    cat "$pack/variants/$v/what.txt" 2>/dev/null | tee -a "$out/ab-cpu.txt"
    if "$pack/variants/$v/tests" >"$out/tests-$v.txt" 2>&1; then
      echo "$v unit tests: $(grep 'test result' "$out/tests-$v.txt")"
    else
      echo "$v unit tests FAILED:"
      grep -E 'FAILED|panicked' "$out/tests-$v.txt" | head -8
    fi | tee -a "$out/ab-cpu.txt"
  done
  local ozz=/tmp/ozzbench-native/b/ozz-bench
  if [ ! -x "$ozz" ]; then
    build_ozz /tmp/ozzbench-native -march=native >/tmp/ozzbench-native-build.txt 2>&1 || true
  fi
  [ -x "$ozz" ] || ozz="$pack/ozz-bench-x86-64-v4"
  # One program's rows, each line prefixed with who ran them.
  # (awk: a program with no such row is no error under set -e.)
  rowsof() { awk -v who="$1" '/^\| / && !/^\| (workload|---)/ { print who " " $0 }' >>"$out/ab.txt"; }
  export ANIM_BENCH_ONLY="$filter" ANIM_BENCH_SUMMARY_ONLY=1
  local r done_rounds=0
  for r in $(seq 1 "$rounds"); do
    [ "$done_rounds" -gt 0 ] && [ $((SECONDS - start)) -ge "$limit" ] && break
    "$ozz" | rowsof ozz
    "$pack/vkskin-anim" --bench 2>&1 | rowsof base
    for v in "${names[@]}"; do
      "$pack/variants/$v/anim" --bench 2>&1 | rowsof "$v"
    done
    VKSKIN_SIMD=avx2 "$pack/vkskin-anim" --bench 2>&1 | rowsof base-avx2
    done_rounds=$r
  done
  unset ANIM_BENCH_ONLY ANIM_BENCH_SUMMARY_ONLY
  echo "rounds: $done_rounds ($((SECONDS - start)) s)" | tee -a "$out/ab-cpu.txt"
  python3 - "$out/ab.txt" base "${names[@]}" base-avx2 <<'PY' | tee "$out/ab-summary.txt"
import sys
from collections import defaultdict
path, who = sys.argv[1], sys.argv[2:]
runs = defaultdict(list)
order = []
for line in open(path):
    name, rest = line.split(" ", 1)
    c = [x.strip() for x in rest.strip().strip("|").split("|")]
    try:
        # Rows of the first shape only (LBS and DQS have one).
        x = float(c[2])
    except (IndexError, ValueError):
        continue
    if c[0] not in order:
        order.append(c[0])
    runs[(c[0], name)].append(x)
print("| row | program | runs | best | median | ozz best / best |")
print("| --- | --- | ---: | ---: | ---: | ---: |")
for row in order:
    oz = min(runs.get((row, "ozz"), [0.0]))
    for name in ["ozz"] + who:
        x = sorted(runs.get((row, name), []))
        if x:
            ratio = f"{oz / x[0]:.2f}" if oz > 0 else "-"
            print(f"| {row} | {name} | {len(x)} | {x[0]:.2f} | {x[len(x) // 2]:.2f} | {ratio} |")
PY
}

case "${1:-}" in
  prepare) shift; prepare "$@" ;;
  run) shift; run "$@" ;;
  rows) shift; rows "$@" ;;
  variant) shift; variant "$@" ;;
  ab) shift; ab "$@" ;;
  *) echo "usage: tools/ozz-bench-device.sh prepare [OZZ_SRC] [HARNESS] | run [ROUNDS] [SECONDS] | rows ROUNDS FILTER [VERTICES...] | variant NAME | ab ROUNDS FILTER [SECONDS]" >&2; exit 2 ;;
esac
