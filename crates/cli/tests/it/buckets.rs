//! Roots in object storage, against a real S3-compatible server (SeaweedFS `weed mini`, which
//! checks SigV4 signatures, ranges and conditional writes): the file tools on objects answer
//! exactly as on the same file in a local root, keys outside a bucket root's prefix are refused,
//! and a bucket that cannot be reached answers within seconds without holding up local files.
//! `weed` comes from `scripts/setup-interop.sh` (the test script runs it), so these tests are
//! `#[ignore]`d for a bare `cargo test`.

use std::time::{Duration, Instant};

use offload_testkit::s3::{BUCKET, Weed};
use offload_testkit::{TestContext, call, error_code, structured, text};
use serde_json::{Value, json};

/// A context with its local root and the bucket root `s3://offload-test/<prefix>`.
fn with_bucket(weed: &Weed, prefix: &str, writable: bool) -> TestContext {
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root, weed.root(prefix, writable)],
        "mcpServers": {},
        "tools": {"expose": "meta"},
    }));
    ctx
}

fn url(prefix: &str, key: &str) -> String {
    format!("s3://{BUCKET}/{prefix}/{key}")
}

fn csv_body() -> String {
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
            same(structured(&remote)),
            serde_json::to_string(structured(&local)).unwrap(),
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
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
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
    assert_eq!(structured(&local)["content"], "here");
    assert!(
        local_took < Duration::from_secs(2),
        "the local read waited {local_took:?}"
    );
    client.cancel().await.unwrap();
}

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
        structured(&tail)["content"]
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

#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn objects_go_into_arguments_whole_in_batches_and_by_reference() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("inputs");
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root, weed.root(&prefix, false)],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "tools": {"expose": "meta"},
    }));
    let mut csv = String::from("id,name,zip\n");
    for i in 0..25_000 {
        csv.push_str(&format!("{i},\"user {i}, x\",0{}\n", 1000 + i % 9000));
    }
    weed.put(&format!("{prefix}/users.csv"), csv.into_bytes())
        .await;
    weed.put(&format!("{prefix}/cfg.yaml"), b"a: [1, 2]\n".to_vec())
        .await;
    weed.put(&format!("{prefix}/note.txt"), b"from a bucket".to_vec())
        .await;
    let client = ctx.client().await;
    let with_file = |args: Value| {
        let mut a = json!({"server": "fx", "tool_name": "received"});
        for (k, v) in args.as_object().unwrap() {
            a[k] = v.clone();
        }
        call(&client, "call_tool_with_file_content", a)
    };
    // The whole file at the data key, typed like a local CSV.
    let r = with_file(json!({"file_path": url(&prefix, "users.csv"), "data_key": "rows"})).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let s = structured(&r);
    assert_eq!(s["rows"], 25_000);
    assert_eq!(
        s["first"],
        json!({"id": 0, "name": "user 0, x", "zip": "01000"})
    );
    assert_eq!(s["last"]["id"], 24_999);
    // In batches: streamed from the object.
    let r = with_file(
        json!({"file_path": url(&prefix, "users.csv"), "data_key": "rows", "batch_size": 10_000}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let s = structured(&r);
    assert_eq!(
        (
            s["batches"].clone(),
            s["items"].clone(),
            s["succeeded"].clone()
        ),
        (json!(3), json!(25_000), json!(3)),
        "{s}"
    );
    // $file references.
    let r = crate::fx(&client, "received", json!({"cfg": {"$file": url(&prefix, "cfg.yaml"), "as": "data"}, "raw": {"$file": url(&prefix, "note.txt"), "as": "base64"}, "text": {"$file": url(&prefix, "note.txt")}})).await;
    assert_eq!(
        structured(&r)["args"],
        json!({"cfg": {"a": [1, 2]}, "raw": "ZnJvbSBhIGJ1Y2tldA==", "text": "from a bucket"})
    );
    // Outside the prefix: refused like a local path outside the roots.
    let r = crate::fx(
        &client,
        "echo",
        json!({"text": {"$file": format!("s3://{BUCKET}/{prefix}-x/note.txt")}}),
    )
    .await;
    assert_eq!(error_code(&r), "path_outside_roots");
    client.cancel().await.unwrap();
}

#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn query_file_reads_objects_joins_them_with_local_files_and_stores_into_the_bucket() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("query");
    let ctx = with_bucket(weed, &prefix, true);
    let mut orders = String::from("id,region,amount\n");
    for i in 0..30_000 {
        orders.push_str(&format!("{i},r{},{}\n", i % 4, i % 100));
    }
    weed.put(&format!("{prefix}/orders.csv"), orders.clone().into_bytes())
        .await;
    weed.put(
        &format!("{prefix}/doc.json"),
        br#"{"items": [{"n": 1}, {"n": 2}, {"n": 3}]}"#.to_vec(),
    )
    .await;
    std::fs::write(
        ctx.root.join("regions.csv"),
        "region,name\nr0,North\nr1,East\nr2,South\nr3,West\n",
    )
    .unwrap();
    std::fs::write(ctx.root.join("orders.csv"), &orders).unwrap();
    let client = ctx.client().await;
    let sql = "SELECT r.name, SUM(o.amount) AS total, COUNT(*) AS n FROM data o JOIN regions r ON o.region = r.region GROUP BY r.name ORDER BY r.name";
    let remote = call(&client, "query_file", json!({"path": url(&prefix, "orders.csv"), "sql": sql, "tables": {"regions": "regions.csv"}})).await;
    assert_ne!(remote.is_error, Some(true), "{remote:?}");
    let local = call(
        &client,
        "query_file",
        json!({"path": "orders.csv", "sql": sql, "tables": {"regions": "regions.csv"}}),
    )
    .await;
    assert_eq!(structured(&remote)["rows"], structured(&local)["rows"]);
    assert_eq!(
        structured(&remote)["rows"][0],
        json!(["East", 367500, 7500])
    );
    // jq on an object.
    let r = call(
        &client,
        "query_file",
        json!({"path": url(&prefix, "doc.json"), "jq": "[.items[].n] | add"}),
    )
    .await;
    assert_eq!(structured(&r)["results"], json!([6]), "{r:?}");
    // A whole result stored into the bucket, as a new object with its record there.
    let r = call(&client, "query_file", json!({"path": url(&prefix, "orders.csv"), "sql": "SELECT * FROM data WHERE amount = 7", "storage_path": url(&prefix, "results"), "filename": "sevens.csv"})).await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    assert_eq!(structured(&r)["path"], url(&prefix, "results/sevens.csv"));
    let stored = String::from_utf8(
        weed.object(&format!("{prefix}/results/sevens.csv"))
            .await
            .unwrap(),
    )
    .unwrap();
    assert_eq!(stored.lines().count(), 301, "a header and 300 rows");
    assert_eq!(
        weed.list(&format!("{prefix}/.offload/records")).await.len(),
        1
    );
    // Parquet in a bucket: written there, then read by the file tools and SQL with ranged reads.
    let r = call(&client, "query_file", json!({"path": url(&prefix, "orders.csv"), "sql": "SELECT * FROM data", "storage_path": url(&prefix, "results"), "file_format": "parquet"})).await;
    let parquet = structured(&r)["path"].as_str().unwrap().to_owned();
    assert!(parquet.ends_with(".parquet"), "{r:?}");
    let schema = call(&client, "get_file_schema", json!({"path": parquet})).await;
    assert_eq!(structured(&schema)["rows"], 30_000, "{schema:?}");
    let rows = call(&client, "read_file", json!({"path": parquet, "offset": -1})).await;
    assert_eq!(
        structured(&rows)["rows"],
        json!([[29_999, "r3", 99]]),
        "{rows:?}"
    );
    let n = call(
        &client,
        "query_file",
        json!({"path": parquet, "sql": "SELECT COUNT(*) AS n, MAX(id) AS top FROM data"}),
    )
    .await;
    assert_eq!(structured(&n)["rows"], json!([[30_000, 29_999]]), "{n:?}");
    client.cancel().await.unwrap();
}

/// Azure Blob roots (`az://`) through the same code, against Azurite (npm, the emulator Azure
/// documents), with its container and objects made by Azure's own Python client: the file tools
/// answer as on the local copy, a response is stored as a new blob and never replaces one, and
/// the guard holds. The key is Azurite's published development key.
#[tokio::test]
#[ignore = "needs Azurite and azure-storage-blob: run scripts/setup-interop.sh"]
async fn azure_blob_roots_work_through_the_same_code_against_azurite() {
    const ACCOUNT: &str = "devstoreaccount1";
    const KEY: &str =
        "Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==";
    let dir = crate::interop::interop_dir();
    let data = tempfile::tempdir().unwrap();
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let _azurite = tokio::process::Command::new(dir.join("node_modules/.bin/azurite-blob"))
        .args(["--blobHost", "127.0.0.1", "--blobPort", &port.to_string()])
        .arg("--location")
        .arg(data.path())
        .args(["--silent", "--skipApiVersionCheck"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()
        .expect("start azurite");
    let endpoint = format!("http://127.0.0.1:{port}/{ACCOUNT}");
    let ctx = TestContext::new();
    let csv = csv_body();
    let log: String = (0..30_000).map(|i| format!("entry {i}\n")).collect();
    std::fs::write(ctx.root.join("orders.csv"), &csv).unwrap();
    std::fs::write(ctx.root.join("app.log"), &log).unwrap();
    // Azure's client makes the container and the blobs (retried while Azurite starts).
    let started = Instant::now();
    loop {
        let made = tokio::process::Command::new(dir.join(".venv/bin/python"))
            .arg(dir.join("azure_blobs.py"))
            .args([&endpoint, ACCOUNT, KEY, "data"])
            .arg(format!(
                "team/orders.csv={}",
                ctx.root.join("orders.csv").display()
            ))
            .arg(format!(
                "team/app.log={}",
                ctx.root.join("app.log").display()
            ))
            .output()
            .await
            .unwrap();
        if made.status.success() {
            break;
        }
        assert!(
            started.elapsed() < Duration::from_secs(60),
            "{}",
            String::from_utf8_lossy(&made.stderr)
        );
        tokio::time::sleep(Duration::from_millis(300)).await;
    }
    ctx.write_config(json!({
        "roots": [ctx.root, {"path": "az://data/team", "writable": true, "endpoint": endpoint,
            "account": ACCOUNT, "accessKey": KEY}],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "tools": {"expose": "meta"},
    }));
    same_as_local(&ctx, "az://data/team").await;
}

/// Against another store's root at `base` (holding `orders.csv` and `app.log`, copies of the
/// files in the local root): the file tools answer as on the local copies, a response is stored
/// as a new object and never replaces one, and a key beside the prefix is outside.
async fn same_as_local(ctx: &TestContext, base: &str) {
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
            serde_json::to_string(structured(&remote))
                .unwrap()
                .replace(&blob, &local_path),
            serde_json::to_string(structured(&local)).unwrap(),
            "{tool} {name} {extra}"
        );
    }
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
    let content = structured(&back)["content"].as_str().unwrap_or_default();
    assert!(
        content.starts_with("id,name,email,active,score\n")
            && content.contains("user2@example.com"),
        "{back:?}"
    );
    assert_eq!(error_code(&store("rows.csv").await), "file_exists");
    let outside = call(
        &client,
        "read_file",
        json!({"path": format!("{base}-evil/x.csv")}),
    )
    .await;
    assert_eq!(error_code(&outside), "path_outside_roots");
    client.cancel().await.unwrap();
}
