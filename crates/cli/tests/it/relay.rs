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
