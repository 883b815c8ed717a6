//! Round trips with Rust parsers (csv, serde_yaml, quick-xml, serde_json). The same outputs are
//! also read back by Python's csv, PyYAML, ruamel.yaml (YAML 1.2), ElementTree, markdown-it and
//! html.parser in the end-to-end suite.

use super::*;
use serde_json::json;

/// Awkward data: everything that breaks naive writers.
pub fn awkward() -> Value {
    json!([
        {"id": 1, "name": "plain", "yes": "yes", "num_str": "123", "null_str": "null",
         "hash": "# x", "colon": "a: b", "multi": "line 1\nline 2\r\nline 3", "quote": "say \"hi\", 'there'",
         "pipe": "a | b", "lt": "<script>alert(1)</script> & more", "tab": "a\tb", "uni": "日本語 ✓ é",
         "spaces": "  padded  ", "empty": "", "meta": {"owner": {"id": 7, "name": "o"}}, "tags": ["a", "b"],
         "flag": true, "ratio": 0.5, "nothing": null, "backslash": "C:\\temp\\x", "star": "*bold* _it_ `code`"},
        {"id": 2, "name": "second", "1st key": "k", "xml": "reserved", "a-b.c": "ok", "": "empty key",
         "meta": {"owner": {"id": 8}}, "tilde": "~", "bool_str": "true", "hex": "0x10", "exp": "1e3",
         "dash": "-", "at": "@x", "ctrl": "bell\u{7}"}
    ])
}

fn render_to_string(payload: &Payload, format: Format) -> (String, Rendered) {
    let mut out = Vec::new();
    let r = render(payload, format, &mut out).unwrap();
    (String::from_utf8(out).unwrap(), r)
}

/// The expected table: header and rows as text, by the documented flattening.
fn expected_table(v: &Value) -> (Vec<String>, Vec<Vec<String>>) {
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

#[test]
fn csv_and_tsv_read_back_with_the_csv_crate() {
    let v = awkward();
    let (header, rows) = expected_table(&v);
    for (format, delim) in [(Format::Csv, b','), (Format::Tsv, b'\t')] {
        let (text, r) = render_to_string(&Payload::Json(v.clone()), format);
        let info = r.table.unwrap();
        assert_eq!(info.rows, 2);
        let mut rd = csv::ReaderBuilder::new()
            .delimiter(delim)
            .from_reader(text.as_bytes());
        let got_header: Vec<String> = rd.headers().unwrap().iter().map(str::to_owned).collect();
        assert_eq!(got_header, header, "{format:?}");
        let got: Vec<Vec<String>> = rd
            .records()
            .map(|r| r.unwrap().iter().map(str::to_owned).collect())
            .collect();
        assert_eq!(got, rows, "{format:?}");
    }
}

#[test]
fn yaml_reads_back_to_the_same_value() {
    let v = awkward();
    let (text, _) = render_to_string(&Payload::Json(v.clone()), Format::Yaml);
    let back: Value = serde_yaml::from_str(&text).unwrap();
    assert_eq!(back, v);
    for s in [
        "yes", "no", "on", "123", "null", "~", "true", "0x10", "1e3", "# x", "a: b", "-", "@x",
    ] {
        let (text, _) = render_to_string(&Payload::Json(json!({"k": s})), Format::Yaml);
        assert!(
            text.contains('\'') || text.contains('"'),
            "{s:?} must be quoted: {text}"
        );
    }
}

/// Reads our XML back by the documented convention.
fn xml_to_value(text: &str) -> Value {
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
                let v = if kind.as_deref() == Some("null") {
                    Value::Null
                } else {
                    Value::String(String::new())
                };
                let Some(Frame::Node { children, .. }) = stack.last_mut() else {
                    panic!()
                };
                children.push((key.unwrap_or(name), v));
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

#[test]
fn xml_is_well_formed_and_reads_back_by_the_convention() {
    let mut v = awkward();
    // XML 1.0 cannot hold U+0007: it is replaced and counted.
    let (text, r) = render_to_string(&Payload::Json(v.clone()), Format::Xml);
    assert_eq!(r.replaced_chars, 1);
    v[1]["ctrl"] = json!("bell\u{FFFD}");
    assert_eq!(xml_to_value(&text), v);
    assert!(text.contains("<_1st_key key=\"1st key\">"), "{text}");
    assert!(text.contains("<_xml key=\"xml\">"), "{text}");
    assert!(!text.contains("<script>"), "escaped");
}

#[test]
fn json_and_jsonl_read_back() {
    let v = awkward();
    let (text, _) = render_to_string(&Payload::Json(v.clone()), Format::Json);
    assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
    let (text, _) = render_to_string(&Payload::Json(v.clone()), Format::Jsonl);
    let lines: Vec<Value> = text
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(Value::Array(lines), v);
}

#[test]
fn markdown_escapes_every_special_character_and_html_escapes_markup() {
    let v = awkward();
    let (md, r) = render_to_string(&Payload::Json(v.clone()), Format::Md);
    assert_eq!(r.table.unwrap().rows, 2);
    assert_eq!(
        md.lines().count(),
        4,
        "header, separator, two rows: newlines became <br>"
    );
    assert!(md.contains("a \\| b"));
    assert!(md.contains("\\<script\\>"));
    let (html, _) = render_to_string(&Payload::Json(v), Format::Html);
    assert!(html.contains("&lt;script&gt;alert(1)&lt;/script&gt; &amp; more"));
    assert!(!html.contains("<script>"));
}

#[test]
fn non_tables_use_the_documented_fallbacks() {
    let v = json!({"a": {"b": 1}, "list": [1, 2], "s": "x"});
    let (csv_text, r) = render_to_string(&Payload::Json(v), Format::Csv);
    assert!(r.fallback && r.table.is_none());
    assert_eq!(csv_text, "key,value\r\na.b,1\r\nlist,\"[1,2]\"\r\ns,x\r\n");
    let (csv_text, _) = render_to_string(&Payload::Json(json!([1, "two", {"x": 3}])), Format::Csv);
    assert_eq!(csv_text, "value\r\n1\r\ntwo\r\n\"{\"\"x\"\":3}\"\r\n");
    let (txt, _) = render_to_string(&Payload::Text("hello\nworld".into()), Format::Txt);
    assert_eq!(txt, "hello\nworld");
    let (json_text, _) = render_to_string(&Payload::Text("hello".into()), Format::Json);
    assert_eq!(json_text, "\"hello\"\n");
}

#[test]
fn empty_lists_and_scalars_give_valid_files() {
    for f in Format::ALL {
        for v in [json!([]), json!(42), json!(null), json!("s"), json!({})] {
            let (text, _) = render_to_string(&Payload::Json(v.clone()), f);
            if f == Format::Json {
                assert_eq!(serde_json::from_str::<Value>(&text).unwrap(), v);
            }
            if f == Format::Yaml {
                assert_eq!(serde_yaml::from_str::<Value>(&text).unwrap(), v);
            }
        }
    }
}

#[test]
fn fifty_thousand_rows() {
    let rows: Vec<Value> = (0..50_000)
        .map(|i| json!({"i": i, "s": format!("row {i}"), "n": {"x": i % 7}}))
        .collect();
    let v = Value::Array(rows);
    let (text, r) = render_to_string(&Payload::Json(v), Format::Csv);
    assert_eq!(r.table.unwrap().rows, 50_000);
    assert_eq!(text.lines().count(), 50_001);
}

#[test]
fn format_names_and_aliases() {
    assert_eq!(Format::parse("YML"), Some(Format::Yaml));
    assert_eq!(Format::parse("markdown"), Some(Format::Md));
    assert_eq!(Format::parse("parquet"), None);
    for f in Format::ALL {
        assert_eq!(Format::parse(f.name()), Some(f));
    }
}

#[test]
fn streamed_json_text_renders_exactly_like_the_value() {
    let cases = [
        awkward(),
        json!({"total": 2, "results": awkward(), "next": null}),
        json!([1, "two", {"three": 3}]),
        json!({"a": {"b": [1, 2]}, "s": "x"}),
        json!("just a string\nwith lines"),
        json!(42),
        json!([]),
    ];
    for v in cases {
        let streamed = Payload::from_text(v.to_string());
        assert!(matches!(streamed, Payload::JsonText { .. }));
        // txt writes the text the tool returned as it is; every other format must match.
        for f in Format::ALL.into_iter().filter(|f| *f != Format::Txt) {
            let (a, ra) = render_to_string(&Payload::Json(v.clone()), f);
            let (b, rb) = render_to_string(&streamed, f);
            assert_eq!(a, b, "{f:?} of {v}");
            assert_eq!(ra, rb, "{f:?} of {v}");
        }
    }
}
