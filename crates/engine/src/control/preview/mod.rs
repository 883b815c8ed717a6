//! The preview of a file, in the Responses screen and for files dropped on the window: its
//! summary (`summarize_file`), schema (`get_file_schema`, columns and types as a table) and
//! content (`read_file`, paged; delimited files as tables, images as images); `schema` arranges
//! the schema for its tab, `query` runs the Query tab's SQL.
//!
//! These act for the user, who chose the file (in the list or by dropping it), so a file outside
//! the allowed directories may be previewed; the answer says whether it is inside one, and the
//! window offers to add its folder. Nothing here writes but *Save as response* (`query`). The model's tools go through the roots
//! guard as always.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

use super::ControlError;
use super::responses::file_name;
use crate::roots::Access;
use crate::{Engine, ErrorCode, ToolError};
use offload_formats::files::{FileError, Quiet, ReadRequest, Source, Summary};

mod query;
mod schema;

pub use query::{QueryView, query, save_query};
pub use schema::{ColumnView, SchemaView, schema};

/// Where a previewed file is, and whether the model can reach it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct FileInfo {
    /// Canonical.
    pub path: String,
    pub name: String,
    pub folder: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
    /// The allowed directory that holds it, if any.
    pub root: Option<String>,
    /// A folder (dropped on the window): the window offers to allow it.
    pub directory: bool,
}

/// One page of content.
#[derive(Debug, Clone, Default, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct Page {
    /// `text`, `table`, `sheet`, `pdf` or `image`.
    pub kind: String,
    pub text: Option<String>,
    /// Tables: the header and the rows of this page.
    pub columns: Option<Vec<String>>,
    pub rows: Option<Vec<Vec<String>>>,
    /// Images: a `data:` URL of the (possibly scaled) image.
    pub image: Option<String>,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub offset: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub count: u64,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub total: Option<u64>,
    #[cfg_attr(feature = "ts", ts(type = "number | null"))]
    pub next_offset: Option<u64>,
    pub truncated: bool,
    pub note: Option<String>,
}

fn file_error(e: FileError) -> ControlError {
    let e: ToolError = e.into();
    ControlError::new(e.code, e.message)
}

fn open(engine: &Engine, path: &str) -> Result<(Source, PathBuf), ControlError> {
    if crate::objects::is_object_url(path) {
        // An object is reachable only inside a configured bucket root: through the guard.
        return engine
            .roots()
            .open(path)
            .map_err(|e| ControlError::new(e.code(), e.to_string()));
    }
    let not_found = |e: std::io::Error| {
        ControlError::new(
            ErrorCode::PathNotFound,
            format!("cannot open '{path}': {e}"),
        )
    };
    let canonical = std::fs::canonicalize(crate::config::expand_tilde(path)).map_err(not_found)?;
    if !canonical.is_file() {
        return Err(ControlError::invalid(format!("'{path}' is not a file")));
    }
    let file = offload_formats::special_files::open(&canonical).map_err(not_found)?;
    Ok((
        Source::Local(file).decompressed_by_name(&canonical),
        canonical,
    ))
}

/// Where `path` is and whether an allowed directory holds it.
pub fn file_info(engine: &Engine, path: &str) -> Result<FileInfo, ControlError> {
    if !crate::objects::is_object_url(path)
        && let Ok(dir) = std::fs::canonicalize(crate::config::expand_tilde(path))
        && dir.is_dir()
    {
        return Ok(FileInfo {
            name: file_name(&dir),
            folder: dir.display().to_string(),
            root: engine
                .roots()
                .resolve(&dir.display().to_string(), Access::Read)
                .ok()
                .map(|r| r.root.path.display().to_string()),
            path: dir.display().to_string(),
            bytes: 0,
            directory: true,
        });
    }
    let (file, canonical) = open(engine, path)?;
    // A compressed file's own size (not what it holds).
    let file = match file {
        Source::Compressed(c) => c.inner().try_clone().map_err(|e| {
            ControlError::new(
                ErrorCode::PathUnusable,
                format!("cannot open '{path}': {e}"),
            )
        })?,
        other => other,
    };
    let bytes = file.len().unwrap_or(0);
    let shown = canonical.display().to_string();
    let root = match &file {
        Source::Remote(_) => engine
            .roots()
            .resolve_object(&shown, Access::Read)
            .ok()
            .map(|r| r.bucket.url.to_string()),
        Source::Local(_) | Source::Compressed(_) => engine
            .roots()
            .resolve(&shown, Access::Read)
            .ok()
            .map(|r| r.root.path.display().to_string()),
    };
    Ok(FileInfo {
        name: file_name(&canonical),
        folder: canonical
            .parent()
            .map(|p| p.display().to_string())
            .unwrap_or_default(),
        path: canonical.display().to_string(),
        bytes,
        root,
        directory: false,
    })
}

/// `summarize_file` of `path`.
pub fn summary(engine: &Engine, path: &str) -> Result<Summary, ControlError> {
    let (file, canonical) = open(engine, path)?;
    engine
        .files
        .summarize(file, &canonical, 20, &Quiet)
        .map_err(file_error)
}

/// A page of `path`'s content: `length` lines, rows or pages from `offset`.
pub fn content(
    engine: &Engine,
    path: &str,
    offset: u64,
    length: u64,
) -> Result<Page, ControlError> {
    let (file, canonical) = open(engine, path)?;
    let delimiter = match extension(&canonical).as_str() {
        "csv" => Some(b','),
        "tsv" | "tab" => Some(b'\t'),
        _ => None,
    };
    if let Some(delimiter) = delimiter
        && let Some(page) = table_page(engine, &canonical, delimiter, offset, length)?
    {
        return Ok(page);
    }
    let lines_of_records = matches!(extension(&canonical).as_str(), "jsonl" | "ndjson");
    let request = ReadRequest {
        offset: offset as i64,
        length,
        ..ReadRequest::default()
    };
    let answer = engine
        .files
        .read(file, &canonical, &request, &Quiet)
        .map_err(file_error)?;
    let rows = answer.rows.map(|rows| {
        rows.into_iter()
            .map(|r| r.into_iter().map(|c| cell(&c)).collect())
            .collect()
    });
    // An image file's picture (a PDF's embedded images stay out of its text preview).
    let picture = if answer.kind == "image" {
        answer.images_data
    } else {
        Vec::new()
    };
    if lines_of_records
        && rows.is_none()
        && let Some((columns, rows)) = records_table(answer.content.as_deref().unwrap_or_default())
    {
        return Ok(Page {
            kind: "table".into(),
            count: rows.len() as u64,
            columns: Some(columns),
            rows: Some(rows),
            offset: answer.offset.unwrap_or(offset),
            total: answer.total,
            next_offset: answer.next_offset,
            truncated: answer.truncated,
            note: answer.note,
            ..Page::default()
        });
    }
    let image = picture.into_iter().next().map(|(bytes, mime)| {
        format!(
            "data:{mime};base64,{}",
            base64::engine::general_purpose::STANDARD.encode(bytes)
        )
    });
    Ok(Page {
        kind: answer.kind,
        text: answer.content,
        columns: answer.columns,
        rows,
        image,
        offset: answer.offset.unwrap_or(offset),
        count: answer.count.unwrap_or(0),
        total: answer.total,
        next_offset: answer.next_offset,
        truncated: answer.truncated,
        note: answer.note,
    })
}

fn extension(path: &Path) -> String {
    path.extension()
        .map(|e| e.to_string_lossy().to_lowercase())
        .unwrap_or_default()
}

fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// The most columns a page of JSON Lines shows as a table; records with more keys than that
/// show as text.
const RECORD_COLUMNS: usize = 200;

/// A page of JSON Lines as a table: one row per record, a column per key in the order keys are
/// first seen (a key a record lacks is an empty cell, a nested value its JSON). `None` when a line
/// is not a JSON object (the page is then shown as text).
fn records_table(text: &str) -> Option<(Vec<String>, Vec<Vec<String>>)> {
    let mut columns: Vec<String> = Vec::new();
    let mut records = Vec::new();
    for line in text.lines().filter(|l| !l.trim().is_empty()) {
        let Ok(Value::Object(record)) = serde_json::from_str::<Value>(line) else {
            return None;
        };
        for key in record.keys() {
            if !columns.contains(key) {
                columns.push(key.clone());
            }
        }
        if columns.len() > RECORD_COLUMNS {
            return None;
        }
        records.push(record);
    }
    if records.is_empty() {
        return None;
    }
    let rows = records
        .iter()
        .map(|r| {
            columns
                .iter()
                .map(|c| r.get(c).map(cell).unwrap_or_default())
                .collect()
        })
        .collect();
    Some((columns, rows))
}

/// A page of a delimited file as a table: the header, then rows `offset..offset+length` (row
/// numbers count data rows). `None` when the lines do not parse as one table (a quoted newline
/// across the page's edge): the page is then shown as text.
fn table_page(
    engine: &Engine,
    path: &Path,
    delimiter: u8,
    offset: u64,
    length: u64,
) -> Result<Option<Page>, ControlError> {
    let read = |offset: u64, length: u64| {
        let (file, _) = open(engine, &path.display().to_string())?;
        let request = ReadRequest {
            offset: offset as i64,
            length,
            ..ReadRequest::default()
        };
        engine
            .files
            .read(file, path, &request, &Quiet)
            .map_err(file_error)
    };
    let parse = |text: &str| -> Option<Vec<Vec<String>>> {
        csv::ReaderBuilder::new()
            .delimiter(delimiter)
            .has_headers(false)
            .flexible(true)
            .from_reader(text.as_bytes())
            .records()
            .map(|r| r.ok().map(|r| r.iter().map(str::to_owned).collect()))
            .collect()
    };
    let header = read(0, 1)?;
    let Some(columns) = parse(header.content.as_deref().unwrap_or_default())
        .and_then(|mut rows| (rows.len() == 1).then(|| rows.remove(0)))
    else {
        return Ok(None);
    };
    let page = read(offset + 1, length)?;
    let Some(rows) = parse(page.content.as_deref().unwrap_or_default()) else {
        return Ok(None);
    };
    // Paging is by lines (the index read_file keeps); where quoted values hold line breaks a
    // row takes several, and the position is said in lines, with the rows it holds.
    let lines = page.count.unwrap_or(rows.len() as u64);
    let note = if lines != rows.len() as u64 {
        let spread = format!(
            "{} rows on these {lines} lines: some values hold line breaks, so the position counts lines",
            rows.len()
        );
        Some(
            page.note
                .map_or(spread.clone(), |n| format!("{n} {spread}")),
        )
    } else {
        page.note
    };
    Ok(Some(Page {
        kind: "table".into(),
        text: None,
        columns: Some(columns),
        count: lines,
        rows: Some(rows),
        image: None,
        offset,
        total: page.total.map(|t| t.saturating_sub(1)),
        next_offset: page.next_offset.map(|n| n.saturating_sub(1)),
        truncated: page.truncated,
        note,
    }))
}
