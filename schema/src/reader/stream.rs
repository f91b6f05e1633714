//! A report read from a stream a window at a time: memory bounded by the largest entry,
//! not by the file (a 3 GiB stream of valid entries is read in a few MiB).
//!
//! The container walk is the whole-text one ([`super::walk`]) over a [`Window`]: the same
//! entries, the same errors at the same byte offsets, lines and columns. An entry is read
//! from the window; when the window ends inside it, more is read and the entry is read
//! again from its start (the window doubles, so an entry costs at most twice its reading).
//! An entry larger than [`MAX_ENTRY`] is not read: that is the one place where the two
//! ways differ, and it says so.

use super::{Cursor, LossesApart, Read, read_entry};
use crate::pyjson::{Parser, SyntaxError};
use crate::value::Value;
use std::io;

/// Bytes read from the stream at a time (the window grows past it for a larger entry).
pub const CHUNK: usize = 1 << 20;

/// The largest entry read from a stream: a suite entry is a few KiB (100 losses); one of
/// 256 MiB is not a report, and reading it would hold as much.
pub const MAX_ENTRY: usize = 256 << 20;

/// An error this far before the window's end is the whole text's error: no token is
/// this long (a number of 4,096 digits), so the parser did not look past the window.
const SLACK: usize = 4096;

/// A value that parsed is whole when this much of the window follows it: a cut number
/// leaves at most `.`, `e`, `e+` unread (its continuation), an object nothing.
const LOOKAHEAD: usize = 64;

/// Where the window's first byte is in the whole stream.
#[derive(Debug, Clone, Copy)]
struct Position {
    offset: usize,
    /// 1-based line.
    line: usize,
    /// Bytes since the start of that line.
    column0: usize,
}

/// A window on a stream: `buf[start..]` is what is read and not yet consumed.
pub(super) struct Window<'r> {
    input: &'r mut dyn io::Read,
    buf: Vec<u8>,
    start: usize,
    at: Position,
    eof: bool,
    chunk: usize,
    max_entry: usize,
    /// The first read that failed: the stream ends there.
    pub(super) failed: Option<io::Error>,
}

impl<'r> Window<'r> {
    /// A window on `input` read `chunk` bytes at a time, entries up to `max_entry`.
    pub(super) fn new(input: &'r mut dyn io::Read, chunk: usize, max_entry: usize) -> Self {
        Window {
            input,
            buf: Vec::new(),
            start: 0,
            at: Position {
                offset: 0,
                line: 1,
                column0: 0,
            },
            eof: false,
            chunk: chunk.max(1),
            max_entry,
            failed: None,
        }
    }

    fn rest(&self) -> &[u8] {
        &self.buf[self.start..]
    }

    /// Moves past `n` bytes, keeping the position of the window's start.
    fn consume(&mut self, n: usize) {
        let gone = &self.buf[self.start..self.start + n];
        match gone.iter().rposition(|&b| b == b'\n') {
            Some(last) => {
                self.at.line += gone.iter().filter(|&&b| b == b'\n').count();
                self.at.column0 = n - last - 1;
            }
            None => self.at.column0 += n,
        }
        self.at.offset += n;
        self.start += n;
    }

    /// Reads more of the stream onto the window (as much as the window holds, at least a
    /// chunk); false at its end, or when a read fails.
    fn fill(&mut self) -> bool {
        if self.eof {
            return false;
        }
        if self.start > 0 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        let want = self.chunk.max(self.buf.len());
        let old = self.buf.len();
        self.buf.resize(old + want, 0);
        let mut got = 0;
        while got < want {
            match self.input.read(&mut self.buf[old + got..]) {
                Ok(0) => {
                    self.eof = true;
                    break;
                }
                Ok(n) => got += n,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.failed = Some(e);
                    self.eof = true;
                    break;
                }
            }
        }
        self.buf.truncate(old + got);
        got > 0
    }

    /// An error of a parser over `rest()`, at the whole stream's position.
    fn shifted(&self, e: SyntaxError) -> SyntaxError {
        e.shifted(self.at.offset, self.at.line, self.at.column0)
    }
}

impl Cursor for Window<'_> {
    fn skip_ws(&mut self) {
        loop {
            let n = self
                .rest()
                .iter()
                .take_while(|b| matches!(b, b' ' | b'\t' | b'\n' | b'\r'))
                .count();
            self.consume(n);
            if !self.rest().is_empty() || !self.fill() {
                return;
            }
        }
    }

    fn peek(&mut self) -> Option<u8> {
        if self.rest().is_empty() {
            self.fill();
        }
        self.rest().first().copied()
    }

    fn eat(&mut self, b: u8) -> bool {
        let next = self.peek() == Some(b);
        if next {
            self.consume(1);
        }
        next
    }

    fn at_end(&mut self) -> bool {
        self.peek().is_none()
    }

    fn error(&mut self, message: &str) -> SyntaxError {
        self.shifted(Parser::new(self.rest()).error(message))
    }

    fn entry(&mut self, read: Read) -> Result<(Value, LossesApart), SyntaxError> {
        loop {
            let (result, used) = {
                let mut parser = Parser::new(self.rest());
                (read_entry(&mut parser, read), parser.pos)
            };
            let window = self.rest().len();
            match result {
                // A value that ends near the window's end may go on: a number cut after
                // `25.` reads as `25`. Only what ends well before it, or at the
                // stream's end, is whole.
                Ok(_) if used + LOOKAHEAD > window && self.fill() => {}
                Ok(entry) => {
                    self.consume(used);
                    return Ok(entry);
                }
                // The window may end inside the entry: read more and read it again,
                // unless the error is well before the window's end (the parser looks
                // at most one token ahead: what follows cannot change it), or the
                // entry is already as large as an entry may be.
                Err(e) if e.offset + SLACK < window => return Err(self.shifted(e)),
                Err(_) if window >= self.max_entry => {
                    let message = format!(
                        "an entry over {} MiB, not read (the most one entry may take)",
                        self.max_entry >> 20
                    );
                    return Err(self.shifted(Parser::new(self.rest()).error(message)));
                }
                Err(e) => {
                    if !self.fill() {
                        return Err(self.shifted(e));
                    }
                }
            }
        }
    }
}
