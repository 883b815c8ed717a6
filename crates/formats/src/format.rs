//! Every file format Offload names, in one type: what a file is parsed as for a tool's
//! arguments ([`Format::INPUTS`]), what an answer is stored as ([`Format::OUTPUTS`]), by name or
//! by a file's extension.

use std::path::Path;

/// A file format by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, serde::Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Format {
    Json,
    /// One JSON value per line (`ndjson`).
    Jsonl,
    Csv,
    Tsv,
    Yaml,
    Xml,
    /// Markdown: written with tables; read as text.
    Md,
    /// HTML: written with tables; read as text.
    Html,
    Txt,
    /// Excel (xlsx, xlsm, xlsb, xls) or OpenDocument (ods) workbook: read, never written.
    Sheet,
    /// Apache Parquet: typed columns (nested objects as structs), compressed.
    Parquet,
}

impl Format {
    /// What answers are stored as (`call_tool_and_store`'s `format`), in the order listed.
    pub const OUTPUTS: [Format; 10] = [
        Format::Json,
        Format::Jsonl,
        Format::Csv,
        Format::Tsv,
        Format::Yaml,
        Format::Xml,
        Format::Md,
        Format::Html,
        Format::Txt,
        Format::Parquet,
    ];

    /// Parses a name or an extension, with the usual aliases (`yml`, `markdown`, `ndjson`,
    /// `text`, `xlsx`, a leading dot); `None` for names of no format here.
    pub fn parse(name: &str) -> Option<Self> {
        let name = name.trim().trim_start_matches('.').to_ascii_lowercase();
        Some(match name.as_str() {
            "json" => Self::Json,
            "jsonl" | "ndjson" => Self::Jsonl,
            "csv" => Self::Csv,
            "tsv" | "tab" => Self::Tsv,
            "yaml" | "yml" => Self::Yaml,
            "xml" => Self::Xml,
            "md" | "markdown" => Self::Md,
            "html" | "htm" => Self::Html,
            "txt" | "text" | "log" => Self::Txt,
            "xlsx" | "xlsm" | "xlsb" | "xls" | "ods" | "sheet" | "spreadsheet" => Self::Sheet,
            "parquet" | "pq" => Self::Parquet,
            _ => return None,
        })
    }

    /// A format answers can be stored as.
    pub fn output(name: &str) -> Option<Self> {
        Self::parse(name).filter(|f| f.is_output())
    }

    /// The format of `path` by its extension (`data.csv.gz` holds CSV); text for unknown ones.
    pub fn of_path(path: &Path) -> Self {
        crate::files::compressed::plain_name(path)
            .extension()
            .and_then(|e| e.to_str())
            .and_then(Self::parse)
            .unwrap_or(Self::Txt)
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Json => "json",
            Self::Jsonl => "jsonl",
            Self::Csv => "csv",
            Self::Tsv => "tsv",
            Self::Yaml => "yaml",
            Self::Xml => "xml",
            Self::Md => "md",
            Self::Html => "html",
            Self::Txt => "txt",
            Self::Sheet => "spreadsheet",
            Self::Parquet => "parquet",
        }
    }

    /// Whether answers can be stored in it.
    pub fn is_output(self) -> bool {
        self != Self::Sheet
    }

    /// The file extension of a stored answer (without the dot).
    pub fn extension(self) -> &'static str {
        match self {
            Self::Sheet => "xlsx",
            other => other.name(),
        }
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::Jsonl => "application/jsonl",
            Self::Csv => "text/csv",
            Self::Tsv => "text/tab-separated-values",
            Self::Yaml => "application/yaml",
            Self::Xml => "application/xml",
            Self::Md => "text/markdown",
            Self::Html => "text/html",
            Self::Txt => "text/plain",
            Self::Sheet => "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
            Self::Parquet => "application/vnd.apache.parquet",
        }
    }

    /// True when `for_each_item` streams this format (memory does not grow with the file).
    pub fn streams(self) -> bool {
        matches!(self, Self::Jsonl | Self::Csv | Self::Tsv | Self::Json)
    }

    /// Whether its rows have columns that a header names (CSV, TSV, sheets, Parquet).
    pub fn is_table(self) -> bool {
        matches!(self, Self::Csv | Self::Tsv | Self::Sheet | Self::Parquet)
    }

    /// Whether every file of this format holds a list (of rows or of lines).
    pub fn is_list(self) -> bool {
        matches!(self, Self::Jsonl | Self::Csv | Self::Tsv | Self::Parquet)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_and_aliases_parse_and_every_name_parses_back() {
        for (name, format) in [
            ("JSON", Format::Json),
            (".ndjson", Format::Jsonl),
            ("tab", Format::Tsv),
            ("yml", Format::Yaml),
            ("markdown", Format::Md),
            ("htm", Format::Html),
            ("log", Format::Txt),
            ("ods", Format::Sheet),
            ("pq", Format::Parquet),
        ] {
            assert_eq!(Format::parse(name), Some(format), "{name}");
        }
        assert_eq!(Format::parse("docx"), None);
        for format in Format::OUTPUTS.into_iter().chain([Format::Sheet]) {
            assert_eq!(Format::parse(format.name()), Some(format));
        }
    }

    #[test]
    fn workbooks_are_read_but_never_written() {
        assert_eq!(Format::output("xlsx"), None);
        assert_eq!(Format::output("csv"), Some(Format::Csv));
        assert!(Format::OUTPUTS.iter().all(|f| f.is_output()));
    }

    #[test]
    fn a_path_says_its_format_through_compression_and_text_is_the_default() {
        assert_eq!(Format::of_path(Path::new("a/b.csv.gz")), Format::Csv);
        assert_eq!(Format::of_path(Path::new("notes.md")), Format::Md);
        assert_eq!(Format::of_path(Path::new("README")), Format::Txt);
        assert_eq!(Format::of_path(Path::new("data.unknown")), Format::Txt);
    }
}
