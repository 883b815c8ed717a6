//! The catalog's words, indexed once, and BM25F over them.

use std::collections::HashMap;

use crate::meaning::{self, Vector};
use crate::typos::Typos;
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
/// A request's words past this many are not read: a request is a sentence, not a document.
const MOST_WORDS: usize = 64;

/// The tools a word occurs in, and how often in each field.
type Postings = Vec<(u32, [u16; FIELDS])>;

/// A catalog's tools, ready to search.
pub struct Index {
    words: Words,
    /// For each stem, the tools it occurs in and how often in each field.
    postings: HashMap<String, Postings>,
    /// The same stems, for taking a word the catalog does not have for a typo of one.
    typos: Typos,
    lengths: Vec<[u16; FIELDS]>,
    average: [f32; FIELDS],
    /// Each tool's exact names, lower-cased: `tool`, `server__tool`, `server/tool`, ...
    names: HashMap<String, Vec<u32>>,
    /// What each tool means: its name's words, title and description.
    meanings: Vec<Vector>,
    /// The same from a sentence model, when the caller has one.
    sentences: Option<Vec<Vec<f32>>>,
}

impl Index {
    pub fn new<'a>(docs: impl IntoIterator<Item = Doc<'a>>) -> Self {
        let words = Words::default();
        let mut postings: HashMap<String, Postings> = HashMap::new();
        let mut lengths = Vec::new();
        let mut names: HashMap<String, Vec<u32>> = HashMap::new();
        let mut meanings = Vec::new();
        let docs: Vec<Doc> = docs.into_iter().collect();
        let with_server = Self::names_servers(docs.iter().map(|d| d.server));
        for (i, doc) in docs.into_iter().enumerate() {
            // The built-in meaning is a mean of word pieces: the parameters' many words would
            // blur it, so it is the tool's own.
            let own = Doc { params: "", ..doc };
            meanings.push(meaning::embed(&Self::meaning_text(&own, with_server)));
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
            typos: Typos::new(postings.keys().map(String::as_str)),
            postings,
            lengths,
            average,
            names,
            meanings,
            sentences: None,
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
        self.search_with(query, None, limit)
    }

    /// [`Index::search`] with the request's vector from the sentence model whose vectors the
    /// index was given ([`Index::with_sentences`]): every tool is ranked by words and that
    /// meaning together, a tool none of whose words the request has too.
    pub fn search_with(&self, query: &str, sentence: Option<&[f32]>, limit: usize) -> Vec<Hit> {
        let fusion = if self.sentences.is_some() && sentence.is_some() {
            Fusion::SENTENCES
        } else {
            Fusion::STATIC
        };
        self.parts(query, sentence).rank(fusion, limit)
    }

    /// The text of a tool whose meaning counts, what a sentence model is given for it: its
    /// server's name when `with_server` (see [`Index::names_servers`]), its name's words, title,
    /// description and parameters (names and descriptions: "path", "timezone" say what a tool
    /// works on; what each adds is measured by the search bench, docs/guide/figures.md).
    pub fn meaning_text(doc: &Doc, with_server: bool) -> String {
        format!(
            "{} {} {}: {} {}",
            if with_server {
                name_words(doc.server)
            } else {
                String::new()
            },
            name_words(doc.name),
            doc.title.unwrap_or(""),
            doc.description,
            doc.params
        )
        .trim()
        .to_owned()
    }

    /// Whether the meaning of a catalog's tools (their servers given in order) takes in their
    /// server's name: when it has several servers, "memory" says what `create_entities` keeps
    /// and "git" what `git_status` shows; a name every tool shares says nothing of any (in every
    /// text of a one-server catalog it cost MetaTool top-1 on the search bench).
    pub fn names_servers<'s>(servers: impl IntoIterator<Item = &'s str>) -> bool {
        let mut servers = servers.into_iter();
        let first = servers.next();
        servers.any(|s| Some(s) != first)
    }

    /// The tools' vectors from a sentence model, in the order of the tools, each of length 1,
    /// all of one width; with them a search given the request's vector ranks by that meaning.
    /// Vectors that do not fit the catalog are not taken.
    pub fn with_sentences(mut self, vectors: Vec<Vec<f32>>) -> Self {
        let width = vectors.first().map_or(0, Vec::len);
        if vectors.len() == self.len() && width > 0 && vectors.iter().all(|v| v.len() == width) {
            self.sentences = Some(vectors);
        }
        self
    }

    /// The index holds a sentence model's vectors ([`Index::with_sentences`]).
    pub fn has_sentences(&self) -> bool {
        self.sentences.is_some()
    }

    /// What a search weighs, before it is ranked: the exact names, each matched tool's word
    /// score and share, and every tool's closeness in meaning.
    pub fn parts(&self, query: &str, sentence: Option<&[f32]>) -> Parts {
        let exact = self
            .names
            .get(query.trim().to_lowercase().as_str())
            .cloned()
            .unwrap_or_default();
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
        let (near, sentences) = match (&self.sentences, sentence) {
            (Some(tools), Some(wanted)) => (meaning::similarities(tools, wanted), true),
            _ => {
                let wanted = meaning::embed(query);
                let near = meaning::similarities(&self.meanings, &wanted);
                (near, false)
            }
        };
        let mut words: Vec<(u32, f32, f32)> = scores
            .into_iter()
            .map(|(doc, (score, matched))| (doc, score, matched))
            .collect();
        words.sort_by_key(|w| w.0);
        Parts {
            exact,
            words,
            weight,
            near,
            sentences,
        }
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
        self.typos
            .closest(stem)
            .and_then(|word| self.postings.get(word))
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

/// How a ranking weighs a tool's words against its meaning.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Fusion {
    /// How much the words' score counts; meaning counts the rest. Each is scaled to 0–1 among
    /// the catalog first (the best word score, the closest and farthest meaning).
    pub words: f32,
    /// Every tool is ranked, not only those with a word of the request (a sentence model's
    /// meaning is worth ranking alone).
    pub every_tool: bool,
    /// The words' weight is scaled by how well the request's words match: the largest share
    /// of them any one tool has (a request whose words no tool has much of is ranked by
    /// meaning).
    pub by_match: bool,
}

impl Fusion {
    /// With the static vectors: half and half, among the tools with a word of the request.
    /// Measured on the three sets of `offload-bench search`: 0.3 to 0.7 rank within a point.
    pub const STATIC: Fusion = Fusion {
        words: 0.5,
        every_tool: false,
        by_match: false,
    };
    /// With a sentence model: the weight `offload-bench search` picks on MetaTool's first 2,000
    /// requests (scored on the other sets and the rest of MetaTool).
    /// 2026-11-27: 0.25, top-1 / top-5 on the held-out MetaTool requests 60.3% / 81.4%.
    pub const SENTENCES: Fusion = Fusion {
        words: 0.25,
        every_tool: true,
        by_match: false,
    };
}

/// A search's parts before they are ranked ([`Index::parts`]).
pub struct Parts {
    exact: Vec<u32>,
    /// Each tool with a word of the request: its word score and the weight of the words matched.
    words: Vec<(u32, f32, f32)>,
    /// The weight of all the request's words.
    weight: f32,
    /// Every tool's closeness in meaning (a cosine).
    near: Vec<f32>,
    /// `near` is from a sentence model.
    sentences: bool,
}

impl Parts {
    /// The ranking `fusion` makes of these parts, best first, at most `limit`.
    pub fn rank(&self, fusion: Fusion, limit: usize) -> Vec<Hit> {
        let mut hits: Vec<Hit> = self
            .exact
            .iter()
            .map(|&doc| Hit {
                doc: doc as usize,
                score: f32::INFINITY,
                confidence: 1.0,
                guess: false,
            })
            .collect();
        let near = &self.near;
        let (lowest, highest) = near
            .iter()
            .fold((f32::MAX, f32::MIN), |(lo, hi), &x| (lo.min(x), hi.max(x)));
        let spread = (highest - lowest).max(f32::EPSILON);
        let best = self.words.iter().map(|w| w.1).fold(0f32, f32::max);
        let words_weight = if fusion.by_match && self.weight > 0.0 {
            let matched = self.words.iter().map(|w| w.2).fold(0f32, f32::max);
            fusion.words * (matched / self.weight).min(1.0)
        } else {
            fusion.words
        };
        let hit = |doc: usize, score: f32, matched: f32| {
            let share = if self.weight > 0.0 {
                matched / self.weight
            } else {
                0.0
            };
            Hit {
                doc,
                score: words_weight * score / best.max(f32::EPSILON)
                    + (1.0 - words_weight) * (near[doc] - lowest) / spread,
                confidence: (share + near[doc].max(0.0)) / 2.0,
                guess: matched == 0.0,
            }
        };
        let mut ranked: Vec<Hit> = if fusion.every_tool && self.sentences {
            let mut words = self.words.iter().peekable();
            (0..near.len())
                .map(|doc| match words.next_if(|w| w.0 as usize == doc) {
                    Some(&(_, score, matched)) => hit(doc, score, matched),
                    None => hit(doc, 0.0, 0.0),
                })
                .collect()
        } else {
            self.words
                .iter()
                .map(|&(doc, score, matched)| hit(doc as usize, score, matched))
                .collect()
        };
        ranked.retain(|h| !self.exact.contains(&(h.doc as u32)));
        if ranked.is_empty() && self.exact.is_empty() {
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
        // Only the first `limit` are kept: those are found, then ordered (a search with a
        // sentence model ranks every tool of the catalog).
        let order = |a: &Hit, b: &Hit| b.score.total_cmp(&a.score).then(a.doc.cmp(&b.doc));
        let keep = limit.saturating_sub(hits.len());
        if keep < ranked.len() {
            if keep > 0 {
                ranked.select_nth_unstable_by(keep - 1, order);
            }
            ranked.truncate(keep);
        }
        ranked.sort_by(order);
        hits.extend(ranked);
        hits.truncate(limit);
        hits
    }
}
