//! Markdown: a GitHub-flavoured table for table-shaped values, a key/value table for other
//! objects and lists, and text as it is. In a cell only what Markdown would read as markup is
//! backslash-escaped — `|` (the cell's end), `\`, emphasis (`*`, `~`, and `_` at a word's
//! edge), code spans, links, HTML and entities — so `<script>` and `*x*` render as themselves
//! while `p1@example.com` and `address.city` stay as written; line breaks become `<br>`.

use std::io::Write;

use serde_json::Value;

use super::table::{self, Cell};
use super::{Payload, Rendered, TableSource, stream, table_source, table_sources};

pub fn write(payload: &Payload, out: &mut dyn Write) -> std::io::Result<Rendered> {
    match payload {
        Payload::Text(t) | Payload::Json(Value::String(t)) => {
            out.write_all(t.as_bytes())?;
            return Ok(Rendered::default());
        }
        Payload::JsonText {
            shape: stream::Shape::Text { .. },
            text,
        } => {
            let s: String = serde_json::from_str(text).map_err(std::io::Error::other)?;
            out.write_all(s.as_bytes())?;
            return Ok(Rendered::default());
        }
        _ => {}
    }
    if let Some(source) = table_source(payload) {
        write_table(out, &source)?;
        return Ok(Rendered {
            table: Some(source.info),
            ..Rendered::default()
        });
    }
    if let Some(sources) = table_sources(payload) {
        // Several tables: one section each, headed by its field.
        let mut tables = Vec::new();
        for (i, source) in sources.into_iter().enumerate() {
            let name = source.info.path.clone().unwrap_or_default();
            if i > 0 {
                writeln!(out)?;
            }
            writeln!(out, "## {}\n", escape(&name))?;
            if source.info.rows == 0 {
                writeln!(out, "(no rows)")?;
            } else {
                write_table(out, &source)?;
            }
            tables.push(source.info);
        }
        return Ok(Rendered {
            tables,
            ..Rendered::default()
        });
    }
    let value = payload.to_value()?;
    let (header, rows) = table::fallback(&value);
    let header: Vec<String> = header.iter().map(|c| escape(c)).collect();
    write_header(out, &header)?;
    for row in &rows {
        write_row(out, row)?;
    }
    Ok(Rendered {
        fallback: true,
        ..Rendered::default()
    })
}

fn write_table(out: &mut dyn Write, source: &TableSource<'_>) -> std::io::Result<()> {
    let header: Vec<String> = source.columns.iter().map(|c| escape(c)).collect();
    write_header(out, &header)?;
    source.for_each_row(&mut |cells| write_texts(&mut *out, cells))
}

fn write_header(out: &mut dyn Write, header: &[String]) -> std::io::Result<()> {
    if header.is_empty() {
        return Ok(());
    }
    writeln!(out, "| {} |", header.join(" | "))?;
    writeln!(out, "|{}|", vec![" --- "; header.len()].join("|"))
}

fn write_texts(out: &mut dyn Write, cells: &[&str]) -> std::io::Result<()> {
    if cells.is_empty() {
        return Ok(());
    }
    let cells: Vec<String> = cells.iter().map(|c| escape(c)).collect();
    writeln!(out, "| {} |", cells.join(" | "))
}

fn write_row(out: &mut dyn Write, cells: &[Cell<'_>]) -> std::io::Result<()> {
    let texts: Vec<_> = cells.iter().map(Cell::as_text).collect();
    let refs: Vec<&str> = texts.iter().map(|t| t.as_ref()).collect();
    write_texts(out, &refs)
}

/// Escapes one cell: characters Markdown would read as markup get a backslash, line breaks
/// become `<br>`, and surrounding spaces are kept as entities so renderers do not trim them.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    let chars: Vec<char> = text.chars().collect();
    for (i, &c) in chars.iter().enumerate() {
        let word = |j: Option<&char>| j.is_some_and(|c| c.is_alphanumeric());
        match c {
            '\r' if chars.get(i + 1) == Some(&'\n') => {}
            '\r' | '\n' => out.push_str("<br>"),
            '|' | '\\' | '*' | '`' | '[' | ']' | '<' | '>' | '~' => {
                out.push('\\');
                out.push(c);
            }
            // Inside a word (`snake_case`) an underscore is no emphasis.
            '_' if !(word(i.checked_sub(1).and_then(|j| chars.get(j)))
                && word(chars.get(i + 1))) =>
            {
                out.push_str("\\_");
            }
            // An entity (`&amp;`, `&#35;`) would be decoded.
            '&' if chars
                .get(i + 1)
                .is_some_and(|n| n.is_alphanumeric() || *n == '#') =>
            {
                out.push_str("\\&");
            }
            // `!` before `[` would start an image; `[` is escaped already.
            c => out.push(c),
        }
    }
    // Leading/trailing spaces are trimmed by table renderers: keep them as entities.
    let lead = out.len() - out.trim_start_matches(' ').len();
    let trail = out.len() - out.trim_end_matches(' ').len();
    if lead == 0 && trail == 0 {
        return out;
    }
    if out.chars().all(|c| c == ' ') {
        return "&#32;".repeat(out.len());
    }
    format!(
        "{}{}{}",
        "&#32;".repeat(lead),
        &out[lead..out.len() - trail],
        "&#32;".repeat(trail)
    )
}
