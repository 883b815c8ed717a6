//! `read_file`: part of a file, exactly, within a budget.

use base64::Engine as _;
use rmcp::model::ContentBlock as Content;
use schemars::JsonSchema;
use serde::{Deserialize, Deserializer};
use serde_json::Value;

use super::prelude::*;
use crate::ToolError;
use crate::server::{answer, file_text, file_work};
use offload_formats::files::{ReadAnswer, ReadRequest};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub path: String,
    /// desktop-commander's flag for a URL in `path`: accepted, not listed (a URL is known by
    /// its scheme anyway).
    #[serde(default, rename = "isUrl")]
    #[schemars(skip)]
    pub is_url: Option<bool>,
    /// First line, row or page (0-based); negative: from the end.
    #[serde(default)]
    pub offset: i64,
    /// How many (1000).
    #[serde(default = "thousand")]
    pub length: u64,
    /// Name or 0-based index.
    #[serde(default, deserialize_with = "text_or_number")]
    #[schemars(with = "Option<String>")]
    pub sheet: Option<String>,
    /// Cells, A1:D100.
    #[serde(default)]
    pub range: Option<String>,
    /// From the answer's next_byte_offset.
    #[serde(default)]
    pub byte_offset: Option<u64>,
}

fn thousand() -> u64 {
    1000
}

/// A sheet named by text or by a number.
fn text_or_number<'de, D: Deserializer<'de>>(d: D) -> Result<Option<String>, D::Error> {
    use serde::de::Error;
    match Option::<Value>::deserialize(d)? {
        None | Some(Value::Null) => Ok(None),
        Some(Value::String(s)) => Ok(Some(s)),
        Some(Value::Number(n)) => Ok(Some(n.to_string())),
        Some(other) => Err(D::Error::custom(format!(
            "sheet must be a name or an index, not {other}"
        ))),
    }
}

pub struct ReadFile;

impl OwnTool for ReadFile {
    type Params = Params;
    const NAME: &'static str = "read_file";
    const TITLE: &'static str = "Read part of a file";
    const DESCRIPTION: &'static str = "Read part of a file exactly: lines from offset, sheet rows or a range, PDF pages as \
         Markdown, images. An answer fits a budget and says how to go on.";
    const HINTS: Hints = Hints::ReadsFiles;
    // No output schema: a page reaches a model once, as text (see `read_file`).
    const OUTPUT: Option<Output> = None;

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        read_file(engine, p, ctx).await
    }
}

/// `read_file` as a model gets it: the page within the inline budget, sent once — as text
/// under a one-line header (clients that show structured content would otherwise get it as
/// escaped JSON, and the rest twice) — with its numbers in `_meta` for programs.
async fn read_file(engine: &Arc<Engine>, p: Params, ctx: &Ctx) -> CallToolResult {
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
const PAGE_META: &str = "dev.offload/page";

/// The part of the file `p` names, within `budget` bytes of text (the inspector's when `None`).
pub(in crate::server) async fn read_page(
    engine: &Arc<Engine>,
    p: Params,
    ctx: &Ctx,
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
    file_work::run(engine, p.path, ctx, move |files, file, path, observer| {
        files.read(file, path, &request, observer)
    })
    .await
}

/// A page as one text block (header line, then the page) and its images; the numbers of the
/// header again, as JSON, in `_meta` — never the page itself.
fn page_answer(mut read: ReadAnswer) -> CallToolResult {
    let images = std::mem::take(&mut read.images_data);
    let mut result = CallToolResult::success(vec![Content::text(file_text::read_text(&read))]);
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
