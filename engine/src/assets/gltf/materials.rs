//! Materials: base colour factor and texture (with the texture coordinate
//! set it reads and its sampler), alpha mode and cutoff, sidedness.

use std::path::Path;

use glam::Vec4;

use gltf::json::material::AlphaMode as GltfAlphaMode;
use gltf::json::texture::{MagFilter, MinFilter, WrappingMode};
use gltf::json::validation::Checked;

use super::super::{
    AlphaMode, FaultKind, Filter, LoadError, Material, Sampler, TextureSource, Wrap,
};
use super::container::{decode_data_uri, relative_file};
use super::ctx::Ctx;

pub(super) fn materials(
    ctx: &mut Ctx<'_>,
    base_dir: Option<&Path>,
) -> Result<Vec<Material>, LoadError> {
    let root = ctx.root;
    let mut out = Vec::with_capacity(root.materials.len());
    for (i, mat) in root.materials.iter().enumerate() {
        let item = format!("materials[{i}]");
        let pbr = &mat.pbr_metallic_roughness;
        let base_color = Vec4::from_array(pbr.base_color_factor.0);
        if !base_color.is_finite() {
            return Err(ctx.err(
                &format!("{item}.pbrMetallicRoughness.baseColorFactor"),
                FaultKind::NonFinite,
                format!("{base_color}"),
            ));
        }
        let (texture, tex_coord, sampler) = match &pbr.base_color_texture {
            Some(info) => (
                texture(ctx, info.index.value(), &item, base_dir)?,
                info.tex_coord,
                sampler_of(ctx, info.index.value())?,
            ),
            None => (None, 0, Sampler::default()),
        };
        let alpha_mode = match mat.alpha_mode {
            Checked::Valid(GltfAlphaMode::Opaque) => AlphaMode::Opaque,
            Checked::Valid(GltfAlphaMode::Blend) => AlphaMode::Blend,
            Checked::Valid(GltfAlphaMode::Mask) => {
                let cutoff = mat.alpha_cutoff.map_or(0.5, |c| c.0);
                if !(cutoff.is_finite() && cutoff >= 0.0) {
                    return Err(ctx.err(
                        &format!("{item}.alphaCutoff"),
                        FaultKind::Invalid,
                        format!("{cutoff} (a finite value of at least 0)"),
                    ));
                }
                AlphaMode::Mask { cutoff }
            }
            Checked::Invalid => {
                return Err(ctx.err(
                    &format!("{item}.alphaMode"),
                    FaultKind::Invalid,
                    "not OPAQUE, MASK or BLEND",
                ))
            }
        };
        out.push(Material {
            name: mat.name.clone().unwrap_or_else(|| format!("material{i}")),
            base_color,
            texture,
            tex_coord,
            sampler,
            alpha_mode,
            double_sided: mat.double_sided,
        });
    }
    Ok(out)
}

/// The sampler of texture `t` (already checked to exist): the file's, or
/// the default (linear, mip-mapped, repeat) where it names none or leaves a
/// filter out.
fn sampler_of(ctx: &Ctx<'_>, t: usize) -> Result<Sampler, LoadError> {
    let root = ctx.root;
    let Some(s) = root.textures.get(t).and_then(|tex| tex.sampler) else {
        return Ok(Sampler::default());
    };
    let item = format!("samplers[{}]", s.value());
    let Some(s) = root.samplers.get(s.value()) else {
        return Err(ctx.err(
            &format!("textures[{t}].sampler"),
            FaultKind::OutOfRange,
            format!("{item}, but the file has {}", root.samplers.len()),
        ));
    };
    let bad = |what: &str| {
        ctx.err(
            &format!("{item}.{what}"),
            FaultKind::Invalid,
            "unknown value",
        )
    };
    let mag = match s.mag_filter {
        None => Filter::Linear,
        Some(Checked::Valid(MagFilter::Nearest)) => Filter::Nearest,
        Some(Checked::Valid(MagFilter::Linear)) => Filter::Linear,
        Some(Checked::Invalid) => return Err(bad("magFilter")),
    };
    let (min, mipmap) = match s.min_filter {
        None => (Filter::Linear, Some(Filter::Linear)),
        Some(Checked::Valid(f)) => match f {
            MinFilter::Nearest => (Filter::Nearest, None),
            MinFilter::Linear => (Filter::Linear, None),
            MinFilter::NearestMipmapNearest => (Filter::Nearest, Some(Filter::Nearest)),
            MinFilter::LinearMipmapNearest => (Filter::Linear, Some(Filter::Nearest)),
            MinFilter::NearestMipmapLinear => (Filter::Nearest, Some(Filter::Linear)),
            MinFilter::LinearMipmapLinear => (Filter::Linear, Some(Filter::Linear)),
        },
        Some(Checked::Invalid) => return Err(bad("minFilter")),
    };
    let wrap = |w: Checked<WrappingMode>, what: &str| match w {
        Checked::Valid(WrappingMode::Repeat) => Ok(Wrap::Repeat),
        Checked::Valid(WrappingMode::MirroredRepeat) => Ok(Wrap::MirroredRepeat),
        Checked::Valid(WrappingMode::ClampToEdge) => Ok(Wrap::ClampToEdge),
        Checked::Invalid => Err(bad(what)),
    };
    Ok(Sampler {
        mag,
        min,
        mipmap,
        wrap_s: wrap(s.wrap_s, "wrapS")?,
        wrap_t: wrap(s.wrap_t, "wrapT")?,
    })
}

fn texture(
    ctx: &mut Ctx<'_>,
    t: usize,
    from: &str,
    base_dir: Option<&Path>,
) -> Result<Option<TextureSource>, LoadError> {
    let root = ctx.root;
    let from = format!("{from}.pbrMetallicRoughness.baseColorTexture");
    let Some(tex) = root.textures.get(t) else {
        return Err(ctx.err(
            &from,
            FaultKind::OutOfRange,
            format!("textures[{t}], but the file has {}", root.textures.len()),
        ));
    };
    let im = tex.source.value();
    let Some(image) = root.images.get(im) else {
        // A texture whose only image is in an unsupported extension.
        if tex.extensions.is_some() {
            ctx.warn(format!("textures[{t}]: no core image source; untextured"));
            return Ok(None);
        }
        return Err(ctx.err(
            &format!("textures[{t}].source"),
            FaultKind::OutOfRange,
            format!("images[{im}], but the file has {}", root.images.len()),
        ));
    };
    let item = format!("images[{im}]");
    let mime = image.mime_type.as_ref().map(|m| m.0.clone());
    match (&image.uri, image.buffer_view) {
        (Some(uri), _) if uri.starts_with("data:") => {
            ctx.charge(uri.len() as u64, &item)?;
            let (m, bytes) = decode_data_uri(ctx.file, &item, uri)?;
            Ok(Some(TextureSource::Embedded {
                mime: mime.unwrap_or(m),
                bytes,
            }))
        }
        (Some(uri), _) => {
            let rel = relative_file(ctx.file, &item, uri)?;
            Ok(Some(TextureSource::File(match base_dir {
                Some(d) => d.join(rel),
                None => rel,
            })))
        }
        (None, Some(v)) => {
            let len = ctx
                .view_bytes(v.value(), &format!("{item}.bufferView"))?
                .len();
            ctx.charge(len as u64, &item)?;
            let bytes = ctx.view_bytes(v.value(), &item)?.to_vec();
            Ok(Some(TextureSource::Embedded {
                mime: mime.unwrap_or_default(),
                bytes,
            }))
        }
        (None, None) => Err(ctx.err(
            &item,
            FaultKind::MissingReference,
            "image with neither a uri nor a bufferView",
        )),
    }
}
