//! `query_file`: SQL or jq over a data file; only the result comes back.

use super::prelude::*;
use crate::server::query;

pub struct QueryFile;

impl OwnTool for QueryFile {
    type Params = params::QueryFile;
    const NAME: &'static str = "query_file";
    const TITLE: &'static str = "Query a data file";
    const DESCRIPTION: &'static str = "SQL (or jq) over a CSV, TSV, JSON, JSONL or Parquet file or a sheet, without reading \
         it; only the result comes back. Example: {\"path\": \
         \"sales.csv\", \"sql\": \"SELECT region, SUM(amount) FROM data GROUP BY region\"}";
    const HINTS: Hints = Hints::CreatesFiles;
    const OUTPUT: Option<Output> = Some(Output::of::<query::QueryAnswer>(
        "columns rows results row_count truncated",
    ));

    /// Storing its result writes into a root.
    fn scopes(args: Option<&JsonObject>) -> Vec<Scope> {
        let stores = args.is_some_and(|a| {
            ["description", "storage_path", "filename", "file_format"]
                .iter()
                .any(|k| a.get(*k).is_some_and(|v| !v.is_null()))
        });
        if stores {
            vec![Scope::Read, Scope::Store]
        } else {
            vec![Scope::Read]
        }
    }

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        query::query_file(engine, p, ctx).await
    }
}
