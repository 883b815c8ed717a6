//! Roots in object storage, against real servers: SeaweedFS `weed mini` for S3 (it checks SigV4
//! signatures, ranges and conditional writes), Azurite for Azure Blob and fake-gcs-server for
//! Google Cloud Storage. They and Azure's Python client come from `scripts/setup-interop.sh` (the
//! test script runs it), so these tests are `#[ignore]`d for a bare `cargo test`.
//!
//! - `reads`: the file tools on objects answer exactly as on the same file in a local root, keys
//!   outside a bucket root's prefix are refused, and a bucket that cannot be reached answers
//!   within seconds without holding up local files.
//! - `stores`: responses stored as new objects, shared by two processes, read-only roots.
//! - `inputs`: objects into arguments (whole, batches, `$file`) and into `query_file`.
//! - `azure`: `az://` roots through the same code; `gcs`: `gs://` roots against fake-gcs-server.

mod azure;
mod gcs;
mod inputs;
mod reads;
mod stores;

use offload_testkit::s3::{BUCKET, Weed};
use offload_testkit::{TestContext, call, error_code, page, structured};
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

/// Against another store's root at `base` (holding `orders.csv` and `app.log`, copies of the
/// files in the local root): the file tools answer as on the local copies and a key beside the
/// prefix is outside.
pub(super) async fn reads_as_local(ctx: &TestContext, base: &str) {
    let client = ctx.client().await;
    for (tool, name, extra) in [
        ("get_file_schema", "orders.csv", json!({})),
        ("summarize_file", "app.log", json!({})),
        (
            "read_file",
            "app.log",
            json!({"offset": 21_000, "length": 4}),
        ),
        ("read_file", "orders.csv", json!({"offset": -3})),
    ] {
        let local_path = ctx.root.join(name).display().to_string();
        let blob = format!("{base}/{name}");
        let mut args = extra.clone();
        args["path"] = json!(local_path);
        let local = call(&client, tool, args.clone()).await;
        args["path"] = json!(blob);
        let remote = call(&client, tool, args).await;
        assert_ne!(remote.is_error, Some(true), "{tool} {name}: {remote:?}");
        assert_eq!(
            serde_json::to_string(&value(tool, &remote))
                .unwrap()
                .replace(&blob, &local_path),
            serde_json::to_string(&value(tool, &local)).unwrap(),
            "{tool} {name} {extra}"
        );
    }
    let outside = call(
        &client,
        "read_file",
        json!({"path": format!("{base}-evil/x.csv")}),
    )
    .await;
    assert_eq!(error_code(&outside), "path_outside_roots");
    client.cancel().await.unwrap();
}

/// What a file tool answered, as one value: `read_file`'s page, another tool's structured
/// content.
fn value(tool: &str, answer: &rmcp::model::CallToolResult) -> serde_json::Value {
    if tool == "read_file" {
        page(answer)
    } else {
        structured(answer).clone()
    }
}

/// A response stored under the writable root at `base` is a new object that reads back, and
/// never replaces one.
pub(super) async fn stores_new_objects(ctx: &TestContext, base: &str) {
    let client = ctx.client().await;
    let store = |filename: &str| {
        call(
            &client,
            "call_tool_and_store",
            json!({"server": "fx", "tool_name": "rows", "tool_args": {"n": 3},
                "storage_path": format!("{base}/answers"), "filename": filename}),
        )
    };
    let stored = store("rows.csv").await;
    assert_eq!(
        structured(&stored)["path"],
        format!("{base}/answers/rows.csv"),
        "{stored:?}"
    );
    let back = call(
        &client,
        "read_file",
        json!({"path": format!("{base}/answers/rows.csv")}),
    )
    .await;
    let back = page(&back);
    let content = back["content"].as_str().unwrap_or_default();
    assert!(
        content.starts_with("id,name,email,active,score\n")
            && content.contains("user2@example.com"),
        "{back:?}"
    );
    assert_eq!(error_code(&store("rows.csv").await), "file_exists");
    client.cancel().await.unwrap();
}
