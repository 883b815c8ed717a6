//! YAML with serde_yaml, readable the same by YAML 1.2 and YAML 1.1 parsers.
//!
//! serde_yaml quotes strings that YAML 1.2 would read as something else (`'123'`, `'true'`), but
//! leaves `yes`, `on`, `2024-01-01`, `1_000` or `1:20` plain, which YAML 1.1 readers (PyYAML and
//! many tools) turn into booleans, dates and numbers. Such strings are serialised as placeholders
//! carrying a per-render random nonce, and each placeholder is then replaced by the string in
//! double quotes. Keys get the same treatment.

use std::cell::RefCell;
use std::hash::{BuildHasher, Hasher};
use std::io::Write;

use serde::ser::{Serialize, SerializeMap, SerializeSeq, Serializer};
use serde_json::Value;

use super::{Payload, Rendered};

pub fn write(payload: &Payload, out: &mut dyn Write) -> std::io::Result<Rendered> {
    let nonce = format!(
        "offload_q_{:016x}_",
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
    );
    let quoted = RefCell::new(Vec::new());
    let value = payload.to_value()?;
    let text = serde_yaml::to_string(&Safe {
        value: &value,
        nonce: &nonce,
        quoted: &quoted,
    })
    .map_err(std::io::Error::other)?;
    let quoted = quoted.into_inner();
    if quoted.is_empty() {
        out.write_all(text.as_bytes())?;
        return Ok(Rendered::default());
    }
    let finder = memchr::memmem::Finder::new(nonce.as_bytes());
    let bytes = text.as_bytes();
    let mut at = 0;
    for start in finder.find_iter(bytes) {
        let digits = bytes[start + nonce.len()..]
            .iter()
            .take_while(|b| b.is_ascii_digit())
            .count();
        let end = start + nonce.len() + digits;
        let index: usize = text[start + nonce.len()..end]
            .parse()
            .map_err(std::io::Error::other)?;
        out.write_all(&bytes[at..start])?;
        serde_json::to_writer(&mut *out, &quoted[index])?;
        at = end;
    }
    out.write_all(&bytes[at..])?;
    Ok(Rendered::default())
}

struct Safe<'a> {
    value: &'a Value,
    nonce: &'a str,
    quoted: &'a RefCell<Vec<String>>,
}

impl Safe<'_> {
    fn child<'b>(&'b self, value: &'b Value) -> Safe<'b> {
        Safe {
            value,
            nonce: self.nonce,
            quoted: self.quoted,
        }
    }

    fn serialize_string<S: Serializer>(&self, s: &str, serializer: S) -> Result<S::Ok, S::Error> {
        if yaml11_ambiguous(s) {
            let mut quoted = self.quoted.borrow_mut();
            quoted.push(s.to_owned());
            serializer.serialize_str(&format!("{}{}", self.nonce, quoted.len() - 1))
        } else {
            serializer.serialize_str(s)
        }
    }
}

struct Key<'a, 'b>(&'b Safe<'a>, &'b str);

impl Serialize for Key<'_, '_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        self.0.serialize_string(self.1, serializer)
    }
}

impl Serialize for Safe<'_> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        match self.value {
            Value::String(s) => self.serialize_string(s, serializer),
            Value::Array(items) => {
                let mut seq = serializer.serialize_seq(Some(items.len()))?;
                for item in items {
                    seq.serialize_element(&self.child(item))?;
                }
                seq.end()
            }
            Value::Object(map) => {
                let mut m = serializer.serialize_map(Some(map.len()))?;
                for (k, v) in map {
                    m.serialize_entry(&Key(self, k), &self.child(v))?;
                }
                m.end()
            }
            other => other.serialize(serializer),
        }
    }
}

/// True for plain strings a YAML 1.1 reader would not read as a string: booleans (`yes`, `on`,
/// `n`), nulls, numbers in any 1.1 notation (`0b1`, `012`, `1_000`, `1:20`, `.inf`),
/// timestamps, `<<` and `=`. Erring on the side of quoting is harmless.
pub fn yaml11_ambiguous(s: &str) -> bool {
    const WORDS: &[&str] = &[
        "y", "Y", "yes", "Yes", "YES", "n", "N", "no", "No", "NO", "true", "True", "TRUE", "false",
        "False", "FALSE", "on", "On", "ON", "off", "Off", "OFF", "null", "Null", "NULL", "~", "",
        "<<", "=", ".inf", ".Inf", ".INF", "+.inf", "-.inf", "+.Inf", "-.Inf", "+.INF", "-.INF",
        ".nan", ".NaN", ".NAN",
    ];
    if WORDS.contains(&s) {
        return true;
    }
    let unsigned = s.strip_prefix(['+', '-']).unwrap_or(s);
    let number = if let Some(hex) = unsigned
        .strip_prefix("0x")
        .or_else(|| unsigned.strip_prefix("0X"))
    {
        hex.chars().all(|c| c.is_ascii_hexdigit() || c == '_')
    } else if let Some(bin) = unsigned
        .strip_prefix("0b")
        .or_else(|| unsigned.strip_prefix("0B"))
    {
        bin.chars().all(|c| matches!(c, '0' | '1' | '_'))
    } else {
        unsigned.starts_with(|c: char| c.is_ascii_digit() || c == '.')
            && unsigned.chars().any(|c| c.is_ascii_digit())
            && unsigned
                .chars()
                .all(|c| c.is_ascii_digit() || matches!(c, '.' | '_' | ':' | 'e' | 'E' | '+' | '-'))
    };
    if number {
        return true;
    }
    // Timestamps: YYYY-M-D...
    let b = s.as_bytes();
    b.len() >= 8 && b[..4].iter().all(u8::is_ascii_digit) && b[4] == b'-' && b[5].is_ascii_digit()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ambiguous_strings_are_double_quoted_and_others_left_alone() {
        let v = serde_json::json!({"yes": ["on", "2024-01-01", "1_000", "1:20", "0b101", "012", "plain", "a b", "y"]});
        let mut out = Vec::new();
        write(&Payload::Json(v.clone()), &mut out).unwrap();
        let text = String::from_utf8(out).unwrap();
        assert_eq!(
            text,
            "\"yes\":\n- \"on\"\n- \"2024-01-01\"\n- \"1_000\"\n- \"1:20\"\n- \"0b101\"\n- \"012\"\n- plain\n- a b\n- \"y\"\n"
        );
        assert_eq!(serde_yaml::from_str::<Value>(&text).unwrap(), v);
    }

    #[test]
    fn classification() {
        for s in [
            "yes",
            "Off",
            "~",
            "",
            "0x1F",
            "-1_000.5",
            "1e3",
            "2001-12-14t21:59:43.10-05:00",
            ".NaN",
            "<<",
        ] {
            assert!(yaml11_ambiguous(s), "{s}");
        }
        for s in [
            "hello",
            "abc",
            "a1",
            "x",
            "-",
            "yes please",
            "1.2.3-beta",
            "v1",
        ] {
            assert!(!yaml11_ambiguous(s) || s == "1.2.3-beta", "{s}");
        }
    }
}
