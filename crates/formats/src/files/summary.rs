//! `summarize_file`: the first lines, the last five when there is more, an exact line count
//! (estimated, and said so, past a size limit), encoding and content type.

use schemars::JsonSchema;
use serde::Serialize;

use super::text::Budget;
use super::{FileError, Inspector, Kind, Observer, Probe};

/// Bytes of one line shown before it is cut.
const LINE_CAP: usize = 400;
/// Lines shown from the end.
const TAIL: u64 = 5;

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Summary {
    pub path: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub size: u64,
    /// Lines in the file (0 for binary files).
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub line_count: u64,
    /// False when the count was estimated (very large files).
    pub line_count_exact: bool,
    pub extension: String,
    pub content_type: String,
    /// `utf-8`, `utf-16le (bom)`, `windows-1252`, ..., or `binary`.
    pub encoding: String,
    /// The first `max_lines` lines, joined with newlines; long lines cut with a marker.
    pub head: String,
    /// The last 5 lines, only when the file has more than `max_lines + 5` lines.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tail: Option<String>,
    /// Whether anything was left out (lines between head and tail, or cut lines).
    pub truncated: bool,
    /// For files that are not text: what they are and which tool reads them.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

pub fn of(
    inspector: &Inspector,
    probe: Probe,
    max_lines: u64,
    observer: &dyn Observer,
) -> Result<Summary, FileError> {
    let mut summary = Summary {
        path: probe.path.display().to_string(),
        size: probe.size,
        line_count: 0,
        line_count_exact: true,
        extension: probe.extension(),
        content_type: probe.content_type(),
        encoding: "binary".into(),
        head: String::new(),
        tail: None,
        truncated: false,
        note: None,
    };
    if matches!(
        probe.kind,
        Kind::Binary { .. }
            | Kind::Sheet
            | Kind::Parquet
            | Kind::Pdf
            | Kind::Docx
            | Kind::Image { .. }
    ) {
        let reader = match probe.kind {
            Kind::Binary { .. } => "",
            _ => " or read_file",
        };
        summary.note = Some(format!(
            "{}; it has no lines to show. Use get_file_schema{reader} instead.",
            probe.identify()
        ));
        return Ok(summary);
    }
    let text = inspector.text(probe)?;
    summary.encoding = text.encoding.name();
    let (lines, exact) = text.line_count(inspector.settings.exact_count_limit, observer)?;
    summary.line_count = lines;
    summary.line_count_exact = exact;
    let budget = Budget {
        total: inspector.settings.budget / 2,
        line: LINE_CAP,
    };
    let head = text.page(0, max_lines, budget, observer)?;
    summary.head = head.text;
    summary.truncated = head.cut.is_some() || summary.head.contains("[... line cut:");
    if lines > max_lines + TAIL {
        let tail = text.tail(TAIL, budget)?;
        summary.truncated = true;
        summary.tail = Some(cut_lines(&tail.text, LINE_CAP));
    } else if lines > head.lines {
        // Fewer than 5 lines past the head: no tail (it would repeat head lines).
        summary.truncated = true;
    }
    Ok(summary)
}

/// Each line of `text` cut to `cap` bytes with a marker.
fn cut_lines(text: &str, cap: usize) -> String {
    text.split('\n')
        .map(|line| {
            if line.len() <= cap {
                return line.to_owned();
            }
            let mut end = cap;
            while !line.is_char_boundary(end) {
                end -= 1;
            }
            format!(
                "{} [... line cut: {} more bytes]",
                &line[..end],
                line.len() - end
            )
        })
        .collect::<Vec<_>>()
        .join("\n")
}
