//! The search bench's baseline: what clients that search tools themselves use.

use std::collections::HashMap;

/// Okapi BM25 over one field of lower-cased words (k1 1.2, b 0.75), no stemming: the baseline.
pub struct Bm25 {
    postings: HashMap<String, Vec<(usize, f64)>>,
    lengths: Vec<f64>,
    average: f64,
}

fn tokens(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .map(str::to_lowercase)
}

impl Bm25 {
    pub fn new(docs: impl Iterator<Item = String>) -> Self {
        let mut postings: HashMap<String, Vec<(usize, f64)>> = HashMap::new();
        let mut lengths = Vec::new();
        for (i, text) in docs.enumerate() {
            let mut counts: HashMap<String, f64> = HashMap::new();
            let mut length = 0.0;
            for t in tokens(&text) {
                *counts.entry(t).or_default() += 1.0;
                length += 1.0;
            }
            for (t, c) in counts {
                postings.entry(t).or_default().push((i, c));
            }
            lengths.push(length);
        }
        let average = lengths.iter().sum::<f64>() / lengths.len().max(1) as f64;
        Bm25 {
            postings,
            lengths,
            average,
        }
    }

    pub fn search(&self, query: &str, limit: usize) -> Vec<usize> {
        let n = self.lengths.len() as f64;
        let mut words: Vec<String> = tokens(query).collect();
        words.sort();
        words.dedup();
        let mut scores: HashMap<usize, f64> = HashMap::new();
        for w in &words {
            let Some(p) = self.postings.get(w) else {
                continue;
            };
            let df = p.len() as f64;
            let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
            for (doc, tf) in p {
                let norm = 1.0 - 0.75 + 0.75 * self.lengths[*doc] / self.average.max(f64::EPSILON);
                *scores.entry(*doc).or_default() += idf * tf * 2.2 / (tf + 1.2 * norm);
            }
        }
        let mut ranked: Vec<(usize, f64)> = scores.into_iter().collect();
        ranked.sort_by(|a, b| b.1.total_cmp(&a.1).then(a.0.cmp(&b.0)));
        ranked.into_iter().take(limit).map(|(d, _)| d).collect()
    }
}
