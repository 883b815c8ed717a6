//! Excel and OpenDocument workbooks through calamine: per-sheet dimensions and column types, and
//! ranges of cells as a 2-D JSON array. For xlsx only the requested rows are decoded (calamine's
//! streaming cell reader stops after the last one); other formats load the one sheet asked for.

use std::io::{BufReader, Read, Seek};

use calamine::{Data, Reader, Sheets, open_workbook_from_rs};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::columns::{Column, ColumnStats};
use super::reading::{ReadAnswer, ReadRequest};
use super::{FileError, Probe};
use crate::cells::sheet_value as value;

/// Rows looked at per sheet for column types.
const TYPE_ROWS: u32 = 1000;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SheetsSchema {
    pub sheets: Vec<SheetSchema>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct SheetSchema {
    pub name: String,
    /// The used range, `A1:D100` (absent for an empty sheet).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub dimensions: Option<String>,
    /// Rows in the used range, the header row included.
    pub rows: u64,
    pub columns_count: u64,
    /// Named by the first row; typed from up to 1,000 rows below it.
    pub columns: Vec<Column>,
}

/// A rectangle of cells, 0-based and inclusive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Area {
    top: u32,
    left: u32,
    bottom: u32,
    right: u32,
}

type Book<'a> = Sheets<BufReader<super::source::Cursor<'a>>>;

fn open(probe: &Probe) -> Result<Book<'_>, FileError> {
    fn bad(e: impl std::fmt::Display) -> FileError {
        FileError::Parse(format!("not a readable spreadsheet: {e}"))
    }
    let reader = BufReader::new(probe.file.reader());
    Ok(match probe.extension().as_str() {
        "xlsx" | "xlsm" | "xlam" => Sheets::Xlsx(open_workbook_from_rs(reader).map_err(bad)?),
        "xlsb" => Sheets::Xlsb(open_workbook_from_rs(reader).map_err(bad)?),
        "ods" => Sheets::Ods(open_workbook_from_rs(reader).map_err(bad)?),
        _ => Sheets::Xls(open_workbook_from_rs(reader).map_err(bad)?),
    })
}

pub fn schema(probe: &Probe, max_samples: usize) -> Result<SheetsSchema, FileError> {
    let mut book = open(probe)?;
    let mut sheets = Vec::new();
    for name in book.sheet_names() {
        let mut header: Vec<String> = Vec::new();
        let mut stats: Vec<ColumnStats> = Vec::new();
        let used = rows(
            &mut book,
            &name,
            None,
            0,
            TYPE_ROWS as u64 + 1,
            &mut |i, row| {
                if i == 0 {
                    header = row
                        .iter()
                        .enumerate()
                        .map(|(c, cell)| match value(cell) {
                            Value::Null => format!("column_{}", c + 1),
                            Value::String(s) => s,
                            other => other.to_string(),
                        })
                        .collect();
                    stats = header
                        .iter()
                        .map(|n| ColumnStats::new(n.clone(), max_samples))
                        .collect();
                } else {
                    for (stat, cell) in stats.iter_mut().zip(row) {
                        stat.value(&value(cell));
                    }
                }
            },
        )?;
        sheets.push(SheetSchema {
            name,
            dimensions: used.map(a1_range),
            rows: used.map_or(0, |a| u64::from(a.bottom - a.top) + 1),
            columns_count: used.map_or(0, |a| u64::from(a.right - a.left) + 1),
            columns: stats.into_iter().map(|s| s.finish(false)).collect(),
        });
    }
    Ok(SheetsSchema { sheets })
}

pub fn read(probe: Probe, request: &ReadRequest, budget: usize) -> Result<ReadAnswer, FileError> {
    let mut book = open(&probe)?;
    let names = book.sheet_names();
    let name = pick_sheet(&names, request.sheet.as_deref())?;
    let area = request.range.as_deref().map(parse_range).transpose()?;
    if request.offset < 0 {
        return Err(FileError::Invalid(
            "a negative offset reads the end of text files; for sheets give a range or a row \
             offset"
                .into(),
        ));
    }
    let offset = request.offset as u64;
    let mut cells: Vec<Vec<Value>> = Vec::new();
    let mut used_bytes = 2usize;
    let mut truncated = false;
    let mut first_row = None;
    let used = rows(
        &mut book,
        &name,
        area,
        offset,
        request.length,
        &mut |i, row| {
            if truncated {
                return;
            }
            let values: Vec<Value> = row.iter().map(value).collect();
            let size = serde_json::to_string(&values).map_or(0, |s| s.len()) + 1;
            if used_bytes + size > budget && !cells.is_empty() {
                truncated = true;
                return;
            }
            first_row.get_or_insert(i);
            used_bytes += size;
            cells.push(values);
        },
    )?;
    let total = match (area, used) {
        (Some(a), Some(u)) => u64::from(a.bottom.min(u.bottom).saturating_sub(a.top)) + 1,
        (None, Some(u)) => u64::from(u.bottom - u.top) + 1,
        _ => 0,
    };
    let delivered = cells.len() as u64;
    let next = offset + delivered;
    let shown = used.map(|u| {
        let a = area.unwrap_or(u);
        a1_range(Area {
            top: a.top + offset as u32,
            bottom: (a.top + next.max(1) as u32 - 1).max(a.top + offset as u32),
            ..a
        })
    });
    Ok(ReadAnswer {
        kind: "sheet".into(),
        offset: Some(offset),
        count: Some(delivered),
        total: Some(total),
        next_offset: (next < total).then_some(next),
        truncated,
        sheet: Some(name),
        sheets: Some(names),
        range: shown,
        rows: Some(cells),
        ..ReadAnswer::default()
    })
}

fn pick_sheet(names: &[String], wanted: Option<&str>) -> Result<String, FileError> {
    match wanted {
        None => names
            .first()
            .cloned()
            .ok_or_else(|| FileError::Parse("the workbook has no sheet".into())),
        Some(s) if names.iter().any(|n| n == s) => Ok(s.to_owned()),
        Some(s) => s
            .parse::<usize>()
            .ok()
            .and_then(|i| names.get(i).cloned())
            .ok_or_else(|| {
                FileError::Invalid(format!(
                    "no sheet '{s}'; the sheets are: {}",
                    names.join(", ")
                ))
            }),
    }
}

/// Calls `visit(row number within the area, cells)` for rows `[skip, skip + take)` of `area`
/// (the used range when `None`), each row as wide as the area. Returns the sheet's used range.
fn rows<RS: Read + Seek>(
    book: &mut Sheets<RS>,
    name: &str,
    area: Option<Area>,
    skip: u64,
    take: u64,
    visit: &mut dyn FnMut(u64, &[Data]),
) -> Result<Option<Area>, FileError> {
    let sheet_error =
        |e: &dyn std::fmt::Display| FileError::Parse(format!("sheet '{name}' cannot be read: {e}"));
    if let Sheets::Xlsx(xlsx) = book {
        let mut cells = xlsx
            .worksheet_cells_reader(name)
            .map_err(|e| sheet_error(&e))?;
        let dims = cells.dimensions();
        let used = (dims.len() > 0).then_some(Area {
            top: dims.start.0,
            left: dims.start.1,
            bottom: dims.end.0,
            right: dims.end.1,
        });
        // A sheet without cells still declares "A1": look at the first cell to tell.
        let mut pending = cells.next_cell().map_err(|e| sheet_error(&e))?;
        let (Some(used), true) = (used, pending.is_some()) else {
            return Ok(None);
        };
        let a = area.unwrap_or(used);
        let first = u64::from(a.top) + skip;
        let last = (u64::from(a.bottom)).min(first.saturating_add(take).saturating_sub(1));
        if take == 0 || first > last {
            return Ok(Some(used));
        }
        let width = (a.right - a.left + 1) as usize;
        let mut row: Vec<Data> = vec![Data::Empty; width];
        let mut at = first;
        loop {
            let cell = match pending.take() {
                Some(cell) => cell,
                None => match cells.next_cell().map_err(|e| sheet_error(&e))? {
                    Some(cell) => cell,
                    None => break,
                },
            };
            let (r, c) = cell.get_position();
            let r = u64::from(r);
            if r < at {
                continue;
            }
            // Emit the rows before this cell's row (empty rows included).
            while at < r && at <= last {
                visit(at - u64::from(a.top), &row);
                row.iter_mut().for_each(|d| *d = Data::Empty);
                at += 1;
            }
            if at > last {
                break;
            }
            if c >= a.left && c <= a.right {
                row[(c - a.left) as usize] = cell.get_value().clone().into();
            }
        }
        while at <= last {
            visit(at - u64::from(a.top), &row);
            row.iter_mut().for_each(|d| *d = Data::Empty);
            at += 1;
        }
        return Ok(Some(used));
    }
    let range = book.worksheet_range(name).map_err(|e| sheet_error(&e))?;
    let (Some(start), Some(end)) = (range.start(), range.end()) else {
        return Ok(None);
    };
    let used = Area {
        top: start.0,
        left: start.1,
        bottom: end.0,
        right: end.1,
    };
    let a = area.unwrap_or(used);
    let width = (a.right - a.left + 1) as usize;
    let first = u64::from(a.top) + skip;
    let last = u64::from(a.bottom).min(first.saturating_add(take).saturating_sub(1));
    let mut row = vec![Data::Empty; width];
    let mut r = first;
    while take > 0 && r <= last {
        for (i, slot) in row.iter_mut().enumerate() {
            *slot = range
                .get_value((r as u32, a.left + i as u32))
                .cloned()
                .unwrap_or(Data::Empty);
        }
        visit(r - u64::from(a.top), &row);
        r += 1;
    }
    Ok(Some(used))
}

/// `B2:D10` → the area (0-based, inclusive); a single cell `C3` is a 1×1 area.
fn parse_range(text: &str) -> Result<Area, FileError> {
    let bad = || {
        FileError::Invalid(format!(
            "range '{text}' is not in A1:D100 form (column letters then a row number)"
        ))
    };
    let (a, b) = text.split_once(':').unwrap_or((text, text));
    let (r1, c1) = cell_ref(a.trim()).ok_or_else(bad)?;
    let (r2, c2) = cell_ref(b.trim()).ok_or_else(bad)?;
    Ok(Area {
        top: r1.min(r2),
        left: c1.min(c2),
        bottom: r1.max(r2),
        right: c1.max(c2),
    })
}

fn cell_ref(text: &str) -> Option<(u32, u32)> {
    let text = text.replace('$', "");
    let split = text.find(|c: char| c.is_ascii_digit())?;
    let (letters, digits) = text.split_at(split);
    if letters.is_empty() || letters.len() > 3 || !letters.chars().all(|c| c.is_ascii_alphabetic())
    {
        return None;
    }
    let col = letters.chars().fold(0u32, |acc, c| {
        acc * 26 + (c.to_ascii_uppercase() as u32 - 'A' as u32 + 1)
    });
    let row: u32 = digits.parse().ok()?;
    (row >= 1 && col >= 1).then(|| (row - 1, col - 1))
}

fn a1_range(a: Area) -> String {
    format!(
        "{}{}:{}{}",
        column_name(a.left),
        a.top + 1,
        column_name(a.right),
        a.bottom + 1
    )
}

fn column_name(mut col: u32) -> String {
    let mut name = Vec::new();
    col += 1;
    while col > 0 {
        let rem = (col - 1) % 26;
        name.push(b'A' + rem as u8);
        col = (col - 1) / 26;
    }
    name.reverse();
    String::from_utf8(name).unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a1_references_round_trip() {
        assert_eq!(
            parse_range("B2:D10").unwrap(),
            Area {
                top: 1,
                left: 1,
                bottom: 9,
                right: 3
            }
        );
        assert_eq!(parse_range("$AA$1").unwrap().left, 26);
        assert_eq!(column_name(0), "A");
        assert_eq!(column_name(25), "Z");
        assert_eq!(column_name(26), "AA");
        assert_eq!(column_name(16383), "XFD");
        assert_eq!(a1_range(parse_range("c3:a1").unwrap()), "A1:C3".to_owned());
        assert!(parse_range("1A").is_err());
        assert!(parse_range("A0").is_err());
        assert!(parse_range("").is_err());
    }
}
