//! The .x text parser and the conversion behind it. Input that does not
//! start with `xof ` gets a text header, so mutations spend their time on
//! the body; the input's length picks the load options, so both influence
//! limits and both rotation interpolations are exercised.
#![no_main]

use libfuzzer_sys::fuzz_target;
use vkskin::anim::Interpolation;
use vkskin::assets::x::{load_from_bytes_with_limits, Limits};
use vkskin::assets::LoadOptions;

fuzz_target!(|data: &[u8]| {
    let mut file;
    let bytes = if data.starts_with(b"xof ") {
        data
    } else {
        file = b"xof 0303txt 0032\n".to_vec();
        file.extend_from_slice(data);
        &file[..]
    };
    let options = LoadOptions {
        max_influences: 1 + data.len() % 8,
        x_rotation_interpolation: if data.len() % 2 == 0 {
            Interpolation::Squad
        } else {
            Interpolation::Linear
        },
    };
    let limits = Limits {
        max_decompressed: 64 << 20,
        max_depth: 256,
        max_clip_joints: 1 << 18,
    };
    let _ = load_from_bytes_with_limits("fuzz.x", bytes, &options, &limits);
});
