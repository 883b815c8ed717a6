//! Percentiles of latency samples.

use std::time::Duration;

#[derive(Debug, Clone, Copy)]
pub struct Summary {
    pub median: Duration,
    pub p99: Duration,
    pub mean: Duration,
}

pub fn summarize(samples: &mut [Duration]) -> Summary {
    assert!(!samples.is_empty(), "no samples");
    samples.sort_unstable();
    let at = |q: f64| samples[((samples.len() - 1) as f64 * q).round() as usize];
    let total: Duration = samples.iter().sum();
    Summary {
        median: at(0.5),
        p99: at(0.99),
        mean: total / samples.len() as u32,
    }
}

pub fn ms(d: Duration) -> String {
    format!("{:.3} ms", d.as_secs_f64() * 1e3)
}

/// `ours` beside `base`: the difference and the ratio.
/// The column titles above [`row`]s.
pub fn header(ours: &str, base: &str) -> String {
    format!(
        "{:<10} {ours:>12} {base:>12} {:>15} {:>9}",
        "", "added", "ratio"
    )
}

pub fn row(label: &str, ours: Duration, base: Duration) -> String {
    let diff = ours.as_secs_f64() - base.as_secs_f64();
    let ratio = ours.as_secs_f64() / base.as_secs_f64().max(1e-9);
    format!(
        "{label:<10} {:>12} {:>12} {:>+12.3} ms {:>8.2}x",
        ms(ours),
        ms(base),
        diff * 1e3,
        ratio
    )
}

/// The median of some measurements (sorted in place).
pub fn median(values: &mut [f64]) -> f64 {
    assert!(!values.is_empty(), "no samples");
    values.sort_unstable_by(f64::total_cmp);
    values[values.len() / 2]
}
