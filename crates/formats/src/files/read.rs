//! `read_file`: text pages and tails, sheet ranges, PDF pages, images — each within the budget.

use super::reading::{ReadAnswer, ReadRequest};
use super::text::Budget;
use super::{FileError, Inspector, Kind, Observer, Probe};

pub fn of(
    inspector: &Inspector,
    probe: Probe,
    request: &ReadRequest,
    observer: &dyn Observer,
) -> Result<ReadAnswer, FileError> {
    let path = probe.path.display().to_string();
    let settings = super::Settings {
        budget: request.budget.unwrap_or(inspector.settings.budget),
        ..inspector.settings.clone()
    };
    let budget = settings.budget;
    let mut answer = match probe.kind.clone() {
        Kind::Sheet => super::sheet::read(probe, request, budget)?,
        Kind::Parquet => super::parquet::read(probe, request, budget)?,
        Kind::Pdf => super::pdf::read(probe, request, &settings)?,
        Kind::Docx => super::docx::read(probe, request, budget)?,
        Kind::Image { format } => super::image::read(probe, format, &settings)?,
        Kind::Binary { .. } => return Err(FileError::Binary(probe.describe())),
        _ => text(inspector, probe, request, budget, observer)?,
    };
    answer.path = path;
    Ok(answer)
}

fn text(
    inspector: &Inspector,
    probe: Probe,
    request: &ReadRequest,
    budget: usize,
    observer: &dyn Observer,
) -> Result<ReadAnswer, FileError> {
    if request.sheet.is_some() || request.range.is_some() {
        return Err(FileError::Invalid(
            "sheet and range apply to spreadsheets; this is a text file (page it with offset and \
             length)"
                .into(),
        ));
    }
    let text = inspector.text(probe)?;
    let page = if let Some(at) = request.byte_offset {
        text.slice(at, budget)?
    } else if request.offset < 0 {
        text.tail(request.offset.unsigned_abs(), Budget::of(budget))?
    } else {
        text.page(
            request.offset as u64,
            request.length,
            Budget::of(budget),
            observer,
        )?
    };
    let note = match (&page.total_lines, page.lines, request.offset) {
        (Some(total), 0, o) if o > 0 && o as u64 >= *total => Some(format!(
            "offset {o} is past the end: the file has {total} lines"
        )),
        _ => None,
    };
    Ok(ReadAnswer {
        kind: "text".into(),
        content: Some(page.text),
        encoding: Some(text.encoding.name()),
        offset: page.first_line,
        count: Some(page.lines),
        total: page.total_lines,
        next_offset: page.next_offset,
        next_byte_offset: page.next_byte_offset,
        truncated: page.cut.is_some(),
        note,
        ..ReadAnswer::default()
    })
}
