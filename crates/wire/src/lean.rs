//! A line parsed into a `Value` holding its large strings once.
//!
//! serde_json unescapes a string into a scratch buffer and copies it from there into its
//! `String`, so parsing a message that holds a 10 MB text costs the line and 20 MB more. Here
//! a large line is first parsed into raw values borrowed from it: small values are parsed as
//! usual, large objects and arrays level by level, and large strings are unescaped piece by
//! piece — by serde_json, a few kilobytes at a time. The largest string is unescaped into the
//! line's own buffer, which becomes its `String`; any other into a `String` of its own size.
//! The result is the `Value` serde_json would give (keys in order, the last of duplicate keys).

use std::ops::Range;

use serde::de::{Deserialize, Deserializer, MapAccess, Visitor};
use serde_json::value::RawValue;
use serde_json::{Map, Value};

/// Values shorter than this are parsed by serde_json directly.
pub const LARGE: usize = 64 * 1024;

/// About how much of a large string is unescaped at a time.
const PIECE: usize = 16 * 1024;

/// Large objects and arrays nested deeper than this are refused, as serde_json refuses any
/// value nested deeper: the walk never overflows the stack. (A small value inside large ones
/// is parsed with serde_json's own limit, so the whole may nest a little deeper than 128.)
const MAX_DEPTH: usize = 128;

/// Parses one JSON value from `line` (the whole of it), using the buffer for the largest string.
pub fn parse(line: Vec<u8>) -> Result<Value, serde_json::Error> {
    if line.len() < LARGE {
        return serde_json::from_slice(&line);
    }
    let mut strings = Vec::new();
    let mut value = {
        let root: &RawValue = serde_json::from_slice(&line)?;
        let mut walk = Walk {
            base: line.as_ptr() as usize,
            strings: &mut strings,
            path: Vec::new(),
        };
        walk.value(root, 0)?
    };
    let Some(largest) = (0..strings.len()).max_by_key(|&i| strings[i].range.len()) else {
        return Ok(value);
    };
    let largest = strings.swap_remove(largest);
    let mut pieces = Pieces::default();
    for string in strings {
        let mut text = Vec::with_capacity(string.range.len());
        pieces.unescape(&line, string.range, |piece| text.extend_from_slice(piece))?;
        string.path.set(&mut value, text)?;
    }
    // Each piece is written where the text starts, behind the piece being read: no text is
    // overwritten before it is read.
    let mut line = line;
    let mut written = 0;
    let mut read = largest.range.start;
    while read < largest.range.end {
        let end = piece_end(&line, read, largest.range.end);
        let piece = pieces.decode(&line[read..end])?;
        line[written..written + piece.len()].copy_from_slice(piece);
        written += piece.len();
        read = end;
    }
    line.truncate(written);
    largest.path.set(&mut value, line)?;
    Ok(value)
}

/// A large string found in the line, set in the value once unescaped.
struct Pending {
    /// The string's content (between its quotes) in the line.
    range: Range<usize>,
    path: Path,
}

/// Where a value sits in the tree.
#[derive(Clone, Default)]
struct Path(Vec<Step>);

#[derive(Clone)]
enum Step {
    Key(String),
    Index(usize),
}

impl Path {
    fn set(self, root: &mut Value, utf8: Vec<u8>) -> Result<(), serde_json::Error> {
        let text = String::from_utf8(utf8).map_err(serde::de::Error::custom)?;
        let mut at = root;
        for step in &self.0 {
            let next = match step {
                Step::Key(key) => at.get_mut(key.as_str()),
                Step::Index(i) => at.get_mut(*i),
            };
            at = next.ok_or_else(|| serde::de::Error::custom("a parsed string lost its place"))?;
        }
        *at = Value::String(text);
        Ok(())
    }
}

/// Builds the value of a large line, leaving its large strings for later.
struct Walk<'s> {
    /// The address of the line, to find a raw value's place in it.
    base: usize,
    strings: &'s mut Vec<Pending>,
    path: Vec<Step>,
}

impl Walk<'_> {
    fn value(&mut self, raw: &RawValue, depth: usize) -> Result<Value, serde_json::Error> {
        let text = raw.get().trim_start();
        if text.len() < LARGE {
            return serde_json::from_str(text);
        }
        if depth >= MAX_DEPTH {
            return Err(serde::de::Error::custom("recursion limit exceeded"));
        }
        match text.as_bytes()[0] {
            b'"' => {
                let start = text.as_ptr() as usize - self.base + 1;
                self.strings.push(Pending {
                    range: start..start + text.trim_end().len() - 2,
                    path: Path(self.path.clone()),
                });
                Ok(Value::Null)
            }
            b'[' => {
                let items: Vec<&RawValue> = serde_json::from_str(text)?;
                let mut values = Vec::with_capacity(items.len());
                for (i, item) in items.into_iter().enumerate() {
                    self.path.push(Step::Index(i));
                    let value = self.value(item, depth + 1);
                    self.path.pop();
                    values.push(value?);
                }
                Ok(Value::Array(values))
            }
            b'{' => {
                let Fields(fields) = serde_json::from_str(text)?;
                let mut map = Map::with_capacity(fields.len());
                for (key, item) in fields {
                    self.path.push(Step::Key(key.clone()));
                    let value = self.value(item, depth + 1);
                    self.path.pop();
                    map.insert(key, value?);
                }
                Ok(Value::Object(map))
            }
            _ => serde_json::from_str(text),
        }
    }
}

/// An object's fields in order, their values raw.
struct Fields<'a>(Vec<(String, &'a RawValue)>);

impl<'de: 'a, 'a> Deserialize<'de> for Fields<'a> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct FieldsVisitor;
        impl<'de> Visitor<'de> for FieldsVisitor {
            type Value = Fields<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a JSON object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut fields = Vec::new();
                while let Some(field) = map.next_entry::<String, &'de RawValue>()? {
                    fields.push(field);
                }
                Ok(Fields(fields))
            }
        }
        deserializer.deserialize_map(FieldsVisitor)
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
