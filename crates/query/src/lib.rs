//! Offload's query engine: SQL over files with Apache DataFusion, jq programs with jaq, and the
//! Parquet reader and writer the engine's file tools use.
//!
//! This crate knows nothing of roots or MCP: the engine resolves every path through its guard,
//! opens the files and hands them over already open ([`Source`]). A query reads those files and
//! nothing else (see [`opened`]). It is its own crate so that DataFusion, large to compile, is
//! rebuilt only when this crate changes.
//!
//! The calls are blocking (the engine runs them on a blocking thread, like its other file
//! tools); SQL executes on a runtime of its own, so a long query never occupies the threads that
//! answer other requests, and a cancelled token stops it.

mod around;
mod blob;
mod cores;
mod csv_parts;
mod error;
mod execute;
mod few_groups;
pub mod grid;
mod jq;
mod json_lines;
mod nested_loop;
mod opened;
pub mod parquet;
mod render;
mod rows;
mod session;
mod spill;
mod sql;
mod warm;
mod yielding;

use std::path::PathBuf;
use std::sync::Arc;

use tokio_util::sync::CancellationToken;

pub use blob::Blob;
pub use error::QueryError;
pub use jq::{JqAnswer, JqInput, run_jq};
pub use render::{OutFormat, Written, arrow_type_name};
pub use rows::rows_batch;
pub use sql::Querier;

/// One table of a query, by `name`.
#[derive(Debug)]
pub struct Source {
    pub name: String,
    /// The path as the caller wrote it, for messages.
    pub label: String,
    pub data: Data,
}

/// What a table is read from.
#[derive(Debug)]
pub enum Data {
    /// A file, opened by the engine through its path guard.
    File { file: Arc<dyn Blob>, format: Format },
    /// Rows already read (a sheet of a workbook, parsed by the engine): JSON objects.
    Rows(Vec<serde_json::Value>),
}

/// What a source holds.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Format {
    /// CSV or TSV with a header row; `delimiter` is `b','` or `b'\t'`.
    Delimited {
        delimiter: u8,
    },
    /// A JSON array of objects.
    Json,
    /// One JSON object per line.
    Jsonl,
    Parquet,
}

/// One SQL query: its tables, its text and bounds, and the caller's cancellation and progress
/// (rows the scans have read, reported as they rise).
pub struct Query<'a> {
    pub sources: Vec<Source>,
    pub sql: &'a str,
    pub limits: &'a Limits,
    pub cancel: &'a CancellationToken,
    pub progress: &'a mut (dyn FnMut(u64) + Send),
}

impl std::fmt::Debug for Query<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Query")
            .field("sources", &self.sources)
            .field("sql", &self.sql)
            .field("limits", &self.limits)
            .finish_non_exhaustive()
    }
}

/// The bounds of one query.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Rows in the answer.
    pub rows: usize,
    /// Bytes of the answer's rows (as JSON).
    pub budget: usize,
    /// Memory the query may hold before it spills or fails.
    pub memory: usize,
    /// Where operators spill (made on the first spill); `None` forbids spilling.
    pub spill_dir: Option<PathBuf>,
}

/// A column of an answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Column {
    pub name: String,
    /// integer, number, boolean, string, date, datetime, object, array, ... .
    #[serde(rename = "type")]
    pub kind: String,
}

/// The answer to a query: at most `limit` rows, never more than the budget.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Answer {
    pub columns: Vec<Column>,
    pub rows: Vec<Vec<serde_json::Value>>,
    /// Rows in the whole result.
    pub row_count: u64,
    /// Whether `rows` holds fewer than `row_count`.
    pub truncated: bool,
}

#[cfg(test)]
mod tests;
