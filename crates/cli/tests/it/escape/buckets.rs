//! The escape corpus for bucket roots, against a real S3 server.

use offload_testkit::{TestContext, call, text};
use serde_json::json;

use super::{SECRET, code_of, read_calls};

/// The corpus for bucket roots, against a real S3 server: keys beside, above and around the
/// root's prefix, dot segments, doubled slashes, backslashes and percent-encoded bytes, through
/// the file tools' `path` and the stores' `storage_path`. Nothing outside the prefix is read, and
/// nothing is written outside it (the bucket is listed before and after).
#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn bucket_escape_attempts_are_refused_and_nothing_outside_the_prefix_is_touched() {
    use offload_testkit::s3::{BUCKET, Weed};
    let weed = Weed::get().await;
    let prefix = weed.prefix("escape");
    let ctx = TestContext::new();
    std::fs::write(ctx.root.join("inside.csv"), "a,b\n1,2\n").unwrap();
    ctx.write_config(json!({
        "roots": [ctx.root, weed.root(&format!("{prefix}/root"), true)],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "tools": {"expose": "meta"},
    }));
    for key in [
        "root-evil/secret.txt",
        "secret.txt",
        "other/root/secret.txt",
        "root/../secret.txt",
    ] {
        weed.put(&format!("{prefix}/{key}"), SECRET.as_bytes().to_vec())
            .await;
    }
    weed.put(&format!("{prefix}/root/inside.txt"), b"inside\n".to_vec())
        .await;
    let outside_keys = |keys: Vec<String>| -> Vec<String> {
        keys.into_iter()
            .filter(|k| !k.starts_with(&format!("{prefix}/root/")))
            .collect()
    };
    let before = outside_keys(weed.list(&prefix).await);
    let root = format!("s3://{BUCKET}/{prefix}/root");
    let base = format!("s3://{BUCKET}/{prefix}");
    const OUT: &[&str] = &["path_outside_roots"];
    const UNUSABLE: &[&str] = &["path_unusable"];
    let reads: Vec<(String, &[&str])> = vec![
        (format!("{base}/secret.txt"), OUT),
        (format!("{base}/root-evil/secret.txt"), OUT),
        (format!("{base}/other/root/secret.txt"), OUT),
        (format!("s3://{BUCKET}-other/{prefix}/root/inside.txt"), OUT),
        (
            format!("s3://{}/{prefix}/root/inside.txt", BUCKET.to_uppercase()),
            OUT,
        ),
        (format!("gs://{BUCKET}/{prefix}/root/inside.txt"), OUT),
        (format!("az://{BUCKET}/{prefix}/root/inside.txt"), OUT),
        (format!("{root}/../secret.txt"), UNUSABLE),
        (format!("{root}/sub/../../secret.txt"), UNUSABLE),
        (format!("{root}/./../secret.txt"), UNUSABLE),
        (format!("{root}/%2e%2e/secret.txt"), UNUSABLE),
        (format!("{root}/%2E%2E/secret.txt"), UNUSABLE),
        (format!("{root}%2f..%2fsecret.txt"), UNUSABLE),
        (format!("{root}/..%2fsecret.txt"), UNUSABLE),
        (format!("{root}/..%5csecret.txt"), UNUSABLE),
        (format!("{root}/%252e%252e/secret.txt"), UNUSABLE),
        (format!("{root}\\..\\secret.txt"), UNUSABLE),
        (format!("{root}//../secret.txt"), UNUSABLE),
        (format!("{root}/inside.txt\0/../../secret.txt"), UNUSABLE),
        (
            format!("{root}/\u{2024}\u{2024}/secret.txt"),
            &["path_not_found"],
        ),
        (format!("{root}/..\u{2215}secret.txt"), &["path_not_found"]),
        (format!("s3://{BUCKET}/{prefix}/root@evil/secret.txt"), OUT),
        (format!("s3://{BUCKET}:443/{prefix}/root/inside.txt"), OUT),
        (format!("s3://user@{BUCKET}/{prefix}/root/inside.txt"), OUT),
    ];
    let writes: Vec<(String, &[&str])> = vec![
        (base.clone(), OUT),
        (format!("{base}/root-evil"), OUT),
        (format!("{root}/../root-evil"), UNUSABLE),
        (format!("{root}/%2e%2e"), UNUSABLE),
        (format!("{root}%2f..%2froot-evil"), UNUSABLE),
        (format!("s3://{BUCKET}-other/{prefix}/root"), OUT),
        // Offload's own records: a file stored there would be listed as a response.
        (format!("{root}/.offload/records"), UNUSABLE),
        (format!("{root}/.offload"), UNUSABLE),
    ];
    let client = ctx.client().await;
    let mut attempts = 0;
    let mut escapes = Vec::new();
    for (path, codes) in &reads {
        for (tool, param, args) in read_calls(path) {
            attempts += 1;
            let r = call(&client, tool, args).await;
            let code = code_of(&r);
            if !codes.contains(&code.as_str()) || text(&r).contains(SECRET) {
                escapes.push(format!("{tool} {param}={path:?}: {code} {:.200}", text(&r)));
            }
        }
    }
    for (place, codes) in &writes {
        for (tool, mut args) in [
            (
                "call_tool_and_store",
                json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "escape"}}),
            ),
            (
                "query_file",
                json!({"path": "inside.csv", "sql": "SELECT * FROM data"}),
            ),
        ] {
            attempts += 1;
            args["storage_path"] = json!(place);
            let r = call(&client, tool, args).await;
            let code = code_of(&r);
            if !codes.contains(&code.as_str()) {
                escapes.push(format!(
                    "{tool} storage_path={place:?}: {code} {:.200}",
                    text(&r)
                ));
            }
        }
    }
    // The object inside is readable: the refusals are about the paths.
    let r = call(
        &client,
        "read_file",
        json!({"path": format!("{root}/inside.txt")}),
    )
    .await;
    assert_eq!(code_of(&r), "ok", "{}", text(&r));
    assert!(
        escapes.is_empty(),
        "{} of {attempts} bucket attempts not refused as expected:\n{}",
        escapes.len(),
        escapes.join("\n")
    );
    assert_eq!(
        outside_keys(weed.list(&prefix).await),
        before,
        "nothing written outside the prefix"
    );
    eprintln!("bucket escape corpus: {attempts} attempts, 0 escapes");
    client.cancel().await.unwrap();
}
