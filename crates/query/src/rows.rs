//! JSON rows as Arrow: types inferred from the values (integers, numbers, booleans, strings,
//! nested objects as structs, lists), as DataFusion's JSON reader does.

use std::sync::Arc;

use datafusion::arrow::datatypes::{DataType, Field, Schema, SchemaRef};
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
    if let Ok(batch) = decode(schema.clone(), rows) {
        return Ok(batch);
    }
    // Values of mixed types infer as text: those that are not text are written as JSON text
    // (a copy of the rows, made only for such data).
    let texts: Vec<&str> = schema
        .fields()
        .iter()
        .filter(|f| f.data_type() == &DataType::Utf8)
        .map(|f| f.name().as_str())
        .collect();
    let rows = as_text(rows, |name| texts.contains(&name));
    match decode(schema.clone(), &rows) {
        Ok(batch) => Ok(batch),
        // Nested values whose shapes disagree (an object here, a number there): every column
        // as text, so any rows can be written.
        Err(_) => {
            let all_text = Schema::new(
                schema
                    .fields()
                    .iter()
                    .map(|f| Field::new(f.name(), DataType::Utf8, true))
                    .collect::<Vec<_>>(),
            );
            decode(Arc::new(all_text), &as_text(&rows, |_| true))
        }
    }
}

fn decode(schema: SchemaRef, rows: &[Value]) -> Result<RecordBatch, ArrowError> {
    let mut decoder = ReaderBuilder::new(schema.clone())
        .with_batch_size(rows.len().max(1))
        .build_decoder()?;
    decoder.serialize(rows)?;
    Ok(decoder
        .flush()?
        .unwrap_or_else(|| RecordBatch::new_empty(schema)))
}

/// `rows` with the non-null values of the chosen columns as JSON text.
fn as_text(rows: &[Value], text: impl Fn(&str) -> bool) -> Vec<Value> {
    rows.iter()
        .map(|row| match row {
            Value::Object(map) => Value::Object(
                map.iter()
                    .map(|(k, v)| {
                        let v = match v {
                            Value::Null | Value::String(_) => v.clone(),
                            other if text(k) => Value::String(other.to_string()),
                            other => other.clone(),
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            other => other.clone(),
        })
        .collect()
}
