//! Text into the words a search compares: split at anything not a letter or digit and at
//! camelCase humps, lower-cased, words that say nothing about a tool dropped, stemmed.

use rust_stemmers::{Algorithm, Stemmer};

/// Words that say nothing about which tool is meant.
const STOP_WORDS: &[&str] = &[
    "a", "an", "the", "of", "to", "for", "in", "on", "about", "with", "and", "or", "my", "me",
    "what", "which", "is", "are", "was", "were", "do", "does", "did", "i", "you", "it", "its",
    "from", "into", "by", "at", "this", "that", "these", "those", "some", "any", "all", "can",
    "could", "would", "should", "please", "how", "tool", "tools", "want", "need", "use", "using",
    "be", "been", "there", "here", "so", "up", "if", "will", "your", "our", "we", "us", "as",
    "has", "have", "had", "than", "then", "them", "they", "he", "she", "his", "her", "their",
    "also", "just",
];

/// Splits and stems text; holds the stemmer.
pub struct Words {
    stemmer: Stemmer,
}

impl Default for Words {
    fn default() -> Self {
        Words {
            stemmer: Stemmer::create(Algorithm::English),
        }
    }
}

impl Words {
    /// The stems of `text`'s meaningful words, in order.
    pub fn stems(&self, text: &str) -> Vec<String> {
        let mut out = Vec::new();
        for word in split(text) {
            if !STOP_WORDS.contains(&word.as_str()) {
                out.push(self.stemmer.stem(&word).into_owned());
            }
        }
        out
    }
}

/// The stems of `text` with a stemmer made for the call (tests, one-off uses).
pub fn stem_words(text: &str) -> Vec<String> {
    Words::default().stems(text)
}

/// `getCurrentTime_v2` → get, current, time, v2.
fn split(text: &str) -> impl Iterator<Item = String> + '_ {
    text.split(|c: char| !c.is_alphanumeric())
        .filter(|w| !w.is_empty())
        .flat_map(humps)
        .map(str::to_lowercase)
}

/// `getCurrentTime` → get, Current, Time; `HTTPServer` → HTTP, Server.
fn humps(word: &str) -> Vec<&str> {
    let chars: Vec<(usize, char)> = word.char_indices().collect();
    let mut parts = Vec::new();
    let mut start = 0;
    for i in 1..chars.len() {
        let (at, c) = chars[i];
        let prev = chars[i - 1].1;
        let next_lower = chars.get(i + 1).is_some_and(|(_, n)| n.is_lowercase());
        if c.is_uppercase() && (prev.is_lowercase() || (prev.is_uppercase() && next_lower)) {
            parts.push(&word[start..at]);
            start = at;
        }
    }
    parts.push(&word[start..]);
    parts
}
