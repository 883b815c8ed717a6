//! `get_file_schema`: a file's structure, fast on many-GB files.

use schemars::JsonSchema;
use serde::Deserialize;

use super::prelude::*;
use crate::server::{answer, file_text, file_work};
use offload_formats::files;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Absolute, relative to the default directory, s3:// or an allowed URL.
    pub path: String,
    /// Sample values per column (5).
    #[serde(default = "five")]
    pub sample_rows: usize,
}

fn five() -> usize {
    5
}

pub struct GetFileSchema;

impl OwnTool for GetFileSchema {
    type Params = Params;
    const NAME: &'static str = "get_file_schema";
    const TITLE: &'static str = "Show a file's structure";
    const DESCRIPTION: &'static str = "A file's structure, fast on many-GB files: CSV columns, types, exact row count, \
         samples; JSON/YAML/XML shape; sheets; PDF pages; images. Use it first.";
    const HINTS: Hints = Hints::ReadsFiles;
    const OUTPUT: Option<Output> = Some(Output::of::<files::Schema>(
        "path format size row_count columns",
    ));

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        let sample_rows = p.sample_rows.min(50);
        let result = file_work::run(engine, p.path, ctx, move |files, file, path, observer| {
            files.schema(file, path, sample_rows, observer)
        })
        .await;
        match result {
            Ok(schema) => answer::structured(&schema, file_text::schema_text(&schema)),
            Err(e) => answer::error(&e),
        }
    }
}
