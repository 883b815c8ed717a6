//! What a call costs in each exposure mode: `call_tool` → fixture `echo` through `offload mcp`
//! in the default configuration (`auto`, which lists the fixture's tools directly) beside the
//! same call in `meta`, and the direct call `fx__echo` in `auto` beside both; the calls
//! alternate so every side sees the same machine.

use std::time::Duration;

use offload_testkit::{Client, TestContext, call, connect};
use serde_json::json;

use crate::latency::echo_proxied;
use crate::offload::as_users;
use crate::stats::{header, row, summarize};

const WARMUP: usize = 200;

pub async fn run(calls: usize) -> anyhow::Result<()> {
    let ctx = TestContext::new();
    // The default configuration: no `tools.expose`.
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"fx": TestContext::fixture(&[])},
    }));
    let auto = connect(as_users(ctx.offload_command(&[]))).await;
    let meta = connect(as_users(ctx.offload_command(&["--expose", "meta"]))).await;
    let listed = auto.list_all_tools().await?;
    anyhow::ensure!(
        listed.iter().any(|t| t.name == "fx__echo"),
        "auto lists the fixture's tools directly"
    );

    for _ in 0..WARMUP {
        echo_proxied(&auto).await;
        echo_proxied(&meta).await;
        echo_direct_name(&auto).await;
    }
    let mut in_auto = Vec::with_capacity(calls);
    let mut in_meta = Vec::with_capacity(calls);
    let mut direct = Vec::with_capacity(calls);
    for _ in 0..calls {
        in_auto.push(echo_proxied(&auto).await);
        in_meta.push(echo_proxied(&meta).await);
        direct.push(echo_direct_name(&auto).await);
    }
    let a = summarize(&mut in_auto);
    let m = summarize(&mut in_meta);
    let d = summarize(&mut direct);
    println!(
        "call_tool -> fixture echo in the default mode (auto) beside meta, {calls} calls each, alternating (after {WARMUP} warm-up calls)"
    );
    println!("{}", header("auto", "meta"));
    println!("{}", row("median", a.median, m.median));
    println!("{}", row("p99", a.p99, m.p99));
    println!();
    println!("the direct call fx__echo in auto beside call_tool in meta");
    println!("{}", header("fx__echo", "meta"));
    println!("{}", row("median", d.median, m.median));
    println!("{}", row("p99", d.p99, m.p99));
    let met = a.median.saturating_sub(m.median) <= Duration::from_micros(100)
        && d.median.saturating_sub(m.median) <= Duration::from_micros(100);
    println!();
    println!(
        "target (auto and a direct call within 0.1 ms of meta, median): {}",
        if met { "met" } else { "NOT met" }
    );
    auto.cancel().await?;
    meta.cancel().await?;
    Ok(())
}

async fn echo_direct_name(client: &Client) -> Duration {
    let t = std::time::Instant::now();
    let r = call(client, "fx__echo", json!({"text": "ping"})).await;
    let took = t.elapsed();
    assert_ne!(r.is_error, Some(true), "{r:?}");
    took
}
