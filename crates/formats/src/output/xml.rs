//! XML (quick-xml). The convention, documented in the user guide (docs/guide/files.md):
//! - the document element is `<response>`;
//! - an object becomes child elements named after its keys; a key that is not a valid XML name
//!   is mapped to one (invalid characters → `_`, a leading digit, `-`, `.` or `xml` gets a `_`
//!   prefix, an empty key is `_`) and the original key is kept in a `key` attribute;
//! - a list becomes repeated `<item>` elements inside an element with `type="list"`;
//! - an empty object is an empty element with `type="object"` (an empty string is an empty
//!   element without a type);
//! - strings are escaped text; numbers, booleans and null carry `type="number"|"boolean"|"null"`
//!   so a reader can recover the JSON exactly;
//! - characters XML 1.0 cannot contain (most C0 controls) are replaced by U+FFFD and counted.

use std::borrow::Cow;
use std::io::Write;

use quick_xml::Writer;
use quick_xml::events::{BytesDecl, BytesEnd, BytesStart, BytesText, Event};
use serde_json::Value;

use super::{Payload, Rendered};

pub fn write(payload: &Payload, out: &mut dyn Write) -> std::io::Result<Rendered> {
    let mut w = Writer::new_with_indent(out, b' ', 2);
    w.write_event(Event::Decl(BytesDecl::new("1.0", Some("UTF-8"), None)))?;
    let mut replaced = 0;
    let value = payload.to_value()?;
    element(&mut w, "response", None, &value, &mut replaced)?;
    w.get_mut().write_all(b"\n")?;
    Ok(Rendered {
        replaced_chars: replaced,
        ..Rendered::default()
    })
}

fn element<W: Write>(
    w: &mut Writer<W>,
    name: &str,
    original_key: Option<&str>,
    value: &Value,
    replaced: &mut usize,
) -> std::io::Result<()> {
    let mut start = BytesStart::new(name);
    if let Some(key) = original_key {
        let key = escape_exact(&clean(key, replaced), true);
        start.push_attribute(quick_xml::events::attributes::Attribute {
            key: quick_xml::name::QName("key"),
            value: Cow::Owned(key),
        });
    }
    match value {
        Value::Null => {
            start.push_attribute(("type", "null"));
            w.write_event(Event::Empty(start))?;
        }
        Value::Bool(b) => {
            start.push_attribute(("type", "boolean"));
            text_element(w, start, name, &b.to_string())?;
        }
        Value::Number(n) => {
            start.push_attribute(("type", "number"));
            text_element(w, start, name, &n.to_string())?;
        }
        Value::String(s) => {
            let s = clean(s, replaced);
            if s.is_empty() {
                w.write_event(Event::Empty(start))?;
            } else {
                text_element(w, start, name, &s)?;
            }
        }
        Value::Array(items) => {
            start.push_attribute(("type", "list"));
            w.write_event(Event::Start(start))?;
            for item in items {
                element(w, "item", None, item, replaced)?;
            }
            w.write_event(Event::End(BytesEnd::new(name)))?;
        }
        Value::Object(map) if map.is_empty() => {
            start.push_attribute(("type", "object"));
            w.write_event(Event::Empty(start))?;
        }
        Value::Object(map) => {
            w.write_event(Event::Start(start))?;
            for (key, v) in map {
                let valid = element_name(key);
                let original = (valid != *key).then_some(key.as_str());
                element(w, &valid, original, v, replaced)?;
            }
            w.write_event(Event::End(BytesEnd::new(name)))?;
        }
    }
    Ok(())
}

fn text_element<W: Write>(
    w: &mut Writer<W>,
    start: BytesStart<'_>,
    name: &str,
    text: &str,
) -> std::io::Result<()> {
    w.write_event(Event::Start(start))?;
    w.write_event(Event::Text(BytesText::from_escaped(escape_exact(
        text, false,
    ))))?;
    w.write_event(Event::End(BytesEnd::new(name)))?;
    Ok(())
}

/// Escapes markup characters, and the whitespace XML parsers would normalise (CR in text; CR,
/// LF and tab in attributes) as character references, so values come back exactly.
fn escape_exact(s: &str, attribute: bool) -> String {
    let escaped = quick_xml::escape::escape(s);
    let mut out = String::with_capacity(escaped.len());
    for c in escaped.chars() {
        match c {
            '\r' => out.push_str("&#13;"),
            '\n' if attribute => out.push_str("&#10;"),
            '\t' if attribute => out.push_str("&#9;"),
            c => out.push(c),
        }
    }
    out
}

/// A valid XML element name for `key` (see the module docs).
pub fn element_name(key: &str) -> String {
    let mut name: String = key
        .chars()
        .map(|c| {
            if c.is_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    let bad_start = name
        .chars()
        .next()
        .is_none_or(|c| !(c.is_alphabetic() || c == '_'));
    if bad_start || name.to_ascii_lowercase().starts_with("xml") {
        name.insert(0, '_');
    }
    name
}

/// Replaces characters XML 1.0 forbids (C0 controls other than tab, LF, CR; U+FFFE/FFFF).
fn clean<'a>(s: &'a str, replaced: &mut usize) -> Cow<'a, str> {
    let bad = |c: char| {
        (c < ' ' && !matches!(c, '\t' | '\n' | '\r')) || matches!(c, '\u{FFFE}' | '\u{FFFF}')
    };
    if !s.chars().any(bad) {
        return Cow::Borrowed(s);
    }
    Cow::Owned(
        s.chars()
            .map(|c| {
                if bad(c) {
                    *replaced += 1;
                    '\u{FFFD}'
                } else {
                    c
                }
            })
            .collect(),
    )
}
