//! Parquet files: the schema from the footer (with row groups and statistics, without reading
//! the data) and rows by offset, through `offload_query::parquet`.

use offload_query::QueryError;
use offload_query::parquet::{self, ParquetSchema};

use super::{FileError, Probe, ReadAnswer, ReadRequest};

fn file_error(e: QueryError) -> FileError {
    match e {
        QueryError::Io(e) => FileError::Io(e),
        other => FileError::Parse(other.to_string()),
    }
}

pub fn schema(probe: &Probe) -> Result<ParquetSchema, FileError> {
    parquet::schema(probe.clone_handle()?.file).map_err(file_error)
}

/// Rows `offset..offset+length` (negative `offset`: the last rows), within `budget` bytes.
pub fn read(probe: Probe, request: &ReadRequest, budget: usize) -> Result<ReadAnswer, FileError> {
    if request.sheet.is_some() || request.range.is_some() || request.byte_offset.is_some() {
        return Err(FileError::Invalid(
            "a Parquet file is read by rows: give offset and length".into(),
        ));
    }
    let length = request.length.min(100_000) as usize;
    let page = parquet::read_rows(probe.file, request.offset, length).map_err(file_error)?;
    let (offset, total) = (page.offset, page.total);
    let mut used = 0;
    let mut rows = Vec::with_capacity(page.rows.len());
    let mut truncated = false;
    for row in page.rows {
        let size = serde_json::to_string(&row).map_or(0, |s| s.len() + 1);
        if used + size > budget && !rows.is_empty() {
            truncated = true;
            break;
        }
        used += size;
        rows.push(row);
    }
    let next = offset + rows.len() as u64;
    let note = (offset >= total && total > 0 && request.offset >= 0)
        .then(|| format!("offset {offset} is past the end: the file has {total} rows"));
    Ok(ReadAnswer {
        kind: "table".into(),
        offset: Some(offset.min(total)),
        count: Some(rows.len() as u64),
        total: Some(total),
        next_offset: (next < total).then_some(next),
        truncated,
        columns: Some(page.columns.into_iter().map(|c| c.name).collect()),
        rows: Some(rows),
        note,
        ..ReadAnswer::default()
    })
}
