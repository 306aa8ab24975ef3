//! A minimal strict JSON reader (RFC 8259) and a few writing helpers.
//! Numbers keep their double value and, when the value is an integer, that integer (by value:
//! `2`, `2.0`, `2e0` are all the integer 2, as docs/conformance.md "JSON numbers" asks).

use std::fmt::Write as _;

#[derive(Clone, Debug)]
pub enum V {
    Null,
    Bool(bool),
    Num { f: f64, int: Option<i128> },
    Str(String),
    Arr(Vec<V>),
    Obj(Vec<(String, V)>),
}

impl V {
    pub fn key(&self, k: &str) -> Option<&V> {
        if let V::Obj(m) = self {
            m.iter().find(|(a, _)| a == k).map(|(_, v)| v)
        } else {
            None
        }
    }
    pub fn int(&self) -> Option<i128> {
        if let V::Num { int, .. } = self {
            *int
        } else {
            None
        }
    }
    pub fn num(&self) -> Option<f64> {
        if let V::Num { f, .. } = self {
            Some(*f)
        } else {
            None
        }
    }
    pub fn short(&self) -> String {
        let s = match self {
            V::Null => "null".to_string(),
            V::Bool(b) => b.to_string(),
            V::Num { f, int: Some(i) } if f.is_finite() => i.to_string(),
            V::Num { f, .. } => format!("{f:?}"),
            V::Str(s) => format!("{s:?}"),
            V::Arr(a) => format!("an array of {}", a.len()),
            V::Obj(_) => "an object".to_string(),
        };
        if s.len() > 60 {
            format!("{}...", &s[..s.char_indices().take(57).last().map(|(i, c)| i + c.len_utf8()).unwrap_or(0)])
        } else {
            s
        }
    }
}

pub fn parse(s: &str) -> Result<V, String> {
    let mut r = Reader { b: s.as_bytes(), i: 0 };
    r.ws();
    let v = r.value(0)?;
    r.ws();
    if r.i != r.b.len() {
        return Err(format!("trailing text at byte {}", r.i));
    }
    Ok(v)
}

struct Reader<'a> {
    b: &'a [u8],
    i: usize,
}

impl Reader<'_> {
    fn ws(&mut self) {
        while matches!(self.b.get(self.i), Some(b' ' | b'\t' | b'\r' | b'\n')) {
            self.i += 1;
        }
    }
    fn fail<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.i))
    }
    fn lit(&mut self, word: &str, v: V) -> Result<V, String> {
        if self.b[self.i..].starts_with(word.as_bytes()) {
            self.i += word.len();
            Ok(v)
        } else {
            self.fail("bad literal")
        }
    }
    fn value(&mut self, depth: usize) -> Result<V, String> {
        if depth > 100 {
            return self.fail("nesting too deep");
        }
        match self.b.get(self.i) {
            Some(b'{') => {
                self.i += 1;
                let mut m: Vec<(String, V)> = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(V::Obj(m));
                }
                loop {
                    self.ws();
                    if self.b.get(self.i) != Some(&b'"') {
                        return self.fail("expected a string key");
                    }
                    let k = self.string()?;
                    if m.iter().any(|(a, _)| *a == k) {
                        return Err(format!("duplicate key {k:?}"));
                    }
                    self.ws();
                    if self.b.get(self.i) != Some(&b':') {
                        return self.fail("expected ':'");
                    }
                    self.i += 1;
                    self.ws();
                    let v = self.value(depth + 1)?;
                    m.push((k, v));
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b'}') => {
                            self.i += 1;
                            return Ok(V::Obj(m));
                        }
                        _ => return self.fail("expected ',' or '}'"),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(V::Arr(a));
                }
                loop {
                    self.ws();
                    a.push(self.value(depth + 1)?);
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(V::Arr(a));
                        }
                        _ => return self.fail("expected ',' or ']'"),
                    }
                }
            }
            Some(b'"') => Ok(V::Str(self.string()?)),
            Some(b't') => self.lit("true", V::Bool(true)),
            Some(b'f') => self.lit("false", V::Bool(false)),
            Some(b'n') => self.lit("null", V::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            None => self.fail("unexpected end"),
            _ => self.fail("unexpected character"),
        }
    }
    fn hex(&mut self) -> Result<u32, String> {
        let h = self.b.get(self.i..self.i + 4).ok_or("short \\u escape")?;
        let h = std::str::from_utf8(h).map_err(|_| "bad \\u escape")?;
        let v = u32::from_str_radix(h, 16).map_err(|_| "bad \\u escape")?;
        if !h.bytes().all(|c| c.is_ascii_hexdigit()) {
            return self.fail("bad \\u escape");
        }
        self.i += 4;
        Ok(v)
    }
    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut s = String::new();
        loop {
            let start = self.i;
            while let Some(&c) = self.b.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            s.push_str(std::str::from_utf8(&self.b[start..self.i]).map_err(|_| "bad utf-8")?);
            match self.b.get(self.i) {
                Some(b'"') => {
                    self.i += 1;
                    return Ok(s);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let e = *self.b.get(self.i).ok_or("unterminated string")?;
                    self.i += 1;
                    match e {
                        b'"' => s.push('"'),
                        b'\\' => s.push('\\'),
                        b'/' => s.push('/'),
                        b'b' => s.push('\u{8}'),
                        b'f' => s.push('\u{c}'),
                        b'n' => s.push('\n'),
                        b'r' => s.push('\r'),
                        b't' => s.push('\t'),
                        b'u' => {
                            let hi = self.hex()?;
                            let cp = if (0xD800..0xDC00).contains(&hi) {
                                if !self.b[self.i..].starts_with(b"\\u") {
                                    return self.fail("lone surrogate");
                                }
                                self.i += 2;
                                let lo = self.hex()?;
                                if !(0xDC00..0xE000).contains(&lo) {
                                    return self.fail("lone surrogate");
                                }
                                0x10000 + ((hi - 0xD800) << 10) + (lo - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&hi) {
                                return self.fail("lone surrogate");
                            } else {
                                hi
                            };
                            s.push(char::from_u32(cp).ok_or("bad code point")?);
                        }
                        _ => return self.fail("bad escape"),
                    }
                }
                Some(_) => return self.fail("control character in string"),
                None => return self.fail("unterminated string"),
            }
        }
    }
    fn digits(&mut self) -> usize {
        let s = self.i;
        while matches!(self.b.get(self.i), Some(b'0'..=b'9')) {
            self.i += 1;
        }
        self.i - s
    }
    fn number(&mut self) -> Result<V, String> {
        let s = self.i;
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        let lead = self.i;
        let n = self.digits();
        if n == 0 || (n > 1 && self.b[lead] == b'0') {
            return self.fail("bad number");
        }
        let mut plain = true;
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            plain = false;
            if self.digits() == 0 {
                return self.fail("bad number");
            }
        }
        if matches!(self.b.get(self.i), Some(b'e' | b'E')) {
            self.i += 1;
            plain = false;
            if matches!(self.b.get(self.i), Some(b'+' | b'-')) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return self.fail("bad number");
            }
        }
        let text = std::str::from_utf8(&self.b[s..self.i]).unwrap();
        let f: f64 = text.parse().map_err(|_| "bad number".to_string())?;
        let int = if plain {
            text.parse::<i128>().ok()
        } else if f.is_finite() && f.fract() == 0.0 && f.abs() < 1e38 {
            Some(f as i128)
        } else {
            None
        };
        Ok(V::Num { f, int })
    }
}

/// A double as JSON: Rust's shortest round-trip text (`{:?}`), valid JSON for finite values.
pub fn put_f(out: &mut String, x: f64) {
    let _ = write!(out, "{x:?}");
}

pub fn put_str(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}
