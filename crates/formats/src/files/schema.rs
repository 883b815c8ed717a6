//! `get_file_schema`: structure without content, by kind of file. When a structured reading is
//! not possible (broken JSON is an error; a huge YAML is not), the text schema is
//! given with a note saying why.

use schemars::JsonSchema;
use serde::Serialize;

use super::delimited::{self, DelimitedSchema};
use super::docx::DocxSchema;
use super::image::ImageSchema;
use super::markup::{self, DataSchema, XmlSchema};
use super::pdf::PdfSchema;
use super::sheet::SheetsSchema;
use super::{FileError, Inspector, Kind, Observer, Probe};

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Schema {
    pub path: String,
    pub size: u64,
    /// `csv`, `tsv`, `json`, `jsonl`, `yaml`, `xml`, `spreadsheet`, `parquet`, `pdf`, `docx`,
    /// `image`, `text` or `binary`.
    pub format: String,
    #[serde(flatten)]
    pub detail: Detail,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
#[serde(untagged)]
pub enum Detail {
    Delimited(DelimitedSchema),
    Data(DataSchema),
    Xml(XmlSchema),
    Sheets(SheetsSchema),
    Pdf(PdfSchema),
    Docx(DocxSchema),
    Parquet(offload_query::parquet::ParquetSchema),
    Image(ImageSchema),
    Text(TextSchema),
    Binary(BinarySchema),
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct TextSchema {
    pub encoding: String,
    pub content_type: String,
    pub line_count: u64,
    pub line_count_exact: bool,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct BinarySchema {
    pub content_type: String,
    pub description: String,
}

pub fn of(
    inspector: &Inspector,
    probe: Probe,
    sample_rows: usize,
    observer: &dyn Observer,
) -> Result<Schema, FileError> {
    let settings = &inspector.settings;
    let structured = match &probe.kind {
        Kind::Delimited { tab } => {
            let format = if *tab { "tsv" } else { "csv" };
            delimited::schema(&probe, settings.full_scan_limit, sample_rows, observer).map(|d| {
                let format = if d.delimiter == "\t" { "tsv" } else { format };
                (format, Detail::Delimited(d))
            })
        }
        Kind::Json => markup::json(&probe, observer).map(|d| ("json", Detail::Data(d))),
        Kind::Jsonl => markup::jsonl(&probe, observer).map(|d| ("jsonl", Detail::Data(d))),
        Kind::Yaml => markup::yaml(&probe, observer).map(|d| ("yaml", Detail::Data(d))),
        Kind::Xml => markup::xml(&probe, observer).map(|d| ("xml", Detail::Xml(d))),
        Kind::Sheet => {
            super::sheet::schema(&probe, sample_rows).map(|d| ("spreadsheet", Detail::Sheets(d)))
        }
        Kind::Pdf => super::pdf::schema(&probe, settings).map(|d| ("pdf", Detail::Pdf(d))),
        Kind::Docx => super::docx::schema(&probe).map(|d| ("docx", Detail::Docx(d))),
        Kind::Parquet => super::parquet::schema(&probe).map(|d| ("parquet", Detail::Parquet(d))),
        Kind::Image { format } => {
            super::image::schema(&probe, *format).map(|d| ("image", Detail::Image(d)))
        }
        Kind::Binary { .. } => Ok((
            "binary",
            Detail::Binary(BinarySchema {
                content_type: probe.content_type(),
                description: probe.identify(),
            }),
        )),
        Kind::Text => Err(FileError::Invalid(String::new())),
    };
    let (format, detail, note) = match structured {
        Ok((format, detail)) => (format, detail, None),
        // Text formats that cannot be read structurally here are described as text.
        Err(FileError::Invalid(why) | FileError::TooLarge(why)) if probe.encoding.is_some() => {
            let note = (!why.is_empty()).then_some(why);
            let content_type = probe.content_type();
            let text = inspector.text(probe.clone_handle()?)?;
            let (line_count, exact) = text.line_count(settings.exact_count_limit, observer)?;
            (
                "text",
                Detail::Text(TextSchema {
                    encoding: text.encoding.name(),
                    content_type,
                    line_count,
                    line_count_exact: exact,
                }),
                note,
            )
        }
        Err(e) => return Err(e),
    };
    Ok(Schema {
        path: probe.path.display().to_string(),
        size: probe.size,
        format: format.into(),
        detail,
        note,
    })
}
