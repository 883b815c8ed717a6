//! YAML files as tool arguments: no panic, hang or unbounded memory on any bytes (alias bombs,
//! deep nesting, invalid UTF-8); several documents make a list.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_formats::Format;
use offload_formats::inputs;
use serde_json::Value;

fuzz_target!(|data: &[u8]| {
    if let Ok((value, _)) = inputs::parse(&mut std::io::Cursor::new(data), Format::Yaml, false) {
        // What was read is plain JSON again.
        let text = serde_json::to_string(&value).expect("the value serialises");
        assert_eq!(serde_json::from_str::<Value>(&text).ok(), Some(value));
    }
});
