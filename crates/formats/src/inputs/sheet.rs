//! Excel (xlsx, xlsm, xlsb, xls) and OpenDocument (ods) sheets in, with calamine: the rows of the
//! first or named sheet as objects keyed by its first row. Whole numbers stored as floats become
//! integers; dates become ISO 8601 text; empty cells are null; error cells keep their text
//! (`#DIV/0!`).

use std::io::Cursor;

use calamine::{Data, Reader, open_workbook_auto_from_rs};
use serde_json::{Map, Value};

use super::InputError;
use crate::cells::{sheet_text as text, sheet_value as value};

/// The rows of `sheet` (a name, or a 0-based index as text; the first sheet when `None`).
pub fn read(bytes: Vec<u8>, sheet: Option<&str>) -> Result<(Value, Vec<String>), InputError> {
    let mut book = open_workbook_auto_from_rs(Cursor::new(bytes))
        .map_err(|e| InputError::parse(format!("not a readable spreadsheet: {e}")))?;
    let names = book.sheet_names();
    let name = match sheet {
        None => names
            .first()
            .cloned()
            .ok_or_else(|| InputError::parse("the workbook has no sheet"))?,
        Some(s) if names.iter().any(|n| n == s) => s.to_owned(),
        Some(s) => match s.parse::<usize>().ok().and_then(|i| names.get(i)) {
            Some(n) => n.clone(),
            None => {
                return Err(InputError::parse(format!(
                    "no sheet '{s}'; the sheets are: {}",
                    names.join(", ")
                )));
            }
        },
    };
    let range = book
        .worksheet_range(&name)
        .map_err(|e| InputError::parse(format!("sheet '{name}' cannot be read: {e}")))?;
    let mut rows = range.rows();
    let mut warnings = Vec::new();
    let Some(header) = rows.next() else {
        return Ok((Value::Array(Vec::new()), warnings));
    };
    let mut columns: Vec<String> = Vec::with_capacity(header.len());
    for (i, cell) in header.iter().enumerate() {
        let mut name = match cell {
            Data::Empty => String::new(),
            other => text(other),
        };
        if name.is_empty() {
            name = format!("column_{}", i + 1);
        }
        if columns.contains(&name) {
            let mut n = 2;
            while columns.contains(&format!("{name}_{n}")) {
                n += 1;
            }
            warnings.push(format!("duplicate header '{name}' renamed {name}_{n}"));
            name = format!("{name}_{n}");
        }
        columns.push(name);
    }
    let items = rows
        .map(|row| {
            let obj: Map<String, Value> =
                columns.iter().cloned().zip(row.iter().map(value)).collect();
            Value::Object(obj)
        })
        .collect();
    Ok((Value::Array(items), warnings))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn workbook() -> Vec<u8> {
        let mut wb = rust_xlsxwriter::Workbook::new();
        let first = wb.add_worksheet().set_name("people").unwrap();
        for (c, h) in ["id", "name", "zip", "score", "active", "name"]
            .iter()
            .enumerate()
        {
            first.write_string(0, c as u16, *h).unwrap();
        }
        first.write_number(1, 0, 1.0).unwrap();
        first.write_string(1, 1, "Ann").unwrap();
        first.write_string(1, 2, "00123").unwrap();
        first.write_number(1, 3, 4.5).unwrap();
        first.write_boolean(1, 4, true).unwrap();
        first.write_number(2, 0, 2.0).unwrap();
        let second = wb.add_worksheet().set_name("other").unwrap();
        second.write_string(0, 0, "k").unwrap();
        second.write_string(1, 0, "v").unwrap();
        wb.save_to_buffer().unwrap()
    }

    #[test]
    fn rows_of_the_first_or_named_sheet_as_objects() {
        let (v, warnings) = read(workbook(), None).unwrap();
        assert_eq!(
            v[0],
            json!({"id": 1, "name": "Ann", "zip": "00123", "score": 4.5, "active": true, "name_2": null})
        );
        assert_eq!(v[1]["id"], 2);
        assert_eq!(v[1]["name"], json!(null));
        assert_eq!(warnings.len(), 1);
        assert_eq!(
            read(workbook(), Some("other")).unwrap().0,
            json!([{"k": "v"}])
        );
        assert_eq!(read(workbook(), Some("1")).unwrap().0, json!([{"k": "v"}]));
        let e = read(workbook(), Some("nope")).unwrap_err();
        assert!(e.to_string().contains("people, other"), "{e}");
        assert!(read(b"not a workbook".to_vec(), None).is_err());
    }
}
