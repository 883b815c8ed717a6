//! Files → arguments: a 5 MiB CSV sent to a tool that reports what it received, through
//! `offload mcp` (wall time, median of five; peak RSS; CPU per call of Offload and of the
//! upstream) beside the same rows sent directly, the two taking turns; and a large CSV
//! (1 GB by default) streamed in batches of 10,000 rows (rows/s, peak RSS), and the same rows
//! from the file gzip-compressed beside it.

use std::io::Write;
use std::time::Instant;

use offload_testkit::{TestContext, call, connect, target_bin, text};
use rmcp::model::CallToolRequestParams;
use serde_json::{Value, json};

use crate::offload::{children, cpu_secs, peak_rss_mb, secs, spawn};

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

/// Calls made each way for the 5 MiB figure.
const RUNS: usize = 5;

fn median(times: &mut [f64]) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

fn range(times: &[f64]) -> String {
    let (low, high) = times
        .iter()
        .fold((f64::MAX, 0f64), |(l, h), &t| (l.min(t), h.max(t)));
    format!("{low:.3}–{high:.3} s")
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

    let (client, pid) = spawn(&ctx).await;
    call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "warm"}}),
    )
    .await;
    let before = peak_rss_mb(pid);
    let upstream = children(pid);
    let cpu = |pids: &[u32]| pids.iter().map(|&p| cpu_secs(p)).sum::<f64>();
    let (offload_cpu, upstream_cpu) = (cpu_secs(pid), cpu(&upstream));
    // The two paths take turns, RUNS calls each, so a busy moment of the machine touches both.
    let (mut direct_times, mut times, mut sent) = (Vec::new(), Vec::new(), 0);
    for _ in 0..RUNS {
        let params = params.clone();
        let t = Instant::now();
        let r = direct.call_tool(params).await?;
        direct_times.push(t.elapsed().as_secs_f64());
        sent = r
            .structured_content
            .as_ref()
            .map_or(0, |s| s["bytes"].as_u64().unwrap_or(0));
        let t = Instant::now();
        let r = call(
            &client,
            "call_tool_with_file_content",
            json!({"server": "fx", "tool_name": "received", "file_path": "five.csv", "data_key": "rows"}),
        )
        .await;
        times.push(t.elapsed().as_secs_f64());
        anyhow::ensure!(r.is_error != Some(true), "failed: {}", text(&r));
    }
    let rss = peak_rss_mb(pid);
    let per_call = |total: f64| total / RUNS as f64;
    let (offload_cpu, upstream_cpu) = (
        per_call(cpu_secs(pid) - offload_cpu),
        per_call(cpu(&upstream) - upstream_cpu),
    );
    client.cancel().await?;
    direct.cancel().await?;
    println!(
        "a 5 MiB CSV ({rows} rows, {:.1} MB of JSON arguments) into a tool that reports what it received, {RUNS} calls each way",
        sent as f64 / 1e6
    );
    println!(
        "{:<22} {:>8} {:>17} {:>22}",
        "", "median", "range", "peak RSS"
    );
    println!(
        "{:<22} {:>8} {:>17} {:>13.1} MiB (before: {before:.1})",
        "offload (file → tool)",
        format!("{:.3} s", median(&mut times)),
        range(&times),
        rss
    );
    println!(
        "{:<22} {:>8} {:>17} {:>22}",
        "direct (same rows)",
        format!("{:.3} s", median(&mut direct_times)),
        range(&direct_times),
        "(rows built in the bench)"
    );
    println!(
        "{:<22} {:>7.2}x",
        "ratio of medians",
        median(&mut times) / median(&mut direct_times)
    );
    println!(
        "CPU per call through offload: offload {offload_cpu:.2} s, the upstream {upstream_cpu:.2} s"
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
    let (took, batches, rss) = batches_of(&ctx, "big.csv", big_rows).await?;
    println!(
        "offload: {batches} batches in {} = {:.0} rows/s, {:.1} MB/s; peak RSS {rss:.1} MiB (target < 100 MiB)",
        secs(took),
        big_rows as f64 / took.as_secs_f64(),
        size as f64 / 1e6 / took.as_secs_f64()
    );

    // The same rows from the file gzip-compressed: decompressed as they are read.
    let packed = ctx.root.join("big.csv.gz");
    let t = Instant::now();
    {
        let mut plain = std::io::BufReader::new(std::fs::File::open(&big)?);
        let mut gz = flate2::write::GzEncoder::new(
            std::io::BufWriter::new(std::fs::File::create(&packed)?),
            flate2::Compression::fast(),
        );
        std::io::copy(&mut plain, &mut gz)?;
        gz.finish()?;
    }
    std::fs::remove_file(&big)?;
    let packed_size = std::fs::metadata(&packed)?.len();
    println!(
        "the same rows gzip-compressed: {:.2} GB (written in {})",
        packed_size as f64 / 1e9,
        secs(t.elapsed())
    );
    let (packed_took, batches, packed_rss) = batches_of(&ctx, "big.csv.gz", big_rows).await?;
    std::fs::remove_file(&packed)?;
    println!(
        "offload, .csv.gz: {batches} batches in {} = {:.0} rows/s; peak RSS {packed_rss:.1} MiB; {:.2}x the plain file's time",
        secs(packed_took),
        big_rows as f64 / packed_took.as_secs_f64(),
        packed_took.as_secs_f64() / took.as_secs_f64()
    );
    Ok(())
}

/// `file`'s `rows` rows sent in batches of 10,000 through a fresh `offload mcp`: how long it
/// took, how many batches, the peak RSS (MiB).
async fn batches_of(
    ctx: &TestContext,
    file: &str,
    rows: u64,
) -> anyhow::Result<(std::time::Duration, Value, f64)> {
    let (client, pid) = spawn(ctx).await;
    let t = Instant::now();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "fx", "tool_name": "received", "file_path": file, "data_key": "rows", "batch_size": 10_000}),
    )
    .await;
    let took = t.elapsed();
    let s = r.structured_content.clone().unwrap_or_default();
    anyhow::ensure!(
        s["items"].as_u64() == Some(rows),
        "not all rows of {file} sent: {}",
        text(&r)
    );
    let rss = peak_rss_mb(pid);
    client.cancel().await?;
    Ok((took, s["batches"].clone(), rss))
}
