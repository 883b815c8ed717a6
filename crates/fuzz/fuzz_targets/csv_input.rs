//! CSV and TSV files as tool arguments, with and without type inference.
//!
//! Checks: no panic on any bytes; inference never changes which files parse, how many rows
//! or which columns; types are per column: a column's cells are all `infer` of the raw cell
//! or all the raw text; `infer` keeps the exact value its text says (a number is that number,
//! integers keep their text); a row written straight to JSON is exactly its map serialised.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_formats::Format;
use offload_formats::inputs::{self, ReadOptions};
use serde_json::Value;

fn rows(data: &[u8], format: Format, infer_types: bool) -> (bool, Vec<Value>) {
    let options = ReadOptions {
        typing: inputs::Typing {
            infer: infer_types,
            ..inputs::Typing::default()
        },
        sheet: None,
    };
    let mut rows = Vec::new();
    let mut source = std::io::Cursor::new(data);
    let ok = inputs::read_items(&mut source, format, &options, &mut |item| {
        let mut json = Vec::new();
        item.write_json(&mut json).expect("a row is written");
        let v = item.into_value();
        assert_eq!(
            json,
            serde_json::to_vec(&v).unwrap(),
            "written is serialised"
        );
        rows.push(v);
        Ok(())
    })
    .is_ok();
    (ok, rows)
}

fn check_infer(text: &str) {
    match offload_formats::cells::infer(text) {
        Value::Null => assert!(text.is_empty(), "{text:?} inferred as null"),
        Value::Bool(b) => assert!(text.eq_ignore_ascii_case(if b { "true" } else { "false" })),
        Value::String(s) => assert_eq!(s, text),
        Value::Number(n) => {
            let exact: f64 = text.parse().expect("an inferred number parses as f64");
            assert!(exact.is_finite(), "{text:?}");
            assert_eq!(n.as_f64(), Some(exact), "{text:?} became {n}");
            if !n.is_f64() {
                assert_eq!(n.to_string(), text, "an integer keeps its text");
            }
        }
        other => panic!("{text:?} inferred as {other}"),
    }
}

fuzz_target!(|data: &[u8]| {
    for format in [Format::Csv, Format::Tsv] {
        let (raw_ok, raw) = rows(data, format, false);
        let (typed_ok, typed) = rows(data, format, true);
        assert_eq!(
            raw_ok, typed_ok,
            "inference changed whether the file parses"
        );
        assert_eq!(raw.len(), typed.len());
        let Some(first) = raw.first().and_then(Value::as_object) else {
            continue;
        };
        for key in first.keys() {
            // One type per column: every cell inferred, or every cell as it was.
            let inferred = raw.iter().zip(&typed).all(|(r, t)| {
                let expected = match &r[key] {
                    Value::String(s) => offload_formats::cells::infer(s),
                    Value::Null => Value::Null,
                    other => panic!("a raw cell is {other}"),
                };
                t[key] == expected
            });
            let kept = raw.iter().zip(&typed).all(|(r, t)| t[key] == r[key]);
            assert!(inferred || kept, "column {key:?} mixes inferred and raw cells");
        }
        for (r, t) in raw.iter().zip(&typed) {
            let (r, t) = (r.as_object().unwrap(), t.as_object().unwrap());
            assert!(r.keys().eq(t.keys()), "inference changed the columns");
        }
    }
    if let Ok(text) = std::str::from_utf8(data) {
        check_infer(text);
    }
});
