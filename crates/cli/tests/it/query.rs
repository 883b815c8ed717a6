//! `query_file` through a real `offload mcp` session: progress while a long query runs, a
//! cancellation that stops it (and the session goes on at once), a query that needs more memory
//! than its pool spills instead of failing, and the scopes over HTTP.

use std::time::{Duration, Instant};

use offload_testkit::wire::Wire;
use offload_testkit::{TestContext, call, error_code, structured};
use serde_json::json;

fn rooted() -> TestContext {
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    ctx
}

fn numbers(ctx: &TestContext, name: &str, rows: u64) -> String {
    let mut text = String::from("n,group\n");
    for i in 0..rows {
        text.push_str(&format!("{i},g{}\n", i % 7));
    }
    let path = ctx.root.join(name);
    std::fs::write(&path, text).unwrap();
    path.display().to_string()
}

/// A query of billions of rows reports progress, stops when the client cancels (the log says
/// so) and the next query on the same session answers at once.
#[tokio::test]
async fn a_long_query_reports_progress_and_stops_when_cancelled() {
    let ctx = rooted();
    let path = numbers(&ctx, "n.csv", 1500);
    let mut wire = Wire::start(&ctx).await;
    // 1500³ rows: minutes of work, holding the 1500² pairs (within the memory pool).
    let sql = "SELECT COUNT(*) FROM data a, data b, data c WHERE a.n + b.n + c.n = -1";
    wire.call(
        1,
        "query_file",
        json!({"path": path, "sql": sql}),
        Some("q"),
    )
    .await;
    loop {
        let message = tokio::time::timeout(Duration::from_secs(60), wire.next())
            .await
            .expect("progress within a minute");
        assert_ne!(message["id"], 1, "answered before any progress: {message}");
        if message["method"] == "notifications/progress" {
            assert!(
                message["params"]["message"]
                    .as_str()
                    .is_some_and(|m| m.ends_with("rows scanned")),
                "{message}"
            );
            break;
        }
    }
    let cancelled_at = Instant::now();
    wire.cancel(1).await;
    wire.call(
        2,
        "query_file",
        json!({"path": path, "sql": "SELECT \"group\", COUNT(*) AS n FROM data GROUP BY \"group\" ORDER BY \"group\""}),
        None,
    )
    .await;
    let (answer, _) = wire.answer(2, "none").await;
    let took = cancelled_at.elapsed();
    let rows = &answer["result"]["structuredContent"]["rows"];
    assert_eq!(rows[0], json!(["g0", 215]), "{answer}");
    assert!(
        took < Duration::from_secs(20),
        "the next query waited {took:?}"
    );
    let stopped = async {
        loop {
            if ctx
                .log()
                .contains("query_file cancelled: the query stopped")
            {
                return;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    };
    tokio::time::timeout(Duration::from_secs(30), stopped)
        .await
        .expect("the cancelled query is logged as stopped");
}

/// A sort bigger than the query's memory pool spills into the default directory and answers; a
/// join too big for it says so; the spill directory is gone afterwards.
#[tokio::test]
async fn a_query_bigger_than_its_memory_spills_and_answers() {
    let ctx = rooted();
    // ~30 MB of wide rows sorted by a text column: more than a small pool holds.
    let mut text = String::from("id,pad\n");
    let pad = "x".repeat(200);
    for i in 0..150_000u64 {
        text.push_str(&format!("{i},{pad}{}\n", (i * 7919) % 150_000));
    }
    std::fs::write(ctx.root.join("wide.csv"), text).unwrap();
    ctx.write_config(
        json!({"roots": [ctx.root], "mcpServers": {}, "limits": {"queryMemoryBytes": 16 << 20}}),
    );
    let client = ctx.client().await;
    let r = call(
        &client,
        "query_file",
        json!({"path": "wide.csv", "sql": "SELECT id FROM data ORDER BY pad DESC", "limit": 3}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let s = structured(&r);
    assert_eq!(s["row_count"], 150_000, "{s}");
    assert_eq!(s["rows"].as_array().unwrap().len(), 3);
    let spill = ctx.root.join(".offload-spill");
    let left = |dir: &std::path::Path| std::fs::read_dir(dir).map_or(0, |d| d.count());
    assert_eq!(left(&spill), 0, "the query's spill directory is removed");

    // A join holds one side in the pool: 30 MB does not fit in 16 MiB, and the answer says so
    // (DataFusion 55's own way out for such a join panicked or answered empty).
    let r = call(
        &client,
        "query_file",
        json!({"path": "wide.csv", "sql": "SELECT COUNT(*) AS n FROM data a JOIN data b ON a.id < b.id AND b.pad < a.pad"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true), "{r:?}");
    assert_eq!(error_code(&r), "query_error", "{r:?}");
    let message = structured(&r)["error"]["message"]
        .as_str()
        .unwrap()
        .to_owned();
    assert!(
        message.starts_with("the query needs more memory than it may use")
            && message.ends_with("raise limits.queryMemoryBytes"),
        "{message}"
    );
    assert_eq!(left(&spill), 0, "the query's spill directory is removed");

    // Queries at once each have a spill directory of their own, removed after it. (One
    // directory shared by all was removed under the others: `offload-bench team`'s 32 clients
    // found it, one query in sixty failing; this many at once through one session does not
    // hit that window reliably, so the bench is its reproducer, and this checks the answers and
    // the cleaning up.)
    std::fs::write(ctx.root.join("small.csv"), "id\n1\n2\n3\n").unwrap();
    for round in 0..4 {
        let asks = (0..24).map(|n| {
            call(
                &client,
                "query_file",
                json!({"path": "small.csv", "sql": format!("SELECT sum(id) + {n} AS s FROM data")}),
            )
        });
        for (n, r) in futures::future::join_all(asks).await.iter().enumerate() {
            assert_ne!(r.is_error, Some(true), "round {round}, query {n}: {r:?}");
            assert_eq!(
                structured(r)["rows"][0][0],
                6 + n,
                "round {round}, query {n}"
            );
        }
    }
    assert_eq!(left(&spill), 0, "every query's spill directory is removed");
    client.cancel().await.unwrap();
}

/// Bad input gets a clear error: not a table, both sql and jq, a bad table name, an empty file,
/// a binary file, a malformed JSON.
#[tokio::test]
async fn bad_queries_and_bad_files_get_clear_errors() {
    let ctx = rooted();
    std::fs::write(ctx.root.join("notes.txt"), "just text\n").unwrap();
    std::fs::write(ctx.root.join("empty.csv"), "").unwrap();
    std::fs::write(ctx.root.join("blob.parquet"), [0u8, 159, 146, 150, 1, 2]).unwrap();
    std::fs::write(ctx.root.join("bad.json"), "[{\"a\": 1}, {\"a\": ").unwrap();
    std::fs::write(ctx.root.join("ok.csv"), "a\n1\n").unwrap();
    let client = ctx.client().await;
    for (args, code, says) in [
        (
            json!({"path": "notes.txt", "sql": "SELECT * FROM data"}),
            "unsupported_format",
            "not a table",
        ),
        (
            json!({"path": "ok.csv", "sql": "SELECT 1", "jq": "."}),
            "invalid_arguments",
            "not both",
        ),
        (json!({"path": "ok.csv"}), "invalid_arguments", "give sql"),
        (
            json!({"path": "ok.csv", "sql": "SELECT * FROM data", "tables": {"1x": "ok.csv"}}),
            "invalid_arguments",
            "table name",
        ),
        (
            json!({"path": "ok.csv", "sql": "SELECT * FROM data", "tables": {"data": "ok.csv"}}),
            "invalid_arguments",
            "table name",
        ),
        (
            json!({"path": "empty.csv", "sql": "SELECT * FROM data"}),
            "",
            "",
        ),
        (
            json!({"path": "blob.parquet", "sql": "SELECT * FROM data"}),
            "unsupported_format",
            "not a table",
        ),
        (
            json!({"path": "bad.json", "sql": "SELECT * FROM data"}),
            "parse_error",
            "bad.json",
        ),
        (
            json!({"path": "bad.json", "jq": "."}),
            "parse_error",
            "not JSON",
        ),
        (
            json!({"path": "ok.csv", "sql": "SELEC a FROM data"}),
            "query_error",
            "SQL syntax",
        ),
        (
            json!({"path": "ok.csv", "jq": "."}),
            "unsupported_format",
            "jq reads JSON",
        ),
    ] {
        let r = call(&client, "query_file", args.clone()).await;
        if code.is_empty() {
            // An empty CSV is an empty table or a clear error, never a hang or a crash.
            assert!(
                r.is_error != Some(true) || !error_code(&r).is_empty(),
                "{args}: {r:?}"
            );
            continue;
        }
        assert_eq!(r.is_error, Some(true), "{args}: {r:?}");
        assert_eq!(error_code(&r), code, "{args}: {r:?}");
        let message = structured(&r)["error"]["message"]
            .as_str()
            .unwrap()
            .to_owned();
        assert!(message.contains(says), "{args}: {message}");
    }
    client.cancel().await.unwrap();
}

/// Over HTTP a read token may query; storing the result needs `store`.
#[tokio::test]
async fn scopes_read_to_query_and_store_to_keep_the_result() {
    let ctx = rooted();
    std::fs::write(ctx.root.join("ok.csv"), "a\n1\n2\n").unwrap();
    let read = ctx.token("reader", "read");
    let (_host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
    let client = crate::http::http_client(&url, &read).await;
    let r = call(
        &client,
        "query_file",
        json!({"path": "ok.csv", "sql": "SELECT SUM(a) AS s FROM data"}),
    )
    .await;
    assert_eq!(structured(&r)["rows"], json!([[3]]), "{r:?}");
    let r = call(
        &client,
        "query_file",
        json!({"path": "ok.csv", "sql": "SELECT * FROM data", "filename": "copy.csv"}),
    )
    .await;
    assert_eq!(error_code(&r), "forbidden", "{r:?}");
    assert!(!ctx.root.join("copy.csv").exists());
    client.cancel().await.unwrap();
}

/// The columns of `ctx`'s copies: the `.parquet` files in Offload's data directory.
fn copies(ctx: &TestContext) -> Vec<std::path::PathBuf> {
    let dir = ctx.home.join(".local/share/offload/columns");
    let mut found: Vec<_> = std::fs::read_dir(dir)
        .map(|d| d.flatten().map(|e| e.path()).collect())
        .unwrap_or_default();
    found.retain(|p| p.extension().is_some_and(|x| x == "parquet"));
    found
}

/// Waits (up to 60 s) until `ctx` holds `n` columnar copies.
async fn copies_made(ctx: &TestContext, n: usize) {
    let deadline = Instant::now() + Duration::from_secs(60);
    while copies(ctx).len() < n {
        assert!(Instant::now() < deadline, "no copy made: {}", ctx.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// A model's questions of one file, cold, in the default configuration: the first parses the
/// CSV and answers; its columns are kept as a copy made apart, and the next questions — other
/// questions — read the copy (the log says so) and answer exactly as the file does. Changed
/// under it (a row more), the file is never answered from the old copy; a JSON file and a
/// second table of a join get copies too.
#[tokio::test]
async fn later_questions_of_a_file_read_its_columnar_copy() {
    let ctx = TestContext::new();
    ctx.write_config(json!({"roots": [ctx.root], "mcpServers": {}}));
    let path = numbers(&ctx, "n.csv", 50_000);
    let client = ctx.client().await;
    let ask = |sql: &'static str| {
        let (client, path) = (&client, path.clone());
        async move {
            let r = call(client, "query_file", json!({"path": path, "sql": sql})).await;
            assert_ne!(r.is_error, Some(true), "{r:?}");
            structured(&r)["rows"].clone()
        }
    };
    let total = "SELECT COUNT(*) AS n, SUM(n) AS s FROM data";
    assert_eq!(ask(total).await, json!([[50_000, 1_249_975_000u64]]));
    assert!(!ctx.log().contains("reads the columnar copy"));
    copies_made(&ctx, 1).await;
    // Other questions, from the copy.
    assert_eq!(
        ask("SELECT \"group\", COUNT(*) AS n FROM data GROUP BY \"group\" ORDER BY \"group\" LIMIT 2").await,
        json!([["g0", 7143], ["g1", 7143]])
    );
    assert_eq!(
        ask("SELECT MAX(n) AS m FROM data WHERE n % 1000 = 7").await,
        json!([[49_007]])
    );
    // The first rows are the file's first rows, as when it was read as text.
    assert_eq!(
        ask("SELECT n FROM data LIMIT 3").await,
        json!([[0], [1], [2]])
    );
    assert_eq!(ctx.log().matches("reads the columnar copy").count(), 3);

    // Changed under it: a row more, answered from the file, and copied again.
    let mut more = std::fs::OpenOptions::new()
        .append(true)
        .open(&path)
        .unwrap();
    std::io::Write::write_all(&mut more, b"50000,g2\n").unwrap();
    drop(more);
    assert_eq!(ask(total).await, json!([[50_001, 1_250_025_000u64]]));
    assert_eq!(ctx.log().matches("reads the columnar copy").count(), 3);
    copies_made(&ctx, 2).await;
    assert_eq!(ask(total).await, json!([[50_001, 1_250_025_000u64]]));
    assert_eq!(ctx.log().matches("reads the columnar copy").count(), 4);

    // A JSON array of objects joined to the CSV: both tables read from copies the second time.
    let names = ctx.root.join("groups.json");
    std::fs::write(
        &names,
        r#"[{"group": "g0", "name": "zero"}, {"group": "g1", "name": "one"}]"#,
    )
    .unwrap();
    let join = json!({"path": path, "tables": {"names": names},
        "sql": "SELECT names.name, COUNT(*) AS n FROM data JOIN names ON data.\"group\" = names.\"group\" GROUP BY names.name ORDER BY n DESC, names.name"});
    let first = call(&client, "query_file", join.clone()).await;
    copies_made(&ctx, 3).await;
    let second = call(&client, "query_file", join).await;
    assert_eq!(structured(&second)["rows"], structured(&first)["rows"]);
    assert_eq!(
        structured(&first)["rows"],
        json!([["one", 7143], ["zero", 7143]])
    );
    // The CSV's copy both times, the JSON's the second.
    assert_eq!(ctx.log().matches("reads the columnar copy").count(), 7);
    client.cancel().await.unwrap();
}

/// A model reads a Parquet file's columns, then asks of them a turn later: the query engine is
/// warmed up in between. A CSV's columns leave it as it is (its first question parses the whole
/// file), and so does a question alone. The answer is the file's.
#[tokio::test]
async fn reading_a_parquet_files_columns_warms_the_query_engine() {
    let ctx = TestContext::new();
    ctx.write_config(json!({"roots": [ctx.root], "mcpServers": {}}));
    let csv = numbers(&ctx, "n.csv", 50_000);
    let warmed = |ctx: &TestContext| ctx.log().matches("query engine warmed up").count();
    // A Parquet file: the columnar copy a question of the CSV leaves.
    let first = ctx.client().await;
    let total = "SELECT COUNT(*) AS n, SUM(n) AS s FROM data";
    call(&first, "query_file", json!({"path": csv, "sql": total})).await;
    copies_made(&ctx, 1).await;
    first.cancel().await.unwrap();
    std::fs::copy(&copies(&ctx)[0], ctx.root.join("n.parquet")).unwrap();
    assert_eq!(warmed(&ctx), 0, "a question alone: {}", ctx.log());

    let client = ctx.client().await;
    let r = call(&client, "get_file_schema", json!({"path": csv})).await;
    assert_eq!(structured(&r)["format"], "csv", "{r:?}");
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(warmed(&ctx), 0, "a CSV's columns: {}", ctx.log());

    let r = call(&client, "get_file_schema", json!({"path": "n.parquet"})).await;
    assert_eq!(structured(&r)["format"], "parquet", "{r:?}");
    let deadline = Instant::now() + Duration::from_secs(60);
    while warmed(&ctx) == 0 {
        assert!(Instant::now() < deadline, "not warmed up: {}", ctx.log());
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let r = call(
        &client,
        "query_file",
        json!({"path": "n.parquet", "sql": total}),
    )
    .await;
    assert_eq!(structured(&r)["rows"], json!([[50_000, 1_249_975_000u64]]));
    client.cancel().await.unwrap();
}

/// `limits.queryCacheBytes: 0` makes no copies; every question parses the file, as before.
#[tokio::test]
async fn no_copies_when_the_cache_is_off() {
    let ctx = TestContext::new();
    ctx.write_config(
        json!({"roots": [ctx.root], "mcpServers": {}, "limits": {"queryCacheBytes": 0}}),
    );
    let path = numbers(&ctx, "n.csv", 1_000);
    let client = ctx.client().await;
    for _ in 0..2 {
        let r = call(
            &client,
            "query_file",
            json!({"path": path, "sql": "SELECT COUNT(*) AS n FROM data"}),
        )
        .await;
        assert_eq!(structured(&r)["rows"], json!([[1000]]));
    }
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(copies(&ctx).is_empty());
    assert!(!ctx.log().contains("columnar copy"));
    client.cancel().await.unwrap();
}

/// A stored answer that is a table gets its columnar copy at once: the model's first question
/// of it reads columns.
#[tokio::test]
async fn a_stored_table_gets_its_columnar_copy_at_once() {
    let ctx = rooted();
    ctx.write_servers(json!({"fixture": TestContext::fixture(&[])}));
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool_and_store",
        json!({"server": "fixture", "tool_name": "rows", "tool_args": {"n": 2000}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let path = structured(&r)["path"].as_str().unwrap().to_owned();
    copies_made(&ctx, 1).await;
    let r = call(
        &client,
        "query_file",
        json!({"path": path, "sql": "SELECT COUNT(*) AS n, SUM(score) AS s FROM data WHERE active"}),
    )
    .await;
    assert_eq!(structured(&r)["rows"], json!([[667, 333_666.5]]), "{r:?}");
    assert_eq!(ctx.log().matches("reads the columnar copy").count(), 1);
    client.cancel().await.unwrap();
}
