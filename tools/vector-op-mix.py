#!/usr/bin/env python3
"""Throughput of AVX2 instruction mixes on this CPU, in core cycles.

The LBS kernels' speed is bounded by how many vector operations the core
issues per cycle, and by which of them share pipes; instruction tables and
llvm-mca's models disagree on that for Zen 3 (LLVM 14's model gives an FMA
both FMA pipes). This measures it: for each mix below it writes a C
function whose body is the mix repeated 48 instructions deep in inline
assembly (independent operations: twelve destination registers in turn),
times it with the time-stamp counter, and converts to core cycles with a
chain of dependent integer adds (one a cycle on every x86-64 core).

    python3 tools/vector-op-mix.py [CC]

prints, for each mix, cycles per group and vector operations per cycle
(loads and stores count as operations), then the cycles of one trip of
the AVX2 LBS kernel's blend (eight vertices, four influences) alone, with
its weights broadcast from memory as compiled, in registers, or read once
per vertex and splatted by in-lane permutes. Needs a C compiler (default cc)
that takes GNU inline assembly, and AVX2 and FMA on the CPU. Every
register and buffer the assembly reads holds ordinary floats (near 1):
denormals would take a slow path. Best of nine
runs each; the machine should otherwise be idle.
"""

import os
import subprocess
import sys
import tempfile

# AT&T syntax: destination last. {d} is the rotating destination register,
# {o} an offset (32-byte steps through a 2 KiB buffer) for loads from %0 and
# stores to %1; ymm14 and ymm15 are the fixed sources.
FMA = "vfmadd231ps %%ymm14, %%ymm15, %%ymm{d}"
MUL = "vmulps %%ymm14, %%ymm15, %%ymm{d}"
ADD = "vaddps %%ymm14, %%ymm15, %%ymm{d}"
UNPCK = "vunpcklps %%ymm14, %%ymm15, %%ymm{d}"
SHUF = "vshufps $0x44, %%ymm14, %%ymm15, %%ymm{d}"
BLEND = "vblendps $0x55, %%ymm14, %%ymm15, %%ymm{d}"
PERM2 = "vperm2f128 $0x21, %%ymm14, %%ymm15, %%ymm{d}"
INSERT = "vinsertf128 $1, %%xmm14, %%ymm15, %%ymm{d}"
INSERT_MEM = "vinsertf128 $1, {o}(%0), %%ymm15, %%ymm{d}"
LOAD = "vmovaps {o}(%0), %%ymm{d}"
BCAST = "vbroadcastss {o}(%0), %%ymm{d}"
FMA_MEM = "vfmadd231ps {o}(%0), %%ymm14, %%ymm{d}"
STORE = "vmovaps %%ymm{d}, {o}(%1)"

MIXES = [
    ("fma", [FMA]),
    ("mul", [MUL]),
    ("add", [ADD]),
    ("unpcklps", [UNPCK]),
    ("shufps", [SHUF]),
    ("blendps", [BLEND]),
    ("vperm2f128", [PERM2]),
    ("vinsertf128 (register)", [INSERT]),
    ("vinsertf128 (memory)", [INSERT_MEM]),
    ("load", [LOAD]),
    ("broadcast load", [BCAST]),
    ("fma with a load", [FMA_MEM]),
    ("store", [STORE]),
    ("fma + add", [FMA, ADD]),
    ("mul + add", [MUL, ADD]),
    ("fma + unpcklps", [FMA, UNPCK]),
    ("fma + blendps", [FMA, BLEND]),
    ("fma + vperm2f128", [FMA, PERM2]),
    ("fma + load", [FMA, LOAD]),
    ("unpcklps + load", [UNPCK, LOAD]),
    ("unpcklps + blendps", [UNPCK, BLEND]),
    ("fma + unpcklps + add", [FMA, UNPCK, ADD]),
    ("fma + unpcklps + load", [FMA, UNPCK, LOAD]),
    ("fma + unpcklps + store", [FMA, UNPCK, STORE]),
    ("2 fma + store", [FMA, FMA, STORE]),
    ("2 mul + store", [MUL, MUL, STORE]),
    ("2 unpcklps + store", [UNPCK, UNPCK, STORE]),
    ("fma + unpcklps + blendps", [FMA, UNPCK, BLEND]),
    ("broadcast + 2 fma with a load", [BCAST, FMA_MEM, FMA_MEM]),
]

DEPTH = 48

# The LBS blend of one trip (eight vertices, four influences each) as the
# AVX2 kernel compiles it: per vertex and influence a weight broadcast and
# two multiplies or FMAs reading the two halves of a 64-byte palette entry,
# then the vertex's two blended registers stored. Joints are fixed
# pseudo-random entries of a 64-entry palette.
TRIPS = ["weights broadcast", "weights in registers", "weights: one 16-byte load, permutes"]


def blend_trip(variant):
    state = 12345
    out = []
    for v in range(8):
        a0, a1 = (v % 4) * 2, (v % 4) * 2 + 1
        for i in range(4):
            state = (state * 1103515245 + 12345) % (1 << 31)
            j = (state >> 16) % 64
            w = 8 + i
            if variant == TRIPS[0]:
                out.append(f"vbroadcastss {v * 16 + i * 4}(%1), %%ymm{w}")
            elif variant == TRIPS[2]:
                if i == 0:
                    out.append(f"vbroadcastf128 {v * 16}(%1), %%ymm14")
                out.append(f"vpermilps ${i * 0x55}, %%ymm14, %%ymm{w}")
            op = "vmulps" if i == 0 else "vfmadd231ps"
            out.append(f"{op} {j * 64}(%0), %%ymm{w}, %%ymm{a0}")
            out.append(f"{op} {j * 64 + 32}(%0), %%ymm{w}, %%ymm{a1}")
        out.append(f"vmovaps %%ymm{a0}, {v * 64}(%2)")
        out.append(f"vmovaps %%ymm{a1}, {v * 64 + 32}(%2)")
    return out


def timed(name, body, per):
    """A C function `name(n)` that runs the inline-assembly `body` n times
    and returns time-stamp ticks per `per` (operands: %0 the palette or
    load source, %1 the weights or store target, %2 the blend's output)."""
    asm = "\\n\\t".join(body)
    clobbers = "".join(f', "xmm{r}"' for r in range(16))
    # Ordinary values in every register the body reads, so that no
    # denormal (a slow path) comes in from whatever the registers held.
    setup = "\\n\\t".join(
        ["vbroadcastss (%0), %%ymm14", "vbroadcastss 4(%0), %%ymm15"]
        + [f"vbroadcastss 8(%0), %%ymm{r}" for r in range(12)]
    )
    return (
        f"static double {name}(long n) {{\n"
        f'  __asm__ volatile("{setup}" :: "r"(src) : "memory"{clobbers});\n'
        f"  uint64_t t0 = __rdtsc();\n"
        f"  for (long i = 0; i < n; i++)\n"
        f'    __asm__ volatile("{asm}" :: "r"(src), "r"(dst + 256), "r"(dst) : "memory"{clobbers});\n'
        f"  return (double)(__rdtsc() - t0) / ((double)n * {per});\n"
        f"}}\n"
    )


def mix_body(pattern):
    body = []
    i = 0
    while len(body) < DEPTH:
        for p in pattern:
            body.append(p.replace("{d}", str(i % 12)).replace("{o}", str((i * 32) % 2048)))
            i += 1
    return body


def program():
    out = [
        "#include <stdint.h>\n#include <stdio.h>\n#include <x86intrin.h>\n",
        "static float src[1024] __attribute__((aligned(64)));\n",
        "static float dst[1024] __attribute__((aligned(64)));\n",
        "static double chain(long n) {\n  uint64_t t0 = __rdtsc(); long x = 0;\n"
        "  for (long i = 0; i < n; i++)\n"
        '    __asm__ volatile("add $1,%0\\n\\tadd $1,%0\\n\\tadd $1,%0\\n\\tadd $1,%0\\n\\t'
        'add $1,%0\\n\\tadd $1,%0\\n\\tadd $1,%0\\n\\tadd $1,%0" : "+r"(x));\n'
        "  return (double)(__rdtsc() - t0) / ((double)n * 8);\n}\n",
        "static double best(double (*f)(long), long n) {\n"
        "  double b = 1e30; for (int r = 0; r < 9; r++) { double t = f(n); if (t < b) b = t; }\n"
        "  return b;\n}\n",
    ]
    for i, (_, pattern) in enumerate(MIXES):
        body = mix_body(pattern)
        out.append(timed(f"mix{i}", body, len(body)))
    for i, variant in enumerate(TRIPS):
        out.append(timed(f"trip{i}", blend_trip(variant), 1))
    out.append("int main(void) {\n  const long n = 2000000;\n")
    out.append("  for (int i = 0; i < 1024; i++) { src[i] = 1.0f + i * 1e-3f; dst[i] = 0.25f; }\n")
    out.append("  double tick = best(chain, 4 * n); /* TSC ticks per core cycle */\n")
    out.append('  printf("TSC ticks per core cycle: %.3f\\n", tick);\n')
    out.append('  printf("%-32s %10s %10s\\n", "mix", "cycles", "ops/cycle");\n')
    for i, (name, pattern) in enumerate(MIXES):
        k = len(pattern)
        out.append(
            f"  {{ double c = best(mix{i}, n) / tick * {k};"
            f' printf("%-32s %10.3f %10.2f\\n", "{name}", c, {k} / c); }}\n'
        )
    # The mixes' stores left their registers' contents in dst: the trips
    # read the palette values and weights again.
    out.append("  for (int i = 0; i < 1024; i++) { src[i] = 1.0f + i * 1e-3f; dst[i] = 0.25f; }\n")
    out.append('  printf("\\nLBS blend, one trip of eight vertices and four influences:\\n");\n')
    for i, variant in enumerate(TRIPS):
        out.append(
            f"  {{ double c = best(trip{i}, n / 16) / tick;"
            f' printf("%-40s %6.1f cycles\\n", "{variant}", c); }}\n'
        )
    out.append("  return 0;\n}\n")
    return "".join(out)


def main():
    cc = sys.argv[1] if len(sys.argv) > 1 else "cc"
    with tempfile.TemporaryDirectory() as tmp:
        c = os.path.join(tmp, "mix.c")
        exe = os.path.join(tmp, "mix")
        with open(c, "w") as f:
            f.write(program())
        subprocess.run([cc, "-O2", "-mavx2", "-mfma", c, "-o", exe], check=True)
        subprocess.run([exe], check=True)


if __name__ == "__main__":
    main()
