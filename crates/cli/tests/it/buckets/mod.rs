//! Roots in object storage, against real servers: SeaweedFS `weed mini` for S3 (it checks SigV4
//! signatures, ranges and conditional writes) and Azurite for Azure Blob. `weed`, Azurite and
//! Azure's Python client come from `scripts/setup-interop.sh` (the test script runs it), so these
//! tests are `#[ignore]`d for a bare `cargo test`.
//!
//! - `reads`: the file tools on objects answer exactly as on the same file in a local root, keys
//!   outside a bucket root's prefix are refused, and a bucket that cannot be reached answers
//!   within seconds without holding up local files.
//! - `stores`: responses stored as new objects, shared by two processes, read-only roots.
//! - `inputs`: objects into arguments (whole, batches, `$file`) and into `query_file`.
//! - `azure`: `az://` roots through the same code.

mod azure;
mod inputs;
mod reads;
mod stores;

use offload_testkit::TestContext;
use offload_testkit::s3::{BUCKET, Weed};
use serde_json::json;

/// A context with its local root and the bucket root `s3://offload-test/<prefix>`.
pub(super) fn with_bucket(weed: &Weed, prefix: &str, writable: bool) -> TestContext {
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root, weed.root(prefix, writable)],
        "mcpServers": {},
        "tools": {"expose": "meta"},
    }));
    ctx
}

pub(super) fn url(prefix: &str, key: &str) -> String {
    format!("s3://{BUCKET}/{prefix}/{key}")
}

pub(super) fn csv_body() -> String {
    let mut csv = String::from("id,name,amount,when\n");
    for i in 0..20_000 {
        let name = if i % 500 == 0 {
            "\"two\nlines, quoted\"".to_owned()
        } else {
            format!("n{i}")
        };
        csv.push_str(&format!(
            "{i},{name},{}.5,2024-05-{:02}\n",
            i * 3,
            i % 28 + 1
        ));
    }
    csv
}
