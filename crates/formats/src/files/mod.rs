//! The file tools' engine: `get_file_schema`, `summarize_file` and `read_file` on files of any
//! size, streaming, with memory that does not grow with the file.
//!
//! Root-agnostic: callers open the file (the MCP server through the roots guard, the human CLI
//! directly, since there the user names the file) and hand it over with its path.

pub use source::compressed;
pub mod encoding;
mod index;
mod kind;
mod newline;
pub mod text;

pub mod columns;
mod delimited;
pub use delimited::delimiter_of;
pub mod docx;
mod image;
mod markup;
mod parquet;
pub mod pdf;
mod pdf_images;
mod read;
mod reading;
mod records;
pub mod schema;
mod shape;
mod sheet;
mod source;
mod summary;

use std::fs::File;
use std::path::{Path, PathBuf};
use std::time::Duration;

/// Opens a regular file without blocking on a FIFO or a device (`offload read` and friends).
pub use crate::special_files::open as open_regular;
pub use kind::{Kind, Probe};
pub use reading::{ReadAnswer, ReadRequest};
pub use schema::Schema;
pub use source::{Remote, Source, Version};
pub use summary::Summary;

/// Limits and helpers of the file tools.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Bytes of text one answer may hold (pages are cut to it, with a way to go on).
    pub budget: usize,
    /// Bytes of encoded image one answer may hold (before base64).
    pub image_budget: usize,
    /// Files up to this size get an exact line count in summaries; larger ones an estimate
    /// from this many bytes (the answer says which).
    pub exact_count_limit: u64,
    /// Files up to this size get CSV column types from every row; larger ones from a sample
    /// spread across the file.
    pub full_scan_limit: u64,
    /// The program that extracts PDF text in a child process (so a deadline can stop it):
    /// `offload`, run as `offload pdf-text`. `None`: extract in-process (tests, the human CLI).
    pub pdf_helper: Option<PathBuf>,
    /// The hard time limit of one PDF extraction.
    pub pdf_deadline: Duration,
}

impl Default for Settings {
    fn default() -> Self {
        Self {
            budget: 64 * 1024,
            image_budget: 72 * 1024,
            exact_count_limit: 4 << 30,
            full_scan_limit: 16 << 20,
            pdf_helper: None,
            pdf_deadline: Duration::from_secs(15),
        }
    }
}

/// The file tools with their caches; one per engine (or per CLI run).
#[derive(Debug, Default)]
pub struct Inspector {
    pub settings: Settings,
    lines: index::IndexCache,
}

impl Inspector {
    pub fn new(settings: Settings) -> Self {
        Self {
            settings,
            lines: index::IndexCache::default(),
        }
    }

    /// `get_file_schema` of an opened file.
    pub fn schema(
        &self,
        file: impl Into<Source>,
        path: &Path,
        sample_rows: usize,
        observer: &dyn Observer,
    ) -> Result<Schema, FileError> {
        schema::of(self, Probe::new(file.into(), path)?, sample_rows, observer)
    }

    /// `summarize_file` of an opened file.
    pub fn summarize(
        &self,
        file: impl Into<Source>,
        path: &Path,
        max_lines: u64,
        observer: &dyn Observer,
    ) -> Result<Summary, FileError> {
        summary::of(self, Probe::new(file.into(), path)?, max_lines, observer)
    }

    /// `read_file` of an opened file.
    pub fn read(
        &self,
        file: impl Into<Source>,
        path: &Path,
        request: &ReadRequest,
        observer: &dyn Observer,
    ) -> Result<ReadAnswer, FileError> {
        read::of(self, Probe::new(file.into(), path)?, request, observer)
    }

    fn text(&self, probe: Probe) -> Result<text::TextFile, FileError> {
        let encoding = match probe.kind {
            Kind::Binary { .. } => return Err(FileError::Binary(probe.describe())),
            _ => probe.encoding.unwrap_or(encoding::TextEncoding::UTF8),
        };
        text::TextFile::new(
            probe.file,
            &probe.path,
            encoding,
            &probe.sample,
            &self.lines,
        )
    }
}

/// Told about progress of long scans; asked whether to stop.
pub trait Observer: Sync {
    fn progress(&self, _done: u64, _total: u64) {}
    fn cancelled(&self) -> bool {
        false
    }
}

/// An observer that wants nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct Quiet;
impl Observer for Quiet {}

#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("cannot read the file: {0}")]
    Io(#[from] std::io::Error),
    #[error("the request was cancelled")]
    Cancelled,
    #[error("{0}")]
    Parse(String),
    #[error("{0}")]
    Binary(String),
    #[error("{0}")]
    Invalid(String),
    #[error("{0}")]
    Deadline(String),
    #[error("{0}")]
    TooLarge(String),
}

/// A reader over `file` from `pos` to `end`, by positional reads (handles share no cursor). A
/// watched one tells its observer how far it is every few MiB and fails once the observer
/// cancels (parsers then report [`FileError::Cancelled`] through [`stopped`]).
struct At<'a> {
    file: &'a Source,
    pos: u64,
    end: u64,
    watch: Option<Watch<'a>>,
}

struct Watch<'a> {
    observer: &'a dyn Observer,
    start: u64,
    next: u64,
}

/// How often long scans report progress and check for cancellation, in bytes.
const WATCH_EVERY: u64 = 8 << 20;

impl<'a> At<'a> {
    fn new(file: &'a Source, pos: u64, end: u64) -> Self {
        Self {
            file,
            pos,
            end,
            watch: None,
        }
    }

    fn watched(file: &'a Source, pos: u64, end: u64, observer: &'a dyn Observer) -> Self {
        let watch = Watch {
            observer,
            start: pos,
            next: pos + WATCH_EVERY,
        };
        Self {
            watch: Some(watch),
            ..Self::new(file, pos, end)
        }
    }
}

impl std::io::Read for At<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Some(w) = &mut self.watch
            && self.pos >= w.next
        {
            w.next = self.pos + WATCH_EVERY;
            let total = self.end.saturating_sub(w.start);
            checkpoint(w.observer, self.pos - w.start, total)
                .map_err(|_| std::io::Error::other("cancelled"))?;
        }
        let want = (buf.len() as u64).min(self.end.saturating_sub(self.pos)) as usize;
        let got = self.file.read_at(&mut buf[..want], self.pos)?;
        self.pos += got as u64;
        Ok(got)
    }
}

/// Every [`WATCH_EVERY`] bytes of a long scan: stop if the observer cancelled, else tell it how
/// far the scan is.
fn checkpoint(observer: &dyn Observer, done: u64, total: u64) -> Result<(), FileError> {
    if observer.cancelled() {
        return Err(FileError::Cancelled);
    }
    observer.progress(done, total);
    Ok(())
}

/// `error`, unless the work failed because the observer cancelled it.
fn stopped(observer: &dyn Observer, error: FileError) -> FileError {
    if observer.cancelled() {
        FileError::Cancelled
    } else {
        error
    }
}

/// Fills as much of `buf` as the file has from `offset`; returns how many bytes were read.
pub fn read_at(file: &File, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
    // One positional-read loop for the engine and the query crate.
    offload_query::Blob::read_at(file, buf, offset)
}

#[cfg(test)]
mod tests;
