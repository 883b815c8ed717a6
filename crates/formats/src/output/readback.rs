//! Reading rendered files back by the documented conventions, for the round-trip tests and the
//! fuzz targets (feature `readback`). These panic on anything that does not read back: that is
//! what the callers check.

use serde_json::Value;

use super::table;

/// The expected table: header and rows as text, by the documented flattening.
pub fn expected_table(v: &Value) -> (Vec<String>, Vec<Vec<String>>) {
    let view = table::find(v).unwrap();
    let cols = table::columns(view.rows);
    let rows = view
        .rows
        .iter()
        .map(|r| {
            table::row_cells(r, &cols)
                .iter()
                .map(|c| c.as_text().into_owned())
                .collect()
        })
        .collect();
    (cols.into_iter().collect(), rows)
}

/// Reads our XML back by the documented convention.
pub fn xml_to_value(text: &str) -> Value {
    use quick_xml::events::Event;
    use quick_xml::reader::Reader;
    enum Frame {
        Node {
            kind: Option<String>,
            key: Option<String>,
            name: String,
            children: Vec<(String, Value)>,
            text: String,
        },
    }
    let mut reader = Reader::from_str(text);
    let mut stack: Vec<Frame> = Vec::new();
    let mut root = None;
    let attrs = |e: &quick_xml::events::BytesStart| {
        let mut kind = None;
        let mut key = None;
        for a in e.attributes() {
            let a = a.unwrap();
            let v = a
                .normalized_value(quick_xml::XmlVersion::Explicit1_0)
                .unwrap()
                .into_owned();
            match a.key.as_ref() {
                "type" => kind = Some(v),
                "key" => key = Some(v),
                _ => {}
            }
        }
        (kind, key)
    };
    let finish = |kind: Option<String>, children: Vec<(String, Value)>, text: String| -> Value {
        match kind.as_deref() {
            Some("null") => Value::Null,
            Some("boolean") => Value::Bool(text == "true"),
            Some("number") => serde_json::from_str(&text).unwrap(),
            Some("list") => Value::Array(children.into_iter().map(|(_, v)| v).collect()),
            _ if !children.is_empty() => Value::Object(children.into_iter().collect()),
            _ => Value::String(text),
        }
    };
    loop {
        match reader.read_event().unwrap() {
            Event::Start(e) => {
                let (kind, key) = attrs(&e);
                let name = e.name().as_ref().to_owned();
                stack.push(Frame::Node {
                    kind,
                    key,
                    name,
                    children: vec![],
                    text: String::new(),
                });
            }
            Event::Empty(e) => {
                let (kind, key) = attrs(&e);
                let name = e.name().as_ref().to_owned();
                let v = match kind.as_deref() {
                    Some("null") => Value::Null,
                    Some("object") => Value::Object(Default::default()),
                    Some("list") => Value::Array(Vec::new()),
                    _ => Value::String(String::new()),
                };
                match stack.last_mut() {
                    Some(Frame::Node { children, .. }) => children.push((key.unwrap_or(name), v)),
                    None => root = Some(v),
                }
            }
            Event::Text(t) => {
                let Some(Frame::Node { text, .. }) = stack.last_mut() else {
                    continue;
                };
                text.push_str(&t.xml_content(quick_xml::XmlVersion::Explicit1_0));
            }
            Event::GeneralRef(r) => {
                let Some(Frame::Node { text, .. }) = stack.last_mut() else {
                    continue;
                };
                let c = r
                    .resolve_char_ref()
                    .unwrap()
                    .map(String::from)
                    .unwrap_or_else(|| {
                        quick_xml::escape::unescape(&format!("&{};", &*r))
                            .unwrap()
                            .into_owned()
                    });
                text.push_str(&c);
            }
            Event::End(_) => {
                let Frame::Node {
                    kind,
                    key,
                    name,
                    children,
                    text,
                } = stack.pop().unwrap();
                let v = finish(kind, children, text);
                match stack.last_mut() {
                    Some(Frame::Node { children, .. }) => children.push((key.unwrap_or(name), v)),
                    None => root = Some(v),
                }
            }
            Event::Eof => break,
            _ => {}
        }
    }
    root.unwrap()
}
