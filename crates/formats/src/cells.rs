//! One cell's value as JSON: a CSV field under type inference, a spreadsheet cell as calamine
//! reads it. The file tools (column types, sheets) and the parsers of tool inputs share it.

use calamine::Data;
use serde_json::{Number, Value};

/// The value of one cell under type inference.
///
/// - empty → null
/// - `true` / `false` (any case) → boolean
/// - integers without a sign other than `-`, without leading zeros, at most 15 digits → number
/// - decimals and exponents with at most 15 significant digits that stay finite → number
/// - everything else (`00123`, `+1`, `1e400`, phone numbers, long ids, `NaN`) → string
pub fn infer(text: &str) -> Value {
    if text.is_empty() {
        Value::Null
    } else if text.eq_ignore_ascii_case("true") {
        Value::Bool(true)
    } else if text.eq_ignore_ascii_case("false") {
        Value::Bool(false)
    } else {
        number(text).map_or_else(|| Value::String(text.to_owned()), Value::Number)
    }
}

/// A number by `infer`'s rule, or `None` for text that must stay text.
pub(crate) fn number(text: &str) -> Option<Number> {
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

/// A spreadsheet cell as JSON: numbers (whole floats as integers), booleans, null, text.
pub fn sheet_value(cell: &Data) -> Value {
    match cell {
        Data::Empty => Value::Null,
        Data::Bool(b) => Value::Bool(*b),
        Data::Int(i) => Value::from(*i),
        Data::Float(f) if f.fract() == 0.0 && f.abs() < 9.0e15 => Value::from(*f as i64),
        Data::Float(f) => Number::from_f64(*f).map_or(Value::Null, Value::Number),
        other => Value::String(sheet_text(other)),
    }
}

/// A spreadsheet cell as text; dates as ISO 8601.
pub fn sheet_text(cell: &Data) -> String {
    match cell {
        Data::String(s) | Data::DateTimeIso(s) | Data::DurationIso(s) => s.clone(),
        Data::DateTime(d) => {
            let (y, mo, da, h, mi, s, ms) = d.to_ymd_hms_milli();
            if (h, mi, s, ms) == (0, 0, 0, 0) {
                format!("{y:04}-{mo:02}-{da:02}")
            } else {
                format!("{y:04}-{mo:02}-{da:02}T{h:02}:{mi:02}:{s:02}")
            }
        }
        Data::Error(e) => e.to_string(),
        other => other.to_string(),
    }
}

#[cfg(test)]
mod tests {
    use super::infer;
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
}
