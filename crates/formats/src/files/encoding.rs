//! Which encoding a text file is in, from a sample of its first bytes: a BOM (UTF-8, UTF-16 LE/BE)
//! wins; valid UTF-8 is UTF-8; UTF-16 without a BOM is recognised by its zero bytes; anything else
//! that looks like text is handed to `chardetng` (Windows-1252, Shift-JIS, ...) and decoded with
//! `encoding_rs`. Files with NUL bytes or many control characters are binary.

use encoding_rs::{Encoding, UTF_8, UTF_16BE, UTF_16LE};

/// How many bytes of the file are looked at to decide.
pub const SAMPLE: usize = 64 * 1024;

/// A text file's encoding and where its text starts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct TextEncoding {
    pub encoding: &'static Encoding,
    /// Length of the byte-order mark (0 when there is none).
    pub bom_len: u64,
}

impl TextEncoding {
    pub const UTF8: Self = Self {
        encoding: UTF_8,
        bom_len: 0,
    };

    /// Bytes per code unit: 2 for UTF-16, 1 for UTF-8 and every ASCII-compatible encoding.
    pub fn unit(self) -> u64 {
        if self.is_utf16() { 2 } else { 1 }
    }

    pub fn is_utf16(self) -> bool {
        self.encoding == UTF_16LE || self.encoding == UTF_16BE
    }

    /// The name shown to users: `utf-8`, `utf-16le`, `windows-1252`, `shift_jis`, ...
    pub fn name(self) -> String {
        let name = self.encoding.name().to_ascii_lowercase();
        if self.bom_len > 0 {
            format!("{name} (bom)")
        } else {
            name
        }
    }

    /// `bytes` decoded; invalid sequences become U+FFFD, never an error.
    pub fn decode(self, bytes: &[u8]) -> String {
        if self.encoding == UTF_8 {
            return match std::str::from_utf8(bytes) {
                Ok(s) => s.to_owned(),
                Err(_) => String::from_utf8_lossy(bytes).into_owned(),
            };
        }
        self.encoding
            .decode_without_bom_handling(bytes)
            .0
            .into_owned()
    }
}

/// What the first bytes of a file say it is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sniffed {
    Text(TextEncoding),
    Binary,
}

/// Decides from `sample`, the first bytes of a file (up to [`SAMPLE`]); `whole` says whether the
/// sample is the whole file (so a character cut at its end is an error, not the sample's edge).
pub fn sniff(sample: &[u8], whole: bool) -> Sniffed {
    if let Some((encoding, bom_len)) = Encoding::for_bom(sample) {
        return Sniffed::Text(TextEncoding {
            encoding,
            bom_len: bom_len as u64,
        });
    }
    if let Some(encoding) = utf16_without_bom(sample) {
        return Sniffed::Text(TextEncoding {
            encoding,
            bom_len: 0,
        });
    }
    if looks_binary(sample) {
        return Sniffed::Binary;
    }
    match std::str::from_utf8(sample) {
        Ok(_) => return Sniffed::Text(TextEncoding::UTF8),
        // The sample may end inside a character: that is fine unless it is the whole file.
        Err(e) if e.error_len().is_none() && !whole => return Sniffed::Text(TextEncoding::UTF8),
        Err(_) => {}
    }
    let mut detector = chardetng::EncodingDetector::new(chardetng::Iso2022JpDetection::Deny);
    detector.feed(sample, whole);
    let encoding = detector.guess(None, chardetng::Utf8Detection::Allow);
    Sniffed::Text(TextEncoding {
        encoding,
        bom_len: 0,
    })
}

/// UTF-16 without a BOM: text in Latin script has a zero in every other byte.
fn utf16_without_bom(sample: &[u8]) -> Option<&'static Encoding> {
    let pairs = sample.len() / 2;
    if pairs < 4 {
        return None;
    }
    let (mut even, mut odd) = (0usize, 0usize);
    for pair in sample.chunks_exact(2) {
        even += usize::from(pair[0] == 0);
        odd += usize::from(pair[1] == 0);
    }
    // Nearly every other byte zero, and almost none of the others.
    if odd * 10 >= pairs * 9 && even * 20 <= pairs {
        Some(UTF_16LE)
    } else if even * 10 >= pairs * 9 && odd * 20 <= pairs {
        Some(UTF_16BE)
    } else {
        None
    }
}

/// NUL bytes, or more than 1 in 10 bytes being control characters other than whitespace.
fn looks_binary(sample: &[u8]) -> bool {
    if memchr::memchr(0, sample).is_some() {
        return true;
    }
    let control = sample
        .iter()
        .filter(|&&b| b < 0x20 && !matches!(b, b'\n' | b'\r' | b'\t' | 0x0c | 0x1b))
        .count();
    control * 10 > sample.len()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(bytes: &[u8]) -> String {
        match sniff(bytes, true) {
            Sniffed::Text(e) => e.name(),
            Sniffed::Binary => "binary".into(),
        }
    }

    #[test]
    fn boms_utf8_utf16_and_legacy_encodings() {
        assert_eq!(name(b"plain ascii\n"), "utf-8");
        assert_eq!(name("caf\u{e9} \u{65e5}\u{672c}\n".as_bytes()), "utf-8");
        assert_eq!(name(b"\xef\xbb\xbfwith bom\n"), "utf-8 (bom)");
        assert_eq!(name(b"\xff\xfeh\0i\0\n\0"), "utf-16le (bom)");
        assert_eq!(name(b"\xfe\xff\0h\0i\0\n"), "utf-16be (bom)");
        assert_eq!(name(b"h\0e\0l\0l\0o\0 \0w\0o\0r\0l\0d\0\n\0"), "utf-16le");
        assert_eq!(name(b"\0h\0e\0l\0l\0o\0 \0w\0o\0r\0l\0d\0\n"), "utf-16be");
        let latin1 =
            b"Caf\xe9 cr\xe8me br\xfbl\xe9e, na\xefve fa\xe7ade, \xe0 la carte\n".repeat(4);
        assert_eq!(name(&latin1), "windows-1252");
        let japanese = "日本語のテキストです。東京都。\n".repeat(8);
        let (sjis, _, _) = encoding_rs::SHIFT_JIS.encode(&japanese);
        assert_eq!(name(&sjis), "shift_jis");
        assert_eq!(name(b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR"), "binary");
        assert_eq!(name(b"\x01\x02\x03\x04\x05\x06\x07\x08abc"), "binary");
        assert_eq!(name(b""), "utf-8");
    }

    #[test]
    fn a_sample_cut_inside_a_character_is_still_utf8() {
        let text = "\u{65e5}".repeat(10);
        let cut = &text.as_bytes()[..text.len() - 1];
        assert_eq!(sniff(cut, false), Sniffed::Text(TextEncoding::UTF8));
    }

    #[test]
    fn decoding_never_fails() {
        let e = TextEncoding::UTF8;
        assert_eq!(e.decode(b"ok\xff"), "ok\u{fffd}");
        let latin = TextEncoding {
            encoding: encoding_rs::WINDOWS_1252,
            bom_len: 0,
        };
        assert_eq!(latin.decode(b"caf\xe9"), "caf\u{e9}");
    }
}
