//! JSON rows as Arrow: types inferred from the values (integers, numbers, booleans, strings,
//! nested objects as structs, lists), as DataFusion's JSON reader does.

use std::sync::Arc;

use datafusion::arrow::error::ArrowError;
use datafusion::arrow::json::reader::{ReaderBuilder, infer_json_schema_from_iterator};
use datafusion::arrow::record_batch::RecordBatch;
use serde_json::Value;

/// Rows (JSON objects) as one record batch; a row that is not an object is one `value` cell.
pub fn rows_batch(rows: &[Value]) -> Result<RecordBatch, ArrowError> {
    let wrapped: Vec<Value>;
    let rows = if rows.iter().all(Value::is_object) {
        rows
    } else {
        wrapped = rows
            .iter()
            .map(|v| match v {
                Value::Object(_) => v.clone(),
                other => serde_json::json!({ "value": other }),
            })
            .collect();
        &wrapped
    };
    let schema = Arc::new(infer_json_schema_from_iterator(rows.iter().map(Ok))?);
    let mut decoder = ReaderBuilder::new(schema.clone())
        .with_batch_size(rows.len().max(1))
        .build_decoder()?;
    decoder.serialize(rows)?;
    Ok(decoder
        .flush()?
        .unwrap_or_else(|| RecordBatch::new_empty(schema)))
}
