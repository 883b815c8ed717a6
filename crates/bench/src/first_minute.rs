//! A client's first minute with slow servers configured: how long the first `tools/list` takes
//! and how many tools it holds, and how long the first call of one of Offload's own tools
//! (`read_file`, asked right after `initialize`, without a list first) takes — on a first start
//! ever (cold: nothing remembered) and on a later start (the remembered catalog) — beside a
//! client connected directly to the slowest server (its `initialize` and `tools/list`).
//!
//! The servers: the fixture as it is (fast), and the fixture starting after 1 s and after 3 s
//! (`--start-delay-ms`), stand-ins for a Python-SDK or `npx` server's start.

use std::time::{Duration, Instant};

use offload_testkit::{TestContext, call, connect};
use serde_json::json;

use crate::offload::as_users;
use crate::stats::ms;

const SLOWEST_MS: u64 = 3000;

struct Round {
    list: Duration,
    listed: usize,
    read: Duration,
}

/// One `offload mcp` process: its first list, then (another process) its first own-tool call,
/// asked right after `initialize`.
async fn round(ctx: &TestContext) -> anyhow::Result<Round> {
    let client = connect(as_users(ctx.offload_command(&[]))).await;
    let asked = Instant::now();
    let tools = client.list_all_tools().await?;
    let list = asked.elapsed();
    client.cancel().await?;
    let client = connect(as_users(ctx.offload_command(&[]))).await;
    let asked = Instant::now();
    let r = call(
        &client,
        "read_file",
        json!({"path": "notes.txt", "offset": -5}),
    )
    .await;
    let read = asked.elapsed();
    anyhow::ensure!(r.is_error != Some(true), "read_file failed: {r:?}");
    client.cancel().await?;
    Ok(Round {
        list,
        listed: tools.iter().filter(|t| t.name.contains("__")).count(),
        read,
    })
}

fn context() -> TestContext {
    let ctx = TestContext::new();
    let slow = |ms: u64| {
        let mut e = TestContext::fixture(&["--start-delay-ms", &ms.to_string()]);
        e["startTimeoutSecs"] = json!(30);
        e
    };
    // Direct mode, so that the listing shows each server's tools (three fixtures are 48 tools:
    // `auto` would choose meta).
    ctx.write_config(json!({
        "roots": [ctx.root],
        "tools": {"expose": "direct"},
        "mcpServers": {
            "fx": TestContext::fixture(&[]),
            "slow_1s": slow(1000),
            "slow_3s": slow(SLOWEST_MS),
        },
    }));
    let lines: String = (0..100_000).map(|i| format!("line {i}\n")).collect();
    std::fs::write(ctx.root.join("notes.txt"), lines).expect("write notes");
    ctx
}

pub async fn run(rounds: usize) -> anyhow::Result<()> {
    let (mut cold, mut warm, mut direct) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..rounds {
        // A fresh home each round: nothing remembered.
        let ctx = context();
        cold.push(round(&ctx).await?);
        warm.push(round(&ctx).await?);

        // A client connected directly to the slowest server: initialize, then its list.
        let mut cmd = tokio::process::Command::new(offload_testkit::target_bin("offload-fixture"));
        cmd.args(["--start-delay-ms", &SLOWEST_MS.to_string()]);
        let asked = Instant::now();
        let client = connect(cmd).await;
        let tools = client.list_all_tools().await?;
        direct.push((asked.elapsed(), tools.len()));
        client.cancel().await?;
    }
    let med = |mut v: Vec<Duration>| {
        v.sort_unstable();
        v[v.len() / 2]
    };
    let show = |label: &str, rs: &[Round]| {
        println!(
            "{label:<34} {:>12} {:>8} {:>14}",
            ms(med(rs.iter().map(|r| r.list).collect())),
            rs.iter().map(|r| r.listed).min().unwrap_or(0),
            ms(med(rs.iter().map(|r| r.read).collect())),
        );
    };
    println!(
        "first minute with three servers (fast, 1 s and {} s to start), median of {rounds} rounds",
        SLOWEST_MS / 1000
    );
    println!(
        "{:<34} {:>12} {:>8} {:>14}",
        "", "tools/list", "tools", "first read_file"
    );
    show("cold (first start ever)", &cold);
    show("remembered (a later start)", &warm);
    println!(
        "{:<34} {:>12} {:>8} {:>14}",
        format!("directly to the {} s server", SLOWEST_MS / 1000),
        ms(med(direct.iter().map(|d| d.0).collect())),
        direct.iter().map(|d| d.1).min().unwrap_or(0),
        "(init + list)",
    );
    println!(
        "(tools: the upstream tools listed — the three servers' tools in every row of ours; the direct row's tools are the one server's)"
    );
    Ok(())
}
