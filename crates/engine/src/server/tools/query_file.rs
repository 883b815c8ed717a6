//! `query_file`: SQL (DataFusion) or jq (jaq) next to the data, answering with the result only,
//! or storing the whole result as a file. Every path goes through the roots guard and is opened
//! here; the query reads those open files and nothing else (`offload_query`).

use std::sync::Arc;
use std::time::Instant;

use offload_query::{JqInput, Query};
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ProgressNotificationParam};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use tokio_util::sync::CancellationToken;

use super::prelude::*;
use crate::query;
use crate::server::answer;
use crate::server::store::stored_answer;
use crate::store::{Column, Destination, Origin, Summary, WrittenRequest};
use crate::{Engine, ErrorCode, ToolError};
use offload_formats::Format;
use offload_formats::files::Kind;
use offload_formats::output::{self, Payload};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// The table `data` (a sheet: book.xlsx#Sheet1).
    pub path: String,
    /// One SELECT.
    #[serde(default)]
    pub sql: Option<String>,
    /// Instead of sql, for JSON, JSONL, YAML.
    #[serde(default)]
    pub jq: Option<String>,
    /// More tables: {"name": "path"}.
    #[serde(default)]
    pub tables: Option<std::collections::BTreeMap<String, String>>,
    /// Rows answered (100).
    #[serde(default)]
    pub limit: Option<u64>,
    /// Stores the whole result, described so.
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub storage_path: Option<String>,
    #[serde(default)]
    pub filename: Option<String>,
    /// csv (default), parquet, json, jsonl, ...
    #[serde(default)]
    pub file_format: Option<String>,
}

pub struct QueryFile;

impl OwnTool for QueryFile {
    type Params = Params;
    const NAME: &'static str = "query_file";
    const TITLE: &'static str = "Query a data file";
    const DESCRIPTION: &'static str = "SQL (or jq) over a CSV, TSV, JSON, JSONL or Parquet file or a sheet, without reading \
         it; only the result comes back. Example: {\"path\": \
         \"sales.csv\", \"sql\": \"SELECT region, SUM(amount) FROM data GROUP BY region\"}";
    const HINTS: Hints = Hints::CreatesFiles;
    const OUTPUT: Option<Output> = Some(Output::of::<QueryAnswer>(
        "columns rows results row_count truncated",
    ));

    /// Storing its result writes into a root.
    fn scopes(args: Option<&JsonObject>) -> Vec<Scope> {
        let stores = args.is_some_and(|a| {
            ["description", "storage_path", "filename", "file_format"]
                .iter()
                .any(|k| a.get(*k).is_some_and(|v| !v.is_null()))
        });
        if stores {
            vec![Scope::Read, Scope::Store]
        } else {
            vec![Scope::Read]
        }
    }

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        query_file(engine, p, ctx).await
    }
}

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

/// The largest JSON or YAML document jq reads whole.
const JQ_DOCUMENT: u64 = 512 << 20;

pub async fn query_file(
    engine: &Arc<Engine>,
    p: Params,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    let budget = engine.limits().inline_bytes;
    query_file_within(engine, p, ctx, budget).await
}

/// `query_file` answering up to `budget` bytes of rows (a script's query answers into the
/// script, not into a model's context).
pub async fn query_file_within(
    engine: &Arc<Engine>,
    p: Params,
    ctx: &RequestContext<RoleServer>,
    budget: u64,
) -> CallToolResult {
    let started = Instant::now();
    // URLs (the file, or tables) are fetched first and queried as their downloads.
    let mut p = p;
    match localize(engine, &mut p).await {
        Ok(()) => {}
        Err(e) => return answer::error(&e),
    }
    let progress = progress_sender(ctx);
    let cancel = ctx.ct.clone();
    let engine2 = engine.clone();
    let job = tokio::task::spawn_blocking(move || {
        run(&engine2, p, &cancel, progress, started, budget as usize)
    });
    let result = job.await;
    if let Ok(Err(e)) = &result
        && e.code == ErrorCode::Cancelled
    {
        tracing::info!(
            "query_file cancelled: the query stopped after {} ms",
            started.elapsed().as_millis()
        );
    }
    match result {
        Ok(Ok(result)) => result,
        Ok(Err(e)) => answer::error(&e),
        Err(e) => answer::error(&ToolError::new(
            ErrorCode::Internal,
            format!("the query task failed: {e}"),
        )),
    }
}

/// Points `path` and `tables` that are URLs at their downloads.
async fn localize(engine: &Arc<Engine>, p: &mut Params) -> Result<(), ToolError> {
    p.path = crate::server::downloads::localize(engine, &p.path).await?;
    for path in p.tables.iter_mut().flat_map(|t| t.values_mut()) {
        *path = crate::server::downloads::localize(engine, path).await?;
    }
    Ok(())
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
    p: Params,
    cancel: &CancellationToken,
    mut progress: Box<dyn FnMut(u64) + Send>,
    started: Instant,
    budget: usize,
) -> Result<CallToolResult, ToolError> {
    let invalid = |m: &str| ToolError::new(ErrorCode::InvalidArguments, m.to_owned());
    let limits = engine.limits();
    let limit = p.limit.unwrap_or(100).min(10_000) as usize;
    let storing = p.description.is_some()
        || p.storage_path.is_some()
        || p.filename.is_some()
        || p.file_format.is_some();
    let arguments = serde_json::to_value(QueryArguments::of(&p)).unwrap_or(Value::Null);
    let guarded = |path: &str| Ok(engine.roots().open(path)?);

    match (&p.sql, &p.jq) {
        (Some(_), Some(_)) => Err(invalid("give sql or jq, not both")),
        (None, None) => Err(invalid(
            "give sql (e.g. \"SELECT region, SUM(amount) FROM data GROUP BY region\") or jq",
        )),
        (None, Some(program)) => {
            if p.tables.is_some() {
                return Err(invalid("tables go with sql; jq reads the one file in path"));
            }
            let (file, probe_kind, label) = query::probe(&guarded, &p.path)?;
            let input = match probe_kind {
                Kind::Json => JqInput::Json(Arc::new(file)),
                Kind::Jsonl => JqInput::Jsonl(Arc::new(file)),
                Kind::Yaml => JqInput::Yaml(Arc::new(file)),
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
                .map_err(query::query_error)?;
            if storing {
                if out.truncated {
                    return Err(ToolError::new(
                        ErrorCode::FileTooLarge,
                        "the jq results are larger than limits.maxUpstreamAnswerBytes; narrow the program",
                    ));
                }
                let count = out.results.len();
                let payload = Payload::Json(Value::Array(out.results));
                let req = written_request(&p, &arguments, Format::Json, started);
                let stored = engine
                    .store
                    .store_written(&engine.roots(), req, |format, w| {
                        let rendered = output::render(&payload, format, w)?;
                        Ok(match rendered.table {
                            Some(t) => Summary::table(t.rows, columns_of(&t.columns)),
                            None => Summary::list(count),
                        })
                    })?;
                return Ok(stored_answer(&stored, None));
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
            let bounds = query::bounds(engine, limit, budget);
            let (sources, to_copy) =
                query::sources(engine, &guarded, &p.path, p.tables.iter().flatten())?;
            let query = Query {
                sources,
                sql,
                limits: &bounds.limits,
                cancel,
                progress: &mut progress,
            };
            if storing {
                let req = written_request(&p, &arguments, Format::Csv, started);
                let stored = query::store_sql(engine, query, req)?;
                to_copy.answered(engine);
                Ok(stored_answer(&stored, None))
            } else {
                let answered = engine.queries.answer(query).map_err(query::query_error)?;
                to_copy.answered(engine);
                Ok(answered).map(|a| {
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
            }
        }
    }
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
    fn of(p: &'a Params) -> Self {
        Self {
            path: &p.path,
            sql: p.sql.as_deref(),
            jq: p.jq.as_deref(),
            tables: p.tables.as_ref(),
        }
    }
}

fn written_request<'a>(
    p: &'a Params,
    arguments: &'a Value,
    default_format: Format,
    started: Instant,
) -> WrittenRequest<'a> {
    WrittenRequest {
        origin: Origin {
            server: "offload",
            tool: QueryFile::NAME,
            arguments,
            description: p.description.clone(),
            duration: started.elapsed(),
        },
        destination: Destination {
            storage_path: p.storage_path.as_deref(),
            filename: p.filename.as_deref(),
            format: p.file_format.as_deref(),
        },
        default_format,
    }
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
                offload_formats::clip::clip(&s.replace('\n', "\\n"), 200).into_owned()
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
