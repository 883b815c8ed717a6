//! What a file is, from its name and its first bytes: magic numbers (`infer`) for binary formats,
//! the extension for text formats, and the encoding sniffer for text versus binary.

use std::path::{Path, PathBuf};

use super::encoding::{self, Sniffed, TextEncoding};
use super::{FileError, Source};

/// The kinds of file the tools treat differently.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Kind {
    /// CSV or TSV; the delimiter the extension suggests (sniffed again from content).
    Delimited {
        tab: bool,
    },
    Json,
    Jsonl,
    Yaml,
    Xml,
    /// Excel (xlsx, xlsm, xlsb, xls) or OpenDocument (ods) workbook.
    Sheet,
    /// Apache Parquet (`PAR1` at both ends).
    Parquet,
    Pdf,
    /// A Word document (`.docx`).
    Docx,
    Image {
        format: image::ImageFormat,
    },
    Text,
    /// Anything else that is not text; `mime` as detected from magic numbers, when known.
    Binary {
        mime: Option<&'static str>,
    },
}

/// An opened file with what its first bytes say.
pub struct Probe {
    pub file: Source,
    pub path: PathBuf,
    pub size: u64,
    /// Up to [`encoding::SAMPLE`] first bytes.
    pub sample: Vec<u8>,
    pub kind: Kind,
    /// For text kinds: the encoding.
    pub encoding: Option<TextEncoding>,
}

impl Probe {
    pub fn new(file: Source, path: &Path) -> Result<Self, FileError> {
        if file.is_dir()? {
            return Err(FileError::Invalid(format!(
                "{} is a directory; give a file inside it",
                path.display()
            )));
        }
        let size = file.len()?;
        let mut sample = vec![0; (encoding::SAMPLE as u64).min(size) as usize];
        let got = file.read_at(&mut sample, 0)?;
        sample.truncate(got);
        let sniffed = encoding::sniff(&sample, got as u64 >= size);
        let (kind, encoding) = classify(path, &sample, sniffed);
        Ok(Self {
            file,
            path: path.to_owned(),
            size,
            sample,
            kind,
            encoding,
        })
    }

    /// Another handle on the same file (reads are positional, so the two do not interfere).
    pub fn clone_handle(&self) -> Result<Self, FileError> {
        Ok(Self {
            file: self.file.try_clone()?,
            path: self.path.clone(),
            size: self.size,
            sample: self.sample.clone(),
            kind: self.kind.clone(),
            encoding: self.encoding,
        })
    }

    /// The lower-case extension, without the dot ("" when there is none).
    pub fn extension(&self) -> String {
        extension(&self.path)
    }

    /// The content type: from magic numbers for binary formats, the extension otherwise.
    pub fn content_type(&self) -> String {
        match &self.kind {
            Kind::Binary { mime: Some(m) } => (*m).to_owned(),
            Kind::Binary { mime: None } => "application/octet-stream".to_owned(),
            Kind::Image { format } => format.to_mime_type().to_owned(),
            Kind::Pdf => "application/pdf".to_owned(),
            Kind::Docx => {
                "application/vnd.openxmlformats-officedocument.wordprocessingml.document".to_owned()
            }
            Kind::Jsonl => "application/jsonl".to_owned(),
            _ => mime_guess::from_path(super::compressed::plain_name(&self.path))
                .first()
                .map(|m| m.essence_str().to_owned())
                .unwrap_or_else(|| "text/plain".to_owned()),
        }
    }

    /// One line saying what a non-text file is, and which tool shows more.
    pub fn describe(&self) -> String {
        format!(
            "{}; use get_file_schema to see its structure",
            self.identify()
        )
    }

    /// What the file is: `<path> is a PDF document of N bytes`.
    pub fn identify(&self) -> String {
        let what = match &self.kind {
            Kind::Binary { mime: Some(m) } => format!("a binary file ({m})"),
            Kind::Binary { mime: None } => "a binary file of unknown type".to_owned(),
            Kind::Image { format } => format!("an image ({format:?})"),
            Kind::Pdf => "a PDF document".to_owned(),
            Kind::Docx => "a Word document".to_owned(),
            Kind::Sheet => "a spreadsheet".to_owned(),
            Kind::Parquet => "a Parquet file".to_owned(),
            _ => "a text file".to_owned(),
        };
        format!("{} is {what} of {} bytes", self.path.display(), self.size)
    }
}

/// The lower-case extension of what the file holds: `data.csv.gz` is `csv` (it is read
/// decompressed).
pub fn extension(path: &Path) -> String {
    super::compressed::plain_name(path)
        .extension()
        .map(|e| e.to_string_lossy().to_ascii_lowercase())
        .unwrap_or_default()
}

fn classify(path: &Path, sample: &[u8], sniffed: Sniffed) -> (Kind, Option<TextEncoding>) {
    let ext = extension(path);
    if let Some(kind) = by_magic(&ext, sample) {
        return (kind, None);
    }
    let encoding = match sniffed {
        Sniffed::Text(e) => e,
        Sniffed::Binary => {
            return (
                Kind::Binary {
                    mime: infer::get(sample).map(|t| t.mime_type()),
                },
                None,
            );
        }
    };
    let kind = match ext.as_str() {
        "csv" => Kind::Delimited { tab: false },
        "tsv" | "tab" => Kind::Delimited { tab: true },
        "json" | "geojson" => Kind::Json,
        "jsonl" | "ndjson" => Kind::Jsonl,
        "yaml" | "yml" => Kind::Yaml,
        "xml" | "svg" | "rss" | "atom" => Kind::Xml,
        _ => Kind::Text,
    };
    (kind, Some(encoding))
}

/// Binary formats the tools understand, recognised by content (the extension only decides
/// between spreadsheet and other zip/OLE files).
fn by_magic(ext: &str, sample: &[u8]) -> Option<Kind> {
    if sample.starts_with(b"%PDF-") {
        return Some(Kind::Pdf);
    }
    if sample.starts_with(b"PAR1") {
        return Some(Kind::Parquet);
    }
    if let Ok(format) = image::guess_format(sample) {
        // Only formats this build can decode; others are described as binary.
        if format.reading_enabled() {
            return Some(Kind::Image { format });
        }
    }
    let zip_or_ole = sample.starts_with(b"PK\x03\x04") || sample.starts_with(&[0xD0, 0xCF, 0x11]);
    if zip_or_ole
        && matches!(
            ext,
            "xlsx" | "xlsm" | "xlsb" | "xls" | "ods" | "xla" | "xlam"
        )
    {
        return Some(Kind::Sheet);
    }
    if sample.starts_with(b"PK\x03\x04") && matches!(ext, "docx" | "docm" | "dotx") {
        return Some(Kind::Docx);
    }
    None
}
