//! Storing a large JSON table through `offload mcp` (wall time and Offload's peak RSS) beside
//! the same upstream call made directly; and how many bytes the model receives for payloads of
//! 1 KB, 1 MB and 100 MB.

use std::time::Instant;

use offload_testkit::{TestContext, call, target_bin, text};
use rmcp::model::CallToolRequestParams;
use serde_json::json;

use crate::offload::{peak_rss_mb, secs, spawn};

/// Rows of about 110 bytes: 90,000 make a payload of about 10 MB.
const ROWS: u64 = 90_000;

pub async fn run() -> anyhow::Result<()> {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));

    // Baseline: the same tool called directly over the fixture's own stdio.
    let direct =
        offload_testkit::connect(tokio::process::Command::new(target_bin("offload-fixture"))).await;
    let mut params = CallToolRequestParams::new("rows");
    params.arguments = json!({"n": ROWS}).as_object().cloned();
    direct.call_tool(params.clone()).await?; // warm
    let t = Instant::now();
    let r = direct.call_tool(params).await?;
    let direct_time = t.elapsed();
    // What a bare rmcp client costs to receive the same answer (this process's peak grows
    // by about that much; nothing else here holds large data).
    let direct_peak = peak_rss_mb(std::process::id());
    let payload = text(&r).len() as f64 / 1e6;
    direct.cancel().await?;

    println!(
        "store a {payload:.1} MB JSON array of {ROWS} objects through offload mcp (fresh process per format)"
    );
    println!(
        "baseline: a bare rmcp client receiving the same answer directly peaks at {direct_peak:.1} MiB"
    );
    println!(
        "{:<6} {:>11} {:>13} {:>9} {:>12} {:>14}",
        "format", "offload", "direct call", "ratio", "peak RSS", "RSS / payload"
    );
    for format in ["csv", "json", "yaml"] {
        let (client, pid) = spawn(&ctx).await;
        // Warm the upstream connection so the figure is the store, not the spawn.
        call(
            &client,
            "call_tool",
            json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "x"}}),
        )
        .await;
        let before = peak_rss_mb(pid);
        let t = Instant::now();
        let r = call(
            &client,
            "call_tool_and_store",
            json!({"server": "fx", "tool_name": "rows", "tool_args": {"n": ROWS}, "file_format": format}),
        )
        .await;
        let took = t.elapsed();
        anyhow::ensure!(r.is_error != Some(true), "store failed: {}", text(&r));
        let rss = peak_rss_mb(pid);
        println!(
            "{format:<6} {:>11} {:>13} {:>8.2}x {:>9.1} MiB {:>13.1}x {:>12.1} MiB",
            secs(took),
            secs(direct_time),
            took.as_secs_f64() / direct_time.as_secs_f64(),
            rss,
            rss * 1.048_576 / payload,
            before
        );
        client.cancel().await?;
    }

    println!();
    println!(
        "bytes the model receives (text blocks; and the whole result as JSON, resource link and structuredContent included)"
    );
    let (client, _) = spawn(&ctx).await;
    for (label, bytes) in [
        ("1 KB", 1_000u64),
        ("1 MB", 1_000_000),
        ("100 MB", 100_000_000),
    ] {
        let r = call(
            &client,
            "call_tool_and_store",
            json!({"server": "fx", "tool_name": "large", "tool_args": {"bytes": bytes}, "file_format": "txt"}),
        )
        .await;
        anyhow::ensure!(r.is_error != Some(true), "store failed: {}", text(&r));
        let whole = serde_json::to_vec(&r)?.len();
        println!(
            "{label:>7} payload: text {:>4} bytes, whole result {:>5} bytes",
            text(&r).len(),
            whole
        );
    }
    client.cancel().await?;
    Ok(())
}
