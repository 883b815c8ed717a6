//! PDF documents: page count and metadata (lopdf), and the text of pages (pdf-extract) as
//! markdown with page markers.
//!
//! Text extraction runs in a child process (`offload pdf-text`) that is killed at the deadline,
//! so a hostile or pathological PDF cannot keep a CPU busy after the answer: the deadline really
//! stops the work. The child gets the bytes on stdin (from the file handle the roots guard
//! opened, never a path) and writes one JSON line per page. Without a helper (tests, the human
//! CLI) extraction runs in-process, pages checked against the deadline one by one.

use std::io::{BufRead, BufReader, Read, Write};
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::pdf_images::{self, PageImages};
use super::reading::{ReadAnswer, ReadRequest};
use super::{FileError, Probe, Settings};

/// The largest PDF read (the whole document is parsed in memory).
const MAX_PDF: u64 = 512 << 20;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct PdfSchema {
    pub pages: u64,
    pub version: String,
    pub encrypted: bool,
    /// Title, author, subject, keywords, creator, producer, dates — those present.
    pub metadata: std::collections::BTreeMap<String, String>,
    /// Embedded images by page (from 1), pages without any left out; absent if not counted in
    /// time.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub images: Option<std::collections::BTreeMap<u32, u32>>,
}

/// One line of the extraction protocol.
#[derive(Debug, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Line {
    Pages(u32),
    Page {
        number: u32,
        text: String,
    },
    /// The images of the page just sent.
    Images {
        number: u32,
        images: PageImages,
    },
    /// Images on each page, when only they were asked for.
    ImageCounts(Vec<u32>),
    Error(String),
}

pub fn schema(probe: &Probe, settings: &Settings) -> Result<PdfSchema, FileError> {
    let bytes = whole(probe)?;
    let meta = std::panic::catch_unwind(|| lopdf::Document::load_metadata_mem(&bytes))
        .map_err(|_| FileError::Parse("the PDF could not be parsed".into()))?
        .map_err(|e| FileError::Parse(format!("not a readable PDF: {e}")))?;
    let mut metadata = std::collections::BTreeMap::new();
    for (key, value) in [
        ("title", meta.title),
        ("author", meta.author),
        ("subject", meta.subject),
        ("keywords", meta.keywords),
        ("creator", meta.creator),
        ("producer", meta.producer),
        ("creation_date", meta.creation_date),
        ("modification_date", meta.modification_date),
    ] {
        if let Some(v) = value.filter(|v| !v.trim().is_empty()) {
            metadata.insert(key.to_owned(), crate::clip::clip(&v, 300).into_owned());
        }
    }
    let encrypted = memchr::memmem::find(&bytes, b"/Encrypt").is_some();
    Ok(PdfSchema {
        pages: meta.page_count as u64,
        version: meta.version,
        encrypted,
        metadata,
        images: image_counts(bytes, settings),
    })
}

/// Images per page, counted where text is extracted (within the PDF deadline).
fn image_counts(
    bytes: Vec<u8>,
    settings: &Settings,
) -> Option<std::collections::BTreeMap<u32, u32>> {
    let deadline = Instant::now() + settings.pdf_deadline;
    let mut counts = None;
    let mut on_line = |line: Line| {
        if let Line::ImageCounts(c) = line {
            counts = Some(c);
        }
        true
    };
    match &settings.pdf_helper {
        Some(helper) => {
            in_child(helper, bytes, 1, 0, 0, deadline, &mut on_line).ok()?;
        }
        None => extract(&bytes, 1, 0, 0, deadline, &mut on_line),
    }
    Some(
        counts?
            .into_iter()
            .enumerate()
            .filter(|&(_, n)| n > 0)
            .map(|(i, n)| (i as u32 + 1, n))
            .collect(),
    )
}

fn whole(probe: &Probe) -> Result<Vec<u8>, FileError> {
    if probe.size > MAX_PDF {
        return Err(FileError::TooLarge(format!(
            "the PDF is {} MiB; PDFs over {} MiB are not read",
            probe.size >> 20,
            MAX_PDF >> 20
        )));
    }
    let mut bytes = Vec::with_capacity(probe.size as usize);
    probe.file.reader().take(MAX_PDF).read_to_end(&mut bytes)?;
    Ok(bytes)
}

pub fn read(
    probe: Probe,
    request: &ReadRequest,
    settings: &Settings,
) -> Result<ReadAnswer, FileError> {
    if request.offset < 0 || request.sheet.is_some() || request.range.is_some() {
        return Err(FileError::Invalid(
            "PDFs are paged by offset (0-based first page) and length (pages)".into(),
        ));
    }
    let bytes = whole(&probe)?;
    let from = request.offset as u32 + 1;
    let count = request.length.min(u64::from(u32::MAX)) as u32;
    let deadline = Instant::now() + settings.pdf_deadline;
    let budget = settings.budget;
    let mut out = String::new();
    let mut total = None;
    let mut delivered = 0u64;
    let mut truncated = false;
    let mut failure = None;
    let mut images: Vec<(Vec<u8>, &'static str)> = Vec::new();
    let mut image_notes: Vec<String> = Vec::new();
    let mut on_line = |line: Line| -> bool {
        match line {
            Line::Pages(n) => total = Some(u64::from(n)),
            Line::ImageCounts(_) => {}
            Line::Images {
                number,
                images: found,
            } => {
                let shown = found.shown.len();
                for image in found.shown {
                    let mime = if image.mime == "image/png" {
                        "image/png"
                    } else {
                        "image/jpeg"
                    };
                    if let Ok(bytes) = base64::Engine::decode(
                        &base64::engine::general_purpose::STANDARD,
                        image.data,
                    ) {
                        images.push((bytes, mime));
                    }
                }
                if found.found > 0 {
                    let noun = if found.found == 1 { "image" } else { "images" };
                    let mut note = format!("page {number}: {} {noun}, {shown} shown", found.found);
                    if !found.left_out.is_empty() {
                        note.push_str(&format!(" (not shown: {})", found.left_out.join("; ")));
                    }
                    image_notes.push(note);
                }
            }
            Line::Page { number, text } => {
                let page = format!(
                    "<!-- page {number}{} -->\n\n{}\n\n",
                    total.map_or(String::new(), |t| format!(" of {t}")),
                    text.trim()
                );
                if out.len() + page.len() > budget && delivered > 0 {
                    truncated = true;
                    return false;
                }
                if page.len() > budget {
                    let cut = crate::clip::clip(&page, budget);
                    out.push_str(&cut);
                    truncated = true;
                    delivered += 1;
                    return false;
                }
                out.push_str(&page);
                delivered += 1;
            }
            Line::Error(e) => {
                failure = Some(e);
                return false;
            }
        }
        true
    };
    let shown = pdf_images::PER_CALL;
    let finished = match &settings.pdf_helper {
        Some(helper) => in_child(helper, bytes, from, count, shown, deadline, &mut on_line)?,
        None => {
            extract(&bytes, from, count, shown, deadline, &mut on_line);
            Instant::now() < deadline
        }
    };
    if let Some(e) = failure {
        return Err(FileError::Parse(format!(
            "the PDF text could not be read: {e}"
        )));
    }
    if !finished && delivered == 0 {
        return Err(FileError::Deadline(format!(
            "extracting the text of page {from} took longer than {} s and was stopped",
            settings.pdf_deadline.as_secs_f32()
        )));
    }
    let next = u64::from(from - 1) + delivered;
    let more = total.is_none_or(|t| next < t);
    Ok(ReadAnswer {
        kind: "pdf".into(),
        content: Some(out.trim_end().to_owned()),
        offset: Some(u64::from(from - 1)),
        count: Some(delivered),
        total,
        next_offset: more.then_some(next),
        truncated: truncated || !finished,
        note: {
            let mut notes = image_notes;
            if !finished {
                notes.push(format!(
                    "stopped at the {} s time limit; continue with offset={next}",
                    settings.pdf_deadline.as_secs_f32()
                ));
            }
            (!notes.is_empty()).then(|| notes.join("; "))
        },
        images_data: images,
        ..ReadAnswer::default()
    })
}

/// Extracts pages `[from, from + count)` (1-based), calling `emit` with each and then its
/// images (decoding at most `images` in all); stops when `emit` says so or the deadline passes.
/// With `count` 0 it only counts the images of every page. Panics inside the PDF library
/// become an error line.
pub fn extract(
    bytes: &[u8],
    from: u32,
    count: u32,
    images: u32,
    deadline: Instant,
    emit: &mut dyn FnMut(Line) -> bool,
) {
    let doc = match std::panic::catch_unwind(|| lopdf::Document::load_mem(bytes)) {
        Ok(Ok(doc)) => doc,
        Ok(Err(e)) => {
            emit(Line::Error(e.to_string()));
            return;
        }
        Err(_) => {
            emit(Line::Error("the PDF could not be parsed".into()));
            return;
        }
    };
    let pages = doc.get_pages();
    if !emit(Line::Pages(pages.len() as u32)) {
        return;
    }
    if count == 0 {
        let counts =
            std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| pdf_images::counts(&doc)));
        emit(match counts {
            Ok(counts) => Line::ImageCounts(counts),
            Err(_) => Line::Error("the PDF's images could not be counted".into()),
        });
        return;
    }
    let mut left = images;
    for (&number, &page_id) in pages
        .iter()
        .filter(|&(&n, _)| n >= from)
        .take(count as usize)
    {
        if Instant::now() >= deadline {
            return;
        }
        let text = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            let mut text = String::new();
            let mut output = pdf_extract::PlainTextOutput::new(&mut text);
            pdf_extract::output_doc_page(&doc, &mut output, number).map(|()| text)
        }));
        let line = match text {
            Ok(Ok(text)) => Line::Page { number, text },
            Ok(Err(e)) => Line::Page {
                number,
                text: format!("[the text of this page could not be extracted: {e}]"),
            },
            Err(_) => Line::Page {
                number,
                text: "[the text of this page could not be extracted]".into(),
            },
        };
        if !emit(line) {
            return;
        }
        if Instant::now() >= deadline {
            return;
        }
        let found = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            pdf_images::page(&doc, page_id, &mut left)
        }))
        .unwrap_or_else(|_| PageImages {
            left_out: vec!["the page's images could not be read".into()],
            ..PageImages::default()
        });
        if (found.found > 0 || !found.left_out.is_empty())
            && !emit(Line::Images {
                number,
                images: found,
            })
        {
            return;
        }
    }
}

/// The child side: reads a PDF on stdin, writes protocol lines on stdout.
pub fn worker(from: u32, count: u32, images: u32) -> std::io::Result<()> {
    let mut bytes = Vec::new();
    std::io::stdin()
        .lock()
        .take(MAX_PDF)
        .read_to_end(&mut bytes)?;
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    let far = Instant::now() + Duration::from_secs(24 * 3600);
    extract(&bytes, from, count, images, far, &mut |line| {
        let written = serde_json::to_writer(&mut out, &line).map_err(std::io::Error::from);
        written
            .and_then(|()| out.write_all(b"\n"))
            .and_then(|()| out.flush())
            .is_ok()
    });
    Ok(())
}

/// Runs the helper; returns false when the deadline stopped it.
fn in_child(
    helper: &std::path::Path,
    bytes: Vec<u8>,
    from: u32,
    count: u32,
    images: u32,
    deadline: Instant,
    on_line: &mut dyn FnMut(Line) -> bool,
) -> Result<bool, FileError> {
    let mut child = Command::new(helper)
        .args([
            "pdf-text",
            &from.to_string(),
            &count.to_string(),
            &images.to_string(),
        ])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .env_clear()
        .spawn()
        .map_err(|e| {
            FileError::Io(std::io::Error::other(format!(
                "cannot start the PDF helper: {e}"
            )))
        })?;
    let mut stdin = child.stdin.take();
    let feeder = std::thread::spawn(move || {
        if let Some(stdin) = stdin.as_mut() {
            // The child may stop reading early (killed at the deadline): ignore the error.
            let _ = stdin.write_all(&bytes);
        }
    });
    let stdout = child.stdout.take();
    let (tx, rx) = mpsc::channel();
    let reader = std::thread::spawn(move || {
        if let Some(stdout) = stdout {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { break };
                if let Ok(parsed) = serde_json::from_str::<Line>(&line)
                    && tx.send(parsed).is_err()
                {
                    break;
                }
            }
        }
    });
    let mut finished = true;
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        match rx.recv_timeout(left) {
            Ok(line) => {
                if !on_line(line) {
                    break;
                }
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => break,
            Err(mpsc::RecvTimeoutError::Timeout) => {
                finished = false;
                break;
            }
        }
    }
    let _ = child.kill();
    let _ = child.wait();
    let _ = feeder.join();
    let _ = reader.join();
    Ok(finished)
}
