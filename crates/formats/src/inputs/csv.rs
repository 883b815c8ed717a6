//! CSV and TSV in: RFC 4180 (quoted delimiters, quotes and newlines), UTF-8 BOM removed, CRLF
//! accepted, the header row naming the fields. Rows become objects.
//!
//! Types are decided per column, never per cell, so a tool gets one type per field: with
//! inference, a column becomes numbers only if every non-empty cell is one (and booleans
//! likewise); one cell that must stay text (`01234`, `+1`, a long id) keeps the whole column
//! text. That takes a first pass over the file (`plan`), which only classifies cells.
//! `column_types` overrides a column: string, integer, number, boolean, json, or list (a cell
//! split on a separator). A row can be built as a map or written straight to JSON text.

use std::collections::BTreeMap;
use std::io::Read;

use serde_json::{Map, Number, Value};

use super::InputError;
use crate::cells::number;

/// What a column's cells become.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// Text as it is (empty → null): no inference, or a column that is not all one type.
    Text,
    /// Every non-empty cell is a number.
    Number,
    /// Every non-empty cell is true or false.
    Bool,
    /// Asked for with `column_types`.
    Forced(ColumnType),
}

/// A type asked for with `column_types`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnType {
    /// Text, empty cells included ("").
    String,
    Integer,
    Number,
    Boolean,
    /// The cell holds JSON.
    Json,
    /// The cell holds items split on this separator (`a;b` → ["a", "b"]).
    List(String),
}

impl ColumnType {
    /// Parses a `column_types` value; `separator` is for lists.
    pub fn parse(name: &str, separator: &str) -> Option<Self> {
        Some(match name.trim().to_ascii_lowercase().as_str() {
            "string" | "text" => Self::String,
            "integer" | "int" => Self::Integer,
            "number" | "float" => Self::Number,
            "boolean" | "bool" => Self::Boolean,
            "json" => Self::Json,
            "list" | "array" => Self::List(separator.to_owned()),
            _ => return None,
        })
    }
}

/// How to type the cells: inference on or off, and per-column overrides by header name.
#[derive(Debug, Clone, Default)]
pub struct Typing {
    pub infer: bool,
    pub columns: BTreeMap<String, ColumnType>,
}

impl Typing {
    /// Whether reading needs the first pass (inference looks at every cell of a column).
    pub fn needs_plan(&self) -> bool {
        self.infer
    }
}

/// The first pass: each column's kind, from every cell. `None` when inference is off.
pub fn plan(reader: impl Read, delimiter: u8, typing: &Typing) -> Result<Vec<Kind>, InputError> {
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(true)
        .flexible(false)
        .from_reader(reader);
    let (names, _) = header(&mut rdr)?;
    // Per column: any non-empty cell seen, all numbers so far, all booleans so far.
    let mut seen = vec![(false, true, true); names.len()];
    let mut record = csv::StringRecord::new();
    while rdr
        .read_record(&mut record)
        .map_err(|e| csv_error(e, &names))?
    {
        for (state, text) in seen.iter_mut().zip(record.iter()) {
            if text.is_empty() || !(state.1 || state.2) {
                continue;
            }
            state.0 = true;
            state.1 = state.1 && number(text).is_some();
            state.2 = state.2
                && (text.eq_ignore_ascii_case("true") || text.eq_ignore_ascii_case("false"));
        }
    }
    Ok(names
        .iter()
        .zip(seen)
        .map(
            |(name, (any, numbers, bools))| match typing.columns.get(name) {
                Some(forced) => Kind::Forced(forced.clone()),
                None if !typing.infer || !any => Kind::Text,
                None if numbers => Kind::Number,
                None if bools => Kind::Bool,
                None => Kind::Text,
            },
        )
        .collect())
}

/// Reads CSV/TSV from `reader`, calling `row` with each record typed by `kinds` (from `plan`;
/// empty: every column text, or as `typing` forces it). Returns the warnings (duplicate or
/// empty header names, `column_types` naming no column).
pub fn read(
    reader: impl Read,
    delimiter: u8,
    typing: &Typing,
    kinds: Vec<Kind>,
    row: &mut dyn FnMut(Row<'_>) -> Result<(), InputError>,
) -> Result<Vec<String>, InputError> {
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(true)
        .flexible(false)
        .from_reader(reader);
    let (names, mut warnings) = header(&mut rdr)?;
    let kinds = if kinds.len() == names.len() {
        kinds
    } else {
        names
            .iter()
            .map(|n| match typing.columns.get(n) {
                Some(forced) => Kind::Forced(forced.clone()),
                None => Kind::Text,
            })
            .collect()
    };
    for name in typing.columns.keys() {
        if !names.contains(name) {
            warnings.push(format!(
                "column_types names '{name}', which is not a column"
            ));
        }
    }
    let keys = names
        .iter()
        .map(|name| {
            let mut key = serde_json::to_vec(name).unwrap_or_default();
            key.push(b':');
            key
        })
        .collect::<Vec<_>>();
    let mut record = csv::StringRecord::new();
    while rdr
        .read_record(&mut record)
        .map_err(|e| csv_error(e, &names))?
    {
        let line = record.position().map_or(0, |p| p.line());
        let cells = typed_cells(&record, &kinds, &names, line)?;
        row(Row {
            names: &names,
            keys: &keys,
            cells,
        })?;
    }
    Ok(warnings)
}

/// The column names (empty ones named, duplicates suffixed) and the warnings saying so.
fn header<R: Read>(rdr: &mut csv::Reader<R>) -> Result<(Vec<String>, Vec<String>), InputError> {
    let mut warnings = Vec::new();
    let headers = rdr.byte_headers().map_err(|e| csv_error(e, &[]))?;
    let mut names: Vec<String> = Vec::with_capacity(headers.len());
    for (i, raw) in headers.iter().enumerate() {
        let mut name = std::str::from_utf8(raw)
            .map_err(|e| {
                InputError::parse(format!(
                    "the header row is not valid UTF-8 (byte {} of field {})",
                    e.valid_up_to(),
                    i + 1
                ))
            })?
            .trim_start_matches('\u{feff}')
            .to_owned();
        if name.is_empty() {
            name = format!("column_{}", i + 1);
            warnings.push(format!("header {} is empty; named it {name}", i + 1));
        }
        if names.contains(&name) {
            let mut n = 2;
            while names.contains(&format!("{name}_{n}")) {
                n += 1;
            }
            warnings.push(format!("duplicate header '{name}' renamed {name}_{n}"));
            name = format!("{name}_{n}");
        }
        names.push(name);
    }
    Ok((names, warnings))
}

/// A record's cells typed by their columns' kinds; a cell that does not fit a forced type is
/// an error naming the line, the column and the value.
fn typed_cells<'r>(
    record: &'r csv::StringRecord,
    kinds: &[Kind],
    names: &[String],
    line: u64,
) -> Result<Vec<Cell<'r>>, InputError> {
    record
        .iter()
        .zip(kinds)
        .zip(names)
        .map(|((text, kind), name)| {
            typed(text, kind).ok_or_else(|| {
                let Kind::Forced(t) = kind else {
                    unreachable!("only forced types can refuse a cell")
                };
                InputError::parse(format!(
                    "line {line}, column '{name}': {:?} is not {} (column_types)",
                    crate::clip::clip(text, 60),
                    match t {
                        ColumnType::Integer => "an integer",
                        ColumnType::Number => "a number",
                        ColumnType::Boolean => "a boolean (true/false, yes/no, 1/0)",
                        ColumnType::Json => "valid JSON",
                        ColumnType::String | ColumnType::List(_) => "text",
                    }
                ))
                .at_line(line)
            })
        })
        .collect()
}

/// One cell under its column's kind; `None` when it does not fit a forced type.
fn typed<'t>(text: &'t str, kind: &Kind) -> Option<Cell<'t>> {
    Some(match kind {
        _ if text.is_empty()
            && !matches!(kind, Kind::Forced(ColumnType::String | ColumnType::List(_))) =>
        {
            Cell::Null
        }
        Kind::Text => Cell::Text(text),
        Kind::Number => number(text).map_or(Cell::Text(text), Cell::Number),
        Kind::Bool => Cell::Bool(text.eq_ignore_ascii_case("true")),
        Kind::Forced(ColumnType::String) => Cell::Text(text),
        Kind::Forced(ColumnType::Integer) => Cell::Number(text.trim().parse::<i64>().ok()?.into()),
        Kind::Forced(ColumnType::Number) => {
            let f: f64 = text.trim().parse().ok()?;
            Cell::Number(Number::from_f64(f)?)
        }
        Kind::Forced(ColumnType::Boolean) => match text.trim().to_ascii_lowercase().as_str() {
            "true" | "yes" | "y" | "1" => Cell::Bool(true),
            "false" | "no" | "n" | "0" => Cell::Bool(false),
            _ => return None,
        },
        Kind::Forced(ColumnType::Json) => Cell::Value(serde_json::from_str(text).ok()?),
        Kind::Forced(ColumnType::List(separator)) => {
            Cell::Value(Value::Array(if text.trim().is_empty() {
                Vec::new()
            } else {
                text.split(separator.as_str())
                    .map(|item| Value::String(item.trim().to_owned()))
                    .collect()
            }))
        }
    })
}

/// One record of the file, with its column names and typed cells.
pub struct Row<'a> {
    names: &'a [String],
    /// Each name as a JSON string followed by `:`.
    keys: &'a [Vec<u8>],
    cells: Vec<Cell<'a>>,
}

impl Row<'_> {
    /// The column names.
    pub fn names(&self) -> &[String] {
        self.names
    }

    /// The row as an object keyed by the header.
    pub fn to_map(&self) -> Map<String, Value> {
        self.names
            .iter()
            .cloned()
            .zip(self.cells.iter().cloned().map(Value::from))
            .collect()
    }

    /// Appends the row to `out` as a JSON object: the same JSON `to_map` serialises to.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (i, (key, cell)) in self.keys.iter().zip(&self.cells).enumerate() {
            if i > 0 {
                out.push(b',');
            }
            out.extend_from_slice(key);
            cell.write_json(out);
        }
        out.push(b'}');
    }
}

/// A cell's value.
#[derive(Debug, Clone, PartialEq)]
enum Cell<'a> {
    Null,
    Bool(bool),
    Number(Number),
    Text(&'a str),
    /// Made by a forced type (json, list).
    Value(Value),
}

impl Cell<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        // Writing into a Vec cannot fail, and these values always serialise.
        let _ = match self {
            Cell::Null => serde_json::to_writer(&mut *out, &()),
            Cell::Bool(b) => serde_json::to_writer(&mut *out, b),
            Cell::Number(n) => serde_json::to_writer(&mut *out, n),
            Cell::Text(t) => serde_json::to_writer(&mut *out, t),
            Cell::Value(v) => serde_json::to_writer(&mut *out, v),
        };
    }
}

impl From<Cell<'_>> for Value {
    fn from(cell: Cell<'_>) -> Self {
        match cell {
            Cell::Null => Value::Null,
            Cell::Bool(b) => Value::Bool(b),
            Cell::Number(n) => Value::Number(n),
            Cell::Text(t) => Value::String(t.to_owned()),
            Cell::Value(v) => v,
        }
    }
}

fn csv_error(e: csv::Error, names: &[String]) -> InputError {
    let line = e.position().map(|p| p.line());
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "line {}: {len} fields where the header has {expected_len}; every row needs the same number of fields",
            line.unwrap_or(0)
        ),
        csv::ErrorKind::Utf8 { err, .. } => format!(
            "line {}, column '{}': not valid UTF-8 (at byte {} of the field)",
            line.unwrap_or(0),
            names.get(err.field()).map_or("?", String::as_str),
            err.valid_up_to()
        ),
        _ => e.to_string(),
    };
    let err = InputError::parse(message);
    match line {
        Some(l) => err.at_line(l),
        None => err,
    }
}

#[cfg(test)]
mod tests;
