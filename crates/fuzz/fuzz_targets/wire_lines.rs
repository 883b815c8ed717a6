//! Large lines as `offload_wire::lean` parses them: the value serde_json gives (keys in the
//! same order), or both refuse the line.
//!
//! The first four `~` of an input each become about 70 KB of string content full of escapes,
//! surrogate pairs and multi-byte characters, so short inputs make lines with large strings —
//! values, keys, several, nested, unterminated, next to bad bytes — whose pieces split at
//! every kind of place.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;

const RUN: &str = "ab\\n\\\"\\u00e9é\\ud83d\\ude00漢\\\\/";

fuzz_target!(|data: &[u8]| {
    let run = RUN.repeat(70_000 / RUN.len() + 1);
    let mut line = Vec::with_capacity(data.len() + 4 * run.len());
    let mut expanded = 0;
    for &b in data {
        if b == b'~' && expanded < 4 {
            line.extend_from_slice(run.as_bytes());
            expanded += 1;
        } else {
            line.push(b);
        }
    }
    let want = serde_json::from_slice::<Value>(&line);
    let got = offload_wire::lean::parse(line);
    match (want, got) {
        (Ok(want), Ok(got)) => {
            assert!(want == got, "a different value");
            assert_eq!(
                serde_json::to_string(&want).ok(),
                serde_json::to_string(&got).ok(),
                "a different key order"
            );
        }
        (Err(_), Err(_)) => {}
        (want, got) => panic!(
            "serde_json: {:?}, lean: {:?}",
            want.map(|_| ()),
            got.map(|_| ())
        ),
    }
});
