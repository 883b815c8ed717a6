//! Query results out: the first rows as JSON for the answer, the whole result as a file.

use std::io::Write;

use datafusion::arrow::datatypes::{DataType, Schema, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::arrow::{csv, json};
use datafusion::parquet::arrow::ArrowWriter;
use datafusion::parquet::basic::{Compression, ZstdLevel};
use datafusion::parquet::file::properties::WriterProperties;
use serde_json::Value;

use crate::error::QueryError;
use crate::{Answer, Column};

/// What [`Querier::write`](crate::Querier::write) wrote.
#[derive(Debug, Clone, PartialEq)]
pub struct Written {
    pub columns: Vec<Column>,
    pub row_count: u64,
}

/// Where a query's batches go.
pub(crate) trait Sink {
    type Out;
    fn push(&mut self, batch: &RecordBatch) -> Result<(), QueryError>;
    fn finish(self) -> Result<Self::Out, QueryError>;
}

/// What Offload writes: ZSTD, row groups of 128 Ki rows, statistics on.
pub(crate) fn writer_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::ZSTD(ZstdLevel::default()))
        .set_max_row_group_row_count(Some(128 * 1024))
        .build()
}

/// Offload's own columnar copies of queried files (see [`crate::Querier::copy`]): read back
/// far more often than written, so LZ4 (decoded several times faster than ZSTD), same row groups.
pub(crate) fn copy_properties() -> WriterProperties {
    WriterProperties::builder()
        .set_compression(Compression::LZ4_RAW)
        .set_max_row_group_row_count(Some(128 * 1024))
        .build()
}

/// The formats a result is written in directly from its batches.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutFormat {
    Csv,
    Tsv,
    Json,
    Jsonl,
    Parquet,
}

/// The type of a column in the words `get_file_schema` uses.
pub fn arrow_type_name(t: &DataType) -> String {
    use DataType::*;
    match t {
        Null => "null".into(),
        Boolean => "boolean".into(),
        Int8 | Int16 | Int32 | Int64 | UInt8 | UInt16 | UInt32 | UInt64 => "integer".into(),
        Float16 | Float32 | Float64 | Decimal32(..) | Decimal64(..) | Decimal128(..)
        | Decimal256(..) => "number".into(),
        Utf8 | LargeUtf8 | Utf8View => "string".into(),
        Date32 | Date64 => "date".into(),
        Timestamp(..) => "datetime".into(),
        Time32(_) | Time64(_) => "time".into(),
        Duration(_) | Interval(_) => "duration".into(),
        Binary | LargeBinary | BinaryView | FixedSizeBinary(_) => "binary".into(),
        Struct(_) | Map(..) => "object".into(),
        List(_) | LargeList(_) | FixedSizeList(..) | ListView(_) | LargeListView(_) => {
            "array".into()
        }
        Dictionary(_, v) => arrow_type_name(v),
        other => other.to_string().to_lowercase(),
    }
}

pub(crate) fn columns(schema: &Schema) -> Vec<Column> {
    schema
        .fields()
        .iter()
        .map(|f| Column {
            name: f.name().clone(),
            kind: arrow_type_name(f.data_type()),
        })
        .collect()
}

/// Batches as JSON objects (nulls kept, so every row has every column).
pub(crate) fn batch_rows(batch: &RecordBatch) -> Result<Vec<Vec<Value>>, QueryError> {
    let mut buf = Vec::new();
    {
        let mut w = json::WriterBuilder::new()
            .with_explicit_nulls(true)
            .build::<_, json::writer::LineDelimited>(&mut buf);
        w.write(batch).map_err(arrow_err)?;
        w.finish().map_err(arrow_err)?;
    }
    buf.split(|&b| b == b'\n')
        .filter(|l| !l.is_empty())
        .map(|line| {
            let row: serde_json::Map<String, Value> =
                serde_json::from_slice(line).map_err(|e| QueryError::Io(e.into()))?;
            Ok(row.into_iter().map(|(_, v)| v).collect())
        })
        .collect()
}

fn arrow_err(e: datafusion::arrow::error::ArrowError) -> QueryError {
    QueryError::Io(std::io::Error::other(e.to_string()))
}

/// The answer: the first `limit` rows within `budget` bytes, and the count of all.
pub(crate) struct RowsBuilder {
    columns: Vec<Column>,
    rows: Vec<Vec<Value>>,
    row_count: u64,
    limit: usize,
    budget: usize,
    used: usize,
    full: bool,
}

impl RowsBuilder {
    pub fn new(schema: &Schema, limit: usize, budget: usize) -> Result<Self, QueryError> {
        Ok(Self {
            columns: columns(schema),
            rows: Vec::new(),
            row_count: 0,
            limit,
            budget,
            used: 0,
            full: limit == 0,
        })
    }
}

impl Sink for RowsBuilder {
    type Out = Answer;

    fn push(&mut self, batch: &RecordBatch) -> Result<(), QueryError> {
        self.row_count += batch.num_rows() as u64;
        if self.full {
            return Ok(());
        }
        let wanted = (self.limit - self.rows.len()).min(batch.num_rows());
        for row in batch_rows(&batch.slice(0, wanted))? {
            let size = serde_json::to_string(&row).map_or(0, |s| s.len() + 1);
            if self.used + size > self.budget {
                self.full = true;
                break;
            }
            self.used += size;
            self.rows.push(row);
        }
        if self.rows.len() >= self.limit {
            self.full = true;
        }
        Ok(())
    }

    fn finish(self) -> Result<Answer, QueryError> {
        Ok(Answer {
            truncated: (self.rows.len() as u64) < self.row_count,
            columns: self.columns,
            rows: self.rows,
            row_count: self.row_count,
        })
    }
}

enum Writer<'w> {
    Csv(csv::Writer<&'w mut (dyn Write + Send)>),
    Json(json::Writer<&'w mut (dyn Write + Send), json::writer::JsonArray>),
    Jsonl(json::Writer<&'w mut (dyn Write + Send), json::writer::LineDelimited>),
    Parquet(ArrowWriter<&'w mut (dyn Write + Send)>),
}

/// The whole result, written as it comes.
pub(crate) struct BatchWriter<'w> {
    writer: Writer<'w>,
    columns: Vec<Column>,
    rows: u64,
}

impl<'w> BatchWriter<'w> {
    pub fn new(
        format: OutFormat,
        schema: SchemaRef,
        out: &'w mut (dyn Write + Send),
    ) -> Result<Self, QueryError> {
        let columns = columns(&schema);
        let writer = match format {
            OutFormat::Csv | OutFormat::Tsv => Writer::Csv(
                csv::WriterBuilder::new()
                    .with_header(true)
                    .with_delimiter(if format == OutFormat::Tsv {
                        b'\t'
                    } else {
                        b','
                    })
                    .build(out),
            ),
            OutFormat::Json => Writer::Json(
                json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build::<_, json::writer::JsonArray>(out),
            ),
            OutFormat::Jsonl => Writer::Jsonl(
                json::WriterBuilder::new()
                    .with_explicit_nulls(true)
                    .build::<_, json::writer::LineDelimited>(out),
            ),
            OutFormat::Parquet => {
                return Self::parquet(schema, out, writer_properties());
            }
        };
        Ok(Self {
            writer,
            columns,
            rows: 0,
        })
    }

    /// Parquet written with `properties`.
    pub fn parquet(
        schema: SchemaRef,
        out: &'w mut (dyn Write + Send),
        properties: datafusion::parquet::file::properties::WriterProperties,
    ) -> Result<Self, QueryError> {
        let columns = columns(&schema);
        let writer = ArrowWriter::try_new(out, schema, Some(properties))
            .map_err(|e| QueryError::Io(std::io::Error::other(e.to_string())))?;
        Ok(Self {
            writer: Writer::Parquet(writer),
            columns,
            rows: 0,
        })
    }
}

impl Sink for BatchWriter<'_> {
    type Out = Written;

    fn push(&mut self, batch: &RecordBatch) -> Result<(), QueryError> {
        self.rows += batch.num_rows() as u64;
        match &mut self.writer {
            Writer::Csv(w) => w.write(batch).map_err(arrow_err),
            Writer::Json(w) => w.write(batch).map_err(arrow_err),
            Writer::Jsonl(w) => w.write(batch).map_err(arrow_err),
            Writer::Parquet(w) => w
                .write(batch)
                .map_err(|e| QueryError::Io(std::io::Error::other(e.to_string()))),
        }
    }

    fn finish(self) -> Result<Written, QueryError> {
        match self.writer {
            Writer::Csv(w) => drop(w.into_inner()),
            Writer::Json(mut w) => w.finish().map_err(arrow_err)?,
            Writer::Jsonl(mut w) => w.finish().map_err(arrow_err)?,
            Writer::Parquet(w) => {
                w.close()
                    .map_err(|e| QueryError::Io(std::io::Error::other(e.to_string())))?;
            }
        }
        Ok(Written {
            columns: self.columns,
            row_count: self.rows,
        })
    }
}
