//! The file tools on objects, the guard on keys, and a bucket that does not answer.

use std::time::{Duration, Instant};

use offload_testkit::s3::{BUCKET, Weed};
use offload_testkit::{TestContext, call, error_code, structured, text};
use serde_json::{Value, json};

use super::{csv_body, url, with_bucket};

#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn file_tools_answer_on_objects_exactly_as_on_local_files() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("tools");
    let ctx = with_bucket(weed, &prefix, false);
    let log: String = (0..60_000)
        .map(|i| format!("line {i} {}\n", "x".repeat(i % 40)))
        .collect();
    let json_doc = json!({"items": (0..500).map(|i| json!({"id": i, "tags": ["a", "b"], "ok": i % 2 == 0})).collect::<Vec<_>>()});
    let files: Vec<(&str, Vec<u8>)> = vec![
        ("orders.csv", csv_body().into_bytes()),
        ("app.log", log.into_bytes()),
        ("doc.json", serde_json::to_vec_pretty(&json_doc).unwrap()),
    ];
    for (name, body) in &files {
        std::fs::write(ctx.root.join(name), body).unwrap();
        weed.put(&format!("{prefix}/{name}"), body.clone()).await;
    }
    let client = ctx.client().await;
    let cases = [
        ("get_file_schema", "orders.csv", json!({})),
        ("summarize_file", "orders.csv", json!({})),
        (
            "read_file",
            "orders.csv",
            json!({"offset": 0, "length": 20}),
        ),
        ("read_file", "orders.csv", json!({"offset": -5})),
        (
            "read_file",
            "orders.csv",
            json!({"offset": 15_000, "length": 10}),
        ),
        ("get_file_schema", "app.log", json!({})),
        ("summarize_file", "app.log", json!({})),
        ("read_file", "app.log", json!({"offset": 0, "length": 50})),
        ("read_file", "app.log", json!({"offset": -30})),
        (
            "read_file",
            "app.log",
            json!({"offset": 45_123, "length": 7}),
        ),
        ("read_file", "app.log", json!({"byte_offset": 1_000_000})),
        ("get_file_schema", "doc.json", json!({})),
        ("summarize_file", "doc.json", json!({})),
    ];
    for (tool, name, extra) in cases {
        let local_path = ctx.root.join(name).display().to_string();
        let object_url = url(&prefix, name);
        let mut args = extra.clone();
        args["path"] = json!(local_path);
        let local = call(&client, tool, args.clone()).await;
        args["path"] = json!(object_url);
        let remote = call(&client, tool, args).await;
        assert_ne!(
            local.is_error,
            Some(true),
            "{tool} {name} {extra}: {local:?}"
        );
        assert_ne!(
            remote.is_error,
            Some(true),
            "{tool} {name} {extra}: {remote:?}"
        );
        // The same answer, but for the name it gives.
        let same = |v: &Value| {
            serde_json::to_string(v)
                .unwrap()
                .replace(&object_url, &local_path)
        };
        assert_eq!(
            same(&super::value(tool, &remote)),
            serde_json::to_string(&super::value(tool, &local)).unwrap(),
            "{tool} {name} {extra}"
        );
        assert_eq!(
            text(&remote).replace(&object_url, &local_path),
            text(&local),
            "{tool} {name} {extra}"
        );
    }
    // The bucket root is listed with the local one.
    let dirs = call(&client, "list_allowed_directories", json!({})).await;
    let listed = &structured(&dirs)["directories"];
    assert!(
        listed
            .as_array()
            .unwrap()
            .iter()
            .any(|d| d["path"] == format!("s3://{BUCKET}/{prefix}") && d["writable"] == false),
        "{listed}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn keys_outside_the_prefix_and_encoded_tricks_are_refused() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("guard");
    let ctx = with_bucket(weed, &prefix, true);
    // Objects beside the root that must stay out of reach.
    weed.put(&format!("{prefix}-evil/secret.csv"), b"a\n1\n".to_vec())
        .await;
    weed.put(&format!("other/{prefix}/secret.csv"), b"a\n1\n".to_vec())
        .await;
    weed.put(&format!("{prefix}/inside.csv"), b"a\n1\n".to_vec())
        .await;
    let client = ctx.client().await;
    let cases = [
        (
            format!("s3://{BUCKET}/{prefix}-evil/secret.csv"),
            "path_outside_roots",
        ),
        (
            format!("s3://{BUCKET}/other/{prefix}/secret.csv"),
            "path_outside_roots",
        ),
        (
            format!("s3://another-bucket/{prefix}/inside.csv"),
            "path_outside_roots",
        ),
        (
            format!("s3://{}/{prefix}/inside.csv", BUCKET.to_uppercase()),
            "path_outside_roots",
        ),
        (
            format!("gs://{BUCKET}/{prefix}/inside.csv"),
            "path_outside_roots",
        ),
        (
            format!("s3://{BUCKET}/{prefix}/../{prefix}-evil/secret.csv"),
            "path_unusable",
        ),
        (
            format!("s3://{BUCKET}/{prefix}/./inside.csv"),
            "path_unusable",
        ),
        (
            format!("s3://{BUCKET}/{prefix}/%2e%2e/{prefix}-evil/secret.csv"),
            "path_unusable",
        ),
        (
            format!("s3://{BUCKET}/{prefix}%2F..%2F{prefix}-evil/secret.csv"),
            "path_unusable",
        ),
        (
            format!("s3://{BUCKET}/{prefix}/..%5c{prefix}-evil/secret.csv"),
            "path_unusable",
        ),
        (
            format!("s3://{BUCKET}/{prefix}\\..\\{prefix}-evil\\secret.csv"),
            "path_unusable",
        ),
        (
            format!("s3://{BUCKET}/{prefix}//inside.csv"),
            "path_unusable",
        ),
        (
            format!("s3://{BUCKET}/{prefix}/inside.csv\u{0}"),
            "path_unusable",
        ),
        (
            format!("s3://{BUCKET}/{prefix}/missing.csv"),
            "path_not_found",
        ),
        (format!("s3://{BUCKET}/{prefix}"), "path_unusable"),
    ];
    for (path, code) in &cases {
        for tool in ["read_file", "summarize_file", "get_file_schema"] {
            let r = call(&client, tool, json!({"path": path})).await;
            assert_eq!(error_code(&r), *code, "{tool} {path}: {}", text(&r));
            assert!(!text(&r).contains("a\n1"), "{tool} {path} leaked content");
        }
    }
    // The object inside is readable, as a check that the refusals are about the paths.
    let r = call(
        &client,
        "read_file",
        json!({"path": url(&prefix, "inside.csv")}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    client.cancel().await.unwrap();
}

#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn an_unreachable_bucket_answers_within_seconds_and_local_files_do_not_wait() {
    // A port nothing listens on: connections are refused at once; the client's few retries
    // must end well within the call.
    let closed = offload_testkit::free_port();
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root, {
            "path": "s3://down/data", "writable": false,
            "endpoint": format!("http://127.0.0.1:{closed}"), "region": "us-east-1",
            "accessKeyId": "k", "secretAccessKey": "s",
        }],
        "mcpServers": {}, "tools": {"expose": "meta"},
    }));
    std::fs::write(ctx.root.join("local.txt"), "here\n").unwrap();
    let client = ctx.client().await;
    let started = Instant::now();
    let down = call(
        &client,
        "summarize_file",
        json!({"path": "s3://down/data/x.csv"}),
    );
    let local = async {
        let r = call(&client, "read_file", json!({"path": "local.txt"})).await;
        (r, started.elapsed())
    };
    let (down, (local, local_took)) = tokio::join!(down, local);
    let down_took = started.elapsed();
    assert_eq!(error_code(&down), "path_unusable", "{}", text(&down));
    assert!(text(&down).contains("x.csv"), "{}", text(&down));
    assert!(
        down_took < Duration::from_secs(20),
        "the down bucket took {down_took:?}"
    );
    assert_eq!(offload_testkit::page(&local)["content"], "here");
    assert!(
        local_took < Duration::from_secs(2),
        "the local read waited {local_took:?}"
    );
    client.cancel().await.unwrap();
}
