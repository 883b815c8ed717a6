//! CSV and TSV in: RFC 4180 (quoted delimiters, quotes and newlines), UTF-8 BOM removed, CRLF
//! accepted, the header row naming the fields. Rows become objects; with type inference, cells
//! that unambiguously are numbers, booleans or empty become them, everything else stays a string.
//! A row can be built as a map or written straight to JSON text (no map, no per-cell strings).

use std::io::Read;

use serde_json::{Map, Number, Value};

use super::InputError;

/// Reads CSV/TSV from `reader`, calling `row` with each record. Returns the warnings
/// (duplicate or empty header names).
pub fn read(
    reader: impl Read,
    delimiter: u8,
    infer_types: bool,
    row: &mut dyn FnMut(Row<'_>) -> Result<(), InputError>,
) -> Result<Vec<String>, InputError> {
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(true)
        .flexible(false)
        .from_reader(reader);
    let (names, warnings) = header(&mut rdr)?;
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
        row(Row {
            names: &names,
            keys: &keys,
            record: &record,
            infer_types,
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

/// One record of the file, with its column names.
pub struct Row<'a> {
    names: &'a [String],
    /// Each name as a JSON string followed by `:`.
    keys: &'a [Vec<u8>],
    record: &'a csv::StringRecord,
    infer_types: bool,
}

impl Row<'_> {
    fn cells(&self) -> impl Iterator<Item = Cell<'_>> {
        let infer_types = self.infer_types;
        self.record.iter().map(move |text| {
            if infer_types {
                cell(text)
            } else {
                Cell::Text(text)
            }
        })
    }

    /// The row as an object keyed by the header.
    pub fn to_map(&self) -> Map<String, Value> {
        self.names
            .iter()
            .cloned()
            .zip(self.cells().map(Value::from))
            .collect()
    }

    /// Appends the row to `out` as a JSON object: the same JSON `to_map` serialises to.
    pub fn write_json(&self, out: &mut Vec<u8>) {
        out.push(b'{');
        for (i, (key, cell)) in self.keys.iter().zip(self.cells()).enumerate() {
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
}

impl Cell<'_> {
    fn write_json(&self, out: &mut Vec<u8>) {
        // Writing into a Vec cannot fail, and these values always serialise.
        let _ = match self {
            Cell::Null => serde_json::to_writer(&mut *out, &()),
            Cell::Bool(b) => serde_json::to_writer(&mut *out, b),
            Cell::Number(n) => serde_json::to_writer(&mut *out, n),
            Cell::Text(t) => serde_json::to_writer(&mut *out, t),
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

/// The value of one cell under type inference.
///
/// - empty → null
/// - `true` / `false` (any case) → boolean
/// - integers without a sign other than `-`, without leading zeros, at most 15 digits → number
/// - decimals and exponents with at most 15 significant digits that stay finite → number
/// - everything else (`00123`, `+1`, `1e400`, phone numbers, long ids, `NaN`) → string
pub fn infer(text: &str) -> Value {
    cell(text).into()
}

/// `infer` without building a value.
fn cell(text: &str) -> Cell<'_> {
    if text.is_empty() {
        Cell::Null
    } else if text.eq_ignore_ascii_case("true") {
        Cell::Bool(true)
    } else if text.eq_ignore_ascii_case("false") {
        Cell::Bool(false)
    } else {
        number(text).map_or(Cell::Text(text), Cell::Number)
    }
}

fn number(text: &str) -> Option<Number> {
    let unsigned = text.strip_prefix('-').unwrap_or(text);
    let (mantissa, exponent) = match unsigned.find(['e', 'E']) {
        Some(i) => (&unsigned[..i], Some(&unsigned[i + 1..])),
        None => (unsigned, None),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !digits(int_part) || (int_part.len() > 1 && int_part.starts_with('0')) {
        return None;
    }
    if let Some(f) = frac_part
        && !digits(f)
    {
        return None;
    }
    if let Some(e) = exponent {
        let e = e.strip_prefix(['+', '-']).unwrap_or(e);
        if !digits(e) {
            return None;
        }
    }
    let significant = int_part
        .bytes()
        .chain(frac_part.unwrap_or("").bytes())
        .skip_while(|b| *b == b'0')
        .count();
    if significant > 15 {
        return None;
    }
    if frac_part.is_none() && exponent.is_none() {
        // `-0` would come back as `0`: an integer must keep its text. Any other integer here
        // (no `+`, no leading zero, at most 15 digits) parses back to the same text.
        if unsigned == "0" && text.len() > 1 {
            return None;
        }
        return text.parse::<i64>().ok().map(Number::from);
    }
    let f: f64 = text.parse().ok()?;
    if !f.is_finite() {
        return None;
    }
    Number::from_f64(f)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn inference_is_safe() {
        for (text, want) in [
            ("30", json!(30)),
            ("-7", json!(-7)),
            ("0", json!(0)),
            ("1.5", json!(1.5)),
            ("2.5e3", json!(2500.0)),
            ("", json!(null)),
            ("true", json!(true)),
            ("FALSE", json!(false)),
            ("00123", json!("00123")),
            ("+1", json!("+1")),
            ("1e400", json!("1e400")),
            ("+1 555 0100", json!("+1 555 0100")),
            ("1234567890123456", json!("1234567890123456")),
            ("123456789012345", json!(123456789012345i64)),
            ("NaN", json!("NaN")),
            ("1.", json!("1.")),
            (".5", json!(".5")),
            ("1_000", json!("1_000")),
            ("yes", json!("yes")),
            ("null", json!("null")),
            // Found by fuzzing: `-0` became 0.
            ("-0", json!("-0")),
            ("-0.5", json!(-0.5)),
        ] {
            assert_eq!(infer(text), want, "{text:?}");
        }
    }

    fn rows(text: &str, infer_types: bool) -> Result<(Vec<Value>, Vec<String>), InputError> {
        let mut out = Vec::new();
        let warnings = read(text.as_bytes(), b',', infer_types, &mut |r| {
            let mut json = Vec::new();
            r.write_json(&mut json);
            let map = r.to_map();
            assert_eq!(
                json,
                serde_json::to_vec(&map).unwrap(),
                "written as serialised"
            );
            out.push(Value::Object(map));
            Ok(())
        })?;
        Ok((out, warnings))
    }

    #[test]
    fn rfc4180_bom_crlf_and_duplicates() {
        let (r, w) = rows(
            "\u{feff}id,name,name,\r\n1,\"a, \"\"b\"\"\nc\",x,\r\n",
            true,
        )
        .unwrap();
        assert_eq!(
            r,
            vec![json!({"id": 1, "name": "a, \"b\"\nc", "name_2": "x", "column_4": null})]
        );
        assert_eq!(w.len(), 2, "{w:?}");
        let (r, _) = rows("a\n007\n", false).unwrap();
        assert_eq!(r, vec![json!({"a": "007"})]);
        let (r, _) = rows("a,b\n", true).unwrap();
        assert!(r.is_empty(), "header only");
    }

    #[test]
    fn ragged_rows_and_invalid_utf8_name_the_line() {
        let e = rows("a,b\n1,2\n3\n", true).unwrap_err();
        assert!(
            e.to_string().contains("line 3") && e.to_string().contains("1 fields"),
            "{e}"
        );
        assert_eq!(e.line, Some(3));
        let mut bad = b"a\nok\n".to_vec();
        bad.extend_from_slice(b"\xff\xfe\n");
        let mut n = 0;
        let e = read(&bad[..], b',', true, &mut |_| {
            n += 1;
            Ok(())
        })
        .unwrap_err();
        assert!(
            e.to_string().contains("line 3") && e.to_string().contains("UTF-8"),
            "{e}"
        );
    }

    #[test]
    fn ten_thousand_columns() {
        let header: Vec<String> = (0..10_000).map(|i| format!("c{i}")).collect();
        let row: Vec<String> = (0..10_000).map(|i| i.to_string()).collect();
        let text = format!("{}\n{}\n", header.join(","), row.join(","));
        let (r, _) = rows(&text, true).unwrap();
        assert_eq!(r[0]["c9999"], json!(9999));
    }
}
