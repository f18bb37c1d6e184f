//! Token reader for the binary format (`bin`, and `bzip` once inflated).
//!
//! Each token is a little-endian `u16` id, some with a payload:
//! `TOKEN_NAME` (1) and `TOKEN_STRING` (2): `u32` length and the bytes
//! (a string is then followed by a `;` or `,` token); `TOKEN_INTEGER` (3):
//! one `u32`; `TOKEN_GUID` (5): 16 bytes; `TOKEN_INTEGER_LIST` (6) and
//! `TOKEN_FLOAT_LIST` (7): `u32` count and that many `u32`s or floats (4 or
//! 8 bytes, from the header). Ids 10..=20 are punctuation (`{` `}` `(` `)`
//! `[` `]` `<` `>` `.` `,` `;`), 31 is `template` and 40..=52 the primitive
//! type keywords of template declarations.
//!
//! Every length is checked against the bytes left before a slice is taken,
//! so a count read from the file never allocates.

use super::super::{FaultKind, LoadError};
use super::source::Source;
use super::tree::{Lexer, Tok};

pub(crate) struct BinaryLexer<'a> {
    src: Source<'a>,
    pos: usize,
    float_size: usize,
}

impl<'a> BinaryLexer<'a> {
    pub fn new(src: Source<'a>, start: usize, float_size: usize) -> Self {
        Self {
            src,
            pos: start,
            float_size,
        }
    }

    fn u16_at(&self, p: usize) -> Option<u16> {
        let b = self.src.data.get(p..p + 2)?;
        Some(u16::from_le_bytes([b[0], b[1]]))
    }

    fn u32_at(&self, p: usize) -> Option<u32> {
        let b = self.src.data.get(p..p + 4)?;
        Some(u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
    }

    /// `count * size` bytes from `p`, or a truncation error naming `what`.
    fn payload(
        &self,
        at: u32,
        p: usize,
        count: u32,
        size: usize,
        what: &str,
    ) -> Result<&'a [u8], LoadError> {
        let data = self.src.data;
        let left = data.len().saturating_sub(p);
        let need = u64::from(count) * size as u64;
        if need > left as u64 {
            return Err(self.src.err(
                at,
                if need > (data.len() as u64) {
                    FaultKind::Count
                } else {
                    FaultKind::Truncated
                },
                format!("{what} of {count} needs {need} bytes but only {left} are left"),
            ));
        }
        Ok(&data[p..p + need as usize])
    }
}

impl<'a> Lexer<'a> for BinaryLexer<'a> {
    fn source(&self) -> &Source<'a> {
        &self.src
    }

    fn next(&mut self) -> Result<(Tok<'a>, u32), LoadError> {
        let data = self.src.data;
        let p = self.pos;
        let at = p as u32;
        if p >= data.len() {
            return Ok((Tok::Eof, at));
        }
        let Some(id) = self.u16_at(p) else {
            return Err(self
                .src
                .err(at, FaultKind::Truncated, "the file ends inside a token id"));
        };
        let body = p + 2;
        let count = |this: &Self, what: &str| {
            this.u32_at(body).ok_or_else(|| {
                this.src.err(
                    at,
                    FaultKind::Truncated,
                    format!("the file ends inside the length of a {what}"),
                )
            })
        };
        let (tok, next) = match id {
            1 | 2 => {
                let what = if id == 1 { "name" } else { "string" };
                let len = count(self, what)?;
                let bytes = self.payload(at, body + 4, len, 1, what)?;
                let tok = if id == 1 {
                    Tok::Name(bytes)
                } else {
                    Tok::Str(bytes.strip_suffix(&[0]).unwrap_or(bytes))
                };
                (tok, body + 4 + bytes.len())
            }
            3 => {
                let bytes = self.payload(at, body, 1, 4, "integer")?;
                (
                    Tok::Ints {
                        data: bytes,
                        at: body as u32,
                    },
                    body + 4,
                )
            }
            5 => {
                let bytes = self.payload(at, body, 1, 16, "GUID")?;
                (Tok::Uuid, body + bytes.len())
            }
            6 => {
                let n = count(self, "integer list")?;
                let bytes = self.payload(at, body + 4, n, 4, "integer list")?;
                (
                    Tok::Ints {
                        data: bytes,
                        at: (body + 4) as u32,
                    },
                    body + 4 + bytes.len(),
                )
            }
            7 => {
                let n = count(self, "float list")?;
                let size = self.float_size;
                let bytes = self.payload(at, body + 4, n, size, "float list")?;
                (
                    Tok::Floats {
                        data: bytes,
                        at: (body + 4) as u32,
                        size,
                    },
                    body + 4 + bytes.len(),
                )
            }
            10 => (Tok::OpenBrace, body),
            11 => (Tok::CloseBrace, body),
            19 | 20 => (Tok::Separator, body),
            31 => (Tok::Template, body),
            12..=18 | 40..=52 => (Tok::Other(keyword(id)), body),
            other => {
                return Err(self.src.err(
                    at,
                    FaultKind::Syntax,
                    format!("unknown binary token id {other}"),
                ))
            }
        };
        self.pos = next;
        Ok((tok, at))
    }
}

fn keyword(id: u16) -> &'static str {
    match id {
        12 => "'('",
        13 => "')'",
        14 => "'['",
        15 => "']'",
        16 => "'<'",
        17 => "'>'",
        18 => "'.'",
        40 => "WORD",
        41 => "DWORD",
        42 => "FLOAT",
        43 => "DOUBLE",
        44 => "CHAR",
        45 => "UCHAR",
        46 => "SWORD",
        47 => "SDWORD",
        48 => "VOID",
        49 => "STRING",
        50 => "UNICODE",
        51 => "CSTRING",
        _ => "ARRAY",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    #[test]
    fn lists_and_lengths() {
        let mut d = vec![0u8; 16];
        d.extend_from_slice(&1u16.to_le_bytes());
        d.extend_from_slice(&4u32.to_le_bytes());
        d.extend_from_slice(b"Mesh");
        d.extend_from_slice(&10u16.to_le_bytes());
        d.extend_from_slice(&6u16.to_le_bytes());
        d.extend_from_slice(&2u32.to_le_bytes());
        d.extend_from_slice(&7u32.to_le_bytes());
        d.extend_from_slice(&9u32.to_le_bytes());
        // A float list claiming 2^32-1 floats: an error, not an allocation.
        d.extend_from_slice(&7u16.to_le_bytes());
        d.extend_from_slice(&u32::MAX.to_le_bytes());
        let src = Source {
            file: Path::new("t.x"),
            data: &d,
            text: false,
            decompressed: false,
        };
        let mut lx = BinaryLexer::new(src, 16, 4);
        assert_eq!(lx.next().unwrap().0, Tok::Name(b"Mesh"));
        assert_eq!(lx.next().unwrap().0, Tok::OpenBrace);
        match lx.next().unwrap().0 {
            Tok::Ints { data, at } => {
                assert_eq!(data.len(), 8);
                assert_eq!(at, 16 + 10 + 2 + 6);
            }
            t => panic!("{t:?}"),
        }
        let e = lx.next().unwrap_err();
        assert_eq!(e.kind, FaultKind::Count);
    }
}
