//! `summarize_file`: a file's first and last lines, line count, size and encoding.

use schemars::JsonSchema;
use serde::Deserialize;

use super::prelude::*;
use crate::server::{answer, file_text, file_work};
use offload_formats::files;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub path: String,
    /// Lines from the start (20).
    #[serde(default = "twenty")]
    pub max_lines: u64,
}

fn twenty() -> u64 {
    20
}

pub struct SummarizeFile;

impl OwnTool for SummarizeFile {
    type Params = Params;
    const NAME: &'static str = "summarize_file";
    const TITLE: &'static str = "Summarize a file";
    const DESCRIPTION: &'static str = "A file's first and last lines, exact line count, size and encoding; cheap at any \
         size.";
    const HINTS: Hints = Hints::ReadsFiles;
    const OUTPUT: Option<Output> = Some(Output::of::<files::Summary>(
        "path size line_count head tail",
    ));

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        let max_lines = p.max_lines.min(10_000);
        let result = file_work::run(engine, p.path, ctx, move |files, file, path, observer| {
            files.summarize(file, path, max_lines, observer)
        })
        .await;
        match result {
            Ok(summary) => answer::structured(&summary, file_text::summary_text(&summary)),
            Err(e) => answer::error(&e),
        }
    }
}
