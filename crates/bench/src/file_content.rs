//! Files → arguments: a 5 MiB CSV sent to a tool that reports what it received, through
//! `offload mcp` (wall time, peak RSS) beside the same rows sent directly; and a large CSV
//! (1 GB by default) streamed in batches of 10,000 rows (rows/s, peak RSS).

use std::io::Write;
use std::time::Instant;

use offload_testkit::{TestContext, call, connect, target_bin, text};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::offload::{peak_rss_mb, secs, spawn};

fn row(i: u64) -> String {
    format!(
        "{i},user{i}@example.com,Some Name {i},{},{}.5\n",
        i.is_multiple_of(3),
        i % 1000
    )
}

/// Writes a CSV of at least `bytes` bytes; returns the row count.
fn write_csv(path: &std::path::Path, bytes: u64) -> anyhow::Result<u64> {
    let mut w = std::io::BufWriter::with_capacity(1 << 20, std::fs::File::create(path)?);
    w.write_all(b"id,email,name,active,score\n")?;
    let (mut written, mut rows) = (0u64, 0u64);
    while written < bytes {
        let r = row(rows);
        written += r.len() as u64;
        w.write_all(r.as_bytes())?;
        rows += 1;
    }
    w.flush()?;
    Ok(rows)
}

pub async fn run(gigabytes: f64) -> anyhow::Result<()> {
    let ctx = TestContext::new();
    // The 5 MiB CSV makes about 8 MiB of JSON: allow messages up to 16 MiB for this figure.
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "limits": {"maxUpstreamMessageBytes": 16 * 1024 * 1024}
    }));
    let small = ctx.root.join("five.csv");
    let rows = write_csv(&small, 5 * 1024 * 1024)?;

    // Baseline: the same rows, as JSON, sent straight to the fixture by this process.
    let direct = connect(tokio::process::Command::new(target_bin("offload-fixture"))).await;
    let parsed: Vec<Value> = std::fs::read_to_string(&small)?
        .lines()
        .skip(1)
        .map(|l| {
            let f: Vec<&str> = l.split(',').collect();
            json!({"id": f[0].parse::<u64>().unwrap_or(0), "email": f[1], "name": f[2], "active": f[3] == "true", "score": f[4].parse::<f64>().unwrap_or(0.0)})
        })
        .collect();
    let mut params = CallToolRequestParams::new("received");
    params.arguments = json!({"rows": parsed}).as_object().cloned();
    let t = Instant::now();
    let r = direct.call_tool(params).await?;
    let direct_time = t.elapsed();
    let sent = r
        .structured_content
        .as_ref()
        .map_or(0, |s| s["bytes"].as_u64().unwrap_or(0));
    direct.cancel().await?;

    let (client, pid) = spawn(&ctx).await;
    call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "warm"}}),
    )
    .await;
    let before = peak_rss_mb(pid);
    let t = Instant::now();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "fx", "tool_name": "received", "file_path": "five.csv", "data_key": "rows"}),
    )
    .await;
    let took = t.elapsed();
    anyhow::ensure!(r.is_error != Some(true), "failed: {}", text(&r));
    let rss = peak_rss_mb(pid);
    client.cancel().await?;
    println!(
        "a 5 MiB CSV ({rows} rows, {:.1} MB of JSON arguments) into a tool that reports what it received",
        sent as f64 / 1e6
    );
    println!("{:<22} {:>10} {:>22}", "", "time", "peak RSS");
    println!(
        "{:<22} {:>10} {:>13.1} MiB (before: {before:.1})",
        "offload (file → tool)",
        secs(took),
        rss
    );
    println!(
        "{:<22} {:>10} {:>22}",
        "direct (same rows)",
        secs(direct_time),
        "(rows built in the bench)"
    );
    println!(
        "{:<22} {:>9.2}x",
        "ratio",
        took.as_secs_f64() / direct_time.as_secs_f64()
    );

    let big = ctx.root.join("big.csv");
    let t = Instant::now();
    let big_rows = write_csv(&big, (gigabytes * 1e9) as u64)?;
    let size = std::fs::metadata(&big)?.len();
    println!();
    println!(
        "a {:.2} GB CSV ({big_rows} rows, written in {}) in batches of 10,000 rows",
        size as f64 / 1e9,
        secs(t.elapsed())
    );
    let (client, pid) = spawn(&ctx).await;
    let t = Instant::now();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "fx", "tool_name": "received", "file_path": "big.csv", "data_key": "rows", "batch_size": 10_000}),
    )
    .await;
    let took = t.elapsed();
    let s = r.structured_content.clone().unwrap_or_default();
    anyhow::ensure!(
        s["items"].as_u64() == Some(big_rows),
        "not all rows sent: {}",
        text(&r)
    );
    let rss = peak_rss_mb(pid);
    client.cancel().await?;
    std::fs::remove_file(&big)?;
    println!(
        "offload: {} batches in {} = {:.0} rows/s, {:.1} MB/s; peak RSS {rss:.1} MiB (target < 100 MiB)",
        s["batches"],
        secs(took),
        big_rows as f64 / took.as_secs_f64(),
        size as f64 / 1e6 / took.as_secs_f64()
    );
    Ok(())
}
