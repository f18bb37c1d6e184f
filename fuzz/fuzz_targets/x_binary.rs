//! The .x binary token reader, the MSZIP layer and the conversion. The
//! first byte picks how the rest is presented:
//! 0: a body after a `bin 0032` header; 1: after `bin 0064`;
//! 2: a body MSZIP-compressed here (so mutations reach the binary parser
//!    through real compression) behind a `bzip0032` header;
//! 3: a whole file as it is (headers and MSZIP framing mutated directly).
#![no_main]

use libfuzzer_sys::fuzz_target;
use miniz_oxide::deflate::compress_to_vec;
use vkskin::assets::x::{load_from_bytes_with_limits, Limits};
use vkskin::assets::LoadOptions;

fn mszip(body: &[u8]) -> Vec<u8> {
    let mut out = b"xof 0303bzip0032".to_vec();
    out.extend_from_slice(&((body.len() + 16) as u32).to_le_bytes());
    for chunk in body.chunks(32768) {
        let z = compress_to_vec(chunk, 1);
        out.extend_from_slice(&(chunk.len() as u16).to_le_bytes());
        out.extend_from_slice(&((z.len() + 2) as u16).to_le_bytes());
        out.extend_from_slice(b"CK");
        out.extend_from_slice(&z);
    }
    out
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, body)) = data.split_first() else {
        return;
    };
    let file = match mode % 4 {
        0 => [&b"xof 0303bin 0032"[..], body].concat(),
        1 => [&b"xof 0303bin 0064"[..], body].concat(),
        2 => mszip(body),
        _ => body.to_vec(),
    };
    let options = LoadOptions {
        max_influences: 1 + (usize::from(mode) / 4) % 8,
        ..LoadOptions::default()
    };
    let limits = Limits {
        max_decompressed: 64 << 20,
        max_depth: 256,
        max_clip_joints: 1 << 18,
    };
    let _ = load_from_bytes_with_limits("fuzz.x", &file, &options, &limits);
});
