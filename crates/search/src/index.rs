//! The catalog's words, indexed once, and BM25F over them.

use std::collections::HashMap;

use crate::meaning::{self, Vector};
use crate::words::Words;

/// One tool as the index reads it.
#[derive(Debug, Clone, Copy, Default)]
pub struct Doc<'a> {
    pub server: &'a str,
    pub name: &'a str,
    pub title: Option<&'a str>,
    pub description: &'a str,
    /// Parameter names and descriptions, as one text.
    pub params: &'a str,
}

/// A tool that matched: its position in the catalog, its score, and how sure the match is (0–1).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Hit {
    pub doc: usize,
    pub score: f32,
    pub confidence: f32,
    /// No word of the request is the tool's: it is only close in meaning (offered when no tool
    /// matched a word).
    pub guess: bool,
}

/// Where a word occurs, and what a word there weighs (`WEIGHT`) and how much a long field is
/// discounted (`B`): the name counts most and is short; a description is long and counts once.
const FIELDS: usize = 5;
const NAME: usize = 0;
const TITLE: usize = 1;
const SERVER: usize = 2;
const DESCRIPTION: usize = 3;
const PARAMS: usize = 4;
const WEIGHT: [f32; FIELDS] = [3.0, 2.0, 1.5, 1.0, 0.5];
const B: [f32; FIELDS] = [0.3, 0.3, 0.3, 0.75, 0.75];
/// How soon more occurrences of a word stop adding to its score.
const K1: f32 = 1.2;
/// A word matched through a typo counts this much of the word it was taken for.
const TYPO: f32 = 0.7;
/// Longer words are not taken for typos (nor compared letter by letter with the catalog's).
const LONGEST_WORD: usize = 32;
/// A request's words past this many are not read: a request is a sentence, not a document.
const MOST_WORDS: usize = 64;
/// How much the words' score counts in a hit's rank; meaning counts the rest. Each is scaled to
/// 0–1 among the catalog first (the best word score, the closest and farthest meaning).
/// Measured on the three sets of `offload-bench search`: 0.3 to 0.7 rank within a point.
const WORDS_SHARE: f32 = 0.5;

/// The tools a word occurs in, and how often in each field.
type Postings = Vec<(u32, [u16; FIELDS])>;

/// A catalog's tools, ready to search.
pub struct Index {
    words: Words,
    /// For each stem, the tools it occurs in and how often in each field.
    postings: HashMap<String, Postings>,
    lengths: Vec<[u16; FIELDS]>,
    average: [f32; FIELDS],
    /// Each tool's exact names, lower-cased: `tool`, `server__tool`, `server/tool`, ...
    names: HashMap<String, Vec<u32>>,
    /// What each tool means: its name's words, title and description.
    meanings: Vec<Vector>,
}

impl Index {
    pub fn new<'a>(docs: impl IntoIterator<Item = Doc<'a>>) -> Self {
        let words = Words::default();
        let mut postings: HashMap<String, Postings> = HashMap::new();
        let mut lengths = Vec::new();
        let mut names: HashMap<String, Vec<u32>> = HashMap::new();
        let mut meanings = Vec::new();
        for (i, doc) in docs.into_iter().enumerate() {
            meanings.push(meaning::embed(&format!(
                "{} {}: {}",
                name_words(doc.name),
                doc.title.unwrap_or(""),
                doc.description
            )));
            let i = u32::try_from(i).unwrap_or(u32::MAX);
            let mut fields = [""; FIELDS];
            fields[NAME] = doc.name;
            fields[TITLE] = doc.title.unwrap_or("");
            fields[SERVER] = doc.server;
            fields[DESCRIPTION] = doc.description;
            fields[PARAMS] = doc.params;
            let mut counts: HashMap<String, [u16; FIELDS]> = HashMap::new();
            let mut length = [0u16; FIELDS];
            for (f, text) in fields.iter().enumerate() {
                for stem in words.stems(text) {
                    let c = counts.entry(stem).or_default();
                    c[f] = c[f].saturating_add(1);
                    length[f] = length[f].saturating_add(1);
                }
            }
            for (stem, c) in counts {
                postings.entry(stem).or_default().push((i, c));
            }
            lengths.push(length);
            let name = doc.name.to_lowercase();
            let server = doc.server.to_lowercase();
            let mut spelled = vec![name.clone()];
            if !server.is_empty() {
                for sep in ["__", "/", ".", ":", " "] {
                    spelled.push(format!("{server}{sep}{name}"));
                }
            }
            for s in spelled {
                names.entry(s).or_default().push(i);
            }
        }
        let n = lengths.len().max(1) as f32;
        let mut average = [0f32; FIELDS];
        for l in &lengths {
            for f in 0..FIELDS {
                average[f] += f32::from(l[f]) / n;
            }
        }
        Index {
            words,
            postings,
            lengths,
            average,
            names,
            meanings,
        }
    }

    /// How many tools the index holds.
    pub fn len(&self) -> usize {
        self.lengths.len()
    }

    pub fn is_empty(&self) -> bool {
        self.lengths.is_empty()
    }

    /// The tools that match `query`, best first, at most `limit`: those that have some of its
    /// words, ranked by words and meaning together; if none has any, the closest in meaning as
    /// guesses. A tool named exactly comes first with confidence 1.
    pub fn search(&self, query: &str, limit: usize) -> Vec<Hit> {
        let mut hits: Vec<Hit> = Vec::new();
        let exact = self
            .names
            .get(query.trim().to_lowercase().as_str())
            .cloned()
            .unwrap_or_default();
        for &doc in &exact {
            hits.push(Hit {
                doc: doc as usize,
                score: f32::INFINITY,
                confidence: 1.0,
                guess: false,
            });
        }
        let terms = self.terms(query);
        // Every word of the request weighs, those no tool has too (as the rarest words).
        let weight: f32 = terms.iter().map(|(_, idf, _)| idf).sum();
        let mut scores: HashMap<u32, (f32, f32)> = HashMap::new();
        for (postings, idf, factor) in &terms {
            for (doc, counts) in postings.iter().copied().flatten() {
                let length = &self.lengths[*doc as usize];
                let mut tf = 0.0;
                for f in 0..FIELDS {
                    if counts[f] == 0 {
                        continue;
                    }
                    let norm = 1.0 - B[f]
                        + B[f] * f32::from(length[f]) / self.average[f].max(f32::EPSILON);
                    tf += WEIGHT[f] * f32::from(counts[f]) / norm;
                }
                let entry = scores.entry(*doc).or_default();
                entry.0 += factor * idf * tf * (K1 + 1.0) / (K1 + tf);
                entry.1 += factor * idf;
            }
        }
        let wanted = meaning::embed(query);
        let near: Vec<f32> = self
            .meanings
            .iter()
            .map(|m| meaning::similarity(m, &wanted))
            .collect();
        let (lowest, highest) = near
            .iter()
            .fold((f32::MAX, f32::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let spread = (highest - lowest).max(f32::EPSILON);
        let best = scores.values().map(|s| s.0).fold(0f32, f32::max);
        let mut ranked: Vec<Hit> = scores
            .into_iter()
            .filter(|(doc, _)| !exact.contains(doc))
            .map(|(doc, (score, matched))| {
                let near = near[doc as usize];
                let share = if weight > 0.0 { matched / weight } else { 0.0 };
                Hit {
                    doc: doc as usize,
                    score: WORDS_SHARE * score / best.max(f32::EPSILON)
                        + (1.0 - WORDS_SHARE) * (near - lowest) / spread,
                    confidence: (share + near.max(0.0)) / 2.0,
                    guess: false,
                }
            })
            .collect();
        if ranked.is_empty() && exact.is_empty() {
            ranked = near
                .iter()
                .enumerate()
                .filter(|&(_, &near)| near > 0.0)
                .map(|(doc, &near)| Hit {
                    doc,
                    score: near,
                    confidence: near / 2.0,
                    guess: true,
                })
                .collect();
        }
        ranked.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc)));
        hits.extend(ranked);
        hits.truncate(limit);
        hits
    }

    /// The query's words as the index knows them: postings, rarity (idf) and how sure the word
    /// is (1, or [`TYPO`] for a word taken for the closest one the catalog has). A word
    /// repeated counts once.
    /// A word no tool has: `None`, weighed as the rarest.
    fn terms(&self, query: &str) -> Vec<(Option<&Postings>, f32, f32)> {
        let n = self.lengths.len() as f32;
        let mut stems = self.words.stems(query);
        stems.truncate(MOST_WORDS);
        stems.sort();
        stems.dedup();
        stems
            .iter()
            .map(|stem| match self.postings.get(stem.as_str()) {
                Some(p) => (Some(p), 1.0),
                None => (self.closest(stem), TYPO),
            })
            .map(|(postings, factor)| {
                let df = postings.map_or(0.0, |p| p.len() as f32);
                let idf = (1.0 + (n - df + 0.5) / (df + 0.5)).ln();
                (postings, idf, factor)
            })
            .collect()
    }

    /// The postings of the catalog's word closest to `stem`, when one is close enough to be a
    /// typo of it (long words only: "counter" is not "count").
    fn closest(&self, stem: &str) -> Option<&Postings> {
        if !(5..=LONGEST_WORD).contains(&stem.chars().count()) {
            return None;
        }
        self.postings
            .iter()
            .filter(|(word, _)| word.chars().count() >= 4)
            .map(|(word, postings)| (strsim::jaro_winkler(word, stem), word, postings))
            .filter(|(similarity, _, _)| *similarity >= 0.9)
            .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
            .map(|(_, _, postings)| postings)
    }
}

/// A tool's name as words: `git_diff` → "git diff", `listDirectory` → "list Directory".
fn name_words(name: &str) -> String {
    let mut out = String::with_capacity(name.len() + 4);
    let mut previous = ' ';
    for c in name.chars() {
        if matches!(c, '_' | '.' | '-' | '/') {
            out.push(' ');
        } else {
            if previous.is_lowercase() && c.is_uppercase() {
                out.push(' ');
            }
            out.push(c);
        }
        previous = c;
    }
    out
}
