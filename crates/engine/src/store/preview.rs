//! The preview a model gets beside a stored answer's summary, so that it can act without
//! opening the file: a table's header and first rows (as CSV), a text's first lines and, for a
//! document, its headings. At most `MAX_PREVIEW` bytes, whatever the answer.

use offload_formats::clip::clip;
use offload_formats::output::{self, Payload};

/// The most a preview holds: with the summary (600 bytes) it stays within 4 KiB.
pub const MAX_PREVIEW: usize = 3 * 1024;
/// Rows of a table shown.
const ROWS: usize = 5;
/// A row or line longer than this is cut.
const LINE: usize = 400;
/// Lines of a text shown.
const LINES: usize = 20;
/// Headings of a document listed.
const HEADINGS: usize = 30;

/// The preview of `payload`, if it has one (a table or a text).
pub fn of(payload: &Payload) -> Option<String> {
    if let Some(source) = output::table_source(payload) {
        return table(&source);
    }
    match payload {
        Payload::Text(text) => Some(text_preview(text)),
        _ => None,
    }
}

fn table(source: &output::TableSource<'_>) -> Option<String> {
    let mut out = String::from("First rows (CSV):\n");
    out.push_str(&csv_line(source.columns.iter().map(String::as_str)));
    let mut shown = 0;
    let mut stopped = false;
    // Stops the walk after the rows shown (an answer of millions of rows is not read through).
    let walked = source.for_each_row(&mut |cells| {
        if shown == ROWS || out.len() >= MAX_PREVIEW {
            stopped = true;
            return Err(std::io::Error::other("enough rows"));
        }
        out.push_str(&csv_line(cells.iter().copied()));
        shown += 1;
        Ok(())
    });
    (walked.is_ok() || stopped).then(|| within(out))
}

/// One CSV line (quoted as CSV quotes), cut at `LINE` bytes.
fn csv_line<'a>(cells: impl Iterator<Item = &'a str>) -> String {
    let mut writer = csv::WriterBuilder::new().from_writer(Vec::new());
    let cells: Vec<&str> = cells.collect();
    if writer.write_record(&cells).is_err() {
        return "\n".to_owned();
    }
    let bytes = writer.into_inner().unwrap_or_default();
    let line = String::from_utf8_lossy(&bytes);
    let line = line.trim_end_matches(['\r', '\n']);
    format!("{}\n", clip(line, LINE))
}

fn text_preview(text: &str) -> String {
    let mut out = String::from("First lines:\n");
    for line in text.lines().take(LINES) {
        if out.len() + line.len().min(LINE) > MAX_PREVIEW / 2 {
            break;
        }
        out.push_str(&clip(line, LINE));
        out.push('\n');
    }
    if output::looks_like_markdown(text) {
        let headings: Vec<(usize, &str)> = text
            .lines()
            .enumerate()
            .filter(|(_, l)| output::is_heading(l))
            .take(HEADINGS + 1)
            .collect();
        if headings.len() > 1 {
            out.push_str("Headings (line: heading):\n");
            for (i, (n, h)) in headings.iter().enumerate() {
                if i == HEADINGS || out.len() + h.len().min(120) + 8 > MAX_PREVIEW {
                    out.push_str("...\n");
                    break;
                }
                out.push_str(&format!("{}: {}\n", n + 1, clip(h, 120)));
            }
        }
    }
    within(out)
}

fn within(text: String) -> String {
    if text.len() <= MAX_PREVIEW {
        return text;
    }
    clip(&text, MAX_PREVIEW).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_table_shows_its_header_and_first_rows_within_the_bound() {
        let rows: Vec<_> = (0..100_000)
            .map(|i| json!({"id": i, "note": format!("x,{}", "y".repeat(i % 900))}))
            .collect();
        let p = of(&Payload::Json(json!(rows))).unwrap();
        assert!(
            p.starts_with("First rows (CSV):\nid,note\n0,\"x,\"\n1,\"x,y\"\n"),
            "{p}"
        );
        assert_eq!(p.lines().count(), 2 + ROWS, "{p}");
        assert!(p.len() <= MAX_PREVIEW);
    }

    #[test]
    fn a_document_shows_its_first_lines_and_headings() {
        let mut doc = String::from("# Guide\n\nintro\n");
        for i in 0..200 {
            doc.push_str(&format!("\n## Part {i}\n\n{}\n", "word ".repeat(100)));
        }
        let p = of(&Payload::Text(doc)).unwrap();
        assert!(p.starts_with("First lines:\n# Guide\n\nintro\n"), "{p}");
        assert!(
            p.contains("Headings (line: heading):\n1: # Guide\n5: ## Part 0\n"),
            "{p}"
        );
        assert!(
            p.ends_with("...\n") && p.len() <= MAX_PREVIEW,
            "{}",
            p.len()
        );
        let plain = of(&Payload::Text("a\nb\n".into())).unwrap();
        assert_eq!(plain, "First lines:\na\nb\n");
        assert!(of(&Payload::Json(json!({"a": 1}))).is_none());
    }
}
