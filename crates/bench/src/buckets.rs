//! The file tools on a 1 GB object in a local S3 bucket (SeaweedFS `weed mini`), beside the same
//! tools on a local copy, and beside cloud-fs (`@nogoo9/mcp-server-cloud-fs` from npm, pointed at
//! the same bucket with `--endpoint`), all driven by the same MCP client in one run. Every request
//! to the bucket goes through a counting proxy, so the bytes each call fetched from the store are
//! measured, not estimated.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, WriteMultipart};
use offload_testkit::s3::{ACCESS_KEY, BUCKET, SECRET_KEY, Weed};
use offload_testkit::{Client, Recorder, TestContext, call};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::TokioChildProcess;
use serde_json::{Value, json};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

use crate::offload::{peak_rss_mb, spawn};
use crate::stats::median;

/// Measured calls per tool (after one warm-up).
const RUNS: usize = 5;

/// A TCP proxy in front of the S3 endpoint that counts the bytes the store sends back.
struct Counter {
    endpoint: String,
    received: Arc<AtomicU64>,
}

async fn counting_proxy(upstream: String) -> Counter {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let endpoint = format!("http://{}", listener.local_addr().unwrap());
    let received = Arc::new(AtomicU64::new(0));
    let counted = received.clone();
    tokio::spawn(async move {
        while let Ok((client, _)) = listener.accept().await {
            let upstream = upstream.clone();
            let counted = counted.clone();
            tokio::spawn(async move {
                let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else {
                    return;
                };
                let (mut cr, mut cw) = client.into_split();
                let (mut sr, mut sw) = server.into_split();
                let up = async {
                    let _ = tokio::io::copy(&mut cr, &mut sw).await;
                    let _ = sw.shutdown().await;
                };
                let down = async {
                    let mut buf = vec![0u8; 64 << 10];
                    loop {
                        let n = match sr.read(&mut buf).await {
                            Ok(0) | Err(_) => break,
                            Ok(n) => n,
                        };
                        counted.fetch_add(n as u64, Ordering::Relaxed);
                        if cw.write_all(&buf[..n]).await.is_err() {
                            break;
                        }
                    }
                    let _ = cw.shutdown().await;
                };
                tokio::join!(up, down);
            });
        }
    });
    Counter { endpoint, received }
}

/// Uploads `file` as `key` unless an object of the same size is there.
async fn upload(store: &Arc<dyn ObjectStore>, key: &Key, file: &Path) {
    let size = std::fs::metadata(file).unwrap().len();
    if store.head(key).await.is_ok_and(|m| m.size == size) {
        return;
    }
    let upload = store.put_multipart(key).await.unwrap();
    let mut writer = WriteMultipart::new_with_chunk_size(upload, 16 << 20);
    let mut input = tokio::fs::File::open(file).await.unwrap();
    let mut buf = vec![0u8; 16 << 20];
    loop {
        let mut filled = 0;
        while filled < buf.len() {
            let n = input.read(&mut buf[filled..]).await.unwrap();
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            break;
        }
        writer.wait_for_capacity(4).await.unwrap();
        writer.write(&buf[..filled]);
        if filled < buf.len() {
            break;
        }
    }
    writer.finish().await.unwrap();
}

/// One call's figure: time, bytes fetched from the store, and whether the answer was right.
#[derive(Clone)]
struct Figure {
    ms: f64,
    fetched: u64,
    note: String,
}

/// The same calls to two kinds of server: what each tool is called and with which arguments.
struct Calls {
    summary: (&'static str, Value),
    head: (&'static str, Value),
    tail: (&'static str, Value),
    deep: (&'static str, Value),
}

async fn measure(
    client: &Client,
    (tool, args): &(&'static str, Value),
    counter: Option<&Counter>,
    check: &dyn Fn(&str) -> bool,
) -> Figure {
    let mut times = Vec::new();
    let mut fetched = Vec::new();
    let mut note = String::new();
    for run in 0..=RUNS {
        let before = counter.map_or(0, |c| c.received.load(Ordering::Relaxed));
        let mut params = CallToolRequestParams::new(*tool);
        params.arguments = args.as_object().cloned();
        let t = Instant::now();
        let answer = tokio::time::timeout(Duration::from_secs(300), client.call_tool(params)).await;
        let took = t.elapsed().as_secs_f64() * 1e3;
        let after = counter.map_or(0, |c| c.received.load(Ordering::Relaxed));
        let text = match answer {
            Err(_) => Err("no answer within 300 s".to_owned()),
            Ok(Err(e)) => Err(e.to_string()),
            Ok(Ok(r)) => {
                let text: String = r
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                    .collect::<Vec<_>>()
                    .join("\n");
                let structured = r
                    .structured_content
                    .as_ref()
                    .map(Value::to_string)
                    .unwrap_or_default();
                if r.is_error == Some(true) {
                    Err(text.chars().take(160).collect())
                } else {
                    Ok(format!("{text}\n{structured}"))
                }
            }
        };
        match text {
            Err(e) => {
                return Figure {
                    ms: took,
                    fetched: after - before,
                    note: format!("failed: {e}"),
                };
            }
            Ok(t) if !check(&t) && note.is_empty() => note = "WRONG answer".into(),
            Ok(_) => {}
        }
        if run > 0 {
            times.push(took);
            fetched.push((after - before) as f64);
        }
    }
    Figure {
        ms: median(&mut times),
        fetched: median(&mut fetched) as u64,
        note,
    }
}

fn line(n: u64) -> String {
    format!("{n:010} ")
}

async fn cloud_fs(endpoint: &str, prefix: &str) -> Option<(Client, u32, String)> {
    let dir = std::env::var_os("HOME")
        .map(PathBuf::from)?
        .join(".cache/offload/cloud-fs/node_modules/@nogoo9/mcp-server-cloud-fs");
    let entry = dir.join("dist/index.js");
    if !entry.exists() {
        println!("cloud-fs: not installed (scripts/bench.sh installs it from npm); skipped");
        return None;
    }
    let version = std::fs::read_to_string(dir.join("package.json"))
        .ok()
        .and_then(|t| serde_json::from_str::<Value>(&t).ok())
        .and_then(|m| m["version"].as_str().map(str::to_owned))
        .unwrap_or_default();
    let mut cmd = tokio::process::Command::new("node");
    cmd.arg(&entry)
        .args([
            "s3",
            &format!("s3://{BUCKET}/{prefix}"),
            "--endpoint",
            endpoint,
        ])
        .args(["--region", "us-east-1", "--no-cache"])
        .env("AWS_ACCESS_KEY_ID", ACCESS_KEY)
        .env("AWS_SECRET_ACCESS_KEY", SECRET_KEY)
        .env("AWS_REGION", "us-east-1");
    let (transport, _) = TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .ok()?;
    let pid = transport.id()?;
    let client = tokio::time::timeout(
        Duration::from_secs(60),
        Recorder::default().serve(transport),
    )
    .await
    .ok()?
    .ok()?;
    Some((client, pid, version))
}

pub async fn run(gigabytes: f64, dir: Option<PathBuf>) -> anyhow::Result<()> {
    let weed = tokio::task::spawn_blocking(Weed::shared).await?;
    let counter = counting_proxy(weed.endpoint.trim_start_matches("http://").to_owned()).await;
    let data_dir = dir.unwrap_or_else(|| std::env::temp_dir().join("offload-bench-buckets"));
    // The size asked for, and 100 MB: a size the peer can answer at all.
    for (i, gb) in [gigabytes, 0.1].into_iter().enumerate() {
        if i > 0 {
            println!();
        }
        let dir = data_dir.join(format!("{gb}gb"));
        std::fs::create_dir_all(&dir)?;
        one(weed, &counter, &dir, gb, &format!("bench-{gb}gb")).await?;
    }
    Ok(())
}

async fn one(
    weed: &Weed,
    counter: &Counter,
    data_dir: &Path,
    gigabytes: f64,
    prefix: &str,
) -> anyhow::Result<()> {
    let local = data_dir.join("big.log");
    let bytes = (gigabytes * 1e9) as u64;
    let lines = crate::files::text_file(&local, bytes);
    let size = std::fs::metadata(&local)?.len();
    let t = Instant::now();
    upload(
        &weed.store(),
        &Key::from(format!("{prefix}/big.log")),
        &local,
    )
    .await;
    println!(
        "a {:.2} GB text object ({lines} lines) in a local SeaweedFS bucket (uploaded in {:.1} s); every store request through a counting proxy; median of {RUNS} calls after one",
        size as f64 / 1e9,
        t.elapsed().as_secs_f64()
    );

    let ctx = TestContext::new();
    let mut root = weed.root(prefix, false);
    root["endpoint"] = json!(counter.endpoint);
    ctx.write_config(json!({"roots": [data_dir, root], "mcpServers": {}}));
    let (offload, pid) = spawn(&ctx).await;
    let object = format!("s3://{BUCKET}/{prefix}/big.log");
    let deep = lines / 2;
    let offload_calls = |path: &str| Calls {
        summary: ("summarize_file", json!({"path": path, "max_lines": 20})),
        head: (
            "read_file",
            json!({"path": path, "offset": 0, "length": 20}),
        ),
        tail: ("read_file", json!({"path": path, "offset": -20})),
        deep: (
            "read_file",
            json!({"path": path, "offset": deep, "length": 5}),
        ),
    };
    let first_line = line(0);
    let last_line = line(lines - 1);
    let deep_line = line(deep);
    let has_first = |t: &str| t.contains(&first_line);
    let has_last = |t: &str| t.contains(&last_line);
    let has_deep = |t: &str| t.contains(&deep_line);
    let exact = format!("{lines}");
    let has_count = |t: &str| t.contains(&exact) && t.contains(&first_line);

    // The first summary counts the object's lines exactly: the one call that reads it whole.
    let calls = offload_calls(&object);
    let before = counter.received.load(Ordering::Relaxed);
    let t = Instant::now();
    let first = call(&offload, "summarize_file", calls.summary.1.clone()).await;
    let first_ms = t.elapsed().as_secs_f64() * 1e3;
    let first_fetched = counter.received.load(Ordering::Relaxed) - before;
    let first_ok = first.is_error != Some(true);
    let rss_after_count = peak_rss_mb(pid);
    let bucket = [
        measure(&offload, &calls.summary, Some(counter), &has_count).await,
        measure(&offload, &calls.head, Some(counter), &has_first).await,
        measure(&offload, &calls.tail, Some(counter), &has_last).await,
        measure(&offload, &calls.deep, Some(counter), &has_deep).await,
    ];
    let rss = peak_rss_mb(pid);
    let local_calls = offload_calls(&local.display().to_string());
    let on_disk = [
        measure(&offload, &local_calls.summary, None, &has_count).await,
        measure(&offload, &local_calls.head, None, &has_first).await,
        measure(&offload, &local_calls.tail, None, &has_last).await,
        measure(&offload, &local_calls.deep, None, &has_deep).await,
    ];
    let _ = offload.cancel().await;

    let peer = match cloud_fs(&counter.endpoint, prefix).await {
        Some((client, peer_pid, version)) => {
            let calls = Calls {
                summary: (
                    "summarize_file",
                    json!({"path": "big.log", "max_lines": 20}),
                ),
                head: ("read_text_file", json!({"path": "big.log", "head": 20})),
                tail: ("read_text_file", json!({"path": "big.log", "tail": 20})),
                deep: (
                    "read_file_range",
                    json!({"path": "big.log", "offset": deep + 1, "limit": 5}),
                ),
            };
            let figures = [
                measure(&client, &calls.summary, Some(counter), &has_first).await,
                measure(&client, &calls.head, Some(counter), &has_first).await,
                measure(&client, &calls.tail, Some(counter), &has_last).await,
                measure(&client, &calls.deep, Some(counter), &has_deep).await,
            ];
            let peer_rss = peak_rss_mb(peer_pid);
            let _ = client.cancel().await;
            Some((figures, peer_rss, version))
        }
        None => None,
    };

    println!(
        "first summarize_file (exact line count): {first_ms:.0} ms, {:.1} MB fetched{}",
        first_fetched as f64 / 1e6,
        if first_ok { "" } else { " (FAILED)" }
    );
    let peer_title = peer
        .as_ref()
        .map_or("cloud-fs (skipped)".to_owned(), |(_, _, v)| {
            format!("cloud-fs {v}")
        });
    println!(
        "{:<10} {:>24} {:>14} {:>28}",
        "", "Offload on the object", "Offload, local", peer_title
    );
    let cell = |f: &Figure| {
        let mut c = format!("{:.1} ms {:>8}", f.ms, human(f.fetched));
        if !f.note.is_empty() {
            c = format!("{} ({})", c, f.note.chars().take(60).collect::<String>());
        }
        c
    };
    for (i, name) in ["summary", "head", "tail", "deep"].iter().enumerate() {
        let theirs = peer
            .as_ref()
            .map_or("-".to_owned(), |(figures, _, _)| cell(&figures[i]));
        println!(
            "{name:<10} {:>24} {:>11.1} ms {:>28}",
            cell(&bucket[i]),
            on_disk[i].ms,
            theirs
        );
    }
    println!(
        "peak RSS: offload mcp {rss_after_count:.0} MiB after the exact count, {rss:.0} MiB after every bucket call{}",
        peer.as_ref()
            .map_or(String::new(), |(_, r, _)| format!("; cloud-fs {r:.0} MiB"))
    );
    Ok(())
}

fn human(bytes: u64) -> String {
    if bytes >= 1 << 20 {
        format!("{:.1} MB", bytes as f64 / 1e6)
    } else {
        format!("{:.0} KB", bytes as f64 / 1e3)
    }
}
