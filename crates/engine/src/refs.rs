//! `$file` references: inside any `tool_args`, an object whose keys are exactly `$file` (and
//! optionally `as`) is replaced by that file's content before the call: `"as": "text"` (the
//! default) gives the text, `"data"` the parsed data (same parsers as
//! `call_tool_with_file_content`), `"base64"` the bytes in base64. Paths go through the path
//! guard; the total size of all referenced files is bounded by `maxInputBytes`.

use std::io::Read;

use base64::Engine as _;
use serde_json::{Map, Value};

use crate::roots::Roots;
use crate::{ErrorCode, ToolError};
use offload_formats::Format;
use offload_formats::inputs;

/// One resolved reference (for the audit log; never the content). `path` is canonical.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Resolution {
    pub path: String,
    pub kind: String,
    pub bytes: u64,
}

/// Replaces every reference inside `args`; returns what was resolved.
pub fn resolve(
    args: &mut Map<String, Value>,
    roots: &Roots,
    limit: u64,
) -> Result<Vec<Resolution>, ToolError> {
    let mut done = Vec::new();
    let mut total = 0u64;
    for value in args.values_mut() {
        walk(value, roots, limit, &mut total, &mut done, 0)?;
    }
    Ok(done)
}

/// The URLs that references in `args` name (`{"$file": "https://…"}`), each once.
pub fn urls(args: &Map<String, Value>) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for path in paths(args) {
        if crate::urls::is_url(path) && !out.iter().any(|u| u == path) {
            out.push(path.to_owned());
        }
    }
    out
}

/// The paths of every reference inside `args`, in order (as deep as `resolve` goes).
fn paths(args: &Map<String, Value>) -> Vec<&str> {
    fn collect<'a>(v: &'a Value, out: &mut Vec<&'a str>, depth: usize) {
        if depth > 64 {
            return;
        }
        match v {
            Value::Object(m) => match as_ref(m) {
                Some((path, _)) => out.push(path),
                None => m.values().for_each(|v| collect(v, out, depth + 1)),
            },
            Value::Array(items) => items.iter().for_each(|v| collect(v, out, depth + 1)),
            _ => {}
        }
    }
    let mut out = Vec::new();
    args.values().for_each(|v| collect(v, &mut out, 0));
    out
}

/// Points references to `url` at `path` instead (its download), in place.
pub fn redirect(args: &mut Map<String, Value>, url: &str, path: &str) {
    fn walk(v: &mut Value, url: &str, path: &str, depth: usize) {
        if depth > 64 {
            return;
        }
        match v {
            Value::Object(m) => {
                if as_ref(m).is_some_and(|(p, _)| p == url) {
                    m.insert("$file".into(), Value::String(path.to_owned()));
                } else {
                    m.values_mut().for_each(|v| walk(v, url, path, depth + 1));
                }
            }
            Value::Array(items) => items.iter_mut().for_each(|v| walk(v, url, path, depth + 1)),
            _ => {}
        }
    }
    args.values_mut().for_each(|v| walk(v, url, path, 0));
}

/// True when `args` holds at least one reference (cheap check before doing any I/O).
pub fn has_refs(args: &Map<String, Value>) -> bool {
    !paths(args).is_empty()
}

/// `(path, as)` when `m` is a reference: keys exactly `$file` and optionally `as`, strings.
fn as_ref(m: &Map<String, Value>) -> Option<(&str, &str)> {
    let path = m.get("$file")?.as_str()?;
    match m.len() {
        1 => Some((path, "text")),
        2 => Some((path, m.get("as")?.as_str()?)),
        _ => None,
    }
}

fn walk(
    value: &mut Value,
    roots: &Roots,
    limit: u64,
    total: &mut u64,
    done: &mut Vec<Resolution>,
    depth: usize,
) -> Result<(), ToolError> {
    if depth > 64 {
        return Ok(());
    }
    let reference = match value {
        Value::Object(m) => as_ref(m).map(|(p, k)| (p.to_owned(), k.to_owned())),
        _ => None,
    };
    if let Some((path, kind)) = reference {
        let (replacement, bytes, canonical) = load(&path, &kind, roots, limit, *total)?;
        *total += bytes;
        done.push(Resolution {
            path: canonical,
            kind,
            bytes,
        });
        *value = replacement;
        return Ok(());
    }
    match value {
        Value::Object(m) => m
            .values_mut()
            .try_for_each(|v| walk(v, roots, limit, total, done, depth + 1)),
        Value::Array(items) => items
            .iter_mut()
            .try_for_each(|v| walk(v, roots, limit, total, done, depth + 1)),
        _ => Ok(()),
    }
}

fn load(
    path: &str,
    kind: &str,
    roots: &Roots,
    limit: u64,
    so_far: u64,
) -> Result<(Value, u64, String), ToolError> {
    if !matches!(kind, "text" | "data" | "base64") {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            format!(
                "{{\"$file\": \"{path}\", \"as\": \"{kind}\"}}: \"as\" must be text, data or base64"
            ),
        ));
    }
    let (source, shown) = roots.open(path)?;
    let source = match source {
        // Bytes are the file's own (a tool that takes bytes gets the .gz as it is); text and
        // data are what it holds, decompressed up to what is left of the limit.
        offload_formats::files::Source::Compressed(c) if kind == "base64" => {
            c.inner().try_clone().map_err(|e| io_error(path, e))?
        }
        compressed @ offload_formats::files::Source::Compressed(_) => compressed
            .capped(limit.saturating_sub(so_far))
            .map_err(|e| io_error(path, e))?,
        other => other,
    };
    let size = match source.codec() {
        // Counted as read, below: what it holds is not known before.
        Some(_) => 0,
        None => source.len().unwrap_or(0),
    };
    let mut file = source.reader();
    if so_far + size > limit {
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!(
                "the files referenced with $file add up to more than {} (limits.maxInputBytes); send big data with call_tool_with_file_content and batch_size",
                offload_formats::units::human_bytes(limit)
            ),
        )
        .with("path", path));
    }
    let display = shown.display().to_string();
    let value = match kind {
        "base64" => {
            let mut bytes = Vec::with_capacity(size as usize);
            file.read_to_end(&mut bytes)
                .map_err(|e| io_error(&display, e))?;
            Value::String(base64::engine::general_purpose::STANDARD.encode(bytes))
        }
        "data" => {
            let format = Format::of_path(&shown);
            inputs::parse(&mut file, format, true)
                .map_err(|e| crate::error::input_error(e, &display, format))?
                .0
        }
        _ => Value::String(
            inputs::read_text(&mut file)
                .map_err(|e| crate::error::input_error(e, &display, Format::Txt))?,
        ),
    };
    // A compressed file counts for what it held.
    let size = size.max(std::io::Seek::stream_position(&mut file).unwrap_or(0));
    Ok((value, size, display))
}

fn io_error(path: &str, e: std::io::Error) -> ToolError {
    ToolError::new(ErrorCode::PathUnusable, format!("cannot read {path}: {e}"))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RootEntry;
    use serde_json::json;

    fn fixture() -> (tempfile::TempDir, Roots) {
        let tmp = tempfile::tempdir().unwrap();
        let root = tmp.path().join("root");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::write(root.join("a.txt"), "hello").unwrap();
        std::fs::write(root.join("d.csv"), "x,y\n1,a\n").unwrap();
        std::fs::write(root.join("bin.dat"), b"\x00\x01\x02").unwrap();
        std::fs::write(tmp.path().join("secret.txt"), "secret").unwrap();
        let (roots, _) = Roots::from_entries(
            &[RootEntry::Path(root.display().to_string())],
            &tmp.path().join("fb"),
        );
        (tmp, roots)
    }

    #[test]
    fn references_are_replaced_anywhere_and_only_exact_shapes_count() {
        let (_t, roots) = fixture();
        let mut args = json!({
            "a": {"$file": "a.txt"},
            "nested": [{"deep": {"$file": "d.csv", "as": "data"}}],
            "b": {"$file": "bin.dat", "as": "base64"},
            "not_a_ref": {"$file": "a.txt", "other": 1},
            "plain": "$file"
        });
        let Value::Object(m) = &mut args else {
            unreachable!()
        };
        assert!(has_refs(m));
        let done = resolve(m, &roots, 1 << 20).unwrap();
        assert_eq!(done.len(), 3);
        assert_eq!(args["a"], "hello");
        assert_eq!(args["nested"][0]["deep"], json!([{"x": 1, "y": "a"}]));
        assert_eq!(args["b"], "AAEC");
        assert_eq!(args["not_a_ref"], json!({"$file": "a.txt", "other": 1}));
    }

    #[test]
    fn outside_paths_limits_and_bad_kinds_are_errors() {
        let (t, roots) = fixture();
        let outside = t.path().join("secret.txt").display().to_string();
        for (args, code) in [
            (
                json!({"a": {"$file": outside}}),
                ErrorCode::PathOutsideRoots,
            ),
            (
                json!({"a": {"$file": "../secret.txt"}}),
                ErrorCode::PathOutsideRoots,
            ),
            (
                json!({"a": {"$file": "a.txt", "as": "yaml"}}),
                ErrorCode::InvalidArguments,
            ),
            (json!({"a": {"$file": "bin.dat"}}), ErrorCode::ParseError),
            (
                json!({"a": {"$file": "a.txt"}, "b": {"$file": "d.csv"}}),
                ErrorCode::FileTooLarge,
            ),
        ] {
            let mut args = args;
            let Value::Object(m) = &mut args else {
                unreachable!()
            };
            assert_eq!(resolve(m, &roots, 10).unwrap_err().code, code, "{args}");
        }
    }
}
