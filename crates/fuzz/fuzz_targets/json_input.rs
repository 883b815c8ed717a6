//! JSON and JSON Lines files as tool arguments, and JSON answers as payloads.
//!
//! Checks: no panic or stack overflow on any bytes; a JSON list read in batches (streamed)
//! gives exactly the items of the whole parse, and streaming accepts what the whole parse
//! accepts; the one-pass shape scan of a stored answer accepts exactly the valid JSON texts.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_formats::output::stream;
use offload_formats::Format;
use offload_formats::inputs::{self, ReadOptions};
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    let options = ReadOptions::default();
    let whole = inputs::parse(&mut std::io::Cursor::new(data), Format::Json, false);
    let mut items = Vec::new();
    let streamed = inputs::for_each_item(&mut std::io::Cursor::new(data), Format::Json, &options, &mut |v| {
        items.push(v);
        Ok(())
    });
    match (&whole, &streamed) {
        (Ok((Value::Array(all), _)), Ok(_)) => assert_eq!(all, &items),
        (Ok((Value::Array(_), _)), Err(e)) => {
            panic!("batches refused a list the whole parse read: {}", e.message)
        }
        (Ok(_), Ok(_)) => panic!("batches accepted a value that is not a list"),
        (Err(e), Ok(_)) => panic!(
            "batches accepted what the whole parse refused: {}",
            e.message
        ),
        _ => {}
    }

    let mut lines = Vec::new();
    let jsonl = inputs::for_each_item(&mut std::io::Cursor::new(data), Format::Jsonl, &options, &mut |v| {
        lines.push(v);
        Ok(())
    });
    if jsonl.is_ok() {
        let (whole, _) = inputs::parse(&mut std::io::Cursor::new(data), Format::Jsonl, false)
            .expect("JSONL parses whole when it parses in batches");
        assert_eq!(whole, Value::Array(lines));
    }

    if let Ok(text) = std::str::from_utf8(data) {
        let valid = serde_json::from_str::<Value>(text).is_ok();
        assert_eq!(
            stream::scan(text).is_ok(),
            valid,
            "scan disagrees with serde_json"
        );
    }
});
