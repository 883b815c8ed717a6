//! What `query_file` and the app's Query tab share: the sources of a query (the file as
//! `data`, more tables by name; sheets read into rows; CSV delimiters sniffed), where a query
//! spills, and a whole result written in any store format. Who opens the files is the
//! caller's choice: the model's tool through the roots guard, the app for a file the user chose.

use std::path::PathBuf;
use std::sync::Arc;

use offload_query::{Data, Format as TableFormat, Limits, OutFormat, Query, QueryError, Source};
use serde_json::Value;

use crate::columns::{ColumnCopies, Found, Missing};
use crate::{Engine, ErrorCode, ToolError};
use offload_formats::Format;
use offload_formats::files::{self, Kind, Probe};
use offload_formats::inputs::{self, ReadOptions};
use offload_formats::output::{self, Payload};

/// Opens a path the caller may read (a local file or an object in a bucket root): what to read
/// and the name to show.
pub type Opener<'a> = dyn Fn(&str) -> Result<(files::Source, PathBuf), ToolError> + 'a;

/// Opens `path` with `open`; what it is; the path for messages.
pub fn probe(open: &Opener<'_>, path: &str) -> Result<(files::Source, Kind, String), ToolError> {
    let (file, shown) = open(path)?;
    let probe = Probe::new(file, &shown)?;
    let label = shown.display().to_string();
    Ok((probe.file, probe.kind, label))
}

/// The columnar copies a query's files lack: made once it has answered ([`ToCopy::answered`]).
#[must_use = "the copies are made only when told the query answered"]
pub struct ToCopy(Vec<Missing>);

impl ToCopy {
    /// The query answered: its files without a columnar copy get one, made apart.
    pub fn answered(self, engine: &Engine) {
        let limits = engine.limits();
        engine
            .columns
            .make(self.0, limits.query_memory_bytes, limits.query_cache_bytes);
    }
}

/// A stored answer that is a table gets its columnar copy at once, made apart: the model's
/// first question of it reads columns. (Parquet already is; a file that is not a table, or
/// that cannot be opened, gets none.)
pub fn copy_stored(engine: &Engine, stored: &crate::store::Stored) {
    let r = &stored.record;
    if stored.summary.kind != "table"
        || !matches!(r.format.as_str(), "csv" | "tsv" | "json" | "jsonl")
    {
        return;
    }
    let guarded = |path: &str| Ok(engine.roots().open(path)?);
    if let Ok((_, to_copy)) = sources(engine, &guarded, &r.path, []) {
        to_copy.answered(engine);
    }
}

/// `path` as `data` and each of `tables`, opened and typed; a file with a columnar copy of its
/// current version is read from the copy.
pub fn sources<'t>(
    engine: &Engine,
    open: &Opener<'_>,
    path: &str,
    tables: impl IntoIterator<Item = (&'t String, &'t String)>,
) -> Result<(Vec<Source>, ToCopy), ToolError> {
    let cap = engine.limits().query_cache_bytes;
    let mut missing = Vec::new();
    let mut source = |name: &str, path: &str| {
        let (source, lacking) = source(open, name, path, &engine.columns, cap)?;
        missing.extend(lacking);
        Ok::<_, ToolError>(source)
    };
    let mut out = vec![source("data", path)?];
    for (name, path) in tables {
        let valid = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if !valid || name == "data" {
            return Err(ToolError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "table name {name:?}: use letters, digits and _ (not starting with a digit), and not `data` (that is path)"
                ),
            ));
        }
        out.push(source(name, path)?);
    }
    Ok((out, ToCopy(missing)))
}

fn source(
    open: &Opener<'_>,
    name: &str,
    path: &str,
    copies: &ColumnCopies,
    cap: u64,
) -> Result<(Source, Option<Missing>), ToolError> {
    // "book.xlsx#Sheet1": a sheet of a workbook.
    let (file_path, sheet) = match path.rsplit_once('#') {
        Some((file, sheet))
            if matches!(Format::of_path(std::path::Path::new(file)), Format::Sheet) =>
        {
            (file, Some(sheet.to_owned()))
        }
        _ => (path, None),
    };
    let (file, kind, label) = probe(open, file_path)?;
    let format = match kind {
        Kind::Delimited { tab } => {
            let delimiter = offload_formats::files::delimiter_of(&file, tab)?;
            TableFormat::Delimited { delimiter }
        }
        Kind::Json => TableFormat::Json,
        Kind::Jsonl => TableFormat::Jsonl,
        Kind::Parquet => TableFormat::Parquet,
        Kind::Sheet => {
            let (rows, _) = inputs::parse_with(
                &mut file.reader(),
                Format::Sheet,
                &ReadOptions {
                    sheet,
                    ..ReadOptions::default()
                },
            )
            .map_err(|e| crate::error::input_error(e, &label, Format::Sheet))?;
            let rows = match rows {
                Value::Array(rows) => rows,
                other => vec![other],
            };
            return Ok((
                Source {
                    name: name.to_owned(),
                    label,
                    data: Data::Rows(rows),
                },
                None,
            ));
        }
        _ => {
            return Err(ToolError::new(
                ErrorCode::UnsupportedFormat,
                format!(
                    "{label} is not a table: sql reads CSV, TSV, JSON (a list of objects), JSON lines, Parquet and sheets (use jq for other JSON or YAML)"
                ),
            ));
        }
    };
    let (file, format, missing): (Arc<dyn offload_query::Blob>, _, _) =
        match copies.find(&file, &label, &format, cap) {
            Found::Copy(copy) => (Arc::new(copy), TableFormat::Parquet, None),
            Found::Missing(m) => (Arc::new(file), format, Some(m)),
            Found::Never => (Arc::new(file), format, None),
        };
    Ok((
        Source {
            name: name.to_owned(),
            label,
            data: Data::File { file, format },
        },
        missing,
    ))
}

/// The bounds of one query: the configured memory (`limits.queryMemoryBytes`) and a
/// directory of its own to spill into, inside the default root's `.offload-spill`, made when
/// the query first spills and removed with what is in it when the query is over. (One
/// directory shared by queries running at once was removed under the others: found by the team
/// bench's concurrent queries.)
pub struct Bounds {
    pub limits: Limits,
}

impl Drop for Bounds {
    fn drop(&mut self) {
        if let Some(dir) = &self.limits.spill_dir {
            let _ = std::fs::remove_dir_all(dir);
        }
    }
}

/// The bounds of a query answering `rows` rows within `budget` bytes.
pub fn bounds(engine: &Engine, rows: usize, budget: usize) -> Bounds {
    static QUERIES: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);
    let n = QUERIES.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    let spill_dir = engine.roots().default_dir().map(|d| {
        d.join(".offload-spill")
            .join(format!("{}-{n}", std::process::id()))
    });
    Bounds {
        limits: Limits {
            rows,
            budget,
            memory: engine.limits().query_memory_bytes.max(1 << 20) as usize,
            spill_dir,
        },
    }
}

/// The whole result of the query written as `format`: straight from the batches for the
/// formats Arrow writes, through a JSON text and Offload's renderers for the others.
fn write_result(
    queries: &offload_query::Querier,
    query: Query<'_>,
    format: Format,
    w: &mut (dyn std::io::Write + Send),
) -> Result<offload_query::Written, QueryError> {
    let direct = match format {
        Format::Csv => Some(OutFormat::Csv),
        Format::Tsv => Some(OutFormat::Tsv),
        Format::Json => Some(OutFormat::Json),
        Format::Jsonl => Some(OutFormat::Jsonl),
        Format::Parquet => Some(OutFormat::Parquet),
        _ => None,
    };
    match direct {
        Some(out) => queries.write(query, out, w),
        None => {
            let mut json = Vec::new();
            let written = queries.write(query, OutFormat::Json, &mut json)?;
            let text =
                String::from_utf8(json).map_err(|e| QueryError::Io(std::io::Error::other(e)))?;
            output::render(&Payload::from_text(text), format, w)?;
            Ok(written)
        }
    }
}

/// A query error as a tool error (`query_error`, or what else went wrong).
pub fn query_error(e: QueryError) -> ToolError {
    let code = match &e {
        QueryError::Cancelled => ErrorCode::Cancelled,
        QueryError::Source(_) => ErrorCode::ParseError,
        QueryError::Io(_) => ErrorCode::WriteFailed,
        QueryError::Memory(_) | QueryError::Query(_) => ErrorCode::QueryError,
        QueryError::Internal(_) => ErrorCode::Internal,
    };
    ToolError::new(code, e.to_string())
}

/// Stores the whole result of the query as a response (`req` says where and as what), written
/// as it is produced. A failed query answers with its own error, not the store's.
pub fn store_sql(
    engine: &Engine,
    query: Query<'_>,
    req: crate::store::WrittenRequest<'_>,
) -> Result<crate::store::Stored, ToolError> {
    let mut failure = None;
    let stored = engine
        .store
        .store_written(&engine.roots(), req, |format, w| {
            match write_result(&engine.queries, query, format, w) {
                Ok(written) => Ok(crate::store::Summary::table(
                    written.row_count as usize,
                    written
                        .columns
                        .into_iter()
                        .map(|c| crate::store::Column {
                            name: c.name,
                            kind: c.kind,
                        })
                        .collect(),
                )),
                Err(e) => {
                    let message = e.to_string();
                    failure = Some(e);
                    Err(std::io::Error::other(message))
                }
            }
        });
    match failure {
        Some(e) => Err(query_error(e)),
        None => stored,
    }
}
