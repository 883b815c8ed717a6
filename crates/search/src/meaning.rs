//! What a text means, as a vector: the mean of its word pieces' vectors, so that "remember a fact
//! about someone" lands near "add observations to entities" though they share no word.
//!
//! The pieces and their vectors come from the sentence model all-MiniLM-L6-v2 (Apache-2.0),
//! distilled by `scripts/search-model.py`: each word piece run through the model alone, the
//! vectors cut to their 128 principal directions, common pieces weighed less, four bits a
//! dimension (`data/pieces.bin`, 2.1 MB; `data/vocab.txt`, 0.2 MB; built in compressed, 1.8 MB,
//! and inflated at the first search). Splitting a text into pieces is
//! BERT's: lower-cased, accents stripped, punctuation and CJK characters apart, each word the
//! longest pieces of the vocabulary that make it up ("observations" → "observation", "##s").

use pulp::{Arch, Simd, WithSimd};
use std::collections::HashMap;
use std::io::Read;
use std::sync::OnceLock;

use unicode_general_category::{GeneralCategory, get_general_category};
use unicode_normalization::UnicodeNormalization;

/// How many numbers a vector has.
pub const DIMENSIONS: usize = 128;

/// A text's meaning, of length 1 (or all zeros for a text with no pieces).
pub type Vector = [f32; DIMENSIONS];

/// `data/pieces.bin` and `data/vocab.txt` in zlib (build.rs).
const PIECES: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/pieces.bin.z"));
const VOCAB: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/vocab.txt.z"));
const MAGIC: &[u8] = b"OFFV2";
/// A longer word is one unknown piece, as in BERT.
const LONGEST_WORD: usize = 100;
/// A text's pieces past this many are not read: a tool is known by its first lines.
const MOST_PIECES: usize = 256;

/// The vocabulary and each piece's vector.
struct Table {
    ids: HashMap<&'static str, u32>,
    unknown: u32,
    scales: Vec<f32>,
    values: Vec<u8>,
}

/// The table, read once from the data built in; `None` if that data were malformed (a test
/// makes sure it is not), and then no text has a meaning.
fn table() -> Option<&'static Table> {
    static TABLE: OnceLock<Option<Table>> = OnceLock::new();
    TABLE.get_or_init(read).as_ref()
}

fn inflate(packed: &[u8]) -> Option<Vec<u8>> {
    let mut out = Vec::new();
    flate2::read::ZlibDecoder::new(packed)
        .read_to_end(&mut out)
        .ok()?;
    Some(out)
}

fn read() -> Option<Table> {
    let pieces = inflate(PIECES)?;
    // The table's ids borrow the pieces' names, for the life of the process.
    let vocab: &'static str = String::from_utf8(inflate(VOCAB)?).ok()?.leak();
    let rest = pieces.strip_prefix(MAGIC)?;
    let dimensions = u16::from_le_bytes(rest.get(..2)?.try_into().ok()?);
    let rows = u32::from_le_bytes(rest.get(2..6)?.try_into().ok()?) as usize;
    if usize::from(dimensions) != DIMENSIONS {
        return None;
    }
    let rest = &rest[6..];
    let (scales, values) = rest.split_at_checked(rows * 4)?;
    if values.len() != rows * DIMENSIONS / 2 {
        return None;
    }
    let scales = scales
        .chunks_exact(4)
        .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        .collect();
    let ids: HashMap<&str, u32> = vocab
        .lines()
        .enumerate()
        .map(|(i, piece)| (piece, i as u32))
        .collect();
    if vocab.lines().count() != rows {
        return None;
    }
    Some(Table {
        unknown: *ids.get("[UNK]")?,
        ids,
        scales,
        values: values.to_vec(),
    })
}

/// A request's pieces past this many are not read by the sentence model (its words all count
/// for the word match): a search's time stays bounded (a sentence model's pass grows with its
/// pieces), and a request says what it wants in its first words.
pub const REQUEST_PIECES: usize = 64;

/// `text`'s word pieces, as ids of the vocabulary (at most [`MOST_PIECES`]).
pub fn pieces(text: &str) -> Vec<u32> {
    first_pieces(text, MOST_PIECES)
}

/// A search request's word pieces, as the sentence model reads them (at most
/// [`REQUEST_PIECES`]).
pub fn request_pieces(text: &str) -> Vec<u32> {
    first_pieces(text, REQUEST_PIECES)
}

fn first_pieces(text: &str, most: usize) -> Vec<u32> {
    let Some(table) = table() else {
        return Vec::new();
    };
    let mut out = Vec::new();
    for word in words(text) {
        if out.len() >= most {
            break;
        }
        table.word_pieces(&word, &mut out);
    }
    out.truncate(most);
    out
}

/// What `text` means: the mean of its pieces' vectors, of length 1.
pub fn embed(text: &str) -> Vector {
    let mut v = [0f32; DIMENSIONS];
    let Some(table) = table() else {
        return v;
    };
    for id in pieces(text) {
        let row = id as usize;
        let scale = table.scales[row];
        let values = &table.values[row * DIMENSIONS / 2..(row + 1) * DIMENSIONS / 2];
        for (pair, &b) in v.chunks_exact_mut(2).zip(values) {
            // Two four-bit values a byte, the first in the low bits; shifts sign-extend them.
            pair[0] += scale * f32::from(((b << 4) as i8) >> 4);
            pair[1] += scale * f32::from((b as i8) >> 4);
        }
    }
    let norm = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if norm > 0.0 {
        v.iter_mut().for_each(|x| *x /= norm);
    }
    v
}

/// How close two meanings are: the cosine of their vectors (of length 1), -1 to 1.
pub fn similarity(a: &[f32], b: &[f32]) -> f32 {
    similarities(&[a], b)[0]
}

/// How close each of `vectors` is to `wanted` ([`similarity`]). A search with a sentence model
/// ranks every tool by this: in the processor's vector instructions, picked at run time (the
/// release build's vectoriser leaves such a loop scalar).
pub fn similarities<V: AsRef<[f32]>>(vectors: &[V], wanted: &[f32]) -> Vec<f32> {
    Arch::new().dispatch(Closeness { vectors, wanted })
}

struct Closeness<'a, V> {
    vectors: &'a [V],
    wanted: &'a [f32],
}

impl<V: AsRef<[f32]>> WithSimd for Closeness<'_, V> {
    type Output = Vec<f32>;

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) -> Vec<f32> {
        self.vectors
            .iter()
            .map(|v| dot(simd, v.as_ref(), self.wanted))
            .collect()
    }
}

/// The dot product of `a` and `b` (of the shorter one's length), two sums of vectors at a time.
#[inline(always)]
fn dot<S: Simd>(simd: S, a: &[f32], b: &[f32]) -> f32 {
    let n = a.len().min(b.len());
    let (a, a_rest) = S::as_simd_f32s(&a[..n]);
    let (b, b_rest) = S::as_simd_f32s(&b[..n]);
    let (mut even, mut odd) = (simd.splat_f32s(0.0), simd.splat_f32s(0.0));
    let (pairs_a, pairs_b) = (a.chunks_exact(2), b.chunks_exact(2));
    let last = pairs_a.remainder().iter().zip(pairs_b.remainder());
    for (x, y) in pairs_a.zip(pairs_b) {
        even = simd.mul_add_e_f32s(x[0], y[0], even);
        odd = simd.mul_add_e_f32s(x[1], y[1], odd);
    }
    for (x, y) in last {
        even = simd.mul_add_e_f32s(*x, *y, even);
    }
    let rest: f32 = a_rest.iter().zip(b_rest).map(|(x, y)| x * y).sum();
    simd.reduce_sum_f32s(simd.add_f32s(even, odd)) + rest
}

impl Table {
    /// The longest pieces that make up `word`, first to last; the unknown piece if some part
    /// of it is in no piece.
    fn word_pieces(&self, word: &str, out: &mut Vec<u32>) {
        let chars: Vec<char> = word.chars().collect();
        if chars.len() > LONGEST_WORD {
            out.push(self.unknown);
            return;
        }
        let mut found = Vec::new();
        let mut start = 0;
        let mut piece = String::new();
        while start < chars.len() {
            let mut end = chars.len();
            let mut id = None;
            while start < end {
                piece.clear();
                if start > 0 {
                    piece.push_str("##");
                }
                piece.extend(&chars[start..end]);
                if let Some(&i) = self.ids.get(piece.as_str()) {
                    id = Some(i);
                    break;
                }
                end -= 1;
            }
            let Some(id) = id else {
                out.push(self.unknown);
                return;
            };
            found.push(id);
            start = end;
        }
        out.extend(found);
    }
}

/// BERT's words: control characters dropped, lower-cased, accents stripped, split at white
/// space, each punctuation mark and CJK character a word of its own.
fn words(text: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut word = String::new();
    let end = |word: &mut String, words: &mut Vec<String>| {
        if !word.is_empty() {
            words.push(std::mem::take(word));
        }
    };
    for c in text.chars().flat_map(char::to_lowercase).nfd() {
        let category = get_general_category(c);
        if c == '\0' || c == '\u{fffd}' || category == GeneralCategory::NonspacingMark {
            continue;
        }
        if c.is_whitespace() {
            end(&mut word, &mut words);
        } else if c.is_control() || matches!(category, GeneralCategory::Format) {
            continue;
        } else if is_punctuation(c, category) || is_cjk(c) {
            end(&mut word, &mut words);
            words.push(c.to_string());
        } else {
            word.push(c);
        }
    }
    end(&mut word, &mut words);
    words
}

/// A punctuation mark as BERT counts them: every ASCII sign that is not a letter or digit, and
/// Unicode's punctuation.
fn is_punctuation(c: char, category: GeneralCategory) -> bool {
    c.is_ascii_punctuation()
        || matches!(
            category,
            GeneralCategory::ConnectorPunctuation
                | GeneralCategory::DashPunctuation
                | GeneralCategory::OpenPunctuation
                | GeneralCategory::ClosePunctuation
                | GeneralCategory::InitialPunctuation
                | GeneralCategory::FinalPunctuation
                | GeneralCategory::OtherPunctuation
        )
}

/// The CJK ideographs BERT splits one by one.
fn is_cjk(c: char) -> bool {
    matches!(u32::from(c),
        0x4E00..=0x9FFF
        | 0x3400..=0x4DBF
        | 0x20000..=0x2A6DF
        | 0x2A700..=0x2B73F
        | 0x2B740..=0x2B81F
        | 0x2B820..=0x2CEAF
        | 0xF900..=0xFAFF
        | 0x2F800..=0x2FA1F)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Closeness in meaning is the dot product, whatever the vectors' length, in each set of
    /// instructions this processor has (and plain code).
    #[test]
    fn closeness_is_the_dot_product() {
        let mut arches = vec![Arch::Scalar, Arch::new()];
        #[cfg(target_arch = "x86_64")]
        arches.extend(pulp::x86::V3::try_new().map(Arch::V3));
        for n in [0, 1, 7, 15, 16, 17, 33, 384, 390] {
            let a: Vec<f32> = (0..n)
                .map(|i| ((i * 13 % 29) as f32 - 14.0) / 16.0)
                .collect();
            let b: Vec<f32> = (0..n).map(|i| ((i * 7 % 23) as f32 - 11.0) / 8.0).collect();
            let in_order: f64 = a.iter().zip(&b).map(|(x, y)| f64::from(x * y)).sum();
            for &arch in &arches {
                let vectors = [a.as_slice(), b.as_slice()];
                let got = arch.dispatch(Closeness {
                    vectors: &vectors,
                    wanted: &b,
                });
                let tolerance = 1e-4 * in_order.abs().max(1.0);
                assert!(
                    (f64::from(got[0]) - in_order).abs() <= tolerance,
                    "{n}: {got:?}"
                );
            }
        }
        // Of unequal lengths, the shorter one's.
        assert_eq!(similarity(&[1.0, 2.0, 3.0], &[1.0, 1.0]), 3.0);
        assert_eq!(similarities::<&[f32]>(&[], &[1.0]), Vec::<f32>::new());
    }

    /// What is built in compressed is the data files, byte for byte.
    #[test]
    fn the_built_in_data_is_the_data_files() {
        assert_eq!(
            inflate(PIECES).as_deref(),
            Some(&include_bytes!("../data/pieces.bin")[..])
        );
        assert_eq!(
            inflate(VOCAB).as_deref(),
            Some(include_str!("../data/vocab.txt").as_bytes())
        );
        assert!(PIECES.len() < 1_700_000, "{} bytes", PIECES.len());
    }

    #[test]
    fn the_built_in_table_reads() {
        let t = table().expect("data/pieces.bin and data/vocab.txt agree");
        assert_eq!(t.scales.len(), 30_522);
        assert_eq!(t.ids["[UNK]"], 100);
    }

    /// The same pieces as the model's own tokenizer (Hugging Face `tokenizers`, the ids below
    /// printed by it for these texts).
    #[test]
    fn pieces_are_berts() {
        for (text, ids) in [
            (
                "Remember that Ana likes green tea",
                &[3342, 2008, 9617, 7777, 2665, 5572][..],
            ),
            (
                "git_diff_unstaged: Shows changes",
                &[
                    21025, 2102, 1035, 4487, 4246, 1035, 4895, 9153, 5999, 1024, 3065, 3431,
                ],
            ),
            (
                "Café naïve — résumé, 東京!",
                &[7668, 15743, 1517, 13746, 1010, 1879, 1755, 999],
            ),
            ("", &[]),
        ] {
            assert_eq!(pieces(text), ids, "{text}");
        }
    }

    #[test]
    fn hostile_text_is_read_within_bounds() {
        assert_eq!(pieces(&"a".repeat(100_000)), vec![100]);
        assert!(pieces(&"word ".repeat(10_000)).len() <= MOST_PIECES);
        let v = embed("\0\u{202e}\u{fffd}\u{1}");
        assert!(v.iter().all(|x| *x == 0.0));
        let v = embed("add observations");
        let norm: f32 = v.iter().map(|x| x * x).sum();
        assert!((norm - 1.0).abs() < 1e-4);
    }

    #[test]
    fn close_meanings_are_closer() {
        let q = embed("remember a fact about a person");
        let near = embed(
            "add observations: Add new observations to existing entities in the knowledge graph",
        );
        let far = embed("convert time: Convert time between timezones");
        assert!(similarity(&q, &near) > similarity(&q, &far));
    }
}
