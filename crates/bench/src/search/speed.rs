//! How long a search takes at about 2,000 tools, on one core, beside BM25.

use std::time::{Duration, Instant};

use offload_search::{Doc, Index};

use super::baseline::Bm25;
use super::{Set, params, sentences};
use crate::stats::{header, row, summarize};

/// What a process's first search pays to read the built-in word pieces (inflated then), beside
/// a text's vector after that. Only true before anything in the process has used them.
pub fn first_read() {
    let t = Instant::now();
    std::hint::black_box(offload_search::meaning::embed("read the file"));
    let first = t.elapsed();
    let t = Instant::now();
    std::hint::black_box(offload_search::meaning::embed("show commit history"));
    let next = t.elapsed();
    println!(
        "the built-in word pieces read at a process's first search: {:.1} ms (a text's vector after that: {:.3} ms)",
        first.as_secs_f64() * 1e3,
        next.as_secs_f64() * 1e3
    );
}

/// A search at about 2,000 tools: BFCL's functions twice, under two servers.
pub fn speed(set: &Set, models: &[(&str, &offload_embed::Sentences)]) {
    let params: Vec<String> = set.tools.iter().map(params).collect();
    let docs: Vec<Doc> = ["a", "b"]
        .iter()
        .flat_map(|server| {
            set.tools.iter().zip(&params).map(move |(t, p)| Doc {
                server,
                name: &t.name,
                description: &t.description,
                params: p,
                ..Doc::default()
            })
        })
        .collect();
    let t = Instant::now();
    let index = Index::new(docs.iter().copied());
    let built = t.elapsed();
    let baseline = Bm25::new(
        docs.iter()
            .map(|d| format!("{} {} {}", d.name, d.description, d.params)),
    );
    let (mut ours, mut base) = (Vec::new(), Vec::new());
    for q in &set.queries {
        let t = Instant::now();
        std::hint::black_box(index.search(&q.q, 5));
        ours.push(t.elapsed());
        let t = Instant::now();
        std::hint::black_box(baseline.search(&q.q, 5));
        base.push(t.elapsed());
    }
    let (o, b) = (summarize(&mut ours), summarize(&mut base));
    println!(
        "a search among {} tools ({} requests), beside BM25; the index built once in {:.1} ms",
        index.len(),
        set.queries.len(),
        built.as_secs_f64() * 1e3
    );
    println!("{}", header("Offload", "BM25"));
    println!("{}", row("median", o.median, b.median));
    println!("{}", row("p99", o.p99, b.p99));
    println!(
        "target (<= 5 ms a search at 2,000 tools): {}",
        if o.p99 <= Duration::from_millis(5) {
            "met"
        } else {
            "NOT met"
        }
    );
    // With a sentence model: the tools' vectors are made once (kept with the catalog); each
    // search embeds the request on this thread and ranks every tool.
    let with_server = Index::names_servers(docs.iter().map(|d| d.server));
    let texts: Vec<String> = docs
        .iter()
        .map(|d| Index::meaning_text(d, with_server))
        .collect();
    for &(label, model) in models {
        let t = Instant::now();
        let Ok(vectors) = sentences::embed_all(model, &texts) else {
            println!("{label} failed on the tools");
            continue;
        };
        let embedded = t.elapsed();
        let index = Index::new(docs.iter().copied()).with_sentences(vectors);
        let mut times = Vec::new();
        for q in &set.queries {
            let t = Instant::now();
            let pieces = offload_search::meaning::request_pieces(&q.q);
            if let Ok(v) = model.embed(&pieces) {
                std::hint::black_box(index.search_with(&q.q, Some(&v), 5));
            }
            times.push(t.elapsed());
        }
        let s = summarize(&mut times);
        println!(
            "with {label}: the {} tools embedded once in {:.1} s; a search, the request embedded, {:.2} ms median, {:.2} ms p99",
            index.len(),
            embedded.as_secs_f64(),
            s.median.as_secs_f64() * 1e3,
            s.p99.as_secs_f64() * 1e3
        );
        println!(
            "  target (<= 15 ms a search at 2,000 tools, one core): {}",
            if s.p99 <= Duration::from_millis(15) {
                "met"
            } else {
                "NOT met"
            }
        );
    }
}
