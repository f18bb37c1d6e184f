//! Byte-level helpers for the .x tests: a binary token walker, 32- to 64-bit
//! float conversion, MSZIP packing (stored deflate blocks) and text edits.
#![allow(dead_code)]

use std::path::PathBuf;

/// One binary token: offset of its id, the id, and its payload range.
#[derive(Clone, Debug)]
pub struct BinTok {
    pub at: usize,
    pub id: u16,
    pub payload: std::ops::Range<usize>,
}

fn u16_at(d: &[u8], p: usize) -> u16 {
    u16::from_le_bytes([d[p], d[p + 1]])
}

fn u32_at(d: &[u8], p: usize) -> u32 {
    u32::from_le_bytes([d[p], d[p + 1], d[p + 2], d[p + 3]])
}

/// Walks the tokens of a well-formed binary .x body (after the header).
pub fn bin_tokens(d: &[u8], float_size: usize) -> Vec<BinTok> {
    let mut out = Vec::new();
    let mut p = 16;
    while p < d.len() {
        let id = u16_at(d, p);
        let b = p + 2;
        let payload = match id {
            1 | 2 => b + 4..b + 4 + u32_at(d, b) as usize,
            3 => b..b + 4,
            5 => b..b + 16,
            6 => b + 4..b + 4 + 4 * u32_at(d, b) as usize,
            7 => b + 4..b + 4 + float_size * u32_at(d, b) as usize,
            _ => b..b,
        };
        let next = payload.end;
        out.push(BinTok { at: p, id, payload });
        p = next;
    }
    out
}

/// A 32-bit-float binary file rewritten with 64-bit floats.
pub fn to_f64(d: &[u8]) -> Vec<u8> {
    let mut out = d[..16].to_vec();
    out[12..16].copy_from_slice(b"0064");
    for t in bin_tokens(d, 4) {
        if t.id == 7 {
            out.extend_from_slice(&d[t.at..t.at + 6]);
            for c in d[t.payload.clone()].chunks_exact(4) {
                let f = f32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                out.extend_from_slice(&f64::from(f).to_le_bytes());
            }
        } else {
            out.extend_from_slice(&d[t.at..t.payload.end]);
        }
    }
    out
}

/// Packs an uncompressed .x file (header + body) as MSZIP with the given
/// compressed format (`b"tzip"` or `b"bzip"`), in stored deflate blocks.
pub fn mszip_stored(file: &[u8], format: &[u8; 4]) -> Vec<u8> {
    let mut out = file[..16].to_vec();
    out[8..12].copy_from_slice(format);
    out.extend_from_slice(&(file.len() as u32).to_le_bytes());
    for chunk in file[16..].chunks(32768) {
        let n = chunk.len() as u16;
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&(n + 2 + 5).to_le_bytes());
        out.extend_from_slice(b"CK");
        // A final stored block: BFINAL=1, BTYPE=00, then LEN and NLEN.
        out.push(1);
        out.extend_from_slice(&n.to_le_bytes());
        out.extend_from_slice(&(!n).to_le_bytes());
        out.extend_from_slice(chunk);
    }
    out
}

pub fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// `hay` with the first `from` replaced by `to`; panics if absent.
pub fn replace_first(hay: &[u8], from: &str, to: &str) -> Vec<u8> {
    let at = find(hay, from.as_bytes()).unwrap_or_else(|| panic!("{from:?} not found"));
    let mut out = hay[..at].to_vec();
    out.extend_from_slice(to.as_bytes());
    out.extend_from_slice(&hay[at + from.len()..]);
    out
}

/// 1-based line of a byte offset.
pub fn line_of(hay: &[u8], offset: usize) -> usize {
    hay[..offset].iter().filter(|&&b| b == b'\n').count() + 1
}

pub fn read(rel: &str) -> Option<(PathBuf, Vec<u8>)> {
    let p = vkskin_tests::asset(rel)?;
    let d = std::fs::read(&p).unwrap_or_else(|e| panic!("{}: {e}", p.display()));
    Some((p, d))
}
