//! A material's texture: a file beside the model or embedded bytes.

use std::ffi::OsString;
use std::path::{Component, Path, PathBuf};

use super::{read_texture_with_limits, Image, TextureLimits};
use crate::assets::{FaultKind, LoadError, Place, TextureSource};

/// Reads a material's texture and completes its mip chain
/// ([`Image::complete_mip_chain`]), with the default [`TextureLimits`].
///
/// A [`TextureSource::File`] path is resolved against `model_dir` (the
/// model file's folder; the working directory when `None`) by
/// [`resolve_texture_path`]: either slash separates folders, and a name
/// whose case does not match is found case-insensitively. A missing file is
/// an error naming the path tried. Embedded bytes are read with their MIME
/// type as the hint and named `embedded texture (<mime>)` in errors.
pub fn load_material_texture(
    source: &TextureSource,
    model_dir: Option<&Path>,
) -> Result<Image, LoadError> {
    load_material_texture_with_limits(source, model_dir, &TextureLimits::default())
}

/// [`load_material_texture`] with explicit [`TextureLimits`] (a file larger
/// than `max_bytes` is refused before it is read).
pub fn load_material_texture_with_limits(
    source: &TextureSource,
    model_dir: Option<&Path>,
    limits: &TextureLimits,
) -> Result<Image, LoadError> {
    let (image, name) = match source {
        TextureSource::File(path) => {
            let resolved = resolve_texture_path(path, model_dir).map_err(|tried| {
                LoadError::new(
                    &tried,
                    Place::Unknown,
                    FaultKind::Io,
                    format!(
                        "texture file not found (named {:?} by the model; tried {}, \
                         and case-insensitively)",
                        path.display(),
                        tried.display()
                    ),
                )
            })?;
            let io = |e: std::io::Error| {
                LoadError::new(
                    &resolved,
                    Place::Unknown,
                    FaultKind::Io,
                    format!("cannot read texture: {e}"),
                )
            };
            let len = std::fs::metadata(&resolved).map_err(io)?.len();
            if len > limits.max_bytes {
                return Err(LoadError::new(
                    &resolved,
                    Place::Unknown,
                    FaultKind::Unsupported,
                    format!(
                        "texture file of {len} bytes, over the limit of {} bytes",
                        limits.max_bytes
                    ),
                ));
            }
            let bytes = std::fs::read(&resolved).map_err(io)?;
            let hint = resolved
                .extension()
                .and_then(|e| e.to_str())
                .unwrap_or_default()
                .to_string();
            let image = read_texture_with_limits(&bytes, &resolved, &hint, limits)?;
            (image, resolved)
        }
        TextureSource::Embedded { mime, bytes } => {
            let name = PathBuf::from(format!("embedded texture ({mime})"));
            let image = read_texture_with_limits(bytes, &name, mime, limits)?;
            (image, name)
        }
    };
    image
        .complete_mip_chain()
        .map_err(|e| LoadError::new(&name, Place::Unknown, FaultKind::Invalid, e.to_string()))
}

/// Finds the file a model names: `path` (either `/` or `\` between
/// folders) joined to `model_dir` unless absolute; where that file does not
/// exist, each component is looked up case-insensitively in its folder (a
/// unique match wins; an exact match is always preferred). `Err` carries
/// the path tried (the plain join, slashes normalised).
pub fn resolve_texture_path(path: &Path, model_dir: Option<&Path>) -> Result<PathBuf, PathBuf> {
    let exact = match model_dir {
        Some(dir) if path.is_relative() => dir.join(path),
        _ => path.to_path_buf(),
    };
    if exact.is_file() {
        return Ok(exact);
    }
    // Either slash: a Windows-authored name such as `textures\Skin.dds`.
    let normalised = PathBuf::from(path.to_string_lossy().replace('\\', "/"));
    let tried = match model_dir {
        Some(dir) if normalised.is_relative() => dir.join(&normalised),
        _ => normalised.clone(),
    };
    if tried.is_file() {
        return Ok(tried);
    }
    let mut at = match model_dir {
        Some(dir) if normalised.is_relative() => dir.to_path_buf(),
        _ => PathBuf::new(),
    };
    for component in normalised.components() {
        match component {
            Component::Normal(name) => {
                let exact = at.join(name);
                if exact.exists() {
                    at = exact;
                    continue;
                }
                match find_case_insensitive(&at, name) {
                    Some(found) => at = found,
                    None => return Err(tried),
                }
            }
            other => at.push(other.as_os_str()),
        }
    }
    if at.is_file() {
        Ok(at)
    } else {
        Err(tried)
    }
}

/// The one entry of `dir` whose name equals `name` ignoring case.
fn find_case_insensitive(dir: &Path, name: &std::ffi::OsStr) -> Option<PathBuf> {
    let want = name.to_str()?.to_lowercase();
    let read_from = if dir.as_os_str().is_empty() {
        Path::new(".")
    } else {
        dir
    };
    let mut found: Option<OsString> = None;
    for entry in std::fs::read_dir(read_from).ok()?.flatten() {
        let entry_name = entry.file_name();
        if entry_name.to_str().map(str::to_lowercase).as_deref() == Some(want.as_str()) {
            if found.is_some() {
                return None; // ambiguous
            }
            found = Some(entry_name);
        }
    }
    found.map(|n| dir.join(n))
}
