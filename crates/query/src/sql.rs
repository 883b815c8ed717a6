//! SQL with DataFusion: a session per query over the sources it names, read-only, bounded.

use std::io::Write;
use std::sync::{Arc, OnceLock};
use std::time::Duration;

use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::TableReference;
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::memory_pool::FairSpillPool;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::physical_plan::{ExecutionPlan, execute_stream};
use datafusion::prelude::{
    CsvReadOptions, JsonReadOptions, ParquetReadOptions, SQLOptions, SessionConfig, SessionContext,
};
use datafusion::sql::parser::{DFParser, Statement as DfStatement};
use datafusion::sql::sqlparser::ast::Statement;
use futures::StreamExt;
use tokio_util::sync::CancellationToken;

use crate::csv_parts::{self, Cuts, Part};
use crate::error::QueryError;
use crate::json_lines;
use crate::nested_loop::NestedLoopsInMemory;
use crate::opened::{OnlyOpened, OpenedFiles};
use crate::render::{self, OutFormat, RowsBuilder, Sink, Written};
use crate::yielding::CancelBetweenBatches;
use crate::{Answer, Data, Format, Limits, Query, Source, rows_batch};

/// Rows read to decide a CSV column's type before the whole file is used (when a later value
/// does not fit, the query runs again with types decided over the whole file).
const INFER_ROWS: usize = 20_000;

/// A CSV file this big or bigger is read by several threads when the question allows it
/// (`csv_parts`); smaller ones parse in less time than the threads save.
const SPREAD_FROM: u64 = 16 << 20;

/// Runs queries on a runtime of its own (made on first use).
#[derive(Debug)]
pub struct Querier {
    runtime: OnceLock<tokio::runtime::Runtime>,
    /// See [`SPREAD_FROM`] (tests lower it).
    spread_from: u64,
}

impl Default for Querier {
    fn default() -> Self {
        Self {
            runtime: OnceLock::new(),
            spread_from: SPREAD_FROM,
        }
    }
}

/// A source with its file shared, so a query can be planned again (see [`INFER_ROWS`]).
struct Table {
    name: String,
    data: TableData,
    label: String,
}

enum TableData {
    File(Arc<dyn crate::Blob>, Format),
    Batch(RecordBatch),
}

impl Querier {
    pub fn new() -> Self {
        Self::default()
    }

    /// CSV files from `bytes` on are read in parts (tests use small files).
    #[cfg(test)]
    pub(crate) fn spreading_from(bytes: u64) -> Self {
        Self {
            runtime: OnceLock::new(),
            spread_from: bytes,
        }
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime.get_or_init(|| {
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(cores())
                .thread_name("offload-query")
                .enable_all()
                .build()
                .expect("a tokio runtime for queries")
        })
    }

    /// Runs the query and answers with its first rows (blocking).
    pub fn answer(&self, query: Query<'_>) -> Result<Answer, QueryError> {
        let Query {
            sources,
            sql,
            limits,
            cancel,
            progress,
        } = query;
        let tables = tables(sources, limits)?;
        self.runtime().block_on(async {
            let make = |schema: SchemaRef| RowsBuilder::new(&schema, limits.rows, limits.budget);
            let mut progress = Progress::new(progress);
            let mut plan = Plan {
                infer_rows: INFER_ROWS,
                partitions: cores(),
            };
            loop {
                let ctx = self.session(&tables, sql, limits, plan, cancel).await?;
                match guarded(execute(&ctx, sql, cancel, &mut progress, make)).await {
                    // A later CSV value does not fit the types of the first rows: type over
                    // the whole file.
                    Err(QueryError::Source(m))
                        if is_csv_type_error(&m)
                            && has_delimited(&tables)
                            && plan.infer_rows != usize::MAX =>
                    {
                        plan.infer_rows = usize::MAX;
                    }
                    // DataFusion failed inside (a panic in a parallel plan): once more on one
                    // partition, the plan with the fewest moving parts. (The one seen so far,
                    // the nested-loop join's spill, is kept from happening: see `nested_loop`.)
                    Err(QueryError::Internal(m)) if plan.partitions > 1 => {
                        tracing::warn!(
                            "query failed inside DataFusion ({m}); running it on one partition"
                        );
                        plan.partitions = 1;
                    }
                    other => return other,
                }
            }
        })
    }

    /// Runs the query and writes its whole result to `out` as `format` (blocking). CSV types
    /// are decided over the whole file first: rows written cannot be taken back.
    pub fn write(
        &self,
        query: Query<'_>,
        format: OutFormat,
        out: &mut (dyn Write + Send),
    ) -> Result<Written, QueryError> {
        let Query {
            sources,
            sql,
            limits,
            cancel,
            progress,
        } = query;
        self.write_with(sources, sql, limits, cancel, progress, move |schema| {
            render::BatchWriter::new(format, schema, out)
        })
    }

    /// Writes every row of `source` to `out` as Parquet made to be read back fast (LZ4): the
    /// columnar copy later queries of the same file read instead of parsing it again. Its
    /// types are decided over the whole file (blocking).
    pub fn copy(
        &self,
        source: Source,
        limits: &Limits,
        cancel: &CancellationToken,
        out: &mut (dyn Write + Send),
    ) -> Result<Written, QueryError> {
        let table = TableReference::bare(source.name.clone()).to_quoted_string();
        let sql = format!("SELECT * FROM {table}");
        self.write_with(
            vec![source],
            &sql,
            limits,
            cancel,
            &mut |_| {},
            move |schema| render::BatchWriter::parquet(schema, out, render::copy_properties()),
        )
    }

    fn write_with<'w>(
        &self,
        sources: Vec<Source>,
        sql: &str,
        limits: &Limits,
        cancel: &CancellationToken,
        progress: &mut (dyn FnMut(u64) + Send),
        make: impl FnOnce(SchemaRef) -> Result<render::BatchWriter<'w>, QueryError>,
    ) -> Result<Written, QueryError> {
        let tables = tables(sources, limits)?;
        self.runtime().block_on(async {
            let plan = Plan {
                infer_rows: usize::MAX,
                partitions: cores(),
            };
            let ctx = self.session(&tables, sql, limits, plan, cancel).await?;
            guarded(execute(
                &ctx,
                sql,
                cancel,
                &mut Progress::new(progress),
                make,
            ))
            .await
        })
    }

    /// A session for `sql` over `tables`, big CSV tables read in parts when it allows.
    async fn session(
        &self,
        tables: &[Table],
        sql: &str,
        limits: &Limits,
        plan: Plan,
        cancel: &CancellationToken,
    ) -> Result<SessionContext, QueryError> {
        let ctx = context(tables, limits, plan, cancel, &Spread::new()).await?;
        self.spread(ctx, tables, sql, limits, plan, cancel).await
    }

    /// `ctx` again with its big CSV tables read in parts, one a partition, when the answer to
    /// `sql` does not depend on the order of their rows (`csv_parts`); `ctx` as it is
    /// otherwise, or when `sql` does not plan (running it says why).
    async fn spread(
        &self,
        ctx: SessionContext,
        tables: &[Table],
        sql: &str,
        limits: &Limits,
        plan: Plan,
        cancel: &CancellationToken,
    ) -> Result<SessionContext, QueryError> {
        if plan.partitions < 2 {
            return Ok(ctx);
        }
        let big: Vec<(&Table, &Arc<dyn crate::Blob>, u8)> = tables
            .iter()
            .filter_map(|t| match &t.data {
                TableData::File(file, Format::Delimited { delimiter })
                    if file.is_local() && file.size().is_ok_and(|s| s >= self.spread_from) =>
                {
                    Some((t, file, *delimiter))
                }
                _ => None,
            })
            .collect();
        if big.is_empty() || check_read_only(sql).is_err() {
            return Ok(ctx);
        }
        let Ok(df) = ctx.sql_with_options(sql, read_only()).await else {
            return Ok(ctx);
        };
        if !csv_parts::order_free(df.logical_plan()) {
            return Ok(ctx);
        }
        let mut spread = Spread::new();
        for (table, file, delimiter) in big {
            let Ok(provider) = ctx.table_provider(table.name.as_str()).await else {
                continue;
            };
            let (file, n) = (file.clone(), plan.partitions);
            let cuts = tokio::task::spawn_blocking(move || csv_parts::cut(&*file, delimiter, n))
                .await
                .map_err(|e| QueryError::Internal(e.to_string()))?
                .map_err(|e| QueryError::Source(format!("{}: {e}", table.label)))?;
            if let Some(cuts) = cuts {
                spread.insert(table.name.clone(), (cuts, provider.schema()));
            }
        }
        if spread.is_empty() {
            return Ok(ctx);
        }
        context(tables, limits, plan, cancel, &spread).await
    }
}

/// Tables read in parts: where each is cut, and its columns (as typed when whole).
type Spread = std::collections::HashMap<String, (Cuts, SchemaRef)>;

fn read_only() -> SQLOptions {
    SQLOptions::new()
        .with_allow_ddl(false)
        .with_allow_dml(false)
        .with_allow_statements(false)
}

impl Drop for Querier {
    fn drop(&mut self) {
        // An engine may be dropped on an async thread, where a runtime cannot wait for its
        // workers; queries still running are abandoned (their callers are gone).
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// How a session plans: rows used to type CSV columns, partitions run in parallel.
#[derive(Debug, Clone, Copy)]
struct Plan {
    infer_rows: usize,
    partitions: usize,
}

/// `work`, with a panic inside DataFusion (its parallel operators re-raise their tasks'
/// panics) turned into an error instead of taking the caller down.
async fn guarded<T>(
    work: impl std::future::Future<Output = Result<T, QueryError>>,
) -> Result<T, QueryError> {
    use futures::FutureExt;
    match std::panic::AssertUnwindSafe(work).catch_unwind().await {
        Ok(result) => result,
        Err(panic) => Err(QueryError::Internal(panic_message(panic))),
    }
}

fn cores() -> usize {
    std::thread::available_parallelism().map_or(2, |n| n.get())
}

/// The sources as tables DataFusion reads: JSON tables as JSON lines (see [`json_lines`]),
/// rows as a batch.
fn tables(sources: Vec<Source>, limits: &Limits) -> Result<Vec<Table>, QueryError> {
    sources
        .into_iter()
        .map(|s| {
            let data = match s.data {
                Data::File {
                    file,
                    format: Format::Json,
                } => TableData::File(
                    json_lines::to_lines(&file, &s.label, limits.spill_dir.as_deref())?,
                    Format::Json,
                ),
                Data::File { file, format } => TableData::File(file, format),
                Data::Rows(rows) => TableData::Batch(rows_batch(&rows).map_err(|e| {
                    QueryError::Source(format!("{} cannot be read as a table: {e}", s.label))
                })?),
            };
            Ok(Table {
                name: s.name,
                data,
                label: s.label,
            })
        })
        .collect()
}

fn has_delimited(tables: &[Table]) -> bool {
    tables
        .iter()
        .any(|t| matches!(t.data, TableData::File(_, Format::Delimited { .. })))
}

fn is_csv_type_error(message: &str) -> bool {
    message.contains("Error while parsing value") || message.contains("Parser error")
}

/// A session that sees the tables and nothing else.
async fn context(
    tables: &[Table],
    limits: &Limits,
    plan: Plan,
    cancel: &CancellationToken,
    spread: &Spread,
) -> Result<SessionContext, QueryError> {
    let infer_rows = plan.infer_rows;
    let mut files = OpenedFiles::default();
    let mut urls = Vec::new();
    let mut batches = Vec::new();
    let mut parts = Vec::new();
    for (i, t) in tables.iter().enumerate() {
        match &t.data {
            TableData::Batch(batch) => batches.push((t.name.clone(), batch.clone())),
            TableData::File(file, Format::Delimited { delimiter })
                if spread.contains_key(&t.name) =>
            {
                let (cuts, schema) = &spread[&t.name];
                let mut part_urls = Vec::new();
                for (k, part) in Part::all(file, cuts).into_iter().enumerate() {
                    part_urls.push(files.add(&format!("t{i}.p{k}.csv"), Arc::new(part))?);
                }
                parts.push((t, *delimiter, schema.clone(), part_urls));
            }
            TableData::File(file, format) => {
                let ext = match format {
                    Format::Delimited { .. } => "csv",
                    Format::Json => "json",
                    Format::Jsonl => "jsonl",
                    Format::Parquet => "parquet",
                };
                let url = files.add(&format!("t{i}.{ext}"), file.clone())?;
                urls.push((t, file, format, url));
            }
        }
    }

    let mut config = SessionConfig::new()
        .with_target_partitions(plan.partitions)
        .with_information_schema(false);
    let options = config.options_mut();
    // Column names are matched as written (`Region` is not `region`), as the schema shows them.
    options.sql_parser.enable_ident_normalization = false;
    options.sql_parser.collect_spans = true;
    options.catalog.has_header = true;
    // A sort keeps this much back for merging what it spilled; at most an eighth of the pool,
    // so a small pool still spills and merges instead of failing.
    options.execution.sort_spill_reservation_bytes = options
        .execution
        .sort_spill_reservation_bytes
        .min(limits.memory / 8);

    let disk = match &limits.spill_dir {
        Some(dir) => DiskManagerMode::Directories(vec![dir.clone()]),
        None => DiskManagerMode::Disabled,
    };
    let runtime = RuntimeEnvBuilder::new()
        .with_object_store_registry(Arc::new(OnlyOpened(Arc::new(files))))
        .with_memory_pool(Arc::new(FairSpillPool::new(limits.memory)))
        .with_disk_manager_builder(DiskManagerBuilder::default().with_mode(disk))
        .build_arc()
        .map_err(|e| QueryError::Query(e.to_string()))?;
    let nested_loops = NestedLoopsInMemory(runtime.clone());
    let state = SessionStateBuilder::new()
        .with_config(config)
        .with_runtime_env(runtime)
        .with_default_features()
        .with_physical_optimizer_rule(Arc::new(nested_loops))
        .with_physical_optimizer_rule(Arc::new(CancelBetweenBatches(cancel.clone())))
        .build();
    let ctx = SessionContext::new_with_state(state);

    for (name, batch) in batches {
        ctx.register_batch(TableReference::bare(name), batch)
            .map_err(|e| QueryError::Source(e.to_string()))?;
    }
    for (t, delimiter, schema, urls) in parts {
        let read = match ctx.read_csv(urls, csv_options(delimiter, &schema)).await {
            Ok(df) => ctx.register_table(TableReference::bare(t.name.clone()), df.into_view()),
            Err(e) => Err(e),
        };
        read.map_err(|e| {
            QueryError::Source(format!(
                "{} cannot be read as CSV: {}",
                t.label,
                e.find_root()
            ))
        })?;
    }
    for (t, file, format, url) in urls {
        let name = TableReference::bare(t.name.clone());
        let registered = match format {
            Format::Delimited { delimiter } => {
                match csv_schema(file.clone(), *delimiter, infer_rows).await {
                    Ok(schema) => {
                        ctx.register_csv(name, &url, csv_options(*delimiter, &schema))
                            .await
                    }
                    Err(e) => Err(e),
                }
            }
            // A JSON table was rewritten as JSON lines by `tables`.
            Format::Json | Format::Jsonl => {
                let ext = if *format == Format::Json {
                    ".json"
                } else {
                    ".jsonl"
                };
                ctx.register_json(
                    name,
                    &url,
                    JsonReadOptions::default()
                        .file_extension(ext)
                        .schema_infer_max_records(infer_rows),
                )
                .await
            }
            _ => {
                ctx.register_parquet(
                    name,
                    &url,
                    ParquetReadOptions::default().file_extension(".parquet"),
                )
                .await
            }
        };
        registered.map_err(|e| {
            QueryError::Source(format!(
                "{} cannot be read as {}: {}",
                t.label,
                format_name(format),
                e.find_root()
            ))
        })?;
    }
    Ok(ctx)
}

/// How a CSV table is read, whole or in parts: a header row, quoted values that may hold line
/// breaks, the columns typed by [`csv_schema`].
fn csv_options(delimiter: u8, schema: &Schema) -> CsvReadOptions<'_> {
    CsvReadOptions::new()
        .has_header(true)
        .delimiter(delimiter)
        .file_extension(".csv")
        .newlines_in_values(true)
        .schema(schema)
}

/// The columns of a CSV file and their types, from its header and first `rows` records (every
/// record when `usize::MAX`), read in order on a blocking thread. DataFusion's own inference
/// cuts the file at line ends first and got quoted line breaks wrong where its pieces met (a
/// wide CSV with multi-line values was refused as "unequal lengths"); arrow's reader follows the
/// quotes, and its types are those DataFusion would merge (nulls ignored, integers and floats
/// as floats, any other mix as text).
async fn csv_schema(
    file: Arc<dyn crate::Blob>,
    delimiter: u8,
    rows: usize,
) -> datafusion::error::Result<Schema> {
    tokio::task::spawn_blocking(move || {
        let reader = std::io::BufReader::with_capacity(1 << 20, crate::blob::BlobReader::new(file));
        datafusion::arrow::csv::reader::Format::default()
            .with_header(true)
            .with_delimiter(delimiter)
            .infer_schema(reader, Some(rows))
            .map(|(schema, _)| schema)
    })
    .await
    .map_err(|e| datafusion::error::DataFusionError::External(Box::new(e)))?
    .map_err(Into::into)
}

fn format_name(format: &Format) -> &'static str {
    match format {
        Format::Delimited { delimiter: b'\t' } => "TSV",
        Format::Delimited { .. } => "CSV",
        Format::Json => "a JSON array of objects",
        Format::Jsonl => "JSON lines",
        Format::Parquet => "Parquet",
    }
}

/// Only one `SELECT` (or `WITH ... SELECT`): no DDL, DML, `COPY`, `EXPLAIN`, `SET`, ... .
fn check_read_only(sql: &str) -> Result<(), QueryError> {
    let statements =
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
    match &statements[0] {
        DfStatement::Statement(s) if matches!(s.as_ref(), Statement::Query(_)) => Ok(()),
        _ => Err(QueryError::Query(
            "only SELECT queries (optionally with WITH) are allowed: the files are read-only"
                .into(),
        )),
    }
}

/// Plans and runs `sql`, feeding each batch to the sink made from the result's schema;
/// reports the rows scanned so far every half second; stops when `cancel` fires.
async fn execute<S: Sink>(
    ctx: &SessionContext,
    sql: &str,
    cancel: &CancellationToken,
    progress: &mut Progress<'_>,
    make: impl FnOnce(SchemaRef) -> Result<S, QueryError>,
) -> Result<S::Out, QueryError> {
    check_read_only(sql)?;
    progress.new_attempt();
    let fail = |e| QueryError::from_datafusion(e, sql);
    let df = ctx.sql_with_options(sql, read_only()).await.map_err(fail)?;
    let plan = df.create_physical_plan().await.map_err(fail)?;
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

/// A query's progress over its attempts (a query may be planned again, see [`Querier::answer`]):
/// the rows its attempts have read, reported only when it grew. MCP wants each report above
/// the last, and clients take a report as a sign of life (it restarts their timeout), so a
/// second attempt counting from 0 again adds to what was reported rather than going quiet
/// until it passes it.
struct Progress<'a> {
    report: &'a mut (dyn FnMut(u64) + Send),
    /// Rows reported by the attempts before this one.
    before: u64,
    reported: u64,
}

impl<'a> Progress<'a> {
    fn new(report: &'a mut (dyn FnMut(u64) + Send)) -> Self {
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

    /// A big CSV is read in parts only for a question whose answer ignores row order, and
    /// only when its quotes say where records end.
    #[test]
    fn big_csv_tables_are_read_in_parts_when_the_question_allows() {
        let dir = tempfile::tempdir().unwrap();
        let mut text = String::from("id,note,amount\n");
        for i in 0..20_000 {
            text.push_str(&format!("{i},\"a\nnote\",{}\n", i % 7));
        }
        let path = dir.path().join("big.csv");
        std::fs::write(&path, &text).unwrap();
        std::fs::write(
            dir.path().join("odd.csv"),
            format!("{text}5\" screen,x,1\n"),
        )
        .unwrap();
        let source = |name: &str| Source {
            name: "data".into(),
            label: name.into(),
            data: Data::File {
                file: Arc::new(std::fs::File::open(dir.path().join(name)).unwrap()),
                format: Format::Delimited { delimiter: b',' },
            },
        };
        let limits = Limits {
            rows: 10,
            budget: 1 << 16,
            memory: 256 << 20,
            spill_dir: None,
        };
        let plan = Plan {
            infer_rows: INFER_ROWS,
            partitions: 2,
        };
        let cancel = CancellationToken::new();
        let q = Querier::spreading_from(1024);
        let kind = |q: &Querier, file: &str, sql: &str| {
            let tables = tables(vec![source(file)], &limits).unwrap();
            q.runtime().block_on(async {
                let ctx = q.session(&tables, sql, &limits, plan, &cancel).await;
                ctx.unwrap()
                    .table_provider("data")
                    .await
                    .unwrap()
                    .table_type()
            })
        };
        use datafusion::datasource::TableType::{Base, View};
        let total = "SELECT amount, COUNT(*) FROM data GROUP BY amount";
        assert_eq!(kind(&q, "big.csv", total), View, "read in parts");
        let first = "SELECT * FROM data LIMIT 3";
        assert_eq!(kind(&q, "big.csv", first), Base, "file order kept");
        assert_eq!(
            kind(&q, "odd.csv", total),
            Base,
            "a quote out of place: read whole"
        );
        let small = Querier::new();
        assert_eq!(
            kind(&small, "big.csv", total),
            Base,
            "under {SPREAD_FROM} bytes: whole"
        );
    }

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
