//! A request's word the catalog does not have, taken for a typo of the closest one it has: the
//! catalog's word most like it by Jaro–Winkler, when at least [`SIMILAR`].
//!
//! A request in another language has dozens of such words, and comparing each letter by letter
//! with every word of a catalog of 2,000 tools took most of a long request's word search (up to
//! 16 ms, BFCL's requests at 2,192 tools, docs/guide/figures.md). So each word's letters are
//! counted once, and a word whose counts and length cannot reach [`SIMILAR`] (too few letters in
//! common, whatever their order and place) is passed over unread: the same word is chosen as by
//! comparing every one.

/// How alike two words must be for one to be taken for a typo of the other.
const SIMILAR: f64 = 0.9;
/// Shorter words are not taken for typos ("counter" is not "count"), nor are longer ones.
const SHORTEST_WORD: usize = 5;
const LONGEST_WORD: usize = 32;
/// A catalog's word shorter than this is not taken for the word of a typo.
const SHORTEST_KNOWN: usize = 4;

/// How many of each letter a word has: `a`–`z` one place each, digits one, any other letter one
/// of five by its code. Two words have at most as many letters in common as the sum of the
/// smaller counts place by place.
type Letters = [u8; 32];

fn letters(word: &str) -> Letters {
    let mut out = [0u8; 32];
    for c in word.chars() {
        let place = match c {
            'a'..='z' => c as usize - 'a' as usize,
            '0'..='9' => 26,
            _ => 27 + c as usize % 5,
        };
        out[place] = out[place].saturating_add(1);
    }
    out
}

fn in_common(a: &Letters, b: &Letters) -> usize {
    a.iter().zip(b).map(|(x, y)| usize::from(*x.min(y))).sum()
}

/// The most Jaro–Winkler similarity words of `a` and `b` letters can have with at most `common`
/// letters matched and a common prefix of `prefix` (of at most 4): Jaro's with every letter in
/// common matched and none transposed, given the prefix's boost. A bound, never less than the
/// words' similarity (the boost is only given past 0.7, and grows with Jaro's).
fn most_alike(a: usize, b: usize, common: usize, prefix: usize) -> f64 {
    let m = common.min(a).min(b) as f64;
    if m == 0.0 {
        return 0.0;
    }
    let jaro = (m / a as f64 + m / b as f64 + 1.0) / 3.0;
    jaro + 0.1 * prefix.min(4) as f64 * (1.0 - jaro)
}

/// Below the threshold however the arithmetic rounds (strsim sums the same terms in its order).
fn below(bound: f64) -> bool {
    bound < SIMILAR - 1e-9
}

/// The catalog's words that a typo may be taken for, with their letters counted.
pub struct Typos {
    words: Vec<Known>,
}

struct Known {
    word: String,
    chars: usize,
    letters: Letters,
}

impl Typos {
    pub fn new<'a>(words: impl IntoIterator<Item = &'a str>) -> Self {
        let words = words
            .into_iter()
            .map(|w| (w, w.chars().count()))
            .filter(|&(_, chars)| chars >= SHORTEST_KNOWN)
            .map(|(w, chars)| Known {
                word: w.to_owned(),
                chars,
                letters: letters(w),
            })
            .collect();
        Typos { words }
    }

    /// The word `stem` is taken for, if any: the most alike at [`SIMILAR`] or more (of equals,
    /// the first in alphabetical order).
    pub fn closest(&self, stem: &str) -> Option<&str> {
        let chars = stem.chars().count();
        if !(SHORTEST_WORD..=LONGEST_WORD).contains(&chars) {
            return None;
        }
        let counted = letters(stem);
        self.words
            .iter()
            .filter(|k| {
                let common = in_common(&counted, &k.letters);
                if below(most_alike(chars, k.chars, common, 4)) {
                    return false;
                }
                let prefix = stem
                    .chars()
                    .zip(k.word.chars())
                    .take(4)
                    .take_while(|(a, b)| a == b)
                    .count();
                !below(most_alike(chars, k.chars, common, prefix))
            })
            .map(|k| (strsim::jaro_winkler(&k.word, stem), k.word.as_str()))
            .filter(|(similarity, _)| *similarity >= SIMILAR)
            .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
            .map(|(_, word)| word)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The word every known one compared letter by letter would choose (how it was chosen
    /// before the counts).
    fn by_every_word<'a>(known: &[&'a str], stem: &str) -> Option<&'a str> {
        if !(SHORTEST_WORD..=LONGEST_WORD).contains(&stem.chars().count()) {
            return None;
        }
        known
            .iter()
            .filter(|w| w.chars().count() >= SHORTEST_KNOWN)
            .map(|w| (strsim::jaro_winkler(w, stem), *w))
            .filter(|(s, _)| *s >= SIMILAR)
            .max_by(|a, b| a.0.total_cmp(&b.0).then_with(|| b.1.cmp(a.1)))
            .map(|(_, w)| w)
    }

    #[test]
    fn a_typo_is_taken_for_the_word_every_comparison_would_choose() {
        // Words alike in many ways: swapped, doubled, missing and extra letters, shared
        // prefixes, other scripts, digits; and words of the bench's sets.
        let known = [
            "weather",
            "forecast",
            "knowledge",
            "graph",
            "read",
            "entiti",
            "observ",
            "creat",
            "relat",
            "directori",
            "file",
            "list",
            "search",
            "commit",
            "histori",
            "repositori",
            "produk",
            "ukuran",
            "stok",
            "konfirmasi",
            "timezon",
            "convert",
            "currenc",
            "calcul",
            "triangl",
            "factori",
            "área",
            "größe",
            "straße",
            "naïve",
            "v2",
            "utf8",
            "x86_64",
            "abcdefgh",
            "hgfedcba",
            "abcdabcd",
            "aaaaaaaaaa",
            "Ünïcödé",
            "日本語のテキスト",
        ];
        let typos = Typos::new(known.iter().copied());
        let stems = [
            "wheather",
            "forcast",
            "knowlege",
            "grahp",
            "entity",
            "observe",
            "relation",
            "directory",
            "comit",
            "histroy",
            "repository",
            "produkt",
            "ukurannya",
            "stock",
            "konfirmasikan",
            "timezone",
            "convrt",
            "curency",
            "calculat",
            "triangel",
            "factorial",
            "areas",
            "grosse",
            "strasse",
            "naive",
            "abcdefhg",
            "badcfehg",
            "aaaaaaaaa",
            "unicode",
            "日本語のテキト",
            "x86_46",
            "zzzzz",
            "qqqqqqqq",
            "abcd",
            "a",
            "",
            &"long".repeat(9),
        ];
        let mut taken = 0;
        for stem in stems {
            let expected = by_every_word(&known, stem);
            assert_eq!(typos.closest(stem), expected, "{stem}");
            taken += usize::from(expected.is_some());
        }
        // The cases above take some words for typos and refuse others.
        assert!((10..stems.len() - 5).contains(&taken), "{taken}");
    }

    #[test]
    fn the_bound_is_never_under_the_similarity() {
        let words = [
            "weather",
            "wheather",
            "abcdefgh",
            "hgfedcba",
            "aabbccdd",
            "abab",
            "baba",
            "größe",
            "grosse",
            "forecast",
            "forcast",
            "straße",
            "strasse",
            "konfirmasi",
            "konfirmasikan",
        ];
        for a in words {
            for b in words {
                let (la, lb) = (a.chars().count(), b.chars().count());
                let common = in_common(&letters(a), &letters(b));
                let prefix = a
                    .chars()
                    .zip(b.chars())
                    .take(4)
                    .take_while(|(x, y)| x == y)
                    .count();
                let similarity = strsim::jaro_winkler(a, b);
                assert!(
                    most_alike(la, lb, common, prefix) >= similarity - 1e-9,
                    "{a} {b}: {similarity}"
                );
            }
        }
    }
}
