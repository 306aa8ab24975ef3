//! A small strict JSON reader (RFC 8259) and a few writing helpers. Numbers are kept as the nearest
//! double and read by value: `16`, `16.0` and `1.6e1` are the integer 16.

#[derive(Clone, Debug)]
pub enum Json {
    Null,
    Bool(bool),
    Num(f64),
    Str(String),
    Arr(Vec<Json>),
    Obj(Vec<(String, Json)>),
}

/// Largest integer a double reads exactly, and the protocol's range.
pub const MAX_SAFE: f64 = 9_007_199_254_740_991.0;

impl Json {
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Obj(m) => m.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }
    /// An integer by value within +-(2^53 - 1).
    pub fn as_int(&self) -> Option<i64> {
        match self {
            Json::Num(v) if v.is_finite() && v.fract() == 0.0 && v.abs() <= MAX_SAFE => Some(*v as i64),
            _ => None,
        }
    }
    pub fn describe(&self) -> String {
        let s = match self {
            Json::Null => "null".to_string(),
            Json::Bool(b) => b.to_string(),
            Json::Num(v) => format!("{v:?}"),
            Json::Str(s) => format!("{s:?}"),
            Json::Arr(a) => format!("an array of {}", a.len()),
            Json::Obj(_) => "an object".to_string(),
        };
        if s.len() > 60 {
            format!("{}...", &s[..s.char_indices().take(57).last().map(|(i, c)| i + c.len_utf8()).unwrap_or(0)])
        } else {
            s
        }
    }
}

pub fn describe_opt(v: Option<&Json>) -> String {
    v.map(|v| v.describe()).unwrap_or_else(|| "nothing".to_string())
}

const MAX_DEPTH: usize = 128;

pub fn parse(text: &str) -> Result<Json, String> {
    let mut p = P { b: text.as_bytes(), i: 0 };
    p.ws();
    let v = p.value(0)?;
    p.ws();
    if p.i != p.b.len() {
        return Err(format!("unexpected text after the value at byte {}", p.i));
    }
    Ok(v)
}

struct P<'a> {
    b: &'a [u8],
    i: usize,
}

impl P<'_> {
    fn ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.b.get(self.i) {
            self.i += 1;
        }
    }
    fn err<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.i))
    }
    fn lit(&mut self, s: &str, v: Json) -> Result<Json, String> {
        if self.b[self.i..].starts_with(s.as_bytes()) {
            self.i += s.len();
            Ok(v)
        } else {
            self.err("invalid literal")
        }
    }
    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return self.err("nesting too deep");
        }
        match self.b.get(self.i) {
            None => self.err("unexpected end"),
            Some(b'{') => {
                self.i += 1;
                let mut m: Vec<(String, Json)> = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b'}') {
                    self.i += 1;
                    return Ok(Json::Obj(m));
                }
                loop {
                    self.ws();
                    if self.b.get(self.i) != Some(&b'"') {
                        return self.err("expected a key");
                    }
                    let k = self.string()?;
                    if m.iter().any(|(x, _)| *x == k) {
                        return Err(format!("duplicate key {k:?}"));
                    }
                    self.ws();
                    if self.b.get(self.i) != Some(&b':') {
                        return self.err("expected ':'");
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
                            return Ok(Json::Obj(m));
                        }
                        _ => return self.err("expected ',' or '}'"),
                    }
                }
            }
            Some(b'[') => {
                self.i += 1;
                let mut a = Vec::new();
                self.ws();
                if self.b.get(self.i) == Some(&b']') {
                    self.i += 1;
                    return Ok(Json::Arr(a));
                }
                loop {
                    self.ws();
                    a.push(self.value(depth + 1)?);
                    self.ws();
                    match self.b.get(self.i) {
                        Some(b',') => self.i += 1,
                        Some(b']') => {
                            self.i += 1;
                            return Ok(Json::Arr(a));
                        }
                        _ => return self.err("expected ',' or ']'"),
                    }
                }
            }
            Some(b'"') => Ok(Json::Str(self.string()?)),
            Some(b't') => self.lit("true", Json::Bool(true)),
            Some(b'f') => self.lit("false", Json::Bool(false)),
            Some(b'n') => self.lit("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => self.err("unexpected character"),
        }
    }
    fn hex4(&mut self) -> Result<u32, String> {
        let d = self.b.get(self.i..self.i + 4).ok_or("truncated \\u escape")?;
        let s = std::str::from_utf8(d).map_err(|_| "bad \\u escape")?;
        if !s.bytes().all(|c| c.is_ascii_hexdigit()) {
            return self.err("bad \\u escape");
        }
        self.i += 4;
        Ok(u32::from_str_radix(s, 16).unwrap())
    }
    fn string(&mut self) -> Result<String, String> {
        self.i += 1;
        let mut out = String::new();
        loop {
            let start = self.i;
            while let Some(&c) = self.b.get(self.i) {
                if c == b'"' || c == b'\\' || c < 0x20 {
                    break;
                }
                self.i += 1;
            }
            out.push_str(std::str::from_utf8(&self.b[start..self.i]).map_err(|_| "not UTF-8".to_string())?);
            match self.b.get(self.i) {
                None => return self.err("unterminated string"),
                Some(b'"') => {
                    self.i += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.i += 1;
                    let e = *self.b.get(self.i).ok_or("unterminated string")?;
                    self.i += 1;
                    match e {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let h = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&h) {
                                if !self.b[self.i..].starts_with(b"\\u") {
                                    return self.err("lone surrogate");
                                }
                                self.i += 2;
                                let l = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&l) {
                                    return self.err("lone surrogate");
                                }
                                0x10000 + ((h - 0xD800) << 10) + (l - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&h) {
                                return self.err("lone surrogate");
                            } else {
                                h
                            };
                            out.push(char::from_u32(code).ok_or("bad \\u escape")?);
                        }
                        _ => return self.err("bad escape"),
                    }
                }
                Some(_) => return self.err("control character in a string"),
            }
        }
    }
    fn digits(&mut self) -> usize {
        let s = self.i;
        while let Some(b'0'..=b'9') = self.b.get(self.i) {
            self.i += 1;
        }
        self.i - s
    }
    fn number(&mut self) -> Result<Json, String> {
        let start = self.i;
        if self.b[self.i] == b'-' {
            self.i += 1;
        }
        let ds = self.i;
        let n = self.digits();
        if n == 0 || (n > 1 && self.b[ds] == b'0') {
            return self.err("bad number");
        }
        if self.b.get(self.i) == Some(&b'.') {
            self.i += 1;
            if self.digits() == 0 {
                return self.err("bad number");
            }
        }
        if let Some(b'e' | b'E') = self.b.get(self.i) {
            self.i += 1;
            if let Some(b'+' | b'-') = self.b.get(self.i) {
                self.i += 1;
            }
            if self.digits() == 0 {
                return self.err("bad number");
            }
        }
        let t = std::str::from_utf8(&self.b[start..self.i]).unwrap();
        let v: f64 = t.parse().map_err(|_| "bad number".to_string())?;
        Ok(Json::Num(v))
    }
}

// ---- writing ----

pub fn push_str(out: &mut Vec<u8>, s: &str) {
    out.push(b'"');
    for c in s.chars() {
        match c {
            '"' => out.extend_from_slice(b"\\\""),
            '\\' => out.extend_from_slice(b"\\\\"),
            '\n' => out.extend_from_slice(b"\\n"),
            c if (c as u32) < 0x20 || c as u32 == 0x7f => {
                out.extend_from_slice(format!("\\u{:04x}", c as u32).as_bytes());
            }
            c => {
                let mut b = [0u8; 4];
                out.extend_from_slice(c.encode_utf8(&mut b).as_bytes());
            }
        }
    }
    out.push(b'"');
}

/// Shortest round-trip text of a finite double (Rust's `{:?}`).
pub fn push_f64(out: &mut Vec<u8>, x: f64) {
    use std::io::Write;
    let _ = write!(out, "{x:?}");
}

pub fn push_i64(out: &mut Vec<u8>, v: i64) {
    if (0..10).contains(&v) {
        out.push(b'0' + v as u8);
        return;
    }
    let mut buf = [0u8; 20];
    let mut i = buf.len();
    let neg = v < 0;
    let mut u = v.unsigned_abs();
    while u > 0 {
        i -= 1;
        buf[i] = b'0' + (u % 10) as u8;
        u /= 10;
    }
    if neg {
        out.push(b'-');
    }
    out.extend_from_slice(&buf[i..]);
}

pub fn error_line(message: &str) -> Vec<u8> {
    let mut o = Vec::with_capacity(message.len() + 16);
    o.extend_from_slice(b"{\"error\":");
    push_str(&mut o, message);
    o.push(b'}');
    o
}
