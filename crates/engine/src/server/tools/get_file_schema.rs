//! `get_file_schema`: a file's structure, fast on many-GB files.

use super::prelude::*;
use crate::server::file_tools;
use offload_formats::files;

pub struct GetFileSchema;

impl OwnTool for GetFileSchema {
    type Params = params::GetFileSchema;
    const NAME: &'static str = "get_file_schema";
    const TITLE: &'static str = "Show a file's structure";
    const DESCRIPTION: &'static str = "A file's structure, fast on many-GB files: CSV columns, types, exact row count, \
         samples; JSON/YAML/XML shape; sheets; PDF pages; images. Use it first.";
    const HINTS: Hints = Hints::ReadsFiles;
    const OUTPUT: Option<Output> = Some(Output::of::<files::Schema>(
        "path format size row_count columns",
    ));

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        file_tools::get_file_schema(engine, p, ctx).await
    }
}
