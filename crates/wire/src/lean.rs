//! A line parsed into a `Value` holding its large strings once.
//!
//! serde_json unescapes a string into a scratch buffer and copies it from there into its
//! `String`, so parsing a message that holds a 10 MB text costs the line and 20 MB more. Here
//! the strings of a large line are found by following its quotes; the line without their
//! contents (each replaced by a marker no input can forge) is parsed by serde_json, and each
//! large string is unescaped piece by piece — by serde_json, a few kilobytes at a time — and
//! put where its marker is. The largest is unescaped into the line's own buffer, which becomes
//! its `String`; any other into a `String` of its own size. The result is the `Value`
//! serde_json gives for the line (keys in order, the last of duplicate keys), and a line
//! serde_json refuses is refused.

use std::ops::Range;

use serde::de::{Deserializer, Visitor};
use serde_json::Value;

/// Strings shorter than this are left to serde_json.
pub const LARGE: usize = 64 * 1024;

/// About how much of a large string is unescaped at a time.
const PIECE: usize = 16 * 1024;

/// What a marker starts with, as text and as it is written in JSON.
const MARK: &str = "\u{1}offload-lean:";
const MARK_JSON: &str = "\\u0001offload-lean:";

/// Parses one JSON value from `line` (the whole of it), using the buffer for the largest string.
pub fn parse(line: Vec<u8>) -> Result<Value, serde_json::Error> {
    let strings = if line.len() < LARGE {
        Vec::new()
    } else {
        large_strings(&line)
    };
    if strings.is_empty() {
        return serde_json::from_slice(&line);
    }
    let nonce = format!("{:032x}:", fastrand::u128(..));
    let mut value = {
        let mut rest =
            Vec::with_capacity(line.len() - strings.iter().map(Range::len).sum::<usize>());
        let mut from = 0;
        for (i, range) in strings.iter().enumerate() {
            rest.extend_from_slice(&line[from..range.start]);
            rest.extend_from_slice(format!("{MARK_JSON}{nonce}{i}").as_bytes());
            from = range.end;
        }
        rest.extend_from_slice(&line[from..]);
        serde_json::from_slice::<Value>(&rest)?
    };
    let largest = (0..strings.len())
        .max_by_key(|&i| strings[i].len())
        .unwrap_or(0);
    let mut texts: Vec<Option<String>> = Vec::with_capacity(strings.len());
    let mut pieces = Pieces::default();
    for (i, range) in strings.iter().enumerate() {
        if i == largest {
            texts.push(None);
            continue;
        }
        let mut text = Vec::with_capacity(range.len());
        pieces.unescape(&line, range.clone(), |piece| text.extend_from_slice(piece))?;
        texts.push(Some(
            String::from_utf8(text).map_err(|e| utf8(e.utf8_error()))?,
        ));
    }
    // Each piece is written where the line starts, behind the piece being read: nothing is
    // overwritten before it is read.
    let mut line = line;
    let (mut written, mut read) = (0, strings[largest].start);
    while read < strings[largest].end {
        let end = piece_end(&line, read, strings[largest].end);
        let piece = pieces.decode(&line[read..end])?;
        line[written..written + piece.len()].copy_from_slice(piece);
        written += piece.len();
        read = end;
    }
    line.truncate(written);
    texts[largest] = Some(String::from_utf8(line).map_err(|e| utf8(e.utf8_error()))?);
    place(&mut value, &format!("{MARK}{nonce}"), &mut texts);
    Ok(value)
}

fn utf8(e: std::str::Utf8Error) -> serde_json::Error {
    serde::de::Error::custom(format!("invalid UTF-8: {e}"))
}

/// The content ranges (between the quotes) of the strings of at least `LARGE` bytes, found by
/// following quotes and backslashes. A line that is not JSON is refused later, by serde_json.
fn large_strings(line: &[u8]) -> Vec<Range<usize>> {
    let mut found = Vec::new();
    let mut open = None;
    let mut at = 0;
    while let Some(i) = line.get(at..).and_then(|s| memchr::memchr2(b'"', b'\\', s)) {
        let hit = at + i;
        if line[hit] == b'\\' {
            at = hit + 2;
            continue;
        }
        match open.take() {
            None => open = Some(hit + 1),
            // A key (a string followed by `:`) is left to serde_json.
            Some(start) if hit - start >= LARGE && !is_key(&line[hit + 1..]) => {
                found.push(start..hit);
            }
            Some(_) => {}
        }
        at = hit + 1;
    }
    found
}

/// Whether what follows a string makes it an object's key.
fn is_key(after: &[u8]) -> bool {
    after.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b':')
}

/// Replaces each marker in `value` by its text. serde_json nests values at most 128 deep.
fn place(value: &mut Value, mark: &str, texts: &mut [Option<String>]) {
    match value {
        Value::String(s) => {
            let text = s
                .strip_prefix(mark)
                .and_then(|i| i.parse::<usize>().ok())
                .and_then(|i| texts.get_mut(i))
                .and_then(Option::take);
            if let Some(text) = text {
                *s = text;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(|v| place(v, mark, texts)),
        Value::Object(fields) => fields.values_mut().for_each(|v| place(v, mark, texts)),
        _ => {}
    }
}

/// Unescapes a string's content a piece at a time, with serde_json.
#[derive(Default)]
struct Pieces {
    quoted: Vec<u8>,
    text: Vec<u8>,
}

impl Pieces {
    /// Calls `each` with the unescaped text of `line[range]`, piece by piece.
    fn unescape(
        &mut self,
        line: &[u8],
        range: Range<usize>,
        mut each: impl FnMut(&[u8]),
    ) -> Result<(), serde_json::Error> {
        let mut read = range.start;
        while read < range.end {
            let end = piece_end(line, read, range.end);
            each(self.decode(&line[read..end])?);
            read = end;
        }
        Ok(())
    }

    /// The unescaped text of `raw`, a part of a string's content that splits no escape.
    fn decode(&mut self, raw: &[u8]) -> Result<&[u8], serde_json::Error> {
        self.quoted.clear();
        self.quoted.push(b'"');
        self.quoted.extend_from_slice(raw);
        self.quoted.push(b'"');
        self.text.clear();
        let mut de = serde_json::Deserializer::from_slice(&self.quoted);
        de.deserialize_str(Append(&mut self.text))?;
        de.end()?;
        Ok(&self.text)
    }
}

/// Appends a string to a buffer.
struct Append<'b>(&'b mut Vec<u8>);

impl Visitor<'_> for Append<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a string")
    }
    fn visit_str<E: serde::de::Error>(self, text: &str) -> Result<(), E> {
        self.0.extend_from_slice(text.as_bytes());
        Ok(())
    }
}

/// Where the piece of string content starting at `from` ends: about `PIECE` bytes on, but
/// never inside an escape (a surrogate pair is one) or a UTF-8 character.
fn piece_end(content: &[u8], from: usize, end: usize) -> usize {
    let nominal = from.saturating_add(PIECE);
    if nominal >= end {
        return end;
    }
    let mut at = from;
    // Skip whole escapes up to the nominal end; one that runs past it ends the piece.
    while let Some(i) = memchr::memchr(b'\\', &content[at..nominal]) {
        at += i + escape_len(&content[at + i..end]);
        if at >= nominal {
            return at.min(end);
        }
    }
    let mut cut = nominal;
    while cut < end && content[cut] & 0xC0 == 0x80 {
        cut += 1;
    }
    cut
}

/// The length of the escape at the start of `s`: `\uXXXX\uXXXX` for a surrogate pair.
fn escape_len(s: &[u8]) -> usize {
    if s.get(1) != Some(&b'u') {
        return 2;
    }
    let high_surrogate = s
        .get(2..6)
        .and_then(|hex| std::str::from_utf8(hex).ok())
        .and_then(|hex| u16::from_str_radix(hex, 16).ok())
        .is_some_and(|unit| (0xD800..0xDC00).contains(&unit));
    if high_surrogate && s.get(6..8) == Some(b"\\u") {
        12
    } else {
        6
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn same_as_serde_json(line: &str) {
        let want = serde_json::from_str::<Value>(line);
        let got = parse(line.as_bytes().to_vec());
        match (want, got) {
            (Ok(want), Ok(got)) => {
                assert!(want == got, "differs for a line of {} bytes", line.len());
                let keys = |v: &Value| v.as_object().map(|m| m.keys().cloned().collect::<Vec<_>>());
                assert_eq!(keys(&want), keys(&got), "key order");
            }
            (Err(_), Err(_)) => {}
            (want, got) => panic!(
                "serde_json: {:?}, lean: {:?}",
                want.map(|_| ()),
                got.map(|_| ())
            ),
        }
    }

    /// Strings made to put escapes, surrogate pairs and multi-byte characters on every
    /// possible piece boundary.
    fn awkward(len: usize, seed: u64) -> String {
        let mut rng = fastrand::Rng::with_seed(seed);
        let parts = [
            "a",
            "\\n",
            "\\\"",
            "\\\\",
            "\\/",
            "\\u00e9",
            "\\ud83d\\ude00",
            "é",
            "😀",
            "\\t",
            "<",
            "\\u0000",
            "漢",
        ];
        let mut s = String::new();
        while s.len() < len {
            s.push_str(parts[rng.usize(..parts.len())]);
        }
        s
    }

    #[test]
    fn equals_serde_json_for_large_strings_objects_and_arrays() {
        for seed in 0..6 {
            let big = awkward(3 * LARGE + seed as usize * 7919, seed);
            let other = awkward(LARGE + 5, seed + 100);
            same_as_serde_json(&format!("\"{big}\""));
            same_as_serde_json(&format!(
                r#"{{"jsonrpc":"2.0","id":1,"result":{{"content":[{{"type":"text","text":"{big}"}},{{"type":"text","text":"{other}"}}],"isError":false,"z":[1,2.5,null,"x"],"a":{{"b":"{other}"}}}}}}"#
            ));
            same_as_serde_json(&format!(
                r#"  [ "{other}" , "{big}" , {{}} , "{other}" ]  "#
            ));
        }
        // Duplicate keys: the last value, in the first key's place.
        let big = awkward(2 * LARGE, 9);
        same_as_serde_json(&format!(r#"{{"k":"{big}","m":1,"k":"x{big}"}}"#));
        // A large key is a key.
        same_as_serde_json(&format!(r#"{{"{big}" : "{big}", "b": {{"{big}":1}}}}"#));
        // Text that looks like a marker stays text (a marker's number is new for each line).
        let forged = format!("\\u0001offload-lean:{:032x}:0", 0);
        same_as_serde_json(&format!(
            r#"{{"a":"{forged}","b":"{big}","c":["{forged}"]}}"#
        ));
    }

    #[test]
    fn the_largest_string_is_the_line_itself() {
        let big = awkward(4 * LARGE, 1);
        let line = format!(
            r#"{{"a":"{}","text":"{big}","n":[1,2]}}"#,
            awkward(LARGE + 8, 2)
        )
        .into_bytes();
        let at = line.as_ptr();
        let value = parse(line).unwrap();
        assert_eq!(
            value["text"].as_str().unwrap().as_ptr(),
            at,
            "no copy of the largest text"
        );
        assert_eq!(value["n"][1], 2);
    }

    #[test]
    fn piece_boundaries_never_split_an_escape_or_a_character() {
        let s = awkward(20 * PIECE, 3);
        let mut at = 0;
        let mut pieces = Pieces::default();
        let mut out = Vec::new();
        while at < s.len() {
            let end = piece_end(s.as_bytes(), at, s.len());
            assert!(end > at);
            out.extend_from_slice(pieces.decode(&s.as_bytes()[at..end]).unwrap());
            at = end;
        }
        let want: String = serde_json::from_str(&format!("\"{s}\"")).unwrap();
        assert_eq!(out, want.as_bytes());
    }

    #[test]
    fn bad_lines_fail_as_with_serde_json() {
        let big = "x".repeat(2 * LARGE);
        for line in [
            format!("\"{big}"),
            format!("\"{big}\\q\""),
            format!("\"{big}\\ud800\""),
            format!("\"{big}\\ud800\\u0041\""),
            format!("\"{big}\u{1}\""),
            format!("[\"{big}\"] trailing"),
            format!("{{\"a\": \"{big}\",}}"),
            format!("{}\"{big}\"{}", "[".repeat(200), "]".repeat(200)),
            format!("{}1{}", "[".repeat(LARGE), "]".repeat(LARGE)),
        ] {
            assert!(parse(line.clone().into_bytes()).is_err(), "{}", &line[..40]);
            same_as_serde_json(&line);
        }
        let mut invalid = format!("\"{big}").into_bytes();
        invalid.extend_from_slice(b"\xff\"");
        assert!(parse(invalid).is_err());
    }
}
