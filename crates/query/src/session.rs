//! A DataFusion session over a query's sources and nothing else: the sources as tables
//! (JSON rewritten as JSON lines, rows as a batch), how each file is read (CSV typed by its
//! quotes-following reader, big CSV tables in parts when [`Spread`] says), the memory pool,
//! spilling and the optimizer rules every query runs under.

use std::sync::Arc;

use datafusion::arrow::datatypes::{Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::TableReference;
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::memory_pool::FairSpillPool;
use datafusion::execution::runtime_env::RuntimeEnvBuilder;
use datafusion::execution::session_state::SessionStateBuilder;
use datafusion::prelude::{
    CsvReadOptions, JsonReadOptions, ParquetReadOptions, SessionConfig, SessionContext,
};
use tokio_util::sync::CancellationToken;

use crate::csv_parts::{Cuts, Part};
use crate::error::QueryError;
use crate::few_groups::FewGroupsFirst;
use crate::json_lines;
use crate::nested_loop::NestedLoopsInMemory;
use crate::opened::{OnlyOpened, OpenedFiles};
use crate::spill::SpillOnDemand;
use crate::yielding::CancelBetweenBatches;
use crate::{Data, Format, Limits, Source, rows_batch};

/// A source with its file shared, so a query can be planned again (see `sql::INFER_ROWS`).
pub(crate) struct Table {
    pub name: String,
    pub data: TableData,
    pub label: String,
}

pub(crate) enum TableData {
    File(Arc<dyn crate::Blob>, Format),
    Batch(RecordBatch),
}

/// How a session plans: rows used to type CSV columns, partitions run in parallel.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Plan {
    pub infer_rows: usize,
    pub partitions: usize,
}

/// Tables read in parts: where each is cut, and its columns (as typed when whole).
pub(crate) type Spread = std::collections::HashMap<String, (Cuts, SchemaRef)>;

/// The sources as tables DataFusion reads: JSON tables as JSON lines (see [`json_lines`]),
/// rows as a batch.
pub(crate) fn tables(sources: Vec<Source>, limits: &Limits) -> Result<Vec<Table>, QueryError> {
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

pub(crate) fn has_delimited(tables: &[Table]) -> bool {
    tables
        .iter()
        .any(|t| matches!(t.data, TableData::File(_, Format::Delimited { .. })))
}

/// A session that sees the tables and nothing else.
pub(crate) async fn context(
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
        Some(dir) => DiskManagerMode::Custom(Arc::new(SpillOnDemand::new(dir.clone()))),
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
        .with_physical_optimizer_rule(Arc::new(FewGroupsFirst))
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
