//! The preview of a file, in the Responses screen and for files dropped on the window: its
//! summary (`summarize_file`), schema (`get_file_schema`, columns and types as a table) and
//! content (`read_file`, paged; delimited files as tables, images as images).
//!
//! These act for the user, who chose the file (in the list or by dropping it), so a file outside
//! the allowed directories may be previewed; the answer says whether it is inside one, and the
//! window offers to add its folder. Nothing here writes. The model's tools go through the roots
//! guard as always.

use std::path::{Path, PathBuf};

use base64::Engine as _;
use serde::Serialize;
use serde_json::Value;

use offload_query::Query;
use tokio_util::sync::CancellationToken;

use super::ControlError;
use crate::files::{FileError, Quiet, ReadRequest, Source, Summary};
use crate::roots::Access;
use crate::{Engine, ErrorCode, ToolError};

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

/// One row of the schema table.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ColumnView {
    pub name: String,
    /// `integer`, `string`, ... (`a|b` when values differ); empty when unknown.
    pub kind: String,
    pub nullable: bool,
    pub samples: Vec<String>,
}

/// The schema as the Schema tab shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct SchemaView {
    pub format: String,
    /// Scalar facts (rows, delimiter, encoding, ...), as label and value.
    pub facts: Vec<(String, String)>,
    /// Columns of a table, keys of JSON/YAML records, elements of XML, first sheet's columns.
    pub columns: Vec<ColumnView>,
    /// The compact shape of structured data (`[{id: integer, ...}]`).
    pub outline: Option<String>,
    pub note: Option<String>,
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
    let file = crate::special_files::open(&canonical).map_err(not_found)?;
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
            name: file_name_of(&dir),
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
        Source::Object(_) => engine
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
        name: file_name_of(&canonical),
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

fn file_name_of(path: &Path) -> String {
    path.file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default()
}

/// `summarize_file` of `path`.
pub fn summary(engine: &Engine, path: &str) -> Result<Summary, ControlError> {
    let (file, canonical) = open(engine, path)?;
    engine
        .files
        .summarize(file, &canonical, 20, &Quiet)
        .map_err(file_error)
}

/// `get_file_schema` of `path`, arranged for a table.
pub fn schema(engine: &Engine, path: &str) -> Result<SchemaView, ControlError> {
    let (file, canonical) = open(engine, path)?;
    let schema = engine
        .files
        .schema(file, &canonical, 5, &Quiet)
        .map_err(file_error)?;
    let value = serde_json::to_value(&schema)
        .map_err(|e| ControlError::new(ErrorCode::Internal, e.to_string()))?;
    Ok(schema_view(&value))
}

/// One scalar of a schema as people read it: `row_count: 1234` → ("rows", "1,234"),
/// `typed_from: "all_rows"` → ("types read from", "all rows"), `has_header: true` → ("header
/// row", "yes"); keys it does not know are said with spaces for underscores.
fn fact(key: &str, value: &Value, exact: Option<bool>) -> Option<(String, String)> {
    let label = match key {
        "row_count" => "rows",
        "line_count" => "lines",
        "column_count" => "columns",
        "sampled_rows" => "rows sampled",
        "has_header" => "header row",
        "typed_from" => "types read from",
        other => return plain(other, value, exact).map(|v| (other.replace('_', " "), v)),
    };
    let shown = match (key, value) {
        ("typed_from", Value::String(s)) if s == "sample" => "a sample from across the file".into(),
        _ => plain(key, value, exact)?,
    };
    Some((label.to_owned(), shown))
}

/// A scalar in words: counts with thousands separators ("about" when not exact), yes/no,
/// identifiers with spaces; a delimiter by its name.
fn plain(key: &str, value: &Value, exact: Option<bool>) -> Option<String> {
    Some(match value {
        Value::Bool(b) => if *b { "yes" } else { "no" }.into(),
        Value::Number(n) => {
            let shown = n.as_u64().map_or_else(|| n.to_string(), thousands);
            if exact == Some(false) {
                format!("about {shown}")
            } else {
                shown
            }
        }
        Value::String(s) if key == "delimiter" => match s.as_str() {
            "," => "comma (,)".into(),
            "\t" => "tab".into(),
            ";" => "semicolon (;)".into(),
            "|" => "pipe (|)".into(),
            other => other.into(),
        },
        Value::String(s)
            if s.contains('_') && s.chars().all(|c| c.is_ascii_lowercase() || c == '_') =>
        {
            s.replace('_', " ")
        }
        Value::String(s) => s.clone(),
        _ => return None,
    })
}

fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

fn schema_view(v: &Value) -> SchemaView {
    let text = |v: &Value| v.as_str().map(str::to_owned);
    let mut facts = Vec::new();
    if let Some(map) = v.as_object() {
        for (k, x) in map {
            if matches!(k.as_str(), "path" | "format" | "note" | "outline") || k.ends_with("_exact")
            {
                continue;
            }
            // A count said to be exact by its `<key>_exact` neighbour; "about" when it is not.
            let exact = map.get(&format!("{k}_exact")).and_then(Value::as_bool);
            if let Some(fact) = fact(k, x, exact) {
                facts.push(fact);
            }
        }
    }
    let columns = if let Some(cols) = v["columns"].as_array() {
        table_columns(cols)
    } else if let Some(sheets) = v["sheets"].as_array() {
        let names: Vec<&str> = sheets.iter().filter_map(|s| s["name"].as_str()).collect();
        facts.push(("sheets".into(), names.join(", ")));
        sheets
            .first()
            .and_then(|s| s["columns"].as_array())
            .map(|c| table_columns(c))
            .unwrap_or_default()
    } else if v["shape"].is_object() {
        let shape = &v["shape"];
        let record = if shape["items"].is_object() {
            &shape["items"]
        } else {
            shape
        };
        record["keys"]
            .as_object()
            .map(|keys| {
                keys.iter()
                    .map(|(name, k)| ColumnView {
                        name: name.clone(),
                        kind: text(&k["type"]).unwrap_or_default(),
                        nullable: k["optional"].as_bool().unwrap_or(false)
                            || text(&k["type"]).is_some_and(|t| t.contains("null")),
                        samples: Vec::new(),
                    })
                    .collect()
            })
            .unwrap_or_default()
    } else if let Some(children) = v["children"].as_array() {
        children
            .iter()
            .map(|c| ColumnView {
                name: text(&c["name"]).unwrap_or_default(),
                kind: format!("element ×{}", c["count"]),
                nullable: false,
                samples: c["attributes"]
                    .as_array()
                    .map(|a| a.iter().filter_map(text).map(|s| format!("@{s}")).collect())
                    .unwrap_or_default(),
            })
            .collect()
    } else {
        Vec::new()
    };
    SchemaView {
        format: text(&v["format"]).unwrap_or_default(),
        facts,
        columns,
        outline: text(&v["outline"]),
        note: text(&v["note"]),
    }
}

fn table_columns(cols: &[Value]) -> Vec<ColumnView> {
    cols.iter()
        .map(|c| ColumnView {
            name: c["name"].as_str().unwrap_or_default().to_owned(),
            kind: c["type"].as_str().unwrap_or_default().to_owned(),
            nullable: c["nullable"].as_bool().unwrap_or(false),
            samples: c["samples"]
                .as_array()
                .map(|s| {
                    s.iter()
                        .filter_map(|x| x.as_str().map(str::to_owned))
                        .collect()
                })
                .unwrap_or_default(),
        })
        .collect()
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
    Ok(Some(Page {
        kind: "table".into(),
        text: None,
        columns: Some(columns),
        count: rows.len() as u64,
        rows: Some(rows),
        image: None,
        offset,
        total: page.total.map(|t| t.saturating_sub(1)),
        next_offset: page.next_offset.map(|n| n.saturating_sub(1)),
        truncated: page.truncated,
        note: page.note,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn schemas_of_every_kind_become_a_column_table() {
        let csv = schema_view(&json!({
            "path": "/x.csv", "format": "csv", "delimiter": ",", "row_count": 3,
            "columns": [{"name": "id", "type": "integer", "nullable": false, "samples": ["1"]}]
        }));
        assert_eq!(csv.columns[0].name, "id");
        assert_eq!(csv.columns[0].kind, "integer");
        assert!(csv.facts.contains(&("rows".into(), "3".into())));

        // Facts in words, not raw keys and values.
        let big = schema_view(&json!({
            "format": "csv", "delimiter": "\t", "has_header": true, "row_count": 1234567,
            "row_count_exact": false, "typed_from": "sample", "sampled_rows": 6400,
            "encoding": "utf-8", "root_type": "array_of_objects", "columns": []
        }));
        let facts: std::collections::HashMap<_, _> = big.facts.iter().cloned().collect();
        assert_eq!(facts["rows"], "about 1,234,567");
        assert_eq!(facts["delimiter"], "tab");
        assert_eq!(facts["header row"], "yes");
        assert_eq!(facts["types read from"], "a sample from across the file");
        assert_eq!(facts["rows sampled"], "6,400");
        assert_eq!(facts["root type"], "array of objects");
        assert_eq!(facts["encoding"], "utf-8");
        assert!(!facts.contains_key("row count exact"));
        let small = schema_view(
            &json!({"typed_from": "all_rows", "row_count": 999, "row_count_exact": true}),
        );
        assert!(
            small
                .facts
                .contains(&("types read from".into(), "all rows".into()))
        );
        assert!(small.facts.contains(&("rows".into(), "999".into())));

        let json = schema_view(&json!({
            "format": "json", "root_type": "array", "outline": "[{id: integer}]",
            "shape": {"type": "array", "items": {"type": "object", "keys": {
                "id": {"type": "integer"}, "email": {"type": "string|null", "optional": true}
            }}}
        }));
        let names: Vec<_> = json.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["id", "email"]);
        assert!(json.columns[1].nullable && !json.columns[0].nullable);
        assert_eq!(json.outline.as_deref(), Some("[{id: integer}]"));

        let xml = schema_view(&json!({
            "format": "xml", "root": "feed",
            "children": [{"name": "entry", "count": 2, "attributes": ["id"], "children": []}]
        }));
        assert_eq!(xml.columns[0].kind, "element ×2");
        assert_eq!(xml.columns[0].samples, ["@id"]);

        let text = schema_view(&json!({"format": "text", "encoding": "utf-8"}));
        assert!(text.columns.is_empty());
    }
}

/// The Query tab's answer: the first rows of the result, as text cells.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct QueryView {
    /// The result's columns and their types.
    pub columns: Vec<(String, String)>,
    pub rows: Vec<Vec<String>>,
    /// Rows in the whole result.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub row_count: u64,
    pub truncated: bool,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub millis: u64,
}

/// The user's file as the only table a query may read.
fn user_file(engine: &Engine, path: &str) -> Result<(Source, PathBuf), ToolError> {
    open(engine, path).map_err(|e| ToolError::new(e.code, e.message))
}

fn tool_error(e: ToolError) -> ControlError {
    ControlError::new(e.code, e.message)
}

/// Runs `sql` over `path` (the table `data`) and answers with its first `limit` rows.
pub fn query(
    engine: &Engine,
    path: &str,
    sql: &str,
    limit: usize,
) -> Result<QueryView, ControlError> {
    let started = std::time::Instant::now();
    let bounds = crate::query::bounds(engine, limit.min(10_000), 8 << 20);
    let answer = engine
        .queries
        .answer(Query {
            sources: crate::query::sources(&|p: &str| user_file(engine, p), path, [])
                .map_err(tool_error)?,
            sql,
            limits: &bounds.limits,
            cancel: &CancellationToken::new(),
            progress: &mut |_| {},
        })
        .map_err(|e| tool_error(crate::query::query_error(e)))?;
    Ok(QueryView {
        columns: answer
            .columns
            .into_iter()
            .map(|c| (c.name, c.kind))
            .collect(),
        rows: answer
            .rows
            .into_iter()
            .map(|r| r.iter().map(cell).collect())
            .collect(),
        row_count: answer.row_count,
        truncated: answer.truncated,
        millis: started.elapsed().as_millis() as u64,
    })
}

/// Stores the whole result of `sql` over `path` as a CSV response in the default directory
/// (listed with the others); answers with the stored file's path.
pub fn save_query(
    engine: &Engine,
    path: &str,
    sql: &str,
    description: Option<String>,
) -> Result<String, ControlError> {
    let started = std::time::Instant::now();
    let bounds = crate::query::bounds(engine, 0, 0);
    let arguments = serde_json::json!({"path": path, "sql": sql});
    let query = Query {
        sources: crate::query::sources(&|p: &str| user_file(engine, p), path, [])
            .map_err(tool_error)?,
        sql,
        limits: &bounds.limits,
        cancel: &CancellationToken::new(),
        progress: &mut |_| {},
    };
    let stored = crate::query::store_sql(
        engine,
        query,
        crate::store::WrittenRequest {
            server: "offload",
            tool: "query_file",
            arguments: &arguments,
            description: description.or_else(|| Some(format!("query of {path}"))),
            storage_path: None,
            filename: None,
            format: None,
            default_format: crate::formats::Format::Csv,
            duration: started.elapsed(),
        },
    );
    Ok(stored.map_err(tool_error)?.record.path)
}
