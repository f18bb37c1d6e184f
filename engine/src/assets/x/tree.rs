//! The generic .x object tree, built from either tokenizer.
//!
//! Data objects are read without their templates: every member value is
//! flattened, in order, into one list of numbers and strings (the text
//! format's `;` and `,` separators carry no information once the template is
//! known, and the binary format stores numbers as lists anyway). Nested data
//! objects and references (`{ Name }`) are kept as children. The conversion
//! to a model then reads each object's values knowing its template.

use super::super::{FaultKind, LoadError};
use super::source::Source;

/// One member value of a data object.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Value {
    Int(i64),
    Float(f64),
    Str(Box<str>),
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) struct Object {
    /// The template name: `Frame`, `Mesh`, ...
    pub kind: String,
    pub name: Option<String>,
    /// Byte offset of the template name.
    pub at: u32,
    /// Byte offset of the closing brace.
    pub end: u32,
    pub values: Vec<Value>,
    /// Byte offset of each value.
    pub offsets: Vec<u32>,
    pub children: Vec<Node>,
}

impl Object {
    /// `Frame "Bip01"`, or just `Frame` when unnamed: for messages.
    pub fn label(&self) -> String {
        match &self.name {
            Some(n) => format!("{} {n:?}", self.kind),
            None => self.kind.clone(),
        }
    }

    pub fn objects(&self) -> impl Iterator<Item = &Object> {
        self.children.iter().filter_map(|c| match c {
            Node::Object(o) => Some(o),
            Node::Ref { .. } => None,
        })
    }

    pub fn child(&self, kind: &str) -> Option<&Object> {
        self.objects().find(|o| o.kind == kind)
    }
}

#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Node {
    Object(Object),
    /// A data reference `{ Name }` (a reference by UUID only has no name).
    Ref {
        name: Option<String>,
        at: u32,
    },
}

/// A token as the tree builder sees it, from either tokenizer.
#[derive(Clone, Copy, Debug, PartialEq)]
pub(crate) enum Tok<'a> {
    /// An identifier: a template or object name (text), `TOKEN_NAME` (binary).
    Name(&'a [u8]),
    /// Text only: a bare word that starts like a number.
    Number(&'a [u8]),
    Str(&'a [u8]),
    /// Binary `TOKEN_INTEGER`/`TOKEN_INTEGER_LIST`: little-endian `u32`s
    /// starting at byte offset `at`.
    Ints {
        data: &'a [u8],
        at: u32,
    },
    /// Binary `TOKEN_FLOAT_LIST`: little-endian floats of `size` bytes.
    Floats {
        data: &'a [u8],
        at: u32,
        size: usize,
    },
    OpenBrace,
    CloseBrace,
    /// A `<UUID>` (text) or `TOKEN_GUID` (binary): ignored.
    Uuid,
    /// `;` or `,`: ignored once the data is flattened.
    Separator,
    /// The `template` keyword.
    Template,
    /// Anything else that is only valid inside a template (binary keyword
    /// and punctuation tokens), with a printable name.
    Other(&'static str),
    Eof,
}

/// A tokenizer: returns each token with the byte offset where it starts.
pub(crate) trait Lexer<'a> {
    fn next(&mut self) -> Result<(Tok<'a>, u32), LoadError>;
    fn source(&self) -> &Source<'a>;
}

pub(crate) struct Builder<'a, L: Lexer<'a>> {
    lexer: L,
    max_depth: usize,
    _data: std::marker::PhantomData<&'a [u8]>,
}

fn name_of(raw: &[u8]) -> String {
    String::from_utf8_lossy(raw).into_owned()
}

/// Parses a number word of the text format: an integer when it is only
/// digits (with an optional sign), a float otherwise. MSVC's spellings of
/// NaN and infinity (`1.#QNAN0`, `-1.#IND00`, `1.#INF00`) and anything else
/// not finite are [`FaultKind::NonFinite`].
pub(crate) fn parse_number(raw: &[u8]) -> Result<Value, (FaultKind, String)> {
    let show = || String::from_utf8_lossy(raw).into_owned();
    let digits = raw
        .strip_prefix(b"-")
        .or_else(|| raw.strip_prefix(b"+"))
        .unwrap_or(raw);
    if !digits.is_empty() && digits.len() <= 18 && digits.iter().all(u8::is_ascii_digit) {
        let mut v: i64 = 0;
        for &d in digits {
            v = v * 10 + i64::from(d - b'0');
        }
        return Ok(Value::Int(if raw[0] == b'-' { -v } else { v }));
    }
    if raw.contains(&b'#') {
        return Err((
            FaultKind::NonFinite,
            format!("{:?} is not a finite number", show()),
        ));
    }
    let parsed = std::str::from_utf8(raw)
        .ok()
        .and_then(|s| s.parse::<f64>().ok());
    match parsed {
        Some(v) if v.is_finite() => Ok(Value::Float(v)),
        Some(_) => Err((
            FaultKind::NonFinite,
            format!("{:?} is not a finite number", show()),
        )),
        None => Err((FaultKind::Syntax, format!("{:?} is not a number", show()))),
    }
}

impl<'a, L: Lexer<'a>> Builder<'a, L> {
    pub fn new(lexer: L, max_depth: usize) -> Self {
        Self {
            lexer,
            max_depth,
            _data: std::marker::PhantomData,
        }
    }

    fn err(&self, at: u32, kind: FaultKind, msg: impl Into<String>) -> LoadError {
        self.lexer.source().err(at, kind, msg)
    }

    /// Reads the whole file: top-level data objects, templates skipped.
    pub fn document(mut self) -> Result<Vec<Node>, LoadError> {
        let mut top = Vec::new();
        loop {
            let (tok, at) = self.lexer.next()?;
            match tok {
                Tok::Eof => return Ok(top),
                Tok::Separator => {}
                Tok::Template => self.skip_template(at)?,
                Tok::Name(b"template") => self.skip_template(at)?,
                Tok::Name(kind) => top.push(Node::Object(self.object(kind, at, 1)?)),
                other => {
                    return Err(self.err(
                        at,
                        FaultKind::Syntax,
                        format!(
                            "expected a data object or template, found {}",
                            describe(&other)
                        ),
                    ))
                }
            }
        }
    }

    /// Skips a template declaration up to its matching closing brace.
    fn skip_template(&mut self, start: u32) -> Result<(), LoadError> {
        let mut depth = 0usize;
        loop {
            let (tok, at) = self.lexer.next()?;
            match tok {
                Tok::OpenBrace => depth += 1,
                Tok::CloseBrace if depth <= 1 => {
                    if depth == 0 {
                        return Err(self.err(
                            at,
                            FaultKind::Syntax,
                            "'}' before the template's '{'",
                        ));
                    }
                    return Ok(());
                }
                Tok::CloseBrace => depth -= 1,
                Tok::Eof => {
                    return Err(self.err(
                        at,
                        FaultKind::Truncated,
                        format!(
                            "the file ends inside the template that starts at {}",
                            place_text(self.lexer.source(), start)
                        ),
                    ))
                }
                _ => {}
            }
            if depth > self.max_depth {
                return Err(self.err(at, FaultKind::Invalid, "braces in a template nest too deep"));
            }
        }
    }

    fn object(&mut self, kind: &[u8], at: u32, depth: usize) -> Result<Object, LoadError> {
        let kind_name = name_of(kind);
        if depth > self.max_depth {
            return Err(self.err(
                at,
                FaultKind::Invalid,
                format!(
                    "{kind_name} is nested {depth} objects deep, more than the limit of {}",
                    self.max_depth
                ),
            ));
        }
        let mut name = None;
        loop {
            let (tok, tat) = self.lexer.next()?;
            match tok {
                Tok::OpenBrace => break,
                Tok::Uuid => {}
                Tok::Name(n) | Tok::Number(n) if name.is_none() => {
                    if !n.is_empty() {
                        name = Some(name_of(n));
                    }
                }
                Tok::Eof => {
                    return Err(self.err(
                        tat,
                        FaultKind::Truncated,
                        format!("the file ends after the object header {kind_name}"),
                    ))
                }
                other => {
                    return Err(self.err(
                        tat,
                        FaultKind::Syntax,
                        format!(
                            "expected '{{' after {kind_name}, found {}",
                            describe(&other)
                        ),
                    ))
                }
            }
        }
        let mut obj = Object {
            kind: kind_name,
            name,
            at,
            end: at,
            values: Vec::new(),
            offsets: Vec::new(),
            children: Vec::new(),
        };
        loop {
            let (tok, tat) = self.lexer.next()?;
            match tok {
                Tok::CloseBrace => {
                    obj.end = tat;
                    return Ok(obj);
                }
                Tok::Separator | Tok::Uuid => {}
                Tok::Number(raw) => {
                    let v = parse_number(raw).map_err(|(k, m)| {
                        let at_end = tat as usize + raw.len() >= self.lexer.source().data.len();
                        if at_end {
                            self.err(tat, FaultKind::Truncated, "the file ends inside a number")
                        } else {
                            self.err(tat, k, format!("in {}: {m}", obj.label()))
                        }
                    })?;
                    obj.values.push(v);
                    obj.offsets.push(tat);
                }
                Tok::Str(s) => {
                    obj.values.push(Value::Str(name_of(s).into_boxed_str()));
                    obj.offsets.push(tat);
                }
                Tok::Ints { data, at } => {
                    obj.values.reserve(data.len() / 4);
                    obj.offsets.reserve(data.len() / 4);
                    for (i, c) in data.chunks_exact(4).enumerate() {
                        let v = u32::from_le_bytes([c[0], c[1], c[2], c[3]]);
                        obj.values.push(Value::Int(i64::from(v)));
                        obj.offsets.push(at + 4 * i as u32);
                    }
                }
                Tok::Floats { data, at, size } => {
                    obj.values.reserve(data.len() / size);
                    obj.offsets.reserve(data.len() / size);
                    for (i, c) in data.chunks_exact(size).enumerate() {
                        let v = if size == 8 {
                            f64::from_le_bytes([c[0], c[1], c[2], c[3], c[4], c[5], c[6], c[7]])
                        } else {
                            f64::from(f32::from_le_bytes([c[0], c[1], c[2], c[3]]))
                        };
                        // Binary floats are checked where they are used, so
                        // that the message can say what the number is.
                        obj.values.push(Value::Float(v));
                        obj.offsets.push(at + (size * i) as u32);
                    }
                }
                Tok::OpenBrace => {
                    let node = self.reference(tat)?;
                    obj.children.push(node);
                }
                Tok::Name(n) if is_non_finite_word(n) => {
                    return Err(self.err(
                        tat,
                        FaultKind::NonFinite,
                        format!(
                            "in {}: {:?} is not a finite number",
                            obj.label(),
                            String::from_utf8_lossy(n)
                        ),
                    ))
                }
                Tok::Name(b"template") | Tok::Template => {
                    return Err(self.err(
                        tat,
                        FaultKind::Syntax,
                        format!("a template inside {}", obj.label()),
                    ))
                }
                Tok::Name(n) => {
                    let child = self.object(n, tat, depth + 1)?;
                    obj.children.push(Node::Object(child));
                }
                Tok::Eof => {
                    return Err(self.err(
                        tat,
                        FaultKind::Truncated,
                        format!(
                            "the file ends inside {} (opened at {})",
                            obj.label(),
                            place_text(self.lexer.source(), obj.at)
                        ),
                    ))
                }
                Tok::Other(what) => {
                    return Err(self.err(
                        tat,
                        FaultKind::Syntax,
                        format!("unexpected {what} in the data of {}", obj.label()),
                    ))
                }
            }
        }
    }

    /// After `{` inside data: `Name }`, `Name <uuid> }` or `<uuid> }`.
    fn reference(&mut self, open: u32) -> Result<Node, LoadError> {
        let mut name = None;
        loop {
            let (tok, at) = self.lexer.next()?;
            match tok {
                Tok::CloseBrace => return Ok(Node::Ref { name, at: open }),
                Tok::Uuid => {}
                Tok::Name(n) | Tok::Number(n) if name.is_none() => name = Some(name_of(n)),
                Tok::Eof => {
                    return Err(self.err(
                        at,
                        FaultKind::Truncated,
                        "the file ends inside a reference",
                    ))
                }
                other => {
                    return Err(self.err(
                        at,
                        FaultKind::Syntax,
                        format!(
                            "expected '}}' to close a reference, found {}",
                            describe(&other)
                        ),
                    ))
                }
            }
        }
    }
}

fn is_non_finite_word(n: &[u8]) -> bool {
    let lower = n.to_ascii_lowercase();
    matches!(
        &lower[..],
        b"nan" | b"inf" | b"infinity" | b"qnan" | b"snan"
    )
}

fn place_text(src: &Source<'_>, at: u32) -> String {
    let p = src.place(at).to_string();
    p.trim_end_matches(": ").to_string()
}

fn describe(t: &Tok<'_>) -> String {
    match t {
        Tok::Name(n) => format!("name {:?}", String::from_utf8_lossy(n)),
        Tok::Number(n) => format!("number {:?}", String::from_utf8_lossy(n)),
        Tok::Str(s) => format!("string {:?}", String::from_utf8_lossy(s)),
        Tok::Ints { .. } => "integers".into(),
        Tok::Floats { .. } => "floats".into(),
        Tok::OpenBrace => "'{'".into(),
        Tok::CloseBrace => "'}'".into(),
        Tok::Uuid => "a UUID".into(),
        Tok::Separator => "a separator".into(),
        Tok::Template => "'template'".into(),
        Tok::Other(w) => (*w).into(),
        Tok::Eof => "the end of the file".into(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers() {
        assert_eq!(parse_number(b"42"), Ok(Value::Int(42)));
        assert_eq!(parse_number(b"-7"), Ok(Value::Int(-7)));
        assert_eq!(parse_number(b"3033535400"), Ok(Value::Int(3033535400)));
        assert_eq!(parse_number(b"1.5"), Ok(Value::Float(1.5)));
        assert_eq!(parse_number(b"-2e-3"), Ok(Value::Float(-2e-3)));
        assert_eq!(
            parse_number(b"1.#QNAN0").unwrap_err().0,
            FaultKind::NonFinite
        );
        assert_eq!(
            parse_number(b"-1.#IND00").unwrap_err().0,
            FaultKind::NonFinite
        );
        assert_eq!(parse_number(b"1e999").unwrap_err().0, FaultKind::NonFinite);
        assert_eq!(parse_number(b"-inf").unwrap_err().0, FaultKind::NonFinite);
        assert_eq!(parse_number(b"1.2.3").unwrap_err().0, FaultKind::Syntax);
        assert_eq!(parse_number(b"-").unwrap_err().0, FaultKind::Syntax);
    }
}
