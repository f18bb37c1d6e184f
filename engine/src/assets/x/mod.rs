//! DirectX .x loader: text (`txt`), binary (`bin`, 32- and 64-bit floats)
//! and MSZIP-compressed text or binary (`tzip`, `bzip`), versions 0302 and
//! 0303.
//!
//! # Pipeline
//!
//! 1. `header`: the 16-byte `xof` header.
//! 2. `mszip`: for `tzip`/`bzip`, the blocks are walked and checked, then
//!    inflated (with `miniz_oxide`) into one buffer that starts with the
//!    original header, so that byte offsets in errors are offsets into the
//!    decompressed file (messages say so).
//! 3. `text` or `binary` tokenizes; `tree` builds a generic object
//!    tree. Templates are skipped: every data object's member values are
//!    flattened into one list, and the conversion reads them knowing the
//!    standard templates. Nesting deeper than [`Limits::max_depth`] is an
//!    error, so hostile input cannot exhaust the stack.
//! 4. `convert`, `mesh`, `anim`, `material`: the tree becomes a [`Model`].
//!
//! Every count read from the file is checked against the values (text) or
//! bytes (binary) that follow before anything is sized by it, so no file
//! can make the loader allocate more than a small multiple of its own
//! (decompressed) size, and the decompressed size is capped by
//! [`Limits::max_decompressed`].
//!
//! # Conventions
//!
//! .x is left-handed with row vectors (`v' = v * M`, translation in the
//! fourth row). The engine is right-handed with column vectors. The loader
//! converts once, here, by mirroring Z:
//!
//! * points, normals and position keys: `(x, y, z) -> (x, y, -z)`;
//! * matrices (`FrameTransformMatrix`, `SkinWeights` offsets, matrix keys):
//!   `M' = S * transpose(M) * S` with `S = diag(1, 1, -1)`;
//! * rotation keys: stored `w, x, y, z` and conjugated with respect to the
//!   frame matrices (seed 003 negates `w` before building its matrix; the
//!   `Wuson_Bind` set of `Testwuson.X` matches its frames only that way),
//!   then mirrored: file `(w, x, y, z)` becomes `Quat::from_xyzw(x, y, -z, w)`;
//! * scale keys are unchanged by the mirror;
//! * faces: mirroring turns Direct3D's clockwise front faces
//!   counter-clockwise-from-behind, so every face's winding is reversed.
//!   N-gons are triangulated as fans: face `(v0, v1, ..., vn)` gives
//!   triangles `(v0, v(i+1), vi)`.
//! * texture coordinates are kept as stored (Direct3D and Vulkan both put
//!   `v = 0` at the top of the image).
//!
//! Key times are ticks: seconds = ticks / `AnimTicksPerSecond`. A set uses
//! the `AnimTicksPerSecond` inside it, else the last top-level one before
//! it (`Testwuson.X` writes one before each set), else the first top-level
//! one anywhere, else 4800 (D3DX's default; seed 003's 4.8 per ms). A clip
//! lasts until its last key.
//!
//! # Decisions
//!
//! * **Skeleton.** Every `Frame` is a joint, in depth-first order, named
//!   after the frame; an unnamed frame is named `$frame<index>`. Meshes
//!   outside any frame hang under a synthetic identity root joint named
//!   [`SYNTHETIC_ROOT`], added only when such meshes exist. References
//!   resolve by name to the first frame of that name (D3DX's `FindFrame`).
//!   A frame's reference to a top-level `Mesh` places that mesh in the
//!   frame; a reference to one of its own ancestors is a cycle (an error);
//!   to another frame (instancing) is ignored with a warning.
//! * **Bind pose.** `FrameTransformMatrix` stores *a* pose, not necessarily
//!   the one the skin offsets were taken in (tiny.x's frames are up to 196
//!   units away from it). The skeleton's bind pose is therefore rebuilt from
//!   the offsets: a bone's bind-pose model matrix is the inverse of its
//!   `SkinWeights` offset (the first mesh's when several skin the same
//!   bone; a warning when they disagree), and a frame no skin uses keeps
//!   its stored matrix relative to its parent's bind pose. In the bind pose
//!   every skin matrix is then the identity and the meshes show as stored.
//! * **Rest pose of clips.** D3DX leaves whatever a set does not animate at
//!   the frame's `FrameTransformMatrix`. Where that differs from the bind
//!   pose, the clip gets a one-key track with the stored value (for a whole
//!   untouched frame, or for the channels a partly keyed frame lacks), so
//!   clips play as D3DX shows them.
//! * **Skinned meshes** (with `SkinWeights`): positions are kept as stored;
//!   the skin has one entry per `SkinWeights`, in order, with the file's
//!   offset matrix as the inverse bind. D3DX does not apply the mesh's own
//!   frame to skinned vertices, and neither does this loader.
//! * **Bones that name no frame** (`anim_test.x`: an exporter bug that
//!   loaders must tolerate) are bound to the mesh's own frame, with an
//!   inverse bind that is the identity in the bind pose: those influences
//!   stay put relative to the mesh's frame. The skin keeps one entry per
//!   `SkinWeights`, and a warning names the bone. Vertices with no weight
//!   at all are bound to the mesh's frame the same way (warning).
//! * **Influences** are built per vertex from all `SkinWeights`; the
//!   `LoadOptions::max_influences` largest are kept and renormalised
//!   (truncation is a warning); negative weights are dropped (warning).
//! * **Unskinned meshes** are moved into model space by their frame's
//!   bind-pose matrix and bound to that frame by a one-joint skin named
//!   `rigid:<frame>` ([`RIGID_SKIN_PREFIX`]) whose inverse bind is the
//!   inverse of that matrix (identity skinning in the bind pose; a frame
//!   that mirrors also flips the winding back).
//! * **Vertices**: `MeshNormals` index normals per face corner; a file
//!   vertex used with two different normals is split (file vertex `i`
//!   stays vertex `i`, splits are appended and keep their skin weights and
//!   texture coordinates). Without `MeshNormals`, smooth normals are
//!   computed.
//! * **Materials**: `MeshMaterialList` entries (inline `Material`s or
//!   references to top-level ones) become model materials: face colour as
//!   base colour, `TextureFilename` as [`super::TextureSource::File`]
//!   (backslashes to `/`, relative to the file's folder; an absolute
//!   Windows path keeps only its file name). A mesh whose faces use several
//!   materials becomes one engine mesh per material (sharing one skin).
//! * **Keys**: rotation keys interpolate with
//!   `LoadOptions::x_rotation_interpolation` (SQUAD by default, as seed 003),
//!   scale and position keys linearly, matrix keys (type 4, and type 3,
//!   which some exporters write) by the nearest key (seed 003).
//!   `AnimationOptions` change nothing in the data: open/closed is the
//!   player's `PlaybackMode`; a request for spline positions is noted in
//!   the warnings.
//! * **Errors** (never panics): a bad header, truncation, bad MSZIP blocks,
//!   unknown binary tokens, counts beyond the data, indices out of range
//!   (faces, normals, skin weights, materials), non-finite numbers
//!   (including MSVC's `1.#QNAN0`), projective matrices, unknown key types,
//!   key counts or times out of order, zero quaternions, an `Animation`
//!   naming a missing frame or none, a frame reference that is missing or
//!   cyclic, a material reference that is missing, and nesting beyond the
//!   depth limit. Each error names the file, the line and column (text) or
//!   byte offset (binary), and the fault.

mod anim;
mod binary;
mod convert;
mod ctx;
mod header;
mod limits;
mod material;
mod mesh;
mod mszip;
mod source;
mod text;
mod tree;
mod values;

use std::path::Path;

use super::{FaultKind, LoadError, LoadOptions, Model, Place, TextureSource};
use crate::anim::Interpolation;

pub use anim::DEFAULT_TICKS_PER_SECOND;
pub use limits::{Limits, RIGID_SKIN_PREFIX, SYNTHETIC_ROOT};

/// Loads a .x file. Texture paths that do not exist but whose file name
/// does exist in the model's folder are pointed there (with a warning):
/// `tiny_4anim.x` names `tiny\Tiny_skin.dds` for a texture shipped beside it.
pub fn load(path: &Path, options: &LoadOptions) -> Result<Model, LoadError> {
    let bytes = std::fs::read(path).map_err(|e| {
        LoadError::new(
            path,
            Place::Unknown,
            FaultKind::Io,
            format!("cannot read the file: {e}"),
        )
    })?;
    let mut model = load_from_bytes(path, &bytes, options)?;
    let dir = path.parent().unwrap_or(Path::new(""));
    for m in &mut model.materials {
        if let Some(TextureSource::File(p)) = &mut m.texture {
            if !p.exists() {
                if let Some(beside) = p.file_name().map(|f| dir.join(f)) {
                    if beside.is_file() {
                        model.warnings.push(format!(
                            "texture {} not found; using {}",
                            p.display(),
                            beside.display()
                        ));
                        *p = beside;
                    }
                }
            }
        }
    }
    Ok(model)
}

/// Loads a .x file held in memory. `name` is the file's path: it names the
/// file in errors, gives the model its name, and texture paths are resolved
/// against its folder.
pub fn load_from_bytes(
    name: impl AsRef<Path>,
    bytes: &[u8],
    options: &LoadOptions,
) -> Result<Model, LoadError> {
    load_from_bytes_with_limits(name, bytes, options, &Limits::default())
}

/// [`load_from_bytes`] with explicit resource limits.
pub fn load_from_bytes_with_limits(
    name: impl AsRef<Path>,
    bytes: &[u8],
    options: &LoadOptions,
    limits: &Limits,
) -> Result<Model, LoadError> {
    let file = name.as_ref();
    check_options(file, options)?;
    let header = header::parse(file, bytes)?;
    let inflated;
    let (data, text, decompressed) = match header.format {
        header::Format::Text => (bytes, true, false),
        header::Format::Binary => (bytes, false, false),
        header::Format::CompressedText | header::Format::CompressedBinary => {
            let limit = limits.max_decompressed.min(u32::MAX as usize);
            inflated = mszip::inflate(file, bytes, limit)?;
            (
                &inflated[..],
                header.format == header::Format::CompressedText,
                true,
            )
        }
    };
    if data.len() > u32::MAX as usize {
        return Err(LoadError::new(
            file,
            Place::Unknown,
            FaultKind::Count,
            format!(
                "{} bytes is more than the 4 GiB a .x file may hold",
                data.len()
            ),
        ));
    }
    let src = source::Source {
        file,
        data,
        text,
        decompressed,
    };
    let depth = limits.max_depth.max(1);
    let doc = if text {
        tree::Builder::new(text::TextLexer::new(src, header::HEADER_LEN), depth).document()?
    } else {
        tree::Builder::new(
            binary::BinaryLexer::new(src, header::HEADER_LEN, header.float_size),
            depth,
        )
        .document()?
    };
    let dir = file.parent().unwrap_or(Path::new(""));
    let model_name = file
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    convert::convert(&src, &doc, options, dir, model_name, limits)
}

fn check_options(file: &Path, options: &LoadOptions) -> Result<(), LoadError> {
    let bad = |msg: String| {
        Err(LoadError::new(
            file,
            Place::Unknown,
            FaultKind::Invalid,
            msg,
        ))
    };
    if !(1..=8).contains(&options.max_influences) {
        return bad(format!(
            "LoadOptions::max_influences is {}; it must be 1..=8",
            options.max_influences
        ));
    }
    if options.x_rotation_interpolation == Interpolation::CubicSpline {
        return bad(".x rotation keys have no tangents for cubic-spline interpolation".into());
    }
    Ok(())
}
