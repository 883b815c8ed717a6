//! Running a planned query: read-only SQL only, each batch handed to a sink, progress every
//! half second, a cancellation heard at once, a panic inside DataFusion answered as an error.

use std::time::Duration;

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::physical_plan::{ExecutionPlan, execute_stream};
use datafusion::prelude::{SQLOptions, SessionContext};
use datafusion::sql::parser::{DFParser, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::Statement;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::error::QueryError;
use crate::render::Sink;

pub(crate) fn read_only() -> SQLOptions {
    SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false)
}

/// `work`, with a panic inside DataFusion (its parallel operators re-raise their tasks'
/// panics) turned into an error instead of taking the caller down.
pub(crate) async fn guarded<T>(
    work: impl std::future::Future<Output = Result<T, QueryError>>,
) -> Result<T, QueryError> {
    use futures::FutureExt;
    match std::panic::AssertUnwindSafe(work).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => Err(QueryError::Internal(panic_message(panic))),
    }
}

/// Only one `SELECT` (or `WITH ... SELECT`): no DDL, DML, `COPY`, `EXPLAIN`, `SET`, ... .
pub(crate) fn check_read_only(sql: &str) -> Result<(), QueryError> {
    read_only_statement(sql).map(|_| ())
}

/// `sql` parsed, when it is one `SELECT` (see [`check_read_only`]).
fn read_only_statement(sql: &str) -> Result<DfStatement, QueryError> {
    let mut statements =
        DFParser::parse_sql(sql).map_err(|e| QueryError::Query(format!("SQL syntax: {e}")))?;
    match statements.len() {
        0 => return Err(QueryError::Query("the query is empty".into())),
        1 => {}
        n => {
            return Err(QueryError::Query(format!(
                "one statement at a time ({n} were given)"
            )));
        }
    }
    match statements.pop_front() {
        Some(DfStatement::Statement(s)) if matches!(s.as_ref(), Statement::Query(_)) => {
            Ok(DfStatement::Statement(s))
        }
        _ => Err(QueryError::Query(
            "only SELECT queries (optionally with WITH) are allowed: the files are read-only"
                .into(),
        )),
    }
}

/// Plans and runs `sql`, feeding each batch to the sink made from the result's schema;
/// reports the rows scanned so far every half second; stops when `cancel` fires.
pub(crate) async fn execute<S: Sink>(
    ctx: &SessionContext,
    sql: &str,
    cancel: &CancellationToken,
    progress: &mut Progress<'_>,
    make: impl FnOnce(SchemaRef) -> Result<S, QueryError>,
) -> Result<S::Out, QueryError> {
    let statement = read_only_statement(sql)?;
    progress.new_attempt();
    let fail = |e| QueryError::from_datafusion(e, sql);
    // Parsed once, planned on one copy of the session's state.
    let state = ctx.state();
    let logical = state.statement_to_plan(statement).await.map_err(fail)?;
    read_only().verify_plan(&logical).map_err(fail)?;
    let plan = state.create_physical_plan(&logical).await.map_err(fail)?;
    let mut sink = make(plan.schema())?;
    let mut stream = execute_stream(plan.clone(), ctx.task_ctx()).map_err(fail)?;
    // The batches are pulled on a task of their own: an operator can compute for minutes
    // inside one poll (a nested-loop join whose filter matches nothing), and the caller must
    // hear of a cancellation at once. The task is aborted when this function returns.
    let (tx, mut rx) = tokio::sync::mpsc::channel(2);
    let pull = Abort(tokio::spawn(async move {
        while let Some(batch) = stream.next().await {
            if tx.send(batch).await.is_err() {
                break;
            }
        }
    }));
    let mut ticker = tokio::time::interval(Duration::from_millis(500));
    ticker.tick().await;
    loop {
        tokio::select! {
            biased;
            () = cancel.cancelled() => return Err(QueryError::Cancelled),
            _ = ticker.tick() => progress.scanned(scanned(plan.as_ref())),
            next = rx.recv() => match next {
                Some(Ok(batch)) => sink.push(&batch)?,
                Some(Err(_)) if cancel.is_cancelled() => return Err(QueryError::Cancelled),
                Some(Err(e)) => return Err(fail(e)),
                // The stream ended, or its task panicked (then the result is not whole).
                None => return match pull.finish().await {
                    Some(panic) => Err(QueryError::Internal(panic)),
                    None => sink.finish(),
                },
            }
        }
    }
}

/// A query's progress over its attempts (a query may be planned again, see `Querier::answer`):
/// the rows its attempts have read, reported only when it grew. MCP wants each report above
/// the last, and clients take a report as a sign of life (it restarts their timeout), so a
/// second attempt counting from 0 again adds to what was reported rather than going quiet
/// until it passes it.
pub(crate) struct Progress<'a> {
    report: &'a mut (dyn FnMut(u64) + Send),
    /// Rows reported by the attempts before this one.
    before: u64,
    reported: u64,
}

impl<'a> Progress<'a> {
    pub fn new(report: &'a mut (dyn FnMut(u64) + Send)) -> Self {
        Self {
            report,
            before: 0,
            reported: 0,
        }
    }

    fn new_attempt(&mut self) {
        self.before = self.reported;
    }

    /// This attempt has read `rows` rows.
    fn scanned(&mut self, rows: u64) {
        let total = self.before + rows;
        if total > self.reported {
            self.reported = total;
            (self.report)(total);
        }
    }
}

/// A task aborted when dropped.
struct Abort(tokio::task::JoinHandle<()>);

impl Abort {
    /// Waits for the task; its panic message, if it panicked.
    async fn finish(mut self) -> Option<String> {
        match (&mut self.0).await {
            Ok(()) => None,
            Err(e) if e.is_panic() => Some(panic_message(e.into_panic())),
            Err(e) => Some(e.to_string()),
        }
    }
}

impl Drop for Abort {
    fn drop(&mut self) {
        self.0.abort();
    }
}

fn panic_message(panic: Box<dyn std::any::Any + Send>) -> String {
    panic
        .downcast_ref::<&str>()
        .map(|s| (*s).to_owned())
        .or_else(|| panic.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic".to_owned())
}

/// Rows the plan's scans have produced so far.
fn scanned(plan: &dyn ExecutionPlan) -> u64 {
    let children = plan.children();
    if children.is_empty() {
        plan.metrics().and_then(|m| m.output_rows()).unwrap_or(0) as u64
    } else {
        children.iter().map(|c| scanned(c.as_ref())).sum()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A query planned again after a failure starts counting its rows from 0; what the client
    /// hears still grows at every report, and never goes quiet while the second attempt reads.
    #[test]
    fn progress_grows_across_attempts() {
        let mut heard = Vec::new();
        let mut report = |n| heard.push(n);
        let mut progress = Progress::new(&mut report);
        progress.new_attempt();
        for rows in [0, 6000, 6000, 9000] {
            progress.scanned(rows);
        }
        progress.new_attempt();
        for rows in [0, 3000, 3000, 12_000] {
            progress.scanned(rows);
        }
        assert_eq!(heard, [6000, 9000, 12_000, 21_000]);
    }
}
