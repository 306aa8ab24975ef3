//! Lines in (stdin) and out (stdout): one JSON object per line, flushed once per answer line.
//!
//! `read_until(b'\n')` returns as soon as a line has arrived (it never waits for a full buffer), so a
//! harness that waits for each answer does not deadlock, and one that writes ahead gets its answers
//! in order.

use std::io::{BufRead, BufReader, BufWriter, Stdin, Stdout, Write};

const MAX_LINE: usize = 64 << 20;

pub struct Io {
    input: BufReader<Stdin>,
    output: BufWriter<Stdout>,
    buffer: Vec<u8>,
}

impl Io {
    pub fn new() -> Io {
        Io {
            input: BufReader::with_capacity(1 << 16, std::io::stdin()),
            output: BufWriter::with_capacity(1 << 20, std::io::stdout()),
            buffer: Vec::new(),
        }
    }

    /// The next line without its newline; `None` at end of input; `Some(Err)` for a line that is not
    /// UTF-8 or longer than 64 MiB.
    pub fn next_line(&mut self) -> Option<Result<String, String>> {
        self.buffer.clear();
        match self.input.read_until(b'\n', &mut self.buffer) {
            Ok(0) | Err(_) => None,
            Ok(_) => {
                if self.buffer.last() == Some(&b'\n') {
                    self.buffer.pop();
                }
                if self.buffer.last() == Some(&b'\r') {
                    self.buffer.pop();
                }
                if self.buffer.len() > MAX_LINE {
                    return Some(Err("the line is longer than 64 MiB".into()));
                }
                let bytes = std::mem::take(&mut self.buffer);
                Some(String::from_utf8(bytes).map_err(|_| "the line is not UTF-8".to_string()))
            }
        }
    }

    /// One answer line, flushed.
    pub fn say(&mut self, line: &str) {
        if self.output.write_all(line.as_bytes()).is_err()
            || self.output.write_all(b"\n").is_err()
            || self.output.flush().is_err()
        {
            std::process::exit(0); // the harness has gone away
        }
    }
}
