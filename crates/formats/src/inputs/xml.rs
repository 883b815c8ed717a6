//! XML in, with quick-xml and no DTD processing at all: a DOCTYPE is refused, so no entity of any
//! kind (external or internal) is ever expanded; only the five predefined entities and character
//! references are decoded.
//!
//! Convention (documented in the user guide, docs/guide/arguments.md): the document is `{"<root>": <root content>}`; an element's
//! attributes are `"@name"` keys; its child elements are keys by name, repeated names becoming a
//! list in document order; its text is `"#text"` when it also has attributes or children, and the
//! element's whole value (a string) otherwise; an empty element without attributes is `""`.

use quick_xml::events::{BytesStart, Event};
use quick_xml::reader::Reader;
use serde_json::{Map, Value};

use super::InputError;

struct Node {
    name: String,
    map: Map<String, Value>,
    text: String,
}

pub fn parse(text: &str) -> Result<Value, InputError> {
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Node> = Vec::new();
    let mut root: Option<(String, Value)> = None;
    // Counted in bytes: the reader's position can fall inside a character (found by fuzzing:
    // slicing the text there panicked).
    let at = |r: &Reader<&[u8]>| {
        let pos = (r.buffer_position() as usize).min(text.len());
        bytecount::count(&text.as_bytes()[..pos], b'\n') as u64 + 1
    };
    loop {
        let event = reader.read_event().map_err(|e| {
            InputError::parse(format!("line {}: {e}", at(&reader))).at_line(at(&reader))
        })?;
        match event {
            Event::DocType(_) => {
                return Err(InputError::parse(format!(
                    "line {}: the XML has a DOCTYPE; DTDs and entity declarations are refused for safety",
                    at(&reader)
                )));
            }
            Event::Start(e) | Event::Empty(e) if stack.is_empty() && root.is_some() => {
                return Err(not_well_formed(
                    at(&reader),
                    format!(
                        "a second root element <{}> (a document has one)",
                        e.name().as_ref()
                    ),
                ));
            }
            Event::Start(e) => stack.push(open(&e).map_err(|m| not_well_formed(at(&reader), m))?),
            Event::Empty(e) => {
                let node = open(&e).map_err(|m| not_well_formed(at(&reader), m))?;
                close(node, &mut stack, &mut root);
            }
            Event::Text(t) => {
                let content = t.xml_content(quick_xml::XmlVersion::Implicit1_0);
                match stack.last_mut() {
                    Some(top) => top.text.push_str(&content),
                    None if content.trim().is_empty() => {}
                    None => {
                        return Err(not_well_formed(
                            at(&reader),
                            "text outside the root element".into(),
                        ));
                    }
                }
            }
            Event::CData(c) => match stack.last_mut() {
                Some(top) => top.text.push_str(&c),
                None => {
                    return Err(not_well_formed(
                        at(&reader),
                        "CDATA outside the root element".into(),
                    ));
                }
            },
            Event::GeneralRef(r) => {
                let Some(top) = stack.last_mut() else {
                    return Err(not_well_formed(
                        at(&reader),
                        "an entity reference outside the root element".into(),
                    ));
                };
                match r.resolve_char_ref() {
                    Ok(Some(c)) => top.text.push(c),
                    _ => {
                        let name: &str = &r;
                        let c = match name {
                            "lt" => '<',
                            "gt" => '>',
                            "amp" => '&',
                            "apos" => '\'',
                            "quot" => '"',
                            other => {
                                return Err(InputError::parse(format!(
                                    "line {}: unknown entity &{other}; (custom entities are not expanded)",
                                    at(&reader)
                                )));
                            }
                        };
                        top.text.push(c);
                    }
                }
            }
            Event::End(_) => {
                if let Some(node) = stack.pop() {
                    close(node, &mut stack, &mut root);
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    let (name, value) = root.ok_or_else(|| InputError::parse("the XML has no root element"))?;
    let mut doc = Map::new();
    doc.insert(name, value);
    Ok(Value::Object(doc))
}

fn not_well_formed(line: u64, what: String) -> InputError {
    InputError::parse(format!("line {line}: {what}")).at_line(line)
}

/// Whether `name` is an XML name (the XML 1.0 `Name` production, without its rarer ranges):
/// quick-xml does not check names, so `<<!DOCTYPE x/>` would otherwise be an element.
fn valid_name(name: &str) -> bool {
    let start = |c: char| c.is_alphabetic() || matches!(c, '_' | ':');
    let rest = |c: char| {
        start(c)
            || c.is_alphanumeric()
            || matches!(c, '-' | '.' | '\u{B7}' | '\u{300}'..='\u{36F}' | '\u{203F}'..='\u{2040}')
    };
    let mut chars = name.chars();
    chars.next().is_some_and(start) && chars.all(rest)
}

fn open(e: &BytesStart<'_>) -> Result<Node, String> {
    let name = e.name().as_ref().to_owned();
    if !valid_name(&name) {
        return Err(format!("<{name}> is not a valid element name"));
    }
    let mut map = Map::new();
    for a in e.attributes() {
        let a = a.map_err(|err| format!("bad attribute: {err}"))?;
        let key = a.key.as_ref();
        if !valid_name(key) {
            return Err(format!("{key:?} is not a valid attribute name in <{name}>"));
        }
        if a.value.contains('<') {
            return Err(format!("the value of {key} in <{name}> holds a raw '<'"));
        }
        let value = a
            .normalized_value(quick_xml::XmlVersion::Implicit1_0)
            .map_err(|err| format!("bad attribute value: {err}"))?;
        map.insert(format!("@{key}"), Value::String(value.into_owned()));
    }
    Ok(Node {
        name,
        map,
        text: String::new(),
    })
}

fn close(node: Node, stack: &mut [Node], root: &mut Option<(String, Value)>) {
    let Node {
        name,
        mut map,
        text,
    } = node;
    let trimmed = text.trim();
    let value = if map.is_empty() {
        Value::String(if trimmed.is_empty() {
            String::new()
        } else {
            text
        })
    } else {
        if !trimmed.is_empty() {
            map.insert("#text".into(), Value::String(text));
        }
        Value::Object(map)
    };
    match stack.last_mut() {
        Some(parent) => match parent.map.get_mut(&name) {
            // Children are strings or objects, so a list here is one we made for repeats.
            Some(Value::Array(items)) => items.push(value),
            Some(existing) => {
                let first = std::mem::take(existing);
                *existing = Value::Array(vec![first, value]);
            }
            None => {
                parent.map.insert(name, value);
            }
        },
        None => *root = Some((name, value)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_convention() {
        let v = parse(r#"<?xml version="1.0"?><catalog n="2"><book id="1"><title>A &amp; B</title></book><book id="2"><title>C</title><note/></book></catalog>"#).unwrap();
        assert_eq!(
            v,
            json!({"catalog": {"@n": "2", "book": [
                {"@id": "1", "title": "A & B"},
                {"@id": "2", "title": "C", "note": ""}
            ]}})
        );
    }

    #[test]
    fn doctype_and_custom_entities_are_refused_never_expanded() {
        let bomb = r#"<?xml version="1.0"?><!DOCTYPE lolz [<!ENTITY lol "lol"><!ENTITY lol2 "&lol;&lol;">]><lolz>&lol2;</lolz>"#;
        assert!(parse(bomb).unwrap_err().to_string().contains("DOCTYPE"));
        let xxe = r#"<!DOCTYPE x [<!ENTITY e SYSTEM "file:///etc/passwd">]><x>&e;</x>"#;
        assert!(parse(xxe).is_err());
        assert!(
            parse("<x>&custom;</x>")
                .unwrap_err()
                .to_string()
                .contains("not expanded")
        );
    }

    #[test]
    fn malformed_xml_names_the_line() {
        let e = parse("<a>\n<b>\n</a>").unwrap_err();
        assert!(e.to_string().contains("line"), "{e}");
        assert!(parse("").is_err());
    }

    /// Found by fuzzing: quick-xml reads these without complaint, and a second root used to
    /// replace the first silently.
    #[test]
    fn documents_that_are_not_well_formed_are_refused() {
        for (xml, why) in [
            ("<a/><b/>", "second root element"),
            ("<a>1</a>\n<a>2</a>", "second root element"),
            ("<<!DOCTYPE x/>", "not a valid element name"),
            ("<1a/>", "not a valid element name"),
            ("<a 1b=\"x\"/>", "not a valid attribute name"),
            ("<a b=\"<!DOCTYPE x>\"/>", "raw '<'"),
            ("text<a/>", "text outside"),
            ("<a/>trailing", "text outside"),
            ("<a/>&amp;", "outside the root"),
            ("\u{feff}\u{feff}ee", "line 1"),
        ] {
            let e = parse(xml).unwrap_err();
            assert!(e.to_string().contains(why), "{xml}: {e}");
        }
        assert_eq!(
            parse("\n<ns:a xml:lang=\"en\" é-b.c=\"1\"/>\n").unwrap(),
            json!({"ns:a": {"@xml:lang": "en", "@é-b.c": "1"}})
        );
    }
}
