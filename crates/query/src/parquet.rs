//! Parquet for the engine's file tools: the schema from the footer, rows by offset, rows as
//! JSON objects one batch at a time, and JSON rows written as Parquet.

use std::cmp::Ordering;
use std::io::Write;

/// A whole file in memory, as a Parquet reader takes it.
pub use bytes::Bytes;
use datafusion::arrow::array::{Array, ArrayRef};
use datafusion::arrow::datatypes::Schema;
use datafusion::common::ScalarValue;
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::arrow::arrow_reader::ParquetRecordBatchReaderBuilder;
use datafusion::parquet::arrow::arrow_reader::statistics::StatisticsConverter;
/// What the engine implements to hand over files of its own kinds (objects in buckets).
pub use datafusion::parquet::errors::Result as ParquetResult;
use datafusion::parquet::file::metadata::ParquetMetaData;
pub use datafusion::parquet::file::reader::{ChunkReader, Length};
use serde_json::Value;

use crate::error::QueryError;
use crate::render::{self, batch_rows};
use crate::rows::rows_batch;
use crate::{Column, Written};

fn parquet_err(e: impl std::fmt::Display) -> QueryError {
    QueryError::Source(format!("not a readable Parquet file: {e}"))
}

/// A column of a Parquet file, from its footer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct ParquetColumn {
    pub name: String,
    #[serde(rename = "type")]
    pub kind: String,
    /// The Arrow type, exactly.
    pub arrow_type: String,
    pub nullable: bool,
    /// Nulls in the whole file, when every row group records it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub null_count: Option<u64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub min: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max: Option<String>,
}

/// The footer of a Parquet file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, schemars::JsonSchema)]
pub struct ParquetSchema {
    pub rows: u64,
    pub row_groups: usize,
    pub columns: Vec<ParquetColumn>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub created_by: Option<String>,
}

/// The schema and statistics of `file`, read from its footer only.
pub fn schema<R: ChunkReader + 'static>(file: R) -> Result<ParquetSchema, QueryError> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(parquet_err)?;
    let meta = builder.metadata().clone();
    let arrow = builder.schema().clone();
    Ok(ParquetSchema {
        rows: meta.file_metadata().num_rows().max(0) as u64,
        row_groups: meta.num_row_groups(),
        created_by: meta.file_metadata().created_by().map(str::to_owned),
        columns: arrow
            .fields()
            .iter()
            .map(|f| {
                let (null_count, min, max) = column_statistics(&meta, &arrow, f.name());
                ParquetColumn {
                    name: f.name().clone(),
                    kind: render::arrow_type_name(f.data_type()),
                    arrow_type: f.data_type().to_string(),
                    nullable: f.is_nullable(),
                    null_count,
                    min,
                    max,
                }
            })
            .collect(),
    })
}

/// Null count, min and max of the column named `name` over the row groups, from their
/// statistics (Parquet's converter gives them in the column's Arrow type, so dates read as
/// dates); each `None` when a row group does not record it.
fn column_statistics(
    meta: &ParquetMetaData,
    arrow: &Schema,
    name: &str,
) -> (Option<u64>, Option<String>, Option<String>) {
    let parquet = meta.file_metadata().schema_descr();
    let Ok(converter) = StatisticsConverter::try_new(name, arrow, parquet) else {
        return (None, None, None);
    };
    let groups = meta.row_groups();
    let nulls = converter
        .row_group_null_counts(groups)
        .ok()
        .filter(|n| n.null_count() == 0)
        .map(|n| n.values().iter().sum());
    let extreme = |values: Option<ArrayRef>, keep: Ordering| {
        let values = values.filter(|v| !v.is_empty() && v.null_count() == 0)?;
        let scalars = (0..values.len()).map(|i| ScalarValue::try_from_array(&values, i).ok());
        let best = scalars
            .collect::<Option<Vec<_>>>()?
            .into_iter()
            .reduce(|a, b| {
                if b.partial_cmp(&a) == Some(keep) {
                    b
                } else {
                    a
                }
            })?;
        Some(shorten(&best.to_string(), 80))
    };
    (
        nulls,
        extreme(converter.row_group_mins(groups).ok(), Ordering::Less),
        extreme(converter.row_group_maxes(groups).ok(), Ordering::Greater),
    )
}

fn shorten(s: &str, max: usize) -> String {
    match s.char_indices().nth(max) {
        Some((i, _)) => format!("{}…", &s[..i]),
        None => s.to_owned(),
    }
}

/// A page of a Parquet file's rows.
#[derive(Debug, Clone, PartialEq)]
pub struct Page {
    pub columns: Vec<Column>,
    /// Cells in column order.
    pub rows: Vec<Vec<Value>>,
    /// The first row's number (a negative offset counts from the end).
    pub offset: u64,
    /// Rows in the whole file.
    pub total: u64,
}

/// Rows `offset..offset+length` of `file` (negative `offset`: the last rows).
pub fn read_rows<R: ChunkReader + 'static>(
    file: R,
    offset: i64,
    length: usize,
) -> Result<Page, QueryError> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(parquet_err)?;
    let total = builder.metadata().file_metadata().num_rows().max(0) as u64;
    let offset = if offset < 0 {
        total.saturating_sub(offset.unsigned_abs())
    } else {
        offset as u64
    };
    let columns = render::columns(builder.schema());
    let reader = builder
        .with_offset(offset.min(total) as usize)
        .with_limit(length)
        .with_batch_size(length.clamp(1, 8192))
        .build()
        .map_err(parquet_err)?;
    let mut rows = Vec::new();
    for batch in reader {
        rows.extend(batch_rows(&batch.map_err(parquet_err)?)?);
    }
    Ok(Page {
        columns,
        rows,
        offset,
        total,
    })
}

/// Calls `f` with each row of `file` as a JSON object, one batch in memory at a time; `f`
/// returns `false` to stop.
pub fn for_each_row<R: ChunkReader + 'static>(
    file: R,
    f: &mut dyn FnMut(serde_json::Map<String, Value>) -> Result<bool, QueryError>,
) -> Result<(), QueryError> {
    let builder = ParquetRecordBatchReaderBuilder::try_new(file).map_err(parquet_err)?;
    let names: Vec<String> = builder
        .schema()
        .fields()
        .iter()
        .map(|f| f.name().clone())
        .collect();
    for batch in builder.with_batch_size(4096).build().map_err(parquet_err)? {
        for cells in batch_rows(&batch.map_err(parquet_err)?)? {
            if !f(names.iter().cloned().zip(cells).collect())? {
                return Ok(());
            }
        }
    }
    Ok(())
}

/// Writes JSON rows (objects; other values become a `value` column) as a Parquet file.
pub fn write_rows(rows: &[Value], out: &mut (dyn Write + Send)) -> Result<Written, QueryError> {
    let arrow_err = |e: datafusion::arrow::error::ArrowError| {
        QueryError::Source(format!("the rows cannot be typed for Parquet: {e}"))
    };
    let io = |e: datafusion::parquet::errors::ParquetError| {
        QueryError::Io(std::io::Error::other(e.to_string()))
    };
    // Typed over all rows, written a chunk at a time.
    let first = rows_batch(rows).map_err(arrow_err)?;
    let schema: std::sync::Arc<Schema> = first.schema();
    let mut writer =
        ArrowWriter::try_new(out, schema.clone(), Some(render::writer_properties())).map_err(io)?;
    let mut at = 0;
    while at < first.num_rows() {
        let n = (first.num_rows() - at).min(64 * 1024);
        writer.write(&first.slice(at, n)).map_err(io)?;
        at += n;
    }
    writer.close().map_err(io)?;
    Ok(Written {
        columns: render::columns(&schema),
        row_count: first.num_rows() as u64,
    })
}
