//! The file around the JSON: GLB chunks, buffers (GLB `BIN` chunk, data
//! URIs, external files) and the small decoders they need (base64, percent
//! escapes). Every size read from the file is checked against the bytes
//! actually present before anything is allocated from it.

use std::borrow::Cow;
use std::collections::HashMap;
use std::io::Read;
use std::path::{Path, PathBuf};

use gltf::json;

use super::super::{FaultKind, LoadError, Place};

const GLB_MAGIC: &[u8; 4] = b"glTF";
const CHUNK_JSON: u32 = 0x4E4F_534A;
const CHUNK_BIN: u32 = 0x004E_4942;

/// Extensions that change nothing this loader reads, or whose data it reads
/// anyway (quantised attributes go through the generic accessor decoder).
const SUPPORTED_REQUIRED: &[&str] = &["KHR_mesh_quantization"];

/// The JSON text and the binary chunk of a .gltf or .glb file.
pub(super) struct Container<'a> {
    pub json: &'a [u8],
    /// Where the JSON starts in the file (0 for .gltf, 20 for .glb).
    pub json_offset: u64,
    pub bin: Option<&'a [u8]>,
    pub warnings: Vec<String>,
}

fn byte_err(file: &Path, at: u64, kind: FaultKind, msg: String) -> LoadError {
    LoadError::new(file, Place::Byte(at), kind, msg)
}

pub(super) fn item_err(file: &Path, item: &str, kind: FaultKind, msg: String) -> LoadError {
    LoadError::new(file, Place::Item(item.to_string()), kind, msg)
}

fn u32_at(bytes: &[u8], at: usize) -> Option<u32> {
    let b = bytes.get(at..at.checked_add(4)?)?;
    Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
}

/// Splits a file into JSON and binary chunk: GLB when it starts with the
/// magic `glTF`, JSON otherwise (whatever the extension says).
pub(super) fn split<'a>(file: &Path, bytes: &'a [u8]) -> Result<Container<'a>, LoadError> {
    if !bytes.starts_with(GLB_MAGIC) {
        // A UTF-8 byte order mark is not allowed by the spec but harmless.
        let (json, off) = match bytes.strip_prefix(b"\xEF\xBB\xBF".as_slice()) {
            Some(rest) => (rest, 3),
            None => (bytes, 0),
        };
        return Ok(Container {
            json,
            json_offset: off,
            bin: None,
            warnings: Vec::new(),
        });
    }
    let mut warnings = Vec::new();
    if bytes.len() < 12 {
        return Err(byte_err(
            file,
            bytes.len() as u64,
            FaultKind::Truncated,
            format!(
                "the GLB header needs 12 bytes, the file has {}",
                bytes.len()
            ),
        ));
    }
    let version = u32_at(bytes, 4).unwrap_or(0);
    if version != 2 {
        return Err(byte_err(
            file,
            4,
            FaultKind::Unsupported,
            format!("GLB version {version}; only version 2 is supported"),
        ));
    }
    let declared = u32_at(bytes, 8).unwrap_or(0) as usize;
    if declared > bytes.len() {
        return Err(byte_err(
            file,
            8,
            FaultKind::Truncated,
            format!(
                "the GLB header gives a length of {declared} bytes, the file has {}",
                bytes.len()
            ),
        ));
    }
    if declared < 12 {
        return Err(byte_err(
            file,
            8,
            FaultKind::Invalid,
            format!("the GLB header gives a length of {declared} bytes, less than the header"),
        ));
    }
    if declared < bytes.len() {
        warnings.push(format!(
            "{} bytes after the GLB's declared length of {declared} were ignored",
            bytes.len() - declared
        ));
    }
    let data = &bytes[..declared];
    let mut at = 12usize;
    let mut json: Option<(&[u8], u64)> = None;
    let mut bin: Option<&[u8]> = None;
    let mut first = true;
    while at < data.len() {
        let (Some(len), Some(kind)) = (u32_at(data, at), u32_at(data, at + 4)) else {
            return Err(byte_err(
                file,
                at as u64,
                FaultKind::Truncated,
                format!(
                    "a GLB chunk header needs 8 bytes, {} are left",
                    data.len() - at
                ),
            ));
        };
        let start = at + 8;
        let end = start
            .checked_add(len as usize)
            .filter(|&e| e <= data.len())
            .ok_or_else(|| {
                byte_err(
                    file,
                    at as u64,
                    FaultKind::Truncated,
                    format!(
                        "GLB chunk of {len} bytes runs past the end of the data ({} bytes left)",
                        data.len() - start
                    ),
                )
            })?;
        let body = &data[start..end];
        match kind {
            CHUNK_JSON if first => json = Some((body, start as u64)),
            _ if first => {
                return Err(byte_err(
                    file,
                    at as u64,
                    FaultKind::Invalid,
                    format!("the first GLB chunk must be JSON, found type {kind:#010x}"),
                ))
            }
            CHUNK_JSON => {
                return Err(byte_err(
                    file,
                    at as u64,
                    FaultKind::Invalid,
                    "a second JSON chunk".into(),
                ))
            }
            CHUNK_BIN if bin.is_none() => bin = Some(body),
            CHUNK_BIN => warnings.push(format!("extra BIN chunk at byte {at} ignored")),
            // Unknown chunk types are skipped, as the spec asks.
            _ => {}
        }
        first = false;
        at = end;
    }
    let Some((json, json_offset)) = json else {
        return Err(byte_err(
            file,
            12,
            FaultKind::Truncated,
            "the GLB has no JSON chunk".into(),
        ));
    };
    Ok(Container {
        json,
        json_offset,
        bin,
        warnings,
    })
}

/// Parses the glTF JSON, naming the line and column of a syntax fault.
pub(super) fn parse_json(file: &Path, c: &Container<'_>) -> Result<json::Root, LoadError> {
    let root: json::Root = serde_json::from_slice(c.json).map_err(|e| {
        use serde_json::error::Category;
        let kind = match e.classify() {
            Category::Io => FaultKind::Io,
            Category::Syntax => FaultKind::Syntax,
            Category::Data => FaultKind::Invalid,
            Category::Eof => FaultKind::Truncated,
        };
        let within = if c.json_offset >= 12 {
            format!(" (in the GLB JSON chunk at byte {})", c.json_offset)
        } else {
            String::new()
        };
        LoadError::new(
            file,
            Place::Line {
                line: e.line(),
                column: e.column(),
            },
            kind,
            format!("glTF JSON: {e}{within}"),
        )
    })?;
    for (i, ext) in root.extensions_required.iter().enumerate() {
        if !SUPPORTED_REQUIRED.contains(&ext.as_str()) {
            return Err(item_err(
                file,
                &format!("extensionsRequired[{i}]"),
                FaultKind::Unsupported,
                format!("required extension {ext:?} is not supported"),
            ));
        }
    }
    Ok(root)
}

/// Every buffer of the file, each cut to its `byteLength`.
pub(super) struct Buffers<'a> {
    store: Vec<Cow<'a, [u8]>>,
    /// (index into `store`, byte length) per glTF buffer.
    slots: Vec<(usize, usize)>,
    /// Bytes read from files other than the model file itself.
    pub external_bytes: u64,
}

impl Buffers<'_> {
    pub fn get(&self, buffer: usize) -> Option<&[u8]> {
        let &(s, len) = self.slots.get(buffer)?;
        self.store.get(s)?.get(..len)
    }

    pub fn len(&self) -> usize {
        self.slots.len()
    }
}

/// A URI that names a file next to the model: relative, no scheme. Percent
/// escapes are decoded.
pub(super) fn relative_file(file: &Path, item: &str, uri: &str) -> Result<PathBuf, LoadError> {
    let scheme = uri
        .find(':')
        .is_some_and(|c| !uri[..c].contains(['/', '?', '#']));
    if scheme || uri.starts_with('/') || uri.starts_with('\\') {
        return Err(item_err(
            file,
            item,
            FaultKind::Unsupported,
            format!("URI {uri:?}: only data URIs and relative file paths are supported"),
        ));
    }
    Ok(PathBuf::from(percent_decode(uri)))
}

/// Loads every buffer: the GLB's BIN chunk (buffer 0 without a URI), data
/// URIs and files relative to `base_dir`. Each source must hold at least
/// `byteLength` bytes; a file is read once, up to the largest `byteLength`
/// asked of it.
pub(super) fn load_buffers<'a>(
    file: &Path,
    root: &json::Root,
    bin: Option<&'a [u8]>,
    base_dir: Option<&Path>,
) -> Result<Buffers<'a>, LoadError> {
    let mut store: Vec<Cow<'a, [u8]>> = Vec::new();
    let mut slots = Vec::with_capacity(root.buffers.len());
    let mut external_bytes = 0u64;
    // First pass: which files are needed, and how much of each.
    let mut files: HashMap<PathBuf, (u64, String)> = HashMap::new();
    for (i, b) in root.buffers.iter().enumerate() {
        let Some(uri) = b.uri.as_deref() else {
            continue;
        };
        if uri.starts_with("data:") {
            continue;
        }
        let item = format!("buffers[{i}]");
        let rel = relative_file(file, &item, uri)?;
        let Some(dir) = base_dir else {
            return Err(item_err(
                file,
                &item,
                FaultKind::MissingReference,
                format!("external buffer {uri:?}, but no folder was given to find it in"),
            ));
        };
        let path = dir.join(rel);
        let e = files.entry(path).or_insert((0, item));
        e.0 = e.0.max(b.byte_length.0);
    }
    let mut file_slot: HashMap<PathBuf, usize> = HashMap::new();
    for (path, (need, item)) in files {
        let bytes = read_prefix(file, &item, &path, need)?;
        external_bytes += bytes.len() as u64;
        file_slot.insert(path, store.len());
        store.push(Cow::Owned(bytes));
    }
    let mut bin_slot = None;
    for (i, b) in root.buffers.iter().enumerate() {
        let item = format!("buffers[{i}]");
        let need = b.byte_length.0;
        let (slot, have) = match b.uri.as_deref() {
            None => {
                let Some(bin) = bin.filter(|_| i == 0) else {
                    return Err(item_err(
                        file,
                        &item,
                        FaultKind::MissingReference,
                        if bin.is_some() {
                            "buffer without a URI that is not buffers[0] (only buffers[0] may be the GLB BIN chunk)".into()
                        } else {
                            "buffer without a URI, and the file has no GLB BIN chunk".into()
                        },
                    ));
                };
                let s = *bin_slot.get_or_insert_with(|| {
                    store.push(Cow::Borrowed(bin));
                    store.len() - 1
                });
                (s, bin.len())
            }
            Some(uri) if uri.starts_with("data:") => {
                let (_, bytes) = decode_data_uri(file, &item, uri)?;
                let n = bytes.len();
                store.push(Cow::Owned(bytes));
                (store.len() - 1, n)
            }
            Some(uri) => {
                let rel = relative_file(file, &item, uri)?;
                let path = base_dir.map(|d| d.join(rel)).unwrap_or_default();
                let s = file_slot.get(&path).copied().ok_or_else(|| {
                    item_err(
                        file,
                        &item,
                        FaultKind::MissingReference,
                        format!("external buffer {uri:?} was not loaded"),
                    )
                })?;
                (s, store.get(s).map_or(0, |b| b.len()))
            }
        };
        if need > have as u64 {
            return Err(item_err(
                file,
                &item,
                FaultKind::Truncated,
                format!("byteLength is {need}, but its data has only {have} bytes"),
            ));
        }
        slots.push((slot, need as usize));
    }
    Ok(Buffers {
        store,
        slots,
        external_bytes,
    })
}

/// Reads the first `need` bytes of `path`, after checking the file is that long.
fn read_prefix(file: &Path, item: &str, path: &Path, need: u64) -> Result<Vec<u8>, LoadError> {
    let io = |e: std::io::Error| {
        let kind = if e.kind() == std::io::ErrorKind::NotFound {
            FaultKind::MissingReference
        } else {
            FaultKind::Io
        };
        item_err(file, item, kind, format!("{}: {e}", path.display()))
    };
    let f = std::fs::File::open(path).map_err(io)?;
    let have = f.metadata().map_err(io)?.len();
    if have < need {
        return Err(item_err(
            file,
            item,
            FaultKind::Truncated,
            format!(
                "{} has {have} bytes, but byteLength asks for {need}",
                path.display()
            ),
        ));
    }
    let mut bytes = Vec::with_capacity(need as usize);
    f.take(need).read_to_end(&mut bytes).map_err(io)?;
    if (bytes.len() as u64) < need {
        return Err(item_err(
            file,
            item,
            FaultKind::Truncated,
            format!(
                "{} ended after {} of {need} bytes",
                path.display(),
                bytes.len()
            ),
        ));
    }
    Ok(bytes)
}

/// `data:[<mime>][;base64],<data>` into (mime, bytes). Only base64 payloads.
pub(super) fn decode_data_uri(
    file: &Path,
    item: &str,
    uri: &str,
) -> Result<(String, Vec<u8>), LoadError> {
    let rest = uri.strip_prefix("data:").unwrap_or(uri);
    let Some((header, payload)) = rest.split_once(',') else {
        return Err(item_err(
            file,
            item,
            FaultKind::Syntax,
            "data URI without a ',' before its data".into(),
        ));
    };
    let Some(mime) = header.strip_suffix(";base64") else {
        return Err(item_err(
            file,
            item,
            FaultKind::Unsupported,
            "data URI that is not base64".into(),
        ));
    };
    let bytes = base64_decode(payload).ok_or_else(|| {
        item_err(
            file,
            item,
            FaultKind::Syntax,
            "data URI with invalid base64".into(),
        )
    })?;
    Ok((mime.to_string(), bytes))
}

/// Standard or URL-safe base64, padding optional. `None` on any other byte
/// or an impossible length. The output is at most 3/4 of the input.
pub(super) fn base64_decode(s: &str) -> Option<Vec<u8>> {
    let s = s.trim_end_matches('=').as_bytes();
    if s.len() % 4 == 1 {
        return None;
    }
    let mut out = Vec::with_capacity(s.len() / 4 * 3 + 2);
    let mut acc = 0u32;
    let mut bits = 0u32;
    for &c in s {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' | b'-' => 62,
            b'/' | b'_' => 63,
            _ => return None,
        };
        acc = (acc << 6) | v as u32;
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
            acc &= (1 << bits) - 1;
        }
    }
    Some(out)
}

/// `%XX` escapes decoded; anything malformed is kept as it is.
pub(super) fn percent_decode(s: &str) -> String {
    let b = s.as_bytes();
    let mut out = Vec::with_capacity(b.len());
    let mut i = 0;
    while i < b.len() {
        let hex = |c: u8| (c as char).to_digit(16);
        if b[i] == b'%' && i + 2 < b.len() {
            if let (Some(h), Some(l)) = (hex(b[i + 1]), hex(b[i + 2])) {
                out.push((h * 16 + l) as u8);
                i += 3;
                continue;
            }
        }
        out.push(b[i]);
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_round_trips_known_strings() {
        // RFC 4648 section 10 test vectors.
        for (plain, enc) in [
            ("", ""),
            ("f", "Zg=="),
            ("fo", "Zm8="),
            ("foo", "Zm9v"),
            ("foob", "Zm9vYg=="),
            ("fooba", "Zm9vYmE="),
            ("foobar", "Zm9vYmFy"),
        ] {
            assert_eq!(base64_decode(enc).as_deref(), Some(plain.as_bytes()));
        }
        assert_eq!(base64_decode("Z"), None);
        assert_eq!(base64_decode("Zm9v!"), None);
    }

    #[test]
    fn percent_escapes() {
        assert_eq!(percent_decode("a%20b.bin"), "a b.bin");
        assert_eq!(percent_decode("100%"), "100%");
        assert_eq!(percent_decode("%4"), "%4");
        assert_eq!(percent_decode("%zz"), "%zz");
    }

    #[test]
    fn uris_with_schemes_are_refused() {
        let f = Path::new("x.gltf");
        assert!(relative_file(f, "b", "http://example.com/a.bin").is_err());
        assert!(relative_file(f, "b", "/etc/passwd").is_err());
        assert!(relative_file(f, "b", "file:a.bin").is_err());
        assert!(relative_file(f, "b", "sub/a.bin").is_ok());
        assert!(relative_file(f, "b", "sub/a:b.bin").is_ok());
    }
}
