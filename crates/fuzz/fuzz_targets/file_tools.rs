//! `get_file_schema`, `summarize_file` and `read_file` on arbitrary bytes under each text
//! extension the tools treat specially (CSV, TSV, JSON, JSONL, YAML, XML, plain text).
//!
//! Checks: no panic, hang or runaway memory; every answer serialises; a text page fits its
//! budget.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_formats::files::{Inspector, ReadRequest, Settings};

struct Silent;
impl offload_formats::files::Observer for Silent {}

const EXTENSIONS: [&str; 8] = ["csv", "tsv", "json", "jsonl", "yaml", "xml", "txt", "svg"];

fuzz_target!(|input: (u8, &[u8])| {
    let (kind, content) = input;
    let dir = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    let path = dir.path().join(format!(
        "f.{}",
        EXTENSIONS[usize::from(kind) % EXTENSIONS.len()]
    ));
    std::fs::write(&path, content).unwrap();
    let budget = 2048;
    let inspector = Inspector::new(Settings {
        budget,
        full_scan_limit: 4096,
        ..Settings::default()
    });
    let open = || std::fs::File::open(&path).unwrap();
    if let Ok(schema) = inspector.schema(open(), &path, 5, &Silent) {
        serde_json::to_string(&schema).expect("a schema serialises");
    }
    if let Ok(summary) = inspector.summarize(open(), &path, 10, &Silent) {
        serde_json::to_string(&summary).expect("a summary serialises");
    }
    if let Ok(answer) = inspector.read(open(), &path, &ReadRequest::default(), &Silent) {
        serde_json::to_string(&answer).expect("an answer serialises");
        if let Some(text) = &answer.content {
            assert!(
                text.len() <= budget + 256,
                "{} bytes over a {budget} budget",
                text.len()
            );
        }
    }
});
