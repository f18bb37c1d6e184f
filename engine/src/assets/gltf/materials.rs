//! Materials for the viewer: base colour factor and base colour texture.

use std::path::Path;

use glam::Vec4;

use super::super::{FaultKind, LoadError, Material, TextureSource};
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
        let texture = match &pbr.base_color_texture {
            Some(info) => texture(ctx, info.index.value(), &item, base_dir)?,
            None => None,
        };
        out.push(Material {
            name: mat.name.clone().unwrap_or_else(|| format!("material{i}")),
            base_color,
            texture,
        });
    }
    Ok(out)
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
