//! The Responses screen: every stored response in every allowed directory, from the records
//! index (server, tool, call) and from the files themselves (anything else found in the roots),
//! newest first; the recorded call of one; deleting one.

use std::collections::HashSet;
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use serde::Serialize;
use serde_json::Value;

use super::edit::ControlError;
use crate::roots::Access;
use crate::store::Record;
use crate::{Engine, ErrorCode};

/// Files found in the roots are looked for this deep (the root itself is depth 0)...
const SCAN_DEPTH: usize = 2;
/// ...and at most this many are listed, so a root holding a huge tree stays quick.
const SCAN_LIMIT: usize = 50_000;

/// One stored response (or file found in a root).
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct ResponseView {
    pub path: String,
    pub name: String,
    /// The allowed directory that holds it.
    pub root: String,
    /// The upstream server and tool, for recorded responses.
    pub server: Option<String>,
    pub tool: Option<String>,
    pub description: Option<String>,
    /// When it was stored (recorded) or last modified (found).
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub time: DateTime<Utc>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    /// The file's format (its extension for found files).
    pub format: String,
    /// Whether the records index holds its call (the Call tab).
    pub recorded: bool,
    /// Whether Offload stored it (a response, or a file written beside one); false for other
    /// files found in the directory (inputs, files the user put there).
    pub stored: bool,
    /// For a file written beside a response (an image, audio): that response's path.
    pub beside: Option<String>,
    /// Whether it may be deleted (it is in a writable directory).
    pub deletable: bool,
}

/// The list, newest first.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Responses {
    pub items: Vec<ResponseView>,
    /// True when the roots hold more files than are listed.
    pub truncated: bool,
}

/// The call that produced a stored response, as recorded (secrets and large values elided).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct CallView {
    pub server: String,
    pub tool: String,
    #[cfg_attr(feature = "ts", ts(type = "unknown"))]
    pub arguments: Value,
    pub description: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "string"))]
    pub time: DateTime<Utc>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub duration_ms: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    pub format: String,
    /// Binary files written beside it (images, audio).
    pub files: Vec<String>,
    /// False for records rebuilt from files after the index was lost (no arguments).
    pub complete: bool,
}

/// Reads the records Offload processes keep in bucket roots (only new ones are fetched; a bucket
/// that does not answer within seconds keeps its last list), so the lists that follow show them.
pub async fn refresh_bucket_records(engine: &Engine) {
    engine.store.refresh_buckets(&engine.roots()).await;
}

/// Stored responses first (with the files written beside them), then the other files found in
/// the roots, newest first.
pub fn responses(engine: &Engine) -> Responses {
    let roots = engine.roots();
    let mut items = stored(engine);
    let mut seen: HashSet<PathBuf> = items.iter().map(|r| PathBuf::from(&r.path)).collect();
    let mut truncated = false;
    for root in roots.list() {
        let mut found = Vec::new();
        truncated |= !scan(
            &root.path,
            SCAN_DEPTH,
            &mut found,
            SCAN_LIMIT - items.len().min(SCAN_LIMIT),
        );
        for (path, meta) in found {
            if !seen.insert(path.clone()) {
                continue;
            }
            items.push(ResponseView {
                name: file_name(&path),
                root: root.path.display().to_string(),
                server: None,
                tool: None,
                description: None,
                time: meta
                    .modified()
                    .map(DateTime::<Utc>::from)
                    .unwrap_or_default(),
                bytes: meta.len(),
                format: path
                    .extension()
                    .map(|e| e.to_string_lossy().to_lowercase())
                    .unwrap_or_default(),
                recorded: false,
                stored: false,
                beside: None,
                deletable: root.writable,
                path: path.display().to_string(),
            });
        }
    }
    items.sort_by_key(|r| std::cmp::Reverse(r.time));
    Responses { items, truncated }
}

/// The responses Offload stored that are still there, in the roots configured now, each
/// followed by the files written beside it (images, audio): the records index, not the disk.
pub fn stored(engine: &Engine) -> Vec<ResponseView> {
    let roots = engine.roots();
    let root_of = |path: &Path| {
        roots
            .list()
            .iter()
            .filter(|r| path.starts_with(&r.path))
            .max_by_key(|r| r.path.as_os_str().len())
            .cloned()
    };
    let mut seen: HashSet<String> = HashSet::new();
    let mut items = Vec::new();
    for record in engine.store.records() {
        if !seen.insert(record.path.clone()) {
            continue;
        }
        // Where it is: a bucket root's (its records are read from the bucket, so a deleted
        // object's record is gone too), or an allowed directory's (while the file is there).
        let (root, deletable, bytes) = if crate::objects::is_object_url(&record.path) {
            let Ok(inside) = roots.resolve_object(&record.path, Access::Read) else {
                continue;
            };
            (
                inside.bucket.url.to_string(),
                inside.bucket.writable,
                record.bytes,
            )
        } else {
            let path = Path::new(&record.path);
            let (Ok(meta), Some(root)) = (std::fs::metadata(path), root_of(path)) else {
                continue; // deleted, or no longer in an allowed directory
            };
            (root.path.display().to_string(), root.writable, meta.len())
        };
        let main = ResponseView {
            name: file_name(Path::new(&record.path)),
            root,
            server: Some(record.server),
            tool: Some(record.tool),
            description: record.description,
            time: record.time,
            bytes,
            format: record.format,
            recorded: !record.recovered,
            stored: true,
            beside: None,
            deletable,
            path: record.path,
        };
        for side in record.files {
            if !seen.insert(side.path.clone())
                || (!crate::objects::is_object_url(&side.path) && !Path::new(&side.path).is_file())
            {
                continue;
            }
            let side_path = Path::new(&side.path);
            items.push(ResponseView {
                name: file_name(side_path),
                description: None,
                bytes: side.bytes,
                format: side_path
                    .extension()
                    .map(|e| e.to_string_lossy().to_lowercase())
                    .unwrap_or_default(),
                recorded: false,
                beside: Some(main.path.clone()),
                path: side.path,
                ..main.clone()
            });
        }
        items.push(main);
    }
    items
}

pub(super) fn file_name(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// Regular files under `dir` (not following links, skipping hidden names). False when `room`
/// ran out before the walk was done.
fn scan(
    dir: &Path,
    depth: usize,
    out: &mut Vec<(PathBuf, std::fs::Metadata)>,
    room: usize,
) -> bool {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return true;
    };
    for entry in entries.flatten() {
        if entry.file_name().to_string_lossy().starts_with('.') {
            continue;
        }
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        if kind.is_dir() && depth > 0 {
            if !scan(&entry.path(), depth - 1, out, room) {
                return false;
            }
        } else if kind.is_file()
            && let Ok(meta) = entry.metadata()
        {
            if out.len() >= room {
                return false;
            }
            out.push((entry.path(), meta));
        }
    }
    true
}

/// The recorded call of the stored response at `path`.
pub fn response_call(engine: &Engine, path: &str) -> Result<CallView, ControlError> {
    let record = find(engine, path).ok_or_else(|| {
        ControlError::new(
            ErrorCode::PathNotFound,
            format!("no call is recorded for '{path}'"),
        )
    })?;
    Ok(CallView {
        complete: !record.recovered,
        server: record.server,
        tool: record.tool,
        arguments: record.arguments,
        description: record.description,
        time: record.time,
        duration_ms: record.duration_ms,
        bytes: record.bytes,
        format: record.format,
        files: record.files.into_iter().map(|f| f.path).collect(),
    })
}

fn find(engine: &Engine, path: &str) -> Option<Record> {
    engine.store.records().into_iter().find(|r| r.path == path)
}

/// A response stored in a writable bucket root: the object, the objects beside it (each checked
/// by the guard) and its record in the bucket.
fn delete_object_response(engine: &Engine, path: &str) -> Result<(), ControlError> {
    let roots = engine.roots();
    let resolved = roots
        .resolve_object(path, Access::Write)
        .map_err(|e| ControlError::new(e.code(), e.to_string()))?;
    let sides: Vec<crate::objects::ObjectUrl> = find(engine, path)
        .map(|r| r.files)
        .unwrap_or_default()
        .iter()
        .filter_map(|f| roots.resolve_object(&f.path, Access::Write).ok())
        .filter(|s| s.bucket.url == resolved.bucket.url)
        .map(|s| s.url)
        .collect();
    engine
        .store
        .delete_in_bucket(&resolved.bucket, &resolved.url, &sides)
        .map_err(|e| {
            ControlError::new(
                ErrorCode::WriteFailed,
                format!("cannot delete '{path}': {e}"),
            )
        })
}

/// Deletes the stored response at `path` and the binary files recorded beside it. Only files
/// inside a writable allowed directory can be deleted (checked after resolving links).
pub fn delete_response(engine: &Engine, path: &str) -> Result<(), ControlError> {
    let roots = engine.roots();
    if crate::objects::is_object_url(path) {
        return delete_object_response(engine, path);
    }
    let resolved = roots
        .resolve(path, Access::Write)
        .map_err(|e| ControlError::new(e.code(), e.to_string()))?;
    if !resolved.path.is_file() {
        return Err(ControlError::invalid(format!("'{path}' is not a file")));
    }
    let side_files: Vec<String> = find(engine, path)
        .map(|r| r.files.into_iter().map(|f| f.path).collect())
        .unwrap_or_default();
    std::fs::remove_file(&resolved.path).map_err(|e| {
        ControlError::new(
            ErrorCode::WriteFailed,
            format!("cannot delete '{path}': {e}"),
        )
    })?;
    for side in side_files {
        if let Ok(r) = roots.resolve(&side, Access::Write)
            && let Err(e) = std::fs::remove_file(&r.path)
        {
            tracing::warn!("cannot delete '{side}': {e}");
        }
    }
    Ok(())
}
