//! Stored responses: turning a tool result into a file the user owns (whole or absent, never
//! overwriting), the binary files beside it, its summary, and its record in the index.
//!
//! Everything here is blocking file I/O: async callers run it on a blocking thread.

mod bucket_records;
mod choice;
mod download;
mod names;
mod payload;
mod place;
mod preview;
mod records;
mod summary;
pub(crate) mod write;

pub use download::DownloadRequest;
pub use records::{Record, SideFile, elide};
pub use summary::{Column, Summary};

use std::path::{Path, PathBuf};
use std::sync::Mutex;
use std::time::Duration;

use rmcp::model::CallToolResult;
use serde_json::Value;
use tokio::sync::broadcast;

use crate::objects::Bucket;
use crate::roots::{Access, PathError, Roots};
use crate::{ErrorCode, ToolError};
use choice::{choose_format, extension_of, file_name, mime_of};
use offload_formats::Format;
use offload_formats::files::compressed::{Codec, write_packed};
use offload_formats::output;
use place::Place;

/// What to store and where.
pub struct StoreRequest<'a> {
    pub origin: Origin<'a>,
    pub destination: Destination<'a>,
    pub result: CallToolResult,
}

/// Who produced a stored file, for its record.
pub struct Origin<'a> {
    /// Shown as the record's server and tool (`offload`, `query_file` for Offload's own).
    pub server: &'a str,
    pub tool: &'a str,
    pub arguments: &'a Value,
    pub description: Option<String>,
    pub duration: Duration,
}

/// Where the caller wants a stored file and as what: a directory under the roots, a file name,
/// a format; each chosen by Offload when not given.
#[derive(Default)]
pub struct Destination<'a> {
    pub storage_path: Option<&'a str>,
    pub filename: Option<&'a str>,
    pub format: Option<&'a str>,
}

/// A stored response.
#[derive(Debug, Clone)]
pub struct Stored {
    pub record: Record,
    pub summary: Summary,
    /// The short paragraph for the model (at most 600 bytes).
    pub text: String,
    /// A table's first rows, a text's first lines and headings (at most 3 KiB), when it has them.
    pub preview: Option<String>,
}

pub struct Store {
    index: Mutex<records::Index>,
    /// Where answers for bucket roots are written before they are uploaded.
    staging: PathBuf,
    /// The records kept in bucket roots, as last read.
    buckets: bucket_records::BucketRecords,
    added: broadcast::Sender<Record>,
}

impl Store {
    /// Opens the index in `data_dir` (rebuilding it from the roots when it is missing).
    pub fn open(data_dir: &Path, roots: &Roots) -> (Self, Vec<String>) {
        let dirs: Vec<PathBuf> = roots
            .list()
            .iter()
            .filter(|r| r.writable)
            .map(|r| r.path.clone())
            .collect();
        let path = data_dir.join("records.jsonl");
        let mut warnings = Vec::new();
        let index = records::Index::open(path.clone(), &dirs).unwrap_or_else(|e| {
            warnings.push(format!(
                "the records index {} could not be read ({e}); starting a new one",
                path.display()
            ));
            records::Index::open(path, &[]).unwrap_or_else(|_| unreachable_index())
        });
        if index.skipped_lines > 0 {
            warnings.push(format!(
                "{} damaged lines in the records index were skipped",
                index.skipped_lines
            ));
        }
        (
            Self {
                index: Mutex::new(index),
                staging: data_dir.join("staging"),
                buckets: Default::default(),
                added: broadcast::channel(64).0,
            },
            warnings,
        )
    }

    /// Every record, newest first (including those other Offload processes added; for bucket
    /// roots, as of the last [`Store::refresh_buckets`]).
    pub fn records(&self) -> Vec<Record> {
        let mut records: Vec<Record> = {
            let mut index = self.index.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = index.refresh() {
                tracing::warn!("cannot read the records index: {e}");
            }
            index.records().iter().rev().cloned().collect()
        };
        let in_buckets = self.buckets.all();
        if !in_buckets.is_empty() {
            records.extend(in_buckets);
            records.sort_by_key(|r| std::cmp::Reverse(r.time));
        }
        records
    }

    /// Deletes a response stored in a bucket root, the objects beside it and its record.
    pub fn delete_in_bucket(
        &self,
        bucket: &Bucket,
        path: &crate::objects::ObjectUrl,
        sides: &[crate::objects::ObjectUrl],
    ) -> Result<(), String> {
        self.buckets.delete(bucket, path, sides)
    }

    /// Reads the records kept in the bucket roots (only new ones are fetched; a bucket that
    /// does not answer within seconds keeps its last list).
    pub async fn refresh_buckets(&self, roots: &Roots) {
        // Nothing to read, and nothing to forget, while no bucket root is or was configured.
        if !roots.buckets().is_empty() || !self.buckets.is_empty() {
            self.buckets.refresh(roots).await;
        }
    }

    /// Notified with each record this process adds.
    pub fn subscribe(&self) -> broadcast::Receiver<Record> {
        self.added.subscribe()
    }

    /// Writes `req.result` as a file and records it.
    pub fn store(&self, roots: &Roots, req: StoreRequest<'_>) -> Result<Stored, ToolError> {
        let StoreRequest {
            origin,
            destination: want,
            result,
        } = req;
        let (mut format, codec) = choose_format(want.format, want.filename, Format::Json)?;
        // Neither the format nor the filename's extension says: the answer's own kind does.
        let defaulted =
            want.format.is_none() && want.filename.is_none_or(|n| names::extension(n).is_none());
        let place = Place::of(roots, want.storage_path, &self.staging)?;
        let dir = place.dir().to_path_buf();
        let mut name = file_name(origin.server, origin.tool, want.filename, format, codec)?;
        let stem = name
            .strip_suffix(&format!(".{}", extension_of(format, codec)))
            .or_else(|| name.rsplit_once('.').map(|(s, _)| s))
            .unwrap_or(name.as_str())
            .to_owned();
        let (payload, binaries) = payload::extract(result, |n, ext| format!("{stem}.{n}.{ext}"))
            .map_err(|e| {
                ToolError::new(
                    ErrorCode::UpstreamError,
                    format!("the tool's answer cannot be stored: {e}"),
                )
            })?;
        // A text answer is stored as the text: Markdown where it reads as Markdown.
        if defaulted && let output::Payload::Text(text) = &payload {
            format = if output::looks_like_markdown(text) {
                Format::Md
            } else {
                Format::Txt
            };
            name = format!("{stem}.{}", extension_of(format, codec));
        }

        // Binaries first, then the main file; on failure remove what was written.
        let mut written: Vec<PathBuf> = Vec::new();
        let mut side_files = Vec::new();
        let cleanup = |paths: &[PathBuf]| {
            for p in paths {
                let _ = std::fs::remove_file(p);
            }
        };
        for b in &binaries {
            match write::write_new(&dir, &b.name, |w| w.write_all(&b.bytes)) {
                Ok((path, bytes, ())) => {
                    side_files.push(SideFile {
                        uri: String::new(),
                        path: String::new(),
                        mime_type: b.mime_type.clone(),
                        bytes,
                    });
                    written.push(path);
                }
                Err(e) => {
                    cleanup(&written);
                    return Err(e);
                }
            }
        }
        // CSV and TSV hold one table: an answer with several gets a file per table, named
        // after its field (`<stem>.<field>.csv`); the first is the one linked.
        let several = match format {
            Format::Csv | Format::Tsv => output::table_sources(&payload),
            _ => None,
        };
        let mut table_files = Vec::new();
        let (path, bytes, rendered) = match &several {
            Some(sources) => {
                let delimiter = if format == Format::Csv { b',' } else { b'\t' };
                let mut first = None;
                for source in sources {
                    let field = source.info.path.as_deref().unwrap_or("table");
                    let file = format!(
                        "{stem}.{}.{}",
                        names::sanitize(field, 60),
                        extension_of(format, codec)
                    );
                    match write::write_new(&dir, &file, |w| {
                        write_packed(codec, w, |w| {
                            output::delimited::write_table(source, delimiter, w)
                        })
                    }) {
                        Ok((path, bytes, ())) => {
                            table_files.push(written.len());
                            if first.is_none() {
                                first = Some((path.clone(), bytes));
                            } else {
                                side_files.push(SideFile {
                                    uri: String::new(),
                                    path: String::new(),
                                    mime_type: mime_of(format, codec).to_owned(),
                                    bytes,
                                });
                            }
                            written.push(path);
                        }
                        Err(e) => {
                            cleanup(&written);
                            return Err(e);
                        }
                    }
                }
                let (path, bytes) = first.expect("several tables means at least two");
                (path, bytes, output::Rendered::default())
            }
            None => match write::write_new(&dir, &name, |w| {
                write_packed(codec, w, |w| output::render(&payload, format, w))
            }) {
                Ok(done) => {
                    written.push(done.0.clone());
                    done
                }
                Err(e) => {
                    cleanup(&written);
                    return Err(e);
                }
            },
        };
        let main = written
            .iter()
            .position(|p| *p == path)
            .expect("the main file was written");
        let published = place.publish(roots, &written, main)?;
        let sides = published
            .iter()
            .enumerate()
            .filter(|&(i, _)| i != main)
            .map(|(_, p)| p);
        for (f, p) in side_files.iter_mut().zip(sides) {
            f.path = p.path.clone();
            f.uri = p.uri.clone();
        }
        let final_place = published[main].clone();

        let mut summary = Summary::of(&payload);
        if let Some(tables) = summary.tables.as_mut() {
            for (t, &i) in tables.iter_mut().zip(&table_files) {
                t.file = Some(published[i].path.clone());
            }
        }
        let mut notes = Vec::new();
        if !binaries.is_empty() {
            notes.push(format!("{} binary files beside it", binaries.len()));
        }
        if rendered.replaced_chars > 0 {
            notes.push(format!(
                "{} characters XML cannot hold replaced by U+FFFD",
                rendered.replaced_chars
            ));
        }
        if rendered.fallback {
            notes.push(fallback_note(&payload, format));
        }
        let placed = Placed {
            name,
            format,
            codec,
            bytes,
            at: final_place,
            files: side_files,
        };
        let mut stored = self.finish(place.bucket(), origin, placed, summary, &notes.join("; "));
        stored.preview = preview::of(&payload);
        Ok(stored)
    }

    /// Writes a file with `fill` (given the chosen format and the file) and records it like a
    /// stored answer: the same names, directories, never-overwrite and final-path checks.
    /// `fill` returns the summary of what it wrote. Used for results Offload computes itself
    /// (`query_file`), which are written as they are produced.
    pub fn store_written(
        &self,
        roots: &Roots,
        req: WrittenRequest<'_>,
        fill: impl FnOnce(Format, &mut (dyn std::io::Write + Send)) -> std::io::Result<Summary>,
    ) -> Result<Stored, ToolError> {
        let WrittenRequest {
            origin,
            destination: want,
            default_format,
        } = req;
        let (format, codec) = choose_format(want.format, want.filename, default_format)?;
        let place = Place::of(roots, want.storage_path, &self.staging)?;
        let name = file_name(origin.server, origin.tool, want.filename, format, codec)?;
        let (path, bytes, summary) = write::write_new(place.dir(), &name, |w| {
            write_packed(codec, w, |w| fill(format, w))
        })?;
        let at = place
            .publish(roots, &[path], 0)?
            .pop()
            .expect("one published file");
        let placed = Placed {
            name,
            format,
            codec,
            bytes,
            at,
            files: Vec::new(),
        };
        Ok(self.finish(place.bucket(), origin, placed, summary, ""))
    }

    /// Records a stored file (written whole, its final path checked) and answers with it and
    /// its summary text.
    fn finish(
        &self,
        bucket: Option<&Bucket>,
        origin: Origin<'_>,
        placed: Placed,
        summary: Summary,
        notes: &str,
    ) -> Stored {
        let path = placed.at.path;
        let format_name = match placed.codec {
            Some(codec) => format!("{}.{}", placed.format.name(), codec.extension()),
            None => placed.format.name().to_owned(),
        };
        let text = summary.text(&path, placed.bytes, &format_name, notes);
        let record = Record {
            id: placed.name,
            time: chrono::Utc::now(),
            server: origin.server.to_owned(),
            tool: origin.tool.to_owned(),
            arguments: elide(origin.arguments),
            description: origin.description,
            duration_ms: origin.duration.as_millis() as u64,
            bytes: placed.bytes,
            format: format_name,
            mime_type: mime_of(placed.format, placed.codec).to_owned(),
            uri: placed.at.uri,
            path,
            files: placed.files,
            summary: Some(summary.clone()),
            recovered: false,
        };
        match bucket {
            Some(bucket) => self.buckets.add(bucket, &record),
            None => self.record(&record),
        }
        Stored {
            record,
            summary,
            text,
            preview: None,
        }
    }

    fn record(&self, record: &Record) {
        {
            let mut index = self.index.lock().unwrap_or_else(|p| p.into_inner());
            if let Err(e) = index.append(record.clone()) {
                // The file is stored and whole; only the listing misses it until a rebuild.
                tracing::warn!("stored {} but could not record it: {e}", record.path);
            }
        }
        let _ = self.added.send(record.clone());
    }
}

/// What to record about a file Offload writes itself.
pub struct WrittenRequest<'a> {
    pub origin: Origin<'a>,
    pub destination: Destination<'a>,
    /// The format when neither the destination's format nor its filename's extension names one.
    pub default_format: Format,
}

/// A stored file: its name, format and size, its final path, the files beside it.
struct Placed {
    name: String,
    format: Format,
    /// How it is compressed, for `csv.gz` style formats.
    codec: Option<Codec>,
    bytes: u64,
    at: place::Published,
    files: Vec<SideFile>,
}

/// The written file's final path, canonicalised, which must still be inside a writable root.
pub(super) fn inside_writable(roots: &Roots, path: &Path) -> Result<PathBuf, ToolError> {
    std::fs::canonicalize(path)
        .ok()
        .and_then(|p| roots.resolve(&p.display().to_string(), Access::Write).ok())
        .map(|r| r.path)
        .ok_or_else(|| {
            PathError::Outside {
                input: path.display().to_string(),
            }
            .into()
        })
}

fn unreachable_index() -> records::Index {
    // Opening an index with no file and no directories cannot fail; this keeps `open` total.
    records::Index::open(
        std::env::temp_dir().join(format!("offload-records-{}.jsonl", std::process::id())),
        &[],
    )
    .expect("an empty index in the temp dir")
}

/// What a table format holds when the answer is not a table, in words a model can use.
fn fallback_note(payload: &output::Payload, format: Format) -> String {
    let what = match payload {
        output::Payload::Text(_) => "the text in one \"value\" cell",
        output::Payload::Json(serde_json::Value::Array(_))
        | output::Payload::JsonText {
            shape: output::stream::Shape::Array { .. },
            ..
        } => "one row per list item in a \"value\" column",
        _ => "one row per field, with \"key\" (dotted for nested fields) and \"value\" columns",
    };
    format!(
        "not a table, so the {} holds {what}; JSON keeps the structure",
        format.name().to_uppercase()
    )
}

/// `file://` URI of an absolute path, percent-encoded by the `url` crate.
pub fn file_uri(path: &Path) -> String {
    url::Url::from_file_path(path)
        .map(|u| u.to_string())
        .unwrap_or_else(|_| format!("file://{}", path.display()))
}

/// The directory to store in: `storage_path` (created inside a writable root when missing) or
/// the default directory.
pub(super) fn storage_dir(roots: &Roots, storage_path: Option<&str>) -> Result<PathBuf, ToolError> {
    let Some(input) = storage_path else {
        return roots.default_dir().map(Path::to_path_buf).ok_or_else(|| {
            ToolError::new(
                ErrorCode::ReadOnlyRoot,
                "every allowed directory is read-only; the user must add a writable one",
            )
        });
    };
    let resolved = match roots.resolve(input, Access::Write) {
        Ok(r) => r,
        Err(PathError::NotFound { path, .. }) => {
            // Create it, but only below an existing directory that is itself allowed.
            let mut existing = path.as_path();
            while !existing.exists() {
                existing = existing.parent().unwrap_or(Path::new("/"));
            }
            roots.resolve(&existing.display().to_string(), Access::Write)?;
            std::fs::create_dir_all(&path).map_err(|e| {
                ToolError::new(
                    ErrorCode::WriteFailed,
                    format!("cannot create {}: {e}", path.display()),
                )
            })?;
            roots.resolve(input, Access::Write)?
        }
        Err(e) => return Err(e.into()),
    };
    if !resolved.path.is_dir() {
        return Err(ToolError::new(
            ErrorCode::PathUnusable,
            format!("storage_path '{input}' is not a directory"),
        )
        .with("path", input));
    }
    Ok(resolved.path)
}

#[cfg(test)]
mod tests;
