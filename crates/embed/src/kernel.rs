//! The encoder's two hot loops in the processor's vector instructions, picked when the model
//! loads (AVX-512, AVX2 with FMA, or plain code; `pulp`, without `unsafe`): a product with a
//! matrix of weights packed once at load, and GELU. Where the processor has AVX-512 VNNI, the
//! products are made in 8-bit integers instead (`vnni`), unless floats are asked for. Written
//! out because the release build is optimised for size and linked whole: there the compiler's
//! vectoriser leaves such loops scalar (ten times slower, measured), and a general matrix
//! product (matrixmultiply) re-packs the weights on every call, a sixth of a request's time.

use ndarray::{Array2, ArrayView2, Axis, Slice};
use pulp::{Arch, Simd, WithSimd};

/// How the encoder's products are made.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Products {
    /// In 8-bit integers where the processor has AVX-512 VNNI, else in floats.
    Fastest,
    /// In single-precision floats: the model's own arithmetic, to its last digits.
    Floats,
}

impl Products {
    /// Whether the products are made in 8-bit integers on this processor.
    pub fn in_integers(self) -> bool {
        #[cfg(target_arch = "x86_64")]
        if self == Products::Fastest {
            return crate::vnni::available();
        }
        false
    }
}

/// A matrix of weights (`inputs × outputs`) with its bias, packed for the products chosen.
pub struct Packed {
    inputs: usize,
    outputs: usize,
    form: Form,
}

enum Form {
    Floats(Floats),
    #[cfg(target_arch = "x86_64")]
    Int8(crate::vnni::Weights),
}

/// Floats in panels two vectors wide, each panel's rows one after another: a product reads
/// them in order, once a panel.
struct Floats {
    arch: Arch,
    panels: Vec<f32>,
    bias: Vec<f32>,
    /// Columns a panel: two of the processor's vectors.
    width: usize,
}

impl Packed {
    pub fn new(products: Products, weights: &Array2<f32>, bias: Vec<f32>) -> Packed {
        #[cfg(target_arch = "x86_64")]
        if products.in_integers() {
            let (inputs, outputs) = weights.dim();
            return Packed {
                inputs,
                outputs,
                form: Form::Int8(crate::vnni::Weights::new(weights, &bias)),
            };
        }
        let _ = products;
        Packed::for_arch(Arch::new(), weights, bias)
    }

    fn for_arch(arch: Arch, weights: &Array2<f32>, bias: Vec<f32>) -> Packed {
        let width = 2 * arch.dispatch(Lanes);
        let (inputs, outputs) = weights.dim();
        let panels = outputs.div_ceil(width);
        let mut packed = vec![0f32; panels * width * inputs];
        for (p, panel) in packed.chunks_exact_mut(width * inputs).enumerate() {
            for (k, row) in panel.chunks_exact_mut(width).enumerate() {
                for (c, v) in row.iter_mut().enumerate() {
                    if let Some(w) = weights.get((k, p * width + c)) {
                        *v = *w;
                    }
                }
            }
        }
        let mut padded = bias;
        padded.resize(panels * width, 0.0);
        Packed {
            inputs,
            outputs,
            form: Form::Floats(Floats {
                arch,
                panels: packed,
                bias: padded,
                width,
            }),
        }
    }

    /// `x · weights + bias`, a row of `x` a row of the answer.
    pub fn apply(&self, x: &ArrayView2<f32>) -> Array2<f32> {
        let x = x.as_standard_layout();
        let x = x.as_slice().expect("a standard layout");
        let rows = x.len() / self.inputs;
        let (padded, out) = match &self.form {
            Form::Floats(f) => {
                let mut out = vec![0f32; rows * f.bias.len()];
                f.arch.dispatch(Product {
                    packed: f,
                    inputs: self.inputs,
                    x,
                    out: &mut out,
                });
                (f.bias.len(), out)
            }
            #[cfg(target_arch = "x86_64")]
            Form::Int8(w) => {
                let mut out = vec![0f32; rows * w.padded()];
                w.apply(x, &mut out);
                (w.padded(), out)
            }
        };
        let padded = Array2::from_shape_vec((rows, padded), out).expect("rows of the padded width");
        if padded.ncols() == self.outputs {
            padded
        } else {
            padded
                .slice_axis(Axis(1), Slice::from(..self.outputs))
                .to_owned()
        }
    }
}

/// Each row of `x` (a row as long as `gain`) brought to mean 0 and variance 1, then scaled by
/// `gain` and moved by `bias` (a layer's normalisation).
pub fn normalize(x: &mut [f32], gain: &[f32], bias: &[f32], epsilon: f32) {
    normalize_for(Arch::new(), x, gain, bias, epsilon);
}

fn normalize_for(arch: Arch, x: &mut [f32], gain: &[f32], bias: &[f32], epsilon: f32) {
    arch.dispatch(Normalize {
        x,
        gain,
        bias,
        epsilon,
    });
}

struct Normalize<'a> {
    x: &'a mut [f32],
    gain: &'a [f32],
    bias: &'a [f32],
    epsilon: f32,
}

impl WithSimd for Normalize<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let width = self.gain.len();
        let (gain, gain_rest) = S::as_simd_f32s(self.gain);
        let (bias, bias_rest) = S::as_simd_f32s(self.bias);
        for row in self.x.chunks_exact_mut(width) {
            let (head, tail) = S::as_mut_simd_f32s(row);
            let mut sum = simd.splat_f32s(0.0);
            for v in head.iter() {
                sum = simd.add_f32s(sum, *v);
            }
            let mean = (simd.reduce_sum_f32s(sum) + tail.iter().sum::<f32>()) / width as f32;
            let m = simd.splat_f32s(mean);
            let mut squares = simd.splat_f32s(0.0);
            for v in head.iter() {
                let d = simd.sub_f32s(*v, m);
                squares = simd.mul_add_e_f32s(d, d, squares);
            }
            let variance = (simd.reduce_sum_f32s(squares)
                + tail.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>())
                / width as f32;
            let scale = 1.0 / (variance + self.epsilon).sqrt();
            let k = simd.splat_f32s(scale);
            for ((v, g), b) in head.iter_mut().zip(gain).zip(bias) {
                *v = simd.mul_add_e_f32s(simd.mul_f32s(simd.sub_f32s(*v, m), k), *g, *b);
            }
            for ((v, g), b) in tail.iter_mut().zip(gain_rest).zip(bias_rest) {
                *v = (*v - mean) * scale * g + b;
            }
        }
    }
}

/// GELU, `v · Φ(v)`, on every value.
pub fn gelu(values: &mut [f32]) {
    gelu_for(Arch::new(), values);
}

fn gelu_for(arch: Arch, values: &mut [f32]) {
    each::<Gelu>(arch, values);
}

/// A function of a value, made for a vector of them.
pub(crate) trait OfEach {
    fn of<S: Simd>(simd: S, v: S::f32s) -> S::f32s;
}

/// `F` of every value, in place.
pub(crate) fn each<F: OfEach>(arch: Arch, values: &mut [f32]) {
    arch.dispatch(Each::<F>(values, std::marker::PhantomData));
}

struct Lanes;

impl WithSimd for Lanes {
    type Output = usize;

    #[inline(always)]
    fn with_simd<S: Simd>(self, _: S) -> usize {
        S::F32_LANES
    }
}

struct Product<'a> {
    packed: &'a Floats,
    inputs: usize,
    x: &'a [f32],
    out: &'a mut [f32],
}

impl WithSimd for Product<'_> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let Product {
            packed,
            inputs: k,
            x,
            out,
        } = self;
        let width = packed.width;
        assert_eq!(width, 2 * S::F32_LANES, "packed for this processor");
        let stride = packed.bias.len();
        let rows: Vec<&[f32]> = x.chunks_exact(k).collect();
        for (p, (panel, bias)) in packed
            .panels
            .chunks_exact(width * k)
            .zip(packed.bias.chunks_exact(width))
            .enumerate()
        {
            let (panel, _) = S::as_simd_f32s(panel);
            let (bias, _) = S::as_simd_f32s(bias);
            let column = p * width;
            // The panel a block of inputs at a time, each block read by every row while it is
            // in the first-level cache; the sums go on from the previous block's.
            for start in (0..k).step_by(BLOCK) {
                let end = (start + BLOCK).min(k);
                let block = &panel[2 * start..2 * end];
                let sums = |out: &[f32], r: usize| -> [S::f32s; 2] {
                    if start == 0 {
                        [bias[0], bias[1]]
                    } else {
                        let at = r * stride + column;
                        let (from, _) = S::as_simd_f32s(&out[at..at + width]);
                        [from[0], from[1]]
                    }
                };
                // Four rows at a time; the last one to three as four, the last row repeated:
                // one kernel for every row, as fast as a kernel of one row was (measured).
                for (quad, r) in rows.chunks(4).zip((0..).step_by(4)) {
                    let row = |i: usize| &quad[i.min(quad.len() - 1)][start..end];
                    let from = [0, 1, 2, 3].map(|i| sums(out, r + i.min(quad.len() - 1)));
                    let done = four_rows(simd, block, [row(0), row(1), row(2), row(3)], from);
                    for (i, [s0, s1]) in done.into_iter().take(quad.len()).enumerate() {
                        let at = (r + i) * stride + column;
                        let (to, _) = S::as_mut_simd_f32s(&mut out[at..at + width]);
                        to[0] = s0;
                        to[1] = s1;
                    }
                }
            }
        }
    }
}

/// Inputs a block: a panel's block of them (AVX-512: 128 × two vectors, 16 KB) stays in the
/// first-level cache while every row reads it. Whole, a panel (49 KB at 384 inputs, 196 KB at
/// 1,536) was read again from the second level for every four rows, which the products waited
/// on (`perf`: the loads of the weights took most of a request's time).
const BLOCK: usize = 128;

/// Four rows of `x` times one panel: eight sums kept in registers across the inputs, going on
/// from `from`.
#[inline(always)]
fn four_rows<S: Simd>(
    simd: S,
    panel: &[S::f32s],
    x: [&[f32]; 4],
    from: [[S::f32s; 2]; 4],
) -> [[S::f32s; 2]; 4] {
    let [
        [mut a0, mut a1],
        [mut c0, mut c1],
        [mut d0, mut d1],
        [mut e0, mut e1],
    ] = from;
    for ((((w, &x0), &x1), &x2), &x3) in panel
        .chunks_exact(2)
        .zip(x[0])
        .zip(x[1])
        .zip(x[2])
        .zip(x[3])
    {
        let (w0, w1) = (w[0], w[1]);
        let v = simd.splat_f32s(x0);
        a0 = simd.mul_add_e_f32s(v, w0, a0);
        a1 = simd.mul_add_e_f32s(v, w1, a1);
        let v = simd.splat_f32s(x1);
        c0 = simd.mul_add_e_f32s(v, w0, c0);
        c1 = simd.mul_add_e_f32s(v, w1, c1);
        let v = simd.splat_f32s(x2);
        d0 = simd.mul_add_e_f32s(v, w0, d0);
        d1 = simd.mul_add_e_f32s(v, w1, d1);
        let v = simd.splat_f32s(x3);
        e0 = simd.mul_add_e_f32s(v, w0, e0);
        e1 = simd.mul_add_e_f32s(v, w1, e1);
    }
    [[a0, a1], [c0, c1], [d0, d1], [e0, e1]]
}

struct Each<'a, F>(&'a mut [f32], std::marker::PhantomData<F>);

impl<F: OfEach> WithSimd for Each<'_, F> {
    type Output = ();

    #[inline(always)]
    fn with_simd<S: Simd>(self, simd: S) {
        let (head, tail) = S::as_mut_simd_f32s(self.0);
        for v in head {
            *v = F::of(simd, *v);
        }
        for v in tail {
            *v = F::of(pulp::Scalar::new(), *v);
        }
    }
}

struct Gelu;

impl OfEach for Gelu {
    #[inline(always)]
    fn of<S: Simd>(simd: S, v: S::f32s) -> S::f32s {
        gelu_of(simd, v)
    }
}

/// erf(x) ≈ x·P(x²)/Q(x²) on [-4, 4] (±1 beyond, as in single precision): a rational fit
/// made for this file (least squares, reweighted towards the largest error, over 8,001 points),
/// within 4e-7 of erf in single precision; libm's `erff` a value at a time was an eighth of a
/// request's time.
const P: [f32; 7] = [
    1.128_378_9,
    0.212_128_28,
    0.052_197_035,
    0.004_205_855,
    0.000_152_648_22,
    -1.965_073_1e-6,
    1.903_378e-8,
];
const Q: [f32; 5] = [
    1.0,
    0.521_323_1,
    0.120_049_23,
    0.015_390_893,
    0.001_073_980_5,
];

#[inline(always)]
fn gelu_of<S: Simd>(simd: S, v: S::f32s) -> S::f32s {
    let x = simd.mul_f32s(v, simd.splat_f32s(std::f32::consts::FRAC_1_SQRT_2));
    let x = simd.min_f32s(
        simd.max_f32s(x, simd.splat_f32s(-4.0)),
        simd.splat_f32s(4.0),
    );
    let t = simd.mul_f32s(x, x);
    let horner = |coefficients: &[f32]| {
        let mut acc = simd.splat_f32s(coefficients[coefficients.len() - 1]);
        for &c in coefficients.iter().rev().skip(1) {
            acc = simd.mul_add_e_f32s(acc, t, simd.splat_f32s(c));
        }
        acc
    };
    let erf = simd.div_f32s(simd.mul_f32s(x, horner(&P)), horner(&Q));
    let half = simd.splat_f32s(0.5);
    simd.mul_f32s(
        simd.mul_f32s(half, v),
        simd.add_f32s(simd.splat_f32s(1.0), erf),
    )
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;

    /// Every instruction set this processor runs, plain code included: each is tested here,
    /// not only the one a user's processor picks.
    pub(crate) fn arches() -> Vec<Arch> {
        let mut all = vec![Arch::Scalar, Arch::new()];
        #[cfg(target_arch = "x86_64")]
        all.extend(pulp::x86::V3::try_new().map(Arch::V3));
        all
    }

    #[test]
    fn erf_within_4e_7() {
        let values: Vec<f32> = (-60_000..=60_000).map(|i| i as f32 / 10_000.0).collect();
        for arch in arches() {
            let mut got = values.clone();
            gelu_for(arch, &mut got);
            let mut worst = 0f64;
            for (&v, &g) in values.iter().zip(&got) {
                let want = 0.5 * f64::from(v) * (1.0 + libm::erf(f64::from(v) / 2f64.sqrt()));
                worst = worst.max((f64::from(g) - want).abs() / f64::from(v.abs()).max(1.0));
            }
            assert!(worst < 4e-7, "{arch:?}: {worst}");
        }
    }

    /// A matrix of weights of both signs and its bias, for the products' tests.
    fn weights_and_bias(inputs: usize, outputs: usize) -> (Array2<f32>, Vec<f32>) {
        let weights = Array2::from_shape_fn((inputs, outputs), |(k, n)| {
            ((k * 31 + n * 17) % 13) as f32 / 7.0 - 0.9
        });
        (weights, (0..outputs).map(|n| n as f32 / 10.0).collect())
    }

    #[test]
    fn normalized_rows_equal_the_plain_ones() {
        for width in [1, 5, 16, 37, 384] {
            let x: Vec<f32> = (0..3 * width)
                .map(|i| ((i * 7) % 19) as f32 / 3.0 - 2.0)
                .collect();
            let gain: Vec<f32> = (0..width).map(|i| 0.5 + i as f32 / 100.0).collect();
            let bias: Vec<f32> = (0..width).map(|i| i as f32 / 50.0 - 1.0).collect();
            let mut want = x.clone();
            for row in want.chunks_exact_mut(width) {
                let mean = row.iter().sum::<f32>() / width as f32;
                let variance =
                    row.iter().map(|v| (v - mean) * (v - mean)).sum::<f32>() / width as f32;
                let scale = 1.0 / (variance + 1e-12).sqrt();
                for ((v, g), b) in row.iter_mut().zip(&gain).zip(&bias) {
                    *v = (*v - mean) * scale * g + b;
                }
            }
            for arch in arches() {
                let mut got = x.clone();
                normalize_for(arch, &mut got, &gain, &bias, 1e-12);
                for (g, w) in got.iter().zip(&want) {
                    assert!(
                        (g - w).abs() <= 1e-5 * w.abs().max(1.0),
                        "{arch:?}: {g} beside {w}"
                    );
                }
            }
        }
    }

    #[test]
    fn products_equal_the_plain_ones_for_any_shape() {
        // Rows past a multiple of four (1 to 3 left), inputs in several blocks and a part of
        // one, outputs past a whole panel.
        for (rows, inputs, outputs) in [
            (1, 3, 5),
            (4, 8, 16),
            (7, 384, 384),
            (9, 5, 33),
            (2, 1536, 40),
            (6, 300, 64),
        ] {
            let (weights, bias) = weights_and_bias(inputs, outputs);
            let x =
                Array2::from_shape_fn((rows, inputs), |(r, k)| ((r * 7 + k * 3) % 11) as f32 - 5.0);
            let want = x.dot(&weights) + &ndarray::Array1::from(bias.clone());
            for arch in arches() {
                let got = Packed::for_arch(arch, &weights, bias.clone()).apply(&x.view());
                assert_eq!(got.dim(), want.dim());
                for (g, w) in got.iter().zip(want.iter()) {
                    assert!(
                        (g - w).abs() <= 1e-4 * w.abs().max(1.0),
                        "{arch:?}: {g} beside {w}"
                    );
                }
            }
        }
    }

    /// The products in 8-bit integers are within what the rounding of their inputs allows: a
    /// row's values off by at most half its step (its span over 255), a column's weights by
    /// half their scale (their largest over 127). Rows and columns of any size, values of
    /// either sign, a row of zeros, one value far larger than the rest.
    #[cfg(target_arch = "x86_64")]
    #[test]
    fn int8_products_are_within_their_rounding() {
        if !crate::vnni::available() {
            eprintln!("this processor has no AVX-512 VNNI: the floats' products are used");
            return;
        }
        for (rows, inputs, outputs) in [
            (1, 3, 5),
            (4, 8, 64),
            (7, 384, 384),
            (9, 5, 65),
            (2, 1536, 40),
            (6, 300, 130),
        ] {
            let (weights, bias) = weights_and_bias(inputs, outputs);
            let x = Array2::from_shape_fn((rows, inputs), |(r, k)| match (r, k) {
                (1, _) => 0.0,
                (2, 0) => 40.0,
                _ => ((r * 7 + k * 3) % 11) as f32 / 3.0 - 1.5,
            });
            let want = x.dot(&weights) + &ndarray::Array1::from(bias.clone());
            let got = Packed::new(Products::Fastest, &weights, bias).apply(&x.view());
            assert!(matches!(
                Packed::new(Products::Fastest, &weights, vec![0.0; outputs]).form,
                Form::Int8(_)
            ));
            assert_eq!(got.dim(), want.dim());
            for ((r, c), g) in got.indexed_iter() {
                let row = x.row(r);
                let column = weights.column(c);
                let (low, high) = row.fold((0f32, 0f32), |(l, h), &v| (l.min(v), h.max(v)));
                let step = (high - low) / 255.0;
                let scale = column.fold(0f32, |m, w| m.max(w.abs())) / 127.0;
                let bound = step / 2.0 * column.iter().map(|w| w.abs()).sum::<f32>()
                    + scale / 2.0 * row.iter().map(|v| v.abs() + step / 2.0).sum::<f32>()
                    + 1e-4 * want[(r, c)].abs().max(1.0);
                let off = (g - want[(r, c)]).abs();
                assert!(
                    off <= bound,
                    "({r}, {c}): {g} beside {}, off by {off} > {bound}",
                    want[(r, c)]
                );
            }
        }
    }
}
