//! CSV and TSV (RFC 4180 quoting, by the `csv` crate; TSV uses the same quoting with a tab).

use std::io::Write;

use super::table::{self, Cell};
use super::{Payload, Rendered, TableInfo};

pub fn write(payload: &Payload, delimiter: u8, out: &mut dyn Write) -> std::io::Result<Rendered> {
    let mut w = csv::WriterBuilder::new()
        .delimiter(delimiter)
        .terminator(csv::Terminator::CRLF)
        .from_writer(out);
    let value = match payload {
        Payload::Json(v) => v,
        Payload::Text(t) => {
            w.write_record(["value"])?;
            w.write_record([t.as_str()])?;
            w.flush()?;
            return Ok(Rendered {
                fallback: true,
                ..Rendered::default()
            });
        }
    };
    let rendered = match table::find(value) {
        Some(view) => {
            let cols = table::columns(view.rows);
            if !cols.is_empty() {
                w.write_record(cols.iter())?;
                for row in view.rows {
                    write_cells(&mut w, &table::row_cells(row, &cols))?;
                }
            }
            let types = table::column_types(view.rows, &cols);
            Rendered {
                table: Some(TableInfo {
                    path: view.path.map(str::to_owned),
                    rows: view.rows.len(),
                    columns: cols.into_iter().zip(types).collect(),
                }),
                ..Rendered::default()
            }
        }
        None => {
            let (header, rows) = table::fallback(value);
            w.write_record(&header)?;
            for row in &rows {
                write_cells(&mut w, row)?;
            }
            Rendered {
                fallback: true,
                ..Rendered::default()
            }
        }
    };
    w.flush()?;
    Ok(rendered)
}

fn write_cells<W: Write>(w: &mut csv::Writer<W>, cells: &[Cell<'_>]) -> csv::Result<()> {
    w.write_record(cells.iter().map(|c| c.as_text().into_owned()))
}
