//! Offload as a gateway: a direct call's added latency (`fx__echo` listed as a tool of the
//! client's own) beside `call_tool` and beside the same call made straight to the fixture,
//! alternating; and the bytes of `tools/list` with five published servers behind Offload in
//! direct mode beside the same servers' own lists added up.

use std::time::{Duration, Instant};

use offload_testkit::{Client, TestContext, connect, target_bin};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::latency::{echo_direct, echo_proxied};
use crate::offload::as_users;
use crate::stats::{header, row, summarize};

const WARMUP: usize = 200;

/// A client that declares what Offload declares to its upstreams (sampling, elicitation), so
/// that servers which list tools by the client's capabilities (server-everything) list the
/// same tools to both sides of the comparison.
struct SameAsOffload;

impl rmcp::ClientHandler for SameAsOffload {
    fn get_info(&self) -> rmcp::model::ClientConfig {
        let mut capabilities = rmcp::model::ClientCapabilities::default();
        capabilities.sampling = Some(Default::default());
        let mut elicitation = rmcp::model::ElicitationCapability::new();
        elicitation.form = Some(Default::default());
        elicitation.url = Some(Default::default());
        capabilities.elicitation = Some(elicitation);
        rmcp::model::ClientConfig::new(
            capabilities,
            rmcp::model::Implementation::new("offload-bench", "0"),
        )
    }
}

async fn echo_as(client: &Client, name: &str) -> Duration {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = json!({"text": "ping"}).as_object().cloned();
    let t = Instant::now();
    let r = client.call_tool(params).await.expect("direct echo");
    let took = t.elapsed();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    took
}

pub async fn run(calls: usize) -> anyhow::Result<()> {
    latency(calls).await?;
    println!();
    tools_list_bytes().await
}

async fn latency(calls: usize) -> anyhow::Result<()> {
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "tools": {"expose": "direct"},
    }));
    let offload = connect(as_users(ctx.offload_command(&[]))).await;
    let direct = connect(tokio::process::Command::new(target_bin("offload-fixture"))).await;
    for _ in 0..WARMUP {
        echo_direct(&direct).await;
        echo_as(&offload, "fx__echo").await;
        echo_proxied(&offload).await;
    }
    let (mut d, mut g, mut c) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..calls {
        d.push(echo_direct(&direct).await);
        g.push(echo_as(&offload, "fx__echo").await);
        c.push(echo_proxied(&offload).await);
    }
    let (d, g, c) = (summarize(&mut d), summarize(&mut g), summarize(&mut c));
    println!(
        "direct tool fx__echo through offload mcp, {calls} calls each, alternating (after {WARMUP} warm-up calls)"
    );
    println!("{}", header("fx__echo", "fixture"));
    println!("{}", row("median", g.median, d.median));
    println!("{}", row("p99", g.p99, d.p99));
    println!("{}", header("fx__echo", "call_tool"));
    println!("{}", row("median", g.median, c.median));
    println!("{}", row("p99", g.p99, c.p99));
    let met = g.median.saturating_sub(d.median) <= Duration::from_micros(300)
        && g.median <= c.median + Duration::from_micros(50);
    println!(
        "target (a direct call adds <= 0.3 ms median over the fixture, no more than call_tool): {}",
        if met { "met" } else { "NOT met" }
    );
    offload.cancel().await?;
    direct.cancel().await?;
    Ok(())
}

/// The five published servers, as config entries (from tests/interop, installed by
/// scripts/setup-interop.sh).
fn published(interop: &std::path::Path, work: &std::path::Path) -> Vec<(&'static str, Value)> {
    let node = |package: &str, args: &[&str]| {
        let mut all = vec![
            interop
                .join(format!(
                    "node_modules/@modelcontextprotocol/{package}/dist/index.js"
                ))
                .display()
                .to_string(),
        ];
        all.extend(args.iter().map(|a| (*a).to_owned()));
        json!({"command": "node", "args": all})
    };
    let data = work.join("data");
    let repo = work.join("repo");
    let _ = std::fs::create_dir_all(&data);
    let _ = std::fs::create_dir_all(&repo);
    let _ = std::process::Command::new("git")
        .args(["init", "-q"])
        .arg(&repo)
        .status();
    let mut memory = node("server-memory", &[]);
    memory["env"] = json!({"MEMORY_FILE_PATH": work.join("memory.jsonl")});
    vec![
        ("everything", node("server-everything", &["stdio"])),
        (
            "filesystem",
            node("server-filesystem", &[data.to_str().unwrap_or_default()]),
        ),
        ("memory", memory),
        (
            "git",
            json!({"command": interop.join(".venv/bin/mcp-server-git"), "args": ["--repository", repo]}),
        ),
        (
            "time",
            json!({"command": interop.join(".venv/bin/mcp-server-time")}),
        ),
    ]
}

async fn tools_list_bytes() -> anyhow::Result<()> {
    let interop = std::fs::canonicalize(offload_testkit::interop_dir())?;
    if !interop
        .join("node_modules/@modelcontextprotocol/server-memory")
        .exists()
    {
        println!(
            "tools/list bytes: skipped (run scripts/setup-interop.sh for the published servers)"
        );
        return Ok(());
    }
    let ctx = TestContext::new();
    let servers = published(&interop, ctx.tmp.path());
    let mut direct_bytes = 0;
    let mut direct_tools = 0;
    // Each tool's definition as the server lists it, under the name Offload lists it by.
    let mut each: std::collections::HashMap<String, usize> = std::collections::HashMap::new();
    for (server, entry) in &servers {
        let mut cmd = tokio::process::Command::new(entry["command"].as_str().unwrap_or_default());
        for a in entry["args"].as_array().into_iter().flatten() {
            cmd.arg(a.as_str().unwrap_or_default());
        }
        for (k, v) in entry["env"].as_object().into_iter().flatten() {
            cmd.env(k, v.as_str().unwrap_or_default());
        }
        let client = rmcp::ServiceExt::serve(
            SameAsOffload,
            rmcp::transport::TokioChildProcess::builder(cmd)
                .stderr(std::process::Stdio::null())
                .spawn()?
                .0,
        )
        .await?;
        let tools = client.list_all_tools().await?;
        direct_tools += tools.len();
        for t in &tools {
            each.insert(
                format!("{server}__{}", t.name),
                serde_json::to_string(t)?.len(),
            );
        }
        direct_bytes += serde_json::to_string(&json!({"tools": tools}))?.len();
        client.cancel().await?;
    }
    let config: serde_json::Map<String, Value> = servers
        .iter()
        .map(|(n, e)| ((*n).to_owned(), e.clone()))
        .collect();
    ctx.write_config(
        json!({"roots": [ctx.root], "mcpServers": config, "tools": {"expose": "direct"}}),
    );
    let offload = connect(as_users(ctx.offload_command(&[]))).await;
    let tools = offload.list_all_tools().await?;
    let ours = serde_json::to_string(&json!({"tools": tools}))?.len();
    // Offload's own tools as direct mode lists them: every name without a server's prefix.
    let own: Vec<_> = tools.iter().filter(|t| !t.name.contains("__")).collect();
    let own_bytes = serde_json::to_string(&json!({"tools": own}))?.len();
    let upstream_ours = ours.saturating_sub(own_bytes);
    println!(
        "tools/list with 5 published servers (server-everything, -filesystem, -memory, mcp-server-git, -time): {direct_tools} tools"
    );
    println!("  connected directly, added up: {direct_bytes} bytes");
    println!(
        "  behind Offload in direct mode: {ours} bytes = {upstream_ours} for {} upstream tools + {own_bytes} for Offload's own {} tools",
        tools.len() - own.len(),
        own.len()
    );
    // Tool by tool, over the tools both sides list (server-everything shows its task-only tool
    // to clients that run tasks, as Offload does, and not to the direct client).
    let (mut mine, mut theirs, mut both) = (0, 0, 0);
    for t in tools.iter().filter(|t| t.name.contains("__")) {
        if let Some(direct) = each.get(t.name.as_ref()) {
            mine += serde_json::to_string(t)?.len();
            theirs += direct;
            both += 1;
        }
    }
    let ratio = mine as f64 / theirs.max(1) as f64;
    println!(
        "  the {both} tools both list: {mine} bytes behind Offload, {theirs} directly: {ratio:.3}x (names carry their server's prefix; output schemas widened to admit a stored answer's link)"
    );
    println!(
        "target (within 5% plus Offload's own tools): {}",
        if ratio <= 1.05 { "met" } else { "NOT met" }
    );
    offload.cancel().await?;
    Ok(())
}
