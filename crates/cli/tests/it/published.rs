//! Offload in front of the servers people run, as published: server-filesystem and
//! server-memory (npm), mcp-server-sqlite (PyPI; it answers with Python `repr` text), and a
//! server written with the official Python SDK whose tools return `str` (answered as
//! `{"result": "<json>"}`). What they answer must be stored as the data it is, and every answer
//! Offload gives stays within the inline budget.
//!
//! `#[ignore]`d for a bare `cargo test` (the peers come from `scripts/setup-interop.sh`); the
//! test script runs them with `--include-ignored`.

use offload_testkit::{Client, TestContext, call, structured, text};
use serde_json::{Value, json};

use crate::interop::interop_dir;

fn python() -> String {
    interop_dir().join(".venv/bin/python").display().to_string()
}

pub(crate) fn node_server(package: &str, args: &[&str]) -> Value {
    let index = interop_dir().join(format!(
        "node_modules/@modelcontextprotocol/{package}/dist/index.js"
    ));
    let mut all = vec![index.display().to_string()];
    all.extend(args.iter().map(|a| (*a).to_owned()));
    json!({"command": "node", "args": all})
}

/// Stores `tool`'s answer as `format` and returns the structured answer and the main file.
async fn store(
    client: &Client,
    server: &str,
    tool: &str,
    args: Value,
    format: &str,
) -> (Value, String) {
    let r = call(
        client,
        "call_tool_and_store",
        json!({"server": server, "tool_name": tool, "tool_args": args, "file_format": format}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let s = structured(&r).clone();
    let path = s["path"].as_str().unwrap().to_owned();
    (s, path)
}

fn read_csv(path: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rdr = csv::Reader::from_path(path).unwrap();
    let header = rdr.headers().unwrap().iter().map(str::to_owned).collect();
    let rows = rdr
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (header, rows)
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn json_wrapped_in_a_string_field_is_stored_as_data() {
    let ctx = TestContext::new();
    let tree = ctx.root.join("tree");
    std::fs::create_dir_all(tree.join("a/b")).unwrap();
    std::fs::write(tree.join("a/x.txt"), "x").unwrap();
    ctx.write_servers(json!({
        "py": {"command": python(), "args": [interop_dir().join("str_server.py")]},
        "fs": node_server("server-filesystem", &[tree.to_str().unwrap()]),
    }));
    let client = ctx.client().await;

    // The Python SDK's {"result": "<json>"}: a real table, not one cell holding JSON.
    let (answer, path) = store(&client, "py", "rows_json", json!({"n": 50}), "csv").await;
    let (header, rows) = read_csv(&path);
    assert_eq!(header, ["id", "name", "zip"]);
    assert_eq!(rows.len(), 50);
    assert_eq!(rows[7], ["7", "user 7", "00007"]);
    assert_eq!(answer["summary"]["kind"], "table");
    assert_eq!(answer["summary"]["rows"], 50);
    // JSON keeps the data itself, and a schema of the stored file sees the rows.
    let (_, path) = store(&client, "py", "rows_json", json!({"n": 3}), "json").await;
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(stored[2]["zip"], "00002");
    let schema = call(&client, "get_file_schema", json!({"path": path})).await;
    assert!(text(&schema).contains("3"), "{}", text(&schema));
    // A string that is not JSON stays what it is.
    let (answer, _) = store(&client, "py", "greeting", json!({"name": "Ann"}), "json").await;
    assert_eq!(answer["summary"]["kind"], "object", "{answer}");

    // server-filesystem's directory_tree answers {"content": "<json>"}.
    let (answer, path) = store(
        &client,
        "fs",
        "directory_tree",
        json!({"path": tree.to_str().unwrap()}),
        "json",
    )
    .await;
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(stored[0]["name"], "a", "{stored}");
    assert_eq!(stored[0]["children"][0]["name"], "b");
    assert_ne!(answer["summary"]["kind"], "object", "{answer}");
    client.cancel().await.unwrap();
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn python_repr_rows_from_mcp_server_sqlite_become_a_table() {
    let ctx = TestContext::new();
    let db = ctx.work.join("t.db");
    let sqlite = interop_dir().join(".venv-legacy/bin/mcp-server-sqlite");
    ctx.write_servers(json!({"sqlite": {"command": sqlite, "args": ["--db-path", db]}}));
    let client = ctx.client().await;
    for sql in [
        "create table people (id integer, name text, zip text, note text)",
        "insert into people values (1, 'O''Brien', '01234', null), (2, 'Bob \"B\"', '12345', 'tab\there')",
    ] {
        let r = call(
            &client,
            "call_tool",
            json!({"server": "sqlite", "tool_name": "write_query", "tool_args": {"query": sql}}),
        )
        .await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
    }
    let (answer, path) = store(
        &client,
        "sqlite",
        "read_query",
        json!({"query": "select * from people order by id"}),
        "csv",
    )
    .await;
    let (header, rows) = read_csv(&path);
    assert_eq!(header, ["id", "name", "zip", "note"]);
    assert_eq!(rows[0], ["1", "O'Brien", "01234", ""]);
    assert_eq!(rows[1], ["2", "Bob \"B\"", "12345", "tab\there"]);
    assert_eq!(answer["summary"]["rows"], 2);
    client.cancel().await.unwrap();
}

fn entities(n: usize, observation_bytes: usize) -> Value {
    let note = "x".repeat(observation_bytes);
    Value::Array(
        (0..n)
            .map(|i| json!({"name": format!("person {i}"), "entityType": "person", "observations": [note]}))
            .collect(),
    )
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn server_memory_answers_stay_within_the_inline_budget_and_keep_both_tables() {
    let ctx = TestContext::new();
    let memory_file = ctx.work.join("memory.jsonl");
    let mut memory = node_server("server-memory", &[]);
    memory["env"] = json!({"MEMORY_FILE_PATH": memory_file});
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"memory": memory},
        "limits": {"inlineBytes": 20000},
    }));
    let client = ctx.client().await;

    // read_graph with no relations yet: two tables all the same, entities and relations.
    std::fs::write(
        ctx.root.join("few.json"),
        serde_json::to_vec(&json!({"entities": entities(3, 10)})).unwrap(),
    )
    .unwrap();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "memory", "tool_name": "create_entities", "file_path": "few.json"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let (answer, path) = store(&client, "memory", "read_graph", json!({}), "csv").await;
    let tables = answer["summary"]["tables"].as_array().unwrap().clone();
    let names: Vec<&str> = tables.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["entities", "relations"], "{answer}");
    assert!(path.ends_with(".entities.csv"), "{path}");
    let (header, rows) = read_csv(&path);
    assert_eq!(header, ["name", "entityType", "observations"]);
    assert_eq!(rows.len(), 3);
    let relations = tables[1]["file"].as_str().unwrap();
    assert!(std::path::Path::new(relations).exists());
    assert_eq!(tables[1]["rows"], 0);
    // The same call once relations exist gives the same two files.
    let r = call(
        &client,
        "call_tool",
        json!({"server": "memory", "tool_name": "create_relations", "tool_args": {"relations": [
            {"from": "person 0", "to": "person 1", "relationType": "knows"}]}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let (answer, _) = store(&client, "memory", "read_graph", json!({}), "csv").await;
    let tables = answer["summary"]["tables"].as_array().unwrap();
    assert_eq!(tables[1]["rows"], 1);
    let (header, rows) = read_csv(tables[1]["file"].as_str().unwrap());
    assert_eq!(header, ["from", "to", "relationType"]);
    assert_eq!(rows[0], ["person 0", "person 1", "knows"]);
    // Markdown holds both, one section each.
    let (_, path) = store(&client, "memory", "read_graph", json!({}), "md").await;
    let md = std::fs::read_to_string(&path).unwrap();
    assert!(
        md.contains("## entities") && md.contains("## relations"),
        "{md}"
    );

    // create_entities echoes what it created: 200 entities of 500 bytes is ~110 KB, over the
    // 20 KB budget: stored and linked, with the reason, never put in the model's context.
    std::fs::write(
        ctx.root.join("many.json"),
        serde_json::to_vec(&json!({"entities": entities(200, 500)})).unwrap(),
    )
    .unwrap();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "memory", "tool_name": "create_entities", "file_path": "many.json"}),
    )
    .await;
    let size = serde_json::to_string(&r).unwrap().len();
    assert!(size < 20000, "{size} bytes");
    assert!(
        text(&r).contains("larger than the inline budget"),
        "{}",
        text(&r)
    );
    assert!(structured(&r)["path"].as_str().is_some());
    // Batch mode: the last batch's echo is over the budget too.
    let lines: Vec<String> = entities(400, 500)
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut e = e.clone();
            e["name"] = json!(format!("batch person {i}"));
            e.to_string()
        })
        .collect();
    std::fs::write(ctx.root.join("more.jsonl"), lines.join("\n")).unwrap();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "memory", "tool_name": "create_entities", "file_path": "more.jsonl",
               "data_key": "entities", "batch_size": 200}),
    )
    .await;
    let size = serde_json::to_string(&r).unwrap().len();
    assert!(size < 20000, "{size} bytes: {}", text(&r));
    let s = structured(&r);
    assert_eq!(s["succeeded"], 2, "{s}");
    assert!(s["last_result"]["path"].as_str().is_some(), "{s}");
    assert!(text(&r).contains("was stored at"), "{}", text(&r));
    // output_format string is bounded the same way.
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "memory", "tool_name": "read_graph", "file_path": "few.json",
               "data_key": "ignored", "output_format": "string"}),
    )
    .await;
    let size = serde_json::to_string(&r).unwrap().len();
    assert!(size < 20000, "{size} bytes: {}", text(&r));
    client.cancel().await.unwrap();
}

/// A remote server behind a bearer token: without the right token the model gets
/// `auth_required` naming the status, the URL and what to check, in plain words; with it, calls
/// work; other servers are never affected.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn a_rejected_token_is_auth_required_in_plain_words() {
    use tokio::io::AsyncBufReadExt;
    let port = offload_testkit::free_port();
    let mut server = tokio::process::Command::new(python())
        .arg(interop_dir().join("bearer_server.py"))
        .args([port.to_string(), "s3cret-token".into()])
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .unwrap();
    let mut lines = tokio::io::BufReader::new(server.stdout.take().unwrap()).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        if line.contains("listening") {
            break;
        }
    }
    let url = format!("http://127.0.0.1:{port}/mcp");
    // Wait until uvicorn accepts connections.
    for _ in 0..100 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let ctx = TestContext::new();
    ctx.write_servers(json!({
        "fx": TestContext::fixture(&[]),
        "wrong": {"type": "http", "url": url, "headers": {"Authorization": "Bearer nope"}},
        "right": {"type": "http", "url": url, "headers": {"Authorization": "Bearer s3cret-token"}},
    }));
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool",
        json!({"server": "wrong", "tool_name": "whoami"}),
    )
    .await;
    let message = text(&r);
    assert_eq!(
        offload_testkit::error_code(&r),
        "auth_required",
        "{message}"
    );
    assert!(
        message.contains("401") && message.contains(&url) && message.contains("headers"),
        "{message}"
    );
    for internal in ["offload_engine", "Worker", "reqwest", "Transport ["] {
        assert!(!message.contains(internal), "{message}");
    }
    assert!(!message.contains("nope"), "no token in messages: {message}");
    let r = call(
        &client,
        "call_tool",
        json!({"server": "right", "tool_name": "whoami"}),
    )
    .await;
    assert_eq!(text(&r), "authorized", "{r:?}");
    let r = crate::fx(&client, "echo", json!({"text": "fine"})).await;
    assert_eq!(text(&r), "fine");
    client.cancel().await.unwrap();
}

/// Tool search in a model's own words over the real tool lists of server-memory,
/// mcp-server-git and server-everything; a tool that runs only as an MCP task is found and
/// called (Offload makes the task and answers with its result; its elicitation reaches no one
/// here, so the server goes on with its default).
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn tools_are_found_in_plain_words_and_task_only_tools_are_called_as_tasks() {
    let ctx = TestContext::new();
    let repo = ctx.tmp.path().join("repo");
    std::fs::create_dir_all(&repo).unwrap();
    let git = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(&repo)
        .status()
        .unwrap();
    assert!(git.success());
    let mut memory = node_server("server-memory", &[]);
    memory["env"] = json!({"MEMORY_FILE_PATH": ctx.work.join("memory.jsonl")});
    ctx.write_servers(json!({
        "memory": memory,
        "git": {"command": interop_dir().join(".venv/bin/mcp-server-git"), "args": ["--repository", repo]},
        "everything": node_server("server-everything", &["stdio"]),
    }));
    let client = ctx.client().await;
    let search = |query: &'static str| {
        let client = &client;
        async move {
            let r = call(client, "list_available_tools", json!({"query": query})).await;
            structured(&r).clone()
        }
    };
    // Searched once every server has started (an answer before then names those still
    // starting, and a loaded machine starts mcp-server-git in seconds).
    for _ in 0..600 {
        let found = search("what changed in the repo").await;
        if !found["note"]
            .as_str()
            .unwrap_or_default()
            .contains("still starting")
        {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    // No tool has "remember", "fact" or "person": the closest in meaning, as guesses, with a
    // memory tool among them.
    let tools = |found: &serde_json::Value| found["tools"].as_array().unwrap().clone();
    let found = search("remember a fact about a person").await;
    assert_eq!(found["matched"], 0, "{found}");
    assert!(
        tools(&found).iter().any(|t| t["server"] == "memory"),
        "{found}"
    );
    let found = search("what changed in the repo").await;
    assert_eq!(found["tools"][0]["server"], "git", "{found}");
    let found = search("zzzz qqqq").await;
    // No tool has these words: guesses by meaning at most, unsure, and the servers with their
    // counts, not every tool (issue 41).
    assert_eq!(found["matched"], 0, "{found}");
    assert!(
        tools(&found)
            .iter()
            .all(|t| t["confidence"].as_f64().unwrap() < 0.5),
        "{found}"
    );
    let note = found["note"].as_str().unwrap();
    assert!(
        note.contains("only close in meaning")
            && note.contains("memory (9 tools)")
            && note.contains("git (")
            && !note.contains("git_status"),
        "{note}"
    );

    let found = search("research query").await;
    assert!(
        tools(&found)
            .iter()
            .any(|t| t["tool"] == "simulate-research-query"),
        "{found}"
    );
    let r = call(
        &client,
        "call_tool",
        json!({"server": "everything", "tool_name": "simulate-research-query", "tool_args": {"topic": "tides", "ambiguous": true}}),
    )
    .await;
    let report = text(&r);
    assert_ne!(r.is_error, Some(true), "{report}");
    assert!(
        report.contains("# Research Report: tides")
            && report.contains("Stage 4: Generating report"),
        "{report}"
    );
    client.cancel().await.unwrap();
}

/// Direct mode seen by the official Python SDK: server-everything's tools arrive as they are
/// listed directly (descriptions, schemas, annotations, icons), calls answer as upstream,
/// `$file` and storing big answers work, a disabled tool is gone.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn direct_mode_through_the_python_sdk_matches_the_servers_themselves() {
    let work = tempfile::tempdir().unwrap();
    let dir = interop_dir();
    let out = tokio::process::Command::new(dir.join(".venv/bin/python"))
        .arg(dir.join("direct_client.py"))
        .arg(offload_testkit::target_bin("offload"))
        .arg(dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js"))
        .arg(dir.join("node_modules/@modelcontextprotocol/server-filesystem/dist/index.js"))
        .arg(work.path())
        .output()
        .await
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("ok a disabled tool"), "{stdout}");
}

/// Direct mode seen by the TypeScript SDK, which validates structured content against output
/// schemas: an upstream answer and a stored answer's link both validate.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn direct_mode_output_schemas_validate_in_the_typescript_sdk() {
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"everything": node_server("server-everything", &["stdio"])},
        // Small enough that get-structured-content's answer (about 110 bytes) is stored.
        "limits": {"inlineBytes": 80},
    }));
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(interop_dir().join("direct_ts.mjs"))
        .arg(offload_testkit::target_bin("offload"))
        .current_dir(interop_dir());
    ctx.isolate(&mut cmd);
    let out = cmd.output().await.unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        stdout.contains("ok a stored answer's link validates")
            && stdout.contains("ok a returned resource_link read through Offload"),
        "{stdout}"
    );
}

/// `output_format` on a published server's answer: server-memory's `create_entities` gets its
/// entities from a file; `markdown` gives its JSON answer as a table to read, `structured` its
/// structured content alone, `raw` the whole result as it came.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn output_formats_of_a_published_servers_answer() {
    let ctx = TestContext::new();
    let mut memory = node_server("server-memory", &[]);
    memory["env"] = json!({"MEMORY_FILE_PATH": ctx.work.join("memory.jsonl")});
    ctx.write_servers(json!({"memory": memory}));
    let client = ctx.client().await;
    let with = |n: usize, format: &'static str| {
        let path = ctx.root.join(format!("entities-{format}.json"));
        let entities: Vec<Value> = (0..n)
            .map(|i| json!({"name": format!("{format}-{i}"), "entityType": "person", "observations": [format!("likes {i}")]}))
            .collect();
        std::fs::write(&path, serde_json::to_string(&entities).unwrap()).unwrap();
        let client = &client;
        async move {
            call(
                client,
                "call_tool_with_file_content",
                json!({"server": "memory", "tool_name": "create_entities", "file_path": path,
                       "data_key": "entities", "output_format": format}),
            )
            .await
        }
    };
    let r = with(3, "markdown").await;
    assert_ne!(r.is_error, Some(true), "{r:?}");
    let md = text(&r);
    assert!(
        md.contains("| name | entityType | observations") && md.contains("| markdown-2 | person |"),
        "{md}"
    );
    assert!(!md.contains("{\""), "no JSON left: {md}");

    let r = with(2, "structured").await;
    let s = r.structured_content.clone().expect("structured content");
    assert_eq!(r.content.len(), 1, "{r:?}");
    assert_eq!(text(&r), s.to_string());
    assert!(s.to_string().contains("structured-1"), "{s}");

    let r = with(1, "raw").await;
    let raw: Value = serde_json::from_str(&text(&r)).expect("the raw result is JSON");
    assert!(raw["content"].is_array(), "{raw}");
    assert!(raw.to_string().contains("raw-0"), "{raw}");
    client.cancel().await.unwrap();
}
