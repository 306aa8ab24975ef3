//! Lines in (stdin) and out (stdout): one JSON object per line, flushed after every line.
//!
//! `BufRead::read_until` returns as soon as a newline has arrived: it never waits for a full buffer,
//! so a harness that waits for our answer before writing more does not deadlock.

use std::io::{BufRead, BufReader, BufWriter, Stdin, Stdout, Write};

pub struct Lines {
    input: BufReader<Stdin>,
    output: BufWriter<Stdout>,
    buffer: Vec<u8>,
}

impl Lines {
    pub fn new() -> Lines {
        Lines {
            input: BufReader::with_capacity(1 << 16, std::io::stdin()),
            output: BufWriter::with_capacity(1 << 16, std::io::stdout()),
            buffer: Vec::new(),
        }
    }

    /// The next line without its newline (a last line without one counts); `None` at end of input;
    /// `Some(Err(..))` for a line that is not UTF-8.
    pub fn next_line(&mut self) -> Option<Result<String, String>> {
        self.buffer.clear();
        match self.input.read_until(b'\n', &mut self.buffer) {
            Ok(0) | Err(_) => None, // end of input, or stdin cannot be read any more
            Ok(_) => {
                if self.buffer.last() == Some(&b'\n') {
                    self.buffer.pop();
                }
                Some(String::from_utf8(self.buffer.clone()).map_err(|_| "the line is not UTF-8".to_string()))
            }
        }
    }

    /// One answer line, flushed (the harness answers only what it has seen).
    pub fn say(&mut self, line: &str) {
        // a harness that has gone away: nothing left to do but stop
        if self.output.write_all(line.as_bytes()).is_err()
            || self.output.write_all(b"\n").is_err()
            || self.output.flush().is_err()
        {
            std::process::exit(0);
        }
    }
}
