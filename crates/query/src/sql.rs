//! SQL with DataFusion: the [`Querier`] and its runtime, a query planned again when its first
//! plan fails (CSV types over the whole file, one partition after a panic), and big CSV tables
//! read in parts when the answer allows. The session itself is `session`'s, the run
//! `execute`'s.

use std::io::Write;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, OnceLock};

use datafusion::arrow::datatypes::SchemaRef;
use datafusion::common::TableReference;
use datafusion::prelude::SessionContext;
use tokio_util::sync::CancellationToken;

use crate::cores::{Placement, cores};
use crate::csv_parts;
use crate::error::QueryError;
use crate::execute::{Progress, check_read_only, execute, guarded, read_only};
use crate::render::{self, OutFormat, RowsBuilder, Written};
use crate::session::{Plan, Spread, Table, TableData, context, has_delimited, tables};
use crate::{Answer, Format, Limits, Query, Source};

/// Rows read to decide a CSV column's type before the whole file is used (when a later value
/// does not fit, the query runs again with types decided over the whole file).
const INFER_ROWS: usize = 20_000;

/// A CSV file this big or bigger is read by several threads when the question allows it
/// (`csv_parts`); smaller ones parse in less time than the threads save.
const SPREAD_FROM: u64 = 16 << 20;

/// Runs queries on a runtime of its own (made on first use).
#[derive(Debug)]
pub struct Querier {
    pub(crate) runtime: OnceLock<tokio::runtime::Runtime>,
    /// Whether the warm-up question was asked (`warm`).
    pub(crate) warmed: AtomicBool,
    /// See [`SPREAD_FROM`] (tests lower it).
    spread_from: u64,
}

impl Default for Querier {
    fn default() -> Self {
        Self {
            runtime: OnceLock::new(),
            warmed: AtomicBool::new(false),
            spread_from: SPREAD_FROM,
        }
    }
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
            warmed: AtomicBool::new(false),
            spread_from: bytes,
        }
    }

    fn runtime(&self) -> &tokio::runtime::Runtime {
        self.runtime.get_or_init(|| {
            let workers = cores();
            let placement = Placement::new(workers);
            tokio::runtime::Builder::new_multi_thread()
                .worker_threads(workers)
                .thread_name("offload-query")
                .on_thread_start(move || placement.place())
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
                partitions: partitions(&tables),
            };
            loop {
                let ctx = self.session(&tables, sql, limits, plan, cancel).await?;
                let answered = guarded(execute(&ctx, sql, cancel, &mut progress, make)).await;
                // What the session holds (its tables, caches and functions) is let go of off
                // the answer's path.
                tokio::task::spawn_blocking(move || drop(ctx));
                match answered {
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
        self.write_with(query, move |schema| {
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
        let query = Query {
            sources: vec![source],
            sql: &sql,
            limits,
            cancel,
            progress: &mut |_| {},
        };
        self.write_with(query, move |schema| {
            render::BatchWriter::parquet(schema, out, render::copy_properties())
        })
    }

    /// Runs `query` and hands every row to the writer `make` gives, its types decided over
    /// the whole file.
    fn write_with<'w>(
        &self,
        query: Query<'_>,
        make: impl FnOnce(SchemaRef) -> Result<render::BatchWriter<'w>, QueryError>,
    ) -> Result<Written, QueryError> {
        let (sql, limits, cancel) = (query.sql, query.limits, query.cancel);
        let tables = tables(query.sources, limits)?;
        self.runtime().block_on(async {
            let plan = Plan {
                infer_rows: usize::MAX,
                partitions: partitions(&tables),
            };
            let ctx = self.session(&tables, sql, limits, plan, cancel).await?;
            let mut progress = Progress::new(query.progress);
            guarded(execute(&ctx, sql, cancel, &mut progress, make)).await
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

impl Drop for Querier {
    fn drop(&mut self) {
        // An engine may be dropped on an async thread, where a runtime cannot wait for its
        // workers; queries still running are abandoned (their callers are gone).
        if let Some(runtime) = self.runtime.take() {
            runtime.shutdown_background();
        }
    }
}

/// Partitions a query over `tables` runs in: one a core, twice as many when every table is
/// Parquet (a columnar copy included). Parquet is read by row groups; given one range of them
/// a core, a core often waits at the end for the other's: DataFusion's own build answered a
/// group-by of a 17 MB, 22-row-group file in 31-35 ms on 4 partitions beside 34-42 ms on 2, on
/// 2 cores (2026-11-28). CSV tables keep a part a core (`csv_parts`), where the parse is the
/// work.
fn partitions(tables: &[Table]) -> usize {
    let parquet = |t: &Table| matches!(t.data, TableData::File(_, Format::Parquet));
    if !tables.is_empty() && tables.iter().all(parquet) {
        cores() * 2
    } else {
        cores()
    }
}

fn is_csv_type_error(message: &str) -> bool {
    message.contains("Error while parsing value") || message.contains("Parser error")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::Data;

    /// Queries of Parquet alone run on twice as many partitions as cores; any other table
    /// keeps one a core.
    #[test]
    fn parquet_alone_is_read_on_more_partitions() {
        let table = |format: Format| Table {
            name: "t".into(),
            label: "t".into(),
            data: TableData::File(Arc::new(bytes::Bytes::new()), format),
        };
        let csv = || table(Format::Delimited { delimiter: b',' });
        let parquet = || table(Format::Parquet);
        assert_eq!(partitions(&[parquet(), parquet()]), cores() * 2);
        assert_eq!(partitions(&[parquet(), csv()]), cores());
        assert_eq!(partitions(&[csv()]), cores());
        assert_eq!(partitions(&[]), cores());
    }

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
}
