//! `query_file`: SQL (DataFusion) or jq (jaq) next to the data, answering with the result only,
//! or storing the whole result as a file. Every path goes through the roots guard and is opened
//! here; the query reads those open files and nothing else (`offload_query`).

use std::fs::File;
use std::sync::Arc;
use std::time::Instant;

use offload_query::{Data, Format as TableFormat, JqInput, Limits, OutFormat, QueryError, Source};
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::store::stored_answer;
use super::{answer, catalog, params};
use crate::files::{Kind, Probe};
use crate::formats::{self, Format, Payload};
use crate::inputs::{self, InputFormat, ReadOptions};
use crate::store::{Column, Summary, WrittenRequest};
use crate::{Engine, ErrorCode, ToolError};

/// The answer of `query_file` (when nothing is stored).
#[derive(Debug, Serialize, JsonSchema)]
pub struct QueryAnswer {
    /// SQL: the result's columns, `{name, type}`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<QueryColumn>>,
    /// SQL: the first rows, cells in column order.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<Vec<Value>>>,
    /// jq: the first outputs.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub results: Option<Vec<Value>>,
    /// Rows (or jq outputs) in the whole result.
    pub row_count: u64,
    /// True when fewer than `row_count` are shown (the limit or the inline budget).
    pub truncated: bool,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct QueryColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
}

/// Memory one query may hold before its operators spill (or it fails).
const QUERY_MEMORY: usize = 256 << 20;
/// The largest JSON or YAML document jq reads whole.
const JQ_DOCUMENT: u64 = 512 << 20;

pub async fn query_file(
    engine: &Arc<Engine>,
    p: params::QueryFile,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    let started = Instant::now();
    let progress = progress_sender(ctx);
    let cancel = ctx.ct.clone();
    let engine2 = engine.clone();
    let job = tokio::task::spawn_blocking(move || run(&engine2, p, &cancel, progress, started));
    match job.await {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => answer::error(&e),
        Err(e) => answer::error(&ToolError::new(
            ErrorCode::Internal,
            format!("the query task failed: {e}"),
        )),
    }
}

/// Sends `rows scanned` progress to the client when it asked for progress.
fn progress_sender(ctx: &RequestContext<RoleServer>) -> Box<dyn FnMut(u64) + Send> {
    let Some(token) = ctx.meta.get_progress_token() else {
        return Box::new(|_| {});
    };
    let peer = ctx.peer.clone();
    let handle = tokio::runtime::Handle::current();
    Box::new(move |rows| {
        let peer = peer.clone();
        let token = token.clone();
        handle.spawn(async move {
            let mut p = ProgressNotificationParam::new(token, rows as f64);
            p.message = Some(format!("{rows} rows scanned"));
            let _ = peer.notify_progress(p).await;
        });
    })
}

fn run(
    engine: &Arc<Engine>,
    p: params::QueryFile,
    cancel: &CancellationToken,
    mut progress: Box<dyn FnMut(u64) + Send>,
    started: Instant,
) -> Result<CallToolResult, ToolError> {
    let invalid = |m: &str| ToolError::new(ErrorCode::InvalidArguments, m.to_owned());
    let limits = engine.limits();
    let limit = p.limit.unwrap_or(100).min(10_000) as usize;
    let budget = limits.inline_bytes as usize;
    let storing = p.description.is_some()
        || p.storage_path.is_some()
        || p.filename.is_some()
        || p.file_format.is_some();
    let arguments = serde_json::to_value(QueryArguments::of(&p)).unwrap_or(Value::Null);

    match (&p.sql, &p.jq) {
        (Some(_), Some(_)) => Err(invalid("give sql or jq, not both")),
        (None, None) => Err(invalid(
            "give sql (e.g. \"SELECT region, SUM(amount) FROM data GROUP BY region\") or jq",
        )),
        (None, Some(program)) => {
            if p.tables.is_some() {
                return Err(invalid("tables go with sql; jq reads the one file in path"));
            }
            let (file, probe_kind, label) = open(engine, &p.path)?;
            let input = match probe_kind {
                Kind::Json => JqInput::Json(file),
                Kind::Jsonl => JqInput::Jsonl(file),
                Kind::Yaml => JqInput::Yaml(file),
                _ => {
                    return Err(ToolError::new(
                        ErrorCode::UnsupportedFormat,
                        format!(
                            "jq reads JSON, JSON lines or YAML; {label} is not one (use sql for tables)"
                        ),
                    ));
                }
            };
            let (limit, budget) = if storing {
                (usize::MAX, limits.max_upstream_answer_bytes as usize)
            } else {
                (limit, budget)
            };
            let out = offload_query::run_jq(program, input, limit, budget, JQ_DOCUMENT, cancel)
                .map_err(query_error)?;
            if storing {
                if out.truncated {
                    return Err(ToolError::new(
                        ErrorCode::FileTooLarge,
                        "the jq results are larger than limits.maxUpstreamAnswerBytes; narrow the program",
                    ));
                }
                let count = out.results.len();
                let payload = Payload::Json(Value::Array(out.results));
                return store(
                    engine,
                    &p,
                    &arguments,
                    Format::Json,
                    started,
                    move |format, w| {
                        let rendered = formats::render(&payload, format, w)?;
                        Ok(match rendered.table {
                            Some(t) => Summary::table(t.rows, columns_of(&t.columns)),
                            None => Summary::list(count),
                        })
                    },
                );
            }
            let text = jq_text(&out.results, out.count, out.truncated);
            let answer = QueryAnswer {
                columns: None,
                rows: None,
                row_count: out.count,
                truncated: out.truncated,
                results: Some(out.results),
            };
            Ok(answer::structured(&answer, text))
        }
        (Some(sql), None) => {
            let sources = sources(engine, &p)?;
            let spill = spill_dir(engine);
            let qlimits = Limits {
                rows: limit,
                budget,
                memory: QUERY_MEMORY,
                spill_dir: spill.clone(),
            };
            let result = if storing {
                let mut failure: Option<QueryError> = None;
                let stored = store(engine, &p, &arguments, Format::Csv, started, |format, w| {
                    let written = write_result(
                        engine,
                        sources,
                        sql,
                        &qlimits,
                        cancel,
                        &mut progress,
                        format,
                        w,
                    );
                    match written {
                        Ok(written) => Ok(Summary::table(
                            written.row_count as usize,
                            written
                                .columns
                                .into_iter()
                                .map(|c| Column {
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
                    // The query failed, not the disk: its own code and message.
                    Some(e) => Err(query_error(e)),
                    None => stored,
                }
            } else {
                engine
                    .queries
                    .answer(sources, sql, &qlimits, cancel, &mut progress)
                    .map_err(query_error)
                    .map(|a| {
                        let text = table_text(&a);
                        let answer = QueryAnswer {
                            columns: Some(
                                a.columns
                                    .into_iter()
                                    .map(|c| QueryColumn {
                                        name: c.name,
                                        kind: c.kind,
                                    })
                                    .collect(),
                            ),
                            rows: Some(a.rows),
                            results: None,
                            row_count: a.row_count,
                            truncated: a.truncated,
                        };
                        answer::structured(&answer, text)
                    })
            };
            if let Some(dir) = spill {
                // Empty once the query is over; left when another query still uses it.
                let _ = std::fs::remove_dir(dir);
            }
            result
        }
    }
}

/// The whole result of `sql` written as `format`: straight from the batches for the formats
/// Arrow writes, through a JSON text and Offload's renderers for the others.
#[allow(clippy::too_many_arguments)]
fn write_result(
    engine: &Engine,
    sources: Vec<Source>,
    sql: &str,
    limits: &Limits,
    cancel: &CancellationToken,
    progress: &mut (dyn FnMut(u64) + Send),
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
    let queries = &engine.queries;
    match direct {
        Some(out) => queries.write(sources, sql, limits, cancel, progress, out, w),
        None => {
            let mut json = Vec::new();
            let written = queries.write(
                sources,
                sql,
                limits,
                cancel,
                progress,
                OutFormat::Json,
                &mut json,
            )?;
            let text =
                String::from_utf8(json).map_err(|e| QueryError::Io(std::io::Error::other(e)))?;
            formats::render(&Payload::from_text(text), format, w)?;
            Ok(written)
        }
    }
}

fn query_error(e: QueryError) -> ToolError {
    let code = match &e {
        QueryError::Cancelled => ErrorCode::Cancelled,
        QueryError::Source(_) => ErrorCode::ParseError,
        QueryError::Io(_) => ErrorCode::WriteFailed,
        QueryError::Memory(_) => ErrorCode::QueryError,
        QueryError::Query(_) => ErrorCode::QueryError,
    };
    ToolError::new(code, e.to_string())
}

/// The arguments as recorded with a stored result.
#[derive(Serialize)]
struct QueryArguments<'a> {
    path: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    sql: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    jq: Option<&'a str>,
    #[serde(skip_serializing_if = "Option::is_none")]
    tables: Option<&'a std::collections::BTreeMap<String, String>>,
}

impl<'a> QueryArguments<'a> {
    fn of(p: &'a params::QueryFile) -> Self {
        Self {
            path: &p.path,
            sql: p.sql.as_deref(),
            jq: p.jq.as_deref(),
            tables: p.tables.as_ref(),
        }
    }
}

fn store(
    engine: &Arc<Engine>,
    p: &params::QueryFile,
    arguments: &Value,
    default_format: Format,
    started: Instant,
    fill: impl FnOnce(Format, &mut (dyn std::io::Write + Send)) -> std::io::Result<Summary>,
) -> Result<CallToolResult, ToolError> {
    let stored = engine.store.store_written(
        &engine.roots(),
        WrittenRequest {
            server: "offload",
            tool: catalog::QUERY_FILE,
            arguments,
            description: p.description.clone(),
            storage_path: p.storage_path.as_deref(),
            filename: p.filename.as_deref(),
            format: p.file_format.as_deref(),
            default_format,
            duration: started.elapsed(),
        },
        fill,
    )?;
    Ok(stored_answer(&stored, None))
}

fn columns_of(columns: &[(String, &'static str)]) -> Vec<Column> {
    columns
        .iter()
        .map(|(name, kind)| Column {
            name: name.clone(),
            kind: (*kind).to_owned(),
        })
        .collect()
}

/// Opens `path` through the guard; what it is; the path for messages.
fn open(engine: &Arc<Engine>, path: &str) -> Result<(File, Kind, String), ToolError> {
    let (file, resolved) = engine.roots().open_read(path)?;
    let probe = Probe::new(file, &resolved.path)?;
    let label = resolved.path.display().to_string();
    Ok((probe.file, probe.kind, label))
}

/// `path` as `data` and each of `tables`, opened and typed.
fn sources(engine: &Arc<Engine>, p: &params::QueryFile) -> Result<Vec<Source>, ToolError> {
    let mut out = vec![source(engine, "data", &p.path)?];
    for (name, path) in p.tables.iter().flatten() {
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
        out.push(source(engine, name, path)?);
    }
    Ok(out)
}

fn source(engine: &Arc<Engine>, name: &str, path: &str) -> Result<Source, ToolError> {
    // "book.xlsx#Sheet1": a sheet of a workbook.
    let (file_path, sheet) = match path.rsplit_once('#') {
        Some((file, sheet))
            if matches!(
                InputFormat::of_path(std::path::Path::new(file)),
                InputFormat::Sheet
            ) =>
        {
            (file, Some(sheet.to_owned()))
        }
        _ => (path, None),
    };
    let (file, kind, label) = open(engine, file_path)?;
    let format = match kind {
        Kind::Delimited { tab } => {
            let delimiter = crate::files::delimiter_of(&file, tab)?;
            TableFormat::Delimited { delimiter }
        }
        Kind::Json => TableFormat::Json,
        Kind::Jsonl => TableFormat::Jsonl,
        Kind::Parquet => TableFormat::Parquet,
        Kind::Sheet => {
            let mut file = file;
            let (rows, _) = inputs::parse_with(
                &mut file,
                InputFormat::Sheet,
                &ReadOptions {
                    sheet,
                    ..ReadOptions::default()
                },
            )
            .map_err(|e| e.into_tool_error(&label, InputFormat::Sheet))?;
            let rows = match rows {
                Value::Array(rows) => rows,
                other => vec![other],
            };
            return Ok(Source {
                name: name.to_owned(),
                label,
                data: Data::Rows(rows),
            });
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
    Ok(Source {
        name: name.to_owned(),
        label,
        data: Data::File { file, format },
    })
}

/// Where a query spills: a directory inside the default root, made for the query.
fn spill_dir(engine: &Arc<Engine>) -> Option<std::path::PathBuf> {
    let roots = engine.roots();
    let dir = roots.default_dir()?.join(".offload-spill");
    std::fs::create_dir_all(&dir).ok()?;
    Some(dir)
}

/// A compact text table: header, then one line per row, cells cut at 200 characters.
fn table_text(a: &offload_query::Answer) -> String {
    let mut t = a
        .columns
        .iter()
        .map(|c| c.name.as_str())
        .collect::<Vec<_>>()
        .join(" | ");
    for row in &a.rows {
        t.push('\n');
        let cells: Vec<String> = row
            .iter()
            .map(|v| {
                let s = match v {
                    Value::String(s) => s.clone(),
                    Value::Null => String::new(),
                    other => other.to_string(),
                };
                crate::clip::clip(&s.replace('\n', "\\n"), 200).into_owned()
            })
            .collect();
        t.push_str(&cells.join(" | "));
    }
    t.push_str(&format!(
        "\n({} of {} rows{})",
        a.rows.len(),
        a.row_count,
        if a.truncated {
            "; raise limit or store the result with description/filename"
        } else {
            ""
        }
    ));
    t
}

fn jq_text(results: &[Value], count: u64, truncated: bool) -> String {
    let mut t: Vec<String> = results.iter().map(Value::to_string).collect();
    if truncated {
        t.push(format!(
            "({} of {count} outputs; raise limit or store them with description/filename)",
            results.len()
        ));
    }
    t.join("\n")
}
