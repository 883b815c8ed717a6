//! Finding and counting line ends in raw bytes, at SIMD speed (`bytecount`, `memchr`), for 8-bit
//! encodings and for UTF-16 (where a line end is a two-byte code unit at an even offset).
//!
//! A line ends at `\n` (a `\r` before it is stripped when the line is decoded), or at `\r` in
//! files that use lone carriage returns. Every buffer passed here starts at a code-unit boundary.

use super::encoding::TextEncoding;

/// The code unit that ends a line in one file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Newline {
    /// `b'\n'`, or `b'\r'` for files with lone carriage returns.
    pub byte: u8,
    unit: Unit,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Unit {
    Byte,
    Utf16Le,
    Utf16Be,
}

impl Newline {
    /// The line end of a file in `encoding` whose first bytes (after any BOM) are `sample`.
    pub fn detect(encoding: TextEncoding, sample: &[u8]) -> Self {
        let unit = match encoding.encoding {
            e if e == encoding_rs::UTF_16LE => Unit::Utf16Le,
            e if e == encoding_rs::UTF_16BE => Unit::Utf16Be,
            _ => Unit::Byte,
        };
        let lf = Self { byte: b'\n', unit };
        let cr = Self { byte: b'\r', unit };
        if lf.find(sample).is_none() && cr.find(sample).is_some() {
            cr
        } else {
            lf
        }
    }

    /// Bytes per code unit.
    pub fn width(self) -> usize {
        if self.unit == Unit::Byte { 1 } else { 2 }
    }

    /// Whether the code unit at `at` is a line end.
    pub fn is_at(self, buf: &[u8], at: usize) -> bool {
        match self.unit {
            Unit::Byte => buf.get(at) == Some(&self.byte),
            Unit::Utf16Le => buf.get(at) == Some(&self.byte) && buf.get(at + 1) == Some(&0),
            Unit::Utf16Be => buf.get(at) == Some(&0) && buf.get(at + 1) == Some(&self.byte),
        }
    }

    /// Line ends in `buf`.
    pub fn count(self, buf: &[u8]) -> u64 {
        match self.unit {
            Unit::Byte => bytecount::count(buf, self.byte) as u64,
            _ => self.positions(buf).count() as u64,
        }
    }

    /// Offset of the first line end in `buf`.
    pub fn find(self, buf: &[u8]) -> Option<usize> {
        self.positions(buf).next()
    }

    /// Offset of the `n`-th line end (1-based) in `buf`, or how many there are when fewer.
    pub fn find_nth(self, buf: &[u8], n: u64) -> Result<usize, u64> {
        debug_assert!(n >= 1);
        let mut seen = 0;
        for at in self.positions(buf) {
            seen += 1;
            if seen == n {
                return Ok(at);
            }
        }
        Err(seen)
    }

    /// Offset of the `n`-th line end (1-based) counted from the end of `buf`, or how many there
    /// are when fewer.
    pub fn rfind_nth(self, buf: &[u8], n: u64) -> Result<usize, u64> {
        debug_assert!(n >= 1);
        let mut seen = 0;
        for at in memchr::memrchr_iter(self.byte, buf) {
            if let Some(unit) = self.unit_start(buf, at) {
                seen += 1;
                if seen == n {
                    return Ok(unit);
                }
            }
        }
        Err(seen)
    }

    /// Offsets of every line end in `buf`, in order.
    pub fn positions(self, buf: &[u8]) -> impl Iterator<Item = usize> + '_ {
        memchr::memchr_iter(self.byte, buf).filter_map(move |at| self.unit_start(buf, at))
    }

    /// For a byte equal to the line-end byte at `at`, the offset of the code unit it belongs to
    /// when that unit is a line end.
    fn unit_start(self, buf: &[u8], at: usize) -> Option<usize> {
        match self.unit {
            Unit::Byte => Some(at),
            Unit::Utf16Le => (at.is_multiple_of(2) && buf.get(at + 1) == Some(&0)).then_some(at),
            Unit::Utf16Be => (at % 2 == 1 && buf[at - 1] == 0).then(|| at - 1),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use encoding_rs::{UTF_8, UTF_16BE, UTF_16LE};

    fn enc(encoding: &'static encoding_rs::Encoding) -> TextEncoding {
        TextEncoding {
            encoding,
            bom_len: 0,
        }
    }

    #[test]
    fn utf16_line_ends_are_aligned_code_units() {
        // U+0A0A (GURMUKHI) contains 0x0A bytes but is not a line end.
        let text = "a\u{a0a}b\nc\n";
        let le: Vec<u8> = text
            .encode_utf16()
            .flat_map(u16::to_le_bytes)
            .collect::<Vec<_>>();
        let be: Vec<u8> = text
            .encode_utf16()
            .flat_map(u16::to_be_bytes)
            .collect::<Vec<_>>();
        let nl_le = Newline::detect(enc(UTF_16LE), &le);
        let nl_be = Newline::detect(enc(UTF_16BE), &be);
        assert_eq!(nl_le.count(&le), 2);
        assert_eq!(nl_be.count(&be), 2);
        assert_eq!(nl_le.find_nth(&le, 1), Ok(6));
        assert_eq!(nl_be.find_nth(&be, 2), Ok(10));
        assert_eq!(nl_le.rfind_nth(&le, 2), Ok(6));
        assert_eq!(nl_be.rfind_nth(&be, 3), Err(2));
    }

    #[test]
    fn lone_carriage_returns_are_line_ends_only_without_line_feeds() {
        assert_eq!(Newline::detect(enc(UTF_8), b"a\rb\r").byte, b'\r');
        assert_eq!(Newline::detect(enc(UTF_8), b"a\r\nb\r\n").byte, b'\n');
        assert_eq!(Newline::detect(enc(UTF_8), b"no line end").byte, b'\n');
        let nl = Newline::detect(enc(UTF_8), b"x\ny\n");
        assert_eq!(nl.find_nth(b"x\ny\nz", 3), Err(2));
        assert_eq!(nl.rfind_nth(b"x\ny\nz", 1), Ok(3));
    }
}
