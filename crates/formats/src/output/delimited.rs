//! CSV and TSV (RFC 4180 quoting, by the `csv` crate; TSV uses the same quoting with a tab).

use std::io::Write;

use super::table::{self, Cell};
use super::{Payload, Rendered, TableSource, table_source};

/// Writes one table (of a payload that holds several: the store writes a file per table).
pub fn write_table(
    source: &TableSource<'_>,
    delimiter: u8,
    out: &mut dyn Write,
) -> std::io::Result<()> {
    let mut w = csv::WriterBuilder::new()
        .delimiter(delimiter)
        .terminator(csv::Terminator::CRLF)
        .from_writer(out);
    if !source.columns.is_empty() {
        w.write_record(source.columns.iter())?;
        source.for_each_row(&mut |cells| Ok(w.write_record(cells)?))?;
    }
    w.flush()?;
    Ok(())
}

pub fn write(payload: &Payload, delimiter: u8, out: &mut dyn Write) -> std::io::Result<Rendered> {
    if let Some(source) = table_source(payload) {
        write_table(&source, delimiter, out)?;
        return Ok(Rendered {
            table: Some(source.info),
            ..Rendered::default()
        });
    }
    let mut w = csv::WriterBuilder::new()
        .delimiter(delimiter)
        .terminator(csv::Terminator::CRLF)
        .from_writer(out);
    if let Payload::Text(t) = payload {
        w.write_record(["value"])?;
        w.write_record([t.as_str()])?;
        w.flush()?;
        return Ok(Rendered {
            fallback: true,
            ..Rendered::default()
        });
    }
    let value = payload.to_value()?;
    let (header, rows) = table::fallback(&value);
    w.write_record(&header)?;
    for row in &rows {
        write_cells(&mut w, row)?;
    }
    w.flush()?;
    Ok(Rendered {
        fallback: true,
        ..Rendered::default()
    })
}

fn write_cells<W: Write>(w: &mut csv::Writer<W>, cells: &[Cell<'_>]) -> std::io::Result<()> {
    w.write_record(cells.iter().map(|c| c.as_text().into_owned()))?;
    Ok(())
}
