#!/usr/bin/env bash
# One prepared run of vkskin on a GPU machine that has the NVIDIA driver but
# no Rust toolchain, no network and no Vulkan loader (in this workplace, the
# lent machine of the `device` tool), in at most about 8 minutes.
#
#   tools/gpu-check.sh prepare
#       here: builds release binaries (the GPU test binaries of the tests
#       crate, gpu-bench, crowd), downloads the Vulkan loader and the
#       validation layer as Debian packages (not installed here), and packs
#       them with the shared test assets (when ../shared/assets exists) and
#       a font for the chart into .gpucheck/ (git-ignored), stripped and
#       compressed to fit the device tool's 64 MiB.
#   tools/gpu-check.sh run [--lavapipe] [OUT]
#       there: unpacks the packages into a private folder (nothing is
#       installed), points the loader at the NVIDIA driver (or, with
#       --lavapipe, at Mesa's CPU driver, to check the script here with
#       counts scaled down) and runs, each stage under a time limit:
#         (a) the GPU test binaries under the validation layer with
#             synchronization validation (the tests force it on);
#         (b) gpu-bench over every skinning path at 1 to 100,000 instances
#             (CPU animation), then its GPU-animation rows (`--gpu-anim`:
#             the animation passes alone, and with skinning and the draw,
#             at 1,000, 10,000 and 100,000 instances, with the bytes written
#             per frame against CPU palettes);
#         (c) the crowd sample headless at 10,000 and 100,000 characters,
#             with CPU and with GPU animation.
#       Writes into OUT (default: $OUT, else .gpucheck/out): log.txt (the
#       whole run), tests.txt (each test binary's verdict), gpu-bench.csv,
#       gpu-bench.png (the chart), table.md (the CSV as a table, the best
#       figures first, then the GPU-animation rows), gpu-anim.csv,
#       crowd.txt (the crowd runs' output and wall time) and crowd.png (a
#       frame of the largest crowd): eight files, the device tool's limit.
#
# With the device tool: `run` with carry [".gpucheck"], command
# `bash tools/gpu-check.sh run`, timeout_s 560.
set -uo pipefail
cd "$(dirname "$0")/.."
root="$(pwd)"
pack="$root/.gpucheck"

die() {
  echo "gpu-check: $*" >&2
  exit 1
}

prepare() {
  set -e
  command -v cargo >/dev/null || die "prepare needs cargo (run it where the project builds)"
  rm -rf "$pack"
  mkdir -p "$pack/bin" "$pack/debs"
  echo "gpu-check: building release binaries"
  cargo build --release --locked -p gpu-bench -p crowd
  cp target/release/gpu-bench target/release/crowd "$pack/bin/"
  # The tests crate's GPU test binaries (gpu_*), found from cargo's own
  # report of what it built.
  cargo test --release --locked -p vkskin-tests --no-run --message-format=json 2>/dev/null |
    python3 -c '
import json, sys
for line in sys.stdin:
    try:
        m = json.loads(line)
    except ValueError:
        continue
    t = m.get("target", {})
    if m.get("reason") == "compiler-artifact" and m.get("executable") and t.get("name", "").startswith("gpu_"):
        print(t["name"], m["executable"])
' | while read -r name exe; do cp "$exe" "$pack/bin/test-$name"; done
  ls "$pack"/bin/test-gpu_* >/dev/null 2>&1 || die "no GPU test binary was built"
  strip "$pack"/bin/*
  echo "gpu-check: downloading libvulkan1 and vulkan-validationlayers (Debian packages, not installed)"
  local apt=(-oAPT::Architecture=amd64 -oAPT::Architectures=amd64 -oDir::State::Lists=/tmp/gpucheck-apt)
  mkdir -p /tmp/gpucheck-apt/partial
  apt-get "${apt[@]}" update -qq
  (cd "$pack/debs" && apt-get "${apt[@]}" download libvulkan1 vulkan-validationlayers)
  if [ -d ../shared/assets ]; then
    cp -r ../shared/assets "$pack/assets"
    chmod -R u+w "$pack/assets"
  else
    echo "gpu-check: ../shared/assets absent: the asset tests will skip there"
  fi
  cp /usr/share/fonts/truetype/dejavu/DejaVuSans.ttf "$pack/font.ttf" 2>/dev/null || true
  tar -C "$pack" -cJf "$pack/bin.tar.xz" bin
  rm -rf "$pack/bin"
  {
    echo "commit $(git rev-parse --short HEAD)$(git diff --quiet || echo ' (with uncommitted changes)')"
    echo "prepared $(date -u +%FT%TZ) with $(rustc --version)"
  } >"$pack/manifest.txt"
  du -sh "$pack"
  local kib
  kib=$(du -sk "$pack" | cut -f1)
  [ "$kib" -lt 62000 ] || die ".gpucheck is ${kib} KiB: over the device tool's 64 MiB"
  echo "gpu-check: packed; on the GPU machine: bash tools/gpu-check.sh run"
}

# Runs "$@" under `timeout SECONDS`, its output into the log, and says how
# it ended and how long it took.
stage() {
  local name="$1" secs="$2"
  shift 2
  local t0=$SECONDS
  echo "=== $name (limit ${secs}s): $*" >>"$log"
  timeout --kill-after=10 "$secs" "$@" >>"$log" 2>&1
  local rc=$?
  local verdict="ok"
  [ $rc -eq 0 ] || verdict="exit $rc"
  [ $rc -eq 124 ] && verdict="timed out"
  echo "=== $name: $verdict after $((SECONDS - t0))s" >>"$log"
  echo "$name: $verdict after $((SECONDS - t0))s"
  return $rc
}

run() {
  local lavapipe=0
  if [ "${1:-}" = "--lavapipe" ]; then
    lavapipe=1
    shift
  fi
  local out="${1:-${OUT:-$pack/out}}"
  [ -f "$pack/bin.tar.xz" ] || die "no $pack/bin.tar.xz: run 'tools/gpu-check.sh prepare' first (here)"
  mkdir -p "$out"
  out="$(cd "$out" && pwd)"
  log="$out/log.txt"
  : >"$log"
  local work
  work="$(mktemp -d /tmp/gpucheck.XXXXXX)"
  tar -C "$work" -xJf "$pack/bin.tar.xz"
  local bin="$work/bin"
  # The loader and the layer, unpacked into a private root.
  local sys="$work/root"
  for d in "$pack"/debs/*.deb; do dpkg-deb -x "$d" "$sys"; done
  export LD_LIBRARY_PATH="$sys/usr/lib/x86_64-linux-gnu${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
  export VK_LAYER_PATH="$sys/usr/share/vulkan/explicit_layer.d"
  if [ $lavapipe -eq 1 ]; then
    export VK_DRIVER_FILES=/usr/share/vulkan/icd.d/lvp_icd.x86_64.json
    [ -f "$VK_DRIVER_FILES" ] || die "--lavapipe: $VK_DRIVER_FILES missing (apt-get install mesa-vulkan-drivers)"
  else
    local nv
    for nv in /usr/local/nvidia/share/vulkan/icd.d/nvidia_icd.json \
      /usr/share/vulkan/icd.d/nvidia_icd.json /etc/vulkan/icd.d/nvidia_icd.json; do
      if [ -f "$nv" ]; then
        export VK_DRIVER_FILES="$nv"
        break
      fi
    done
    [ -n "${VK_DRIVER_FILES:-}" ] || echo "gpu-check: no NVIDIA ICD manifest found; the loader searches its defaults" | tee -a "$log"
  fi
  [ -d "$pack/assets" ] && export VKSKIN_ASSETS="$pack/assets"
  export RUST_BACKTRACE=1
  unset CI
  {
    cat "$pack/manifest.txt"
    echo "run $(date -u +%FT%TZ) on $(uname -n): $(nproc) cores; driver manifest ${VK_DRIVER_FILES:-default}"
    command -v nvidia-smi >/dev/null && nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader
    grep -m1 "model name" /proc/cpuinfo
  } | tee -a "$log"
  "$bin/crowd" --list-devices 2>&1 | tee -a "$log"

  # Counts: the real GPU's, or scaled down for lavapipe.
  local instances vertices bench_secs crowd_counts test_secs bench_limit crowd_limit
  local anim_instances anim_vertices anim_limit
  if [ $lavapipe -eq 1 ]; then
    instances="1,16,256"
    anim_instances="100,1000"
    anim_vertices=500
    anim_limit=120
    vertices=2000
    bench_secs=3
    crowd_counts="1000 3000"
    test_secs=420
    bench_limit=300
    crowd_limit=120
  else
    instances="1,16,256,1024,10000,100000"
    anim_instances="1000,10000,100000"
    anim_vertices=10000
    anim_limit=60
    vertices=10000
    bench_secs=8
    crowd_counts="10000 100000"
    # 170 + 150 + 60 + 4 x 25 = 480 s at most.
    test_secs=170
    bench_limit=150
    crowd_limit=25
  fi

  # (a) The GPU tests, under the validation layer (each test forces it on
  # with synchronization validation and fails on any message).
  local tests="$out/tests.txt" t0=$SECONDS
  : >"$tests"
  for t in "$bin"/test-gpu_*; do
    local left=$((test_secs - (SECONDS - t0)))
    local name="${t##*/test-}"
    if [ $left -le 5 ]; then
      echo "$name: not run (the tests' ${test_secs}s were spent)" | tee -a "$tests"
      continue
    fi
    stage "test $name" "$left" "$t" --test-threads="$(nproc)"
    local rc=$?
    local result
    result=$(grep -E "^test result:" "$log" | tail -1)
    echo "$name: exit $rc; ${result:-no result line}" >>"$tests"
  done
  cat "$tests"

  # (b) gpu-bench: every path, CPU animation.
  stage "gpu-bench" "$bench_limit" "$bin/gpu-bench" --instances "$instances" \
    --vertices "$vertices" --max-seconds "$bench_secs" --frames 5 --out "$work/bench" \
    --font "$pack/font.ttf"
  cp "$work/bench/gpu-bench.csv" "$work/bench/gpu-bench.png" "$out/" 2>/dev/null
  if [ -f "$out/gpu-bench.csv" ]; then
    python3 - "$out/gpu-bench.csv" >"$out/table.md" <<'EOF'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
if not rows:
    sys.exit("gpu-bench.csv has no rows")
cols = ["path", "stage", "instances", "status", "gpu_ms", "verts_per_s",
        "anim_all_threads_ms", "upload_ms", "frame_wall_ms"]
def num(r, k):
    try:
        return float(r.get(k) or "nan")
    except ValueError:
        return float("nan")
def table(rs):
    print("| " + " | ".join(cols) + " |")
    print("|" + "---|" * len(cols))
    for r in rs:
        print("| " + " | ".join(r.get(c, "") for c in cols) + " |")
print(f"Device: {rows[0].get('device', '?')}; CPU: {rows[0].get('cpu', '?')}\n")
# Each path at the largest instance count it measured, most skinned
# vertices per second first.
best = {}
for r in rows:
    if r.get("status") != "ok" or r["path"] == "animation-only":
        continue
    p = r["path"]
    if p not in best or num(r, "instances") > num(best[p], "instances"):
        best[p] = r
print("Each path at the largest instance count it measured, fastest first:\n")
table(sorted(best.values(), key=lambda r: -(num(r, "verts_per_s") if num(r, "verts_per_s") == num(r, "verts_per_s") else 0)))
print("\nEvery row:\n")
table(rows)
EOF
  fi

  # (b2) gpu-bench --gpu-anim: GPU animation, alone and with skinning and
  # the draw, and the bytes written per frame against CPU palettes.
  stage "gpu-bench --gpu-anim" "$anim_limit" "$bin/gpu-bench" --gpu-anim \
    --instances "$anim_instances" --vertices "$anim_vertices" --max-seconds "$bench_secs" \
    --frames 5 --out "$work/anim" --font "$pack/font.ttf"
  if [ -f "$work/anim/gpu-anim.csv" ]; then
    cp "$work/anim/gpu-anim.csv" "$out/"
    {
      echo
      echo "GPU animation (gpu-bench --gpu-anim):"
      echo
      sed -n '/^| path | instances | GPU animation/,/^$/p' "$log"
    } >>"$out/table.md"
  fi

  # (c) The crowd sample, headless.
  : >"$out/crowd.txt"
  local n last=""
  local anim
  for n in $crowd_counts; do
    for anim in cpu gpu; do
      local t1=$SECONDS
      stage "crowd $n $anim" "$crowd_limit" "$bin/crowd" --headless --instances "$n" --frames 3 \
        --anim "$anim" --out "$work/crowd-$n-$anim"
      echo "crowd --instances $n --frames 3 --anim $anim: exit $? after $((SECONDS - t1))s" >>"$out/crowd.txt"
      awk -v a="=== crowd $n $anim (" -v b="=== crowd $n $anim:" \
        'index($0, a) == 1 { on = 1 } on { print } index($0, b) == 1 { on = 0 }' "$log" >>"$out/crowd.txt"
      last="$work/crowd-$n-$anim"
    done
  done
  if [ -n "$last" ]; then
    local frame
    frame=$(ls "$last"/frame_*.png 2>/dev/null | tail -1)
    [ -n "$frame" ] && cp "$frame" "$out/crowd.png"
  fi
  rm -rf "$work"
  echo "gpu-check: wrote $(ls "$out" | tr '\n' ' ')to $out"
}

case "${1:-}" in
  prepare) prepare ;;
  run)
    shift
    run "$@"
    ;;
  *)
    echo "usage: tools/gpu-check.sh prepare | run [--lavapipe] [OUT]" >&2
    exit 2
    ;;
esac
