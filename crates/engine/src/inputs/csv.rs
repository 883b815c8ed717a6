//! CSV and TSV in: RFC 4180 (quoted delimiters, quotes and newlines), UTF-8 BOM removed, CRLF
//! accepted, the header row naming the fields. Rows become objects; with type inference, cells
//! that unambiguously are numbers, booleans or empty become them, everything else stays a string.

use std::io::Read;

use serde_json::{Map, Number, Value};

use super::InputError;

/// Reads CSV/TSV from `reader`, calling `row` with each record as an object. Returns the warnings
/// (duplicate or empty header names).
pub fn read(
    reader: impl Read,
    delimiter: u8,
    infer_types: bool,
    row: &mut dyn FnMut(Map<String, Value>) -> Result<(), InputError>,
) -> Result<Vec<String>, InputError> {
    let mut rdr = csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(true)
        .flexible(false)
        .from_reader(reader);
    let mut warnings = Vec::new();
    let headers = rdr.byte_headers().map_err(csv_error)?.clone();
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
    let mut record = csv::ByteRecord::new();
    while rdr.read_byte_record(&mut record).map_err(csv_error)? {
        let line = record.position().map_or(0, |p| p.line());
        let mut obj = Map::with_capacity(names.len());
        for (name, raw) in names.iter().zip(record.iter()) {
            let text = std::str::from_utf8(raw).map_err(|e| {
                InputError::parse(format!(
                    "line {line}, column '{name}': not valid UTF-8 (at byte {} of the field)",
                    e.valid_up_to()
                ))
                .at_line(line)
            })?;
            let value = if infer_types {
                infer(text)
            } else {
                Value::String(text.to_owned())
            };
            obj.insert(name.clone(), value);
        }
        row(obj)?;
    }
    Ok(warnings)
}

fn csv_error(e: csv::Error) -> InputError {
    let line = e.position().map(|p| p.line());
    let message = match e.kind() {
        csv::ErrorKind::UnequalLengths {
            expected_len, len, ..
        } => format!(
            "line {}: {len} fields where the header has {expected_len}; every row needs the same number of fields",
            line.unwrap_or(0)
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
    if text.is_empty() {
        return Value::Null;
    }
    if text.eq_ignore_ascii_case("true") {
        return Value::Bool(true);
    }
    if text.eq_ignore_ascii_case("false") {
        return Value::Bool(false);
    }
    number(text).map_or_else(|| Value::String(text.to_owned()), Value::Number)
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
    let significant = (int_part.to_owned() + frac_part.unwrap_or(""))
        .trim_start_matches('0')
        .len();
    if significant > 15 {
        return None;
    }
    if frac_part.is_none() && exponent.is_none() {
        // `-0` would come back as `0`: an integer must keep its text.
        return text
            .parse::<i64>()
            .ok()
            .filter(|n| n.to_string() == text)
            .map(Number::from);
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
            out.push(Value::Object(r));
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
