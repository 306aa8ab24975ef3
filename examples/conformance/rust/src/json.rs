//! A small strict JSON reader and writer (RFC 8259), enough for the protocol.
//!
//! Numbers are read by value, as the protocol compares them: `16`, `16.0` and `1.6e1` are all the
//! integer 16 (an integer literal keeps its exact digits beyond 2^53). Objects keep their key order
//! and refuse duplicate keys.

use std::fmt::Write as _;

#[derive(Clone, Debug, PartialEq)]
pub enum Json {
    Null,
    Bool(bool),
    Number(Number),
    String(String),
    Array(Vec<Json>),
    Object(Vec<(String, Json)>),
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Number {
    /// the nearest double (infinite when the literal overflows, e.g. `1e400`)
    pub value: f64,
    /// the value when it is an integer that fits an i128: exact for an integer literal, else the double's
    pub integer: Option<i128>,
}

impl Json {
    pub fn get(&self, key: &str) -> Option<&Json> {
        match self {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A finite number, whatever its literal.
    pub fn as_finite(&self) -> Option<f64> {
        match self {
            Json::Number(n) if n.value.is_finite() => Some(n.value),
            _ => None,
        }
    }

    /// An integer, by value (16, 16.0 and 1.6e1 alike; 2.5 is none).
    pub fn as_integer(&self) -> Option<i128> {
        match self {
            Json::Number(n) => n.integer,
            _ => None,
        }
    }

    /// A short description of a value for error messages.
    pub fn describe(&self) -> String {
        let mut text = String::new();
        write(self, &mut text);
        if text.chars().count() > 60 {
            let cut: String = text.chars().take(57).collect();
            format!("{cut}...")
        } else {
            text
        }
    }
}

// ---- reading -------------------------------------------------------------------------------

const MAX_DEPTH: usize = 64;

pub fn parse(text: &str) -> Result<Json, String> {
    let mut p = Parser {
        bytes: text.as_bytes(),
        pos: 0,
    };
    p.skip_ws();
    let value = p.value(0)?;
    p.skip_ws();
    if p.pos != p.bytes.len() {
        return Err(format!("unexpected text after the value at byte {}", p.pos));
    }
    Ok(value)
}

struct Parser<'a> {
    bytes: &'a [u8],
    pos: usize,
}

impl Parser<'_> {
    fn skip_ws(&mut self) {
        while let Some(b' ' | b'\t' | b'\n' | b'\r') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
    }

    fn error<T>(&self, what: &str) -> Result<T, String> {
        Err(format!("{what} at byte {}", self.pos))
    }

    fn expect(&mut self, literal: &str, value: Json) -> Result<Json, String> {
        if self.bytes[self.pos..].starts_with(literal.as_bytes()) {
            self.pos += literal.len();
            Ok(value)
        } else {
            self.error("invalid literal")
        }
    }

    fn value(&mut self, depth: usize) -> Result<Json, String> {
        if depth > MAX_DEPTH {
            return self.error("nesting too deep");
        }
        match self.bytes.get(self.pos) {
            None => self.error("unexpected end"),
            Some(b'{') => self.object(depth),
            Some(b'[') => self.array(depth),
            Some(b'"') => Ok(Json::String(self.string()?)),
            Some(b't') => self.expect("true", Json::Bool(true)),
            Some(b'f') => self.expect("false", Json::Bool(false)),
            Some(b'n') => self.expect("null", Json::Null),
            Some(b'-' | b'0'..=b'9') => self.number(),
            Some(_) => self.error("unexpected character"),
        }
    }

    fn object(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1;
        let mut members: Vec<(String, Json)> = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b'}') {
            self.pos += 1;
            return Ok(Json::Object(members));
        }
        loop {
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b'"') {
                return self.error("expected a key");
            }
            let key = self.string()?;
            if members.iter().any(|(k, _)| *k == key) {
                return Err(format!("duplicate key {key:?}"));
            }
            self.skip_ws();
            if self.bytes.get(self.pos) != Some(&b':') {
                return self.error("expected ':'");
            }
            self.pos += 1;
            self.skip_ws();
            let value = self.value(depth + 1)?;
            members.push((key, value));
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b'}') => {
                    self.pos += 1;
                    return Ok(Json::Object(members));
                }
                _ => return self.error("expected ',' or '}'"),
            }
        }
    }

    fn array(&mut self, depth: usize) -> Result<Json, String> {
        self.pos += 1;
        let mut items = Vec::new();
        self.skip_ws();
        if self.bytes.get(self.pos) == Some(&b']') {
            self.pos += 1;
            return Ok(Json::Array(items));
        }
        loop {
            self.skip_ws();
            items.push(self.value(depth + 1)?);
            self.skip_ws();
            match self.bytes.get(self.pos) {
                Some(b',') => self.pos += 1,
                Some(b']') => {
                    self.pos += 1;
                    return Ok(Json::Array(items));
                }
                _ => return self.error("expected ',' or ']'"),
            }
        }
    }

    fn hex4(&mut self) -> Result<u32, String> {
        let digits = self.bytes.get(self.pos..self.pos + 4).ok_or("truncated \\u escape")?;
        let text = std::str::from_utf8(digits).map_err(|_| "bad \\u escape")?;
        if !text.bytes().all(|b| b.is_ascii_hexdigit()) {
            return self.error("bad \\u escape");
        }
        self.pos += 4;
        Ok(u32::from_str_radix(text, 16).expect("four hex digits"))
    }

    fn string(&mut self) -> Result<String, String> {
        self.pos += 1; // the opening quote
        let mut out = String::new();
        loop {
            let start = self.pos;
            while let Some(&b) = self.bytes.get(self.pos) {
                if b == b'"' || b == b'\\' || b < 0x20 {
                    break;
                }
                self.pos += 1;
            }
            // the input is a &str, so the run of bytes is valid UTF-8
            out.push_str(std::str::from_utf8(&self.bytes[start..self.pos]).expect("utf-8"));
            match self.bytes.get(self.pos) {
                None => return self.error("unterminated string"),
                Some(b'"') => {
                    self.pos += 1;
                    return Ok(out);
                }
                Some(b'\\') => {
                    self.pos += 1;
                    let escape = *self.bytes.get(self.pos).ok_or("unterminated string")?;
                    self.pos += 1;
                    match escape {
                        b'"' => out.push('"'),
                        b'\\' => out.push('\\'),
                        b'/' => out.push('/'),
                        b'b' => out.push('\u{8}'),
                        b'f' => out.push('\u{c}'),
                        b'n' => out.push('\n'),
                        b'r' => out.push('\r'),
                        b't' => out.push('\t'),
                        b'u' => {
                            let high = self.hex4()?;
                            let code = if (0xD800..0xDC00).contains(&high) {
                                if !self.bytes[self.pos..].starts_with(b"\\u") {
                                    return self.error("lone surrogate");
                                }
                                self.pos += 2;
                                let low = self.hex4()?;
                                if !(0xDC00..0xE000).contains(&low) {
                                    return self.error("lone surrogate");
                                }
                                0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00)
                            } else if (0xDC00..0xE000).contains(&high) {
                                return self.error("lone surrogate");
                            } else {
                                high
                            };
                            out.push(char::from_u32(code).ok_or("bad \\u escape")?);
                        }
                        _ => return self.error("bad escape"),
                    }
                }
                Some(_) => return self.error("control character in a string"),
            }
        }
    }

    fn digits(&mut self) -> usize {
        let start = self.pos;
        while let Some(b'0'..=b'9') = self.bytes.get(self.pos) {
            self.pos += 1;
        }
        self.pos - start
    }

    fn number(&mut self) -> Result<Json, String> {
        let start = self.pos;
        if self.bytes[self.pos] == b'-' {
            self.pos += 1;
        }
        let int_start = self.pos;
        let n = self.digits();
        if n == 0 || (n > 1 && self.bytes[int_start] == b'0') {
            return self.error("bad number");
        }
        let mut integer = true;
        if self.bytes.get(self.pos) == Some(&b'.') {
            self.pos += 1;
            integer = false;
            if self.digits() == 0 {
                return self.error("bad number");
            }
        }
        if let Some(b'e' | b'E') = self.bytes.get(self.pos) {
            self.pos += 1;
            integer = false;
            if let Some(b'+' | b'-') = self.bytes.get(self.pos) {
                self.pos += 1;
            }
            if self.digits() == 0 {
                return self.error("bad number");
            }
        }
        let text = std::str::from_utf8(&self.bytes[start..self.pos]).expect("ascii");
        let value: f64 = text.parse().map_err(|_| "bad number".to_string())?; // correctly rounded
        let integer = if integer {
            text.parse::<i128>().ok()
        } else if value.is_finite() && value.fract() == 0.0 && value.abs() < 1e38 {
            Some(value as i128) // 16.0 and 1.6e1 are the integer 16: numbers are compared by value
        } else {
            None
        };
        Ok(Json::Number(Number { value, integer }))
    }
}

// ---- writing -------------------------------------------------------------------------------

pub fn to_string(value: &Json) -> String {
    let mut out = String::new();
    write(value, &mut out);
    out
}

pub fn write(value: &Json, out: &mut String) {
    match value {
        Json::Null => out.push_str("null"),
        Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        Json::Number(Number { integer: Some(i), .. }) => write!(out, "{i}").expect("writing to a String"),
        Json::Number(n) => write_number(n.value, out),
        Json::String(s) => write_string(s, out),
        Json::Array(items) => {
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write(item, out);
            }
            out.push(']');
        }
        Json::Object(members) => {
            out.push('{');
            for (i, (key, item)) in members.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                write_string(key, out);
                out.push(':');
                write(item, out);
            }
            out.push('}');
        }
    }
}

/// The shortest text that reads back as the same double (Rust's `{:?}`: `1.0`, `0.1`, `1e300`), or
/// `null` for a non-finite value, which JSON cannot write.
pub fn write_number(x: f64, out: &mut String) {
    if x.is_finite() {
        write!(out, "{x:?}").expect("writing to a String");
    } else {
        out.push_str("null");
    }
}

pub fn write_string(s: &str, out: &mut String) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c if (c as u32) < 0x20 || c as u32 == 0x7F => {
                write!(out, "\\u{:04x}", c as u32).expect("writing to a String");
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

pub fn number(x: f64) -> Json {
    Json::Number(Number {
        value: x,
        integer: None,
    })
}

pub fn integer(i: i128) -> Json {
    Json::Number(Number {
        value: i as f64,
        integer: Some(i),
    })
}

pub fn string(s: &str) -> Json {
    Json::String(s.to_string())
}

pub fn object(members: Vec<(&str, Json)>) -> Json {
    Json::Object(members.into_iter().map(|(k, v)| (k.to_string(), v)).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trips_and_refusals() {
        let v = parse(r#"{"a":[1,2.5,-0,1e400,"x\u00e9\ud83d\ude00"],"b":null}"#).unwrap();
        assert_eq!(v.get("a").unwrap().describe(), r#"[1,2.5,0,null,"xé😀"]"#);
        assert_eq!(parse("16").unwrap().as_integer(), Some(16));
        assert_eq!(parse("16.0").unwrap().as_integer(), Some(16));
        assert_eq!(parse("1.6e1").unwrap().as_integer(), Some(16));
        assert_eq!(parse("2.5").unwrap().as_integer(), None);
        for bad in [
            "",
            "01",
            "1.",
            "[1,]",
            r#"{"a":1,"a":2}"#,
            r#""\ud800""#,
            "tru",
            "1 2",
            "\"\t\"",
        ] {
            assert!(parse(bad).is_err(), "{bad}");
        }
    }
}
