//! `Material` and `TextureFilename` objects.

use std::path::{Path, PathBuf};

use glam::Vec4;

use super::super::{LoadError, Material, TextureSource};
use super::source::Source;
use super::tree::Object;
use super::values::Reader;

/// `Material { faceColor RGBA; power; specularColor RGB; emissiveColor RGB;
/// [TextureFilename] }`: the face colour becomes the base colour (as stored,
/// no colour-space change), the first texture file name the base-colour
/// texture. Specular and emissive terms are read (and so checked) but the
/// engine's material has no place for them.
pub(crate) fn convert(
    src: &Source<'_>,
    obj: &Object,
    dir: &Path,
    fallback_name: String,
) -> Result<Material, LoadError> {
    let mut r = Reader::new(src, obj);
    let mut c = [0f32; 4];
    for (i, v) in c.iter_mut().enumerate() {
        *v = r.f32(&|| format!("face colour component {i}"))?;
    }
    r.f32(&|| "the specular power".into())?;
    for i in 0..6 {
        r.f32(&|| format!("specular/emissive component {i}"))?;
    }
    let mut texture = None;
    for child in obj.objects() {
        if child.kind.eq_ignore_ascii_case("TextureFilename") && texture.is_none() {
            let mut t = Reader::new(src, child);
            let (name, _) = t.string(&|| "the texture file name".into())?;
            texture = texture_path(dir, name).map(TextureSource::File);
        }
    }
    Ok(Material {
        name: obj.name.clone().unwrap_or(fallback_name),
        base_color: Vec4::from_array(c),
        texture,
        ..Material::default()
    })
}

/// A texture file name as written by Windows exporters, resolved against
/// the model's folder: backslashes (single or doubled) become `/`; an
/// absolute path (`C:\...`, `/...`) keeps only its file name, since the
/// exporter's folders do not exist here; an empty name is no texture.
pub(crate) fn texture_path(dir: &Path, raw: &str) -> Option<PathBuf> {
    let unified = raw.trim().replace('\\', "/");
    let parts: Vec<&str> = unified.split('/').filter(|p| !p.is_empty()).collect();
    let last = parts.last()?;
    let drive = parts
        .first()
        .is_some_and(|p| p.len() == 2 && p.ends_with(':'));
    if unified.starts_with('/') || drive {
        return Some(dir.join(last));
    }
    let mut path = dir.to_path_buf();
    for p in parts {
        path.push(p);
    }
    Some(path)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn texture_paths() {
        let d = Path::new("/m");
        assert_eq!(
            texture_path(d, "Tiny_skin.dds"),
            Some(PathBuf::from("/m/Tiny_skin.dds"))
        );
        assert_eq!(
            texture_path(d, "tiny\\\\Tiny_skin.dds"),
            Some(PathBuf::from("/m/tiny/Tiny_skin.dds"))
        );
        assert_eq!(
            texture_path(d, "tiny\\Tiny_skin.dds"),
            Some(PathBuf::from("/m/tiny/Tiny_skin.dds"))
        );
        assert_eq!(
            texture_path(d, "C:\\\\code\\\\data\\\\top.tga"),
            Some(PathBuf::from("/m/top.tga"))
        );
        assert_eq!(texture_path(d, ""), None);
    }
}
