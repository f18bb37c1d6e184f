//! The encodings GPU animation writes: each path encoding's name, the
//! `ENCODING` define of `animate.comp` that writes its rows (exactly as
//! `anim/palette/rows.rs` does) and its vec4s per bone. A new encoding is
//! a line here and its branch in the shader.

/// (encoding name, `ENCODING` define, vec4s per bone).
const ENCODERS: &[(&str, u32, usize)] = &[
    ("4x3", 0, 3),
    ("qt", 1, 2),
    ("dq", 2, 2),
    ("dq-scale", 3, 5),
];

/// The `ENCODING` define and vec4s per bone of the encoding named `name`,
/// `None` when GPU animation cannot write it.
pub(crate) fn encoder(name: &str) -> Option<(u32, usize)> {
    ENCODERS
        .iter()
        .find(|(n, _, _)| *n == name)
        .map(|&(_, e, r)| (e, r))
}

/// vec4s per bone GPU animation writes for the encoding named `name`.
pub fn gpu_encoder_rows(name: &str) -> Option<usize> {
    encoder(name).map(|(_, r)| r)
}
