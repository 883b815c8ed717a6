//! Interop with published MCP peers: the official Python SDK (2.x, newest protocol revision and
//! the legacy handshake) and TypeScript SDK (1.x, 2025-11-25) as clients, and
//! `@modelcontextprotocol/server-everything` as an upstream over stdio and streamable HTTP.
//!
//! The peers are installed into `tests/interop` by `scripts/setup-interop.sh` (the test script
//! runs it), so these tests are `#[ignore]`d for a bare `cargo test` and run with
//! `--include-ignored` by the test script.

use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use offload_testkit::{TestContext, call, free_port, target_bin, text};
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};

const NEEDS_PEERS: &str = "needs published peers: run scripts/setup-interop.sh";

pub(crate) fn interop_dir() -> PathBuf {
    let dir = std::fs::canonicalize(offload_testkit::interop_dir()).expect("tests/interop");
    assert!(
        dir.join("node_modules/@modelcontextprotocol/sdk").exists() && dir.join(".venv").exists(),
        "{NEEDS_PEERS}"
    );
    dir
}

fn everything_entry() -> Value {
    let index =
        interop_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    json!({"command": "node", "args": [index, "stdio"]})
}

/// fx (our fixture) and everything (the published reference server) as upstreams.
fn peers_context() -> TestContext {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": TestContext::fixture(&[]), "everything": everything_entry()}));
    ctx
}

async fn run_script(ctx: &TestContext, program: PathBuf, args: &[&str]) -> String {
    run_script_within(ctx, program, args, Duration::from_secs(120)).await
}

/// Runs a client script from tests/interop in the test's isolated home; its stdout, or a panic
/// with its output and Offload's log.
pub(crate) async fn run_script_within(
    ctx: &TestContext,
    program: PathBuf,
    args: &[&str],
    limit: Duration,
) -> String {
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).current_dir(interop_dir());
    ctx.isolate(&mut cmd);
    let out = tokio::time::timeout(limit, cmd.output())
        .await
        .expect("client script timed out")
        .expect("client script runs");
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "client failed:\nstdout:\n{stdout}\nstderr:\n{}\noffload log:\n{}",
        String::from_utf8_lossy(&out.stderr),
        ctx.log()
    );
    stdout
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn python_sdk_client_on_the_newest_protocol_revision() {
    let ctx = peers_context();
    let dir = interop_dir();
    let bin = target_bin("offload");
    let out = run_script(
        &ctx,
        dir.join(".venv/bin/python"),
        &["python_client.py", bin.to_str().unwrap(), "auto"],
    )
    .await;
    assert!(out.contains("protocol 2026-07-28"), "{out}");
    assert!(out.contains("ok progress forwarded (3)"), "{out}");
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn python_sdk_client_with_the_initialize_handshake() {
    let ctx = peers_context();
    let dir = interop_dir();
    let bin = target_bin("offload");
    let out = run_script(
        &ctx,
        dir.join(".venv/bin/python"),
        &["python_client.py", bin.to_str().unwrap(), "legacy"],
    )
    .await;
    assert!(out.contains("protocol 2025-"), "{out}");
    assert!(
        out.contains("ok call_tool through Offload to server-everything"),
        "{out}"
    );
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn typescript_sdk_client_validates_every_answer() {
    let ctx = peers_context();
    let bin = target_bin("offload");
    let out = run_script(
        &ctx,
        PathBuf::from("node"),
        &["ts_client.mjs", bin.to_str().unwrap()],
    )
    .await;
    assert!(
        out.contains("ok upstream progress forwarded to the TS client"),
        "{out}"
    );
    assert!(
        out.contains("ok error result passes output-schema validation"),
        "{out}"
    );
}

/// `offload serve --http` with access tokens, driven by both official SDKs' HTTP clients:
/// the Python SDK on 2026-07-28 (stateless) and with the initialize handshake (a session), the
/// TypeScript SDK validating every structured answer.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn official_sdk_clients_over_http_with_tokens() {
    let ctx = peers_context();
    let full = ctx.token("full", "read,call,store");
    let read = ctx.token("reader", "read");
    let (_host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
    let python = interop_dir().join(".venv/bin/python");
    let out = run_script(
        &ctx,
        python.clone(),
        &["http_client.py", &url, &full, &read, "auto"],
    )
    .await;
    assert!(out.contains("protocol 2026-07-28"), "{out}");
    assert!(out.contains("ok read scope may not call"), "{out}");
    let out = run_script(
        &ctx,
        python,
        &["http_client.py", &url, &full, &read, "legacy"],
    )
    .await;
    assert!(out.contains("protocol 2025-"), "{out}");
    assert!(
        out.contains("ok a big answer arrives stored and linked"),
        "{out}"
    );
    let out = run_script(
        &ctx,
        PathBuf::from("node"),
        &["http_client.mjs", &url, &full, &read],
    )
    .await;
    assert!(out.contains("ok read scope may not call"), "{out}");
}

/// Two `offload serve --http` replicas sharing one home (config, tokens, roots) behind
/// round-robin in the client: a stateless (2026-07-28) session whose consecutive requests land
/// on different replicas works, and a response stored through one is read through the other.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn stateless_requests_work_across_replicas() {
    let ctx = peers_context();
    let token = ctx.token("agents", "read,call,store");
    let (_a, url_a) = ctx.http_host("127.0.0.1:0", &[]).await;
    let (_b, url_b) = ctx.http_host("127.0.0.1:0", &[]).await;
    assert_ne!(url_a, url_b);
    let root = ctx.root.to_str().unwrap().to_owned();
    let out = run_script(
        &ctx,
        interop_dir().join(".venv/bin/python"),
        &["replicas_client.py", &url_a, &url_b, &token, &root],
    )
    .await;
    assert!(out.contains("ok read back through the other"), "{out}");
    assert!(out.contains("ok both replicas served"), "{out}");
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn server_everything_over_streamable_http_as_an_upstream() {
    let port = free_port();
    let index =
        interop_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let mut server = tokio::process::Command::new("node")
        .arg(index)
        .arg("streamableHttp")
        .env("PORT", port.to_string())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("start server-everything");
    let mut lines = BufReader::new(server.stderr.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.unwrap() {
            if line.contains("listening") {
                break;
            }
        }
    })
    .await
    .expect("server-everything listens");

    let ctx = TestContext::new();
    ctx.write_servers(
        json!({"remote": {"type": "http", "url": format!("http://127.0.0.1:{port}/mcp"),
                                          "headers": {"X-Offload-Test": "1"}}}),
    );
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool",
        json!({"server": "remote", "tool_name": "echo", "tool_args": {"message": "over http"}}),
    )
    .await;
    assert_eq!(text(&r), "Echo: over http", "{r:?}\n{}", ctx.log());
    // A CSV's rows are spliced into stdio messages as JSON text; over HTTP they are expanded
    // into the arguments first: echo gets a list (and refuses it), not the placeholder.
    std::fs::write(ctx.root.join("rows.csv"), "message\nhello\n").unwrap();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "remote", "tool_name": "echo", "file_path": "rows.csv", "data_key": "message"}),
    )
    .await;
    let answer = text(&r).to_lowercase();
    assert!(
        r.is_error == Some(true) && answer.contains("array") && !answer.contains("splice"),
        "{r:?}"
    );
    let r = call(
        &client,
        "list_available_tools",
        json!({"filter_by_server": "remote"}),
    )
    .await;
    assert_eq!(
        offload_testkit::structured(&r)["servers"][0]["status"],
        "ready"
    );
    client.cancel().await.unwrap();
    server.kill().await.ok();
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn server_everything_over_stdio_as_an_upstream() {
    let ctx = peers_context();
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool",
        json!({"server": "everything", "tool_name": "get-sum", "tool_args": {"a": 1, "b": 2}}),
    )
    .await;
    assert!(text(&r).contains('3'), "{r:?}");
    let r = call(
        &client,
        "call_tool",
        json!({"server": "everything", "tool_name": "get-tiny-image"}),
    )
    .await;
    assert!(
        r.content.iter().any(|c| c.as_image().is_some()),
        "image blocks pass through: {r:?}"
    );
    client.cancel().await.unwrap();
}

/// Clients still speak the 2024 and early-2025 revisions: a raw handshake at each version is
/// answered with that same version, and tools work after it.
#[tokio::test]
async fn older_protocol_revisions_are_negotiated() {
    for version in ["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"] {
        let ctx = crate::with_fixture();
        let mut child = ctx
            .offload_command(&[])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        let mut stdout = BufReader::new(child.stdout.take().unwrap()).lines();
        let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
            "protocolVersion": version, "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}});
        let list = json!({"jsonrpc": "2.0", "id": 2, "method": "tools/call", "params": {
            "name": "call_tool", "arguments": {"server": "fx", "tool_name": "echo", "tool_args": {"text": version}}}});
        for msg in [
            init,
            json!({"jsonrpc": "2.0", "method": "notifications/initialized"}),
            list,
        ] {
            stdin
                .write_all(format!("{msg}\n").as_bytes())
                .await
                .unwrap();
        }
        stdin.flush().await.unwrap();
        let first: Value =
            serde_json::from_str(&stdout.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(first["result"]["protocolVersion"], version);
        let second: Value =
            serde_json::from_str(&stdout.next_line().await.unwrap().unwrap()).unwrap();
        assert_eq!(second["result"]["content"][0]["text"], version, "{second}");
        drop(stdin);
        let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
            .await
            .unwrap()
            .unwrap();
        assert!(status.success(), "exits cleanly when stdin closes");
    }
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn an_image_answer_from_server_everything_is_stored_as_a_real_png() {
    let ctx = peers_context();
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool_and_store",
        json!({"server": "everything", "tool_name": "get-tiny-image"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let s = offload_testkit::structured(&r);
    let png = std::path::PathBuf::from(
        s["files"][0]
            .as_str()
            .expect("a binary file beside the record"),
    );
    assert_eq!(png.extension().unwrap(), "png");
    let bytes = std::fs::read(&png).unwrap();
    assert_eq!(&bytes[..8], b"\x89PNG\r\n\x1a\n", "a real PNG");
    let main: Value =
        serde_json::from_str(&std::fs::read_to_string(s["path"].as_str().unwrap()).unwrap())
            .unwrap();
    let name = png.file_name().unwrap().to_str().unwrap();
    assert!(
        main.as_array().unwrap().iter().any(|b| b["file"] == name),
        "the main file refers to it: {main}"
    );
    let resources = client
        .list_resources(Some(rmcp::model::PaginatedRequestParams::default()))
        .await
        .unwrap();
    assert!(
        resources
            .resources
            .iter()
            .any(|x| x.mime_type.as_deref() == Some("image/png"))
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn a_file_reference_reaches_server_everythings_echo() {
    let ctx = peers_context();
    std::fs::write(
        ctx.root.join("message.txt"),
        "sent from a file, not by the model",
    )
    .unwrap();
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool",
        json!({"server": "everything", "tool_name": "echo", "tool_args": {"message": {"$file": "message.txt"}}}),
    )
    .await;
    assert_eq!(text(&r), "Echo: sent from a file, not by the model");
    client.cancel().await.unwrap();
}

/// A 200,000-row CSV reaches a real database tool (the official Python SDK over SQLite) in
/// batches, complete and with the right types, without a row passing through the model.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn a_large_csv_is_inserted_into_a_real_database_in_batches() {
    let ctx = TestContext::new();
    let dir = interop_dir();
    let db = ctx.work.join("test.db");
    ctx.write_servers(json!({"db": {"command": dir.join(".venv/bin/python"), "args": [dir.join("bulk_server.py"), db], "timeoutSecs": 120}}));
    let mut csv = String::from("id,name,zip,active,score\n");
    for i in 0..200_000 {
        csv.push_str(&format!(
            "{i},\"Name {i}, Jr\",{i:05},{},{}.25\n",
            i % 2 == 0,
            i % 1000
        ));
    }
    std::fs::write(ctx.root.join("users.csv"), csv).unwrap();
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "db", "tool_name": "insert_rows", "file_path": "users.csv", "data_key": "rows",
               "tool_args": {"table": "users"}, "batch_size": 10_000}),
    )
    .await;
    let s = offload_testkit::structured(&r);
    assert_eq!(
        (
            s["batches"].as_u64(),
            s["items"].as_u64(),
            s["succeeded"].as_u64()
        ),
        (Some(20), Some(200_000), Some(20)),
        "{s}"
    );
    let q = |sql: &str| {
        let client = &client;
        let sql = sql.to_owned();
        async move {
            let r = call(
                client,
                "call_tool",
                json!({"server": "db", "tool_name": "query", "tool_args": {"sql": sql}}),
            )
            .await;
            offload_testkit::structured(&r)["result"].clone()
        }
    };
    assert_eq!(
        q("select count(*), count(distinct id) from users").await,
        json!([[200_000, 200_000]])
    );
    assert_eq!(
        q("select typeof(id), typeof(name), typeof(zip), zip, typeof(active), active, typeof(score), score from users where id = 42").await,
        json!([["integer", "text", "text", "00042", "integer", 1, "real", 42.25]])
    );
    assert_eq!(
        q("select name from users where id = 199999").await,
        json!([["Name 199999, Jr"]])
    );
    client.cancel().await.unwrap();
}

/// `query_file` through `offload mcp` with the Python SDK: SQL answers equal DuckDB's on the
/// same CSV and Parquet files (sums, group-bys, joins, NULLs, dates, quoted fields with line
/// breaks), results stored as Parquet read back by pyarrow, Parquet inputs (file tools, a tool's
/// arguments, `$file`), an upstream answer stored as Parquet, guard refusals, jq.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn query_file_answers_equal_duckdb() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));
    let bin = target_bin("offload");
    let out = run_script(
        &ctx,
        interop_dir().join(".venv/bin/python"),
        &["query_client.py", bin.to_str().unwrap()],
    )
    .await;
    assert!(
        out.contains("ok sum per region on sales.parquet equals DuckDB"),
        "{out}"
    );
    assert!(
        out.contains("ok parquet read back by pyarrow equals DuckDB"),
        "{out}"
    );
}
