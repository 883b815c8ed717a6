//! Quantities in words, as answers and errors give them to a model.

/// A byte count in decimal units: `999 B`, `1.5 MB`.
pub fn human_bytes(n: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KB", "MB", "GB", "TB"];
    let mut v = n as f64;
    let mut unit = 0;
    while v >= 1000.0 && unit < UNITS.len() - 1 {
        v /= 1000.0;
        unit += 1;
    }
    if unit == 0 {
        format!("{n} B")
    } else {
        format!("{v:.1} {}", UNITS[unit])
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn byte_counts_in_words() {
        assert_eq!(super::human_bytes(999), "999 B");
        assert_eq!(super::human_bytes(1_500_000), "1.5 MB");
    }
}
