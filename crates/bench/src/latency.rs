//! Call latency through `offload mcp` versus a direct call to the same upstream, measured in
//! alternation so both sides see the same machine conditions.

use std::time::{Duration, Instant};

use offload_testkit::{Client, TestContext, call, connect, target_bin};
use rmcp::model::{CallToolRequestParams, PaginatedRequestParams};
use serde_json::json;

use crate::offload::as_users;
use crate::stats::{Summary, header, row, summarize};

const WARMUP: usize = 200;

pub async fn run(calls: usize) -> anyhow::Result<()> {
    let ctx = TestContext::new();
    ctx.write_servers(json!({
        "fx": TestContext::fixture(&[]),
        "fx2": TestContext::fixture(&["--tools", "40"]),
    }));
    // Offload as users run it: default log level, logging to stderr (discarded here).
    let proxied = connect(as_users(ctx.offload_command(&[]))).await;
    // The same, through a host (`offload serve`, the app's engine without a window): the shim
    // connects to its socket and pumps bytes.
    let mut host_cmd = as_users(ctx.host_command());
    host_cmd.stderr(std::process::Stdio::null());
    let _host = ctx.host_from(host_cmd).await;
    let hosted = connect(as_users(ctx.offload_command(&["--mode", "app"]))).await;
    let direct = connect(tokio::process::Command::new(target_bin("offload-fixture"))).await;
    let direct2 = {
        let mut cmd = tokio::process::Command::new(target_bin("offload-fixture"));
        cmd.args(["--tools", "40"]);
        connect(cmd).await
    };

    // Warm both paths: processes started, tool lists cached, allocators settled.
    for _ in 0..WARMUP {
        echo_direct(&direct).await;
        echo_proxied(&proxied).await;
        echo_proxied(&hosted).await;
    }

    let mut direct_samples = Vec::with_capacity(calls);
    let mut proxied_samples = Vec::with_capacity(calls);
    let mut hosted_samples = Vec::with_capacity(calls);
    for _ in 0..calls {
        direct_samples.push(echo_direct(&direct).await);
        proxied_samples.push(echo_proxied(&proxied).await);
        hosted_samples.push(echo_proxied(&hosted).await);
    }
    let d = summarize(&mut direct_samples);
    let p = summarize(&mut proxied_samples);
    let h = summarize(&mut hosted_samples);

    println!(
        "call_tool -> fixture echo, {calls} calls each side, alternating (after {WARMUP} warm-up calls)"
    );
    println!("{}", header("offload", "direct"));
    println!("{}", row("median", p.median, d.median));
    println!("{}", row("p99", p.p99, d.p99));
    println!("{}", row("mean", p.mean, d.mean));
    println!();
    println!(
        "the same through the host's socket (offload mcp --mode app -> offload serve), beside embedded"
    );
    println!("{}", header("via host", "embedded"));
    println!("{}", row("median", h.median, p.median));
    println!("{}", row("p99", h.p99, p.p99));

    // list_available_tools over two warm servers vs listing both servers directly.
    let rounds = 200;
    let mut list_ours = Vec::with_capacity(rounds);
    let mut list_base = Vec::with_capacity(rounds);
    let mut tool_count = 0;
    for _ in 0..20 {
        let r = call(&proxied, "list_available_tools", json!({})).await;
        tool_count = r
            .structured_content
            .as_ref()
            .and_then(|s| s["tools"].as_array().map(Vec::len))
            .unwrap_or(0);
    }
    for _ in 0..rounds {
        let t = Instant::now();
        let r = call(&proxied, "list_available_tools", json!({})).await;
        list_ours.push(t.elapsed());
        assert_ne!(r.is_error, Some(true));
        let t = Instant::now();
        direct
            .list_tools(Some(PaginatedRequestParams::default()))
            .await?;
        direct2.list_all_tools().await?;
        list_base.push(t.elapsed());
    }
    let lo = summarize(&mut list_ours);
    let lb = summarize(&mut list_base);
    println!();
    println!(
        "list_available_tools, 2 warm servers ({tool_count} tools), {rounds} calls; baseline: tools/list sent directly to both"
    );
    println!("{}", header("offload", "direct"));
    println!("{}", row("median", lo.median, lb.median));
    println!("{}", row("p99", lo.p99, lb.p99));

    // Starting a client session: spawn `offload mcp` and complete the handshake.
    let starts = 30;
    let (sh, se) = session_starts(&ctx, starts).await?;
    println!();
    println!("offload mcp start + initialize, {starts} starts each");
    println!("{}", header("via host", "embedded"));
    println!("{}", row("median", sh.median, se.median));

    let targets_met = p.median.saturating_sub(d.median) <= Duration::from_micros(300)
        && h.median.saturating_sub(p.median) <= Duration::from_micros(500)
        && sh.median < Duration::from_millis(50)
        && p.p99.saturating_sub(d.p99) <= Duration::from_millis(1)
        && lo.median < Duration::from_millis(10);
    println!();
    println!(
        "targets (added <= 0.3 ms median, <= 1 ms p99; via host <= 0.5 ms more; start via host < 50 ms; list < 10 ms): {}",
        if targets_met { "met" } else { "NOT met" }
    );
    proxied.cancel().await?;
    hosted.cancel().await?;
    direct.cancel().await?;
    direct2.cancel().await?;
    Ok(())
}

/// `offload mcp` spawned and initialized `n` times through the host (`--mode app`) and
/// embedded, alternating: the two summaries.
pub(crate) async fn session_starts(
    ctx: &TestContext,
    n: usize,
) -> anyhow::Result<(Summary, Summary)> {
    let mut via_host = Vec::with_capacity(n);
    let mut embedded = Vec::with_capacity(n);
    for _ in 0..n {
        for (mode, samples) in [("app", &mut via_host), ("embedded", &mut embedded)] {
            let cmd = as_users(ctx.offload_command(&["--mode", mode]));
            let t = Instant::now();
            let client = connect(cmd).await;
            samples.push(t.elapsed());
            client.cancel().await?;
        }
    }
    Ok((summarize(&mut via_host), summarize(&mut embedded)))
}

/// `echo` called straight on the fixture.
pub(crate) async fn echo_direct(client: &Client) -> Duration {
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = json!({"text": "ping"}).as_object().cloned();
    let t = Instant::now();
    let r = client.call_tool(params).await.expect("direct echo");
    let took = t.elapsed();
    assert_ne!(r.is_error, Some(true));
    took
}

/// `call_tool` → fixture `echo` through Offload.
pub(crate) async fn echo_proxied(client: &Client) -> Duration {
    let t = Instant::now();
    let r = call(
        client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "ping"}}),
    )
    .await;
    let took = t.elapsed();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    took
}
