//! The file tools through `offload mcp` on generated files, beside `head`, `tail -n`, `sed -n` and
//! `wc -l` run on the same files in the same run; memory growth of the `offload mcp` process per
//! tool, for a 100 MB and a large text file.

use std::io::{BufWriter, Write};
use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use offload_testkit::{Client, TestContext, call, page, structured};
use serde_json::{Value, json};

use crate::offload::{peak_rss_mb, spawn};
use crate::peer::{DesktopCommander, numbered_lines, verdict};
use crate::stats::median;

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

/// A text file of about `bytes` bytes with ~100-byte numbered lines; returns its line count.
pub(crate) fn text_file(path: &Path, bytes: u64) -> u64 {
    if let Ok(meta) = std::fs::metadata(path)
        && meta.len() >= bytes
    {
        return count_lines(path);
    }
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    let mut written = 0u64;
    let mut n = 0u64;
    let filler = "lorem ipsum dolor sit amet, consectetur adipiscing elit sed do eiusmod tempor";
    while written < bytes {
        let line = format!("{n:010} {}\n", &filler[..(n % 60 + 10) as usize]);
        out.write_all(line.as_bytes()).unwrap();
        written += line.len() as u64;
        n += 1;
    }
    n
}

fn count_lines(path: &Path) -> u64 {
    let out = Command::new("wc").arg("-l").arg(path).output().unwrap();
    String::from_utf8_lossy(&out.stdout)
        .split_whitespace()
        .next()
        .and_then(|n| n.parse().ok())
        .unwrap_or(0)
}

/// A CSV of about `bytes` bytes with quoted fields, some holding line breaks.
fn csv_file(path: &Path, bytes: u64) {
    if std::fs::metadata(path).is_ok_and(|m| m.len() >= bytes) {
        return;
    }
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    out.write_all(b"id,name,city,amount,created,note\n")
        .unwrap();
    let mut written = 0u64;
    let mut i = 0u64;
    while written < bytes {
        let note = if i.is_multiple_of(500) {
            "\"first line\nsecond line\""
        } else {
            ""
        };
        let row = format!(
            "{i},\"Name {i}, Jr\",City{},{}.{:02},2024-{:02}-{:02}T10:00:00Z,{note}\n",
            i % 977,
            i % 10_000,
            i % 100,
            i % 12 + 1,
            i % 28 + 1
        );
        out.write_all(row.as_bytes()).unwrap();
        written += row.len() as u64;
        i += 1;
    }
}

fn xlsx_file(path: &Path, rows: u32) {
    if path.exists() {
        return;
    }
    let mut book = rust_xlsxwriter::Workbook::new();
    let sheet = book.add_worksheet();
    sheet
        .write_row(0, 0, ["id", "name", "amount", "city"])
        .unwrap();
    for r in 1..=rows {
        sheet.write(r, 0, r).unwrap();
        sheet.write(r, 1, format!("name {r}")).unwrap();
        sheet.write(r, 2, f64::from(r) * 1.5).unwrap();
        sheet.write(r, 3, format!("city {}", r % 100)).unwrap();
    }
    book.save(path).unwrap();
}

/// Median wall time of `runs` runs of a command.
fn command_ms(runs: usize, make: impl Fn() -> Command) -> f64 {
    let mut times: Vec<f64> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            let out = make().output().unwrap();
            assert!(out.status.success());
            ms(t.elapsed())
        })
        .collect();
    median(&mut times)
}

async fn timed(client: &Client, tool: &str, args: Value) -> (f64, Value) {
    let t = Instant::now();
    let r = call(client, tool, args).await;
    let elapsed = ms(t.elapsed());
    assert_ne!(r.is_error, Some(true), "{tool}: {r:?}");
    let value = if tool == "read_file" {
        page(&r)
    } else {
        structured(&r).clone()
    };
    (elapsed, value)
}

async fn median_call(client: &Client, tool: &str, args: Value, runs: usize) -> f64 {
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        times.push(timed(client, tool, args.clone()).await.0);
    }
    median(&mut times)
}

fn row(what: &str, ours: f64, theirs: f64, baseline: &str) {
    println!(
        "{what:<44} {ours:>9.2} ms   {baseline:<26} {theirs:>9.2} ms   ratio {:>5.2}",
        ours / theirs
    );
}

/// A fresh `offload mcp` rooted at `dir`, with its pid and resident memory after start.
async fn fresh(ctx: &TestContext) -> (Client, u32, f64) {
    let (client, pid) = spawn(ctx).await;
    // One cheap call so everything lazy is warm before the baseline reading.
    let _ = call(&client, "list_allowed_directories", json!({})).await;
    let base = peak_rss_mb(pid);
    (client, pid, base)
}

/// Offload's own answer holds exactly the lines asked for.
fn check(page: &Value, first: u64, count: u64) {
    let text = page["content"].as_str().unwrap_or_default();
    assert_eq!(verdict(&numbered_lines(text), first, count), "right");
}

/// Offload's figures for the reads, to print beside the peer's.
struct Reads {
    cold: f64,
    indexed: f64,
    head: f64,
    tail: f64,
    rss: f64,
}

/// The same reads through desktop-commander's `read_file`, timed and checked line by line.
async fn desktop_commander(data: &Path, big: &Path, lines: u64, deep: u64, ours: &Reads) {
    println!();
    let Some(peer) = DesktopCommander::start(data).await else {
        return;
    };
    let base = peak_rss_mb(peer.pid);
    println!(
        "desktop-commander {} read_file on the same file:",
        peer.version
    );
    let deep_i = i64::try_from(deep).unwrap_or(i64::MAX);
    let asks: [(&str, i64, u64, u64, u64, f64); 4] = [
        (
            "10 lines at line {deep} (first)",
            deep_i,
            10,
            deep,
            10,
            ours.cold,
        ),
        (
            "10 lines at line {deep} (again)",
            deep_i + 7,
            10,
            deep + 7,
            10,
            ours.indexed,
        ),
        ("head 10", 0, 10, 0, 10, ours.head),
        ("tail 20", -20, 20, lines - 20, 20, ours.tail),
    ];
    for (what, offset, length, first, count, offload) in asks {
        let what = what.replace("{deep}", &deep.to_string());
        match peer.read(big, offset, length).await {
            Ok(read) => println!(
                "  {what:<34} {:>9.2} ms   offload {offload:>8.2} ms   ratio {:>7.1}   lines {}",
                read.ms,
                read.ms / offload,
                verdict(&read.lines, first, count)
            ),
            Err(e) => println!("  {what:<34} failed: {e}"),
        }
    }
    println!(
        "  RSS growth {:.1} MiB (offload {:.1} MiB)",
        peak_rss_mb(peer.pid) - base,
        ours.rss
    );
    peer.stop().await;
}

pub async fn run(gigabytes: f64, dir: Option<PathBuf>) -> anyhow::Result<()> {
    let ctx = TestContext::new();
    let data = dir.unwrap_or_else(|| std::env::temp_dir().join("offload-bench-files"));
    std::fs::create_dir_all(&data)?;
    ctx.write_config(json!({"roots": [data], "mcpServers": {}}));
    let big_bytes = (gigabytes * 1e9) as u64;
    let big = data.join(format!("text-{gigabytes}gb.txt"));
    let small = data.join("text-100mb.txt");
    let csv = data.join("table-100mb.csv");
    let xlsx = data.join("book-50000.xlsx");
    let tiny = data.join("one-kb.txt");
    println!("generating files in {} ...", data.display());
    let lines = text_file(&big, big_bytes);
    text_file(&small, 100_000_000);
    csv_file(&csv, 100_000_000);
    xlsx_file(&xlsx, 50_000);
    std::fs::write(&tiny, "x".repeat(1023) + "\n")?;
    // Warm the page cache so both sides read from memory.
    for f in [&big, &small, &csv] {
        count_lines(f);
    }
    let deep = 5_000_000u64.min(lines / 2);
    let big_s = big.to_string_lossy().to_string();
    println!(
        "\n{} ({:.2} GB, {lines} lines), page cache warm; medians of 20 runs unless noted\n",
        big.display(),
        big_bytes as f64 / 1e9
    );

    let (client, pid, base_rss) = fresh(&ctx).await;
    // Cold index: the first deep read on a fresh process.
    let (cold, page) = timed(
        &client,
        "read_file",
        json!({"path": big_s, "offset": deep, "length": 10}),
    )
    .await;
    assert_eq!(page["offset"], deep);
    check(&page, deep, 10);
    let indexed = median_call(
        &client,
        "read_file",
        json!({"path": big_s, "offset": deep + 7, "length": 10}),
        20,
    )
    .await;
    let sed = command_ms(5, || {
        let mut c = Command::new("sed");
        c.arg("-n")
            .arg(format!("{},{}p;{}q", deep + 1, deep + 10, deep + 10))
            .arg(&big);
        c
    });
    row(
        &format!("read_file 10 lines at line {deep} (cold)"),
        cold,
        sed,
        "sed -n (quits after)",
    );
    row(
        &format!("read_file 10 lines at line {deep} (indexed)"),
        indexed,
        sed,
        "sed -n (quits after)",
    );
    let (_, page) = timed(&client, "read_file", json!({"path": big_s, "length": 10})).await;
    check(&page, 0, 10);
    let (_, page) = timed(&client, "read_file", json!({"path": big_s, "offset": -20})).await;
    check(&page, lines - 20, 20);
    let head = median_call(
        &client,
        "read_file",
        json!({"path": big_s, "length": 10}),
        20,
    )
    .await;
    let head_cmd = command_ms(20, || {
        let mut c = Command::new("head");
        c.arg("-n").arg("10").arg(&big);
        c
    });
    row("read_file head 10", head, head_cmd, "head -n 10");
    let tail = median_call(
        &client,
        "read_file",
        json!({"path": big_s, "offset": -20}),
        20,
    )
    .await;
    let tail_cmd = command_ms(20, || {
        let mut c = Command::new("tail");
        c.arg("-n").arg("20").arg(&big);
        c
    });
    row("read_file tail 20", tail, tail_cmd, "tail -n 20");
    let rss_reads = peak_rss_mb(pid) - base_rss;
    client.cancel().await?;
    let ours = Reads {
        cold,
        indexed,
        head,
        tail,
        rss: rss_reads,
    };
    desktop_commander(&data, &big, lines, deep, &ours).await;

    let (client, pid, base_rss) = fresh(&ctx).await;
    let (summary_ms, summary) = timed(&client, "summarize_file", json!({"path": big_s})).await;
    let counted = summary["line_count"].as_u64().unwrap_or_default();
    let exact = summary["line_count_exact"] == true;
    if exact {
        assert_eq!(counted, lines);
    }
    let wc = command_ms(3, || {
        let mut c = Command::new("wc");
        c.arg("-l").arg(&big);
        c
    });
    let what = if exact {
        "summarize_file (exact line count)"
    } else {
        "summarize_file (line count estimated)"
    };
    row(what, summary_ms, wc, "wc -l (exact)");
    if !exact {
        println!(
            "    counted exactly up to 4 GiB, estimated {counted} lines for {lines}: off by {} ({:.7}%)",
            counted.abs_diff(lines),
            counted.abs_diff(lines) as f64 * 100.0 / lines as f64
        );
    }
    let rss_summary = peak_rss_mb(pid) - base_rss;
    client.cancel().await?;

    let (client, pid, base_rss) = fresh(&ctx).await;
    let (big_schema_ms, _) = timed(&client, "get_file_schema", json!({"path": big_s})).await;
    let rss_big_schema = peak_rss_mb(pid) - base_rss;
    client.cancel().await?;

    let (client, pid, base_rss) = fresh(&ctx).await;
    let csv_s = csv.to_string_lossy().to_string();
    let (schema_ms, schema) = timed(&client, "get_file_schema", json!({"path": csv_s})).await;
    let rss_schema = peak_rss_mb(pid) - base_rss;
    let wc_csv = command_ms(5, || {
        let mut c = Command::new("wc");
        c.arg("-l").arg(&csv);
        c
    });
    row(
        "get_file_schema 100 MB CSV",
        schema_ms,
        wc_csv,
        "wc -l (not quote-aware)",
    );
    println!(
        "    {} rows (exact, quote-aware), types from {} sampled rows; RSS growth {rss_schema:.1} MiB",
        schema["row_count"], schema["sampled_rows"]
    );
    client.cancel().await?;

    let (client, pid, base_rss) = fresh(&ctx).await;
    let xlsx_s = xlsx.to_string_lossy().to_string();
    let (xlsx_ms, rows) = timed(
        &client,
        "read_file",
        json!({"path": xlsx_s, "length": 1000}),
    )
    .await;
    let rss_xlsx = peak_rss_mb(pid) - base_rss;
    let full_start = Instant::now();
    {
        use calamine::Reader;
        let mut book: calamine::Xlsx<_> = calamine::open_workbook(&xlsx)?;
        let name = book.sheet_names()[0].clone();
        let range = book.worksheet_range(&name)?;
        assert!(range.height() > 50_000);
    }
    let full = ms(full_start.elapsed());
    row(
        "read_file first 1000 rows of 50,000-row xlsx",
        xlsx_ms,
        full,
        "calamine whole sheet",
    );
    println!(
        "    {} rows delivered, RSS growth {rss_xlsx:.1} MiB",
        rows["count"]
    );
    let tiny_s = tiny.to_string_lossy().to_string();
    let fixed = median_call(&client, "read_file", json!({"path": tiny_s}), 500).await;
    let list = median_call(&client, "list_allowed_directories", json!({}), 500).await;
    row(
        "read_file of a 1 KB file (500 calls)",
        fixed,
        list,
        "list_allowed_directories",
    );
    client.cancel().await?;

    println!("\nmemory growth of offload mcp (peak RSS after minus before, MiB):");
    println!(
        "  reads (deep, head, tail) on {:.2} GB: {rss_reads:.1}",
        big_bytes as f64 / 1e9
    );
    println!(
        "  summarize_file on {:.2} GB:           {rss_summary:.1}",
        big_bytes as f64 / 1e9
    );
    println!(
        "  get_file_schema on {:.2} GB:          {rss_big_schema:.1} ({big_schema_ms:.0} ms)",
        big_bytes as f64 / 1e9
    );
    let small_s = small.to_string_lossy().to_string();
    let (client, pid, base_rss) = fresh(&ctx).await;
    timed(&client, "summarize_file", json!({"path": small_s})).await;
    timed(&client, "get_file_schema", json!({"path": small_s})).await;
    timed(
        &client,
        "read_file",
        json!({"path": small_s, "offset": 500_000, "length": 10}),
    )
    .await;
    println!(
        "  summarize, schema, deep read, 100 MB: {:.1}",
        peak_rss_mb(pid) - base_rss
    );
    client.cancel().await?;
    Ok(())
}
