//! What `read_file` is asked and answers, for each reader of a kind of file.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// What to read. `offset`/`length` page by lines (text), rows (sheets) or pages (PDF).
#[derive(Debug, Clone, Deserialize)]
pub struct ReadRequest {
    pub offset: i64,
    pub length: u64,
    pub sheet: Option<String>,
    pub range: Option<String>,
    pub byte_offset: Option<u64>,
    /// Bytes of text this answer may hold, when tighter or looser than the inspector's
    /// (the tool holds a page to the inline budget; a script reads larger pages).
    pub budget: Option<usize>,
}

impl Default for ReadRequest {
    fn default() -> Self {
        Self {
            offset: 0,
            length: 1000,
            sheet: None,
            range: None,
            byte_offset: None,
            budget: None,
        }
    }
}

/// The answer; which fields are set depends on `kind`.
#[derive(Debug, Clone, Default, Serialize, JsonSchema)]
pub struct ReadAnswer {
    pub path: String,
    /// `text`, `sheet`, `table` (Parquet), `pdf`, `document` (docx) or `image`.
    pub kind: String,
    /// Text: the lines, joined with newlines. PDF: the pages as markdown with page markers.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub content: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub encoding: Option<String>,
    /// 0-based number of the first line (text), row (sheet) or page (PDF) delivered, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub offset: Option<u64>,
    /// How many lines, rows or pages were delivered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Lines, rows or pages in all, when known.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub total: Option<u64>,
    /// The `offset` to read next; absent at the end.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_offset: Option<u64>,
    /// When a long line was cut: the `byte_offset` to continue inside it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub next_byte_offset: Option<u64>,
    /// True when the answer stops early because of the size budget or a cut line.
    pub truncated: bool,
    /// Sheets: the sheet read, every sheet's name, the range read and the cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sheet: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sheets: Option<Vec<String>>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub range: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub rows: Option<Vec<Vec<Value>>>,
    /// Tables (Parquet): the column names of `rows`' cells.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub columns: Option<Vec<String>>,
    /// Images: the original format and size, and the size shown.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub image: Option<ImageInfo>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// The images shown, re-encoded (sent as MCP image blocks, not in the structured answer):
    /// an image file's picture, a PDF page's embedded images.
    #[serde(skip)]
    pub images_data: Vec<(Vec<u8>, &'static str)>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct ImageInfo {
    pub format: String,
    pub width: u32,
    pub height: u32,
    pub bytes: u64,
    pub shown_width: u32,
    pub shown_height: u32,
    pub shown_mime_type: String,
    pub shown_bytes: u64,
}
