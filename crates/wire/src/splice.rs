//! Pre-serialised JSON written in place of a placeholder when a message goes out.
//!
//! A caller that produces a large value as JSON text (a file's rows, converted as the file is
//! read) registers the bytes and puts the splice's placeholder where the value belongs in the
//! message; [`crate::Lines`] writes the bytes in its place. The value is never built as a tree
//! and never serialised twice. A placeholder holds a random 128-bit number: text that is not a
//! registered placeholder (whatever a peer or a model may have typed) is written as it is.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::{Arc, LazyLock, Mutex, MutexGuard};

use serde_json::Value;

/// What a placeholder starts with; serialised, the control character becomes `\u0001`.
const MARK: &str = "\u{1}offload-splice:";
const MARK_JSON: &[u8] = b"\"\\u0001offload-splice:";
const ID_DIGITS: usize = 32;

static REGISTRY: LazyLock<Mutex<HashMap<u128, Arc<Vec<u8>>>>> = LazyLock::new(Mutex::default);

fn registry() -> MutexGuard<'static, HashMap<u128, Arc<Vec<u8>>>> {
    REGISTRY.lock().unwrap_or_else(|p| p.into_inner())
}

/// Registered JSON; unregistered when dropped.
#[derive(Debug)]
pub struct Splice {
    id: u128,
    len: usize,
}

impl Splice {
    /// Registers `json`, which must be exactly one JSON value: anything else would break the
    /// message it goes into, so it is checked here.
    pub fn new(json: Vec<u8>) -> Result<Self, serde_json::Error> {
        serde_json::from_slice::<serde::de::IgnoredAny>(&json)?;
        let id = fastrand::u128(..);
        let len = json.len();
        registry().insert(id, Arc::new(json));
        Ok(Self { id, len })
    }

    /// The string to put where the value goes.
    pub fn placeholder(&self) -> Value {
        Value::String(format!("{MARK}{:0width$x}", self.id, width = ID_DIGITS))
    }

    /// The size of the JSON.
    pub fn len(&self) -> usize {
        self.len
    }

    /// Whether the JSON is empty (never: it is one value).
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }

    /// How much longer a message gets when the placeholder is replaced (negative: shorter).
    pub fn growth(&self) -> i64 {
        let placeholder = MARK_JSON.len() + ID_DIGITS + 1;
        self.len as i64 - placeholder as i64
    }
}

impl Drop for Splice {
    fn drop(&mut self) {
        registry().remove(&self.id);
    }
}

/// Replaces each registered placeholder in `value` by the value its JSON holds: for a
/// transport that cannot write splices (HTTP), at the cost of building the tree after all.
pub fn expand(value: &mut Value) {
    match value {
        Value::String(s) => {
            let id = s
                .strip_prefix(MARK)
                .filter(|d| d.len() == ID_DIGITS)
                .and_then(|d| u128::from_str_radix(d, 16).ok());
            let json = id.and_then(|id| registry().get(&id).cloned());
            if let Some(parsed) = json.and_then(|j| serde_json::from_slice(&j).ok()) {
                *value = parsed;
            }
        }
        Value::Array(items) => items.iter_mut().for_each(expand),
        Value::Object(fields) => fields.values_mut().for_each(expand),
        _ => {}
    }
}

/// A piece of an outgoing message.
#[derive(Debug)]
pub(crate) enum Part {
    /// Bytes of the serialised message.
    Own(Range<usize>),
    /// Registered JSON in place of a placeholder.
    Json(Arc<Vec<u8>>),
}

/// The serialised message as pieces, each registered placeholder replaced by its JSON.
pub(crate) fn parts(message: &[u8]) -> Vec<Part> {
    let registry = registry();
    if registry.is_empty() {
        return vec![Part::Own(0..message.len())];
    }
    let mut parts = Vec::new();
    let mut from = 0;
    for at in memchr::memmem::find_iter(message, MARK_JSON) {
        if at < from {
            continue;
        }
        let digits = at + MARK_JSON.len();
        let end = digits + ID_DIGITS;
        let Some(id) = message
            .get(digits..end)
            .filter(|_| message.get(end) == Some(&b'"'))
            .and_then(|d| std::str::from_utf8(d).ok())
            .and_then(|d| u128::from_str_radix(d, 16).ok())
        else {
            continue;
        };
        if let Some(json) = registry.get(&id) {
            parts.push(Part::Own(from..at));
            parts.push(Part::Json(json.clone()));
            from = end + 1;
        }
    }
    parts.push(Part::Own(from..message.len()));
    parts
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn written(message: &Value) -> Vec<u8> {
        let bytes = serde_json::to_vec(message).unwrap();
        let mut out = Vec::new();
        for part in parts(&bytes) {
            match part {
                Part::Own(r) => out.extend_from_slice(&bytes[r]),
                Part::Json(j) => out.extend_from_slice(&j),
            }
        }
        out
    }

    #[test]
    fn a_placeholder_is_written_as_its_json() {
        let rows = serde_json::to_vec(&json!([{"a": 1, "b": "x\"y"}, {"a": null}])).unwrap();
        let splice = Splice::new(rows).unwrap();
        let other = Splice::new(b"\"second\"".to_vec()).unwrap();
        let message = json!({"params": {"arguments": {
            "table": "t", "rows": splice.placeholder(), "more": [other.placeholder(), 1]}}});
        let out = written(&message);
        let back: Value = serde_json::from_slice(&out).unwrap();
        assert_eq!(
            back,
            json!({"params": {"arguments": {
                "table": "t", "rows": [{"a": 1, "b": "x\"y"}, {"a": null}], "more": ["second", 1]}}})
        );
        let plain = serde_json::to_vec(&message).unwrap().len() as i64;
        assert_eq!(
            out.len() as i64,
            plain + splice.growth() + other.growth(),
            "growth says how the size changes"
        );
    }

    #[test]
    fn unregistered_or_dropped_placeholders_stay_text() {
        let splice = Splice::new(b"[1]".to_vec()).unwrap();
        let placeholder = splice.placeholder();
        // Typed by someone else: a well-formed placeholder that is not registered.
        let forged = Value::String(format!("{MARK}{:032x}", 42u128));
        let cut = Value::String(format!("{MARK}1234"));
        let message = json!([forged, cut, placeholder]);
        let back: Value = serde_json::from_slice(&written(&message)).unwrap();
        assert_eq!(back, json!([message[0], message[1], [1]]));
        drop(splice);
        let back: Value = serde_json::from_slice(&written(&message)).unwrap();
        assert_eq!(back, message, "a dropped splice is no longer replaced");
    }

    #[test]
    fn expanding_gives_what_writing_gives() {
        let splice = Splice::new(br#"[{"a":1},"x"]"#.to_vec()).unwrap();
        let forged = Value::String(format!("{MARK}{:032x}", 42u128));
        let mut message = json!({"a": {"rows": splice.placeholder()}, "b": [forged.clone()]});
        let written: Value = serde_json::from_slice(&written(&message)).unwrap();
        expand(&mut message);
        assert_eq!(
            message,
            json!({"a": {"rows": [{"a": 1}, "x"]}, "b": [forged]})
        );
        assert_eq!(message, written);
    }

    #[test]
    fn only_one_json_value_registers() {
        for bad in [&b""[..], b"[1", b"1 2", b"{\"a\":}", b"\xff"] {
            assert!(Splice::new(bad.to_vec()).is_err(), "{bad:?}");
        }
    }
}
