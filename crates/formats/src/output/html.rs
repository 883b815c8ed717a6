//! HTML: a complete UTF-8 document with a `<table>` for table-shaped values (key/value table for
//! other objects and lists) and `<pre>` for text. Every piece of data goes through
//! `html_escape::encode_text`, so `<script>` is text, never markup.

use std::io::Write;

use html_escape::encode_text;
use serde_json::Value;

use super::table::{self, Cell};
use super::{Payload, Rendered, TableSource, stream, table_source, table_sources};

const HEAD: &str = "<!DOCTYPE html>\n<html>\n<head>\n<meta charset=\"utf-8\">\n<title>Offload response</title>\n\
<style>table{border-collapse:collapse}th,td{border:1px solid #999;padding:2px 6px;\
vertical-align:top;white-space:pre-wrap}</style>\n</head>\n<body>\n";
const TAIL: &str = "</body>\n</html>\n";

pub fn write(payload: &Payload, out: &mut dyn Write) -> std::io::Result<Rendered> {
    out.write_all(HEAD.as_bytes())?;
    let rendered = match payload {
        Payload::Text(t) | Payload::Json(Value::String(t)) => pre(out, t)?,
        Payload::JsonText {
            shape: stream::Shape::Text { .. },
            text,
        } => {
            let s: String = serde_json::from_str(text).map_err(std::io::Error::other)?;
            pre(out, &s)?
        }
        _ => match (table_source(payload), table_sources(payload)) {
            (Some(source), _) => {
                write_table(out, &source)?;
                Rendered {
                    table: Some(source.info),
                    ..Rendered::default()
                }
            }
            (None, Some(sources)) => {
                // Several tables: one section each, headed by its field.
                let mut tables = Vec::new();
                for source in sources {
                    let name = source.info.path.clone().unwrap_or_default();
                    writeln!(out, "<h2>{}</h2>", encode_text(&name))?;
                    if source.info.rows == 0 {
                        out.write_all(b"<p>(no rows)</p>\n")?;
                    } else {
                        write_table(out, &source)?;
                    }
                    tables.push(source.info);
                }
                Rendered {
                    tables,
                    ..Rendered::default()
                }
            }
            (None, None) => {
                let value = payload.to_value()?;
                let (header, rows) = table::fallback(&value);
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

fn write_table(out: &mut dyn Write, source: &TableSource<'_>) -> std::io::Result<()> {
    let header: Vec<&str> = source.columns.iter().map(String::as_str).collect();
    open_table(out, &header)?;
    source.for_each_row(&mut |cells| write_texts(&mut *out, cells))?;
    out.write_all(b"</tbody>\n</table>\n")
}

fn open_table(out: &mut dyn Write, header: &[&str]) -> std::io::Result<()> {
    out.write_all(b"<table>\n<thead>\n<tr>")?;
    for h in header {
        write!(out, "<th>{}</th>", encode_text(h))?;
    }
    out.write_all(b"</tr>\n</thead>\n<tbody>\n")
}

fn write_texts(out: &mut dyn Write, cells: &[&str]) -> std::io::Result<()> {
    out.write_all(b"<tr>")?;
    for c in cells {
        write!(out, "<td>{}</td>", encode_text(c))?;
    }
    out.write_all(b"</tr>\n")
}

fn write_row(out: &mut dyn Write, cells: &[Cell<'_>]) -> std::io::Result<()> {
    let texts: Vec<_> = cells.iter().map(Cell::as_text).collect();
    let refs: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
    write_texts(out, &refs)
}
