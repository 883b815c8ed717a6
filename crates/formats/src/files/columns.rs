//! Column types from cell values: `integer`, `number`, `boolean`, `date`, `datetime`, `string`,
//! with null counts and a few distinct samples. Numbers and booleans follow the safe inference of
//! CSV input (`00123` and 16-digit ids stay strings); dates are ISO 8601.

use chrono::{DateTime, NaiveDate, NaiveDateTime};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

/// Bytes of one sample value before it is cut.
const SAMPLE_CAP: usize = 60;

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum ColumnType {
    Integer,
    Number,
    Boolean,
    Date,
    Datetime,
    String,
}

impl ColumnType {
    fn merge(self, other: Self) -> Self {
        use ColumnType::*;
        match (self, other) {
            (a, b) if a == b => a,
            (Integer, Number) | (Number, Integer) => Number,
            (Date, Datetime) | (Datetime, Date) => Datetime,
            _ => String,
        }
    }
}

/// One column as the schema shows it.
#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Column {
    pub name: String,
    /// The type of every non-empty value seen; `string` when they disagree. Absent when every
    /// value seen was empty.
    #[serde(rename = "type", skip_serializing_if = "Option::is_none")]
    pub kind: Option<ColumnType>,
    /// Whether empty values were seen.
    pub nullable: bool,
    /// Empty values, when every row was looked at.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub null_count: Option<u64>,
    /// A few distinct values, as they appear.
    pub samples: Vec<String>,
}

/// Accumulates what one column's values say.
#[derive(Debug, Clone)]
pub struct ColumnStats {
    name: String,
    kind: Option<ColumnType>,
    nulls: u64,
    samples: Vec<String>,
    max_samples: usize,
}

impl ColumnStats {
    pub fn new(name: String, max_samples: usize) -> Self {
        Self {
            name,
            kind: None,
            nulls: 0,
            samples: Vec::new(),
            max_samples,
        }
    }

    /// A value as text (CSV cells).
    pub fn text(&mut self, text: &str) {
        match classify_text(text) {
            None => self.nulls += 1,
            Some(kind) => self.seen(kind, text),
        }
    }

    /// A typed value (spreadsheet cells, JSON).
    pub fn value(&mut self, value: &Value) {
        let kind = match value {
            Value::Null => {
                self.nulls += 1;
                return;
            }
            Value::String(s) if s.is_empty() => {
                self.nulls += 1;
                return;
            }
            Value::Bool(_) => ColumnType::Boolean,
            Value::Number(n) if n.is_i64() || n.is_u64() => ColumnType::Integer,
            Value::Number(_) => ColumnType::Number,
            Value::String(s) => date_kind(s).unwrap_or(ColumnType::String),
            Value::Array(_) | Value::Object(_) => ColumnType::String,
        };
        match value {
            Value::String(s) => self.seen(kind, s),
            other => self.seen(kind, &other.to_string()),
        }
    }

    fn seen(&mut self, kind: ColumnType, text: &str) {
        self.kind = Some(self.kind.map_or(kind, |k| k.merge(kind)));
        if self.samples.len() < self.max_samples {
            let sample = clip(text);
            if !self.samples.contains(&sample) {
                self.samples.push(sample);
            }
        }
    }

    /// The column; `exact` says whether every row was seen (so the null count is exact).
    pub fn finish(self, exact: bool) -> Column {
        Column {
            name: self.name,
            kind: self.kind,
            nullable: self.nulls > 0,
            null_count: exact.then_some(self.nulls),
            samples: self.samples,
        }
    }
}

/// The type of one text cell; `None` for an empty cell.
pub fn classify_text(text: &str) -> Option<ColumnType> {
    match crate::cells::infer(text) {
        Value::Null => None,
        Value::Bool(_) => Some(ColumnType::Boolean),
        Value::Number(n) if n.is_i64() || n.is_u64() => Some(ColumnType::Integer),
        Value::Number(_) => Some(ColumnType::Number),
        _ => Some(date_kind(text).unwrap_or(ColumnType::String)),
    }
}

/// `date` for `2024-01-31`, `datetime` for ISO 8601 / RFC 3339 date-times.
fn date_kind(text: &str) -> Option<ColumnType> {
    let t = text.trim();
    if t.len() < 8 || t.len() > 40 || !t.as_bytes()[0].is_ascii_digit() {
        return None;
    }
    if NaiveDate::parse_from_str(t, "%Y-%m-%d").is_ok() {
        return Some(ColumnType::Date);
    }
    let datetime = DateTime::parse_from_rfc3339(t).is_ok()
        || [
            "%Y-%m-%dT%H:%M:%S%.f",
            "%Y-%m-%d %H:%M:%S%.f",
            "%Y-%m-%dT%H:%M",
        ]
        .iter()
        .any(|f| NaiveDateTime::parse_from_str(t, f).is_ok());
    datetime.then_some(ColumnType::Datetime)
}

fn clip(text: &str) -> String {
    crate::clip::clip(text, SAMPLE_CAP).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_merge_safely() {
        let mut c = ColumnStats::new("x".into(), 3);
        for v in ["30", "", "2.5", "7"] {
            c.text(v);
        }
        let col = c.finish(true);
        assert_eq!(col.kind, Some(ColumnType::Number));
        assert_eq!(col.null_count, Some(1));
        assert_eq!(col.samples, ["30", "2.5", "7"]);
        assert_eq!(classify_text("00123"), Some(ColumnType::String));
        assert_eq!(classify_text("1234567890123456"), Some(ColumnType::String));
        assert_eq!(classify_text("TRUE"), Some(ColumnType::Boolean));
        assert_eq!(classify_text("2024-02-29"), Some(ColumnType::Date));
        assert_eq!(classify_text("2023-02-29"), Some(ColumnType::String));
        assert_eq!(
            classify_text("2024-01-31T10:00:00Z"),
            Some(ColumnType::Datetime)
        );
        assert_eq!(
            classify_text("2024-01-31 10:00:00"),
            Some(ColumnType::Datetime)
        );
        let mut d = ColumnStats::new("d".into(), 2);
        d.text("2024-01-01");
        d.text("2024-01-01T00:00:00Z");
        assert_eq!(d.finish(false).kind, Some(ColumnType::Datetime));
    }
}
