//! HTML: a complete UTF-8 document with a `<table>` for table-shaped values (key/value table for
//! other objects and lists) and `<pre>` for text. Every piece of data goes through
//! `html_escape::encode_text`, so `<script>` is text, never markup.

use std::io::Write;

use html_escape::encode_text;
use serde_json::Value;

use super::table::{self, Cell};
use super::{Payload, Rendered, TableInfo};

const HEAD: &str = "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Offload response</title>\n\
<style>table{border-collapse:collapse}th,td{border:1px solid #999;padding:2px 6px;\
vertical-align:top;white-space:pre-wrap}</style>\n</head>\n<body>\n";
const TAIL: &str = "</body>\n</html>\n";

pub fn write(payload: &Payload, out: &mut dyn Write) -> std::io::Result<Rendered> {
    out.write_all(HEAD.as_bytes())?;
    let rendered = match payload {
        Payload::Text(t) => pre(out, t)?,
        Payload::Json(Value::String(s)) => pre(out, s)?,
        Payload::Json(v) => match table::find(v) {
            Some(view) => {
                let cols = table::columns(view.rows);
                let header: Vec<&str> = cols.iter().map(String::as_str).collect();
                open_table(out, &header)?;
                for row in view.rows {
                    write_row(out, &table::row_cells(row, &cols))?;
                }
                out.write_all(b"</tbody>\n</table>\n")?;
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
                let (header, rows) = table::fallback(v);
                open_table(out, &header)?;
                for row in &rows {
                    write_row(out, row)?;
                }
                out.write_all(b"</tbody>\n</table>\n")?;
                Rendered {
                    fallback: true,
                    ..Rendered::default()
                }
            }
        },
    };
    out.write_all(TAIL.as_bytes())?;
    Ok(rendered)
}

fn pre(out: &mut dyn Write, text: &str) -> std::io::Result<Rendered> {
    writeln!(out, "<pre>{}</pre>", encode_text(text))?;
    Ok(Rendered::default())
}

fn open_table(out: &mut dyn Write, header: &[&str]) -> std::io::Result<()> {
    out.write_all(b"<table>\n<thead>\n<tr>")?;
    for h in header {
        write!(out, "<th>{}</th>", encode_text(h))?;
    }
    out.write_all(b"</tr>\n</thead>\n<tbody>\n")
}

fn write_row(out: &mut dyn Write, cells: &[Cell<'_>]) -> std::io::Result<()> {
    out.write_all(b"<tr>")?;
    for c in cells {
        write!(out, "<td>{}</td>", encode_text(&c.as_text()))?;
    }
    out.write_all(b"</tr>\n")
}
