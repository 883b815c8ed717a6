//! File names for stored responses: the default `<server>-<tool>-<UTC time>-<random>.<ext>`,
//! and validation of names the model gives (a name, never a path).

use chrono::{DateTime, Utc};

use crate::{ErrorCode, ToolError};

/// A name made of safe characters only: letters, digits, `.`, `_`, `-` (others become `-`).
pub fn sanitize(part: &str, max: usize) -> String {
    let mut out = String::with_capacity(part.len().min(max));
    for c in part.chars() {
        let c = if c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-') {
            c
        } else {
            '-'
        };
        if c == '-' && out.ends_with('-') {
            continue;
        }
        if out.len() >= max {
            break;
        }
        out.push(c);
    }
    let trimmed = out.trim_matches(|c| c == '-' || c == '.');
    if trimmed.is_empty() {
        "x".to_owned()
    } else {
        trimmed.to_owned()
    }
}

/// `<server>-<tool>-<YYYYMMDDTHHMMSSZ>-<6 random>.<ext>`.
pub fn default_name(server: &str, tool: &str, at: DateTime<Utc>, ext: &str) -> String {
    let random: String = (0..6)
        .map(|_| {
            const ALPHABET: &[u8] = b"abcdefghijkmnpqrstuvwxyz23456789";
            ALPHABET[fastrand::usize(..ALPHABET.len())] as char
        })
        .collect();
    format!(
        "{}-{}-{}-{random}.{ext}",
        sanitize(server, 40),
        sanitize(tool, 60),
        at.format("%Y%m%dT%H%M%SZ")
    )
}

/// Checks a model-given file name: a plain name, no separators, no `..`, no NUL, not too long,
/// not a reserved device name.
pub fn validate(name: &str) -> Result<(), ToolError> {
    let bad = |why: &str| {
        ToolError::new(ErrorCode::InvalidArguments, format!("filename '{name}' is not allowed: {why}; give a plain file name such as results.csv"))
            .with("filename", name)
    };
    if name.trim().is_empty() {
        return Err(bad("it is empty"));
    }
    if name.contains(['/', '\\']) {
        return Err(bad(
            "it contains a path separator (use storage_path for the directory)",
        ));
    }
    if name == "." || name == ".." || name.contains('\0') {
        return Err(bad("it is not a file name"));
    }
    if name.chars().any(|c| c.is_control()) {
        return Err(bad("it contains control characters"));
    }
    if name.len() > 200 {
        return Err(bad("it is longer than 200 bytes"));
    }
    let stem = name.split('.').next().unwrap_or("").to_ascii_uppercase();
    const RESERVED: &[&str] = &[
        "CON", "PRN", "AUX", "NUL", "COM1", "COM2", "COM3", "COM4", "LPT1", "LPT2", "LPT3",
    ];
    if RESERVED.contains(&stem.as_str()) {
        return Err(bad("it is a reserved device name on Windows"));
    }
    Ok(())
}

/// The extension of a file name, lower-cased, if it has one.
pub fn extension(name: &str) -> Option<String> {
    let (stem, ext) = name.rsplit_once('.')?;
    (!stem.is_empty() && !ext.is_empty()).then(|| ext.to_ascii_lowercase())
}

/// Parses `<server>-<tool>-<time>-<random>.<ext>` back (used to rebuild a lost index). Server
/// and tool cannot be split apart when both contain `-`, so the split is at the first `-`.
pub fn parse_default(name: &str) -> Option<(String, String, DateTime<Utc>)> {
    let (stem, _ext) = name.rsplit_once('.')?;
    let mut parts = stem.rsplitn(3, '-');
    let random = parts.next()?;
    let time = parts.next()?;
    let head = parts.next()?;
    if random.len() != 6 || time.len() != 16 {
        return None;
    }
    let at = chrono::NaiveDateTime::parse_from_str(time, "%Y%m%dT%H%M%SZ")
        .ok()?
        .and_utc();
    let (server, tool) = head.split_once('-')?;
    Some((server.to_owned(), tool.to_owned(), at))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn default_names_are_safe_and_parse_back() {
        let at = DateTime::parse_from_rfc3339("2026-11-21T10:20:30Z")
            .unwrap()
            .to_utc();
        let name = default_name("my server/../x", "get:items", at, "csv");
        assert!(
            name.starts_with("my-server-..-x-get-items-20261121T102030Z-"),
            "{name}"
        );
        assert!(name.ends_with(".csv"));
        assert!(!name.contains('/'));
        let name = default_name("srv", "list", at, "json");
        let (server, tool, t) = parse_default(&name).unwrap();
        assert_eq!((server.as_str(), tool.as_str(), t), ("srv", "list", at));
    }

    #[test]
    fn model_given_names_must_be_plain_names() {
        for bad in [
            "", "../x", "/abs", "a/b", "a\\b", "..", ".", "x\0y", "CON.txt", "a\nb",
        ] {
            assert!(validate(bad).is_err(), "{bad:?}");
        }
        for good in ["results.csv", "report 2026.md", "données.json", ".hidden"] {
            assert!(validate(good).is_ok(), "{good:?}");
        }
        assert_eq!(extension("a.CSV").as_deref(), Some("csv"));
        assert_eq!(extension(".hidden"), None);
        assert_eq!(extension("noext"), None);
    }
}
