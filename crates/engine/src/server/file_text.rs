//! The file tools' answers as text: what a model reads of a schema, a summary or a page (the
//! human CLI prints the same).

use offload_formats::files::{ReadAnswer, Schema, Summary};

/// A schema as text.
pub fn schema_text(schema: &Schema) -> String {
    use offload_formats::files::schema::Detail;
    let head = format!("{} ({}, {} bytes)", schema.path, schema.format, schema.size);
    let mut text = match &schema.detail {
        Detail::Delimited(d) => {
            let mut t = format!(
                "{head}: {} rows x {} columns, delimiter {:?}, {}header, {}, types from {}\n",
                d.row_count,
                d.columns.len(),
                d.delimiter,
                if d.has_header { "" } else { "no " },
                d.encoding,
                d.typed_from.replace('_', " ")
            );
            column_lines(&mut t, &d.columns);
            for w in &d.warnings {
                t.push_str(&format!("warning: {w}\n"));
            }
            t
        }
        Detail::Data(d) => {
            let count = d
                .element_count
                .map_or(String::new(), |n| format!(", {n} elements"));
            format!("{head}: root {}{count}\n{}\n", d.root_type, d.outline)
        }
        Detail::Xml(x) => {
            let mut t = format!(
                "{head}: root <{}>{}, {} elements\n",
                x.root,
                attributes(&x.root_attributes),
                x.element_count
            );
            for c in &x.children {
                t.push_str(&format!(
                    "- <{}> x{}{}{}\n",
                    c.name,
                    c.count,
                    attributes(&c.attributes),
                    if c.children.is_empty() {
                        String::new()
                    } else {
                        format!(", holding {}", c.children.join(", "))
                    }
                ));
            }
            t
        }
        Detail::Sheets(book) => {
            let mut t = format!("{head}: {} sheets\n", book.sheets.len());
            for sheet in &book.sheets {
                t.push_str(&format!(
                    "sheet {:?}: {} rows x {} columns{}\n",
                    sheet.name,
                    sheet.rows,
                    sheet.columns_count,
                    sheet
                        .dimensions
                        .as_deref()
                        .map(|d| format!(" ({d})"))
                        .unwrap_or_default()
                ));
                column_lines(&mut t, &sheet.columns);
            }
            t
        }
        Detail::Pdf(p) => {
            let mut t = format!(
                "{head}: {} pages, PDF {}{}\n",
                p.pages,
                p.version,
                if p.encrypted { ", encrypted" } else { "" }
            );
            for (key, value) in &p.metadata {
                t.push_str(&format!("- {key}: {value}\n"));
            }
            match &p.images {
                Some(pages) if !pages.is_empty() => {
                    let each: Vec<String> = pages
                        .iter()
                        .map(|(page, n)| format!("page {page}: {n}"))
                        .collect();
                    t.push_str(&format!("embedded images: {}\n", each.join(", ")));
                }
                Some(_) => t.push_str("no embedded images\n"),
                None => {}
            }
            t
        }
        Detail::Docx(d) => {
            let mut t = format!(
                "{head}: Word document, {} blocks ({} paragraphs, {} tables), {} words; \
                 read_file pages by blocks\n",
                d.blocks, d.paragraphs, d.tables, d.words
            );
            for h in &d.outline {
                let indent = "  ".repeat(usize::from(h.level.saturating_sub(1)));
                t.push_str(&format!("{indent}- {} (block {})\n", h.text, h.block));
            }
            t
        }
        Detail::Parquet(p) => {
            let mut t = format!(
                "{head}: Parquet, {} rows in {} row groups, {} columns\n",
                p.rows,
                p.row_groups,
                p.columns.len()
            );
            for c in &p.columns {
                let nulls = match c.null_count {
                    Some(n) if n > 0 => format!(", {n} null"),
                    _ => String::new(),
                };
                let range = match (&c.min, &c.max) {
                    (Some(lo), Some(hi)) => format!("; {lo} .. {hi}"),
                    _ => String::new(),
                };
                t.push_str(&format!(
                    "- {}: {} ({}){nulls}{range}\n",
                    c.name, c.kind, c.arrow_type
                ));
            }
            t
        }
        Detail::Image(i) => format!(
            "{head}: {} image, {} x {} pixels\n",
            i.mime_type, i.width, i.height
        ),
        Detail::Text(x) => format!(
            "{head}: {} {}, {}{} lines\n",
            x.encoding,
            x.content_type,
            if x.line_count_exact { "" } else { "about " },
            x.line_count
        ),
        Detail::Binary(b) => format!("{head}: {} ({})\n", b.description, b.content_type),
    };
    if let Some(note) = &schema.note {
        text.push_str(&format!("note: {note}\n"));
    }
    text.trim_end().to_owned()
}

/// One line per column: its type, empty values, samples.
fn column_lines(t: &mut String, columns: &[offload_formats::files::columns::Column]) {
    for c in columns {
        let kind = c
            .kind
            .and_then(|k| serde_json::to_value(k).ok())
            .and_then(|v| v.as_str().map(str::to_owned))
            .unwrap_or_else(|| "empty".into());
        let nulls = match c.null_count {
            Some(n) if n > 0 => format!(", {n} empty"),
            None if c.nullable => ", has empty values".into(),
            _ => String::new(),
        };
        t.push_str(&format!(
            "- {}: {kind}{nulls}; e.g. {}\n",
            c.name,
            c.samples
                .iter()
                .map(|s| s.replace('\n', "\\n").replace('\r', "\\r"))
                .collect::<Vec<_>>()
                .join(" | ")
        ));
    }
}

fn attributes(names: &[String]) -> String {
    if names.is_empty() {
        String::new()
    } else {
        format!(" [attributes: {}]", names.join(", "))
    }
}

pub fn summary_text(s: &Summary) -> String {
    let count = if s.line_count_exact {
        format!("{} lines", s.line_count)
    } else {
        format!("about {} lines (estimated)", s.line_count)
    };
    let mut text = format!(
        "{} ({} bytes, {count}, {}, {})",
        s.path, s.size, s.encoding, s.content_type
    );
    if let Some(note) = &s.note {
        text.push_str(&format!("\n{note}"));
        return text;
    }
    text.push_str(&format!("\n--- first lines ---\n{}", s.head));
    if let Some(tail) = &s.tail {
        text.push_str(&format!("\n--- last 5 lines ---\n{tail}"));
    } else if s.truncated {
        text.push_str("\n--- (more lines follow; page with read_file) ---");
    }
    text
}

pub fn read_text(r: &ReadAnswer) -> String {
    let mut head = format!("{} ({}", r.path, r.kind);
    if let Some(info) = &r.image {
        return format!(
            "{}: {} image {}x{}, {} bytes; shown as {} {}x{} ({} bytes)",
            r.path,
            info.format,
            info.width,
            info.height,
            info.bytes,
            info.shown_mime_type,
            info.shown_width,
            info.shown_height,
            info.shown_bytes
        );
    }
    let unit = match r.kind.as_str() {
        "sheet" | "table" => "rows",
        "pdf" => "pages",
        "document" => "blocks",
        _ => "lines",
    };
    if let Some(sheet) = &r.sheet {
        head.push_str(&format!(", sheet {sheet:?}"));
        if let Some(range) = &r.range {
            head.push_str(&format!(" {range}"));
        }
    }
    // Pages are numbered as a person reads them (from 1), like the page markers; lines and
    // rows by their 0-based offsets.
    let first = u64::from(unit == "pages");
    match (r.offset, r.count) {
        (Some(o), Some(n)) if n > 0 => {
            head.push_str(&format!(", {unit} {}-{}", o + first, o + n - 1 + first))
        }
        (None, Some(n)) => head.push_str(&format!(", last {n} {unit}")),
        _ => head.push_str(&format!(", no {unit}")),
    }
    if let Some(total) = r.total {
        head.push_str(&format!(" of {total}"));
    }
    if let Some(enc) = &r.encoding {
        head.push_str(&format!(", {enc}"));
    }
    head.push(')');
    let mut tail = Vec::new();
    if let Some(next) = r.next_offset {
        tail.push(format!("next_offset={next}"));
    }
    if let Some(next) = r.next_byte_offset {
        tail.push(format!("next_byte_offset={next}"));
    }
    if r.truncated {
        tail.push("cut by the size budget".into());
    }
    if let Some(note) = &r.note {
        tail.push(note.clone());
    }
    if !tail.is_empty() {
        head.push_str(&format!(" [{}]", tail.join("; ")));
    }
    let header = r
        .columns
        .as_ref()
        .map(|c| format!("{}\n", serde_json::to_string(c).unwrap_or_default()))
        .unwrap_or_default();
    let body = match (&r.content, &r.rows) {
        (Some(c), _) => c.clone(),
        (None, Some(rows)) => rows
            .iter()
            .map(|row| serde_json::to_string(row).unwrap_or_default())
            .collect::<Vec<_>>()
            .join("\n"),
        _ => String::new(),
    };
    format!("{head}\n{header}{body}")
}
