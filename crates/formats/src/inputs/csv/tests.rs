//! CSV reading: inference per column, overrides, RFC 4180 details, errors.
use super::*;
use serde_json::json;

fn rows(text: &str, infer_types: bool) -> Result<(Vec<Value>, Vec<String>), InputError> {
    typed_rows(
        text,
        &Typing {
            infer: infer_types,
            ..Typing::default()
        },
    )
}

fn typed_rows(text: &str, typing: &Typing) -> Result<(Vec<Value>, Vec<String>), InputError> {
    let kinds = if typing.needs_plan() {
        plan(text.as_bytes(), b',', typing)?
    } else {
        Vec::new()
    };
    let mut out = Vec::new();
    let warnings = read(text.as_bytes(), b',', typing, kinds, &mut |r| {
        let mut json = Vec::new();
        r.write_json(&mut json);
        let map = r.to_map();
        assert_eq!(
            json,
            serde_json::to_vec(&map).unwrap(),
            "written as serialised"
        );
        out.push(Value::Object(map));
        Ok(())
    })?;
    Ok((out, warnings))
}

#[test]
fn rfc4180_bom_crlf_and_duplicates() {
    let (r, w) = rows(
        "\u{feff}id,name,name,\r\n1,\"a, \"\"b\"\"\nc\",x,\r\n",
        true,
    )
    .unwrap();
    assert_eq!(
        r,
        vec![json!({"id": 1, "name": "a, \"b\"\nc", "name_2": "x", "column_4": null})]
    );
    assert_eq!(w.len(), 2, "{w:?}");
    let (r, _) = rows("a\n007\n", false).unwrap();
    assert_eq!(r, vec![json!({"a": "007"})]);
    let (r, _) = rows("a,b\n", true).unwrap();
    assert!(r.is_empty(), "header only");
}

#[test]
fn ragged_rows_and_invalid_utf8_name_the_line() {
    let e = rows("a,b\n1,2\n3\n", true).unwrap_err();
    assert!(
        e.to_string().contains("line 3") && e.to_string().contains("1 fields"),
        "{e}"
    );
    assert_eq!(e.line, Some(3));
    let mut bad = b"a\nok\n".to_vec();
    bad.extend_from_slice(b"\xff\xfe\n");
    let mut n = 0;
    let e = read(&bad[..], b',', &Typing::default(), Vec::new(), &mut |_| {
        n += 1;
        Ok(())
    })
    .unwrap_err();
    assert!(
        e.to_string().contains("line 3") && e.to_string().contains("UTF-8"),
        "{e}"
    );
}

#[test]
fn types_are_decided_per_column() {
    let (r, _) = rows(
        "zip,phone,n,flag,mixed,empty\n01234,555-1234,1,true,1,\n12345,5551234,2.5,FALSE,x,\n,,,,,\n",
        true,
    )
    .unwrap();
    assert_eq!(
        r[0],
        json!({"zip": "01234", "phone": "555-1234", "n": 1, "flag": true, "mixed": "1", "empty": null})
    );
    assert_eq!(
        r[1],
        json!({"zip": "12345", "phone": "5551234", "n": 2.5, "flag": false, "mixed": "x", "empty": null}),
        "one text cell keeps its whole column text"
    );
    assert_eq!(
        r[2],
        json!({"zip": null, "phone": null, "n": null, "flag": null, "mixed": null, "empty": null})
    );
}

#[test]
fn column_types_override_and_refuse_what_does_not_fit() {
    let typing = |pairs: &[(&str, &str)]| Typing {
        infer: true,
        columns: pairs
            .iter()
            .map(|(c, t)| ((*c).to_owned(), ColumnType::parse(t, ";").unwrap()))
            .collect(),
    };
    let text =
        "id,zip,tags,meta,ok,price\n7,01234,a; b;c,\"{\"\"k\"\": 1}\",yes,3\n8,99,,null,0,4.5\n";
    let (r, w) = typed_rows(
        text,
        &typing(&[
            ("id", "string"),
            ("zip", "integer"),
            ("tags", "list"),
            ("meta", "json"),
            ("ok", "boolean"),
            ("price", "number"),
            ("nope", "string"),
        ]),
    )
    .unwrap();
    assert_eq!(
        r[0],
        json!({"id": "7", "zip": 1234, "tags": ["a", "b", "c"], "meta": {"k": 1}, "ok": true, "price": 3.0})
    );
    assert_eq!(
        r[1],
        json!({"id": "8", "zip": 99, "tags": [], "meta": null, "ok": false, "price": 4.5})
    );
    assert!(w.iter().any(|w| w.contains("'nope'")), "{w:?}");
    let e = typed_rows("a,b\n1,x\n2,y\n", &typing(&[("b", "integer")])).unwrap_err();
    assert!(
        e.to_string().contains("line 2")
            && e.to_string().contains("column 'b'")
            && e.to_string().contains("integer"),
        "{e}"
    );
    let e = typed_rows("a\n{bad\n", &typing(&[("a", "json")])).unwrap_err();
    assert!(e.to_string().contains("valid JSON"), "{e}");
}

#[test]
fn ten_thousand_columns() {
    let header: Vec<String> = (0..10_000).map(|i| format!("c{i}")).collect();
    let row: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
    let text = format!("{}\n{}\n", header.join(","), row.join(","));
    let (r, _) = rows(&text, true).unwrap();
    assert_eq!(r[0]["c9999"], json!(9999));
}
