//! Cutting text to a byte budget on a character boundary (file tools and inputs here; upstream
//! stderr, audit lines and answers in the engine).

use std::borrow::Cow;

/// `s` cut to at most `max` bytes on a character boundary, with an ellipsis when cut.
pub fn clip(s: &str, max: usize) -> Cow<'_, str> {
    if s.len() <= max {
        return Cow::Borrowed(s);
    }
    let mut end = max.saturating_sub(3);
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    Cow::Owned(format!("{}...", &s[..end]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clip_respects_char_boundaries() {
        assert_eq!(clip("short", 10), "short");
        let cut = clip("ééééééé", 8);
        assert!(cut.len() <= 8 && cut.ends_with("..."), "{cut}");
    }
}
