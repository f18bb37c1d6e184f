#!/usr/bin/env python3
"""Seed corpora for the .x fuzz targets, from the test assets (not part of
this repository: ASSETS_DIR, else $VKSKIN_ASSETS; see docs/testing.md),
and the hand-written glTF seeds of gltf_import (morph targets and weight
channels, which the shared assets lack).

    python3 fuzz/make_corpus.py [ASSETS_DIR]

Writes fuzz/corpus/x_text, fuzz/corpus/x_binary and the written seeds of
fuzz/corpus/gltf_import (all git-ignored). Seeds are
kept under 64 KiB (the fuzz runs use -max_len=65536): the small real files
whole, slices of the big ones, and a hand-written scene that uses every
object the loader reads (frames, n-gons, per-corner normals, materials and
references, skin weights, every key type, options, tick rates), also
converted to binary tokens.
"""
import base64
import json
import os
import re
import struct
import sys
import zlib

HERE = os.path.dirname(os.path.abspath(__file__))
ASSETS = sys.argv[1] if len(sys.argv) > 1 else os.environ.get(
    "VKSKIN_ASSETS", os.path.join(HERE, "..", "..", "shared", "assets"))
X = os.path.join(ASSETS, "x")
MAX = 65536

SCENE = b"""xof 0303txt 0032
template Dummy { <11111111-2222-3333-4444-555555555555> DWORD a; array FLOAT b[a]; [...] }
AnimTicksPerSecond { 30; }
Material Red { 1;0;0;1;; 10; 1;1;1;; 0;0;0;; TextureFilename { "C:\\\\t\\\\red.png"; } }
Mesh Shared { 3; 0;0;0;, 1;0;0;, 0;1;0;; 1; 3;0,1,2;; }
Frame Root {
  FrameTransformMatrix { 1,0,0,0, 0,0,1,0, 0,1,0,0, 0,0,0,1;; }
  Frame Hip {
    FrameTransformMatrix { 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,1,0,1;; }
    Frame Knee { FrameTransformMatrix { 0,0,-1,0, 0,1,0,0, 1,0,0,0, 0,-1,0,1;; } { Shared } }
  }
  Mesh Body {
    6;
    0;0;0;, 1;0;0;, 1;1;0;, 0;1;0;, 2;0;0;, 2;1;0;;
    3;
    4;0,1,2,3;,
    3;1,4,2;,
    5;1,4,5,2,3;;
    MeshNormals { 2; 0;0;1;, 0;0;-1;; 3; 4;0,0,0,0;, 3;1,1,1;, 5;0,1,0,1,0;; }
    MeshTextureCoords { 6; 0;0;, 0.2;0;, 0.4;0;, 0.6;0;, 0.8;0;, 1;1;; }
    MeshMaterialList { 2; 3; 0, 1, 0;; { Red } Material Blue { 0;0;1;1;; 0; 0;0;0;; 0;0;0;; } }
    XSkinMeshHeader { 2; 4; 3; }
    SkinWeights { "Hip"; 3; 0,1,2; 0.5,1,0.25; 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,-1,0,1;; }
    SkinWeights { "Knee"; 2; 0,4; 0.5,0.75; 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }
    SkinWeights { "Missing"; 1; 5; 1; 1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;; }
  }
}
AnimationSet Walk {
  Animation { { Hip } AnimationOptions { 1; 0; }
    AnimationKey { 0; 3; 0;4;1,0,0,0;;, 10;4;0.7071068,0,0.7071068,0;;, 20;4;0,0,1,0;;; }
    AnimationKey { 1; 2; 0;3;1,1,1;;, 20;3;2,2,2;;; }
    AnimationKey { 2; 2; 0;3;0,1,0;;, 20;3;0,1,5;;; }
  }
  Animation { { Knee } AnimationKey { 4; 2; 0;16;1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;;, 15;16;0,1,0,0, -1,0,0,0, 0,0,1,0, 0,0,0,1;;; } }
}
AnimationSet { AnimTicksPerSecond { 4800; } Animation { { Root } AnimationKey { 3; 1; 0;16;1,0,0,0, 0,1,0,0, 0,0,1,0, 0,0,0,1;;; } } }
"""


def text_tokens(body):
    """Tokens of a text .x body: words, strings, braces (templates kept)."""
    body = re.sub(rb"//[^\n]*|#[^\n]*", b"", body)
    return re.findall(rb'"[^"]*"|<[^>]*>|[{}]|[^\s;,{}"<]+', body)


def to_binary(text, float_size=4):
    """The hand-written scene as binary tokens (templates dropped)."""
    toks = text_tokens(text[16:])
    out = bytearray(text[:8] + b"bin " + (b"0032" if float_size == 4 else b"0064"))
    i = 0
    pending = []
    after_name = False

    def flush():
        nonlocal pending
        if not pending:
            return
        # Runs of one kind: integers or floats.
        run, kind = [], None
        for v in pending + [None]:
            k = None if v is None else (7 if b"." in v or b"e" in v.lower() else 6)
            if run and (k != kind):
                out.extend(struct.pack("<HI", kind, len(run)))
                for r in run:
                    if kind == 6:
                        out.extend(struct.pack("<I", int(r) & 0xFFFFFFFF))
                    else:
                        out.extend(struct.pack("<f" if float_size == 4 else "<d", float(r)))
                run = []
            if v is not None:
                run.append(v)
                kind = k
        pending = []

    def name(n):
        out.extend(struct.pack("<HI", 1, len(n)) + n)

    while i < len(toks):
        t = toks[i]
        if t == b"template":
            while toks[i] != b"}":
                i += 1
            i += 1
            continue
        was_name, after_name = after_name, False
        if t == b"{":
            flush()
            if not was_name and toks[i + 2] == b"}" and toks[i + 1] not in (b"{", b"}"):
                out.extend(struct.pack("<H", 10))
                name(toks[i + 1])
                out.extend(struct.pack("<H", 11))
                i += 3
                continue
            out.extend(struct.pack("<H", 10))
        elif t == b"}":
            flush()
            out.extend(struct.pack("<H", 11))
        elif t.startswith(b'"'):
            flush()
            s = t[1:-1]
            out.extend(struct.pack("<HI", 2, len(s)) + s + struct.pack("<H", 20))
        elif t.startswith(b"<"):
            pass
        elif re.match(rb"^[-+.\d]", t):
            pending.append(t)
        else:
            flush()
            name(t)
            after_name = True
        i += 1
    flush()
    return bytes(out)


def mszip_blocks(file):
    """An uncompressed .x file as bzip/tzip (raw deflate per 32 KiB block)."""
    fmt = b"tzip" if file[8:12] == b"txt " else b"bzip"
    out = bytearray(file[:8] + fmt + file[12:16])
    out += struct.pack("<I", len(file))
    for k in range(16, len(file), 32768):
        chunk = file[k:k + 32768]
        c = zlib.compressobj(6, zlib.DEFLATED, -15)
        z = c.compress(chunk) + c.flush()
        out += struct.pack("<HH", len(chunk), len(z) + 2) + b"CK" + z
    return bytes(out)


def inflate(file):
    p, out = 20, bytearray(file[:16])
    while p < len(file):
        u, c = struct.unpack_from("<HH", file, p)
        z = zlib.decompressobj(-15, zdict=bytes(out[-32768:]) if len(out) > 16 else b"")
        out += z.decompress(file[p + 6:p + 4 + c])
        p += 4 + c
    return bytes(out)


def gltf_morph_seed():
    """A small .gltf (data-URI buffer) using every morph-target feature the
    loader reads: a skinned quad with NORMAL and TANGENT, three targets
    (dense POSITION and NORMAL, sparse POSITION over a buffer view, TANGENT
    over zeros with sparse values), a second primitive of points, target
    names, mesh and node weights, two nodes sharing the mesh, and weight
    channels with STEP, LINEAR (normalised bytes) and CUBICSPLINE keys."""
    buf = bytearray()
    views = []
    accessors = []

    def view(data):
        while len(buf) % 4:
            buf.append(0)
        views.append({"buffer": 0, "byteOffset": len(buf), "byteLength": len(data)})
        buf.extend(data)
        return len(views) - 1

    def floats(v, type_, comps):
        accessors.append({"bufferView": view(struct.pack("<%df" % len(v), *v)),
                          "componentType": 5126, "count": len(v) // comps, "type": type_})
        return len(accessors) - 1

    def sparse(base, count, indices, values):
        acc = {"componentType": 5126, "count": count, "type": "VEC3",
               "sparse": {"count": len(indices),
                          "indices": {"bufferView": view(struct.pack("<%dH" % len(indices), *indices)),
                                      "componentType": 5123},
                          "values": {"bufferView": view(struct.pack("<%df" % len(values), *values))}}}
        if base is not None:
            acc["bufferView"] = view(struct.pack("<%df" % len(base), *base))
        accessors.append(acc)
        return len(accessors) - 1

    quad = [0, 0, 0, 1, 0, 0, 0, 1, 0, 1, 1, 0]
    pos = floats(quad, "VEC3", 3)
    nrm = floats([0, 0, 1] * 4, "VEC3", 3)
    tan = floats([1, 0, 0, 1] * 2 + [0, 1, 0, -1] * 2, "VEC4", 4)
    accessors.append({"bufferView": view(bytes([0, 1, 0, 0] * 4)), "componentType": 5121,
                      "count": 4, "type": "VEC4"})
    joints = len(accessors) - 1
    weights = floats([0.5, 0.5, 0, 0] * 4, "VEC4", 4)
    t0p = floats([0.1, 0, 0] * 4, "VEC3", 3)
    t0n = floats([0, 0.1, 0] * 4, "VEC3", 3)
    t1 = sparse([1, 1, 1] * 4, 4, [1, 3], [5, 6, 7, 8, 9, 10])
    t2 = sparse(None, 4, [2], [0, 0.5, 0])
    step_in = floats([0, 1], "SCALAR", 1)
    step_out = floats([0, 1, 0.5, 1, 0, -1], "SCALAR", 1)
    cub_out = floats([0, 0, 0, 0, 1, 0.5, 1, 1, 1, 1, 1, 1, 1, 0, 1, 0, 0, 0], "SCALAR", 1)
    accessors.append({"bufferView": view(bytes([0, 255, 51, 255, 0, 102])), "componentType": 5121,
                      "normalized": True, "count": 6, "type": "SCALAR"})
    unorm = len(accessors) - 1
    ibm = floats([1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1] * 2, "VEC4", 4)
    accessors[ibm].update(count=2, type="MAT4")
    doc = {
        "asset": {"version": "2.0"},
        "buffers": [{"byteLength": len(buf),
                     "uri": "data:application/octet-stream;base64," + base64.b64encode(bytes(buf)).decode()}],
        "bufferViews": views,
        "accessors": accessors,
        "meshes": [{"name": "face", "weights": [0.1, 0.2, 0.3],
                    "extras": {"targetNames": ["smile", "blink", "twist"]},
                    "primitives": [
                        {"attributes": {"POSITION": pos, "NORMAL": nrm, "TANGENT": tan,
                                        "JOINTS_0": joints, "WEIGHTS_0": weights},
                         "mode": 5,
                         "targets": [{"POSITION": t0p, "NORMAL": t0n}, {"POSITION": t1}, {"TANGENT": t2}]},
                        {"attributes": {"POSITION": pos}, "mode": 0, "targets": [{}, {}, {}]}]}],
        "skins": [{"joints": [1, 2], "inverseBindMatrices": ibm}],
        "nodes": [{"name": "body", "mesh": 0, "skin": 0, "weights": [0.5, -0.25, 1.5]},
                  {"children": [2]}, {"translation": [0, 1, 0]}, {"mesh": 0}],
        "animations": [
            {"name": "step", "channels": [{"sampler": 0, "target": {"node": 0, "path": "weights"}}],
             "samplers": [{"input": step_in, "output": step_out, "interpolation": "STEP"}]},
            {"name": "mix", "channels": [{"sampler": 0, "target": {"node": 3, "path": "weights"}},
                                         {"sampler": 1, "target": {"node": 0, "path": "weights"}}],
             "samplers": [{"input": step_in, "output": unorm},
                          {"input": step_in, "output": cub_out, "interpolation": "CUBICSPLINE"}]}],
    }
    return json.dumps(doc, separators=(",", ":")).encode()


def write(dir_, name, data):
    os.makedirs(dir_, exist_ok=True)
    with open(os.path.join(dir_, name), "wb") as f:
        f.write(data[:MAX])


def main():
    text_dir = os.path.join(HERE, "corpus", "x_text")
    bin_dir = os.path.join(HERE, "corpus", "x_binary")
    read = lambda n: open(os.path.join(X, n), "rb").read()
    write(text_dir, "scene.x", SCENE)
    write(text_dir, "scene_0302.x", SCENE.replace(b"0303", b"0302", 1))
    for n in ["test_cube_text.x", "kwxport_test_cubewithvcolors.x", "malformed_skinweights_oob.x"]:
        write(text_dir, n, read(n))
    # Slices of the big text files: their templates and first objects, and
    # the hierarchy plus the first animation set of tiny_4anim.x.
    for n in ["tiny.x", "anim_test.x", "Testwuson.X", "BCN_Epileptic.X"]:
        write(text_dir, n + ".head", read(n)[:MAX])
    t4 = read("tiny_4anim.x")
    skeleton = t4[:t4.index(b"\n Frame body {")]
    sets = t4.index(b"AnimationSet Loiter")
    loiter = t4[sets:t4.index(b"AnimationSet Walk")]
    cut = loiter.rindex(b"\n Animation {", 0, MAX - len(skeleton) - 8)
    tiny_anim = skeleton + b"\n}\n" + loiter[:cut] + b"\n}\n"
    write(text_dir, "tiny_4anim.skeleton", tiny_anim)
    write(text_dir, "tzip_scene.x", mszip_blocks(SCENE))

    # x_binary: the mode byte, then the body (0: bin 0032, 1: bin 0064,
    # 2: compressed by the harness, 3: a whole file).
    scene32 = to_binary(SCENE)
    scene64 = to_binary(SCENE, 8)
    write(bin_dir, "scene32", b"\x00" + scene32[16:])
    write(bin_dir, "scene64", b"\x01" + scene64[16:])
    write(bin_dir, "scene_z", b"\x02" + scene32[16:])
    write(bin_dir, "scene_file", b"\x03" + mszip_blocks(scene32))
    cube = read("test_cube_binary.x")
    write(bin_dir, "cube", b"\x00" + cube[16:])
    write(bin_dir, "cube_z", b"\x02" + cube[16:])
    write(bin_dir, "cube_file", b"\x03" + read("test_cube_compressed.x"))
    write(bin_dir, "truespace", b"\x00" + read("fromtruespace_bin32.x")[16:])
    bat = inflate(read("bat.x"))
    write(bin_dir, "bat_head", b"\x02" + bat[16:])
    anim = bat.index(b"AnimationSet")
    write(bin_dir, "bat_anim_file", b"\x03" + read("bat.x")[:MAX])
    write(bin_dir, "tiny_4anim_anim", b"\x00" + to_binary(tiny_anim)[16:])
    write(os.path.join(HERE, "corpus", "gltf_import"), "morph_targets.gltf", gltf_morph_seed())
    print("corpora in", os.path.join(HERE, "corpus"))


if __name__ == "__main__":
    main()
