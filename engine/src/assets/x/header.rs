//! The 16-byte `xof` header: magic, version, format and float size.

use std::path::Path;

use super::super::{FaultKind, LoadError, Place};

pub(crate) const HEADER_LEN: usize = 16;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Format {
    Text,
    Binary,
    /// MSZIP-compressed text (`tzip`).
    CompressedText,
    /// MSZIP-compressed binary (`bzip`).
    CompressedBinary,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Header {
    pub major: u8,
    pub minor: u8,
    pub format: Format,
    /// Bytes per binary float: 4 (`0032`) or 8 (`0064`).
    pub float_size: usize,
}

fn digits(b: &[u8]) -> Option<u32> {
    b.iter().try_fold(0u32, |acc, &c| {
        c.is_ascii_digit().then(|| acc * 10 + u32::from(c - b'0'))
    })
}

pub(crate) fn parse(file: &Path, data: &[u8]) -> Result<Header, LoadError> {
    let fail = |kind, msg: String| Err(LoadError::new(file, Place::Byte(0), kind, msg));
    if data.len() < HEADER_LEN {
        if !data.is_empty() && !b"xof ".starts_with(&data[..data.len().min(4)]) {
            return fail(
                FaultKind::Unsupported,
                "not a DirectX .x file (no \"xof \" magic)".into(),
            );
        }
        return fail(
            FaultKind::Truncated,
            format!(
                "the file has {} bytes, fewer than the {HEADER_LEN}-byte \"xof\" header",
                data.len()
            ),
        );
    }
    if &data[..4] != b"xof " {
        return fail(
            FaultKind::Unsupported,
            "not a DirectX .x file (no \"xof \" magic)".into(),
        );
    }
    let (Some(major), Some(minor)) = (digits(&data[4..6]), digits(&data[6..8])) else {
        return fail(
            FaultKind::Invalid,
            format!(
                "version {:?} is not four digits",
                String::from_utf8_lossy(&data[4..8])
            ),
        );
    };
    if major != 3 {
        return fail(
            FaultKind::Unsupported,
            format!("version {major:02}{minor:02}: only major version 03 exists"),
        );
    }
    let format = match &data[8..12] {
        b"txt " => Format::Text,
        b"bin " => Format::Binary,
        b"tzip" => Format::CompressedText,
        b"bzip" => Format::CompressedBinary,
        other => {
            return fail(
                FaultKind::Unsupported,
                format!(
                    "format {:?} (expected \"txt \", \"bin \", \"tzip\" or \"bzip\")",
                    String::from_utf8_lossy(other)
                ),
            )
        }
    };
    let float_size = match &data[12..16] {
        b"0032" => 4,
        b"0064" => 8,
        other => {
            return fail(
                FaultKind::Unsupported,
                format!(
                    "float size {:?} (expected \"0032\" or \"0064\")",
                    String::from_utf8_lossy(other)
                ),
            )
        }
    };
    Ok(Header {
        major: major as u8,
        minor: minor as u8,
        format,
        float_size,
    })
}
