//! Object URLs (`s3://bucket/key`) and the guard's rules for keys.
//!
//! Keys are taken as written: nothing is decoded, so the only way to name an object is its
//! key. Whatever could be read as a way out of a prefix by some layer is refused outright:
//! `.` and `..` segments, empty segments (`a//b`), backslashes, control characters, and any
//! percent-encoded byte (`%2e%2e`, `%2F`, `%5c`, …).

use object_store::path::Path as Key;

/// The URL schemes of the stores Offload can use.
const SCHEMES: [&str; 3] = ["s3", "gs", "az"];

/// Whether `input` names an object (`s3://`, `gs://`, `az://`) rather than a local path.
pub fn is_object_url(input: &str) -> bool {
    scheme_of(input).is_some()
}

fn scheme_of(input: &str) -> Option<&'static str> {
    let (scheme, _) = input.split_once("://")?;
    SCHEMES.into_iter().find(|s| s.eq_ignore_ascii_case(scheme))
}

/// A parsed object URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ObjectUrl {
    pub scheme: &'static str,
    pub bucket: String,
    /// The key's segments, each one checked.
    pub segments: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct KeyError(pub String);

impl ObjectUrl {
    pub fn parse(input: &str) -> Result<Self, KeyError> {
        let scheme = scheme_of(input)
            .ok_or_else(|| KeyError("an object URL starts with s3://, gs:// or az://".into()))?;
        let rest = &input[scheme.len() + 3..];
        let (bucket, key) = rest.split_once('/').unwrap_or((rest, ""));
        check_text(bucket)?;
        if bucket.is_empty() || bucket == "." || bucket == ".." {
            return Err(KeyError("the URL names no bucket".into()));
        }
        check_text(key)?;
        let key = key.strip_suffix('/').unwrap_or(key);
        let mut segments = Vec::new();
        if !key.is_empty() {
            for segment in key.split('/') {
                match segment {
                    "" => return Err(KeyError("empty segments ('//') are not allowed".into())),
                    "." | ".." => {
                        return Err(KeyError("'.' and '..' segments are not allowed".into()));
                    }
                    s => segments.push(s.to_owned()),
                }
            }
        }
        Ok(Self {
            scheme,
            bucket: bucket.to_owned(),
            segments,
        })
    }

    /// The key in the store's terms.
    pub fn key(&self) -> Key {
        Key::from_iter(self.segments.iter().map(String::as_str))
    }

    /// Whether this URL lies inside (or is) `root`, segment by segment.
    pub fn is_inside(&self, root: &ObjectUrl) -> bool {
        self.scheme == root.scheme
            && self.bucket == root.bucket
            && self.segments.starts_with(&root.segments)
    }

    /// This URL with `name` appended.
    pub fn join(&self, name: &str) -> Self {
        let mut joined = self.clone();
        joined.segments.push(name.to_owned());
        joined
    }
}

impl std::fmt::Display for ObjectUrl {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}://{}", self.scheme, self.bucket)?;
        for s in &self.segments {
            write!(f, "/{s}")?;
        }
        Ok(())
    }
}

fn check_text(text: &str) -> Result<(), KeyError> {
    if text.chars().any(|c| c.is_control()) {
        return Err(KeyError("control characters are not allowed".into()));
    }
    if text.contains('\\') {
        return Err(KeyError("backslashes are not allowed in keys".into()));
    }
    let bytes = text.as_bytes();
    if bytes
        .windows(3)
        .any(|w| w[0] == b'%' && w[1].is_ascii_hexdigit() && w[2].is_ascii_hexdigit())
    {
        return Err(KeyError(
            "percent-encoded characters are not allowed; write the key as it is".into(),
        ));
    }
    Ok(())
}
