//! The Query tab: SQL over the previewed file (the table `data`), and its result saved as a
//! stored response.

use std::path::PathBuf;

use serde::Serialize;

use offload_query::Query;
use tokio_util::sync::CancellationToken;

use super::{cell, open};
use crate::control::ControlError;
use crate::{Engine, ToolError};
use offload_formats::files::Source;

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
    let answer = over_file(engine, path, sql, (limit.min(10_000), 8 << 20), |query| {
        engine
            .queries
            .answer(query)
            .map_err(crate::query::query_error)
    })?;
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
    let arguments = serde_json::json!({"path": path, "sql": sql});
    let stored = over_file(engine, path, sql, (0, 0), |query| {
        crate::query::store_sql(
            engine,
            query,
            crate::store::WrittenRequest {
                origin: crate::store::Origin {
                    server: "offload",
                    tool: "query_file",
                    arguments: &arguments,
                    description: description.or_else(|| Some(format!("query of {path}"))),
                    duration: started.elapsed(),
                },
                destination: crate::store::Destination::default(),
                default_format: offload_formats::Format::Csv,
            },
        )
    })?;
    Ok(stored.record.path)
}

/// `work` given the query of `sql` over `path`, within `(rows, bytes)` of answer (0: the whole
/// result); the file's columnar copy made afterwards when it has none.
fn over_file<T>(
    engine: &Engine,
    path: &str,
    sql: &str,
    (rows, bytes): (usize, usize),
    work: impl FnOnce(Query<'_>) -> Result<T, ToolError>,
) -> Result<T, ControlError> {
    let bounds = crate::query::bounds(engine, rows, bytes);
    let (sources, to_copy) =
        crate::query::sources(engine, &|p: &str| user_file(engine, p), path, [])
            .map_err(tool_error)?;
    let done = work(Query {
        sources,
        sql,
        limits: &bounds.limits,
        cancel: &CancellationToken::new(),
        progress: &mut |_| {},
    })
    .map_err(tool_error)?;
    to_copy.answered(engine);
    Ok(done)
}
