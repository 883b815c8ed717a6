//! The tool search (`offload-search`): a catalog and a request from any bytes.
//!
//! Checks: no panic; at most `limit` hits, each a tool of the catalog, none twice; confidences
//! within 0–1; scores best first (an exact name, scored infinite, before everything); a tool
//! searched by its exact name comes first with confidence 1.
#![no_main]

use libfuzzer_sys::fuzz_target;
use offload_search::{Doc, Index};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    let mut parts = text.split('\n');
    let query = parts.next().unwrap_or("");
    let lines: Vec<&str> = parts.collect();
    let docs: Vec<Doc> = lines
        .iter()
        .map(|line| {
            let mut f = line.splitn(4, '\t');
            Doc {
                server: f.next().unwrap_or(""),
                name: f.next().unwrap_or(""),
                description: f.next().unwrap_or(""),
                params: f.next().unwrap_or(""),
                ..Doc::default()
            }
        })
        .collect();
    let index = Index::new(docs.iter().copied());
    let limit = (data.len() % 7) + 1;
    let hits = index.search(query, limit);
    assert!(hits.len() <= limit);
    let mut seen = std::collections::HashSet::new();
    for h in &hits {
        assert!(h.doc < docs.len());
        assert!(seen.insert(h.doc), "a tool twice");
        assert!((0.0..=1.0).contains(&h.confidence), "{h:?}");
    }
    assert!(hits.windows(2).all(|w| w[0].score >= w[1].score), "{hits:?}");
    if let Some(doc) = docs.iter().position(|d| !d.name.trim().is_empty() && d.name.trim() == d.name) {
        // (Another tool may go by the same spelling, `server/name` against a name with a slash.)
        let first = &index.search(docs[doc].name, 50)[0];
        assert_eq!(first.confidence, 1.0);
    }
});
