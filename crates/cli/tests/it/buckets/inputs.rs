//! Objects as inputs: tool arguments (whole, in batches, `$file`) and `query_file`.

use offload_testkit::s3::{BUCKET, Weed};
use offload_testkit::{TestContext, call, error_code, page, structured};
use serde_json::{Value, json};

use super::{url, with_bucket};

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
    assert_eq!(page(&rows)["rows"], json!([[29_999, "r3", 99]]), "{rows:?}");
    let n = call(
        &client,
        "query_file",
        json!({"path": parquet, "sql": "SELECT COUNT(*) AS n, MAX(id) AS top FROM data"}),
    )
    .await;
    assert_eq!(structured(&n)["rows"], json!([[30_000, 29_999]]), "{n:?}");
    client.cancel().await.unwrap();
}
