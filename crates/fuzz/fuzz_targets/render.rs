//! The renderers of `call_tool_and_store` on arbitrary JSON.
//!
//! Checks: every value renders in every format; a JSON text streamed renders byte for byte like
//! the parsed value; JSON, JSONL and YAML read back to the same value; CSV and TSV read back (csv
//! crate) to the documented flattening; XML reads back by the documented convention (unless
//! characters XML cannot hold were replaced, which the answer counts).
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_formats::Format;
use offload_formats::output::{Payload, readback, render, table};
use serde_json::Value;

fn rendered(payload: &Payload, format: Format) -> (String, offload_formats::output::Rendered) {
    let mut out = Vec::new();
    let r = render(payload, format, &mut out).expect("every value renders");
    (String::from_utf8(out).expect("renderers write UTF-8"), r)
}

/// Whether an object in `text` (valid JSON) repeats a key.
fn repeats_a_key(text: &str) -> bool {
    use serde::de::{Deserializer, MapAccess, SeqAccess, Visitor};
    struct Check;
    impl<'de> Visitor<'de> for Check {
        type Value = bool;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str("JSON")
        }
        fn visit_bool<E>(self, _: bool) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_i64<E>(self, _: i64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_u64<E>(self, _: u64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_f64<E>(self, _: f64) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_str<E>(self, _: &str) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_unit<E>(self) -> Result<bool, E> {
            Ok(false)
        }
        fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<bool, A::Error> {
            let mut any = false;
            while let Some(r) = seq.next_element::<Repeats>()? {
                any |= r.0;
            }
            Ok(any)
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<bool, A::Error> {
            let mut keys = std::collections::HashSet::new();
            let mut any = false;
            while let Some((k, r)) = map.next_entry::<String, Repeats>()? {
                any |= !keys.insert(k) || r.0;
            }
            Ok(any)
        }
    }
    struct Repeats(bool);
    impl<'de> serde::Deserialize<'de> for Repeats {
        fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
            d.deserialize_any(Check).map(Repeats)
        }
    }
    serde_json::from_str::<Repeats>(text).is_ok_and(|r| r.0)
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    let Ok(value) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let repeated = repeats_a_key(text);
    let parsed = Payload::Json(value.clone());
    let streamed = Payload::from_text(text.to_owned());
    for format in Format::OUTPUTS {
        let (out, r) = rendered(&parsed, format);
        // JSON leaves repeated keys undefined: the parsed value keeps the last one, the
        // streamed path writes what was sent (docs/guide/files.md); only unambiguous texts must match.
        if format != Format::Txt && !repeated {
            let (out2, r2) = rendered(&streamed, format);
            assert_eq!(out, out2, "{format:?}: streamed and parsed differ");
            assert_eq!(r, r2, "{format:?}");
        }
        match format {
            Format::Json => assert_eq!(serde_json::from_str::<Value>(&out).unwrap(), value),
            Format::Jsonl => {
                let back: Vec<Value> = out
                    .lines()
                    .map(|l| serde_json::from_str(l).unwrap())
                    .collect();
                match &value {
                    Value::Array(items) => assert_eq!(&back, items),
                    v => assert_eq!(back, vec![v.clone()]),
                }
            }
            Format::Yaml => {
                let back: Value = serde_yaml::from_str(&out).unwrap();
                assert_eq!(back, value, "YAML:\n{out}");
            }
            Format::Csv | Format::Tsv if table::find(&value).is_some() => {
                let (header, rows) = readback::expected_table(&value);
                let delimiter = if format == Format::Csv { b',' } else { b'\t' };
                let mut reader = csv::ReaderBuilder::new()
                    .delimiter(delimiter)
                    .from_reader(out.as_bytes());
                let got: Vec<String> = reader
                    .headers()
                    .unwrap()
                    .iter()
                    .map(str::to_owned)
                    .collect();
                if !header.is_empty() {
                    assert_eq!(got, header);
                    let got: Vec<Vec<String>> = reader
                        .records()
                        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
                        .collect();
                    assert_eq!(got, rows);
                }
            }
            Format::Xml if r.replaced_chars == 0 => {
                assert_eq!(readback::xml_to_value(&out), value, "XML:\n{out}");
            }
            _ => {}
        }
    }
});
