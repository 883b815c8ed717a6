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
            Ok(schema) => {
                if schema.format == "parquet" {
                    warm_queries(engine);
                }
                answer::structured(&schema, file_text::schema_text(&schema))
            }
            Err(e) => answer::error(&e),
        }
    }
}

/// A model that read a Parquet file's columns is about to ask a question of them, a turn from
/// now: the query engine is made ready meanwhile, once an engine (`Querier::warm`). Only then:
/// a session that never queries is spared the memory a warm-up brings in (the code of
/// DataFusion's planner and readers, ~20 MB resident), and a CSV's first question parses the
/// whole file, beside which a process's first query costs little.
fn warm_queries(engine: &Arc<Engine>) {
    let engine = engine.clone();
    tokio::task::spawn_blocking(move || {
        let started = std::time::Instant::now();
        match engine.queries.warm() {
            Ok(true) => tracing::debug!("query engine warmed up in {:?}", started.elapsed()),
            Ok(false) => {}
            Err(e) => tracing::warn!("the query engine's warm-up failed: {e}"),
        }
    });
}
