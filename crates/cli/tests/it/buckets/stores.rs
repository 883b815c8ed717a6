//! Responses stored in bucket roots: new objects only, records every process lists, read-only
//! roots refused.

use offload_testkit::s3::{BUCKET, Weed};
use offload_testkit::{TestContext, call, error_code, page, structured, text};
use serde_json::{Value, json};

use super::url;

/// Two Offload processes (their own homes, data directories and records) sharing one bucket.
fn sharing(weed: &Weed, prefix: &str) -> (TestContext, TestContext) {
    let make = || {
        let ctx = TestContext::new();
        ctx.write_config(json!({
            "roots": [ctx.root, weed.root(prefix, true)],
            "mcpServers": {"fx": TestContext::fixture(&[])},
            "tools": {"expose": "meta"},
        }));
        ctx
    };
    (make(), make())
}

#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn responses_stored_in_a_bucket_are_listed_and_read_by_another_process() {
    use rmcp::model::{ReadResourceRequestParams, ResourceContents};
    let weed = Weed::get().await;
    let prefix = weed.prefix("share");
    let (a, b) = sharing(weed, &prefix);
    let client_a = a.client().await;
    let store = |tool: &str, args: Value, extra: Value| {
        let mut call_args = json!({"server": "fx", "tool_name": tool, "tool_args": args});
        for (k, v) in extra.as_object().unwrap() {
            call_args[k] = v.clone();
        }
        call(&client_a, "call_tool_and_store", call_args)
    };
    let answers = url(&prefix, "answers");
    // Small: one conditional PUT. Large (~24 MB): a multipart upload, then a conditional copy.
    let small = store(
        "rows",
        json!({"n": 3}),
        json!({"storage_path": answers, "filename": "users.csv", "description": "three users"}),
    )
    .await;
    let large = store(
        "rows",
        json!({"n": 220_000}),
        json!({"storage_path": answers, "file_format": "jsonl"}),
    )
    .await;
    let mut uris = Vec::new();
    for r in [&small, &large] {
        assert_ne!(r.is_error, Some(true), "{r:?}");
        let s = structured(r);
        let path = s["path"].as_str().unwrap();
        assert!(path.starts_with(&format!("{answers}/")), "{path}");
        assert_eq!(s["uri"], path);
        let key = path.strip_prefix(&format!("s3://{BUCKET}/")).unwrap();
        let object = weed.object(key).await.expect("the object is in the bucket");
        assert_eq!(object.len() as u64, s["bytes"].as_u64().unwrap());
        uris.push(path.to_owned());
    }
    assert!(structured(&large)["bytes"].as_u64().unwrap() > 20 << 20);
    let csv = weed
        .object(&format!("{prefix}/answers/users.csv"))
        .await
        .unwrap();
    assert!(
        String::from_utf8(csv)
            .unwrap()
            .starts_with("id,name,email,active,score\r\n0,")
    );
    // Nothing is replaced: the same name again is refused and the object is unchanged.
    let again = store(
        "rows",
        json!({"n": 1}),
        json!({"storage_path": answers, "filename": "users.csv"}),
    )
    .await;
    assert_eq!(error_code(&again), "file_exists", "{}", text(&again));
    assert_eq!(
        weed.object(&format!("{prefix}/answers/users.csv"))
            .await
            .unwrap()
            .len() as u64,
        structured(&small)["bytes"].as_u64().unwrap()
    );
    // No upload left half-done, no staging copies left.
    let keys = weed.list(&prefix).await;
    assert!(
        keys.iter().all(|k| !k.contains("/.offload/uploads/")),
        "{keys:?}"
    );
    assert_eq!(
        keys.iter()
            .filter(|k| k.contains("/.offload/records/"))
            .count(),
        2,
        "{keys:?}"
    );
    let staging = a.home.join(".local/share/offload/staging");
    let left: Vec<_> = std::fs::read_dir(&staging)
        .unwrap_or_else(|e| panic!("{}: {e}", staging.display()))
        .flatten()
        .collect();
    assert!(left.is_empty(), "staging copies left: {left:?}");
    // Outside the bucket root's prefix, or into a read-only place: refused.
    let outside = store(
        "rows",
        json!({"n": 1}),
        json!({"storage_path": format!("s3://{BUCKET}/{prefix}-evil")}),
    )
    .await;
    assert_eq!(error_code(&outside), "path_outside_roots");

    // The other process lists both responses and reads them.
    let client_b = b.client().await;
    let listed = client_b.list_all_resources().await.unwrap();
    let listed: Vec<&str> = listed.iter().map(|r| r.uri.as_str()).collect();
    for uri in &uris {
        assert!(listed.contains(&uri.as_str()), "{uri} not in {listed:?}");
    }
    let read = client_b
        .read_resource(ReadResourceRequestParams::new(uris[0].clone()))
        .await
        .unwrap();
    match &read.contents[0] {
        ResourceContents::TextResourceContents { text, .. } => {
            assert!(text.starts_with("id,name,email,active,score\r\n"), "{text}")
        }
        other => panic!("{other:?}"),
    }
    let tail = call(
        &client_b,
        "read_file",
        json!({"path": uris[1], "offset": -1}),
    )
    .await;
    assert!(
        page(&tail)["content"]
            .as_str()
            .unwrap()
            .contains("\"id\":219999"),
        "{tail:?}"
    );
    client_a.cancel().await.unwrap();
    client_b.cancel().await.unwrap();
}

#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn a_read_only_bucket_root_refuses_storing() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("ro");
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root, weed.root(&prefix, false)],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "tools": {"expose": "meta"},
    }));
    let client = ctx.client().await;
    let r = call(&client, "call_tool_and_store", json!({"server": "fx", "tool_name": "rows", "tool_args": {"n": 2}, "storage_path": url(&prefix, "x")})).await;
    assert_eq!(error_code(&r), "read_only_root", "{}", text(&r));
    assert_eq!(weed.list(&prefix).await, Vec::<String>::new());
    client.cancel().await.unwrap();
}
