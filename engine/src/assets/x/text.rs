//! Tokenizer for the text format (`txt`, and `tzip` once inflated).
//!
//! Works on bytes, not `str`: real files carry Latin-1 in comments and
//! strings. Tokens: words (names or numbers, told apart by their first
//! character), `"strings"` (no escapes, as in D3DX), `<UUID>`s, braces and
//! the separators `;` and `,`. Comments run from `//` or `#` to the end of
//! the line.

use super::super::{FaultKind, LoadError};
use super::source::Source;
use super::tree::{Lexer, Tok};

pub(crate) struct TextLexer<'a> {
    src: Source<'a>,
    pos: usize,
}

impl<'a> TextLexer<'a> {
    /// Starts after the 16-byte header.
    pub fn new(src: Source<'a>, start: usize) -> Self {
        Self { src, pos: start }
    }
}

#[inline]
fn ends_word(b: u8) -> bool {
    b.is_ascii_whitespace() || matches!(b, b'{' | b'}' | b';' | b',' | b'"' | b'<') || b == 0
}

impl<'a> Lexer<'a> for TextLexer<'a> {
    fn source(&self) -> &Source<'a> {
        &self.src
    }

    fn next(&mut self) -> Result<(Tok<'a>, u32), LoadError> {
        let data = self.src.data;
        let n = data.len();
        let mut p = self.pos;
        // Whitespace (NUL padding included) and comments.
        loop {
            while p < n && (data[p].is_ascii_whitespace() || data[p] == 0) {
                p += 1;
            }
            if p < n && (data[p] == b'#' || (data[p] == b'/' && data.get(p + 1) == Some(&b'/'))) {
                while p < n && data[p] != b'\n' {
                    p += 1;
                }
                continue;
            }
            break;
        }
        let at = p as u32;
        if p >= n {
            self.pos = p;
            return Ok((Tok::Eof, at));
        }
        let tok = match data[p] {
            b'{' => {
                p += 1;
                Tok::OpenBrace
            }
            b'}' => {
                p += 1;
                Tok::CloseBrace
            }
            b';' | b',' => {
                p += 1;
                Tok::Separator
            }
            b'"' => {
                let start = p + 1;
                let Some(len) = data[start..].iter().position(|&b| b == b'"') else {
                    return Err(self
                        .src
                        .err(at, FaultKind::Truncated, "a string is never closed"));
                };
                p = start + len + 1;
                Tok::Str(&data[start..start + len])
            }
            b'<' => {
                let Some(len) = data[p..].iter().position(|&b| b == b'>') else {
                    return Err(self
                        .src
                        .err(at, FaultKind::Truncated, "a UUID is never closed"));
                };
                p += len + 1;
                Tok::Uuid
            }
            first => {
                let start = p;
                while p < n && !ends_word(data[p]) {
                    // A comment right after a word ends it.
                    if data[p] == b'/' && data.get(p + 1) == Some(&b'/') {
                        break;
                    }
                    p += 1;
                }
                let word = &data[start..p];
                if first.is_ascii_digit() || matches!(first, b'-' | b'+' | b'.') {
                    Tok::Number(word)
                } else if word == b"template" {
                    Tok::Template
                } else {
                    Tok::Name(word)
                }
            }
        };
        self.pos = p;
        Ok((tok, at))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn toks(s: &str) -> Vec<Tok<'_>> {
        let src = Source {
            file: Path::new("t.x"),
            data: s.as_bytes(),
            text: true,
            decompressed: false,
        };
        let mut lx = TextLexer::new(src, 0);
        let mut v = Vec::new();
        loop {
            let (t, _) = lx.next().unwrap();
            if t == Tok::Eof {
                return v;
            }
            v.push(t);
        }
    }

    #[test]
    fn words_numbers_strings() {
        let t = toks("Frame Bip01 { // c\n 1.5;-2,\"a b\"; <AB-CD> # x\n{ Anim-1 } }");
        assert_eq!(
            t,
            vec![
                Tok::Name(b"Frame"),
                Tok::Name(b"Bip01"),
                Tok::OpenBrace,
                Tok::Number(b"1.5"),
                Tok::Separator,
                Tok::Number(b"-2"),
                Tok::Separator,
                Tok::Str(b"a b"),
                Tok::Separator,
                Tok::Uuid,
                Tok::OpenBrace,
                Tok::Name(b"Anim-1"),
                Tok::CloseBrace,
                Tok::CloseBrace,
            ]
        );
    }
}
