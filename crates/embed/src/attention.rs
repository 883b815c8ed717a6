//! Self-attention in the processor's vector instructions (`pulp`, as the products in `kernel`):
//! each text's pieces attend to its own pieces, head by head. For a head, the keys are turned
//! once so that a piece's scores with every other come out a vector of pieces at a time, the
//! softmax's exponential is a polynomial in vectors, and the values are summed by their
//! weights in registers. Written out because, with the heads as matrices of their own, the
//! copies, the general products on 64 × 32 matrices and libm's `expf` a value at a time were a
//! third of what remained of a request once the products with the weights were fast.

use pulp::{Arch, Simd, WithSimd};

/// Where a text's pieces are: the first row and how many.
#[derive(Debug, Clone, Copy)]
pub struct Text {
    pub start: usize,
    pub len: usize,
}

impl Text {
    /// Texts of these lengths, one after another from the first row.
    pub fn spans(lengths: impl IntoIterator<Item = usize>) -> Vec<Text> {
        let mut start = 0;
        lengths
            .into_iter()
            .map(|len| {
                start += len;
                Text {
                    start: start - len,
                    len,
                }
            })
            .collect()
    }
}

/// For each text and head of `head` numbers: `softmax(q · kᵀ / √head) · v`, into `out`. The
/// matrices are rows of `width` numbers one after another (`width` a multiple of `head`).
pub struct Attend<'a> {
    pub q: &'a [f32],
    pub k: &'a [f32],
    pub v: &'a [f32],
    pub width: usize,
    pub head: usize,
    pub texts: &'a [Text],
    pub out: &'a mut [f32],
}

impl Attend<'_> {
    /// In the widest vector instructions this processor has.
    pub fn run(self) {
        self.run_on(Arch::new());
    }

    fn run_on(self, arch: Arch) {
        assert!(self.width.is_multiple_of(self.head), "whole heads");
        let len = self.out.len();
        assert!(self.q.len() == len && self.k.len() == len && self.v.len() == len);
        arch.dispatch(self);
    }
}

impl WithSimd for Attend<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Attend {
            q,
            k,
            v,
            width,
            head,
            texts,
            out,
        } = self;
        let lanes = S::F32_LANES;
        // Two vectors a block, four pieces' queries at a time: eight sums stay in registers
        // while a loop runs (with one query's two, each sum waited on the one before).
        let block = 2 * lanes;
        assert!(head.is_multiple_of(block), "a head in whole blocks");
        let scale = 1.0 / (head as f32).sqrt();
        let mut keys = Vec::new();
        let mut weights = Vec::new();
        let mut sums = vec![0f32; QUERIES * head];
        for text in texts {
            let n = text.len;
            let columns = n.div_ceil(block) * block;
            let blocks = columns / lanes;
            let rows = |m, h| pieces(m, *text, width, h..h + head);
            // Sized once a text: every head writes the same places (a key's padding stays 0,
            // every weight is written again at each step).
            keys.clear();
            keys.resize(head * columns, 0.0);
            weights.clear();
            weights.resize(QUERIES * columns, 0.0);
            for h in (0..width).step_by(head) {
                // The head's keys turned, scaled by 1/√head: a row a number, a column a piece.
                for (j, key) in rows(k, h).enumerate() {
                    for (c, &number) in key.iter().enumerate() {
                        keys[c * columns + j] = number * scale;
                    }
                }
                let (turned, _) = S::as_simd_f32s(&keys);
                let queries: Vec<&[f32]> = rows(q, h).collect();
                // The last one to three queries as four, the last repeated.
                for first in (0..n).step_by(QUERIES) {
                    let query: [&[f32]; QUERIES] =
                        std::array::from_fn(|t| queries[(first + t).min(n - 1)]);
                    // Their scores with every piece, a block of pieces at a time.
                    let (scores, _) = S::as_mut_simd_f32s(&mut weights);
                    for b in (0..blocks).step_by(2) {
                        let mut acc = [[simd.splat_f32s(0.0); 2]; QUERIES];
                        for c in 0..head {
                            let at = c * blocks + b;
                            let (k0, k1) = (turned[at], turned[at + 1]);
                            for (acc, query) in acc.iter_mut().zip(query) {
                                let x = simd.splat_f32s(query[c]);
                                acc[0] = simd.mul_add_e_f32s(x, k0, acc[0]);
                                acc[1] = simd.mul_add_e_f32s(x, k1, acc[1]);
                            }
                        }
                        for (t, acc) in acc.iter().enumerate() {
                            scores[t * blocks + b] = acc[0];
                            scores[t * blocks + b + 1] = acc[1];
                        }
                    }
                    for row in weights.chunks_exact_mut(columns) {
                        row[n..].fill(f32::NEG_INFINITY);
                        softmax(simd, row);
                    }
                    // The values summed by their weights, a block of the head's numbers at a time.
                    let (to, _) = S::as_mut_simd_f32s(&mut sums);
                    for b in (0..head / lanes).step_by(2) {
                        let mut acc = [[simd.splat_f32s(0.0); 2]; QUERIES];
                        for (j, value) in rows(v, h).enumerate() {
                            let (value, _) = S::as_simd_f32s(value);
                            let (v0, v1) = (value[b], value[b + 1]);
                            for (t, acc) in acc.iter_mut().enumerate() {
                                let p = simd.splat_f32s(weights[t * columns + j]);
                                acc[0] = simd.mul_add_e_f32s(p, v0, acc[0]);
                                acc[1] = simd.mul_add_e_f32s(p, v1, acc[1]);
                            }
                        }
                        for (t, acc) in acc.iter().enumerate() {
                            to[t * head / lanes + b] = acc[0];
                            to[t * head / lanes + b + 1] = acc[1];
                        }
                    }
                    for (t, sum) in sums.chunks_exact(head).enumerate().take(n - first) {
                        let at = (text.start + first + t) * width + h;
                        out[at..at + head].copy_from_slice(sum);
                    }
                }
            }
        }
    }
}

/// Queries a step.
const QUERIES: usize = 4;

/// The numbers `columns` of each of a text's pieces in `m` (rows `width` long).
fn pieces(
    m: &[f32],
    text: Text,
    width: usize,
    columns: std::ops::Range<usize>,
) -> impl Iterator<Item = &[f32]> {
    (text.start..text.start + text.len)
        .map(move |r| &m[r * width + columns.start..r * width + columns.end])
}

/// `scores` made weights that sum to 1 (`exp(s − top) / Σ`); an infinitely low score weighs 0.
#[inline(always)]
fn softmax<S: Simd>(simd: S, scores: &mut [f32]) {
    let (head, tail) = S::as_mut_simd_f32s(scores);
    assert!(tail.is_empty(), "scores in whole vectors");
    let mut top = simd.splat_f32s(f32::NEG_INFINITY);
    for s in head.iter() {
        top = simd.max_f32s(top, *s);
    }
    let top = simd.splat_f32s(simd.reduce_max_f32s(top));
    let mut sum = simd.splat_f32s(0.0);
    for s in head.iter_mut() {
        *s = exp(simd, simd.sub_f32s(*s, top));
        sum = simd.add_f32s(sum, *s);
    }
    let inverse = simd.splat_f32s(1.0 / simd.reduce_sum_f32s(sum));
    for s in head.iter_mut() {
        *s = simd.mul_f32s(*s, inverse);
    }
}

/// eˣ within two units in the last place for x in [-87.3, 88] (0 below, as a weight should
/// be; e⁸⁸ above): x = k·ln 2 + r with |r| ≤ ln 2 / 2, eʳ by Cephes' polynomial for
/// `expf`, 2ᵏ made in the exponent's bits.
#[inline(always)]
fn exp<S: Simd>(simd: S, x: S::f32s) -> S::f32s {
    const LOW: f32 = -87.336_54;
    const HIGH: f32 = 88.0;
    // Adding 1.5 · 2²³ rounds to an integer, found in the sum's low bits.
    const ROUND: f32 = 12_582_912.0;
    let below = simd.less_than_f32s(x, simd.splat_f32s(LOW));
    let x = simd.min_f32s(
        simd.max_f32s(x, simd.splat_f32s(LOW)),
        simd.splat_f32s(HIGH),
    );
    let t = simd.mul_add_e_f32s(
        x,
        simd.splat_f32s(std::f32::consts::LOG2_E),
        simd.splat_f32s(ROUND),
    );
    let k = simd.sub_f32s(t, simd.splat_f32s(ROUND));
    let r = simd.mul_add_e_f32s(k, simd.splat_f32s(-0.693_359_4), x);
    let r = simd.mul_add_e_f32s(k, simd.splat_f32s(2.121_944_4e-4), r);
    let mut p = simd.splat_f32s(1.987_569_1e-4);
    for c in [
        1.398_199_9e-3,
        8.333_452e-3,
        4.166_579_6e-2,
        0.166_666_65,
        0.5,
    ] {
        p = simd.mul_add_e_f32s(p, r, simd.splat_f32s(c));
    }
    let p = simd.mul_add_e_f32s(
        p,
        simd.mul_f32s(r, r),
        simd.add_f32s(r, simd.splat_f32s(1.0)),
    );
    // 2ᵏ: k + 127 in the exponent's bits.
    let bits = simd.sub_u32s(
        simd.transmute_u32s_f32s(t),
        simd.splat_u32s(ROUND.to_bits() - 127),
    );
    let two_k = simd.transmute_f32s_u32s(simd.wrapping_dyn_shl_u32s(bits, simd.splat_u32s(23)));
    let y = simd.mul_f32s(p, two_k);
    simd.select_f32s(below, simd.splat_f32s(0.0), y)
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::kernel::tests::arches;
    use crate::kernel::{OfEach, each};

    struct Exp;

    impl OfEach for Exp {
        #[inline(always)]
        fn of<S: Simd>(simd: S, v: S::f32s) -> S::f32s {
            exp(simd, v)
        }
    }

    #[test]
    fn exp_within_two_units_in_the_last_place() {
        let mut values: Vec<f32> = (-880_000..=880_000).map(|i| i as f32 / 10_000.0).collect();
        values.extend([
            f32::NEG_INFINITY,
            -1e30,
            -87.4,
            -0.0,
            0.0,
            1e-30,
            88.72,
            100.0,
        ]);
        for arch in arches() {
            let mut got = values.clone();
            each::<Exp>(arch, &mut got);
            for (&x, &g) in values.iter().zip(&got) {
                let want = f64::from(x.min(88.0)).exp();
                if x < -87.336_54 {
                    assert_eq!(g, 0.0, "{arch:?}: e^{x}");
                } else {
                    let ulp = f64::from(f32::EPSILON) * want;
                    assert!(
                        (f64::from(g) - want).abs() <= 2.0 * ulp,
                        "{arch:?}: e^{x} = {g}, not {want}"
                    );
                }
            }
        }
    }

    /// Attention as the model defines it, in double precision, a text and a head at a time.
    fn plain(q: &[f32], k: &[f32], v: &[f32], width: usize, texts: &[Text]) -> Vec<f64> {
        let head = 32;
        let mut out = vec![0f64; q.len()];
        for t in texts {
            for h in (0..width).step_by(head) {
                for i in t.start..t.start + t.len {
                    let scores: Vec<f64> = (t.start..t.start + t.len)
                        .map(|j| {
                            (0..head)
                                .map(|c| {
                                    f64::from(q[i * width + h + c])
                                        * f64::from(k[j * width + h + c])
                                })
                                .sum::<f64>()
                                / (head as f64).sqrt()
                        })
                        .collect();
                    let top = scores.iter().copied().fold(f64::MIN, f64::max);
                    let exps: Vec<f64> = scores.iter().map(|s| (s - top).exp()).collect();
                    let sum: f64 = exps.iter().sum();
                    for (j, e) in (t.start..).zip(&exps) {
                        for c in 0..head {
                            out[i * width + h + c] += e / sum * f64::from(v[j * width + h + c]);
                        }
                    }
                }
            }
        }
        out
    }

    #[test]
    fn each_text_attends_to_its_own_pieces_as_the_model_defines() {
        // Texts of one piece, of a block and one, of more than two blocks; scores far apart
        // (weights of nearly 0 and 1) and close together.
        for (lengths, spread) in [
            (vec![1], 1.0),
            (vec![3, 1, 17], 0.5),
            (vec![64], 1.0),
            (vec![33, 100, 2], 4.0),
        ] {
            let width = 96;
            let total: usize = lengths.iter().sum();
            let texts = Text::spans(lengths.iter().copied());
            let matrix = |seed: usize| -> Vec<f32> {
                (0..total * width)
                    .map(|i| (((i * seed + 7) % 23) as f32 / 11.0 - 1.0) * spread)
                    .collect()
            };
            let (q, k, v) = (matrix(5), matrix(11), matrix(3));
            let want = plain(&q, &k, &v, width, &texts);
            for arch in arches() {
                let mut got = vec![f32::NAN; total * width];
                Attend {
                    q: &q,
                    k: &k,
                    v: &v,
                    width,
                    head: 32,
                    texts: &texts,
                    out: &mut got,
                }
                .run_on(arch);
                for (at, (&g, &w)) in got.iter().zip(&want).enumerate() {
                    assert!(
                        (f64::from(g) - w).abs() <= 1e-5 * w.abs().max(1.0),
                        "{arch:?} {lengths:?} at {at}: {g} beside {w}"
                    );
                }
            }
        }
    }
}
