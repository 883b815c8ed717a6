//! The encoder's products in 8-bit integers, where the processor has AVX-512 VNNI (Intel since
//! Ice Lake, AMD since Zen 4): its dot-product instruction multiplies and adds four pairs of
//! bytes in each of 16 lanes, 2.7 times the multiply-adds a core does a second in single
//! precision (225 G beside 85 G, measured on the machine of the figures).
//!
//! The weights are the model's own int8 values — each column's, brought back from the floats
//! the file's scale made of them (`top / 127` is that scale for a column whose largest weight
//! is ±127) — packed once at load. Each row of inputs is brought to eight bits when a product
//! runs, with a scale and a zero of its own spanning the row's values (and 0), so its largest
//! values keep their size and the rest lose at most half a step; the sums are exact integers,
//! made floats once, at the end.
//!
//! The one place in Offload's search that needs `unsafe`: a function compiled for these
//! instructions may only be called where they are known to exist, which is checked first;
//! inside it, every instruction used is a safe function of `std::arch`.

#![allow(unsafe_code)]

use std::arch::x86_64::{
    __m128i, __m512, __m512i, _mm512_add_ps, _mm512_cvtepi32_ps, _mm512_cvtps_epi32,
    _mm512_cvtusepi32_epi8, _mm512_dpbusd_epi32, _mm512_fmadd_ps, _mm512_max_epi32, _mm512_max_ps,
    _mm512_min_ps, _mm512_mul_ps, _mm512_mullo_epi32, _mm512_reduce_max_ps, _mm512_reduce_min_ps,
    _mm512_set1_epi32, _mm512_set1_ps, _mm512_setzero_ps, _mm512_setzero_si512, _mm512_sub_epi32,
};

use ndarray::Array2;

/// Inputs a lane of the dot-product instruction reads.
const GROUP: usize = 4;
/// Columns a vector: 16 lanes of 32 bits.
const LANES: usize = 16;
/// Vectors a panel: four rows × four vectors of sums stay in registers.
const VECTORS: usize = 4;
/// Columns a panel.
const WIDTH: usize = VECTORS * LANES;
/// Rows a tile.
const ROWS: usize = 4;

/// Whether this processor runs the products here.
pub fn available() -> bool {
    std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512vnni")
}

/// A matrix of weights as bytes with a scale a column, in panels of [`WIDTH`] columns: for every
/// group of four inputs, [`VECTORS`] vectors whose lanes hold their column's four weights.
pub struct Weights {
    panels: Vec<__m512i>,
    /// A column's scale, the sum of its weights (what a row's zero adds to its product), its
    /// bias: padded to whole panels.
    scales: Vec<f32>,
    sums: Vec<i32>,
    bias: Vec<f32>,
    inputs: usize,
    groups: usize,
}

impl Weights {
    /// `weights` (`inputs × outputs`) and their `bias`, packed. Only where [`available`].
    pub fn new(weights: &Array2<f32>, bias: &[f32]) -> Weights {
        let (inputs, outputs) = weights.dim();
        let groups = inputs.div_ceil(GROUP);
        let padded = outputs.div_ceil(WIDTH) * WIDTH;
        let mut bytes = vec![0i8; padded * groups * GROUP];
        let mut scales = vec![0f32; padded];
        let mut sums = vec![0i32; padded];
        for (c, column) in weights.columns().into_iter().enumerate() {
            let top = column.fold(0f32, |m, w| m.max(w.abs()));
            let scale = if top > 0.0 { top / 127.0 } else { 1.0 };
            scales[c] = scale;
            let (panel, j) = (c / WIDTH, c % WIDTH);
            for (k, w) in column.iter().enumerate() {
                let q = (w / scale).round().clamp(-127.0, 127.0) as i8;
                sums[c] += i32::from(q);
                let at = ((panel * groups + k / GROUP) * WIDTH + j) * GROUP + k % GROUP;
                bytes[at] = q;
            }
        }
        let mut full = bias.to_vec();
        full.resize(padded, 0.0);
        Weights {
            panels: bytes
                .chunks_exact(64)
                .map(|v| bytemuck::cast(<[i8; 64]>::try_from(v).expect("64 bytes")))
                .collect(),
            scales,
            sums,
            bias: full,
            inputs,
            groups,
        }
    }

    /// How many columns a row of the answer has (whole panels).
    pub fn padded(&self) -> usize {
        self.bias.len()
    }

    /// `x · weights + bias` for the rows of `x` (a row `inputs` long, one after another), into
    /// `out` (a row [`Weights::padded`] long).
    pub fn apply(&self, x: &[f32], out: &mut [f32]) {
        assert!(
            available(),
            "packed only where the processor has AVX-512 VNNI"
        );
        assert_eq!(out.len() / self.padded(), x.len() / self.inputs);
        // SAFETY: `product` is compiled for AVX-512 F, BW and VNNI, which this processor has
        // (checked just above); it touches memory only through safe slices.
        unsafe { product(self, x, out) }
    }
}

/// Rows of inputs as bytes, `value ≈ scale · (byte − zero)`, four to a 32-bit number (what a
/// lane of the instruction reads).
struct Rows {
    quads: Vec<i32>,
    scales: Vec<f32>,
    zeros: Vec<i32>,
    /// Numbers a row: its inputs in whole groups.
    groups: usize,
}

impl Rows {
    /// Sixteen values at a time, in the same instructions as the products.
    #[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
    fn of(x: &[f32], inputs: usize, groups: usize) -> Rows {
        let count = x.len() / inputs;
        let mut rows = Rows {
            quads: Vec::with_capacity(count * groups),
            scales: Vec::with_capacity(count),
            zeros: Vec::with_capacity(count),
            groups,
        };
        let mut bytes = vec![0u8; groups * GROUP];
        let floats = |v: &[f32]| -> __m512 {
            bytemuck::cast(<[f32; LANES]>::try_from(v).expect("a vector's floats"))
        };
        for row in x.chunks_exact(inputs) {
            let (vectors, rest) = row.split_at(inputs - inputs % LANES);
            let (mut low, mut high) = (_mm512_setzero_ps(), _mm512_setzero_ps());
            for v in vectors.chunks_exact(LANES) {
                low = _mm512_min_ps(low, floats(v));
                high = _mm512_max_ps(high, floats(v));
            }
            let (low, high) = rest.iter().fold(
                (_mm512_reduce_min_ps(low), _mm512_reduce_max_ps(high)),
                |(l, h), &v| (l.min(v), h.max(v)),
            );
            let scale = if high > low {
                (high - low) / 255.0
            } else {
                1.0
            };
            let zero = (-low / scale).round().clamp(0.0, 255.0);
            // v / scale + zero, rounded to the nearest, within 0..=255.
            let inverse = 1.0 / scale;
            let (inverse_v, zero_v) = (_mm512_set1_ps(inverse), _mm512_set1_ps(zero));
            for (b, v) in bytes
                .chunks_exact_mut(LANES)
                .zip(vectors.chunks_exact(LANES))
            {
                let q = _mm512_cvtps_epi32(_mm512_fmadd_ps(floats(v), inverse_v, zero_v));
                let q = _mm512_cvtusepi32_epi8(_mm512_max_epi32(q, _mm512_setzero_si512()));
                b.copy_from_slice(&bytemuck::cast::<__m128i, [u8; LANES]>(q));
            }
            let done = vectors.len();
            for (b, &v) in bytes[done..].iter_mut().zip(rest) {
                *b = (v * inverse + zero).round().clamp(0.0, 255.0) as u8;
            }
            // Padding reads the zero: nothing (its weights are 0 anyway).
            bytes[inputs..].fill(zero as u8);
            rows.quads.extend(
                bytes
                    .chunks_exact(GROUP)
                    .map(|q| i32::from_le_bytes([q[0], q[1], q[2], q[3]])),
            );
            rows.scales.push(scale);
            rows.zeros.push(zero as i32);
        }
        rows
    }
}

#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn product(w: &Weights, x: &[f32], out: &mut [f32]) {
    let rows = Rows::of(x, w.inputs, w.groups);
    let count = rows.scales.len();
    let stride = w.padded();
    let per_panel = w.groups * VECTORS;
    for (p, panel) in w.panels.chunks_exact(per_panel).enumerate() {
        let column = p * WIDTH;
        let vectors = |v: &[f32]| -> [__m512; VECTORS] {
            std::array::from_fn(|j| {
                let at = column + j * LANES;
                bytemuck::cast(<[f32; LANES]>::try_from(&v[at..at + LANES]).expect("a lane each"))
            })
        };
        let (scales, bias) = (vectors(&w.scales), vectors(&w.bias));
        let sums: [__m512i; VECTORS] = std::array::from_fn(|j| {
            let at = column + j * LANES;
            bytemuck::cast(<[i32; LANES]>::try_from(&w.sums[at..at + LANES]).expect("a lane each"))
        });
        // Four rows at a time; the last one to three as four, the last row repeated.
        for first in (0..count).step_by(ROWS) {
            let inputs: [&[i32]; ROWS] = std::array::from_fn(|i| {
                let r = (first + i).min(count - 1);
                &rows.quads[r * rows.groups..(r + 1) * rows.groups]
            });
            let acc = tile(panel, inputs);
            for (i, acc) in acc.iter().enumerate().take(count - first) {
                let r = first + i;
                let zero = _mm512_set1_epi32(rows.zeros[r]);
                let scale = _mm512_set1_ps(rows.scales[r]);
                for j in 0..VECTORS {
                    let exact = _mm512_sub_epi32(acc[j], _mm512_mullo_epi32(zero, sums[j]));
                    let y = _mm512_add_ps(
                        _mm512_mul_ps(_mm512_cvtepi32_ps(exact), _mm512_mul_ps(scales[j], scale)),
                        bias[j],
                    );
                    let at = r * stride + column + j * LANES;
                    out[at..at + LANES].copy_from_slice(&bytemuck::cast::<__m512, [f32; LANES]>(y));
                }
            }
        }
    }
}

/// The sums of a tile: [`ROWS`] rows of inputs times a panel's [`WIDTH`] columns. Its own
/// function with only constant indices inside, so the sixteen sums stay in registers: written
/// inline, with the sums read by a row count known only at run time, they were also stored to
/// memory on every step, sixteen stores a step beside sixteen products (half the speed, seen in
/// `perf annotate`).
#[target_feature(enable = "avx512f,avx512bw,avx512vnni")]
fn tile(panel: &[__m512i], rows: [&[i32]; ROWS]) -> [[__m512i; VECTORS]; ROWS] {
    let groups = panel.len() / VECTORS;
    let rows = rows.map(|r| &r[..groups]);
    let mut acc = [[_mm512_setzero_si512(); VECTORS]; ROWS];
    for (g, weights) in panel.chunks_exact(VECTORS).enumerate() {
        let weights: &[__m512i; VECTORS] = weights.try_into().expect("a group's vectors");
        for i in 0..ROWS {
            let v = _mm512_set1_epi32(rows[i][g]);
            for j in 0..VECTORS {
                acc[i][j] = _mm512_dpbusd_epi32(acc[i][j], v, weights[j]);
            }
        }
    }
    acc
}
