use super::*;
use serde_json::json;

fn p(text: &str, format: Format) -> Result<Value, InputError> {
    parse(&mut std::io::Cursor::new(text.as_bytes()), format, true).map(|(v, _)| v)
}

#[test]
fn each_format_gives_json() {
    assert_eq!(
        p("{\"a\": [1, 2]}", Format::Json).unwrap(),
        json!({"a": [1, 2]})
    );
    assert_eq!(
        p("{\"a\":1}\n\n{\"a\":2}\n", Format::Jsonl).unwrap(),
        json!([{"a": 1}, {"a": 2}])
    );
    assert_eq!(
        p("a\tb\n1\tx\n", Format::Tsv).unwrap(),
        json!([{"a": 1, "b": "x"}])
    );
    assert_eq!(
        p("a: 1\nb: [x, yes]\n", Format::Yaml).unwrap(),
        json!({"a": 1, "b": ["x", "yes"]})
    );
    assert_eq!(
        p("---\na: 1\n---\na: 2\n", Format::Yaml).unwrap(),
        json!([{"a": 1}, {"a": 2}])
    );
    assert_eq!(
        p("<r><x>1</x></r>", Format::Xml).unwrap(),
        json!({"r": {"x": "1"}})
    );
    assert_eq!(p("[1, 2]", Format::Txt).unwrap(), json!([1, 2]));
    assert_eq!(p("just words", Format::Txt).unwrap(), json!("just words"));
}

#[test]
fn yaml_anchors_resolve_and_alias_bombs_are_refused_quickly() {
    assert_eq!(
        p("base: &b {x: 1}\nuse: *b\n", Format::Yaml).unwrap(),
        json!({"base": {"x": 1}, "use": {"x": 1}})
    );
    let bomb = "a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b]\nd: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c]\ne: &e [*d, *d, *d, *d, *d, *d, *d, *d, *d]\nf: &f [*e, *e, *e, *e, *e, *e, *e, *e, *e]\ng: &g [*f, *f, *f, *f, *f, *f, *f, *f, *f]\nh: &h [*g, *g, *g, *g, *g, *g, *g, *g, *g]\ni: &i [*h, *h, *h, *h, *h, *h, *h, *h, *h]\n";
    let started = std::time::Instant::now();
    let e = p(bomb, Format::Yaml).unwrap_err();
    assert!(
        started.elapsed() < std::time::Duration::from_secs(2),
        "refused quickly"
    );
    assert!(
        e.to_string().to_lowercase().contains("repetition") || e.to_string().contains("limit"),
        "{e}"
    );
}

#[test]
fn deep_nesting_is_an_error_not_a_stack_overflow() {
    let deep = "[".repeat(100_000) + &"]".repeat(100_000);
    let e = p(&deep, Format::Json).unwrap_err();
    assert!(e.to_string().contains("128 levels"), "{e}");
    assert!(p(&deep, Format::Yaml).is_err());
    let deep_lines = "[".repeat(100_000) + "\n";
    assert!(p(&deep_lines, Format::Jsonl).is_err());
}

#[test]
fn binary_and_broken_files_get_clear_errors() {
    let png = b"\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    let e = parse(&mut std::io::Cursor::new(&png[..]), Format::Csv, true).unwrap_err();
    assert!(e.to_string().contains("binary"), "{e}");
    let e = p("{\"a\": 1,\n \"b\": }", Format::Json).unwrap_err();
    assert_eq!(e.line, Some(2));
    let e = p("{\"a\":1}\nnot json\n", Format::Jsonl).unwrap_err();
    assert!(e.to_string().starts_with("line 2"), "{e}");
    let e = parse(
        &mut std::io::Cursor::new(&b"a\n\xff\n"[..]),
        Format::Txt,
        true,
    )
    .unwrap_err();
    assert!(e.to_string().contains("UTF-8"), "{e}");
}

#[test]
fn empty_files() {
    assert!(p("", Format::Json).is_err());
    assert_eq!(p("", Format::Jsonl).unwrap(), json!([]));
    assert_eq!(p("", Format::Csv).unwrap(), json!([]));
    assert_eq!(p("", Format::Yaml).unwrap(), json!(null));
    assert!(p("", Format::Xml).is_err());
    assert_eq!(p("", Format::Txt).unwrap(), json!(""));
}

#[test]
fn items_stream_from_json_arrays_and_refuse_non_lists() {
    let mut seen = Vec::new();
    for_each_item(
        &mut std::io::Cursor::new(&b"[{\"a\":1},{\"a\":2}]"[..]),
        Format::Json,
        &ReadOptions {
            typing: Typing {
                infer: true,
                ..Typing::default()
            },
            sheet: None,
        },
        &mut |v| {
            seen.push(v);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(seen, vec![json!({"a": 1}), json!({"a": 2})]);
    // A BOM is skipped in batches as in whole reads (found by fuzzing).
    seen.clear();
    for_each_item(
        &mut std::io::Cursor::new(&b"\xef\xbb\xbf[1, 2]"[..]),
        Format::Json,
        &ReadOptions::default(),
        &mut |v| {
            seen.push(v);
            Ok(())
        },
    )
    .unwrap();
    assert_eq!(seen, vec![json!(1), json!(2)]);
    let e = for_each_item(
        &mut std::io::Cursor::new(&b"{\"a\": 1}"[..]),
        Format::Json,
        &ReadOptions {
            typing: Typing {
                infer: true,
                ..Typing::default()
            },
            sheet: None,
        },
        &mut |_| Ok(()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("list"), "{e}");
    let e = for_each_item(
        &mut std::io::Cursor::new(&b"a: 1"[..]),
        Format::Yaml,
        &ReadOptions {
            typing: Typing {
                infer: true,
                ..Typing::default()
            },
            sheet: None,
        },
        &mut |_| Ok(()),
    )
    .unwrap_err();
    assert!(e.to_string().contains("not a list"), "{e}");
}
