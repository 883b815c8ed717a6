//! Round trips with Rust parsers (csv, serde_yaml, quick-xml, serde_json). The same outputs are
//! also read back by Python's csv, PyYAML, ruamel.yaml (YAML 1.2), ElementTree, markdown-it and
//! html.parser in the end-to-end suite.

use super::readback::{expected_table, xml_to_value};
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

/// The rendered file as text; a Parquet file as the JSON of what it reads back as (columns
/// and rows, through the Parquet reader).
fn render_to_string(payload: &Payload, format: Format) -> (String, Rendered) {
    let mut out = Vec::new();
    let r = render(payload, format, &mut out).unwrap();
    if format == Format::Parquet {
        let page = offload_query::parquet::read_rows(
            offload_query::parquet::Bytes::from(out),
            0,
            usize::MAX,
        )
        .unwrap();
        let columns: Vec<&str> = page.columns.iter().map(|c| c.name.as_str()).collect();
        return (
            json!({"columns": columns, "rows": page.rows}).to_string(),
            r,
        );
    }
    (String::from_utf8(out).unwrap(), r)
}

#[test]
fn parquet_reads_back_with_typed_columns() {
    let v = json!([
        {"id": 1, "name": "a", "ratio": 0.5, "ok": true, "meta": {"x": 1}, "tags": ["p", "q"], "none": null},
        {"id": 2, "name": "日本語", "ratio": 2, "ok": false, "meta": {"x": 2}, "tags": [], "none": null}
    ]);
    let (text, r) = render_to_string(&Payload::Json(v), Format::Parquet);
    let back: Value = serde_json::from_str(&text).unwrap();
    assert_eq!(
        back["columns"],
        json!(["id", "name", "ratio", "ok", "meta", "tags", "none"])
    );
    assert_eq!(
        back["rows"],
        json!([
            [1, "a", 0.5, true, {"x": 1}, ["p", "q"], null],
            [2, "日本語", 2.0, false, {"x": 2}, [], null]
        ])
    );
    let info = r.table.unwrap();
    assert_eq!(info.rows, 2);
    assert_eq!(info.columns[0], ("id".to_owned(), "integer"));
    assert_eq!(info.columns[2], ("ratio".to_owned(), "number"));
    assert_eq!(info.columns[4], ("meta".to_owned(), "object"));
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
fn markdown_escapes_markup_only_and_html_escapes_markup() {
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
    for (cell, shown) in [
        ("p1@example.com", "p1@example.com"),
        ("address.city", "address.city"),
        ("snake_case_name", "snake_case_name"),
        ("_lead", "\\_lead"),
        ("*bold*", "\\*bold\\*"),
        ("a & b", "a & b"),
        ("&amp;", "\\&amp;"),
        ("[x](y)", "\\[x\\](y)"),
        ("# not a heading", "# not a heading"),
        ("C:\\dir", "C:\\\\dir"),
    ] {
        assert_eq!(super::markdown::escape(cell), shown, "{cell}");
    }
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
    for f in Format::OUTPUTS {
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
    // Empty objects and lists keep their type in XML, also when nested (found by fuzzing: `{}`
    // read back as a string).
    for v in [
        json!({}),
        json!([]),
        json!({"a": {}, "b": [], "c": "", "d": [{}, []]}),
    ] {
        let (text, _) = render_to_string(&Payload::Json(v.clone()), Format::Xml);
        assert_eq!(xml_to_value(&text), v, "{text}");
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
    assert_eq!(Format::parse("parquet"), Some(Format::Parquet));
    assert_eq!(Format::parse("feather"), None);
    for f in Format::OUTPUTS {
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
        for f in Format::OUTPUTS.into_iter().filter(|f| *f != Format::Txt) {
            let (a, ra) = render_to_string(&Payload::Json(v.clone()), f);
            let (b, rb) = render_to_string(&streamed, f);
            assert_eq!(a, b, "{f:?} of {v}");
            assert_eq!(ra, rb, "{f:?} of {v}");
        }
    }
}

/// Found by fuzzing: a text nested deeper than serde_json's limit passed the one-pass scan
/// (serde's `IgnoredAny` has no limit) and then failed to render; now it is stored as text.
#[test]
fn json_nested_beyond_the_limit_is_text_not_a_broken_table() {
    let deep = format!("{}{}", "[".repeat(130), "]".repeat(130));
    assert!(serde_json::from_str::<Value>(&deep).is_err());
    assert!(stream::scan(&deep).is_err());
    let payload = Payload::from_text(deep.clone());
    assert_eq!(payload, Payload::Text(deep.clone()));
    for f in Format::OUTPUTS {
        render_to_string(&payload, f);
    }
    let rows = format!(r#"[{{"a": {}1{}}}]"#, "[".repeat(130), "]".repeat(130));
    assert!(stream::scan(&rows).is_err());
}

/// Found by fuzzing: long numbers were parsed one unit off and written back different.
#[test]
fn numbers_keep_their_exact_value() {
    let text =
        r#"[{"x": 2222222222222222222222222227440737095516109551}, {"x": 0.30000000000000004}]"#;
    let v: Value = serde_json::from_str(text).unwrap();
    for payload in [
        Payload::Json(v.clone()),
        Payload::from_text(text.to_owned()),
    ] {
        let (json, _) = render_to_string(&payload, Format::Json);
        assert_eq!(serde_json::from_str::<Value>(&json).unwrap(), v);
        let (yaml, _) = render_to_string(&payload, Format::Yaml);
        assert_eq!(serde_yaml::from_str::<Value>(&yaml).unwrap(), v);
    }
}

/// Found by fuzzing: an empty key above a nested object was dropped from the dotted name by the
/// parsed path (`o.id`) but not by the streamed one (`.o.id`).
#[test]
fn an_empty_key_is_part_of_dotted_names() {
    let v = json!([{"": {"o": {"id": 7}}, "o": {"id": 8}}]);
    let (header, rows) = expected_table(&v);
    assert_eq!(header, [".o.id", "o.id"]);
    assert_eq!(rows, [["7", "8"]]);
    for f in [Format::Csv, Format::Md, Format::Html, Format::Tsv] {
        let (a, _) = render_to_string(&Payload::Json(v.clone()), f);
        let (b, _) = render_to_string(&Payload::from_text(v.to_string()), f);
        assert_eq!(a, b, "{f:?}");
    }
}
