//! Everything else an upstream offers, relayed through Offload and seen by the official SDKs as
//! clients: prompts, resources, templates, completions, links and updates; the questions an
//! upstream asks while it serves (sampling, elicitation, roots) on both protocol revisions on
//! either side; and roots answered with Offload's allowed directories.

use std::ffi::OsStr;

use offload_testkit::{Client, TestContext, call, text};
use serde_json::json;

use crate::interop::interop_dir;
use crate::published::node_server;

/// Runs the Python client script `script` from `tests/interop` with Offload's binary and then
/// `args`; its output, once it succeeded.
async fn client_script(script: &str, args: &[&OsStr]) -> String {
    let dir = interop_dir();
    let out = tokio::time::timeout(
        std::time::Duration::from_secs(180),
        tokio::process::Command::new(dir.join(".venv/bin/python"))
            .arg(dir.join(script))
            .arg(offload_testkit::target_bin("offload"))
            .args(args)
            .current_dir(&dir)
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("{script} hung"))
    .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout).into_owned();
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    stdout
}

/// Prompts, resources, templates, completions, returned links and resource updates of
/// server-everything and of two copies of the conformance upstream, through Offload, seen by
/// the official Python SDK and compared with server-everything connected directly
/// (`tests/interop/relay_client.py`).
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn prompts_and_resources_of_upstreams_through_the_python_sdk() {
    let (dir, work) = (interop_dir(), tempfile::tempdir().unwrap());
    let everything = dir.join("node_modules/@modelcontextprotocol/server-everything/dist/index.js");
    let conformance = dir.join("conformance_server.mjs");
    let args = [
        everything.as_os_str(),
        conformance.as_os_str(),
        work.path().as_os_str(),
    ];
    let stdout = client_script("relay_client.py", &args).await;
    assert!(
        stdout.contains("ok prompts/list_changed sent when a server is added"),
        "{stdout}"
    );
}

/// What server-filesystem says it may read, asked through Offload, once it has settled on it.
async fn allowed_of(client: &Client, server: &str, wanted: &str) -> String {
    let mut said = String::new();
    for _ in 0..100 {
        let r = call(
            client,
            "call_tool",
            json!({"server": server, "tool_name": "list_allowed_directories"}),
        )
        .await;
        said = text(&r);
        if said.contains(wanted) {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    }
    said
}

/// server-filesystem asks its client for roots and then serves exactly those: behind Offload
/// it gets Offload's allowed directories (and is told when they change); with `"roots":
/// "none"` it keeps the directories on its command line.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn a_filesystem_server_behind_offload_sees_offloads_roots() {
    let ctx = TestContext::new();
    let own = tempfile::tempdir().unwrap();
    let own = std::fs::canonicalize(own.path()).unwrap();
    let root = std::fs::canonicalize(&ctx.root).unwrap();
    let more = root.parent().unwrap().join("more-data");
    std::fs::create_dir_all(&more).unwrap();
    let mut none = node_server("server-filesystem", &[own.to_str().unwrap()]);
    none["roots"] = json!("none");
    let config = |roots: Vec<&std::path::Path>| {
        json!({
            "roots": roots,
            "mcpServers": {
                "fs": node_server("server-filesystem", &[own.to_str().unwrap()]),
                "fsnone": none.clone(),
            },
        })
    };
    ctx.write_config(config(vec![&root]));
    let client = ctx.client().await;

    let said = allowed_of(&client, "fs", root.to_str().unwrap()).await;
    assert!(
        said.contains(root.to_str().unwrap()) && !said.contains(own.to_str().unwrap()),
        "server-filesystem serves Offload's roots, not its own: {said}"
    );
    let said = allowed_of(&client, "fsnone", own.to_str().unwrap()).await;
    assert!(
        said.contains(own.to_str().unwrap()) && !said.contains(root.to_str().unwrap()),
        "with roots: none it keeps its own: {said}"
    );

    // Another allowed directory: the server is told and serves it too.
    ctx.write_config(config(vec![&root, &more]));
    let said = allowed_of(&client, "fs", more.to_str().unwrap()).await;
    assert!(
        said.contains(more.to_str().unwrap()) && said.contains(root.to_str().unwrap()),
        "roots/list_changed reaches the server: {said}"
    );
    client.cancel().await.unwrap();
}

/// Runs `tests/interop/asking_client.py` in `mode` (see there): a Python-SDK server that asks
/// for elicitation, sampling and roots and logs while it serves, behind Offload, which speaks
/// to it on `upstream`.
async fn asking_through_offload(mode: &str, upstream: &str) {
    let work = tempfile::tempdir().unwrap();
    let args = [mode.as_ref(), work.path().as_os_str(), upstream.as_ref()];
    let stdout = client_script("asking_client.py", &args).await;
    assert!(
        stdout.contains("ok and only the final answer is stored"),
        "{stdout}"
    );
}

/// A client on 2026-07-28 gets the upstream's questions as `input_required` rounds.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn an_upstream_asks_a_2026_client_in_input_required_rounds() {
    asking_through_offload("auto", "2025-11-25").await;
}

/// A client on 2025-11-25 gets the upstream's questions as requests while the call runs.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn an_upstream_asks_a_2025_client_with_requests() {
    asking_through_offload("legacy", "2025-11-25").await;
}

/// An upstream on 2026-07-28 asks in `input_required` results: Offload answers them through
/// its client (in rounds of its own for a 2026-07-28 client, with requests for an older one)
/// and calls again with the answers; the upstream's log messages are asked for per request.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn a_2026_upstreams_input_required_rounds_reach_both_kinds_of_client() {
    asking_through_offload("auto", "2026-07-28").await;
    asking_through_offload("legacy", "2026-07-28").await;
}

/// A relayed prompt or resource over the inline budget is stored, like a tool's answer, and the
/// client gets where and a preview instead of the flood; smaller ones pass as they are. Real
/// server-everything, a hand-written config with a 4 KiB budget (its largest document is
/// 12 KB; its `args-prompt` repeats a 20 KB argument).
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn prompts_and_resources_over_the_budget_are_stored_and_previewed() {
    use rmcp::model::{GetPromptRequestParams, ReadResourceRequestParams, ResourceContents};
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "mcpServers": {"everything": node_server("server-everything", &[])},
        "limits": {"inlineBytes": 4096},
    }));
    let docs = interop_dir().join("node_modules/@modelcontextprotocol/server-everything/dist/docs");
    let client = ctx.client().await;
    let read = |name: &str| {
        let client = &client;
        let uri = format!("demo://resource/static/document/{name}");
        async move {
            // The first read may come before the server has started: it is asked for.
            let read = client
                .read_resource(ReadResourceRequestParams::new(uri.clone()))
                .await
                .unwrap_or_else(|e| panic!("{uri}: {e}"));
            assert_eq!(read.contents.len(), 1, "{read:?}");
            match &read.contents[0] {
                ResourceContents::TextResourceContents { text, uri: at, .. } => {
                    assert_eq!(at, &uri);
                    text.clone()
                }
                other => panic!("{other:?}"),
            }
        }
    };
    let small = std::fs::read_to_string(docs.join("architecture.md")).unwrap();
    assert_eq!(
        read("architecture.md").await,
        small,
        "under the budget: as it is"
    );
    let big = std::fs::read_to_string(docs.join("structure.md")).unwrap();
    let told = read("structure.md").await;
    assert!(told.len() < 4096, "{}", told.len());
    assert!(told.contains("over the inline budget"), "{told}");
    // The way on names the stored file: `read_file {"path": "<path>", ...}`.
    let at = told.find("{\"path\": ").map(|i| i + 9);
    let stored: String = at
        .and_then(|i| {
            serde_json::Deserializer::from_str(&told[i..])
                .into_iter()
                .next()
        })
        .and_then(Result::ok)
        .unwrap_or_else(|| panic!("no path in {told}"));
    assert!(stored.ends_with(".md"), "{stored}");
    assert_eq!(std::fs::read_to_string(&stored).unwrap(), big);
    let r = call(
        &client,
        "read_file",
        json!({"path": stored, "offset": 0, "length": 1}),
    )
    .await;
    assert_eq!(
        offload_testkit::page(&r)["content"],
        big.lines().next().unwrap()
    );

    let city = "Paris ".repeat(20_000 / 6);
    let mut args = rmcp::model::JsonObject::new();
    args.insert("city".into(), json!(city));
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("everything__args-prompt").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(prompt.messages.len(), 1, "{prompt:?}");
    let told = prompt.messages[0].content.as_text().unwrap().text.clone();
    assert!(told.len() < 4096, "{}", told.len());
    assert!(
        told.contains("the prompt everything/args-prompt came to"),
        "{told}"
    );
    let mut args = rmcp::model::JsonObject::new();
    args.insert("city".into(), json!("Oslo"));
    let prompt = client
        .get_prompt(GetPromptRequestParams::new("everything__args-prompt").with_arguments(args))
        .await
        .unwrap();
    assert_eq!(
        prompt.messages[0].content.as_text().unwrap().text,
        "What's weather in Oslo?"
    );
    client.cancel().await.unwrap();
}
