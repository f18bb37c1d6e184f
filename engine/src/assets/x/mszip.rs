//! MSZIP decompression of `tzip`/`bzip` files.
//!
//! Layout after the 16-byte header: a `u32` with the size of the whole
//! decompressed file *including* that header, then blocks, each a `u16`
//! uncompressed size, a `u16` compressed size (counting the signature), the
//! signature `CK`, and a raw deflate stream. Every block is a stream of its
//! own, but its back-references may reach into the output of the blocks
//! before it (up to the 32 KiB window), so all blocks inflate into one
//! buffer with the earlier output kept in front.
//!
//! All block headers are walked and checked (signature, sizes, the sum
//! against the declared size and the caller's limit) before anything is
//! allocated, so no size read from the file allocates more than the limit.

use std::path::Path;

use miniz_oxide::inflate::core::{decompress, inflate_flags, DecompressorOxide};
use miniz_oxide::inflate::TINFLStatus;

use super::super::{FaultKind, LoadError, Place};
use super::header::HEADER_LEN;

struct Block {
    /// Offset of the block header in the compressed file.
    at: usize,
    uncompressed: usize,
    /// The deflate stream, after `CK`.
    deflate: std::ops::Range<usize>,
}

/// Inflates `data` (the whole compressed file) into the header followed by
/// the decompressed payload. `limit` caps the decompressed size in bytes.
pub(crate) fn inflate(file: &Path, data: &[u8], limit: usize) -> Result<Vec<u8>, LoadError> {
    let err = |at: usize, kind, msg: String| {
        LoadError::new(file, Place::Byte(at as u64), kind, format!("MSZIP: {msg}"))
    };
    let size_at = HEADER_LEN;
    let Some(declared) = data.get(size_at..size_at + 4) else {
        return Err(err(
            data.len(),
            FaultKind::Truncated,
            "the file ends before the decompressed size".into(),
        ));
    };
    let declared =
        u32::from_le_bytes([declared[0], declared[1], declared[2], declared[3]]) as usize;
    if declared < HEADER_LEN {
        return Err(err(
            size_at,
            FaultKind::Invalid,
            format!("decompressed size {declared} is smaller than the {HEADER_LEN}-byte header it includes"),
        ));
    }
    if declared > limit {
        return Err(err(
            size_at,
            FaultKind::Count,
            format!("decompressed size {declared} is over the limit of {limit} bytes"),
        ));
    }

    let mut blocks = Vec::new();
    let mut total = HEADER_LEN;
    let mut p = size_at + 4;
    while p < data.len() {
        let Some(h) = data.get(p..p + 6) else {
            return Err(err(
                p,
                FaultKind::Truncated,
                format!(
                    "block {} header cut short by the end of the file",
                    blocks.len()
                ),
            ));
        };
        let uncompressed = usize::from(u16::from_le_bytes([h[0], h[1]]));
        let compressed = usize::from(u16::from_le_bytes([h[2], h[3]]));
        if &h[4..6] != b"CK" {
            return Err(err(
                p + 4,
                FaultKind::Invalid,
                format!("block {} has no \"CK\" signature", blocks.len()),
            ));
        }
        if compressed < 2 {
            return Err(err(
                p + 2,
                FaultKind::Invalid,
                format!(
                    "block {} compressed size {compressed} cannot hold its signature",
                    blocks.len()
                ),
            ));
        }
        let end = p + 4 + compressed;
        if end > data.len() {
            return Err(err(
                p + 2,
                FaultKind::Truncated,
                format!(
                    "block {} needs {compressed} bytes but the file ends {} bytes after its header",
                    blocks.len(),
                    data.len() - (p + 4)
                ),
            ));
        }
        total += uncompressed;
        if total > declared {
            return Err(err(
                p,
                FaultKind::Invalid,
                format!(
                    "blocks up to block {} hold {total} bytes, more than the declared {declared}",
                    blocks.len()
                ),
            ));
        }
        blocks.push(Block {
            at: p,
            uncompressed,
            deflate: p + 6..end,
        });
        p = end;
    }
    if total != declared {
        return Err(err(
            data.len(),
            FaultKind::Truncated,
            format!("the blocks hold {total} bytes, fewer than the declared {declared}"),
        ));
    }

    let mut out = vec![0u8; total];
    out[..HEADER_LEN].copy_from_slice(&data[..HEADER_LEN]);
    let mut pos = HEADER_LEN;
    let mut state = DecompressorOxide::new();
    for (i, b) in blocks.iter().enumerate() {
        state.init();
        let end = pos + b.uncompressed;
        let (status, _read, written) = decompress(
            &mut state,
            &data[b.deflate.clone()],
            &mut out[..end],
            pos,
            inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF,
        );
        match status {
            TINFLStatus::Done if written == b.uncompressed => {}
            TINFLStatus::Done => {
                return Err(err(
                    b.at,
                    FaultKind::Invalid,
                    format!(
                        "block {i} inflates to {written} bytes, not the {} its header declares",
                        b.uncompressed
                    ),
                ))
            }
            TINFLStatus::HasMoreOutput => {
                return Err(err(
                    b.at,
                    FaultKind::Invalid,
                    format!(
                        "block {i} inflates to more than the {} bytes its header declares",
                        b.uncompressed
                    ),
                ))
            }
            TINFLStatus::NeedsMoreInput | TINFLStatus::FailedCannotMakeProgress => {
                return Err(err(
                    b.at,
                    FaultKind::Truncated,
                    format!("block {i}: the deflate stream ends early"),
                ))
            }
            other => {
                return Err(err(
                    b.at,
                    FaultKind::Invalid,
                    format!("block {i}: corrupt deflate data ({other:?})"),
                ))
            }
        }
        pos = end;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use miniz_oxide::deflate::compress_to_vec;

    fn mszip(payload: &[u8], block: usize) -> Vec<u8> {
        let mut out = b"xof 0303bzip0032".to_vec();
        out.extend_from_slice(&((payload.len() + 16) as u32).to_le_bytes());
        for chunk in payload.chunks(block) {
            let c = compress_to_vec(chunk, 6);
            out.extend_from_slice(&(chunk.len() as u16).to_le_bytes());
            out.extend_from_slice(&((c.len() + 2) as u16).to_le_bytes());
            out.extend_from_slice(b"CK");
            out.extend_from_slice(&c);
        }
        out
    }

    #[test]
    fn round_trip_several_blocks() {
        let payload: Vec<u8> = (0..100_000u32).map(|i| (i * 7 % 251) as u8).collect();
        let z = mszip(&payload, 32768);
        let out = inflate(Path::new("t.x"), &z, 1 << 30).unwrap();
        assert_eq!(&out[16..], &payload[..]);
        assert_eq!(&out[..16], b"xof 0303bzip0032");
    }

    #[test]
    fn limits_and_corruption_are_errors() {
        let payload = vec![b'a'; 5000];
        let z = mszip(&payload, 32768);
        let e = inflate(Path::new("t.x"), &z, 1000).unwrap_err();
        assert_eq!(e.kind, FaultKind::Count);
        for cut in 16..z.len() {
            assert!(
                inflate(Path::new("t.x"), &z[..cut], 1 << 20).is_err(),
                "cut {cut}"
            );
        }
        let mut bad = z.clone();
        bad[24] = b'X';
        assert!(inflate(Path::new("t.x"), &bad, 1 << 20).is_err());
        // A block declaring fewer bytes than it inflates to.
        let mut short = z.clone();
        short[20] = 10;
        short[21] = 0;
        short[16] = 26;
        short[17] = 0;
        assert!(inflate(Path::new("t.x"), &short, 1 << 20).is_err());
    }
}
