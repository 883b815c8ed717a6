//! Offload in front of the servers people run, as published: a remote server behind a bearer
//! token, tool search over server-memory, mcp-server-git and server-everything, direct mode seen
//! by the official Python and TypeScript SDKs, and `output_format` on a published server's
//! answer. How their answers are stored is `published_answers`.
//!
//! `#[ignore]`d for a bare `cargo test` (the peers come from `scripts/setup-interop.sh`); the
//! test script runs them with `--include-ignored`.

use offload_testkit::{TestContext, call, structured, text};
use serde_json::{Value, json};

use crate::interop::interop_dir;

pub(crate) fn python() -> String {
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
    let search = |query: &'static str| search(&client, query);
    once_started(&client, "what changed in the repo").await;
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

/// With the sentence model installed, a request in other words than the tools' finds its tool:
/// "remember a fact about a person" ranked five filesystem and everything tools first with the
/// built-in meaning (issue 56); with the model, server-memory's tools lead. Cold: the first
/// searches also load the model and embed the catalog. A later process (each session of an
/// embedded `offload mcp` is one) reads the tools' vectors the first one kept on disk.
#[tokio::test]
#[ignore = "needs published peers and the sentence model: run scripts/setup-interop.sh and scripts/setup-model.sh"]
async fn with_the_sentence_model_a_request_in_other_words_finds_its_tool() {
    let ctx = TestContext::new();
    let mut memory = node_server("server-memory", &[]);
    memory["env"] = json!({"MEMORY_FILE_PATH": ctx.work.join("memory.jsonl")});
    ctx.write_servers(json!({
        "memory": memory,
        "everything": node_server("server-everything", &["stdio"]),
    }));
    let session = || {
        let mut command = ctx.offload_command(&[]);
        command.env("OFFLOAD_SEARCH_MODEL", offload_testkit::search_model());
        offload_testkit::connect(command)
    };
    let memory_first = |found: &Value| {
        let first: Vec<(&str, &str)> = found["tools"]
            .as_array()
            .unwrap()
            .iter()
            .take(3)
            .map(|t| (t["server"].as_str().unwrap(), t["tool"].as_str().unwrap()))
            .collect();
        assert!(
            first.iter().all(|(server, _)| *server == "memory")
                && first
                    .iter()
                    .any(|(_, tool)| ["create_entities", "add_observations"].contains(tool)),
            "{found}"
        );
    };
    let client = session().await;
    let search = |query: &'static str| search(&client, query);
    once_started(&client, "remember a fact about a person").await;
    let found = search("remember a fact about a person").await;
    memory_first(&found);
    // No word of it is a tool's: guesses, and said so.
    assert_eq!(found["matched"], 0, "{found}");
    let found = search("zzzz qqqq").await;
    assert!(
        found["tools"]
            .as_array()
            .unwrap()
            .iter()
            .all(|t| t["confidence"].as_f64().unwrap() < 0.5),
        "{found}"
    );
    client.cancel().await.unwrap();
    // A header, then a record (a digest and 384 numbers) a tool: server-memory's nine and
    // server-everything's.
    let kept = ctx.home.join(".local/share/offload/search-vectors.bin");
    let size = std::fs::metadata(&kept).map_or(0, |m| m.len() as usize);
    let record = 16 + 384 * 4;
    let records = size.saturating_sub(24) / record;
    assert!(
        size == 24 + records * record && records > 9,
        "{}: {size} bytes",
        kept.display()
    );
    let client = session().await;
    once_started(&client, "remember a fact about a person").await;
    memory_first(&self::search(&client, "remember a fact about a person").await);
    client.cancel().await.unwrap();
    assert!(
        ctx.log().contains(&format!(
            "{records} tool vectors read from {}",
            kept.display()
        )),
        "the second process read the kept vectors:\n{}",
        ctx.log()
    );
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
        // Small enough that get-structured-content's answer (55 bytes as a model receives it:
        // its text, or its structured content) is stored.
        "limits": {"inlineBytes": 40},
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

/// `list_available_tools {query}`'s structured answer.
async fn search(client: &offload_testkit::Client, query: &str) -> Value {
    let r = call(client, "list_available_tools", json!({"query": query})).await;
    structured(&r).clone()
}

/// Searches `query` until no server is still starting (an answer before then names those
/// starting, and a loaded machine starts mcp-server-git in seconds).
async fn once_started(client: &offload_testkit::Client, query: &str) {
    for _ in 0..600 {
        let found = search(client, query).await;
        if !found["note"]
            .as_str()
            .unwrap_or_default()
            .contains("still starting")
        {
            return;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
}
