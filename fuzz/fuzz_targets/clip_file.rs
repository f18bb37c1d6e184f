//! The clip file reader (`vkskin::anim::ClipFile`). The first byte picks
//! how the rest is presented: 0, the bytes as a whole file (header,
//! checksum and all); 1, the bytes as a body behind a valid header with
//! its checksum recomputed, so mutations reach the parser's own checks.
//! A file that loads is sampled, to check that what validation let
//! through is safe to read.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vkskin::anim::{ClipFile, PlaybackMode, SamplingContext, SamplingJob, Transform};

fn fnv1a(bytes: &[u8]) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h
}

fuzz_target!(|data: &[u8]| {
    let Some((&mode, rest)) = data.split_first() else {
        return;
    };
    let bytes = if mode & 1 == 0 {
        rest.to_vec()
    } else {
        let mut f = b"VKSCLIP\0".to_vec();
        f.extend_from_slice(&ClipFile::VERSION.to_le_bytes());
        f.extend_from_slice(&(rest.len() as u64).to_le_bytes());
        f.extend_from_slice(&fnv1a(rest).to_le_bytes());
        f.extend_from_slice(rest);
        f
    };
    let Ok(file) = ClipFile::from_bytes("fuzz.vkclip", &bytes) else {
        return;
    };
    for clip in &file.clips {
        let mut out = vec![Transform::IDENTITY; clip.joint_count()];
        let mut ctx = SamplingContext::new(clip);
        for k in 0..8 {
            let _ = SamplingJob {
                clip,
                context: &mut ctx,
                time: k as f32 * 0.37 - 0.5,
                mode: PlaybackMode::Loop,
                output: &mut out,
            }
            .run();
        }
    }
});
