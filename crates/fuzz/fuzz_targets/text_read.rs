//! `read_file` on text: pages from a line offset, tails and byte-offset slices, on arbitrary
//! bytes written to a real file.
//!
//! Checks: no panic on any bytes or request; with room enough, a page and a tail are exactly
//! the lines a naive split gives (for UTF-8 text with `\n` line ends); with a small budget,
//! following `next_offset`/`next_byte_offset` always moves forward and reaches the end.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_formats::files::{Inspector, ReadRequest, Settings};

struct Silent;
impl offload_formats::files::Observer for Silent {}

fn read(
    budget: usize,
    path: &std::path::Path,
    request: &ReadRequest,
) -> Option<offload_formats::files::ReadAnswer> {
    let inspector = Inspector::new(Settings {
        budget,
        ..Settings::default()
    });
    let file = std::fs::File::open(path).ok()?;
    inspector.read(file, path, request, &Silent).ok()
}

fuzz_target!(|input: (u8, u16, u8, u16, &[u8])| {
    let (offset, length, tail, small_budget, content) = input;
    let dir = tempfile::tempdir_in("/dev/shm")
        .or_else(|_| tempfile::tempdir())
        .unwrap();
    let path = dir.path().join("f.txt");
    std::fs::write(&path, content).unwrap();

    // Arbitrary requests: nothing may panic.
    let small = 64 + usize::from(small_budget) % 512;
    for request in [
        ReadRequest {
            offset: i64::from(offset),
            length: u64::from(length),
            ..ReadRequest::default()
        },
        ReadRequest {
            offset: -i64::from(tail),
            ..ReadRequest::default()
        },
        ReadRequest {
            byte_offset: Some(u64::from(length)),
            ..ReadRequest::default()
        },
    ] {
        let _ = read(small, &path, &request);
    }

    // The model: UTF-8 without BOM, `\r` or NUL, split on `\n`.
    let Ok(text) = std::str::from_utf8(content) else {
        return;
    };
    if text.starts_with('\u{feff}') || text.contains(['\r', '\0']) {
        return;
    }
    let mut lines: Vec<&str> = text.split('\n').collect();
    if text.is_empty() || text.ends_with('\n') {
        lines.pop();
    }
    let n = lines.len();
    let big = 1 << 20;
    let page = ReadRequest {
        offset: i64::from(offset),
        length: u64::from(length),
        ..ReadRequest::default()
    };
    let Some(answer) = read(big, &path, &page) else {
        return; // classified as binary (control characters): not text.
    };
    let from = usize::from(offset).min(n);
    let to = (from + usize::from(length)).min(n);
    assert_eq!(
        answer.content.as_deref(),
        Some(lines[from..to].join("\n").as_str())
    );
    assert_eq!(answer.count, Some((to - from) as u64));
    assert_eq!(answer.next_offset, (to < n).then_some(to as u64));
    assert!(!answer.truncated);

    let tail_request = ReadRequest {
        offset: -i64::from(tail),
        ..ReadRequest::default()
    };
    let answer = read(big, &path, &tail_request).expect("the same file reads");
    if tail > 0 {
        let expected = lines[n.saturating_sub(usize::from(tail))..].join("\n");
        assert_eq!(
            answer.content.as_deref(),
            Some(expected.as_str()),
            "tail {tail}"
        );
    }

    // Small pages: following the answers always reaches the end (a bounded number of steps).
    let mut request = ReadRequest {
        offset: 0,
        length: 1 + u64::from(length % 50),
        ..ReadRequest::default()
    };
    let length = request.length;
    for _ in 0..=(content.len() + n + 2) {
        let answer = read(small, &path, &request).expect("the same file reads");
        request = match (answer.next_offset, answer.next_byte_offset) {
            (_, Some(at)) => ReadRequest {
                byte_offset: Some(at),
                ..ReadRequest::default()
            },
            (Some(line), None) => ReadRequest {
                offset: line as i64,
                length,
                ..ReadRequest::default()
            },
            (None, None) => return,
        };
    }
    panic!("paging never reached the end");
});
