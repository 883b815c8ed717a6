//! `get_file_schema`, `summarize_file` and `read_file`: the path goes through the roots guard,
//! the work runs on a blocking thread (the file tools are synchronous and streaming), progress
//! is forwarded when the client asked for it, and a cancelled request stops the scan.

use std::path::Path;
use std::sync::Arc;

use base64::Engine as _;
use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock as Content, ProgressNotificationParam};
use rmcp::service::RequestContext;
use tokio_util::sync::CancellationToken;

use super::{answer, params};
use crate::{Engine, ToolError};
use offload_formats::files::{
    FileError, Inspector, Observer, ReadAnswer, ReadRequest, Schema, Source, Summary,
};

pub async fn get_file_schema(
    engine: &Arc<Engine>,
    p: params::GetFileSchema,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    let sample_rows = p.sample_rows.min(50);
    let result = run(engine, p.path, ctx, move |files, file, path, observer| {
        files.schema(file, path, sample_rows, observer)
    })
    .await;
    match result {
        Ok(schema) => answer::structured(&schema, schema_text(&schema)),
        Err(e) => answer::error(&e),
    }
}

pub async fn summarize_file(
    engine: &Arc<Engine>,
    p: params::SummarizeFile,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    let max_lines = p.max_lines.min(10_000);
    let result = run(engine, p.path, ctx, move |files, file, path, observer| {
        files.summarize(file, path, max_lines, observer)
    })
    .await;
    match result {
        Ok(summary) => answer::structured(&summary, summary_text(&summary)),
        Err(e) => answer::error(&e),
    }
}

/// `read_file` as a model gets it: the page within the inline budget, sent once — as text
/// under a one-line header (clients that show structured content would otherwise get it as
/// escaped JSON, and the rest twice) — with its numbers in `_meta` for programs.
pub async fn read_file(
    engine: &Arc<Engine>,
    p: params::ReadFile,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    // The header line shares the inline budget with the page (images have a budget of their
    // own); a page gets at least `HEADER_ROOM` bytes.
    let budget = (engine.limits().inline_bytes as usize).saturating_sub(HEADER_ROOM);
    match read_page(engine, p, ctx, Some(budget.max(HEADER_ROOM))).await {
        Ok(read) => page_answer(read),
        Err(e) => answer::error(&e),
    }
}

/// Room kept in the inline budget for a page's header line.
const HEADER_ROOM: usize = 512;

/// Where a page's numbers (offsets, totals, what comes next) travel beside its text.
pub const PAGE_META: &str = "dev.offload/page";

/// The part of the file `p` names, within `budget` bytes of text (the inspector's when `None`).
pub async fn read_page(
    engine: &Arc<Engine>,
    p: params::ReadFile,
    ctx: &RequestContext<RoleServer>,
    budget: Option<usize>,
) -> Result<ReadAnswer, ToolError> {
    if p.is_url == Some(true) && !crate::urls::is_url(&p.path) {
        return Err(ToolError::new(
            crate::ErrorCode::InvalidArguments,
            format!("isUrl is true but {:?} is not an http(s):// URL", p.path),
        )
        .with("path", p.path));
    }
    let request = ReadRequest {
        offset: p.offset,
        length: p.length,
        sheet: p.sheet,
        range: p.range,
        byte_offset: p.byte_offset,
        budget,
    };
    run(engine, p.path, ctx, move |files, file, path, observer| {
        files.read(file, path, &request, observer)
    })
    .await
}

/// A page as one text block (header line, then the page) and its images; the numbers of the
/// header again, as JSON, in `_meta` — never the page itself.
fn page_answer(mut read: ReadAnswer) -> CallToolResult {
    let images = std::mem::take(&mut read.images_data);
    let mut result = CallToolResult::success(vec![Content::text(read_text(&read))]);
    read.content = None;
    read.rows = None;
    if let Ok(serde_json::Value::Object(numbers)) = serde_json::to_value(&read) {
        let mut meta = rmcp::model::MetaObject::new();
        meta.insert(PAGE_META.into(), serde_json::Value::Object(numbers));
        result.meta = Some(meta);
    }
    // An image file is its picture (first); a PDF's images follow its pages' text.
    let at = if read.kind == "image" { 0 } else { 1 };
    for (i, (bytes, mime)) in images.into_iter().enumerate() {
        let data = base64::engine::general_purpose::STANDARD.encode(bytes);
        result.content.insert(at + i, Content::image(data, mime));
    }
    result
}

/// What the blocking work sees: progress goes to the client, cancellation comes from it.
struct Watch {
    cancel: CancellationToken,
    progress: Option<tokio::sync::mpsc::UnboundedSender<(u64, u64)>>,
    /// The last progress reported, `(done, total)`, for the log of a cancelled scan.
    reached: std::sync::Mutex<(u64, u64)>,
}

impl Observer for Watch {
    fn progress(&self, done: u64, total: u64) {
        if let Ok(mut reached) = self.reached.lock() {
            *reached = (done, total);
        }
        if let Some(tx) = &self.progress {
            let _ = tx.send((done, total));
        }
    }
    fn cancelled(&self) -> bool {
        self.cancel.is_cancelled()
    }
}

/// Resolves `path` inside the roots (or fetches it, for an allowed URL), opens it through the
/// guard and runs `work` on it.
async fn run<T: Send + 'static>(
    engine: &Arc<Engine>,
    path: String,
    ctx: &RequestContext<RoleServer>,
    work: impl FnOnce(&Inspector, Source, &Path, &dyn Observer) -> Result<T, FileError> + Send + 'static,
) -> Result<T, ToolError> {
    let token = ctx.meta.get_progress_token();
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    let watch = Watch {
        cancel: ctx.ct.clone(),
        progress: token.is_some().then_some(tx),
        reached: std::sync::Mutex::default(),
    };
    // A URL is fetched into a stored download first, then read as that file.
    let path = super::downloads::localize(engine, &path).await?;
    let engine = engine.clone();
    let job = tokio::task::spawn_blocking(move || {
        let (source, shown) = engine.roots().open(&path)?;
        let result = work(&engine.files, source, &shown, &watch);
        if let Err(FileError::Cancelled) = &result {
            // The client gave up and hears nothing more of this request; the log says where
            // the scan stopped.
            let (done, total) = watch.reached.lock().map(|r| *r).unwrap_or_default();
            tracing::info!(path, done, total, "cancelled: the scan stopped");
        }
        result.map_err(|e| ToolError::from(e).with("path", path))
    });
    let peer = ctx.peer.clone();
    let forward = async move {
        while let Some((done, total)) = rx.recv().await {
            if let Some(token) = &token {
                let mut p = ProgressNotificationParam::new(token.clone(), done as f64);
                p.total = Some(total as f64);
                let _ = peer.notify_progress(p).await;
            }
        }
    };
    let (result, ()) = tokio::join!(job, forward);
    result.map_err(|e| ToolError::new(crate::ErrorCode::Internal, e.to_string()))?
}

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
