//! Load: concurrent MCP clients each making a mix of calls (echo, store, file-content, file
//! tools) through `offload mcp`, every answer checked against what was asked, beside the same
//! number of clients calling the fixture's echo directly. Run twice: each client with its own
//! embedded engine, and all clients through one host (`offload serve`, the app's engine without
//! a window).

use std::path::Path;
use std::time::{Duration, Instant};

use offload_testkit::{Client, TestContext, call, connect, target_bin};
use serde_json::{Value, json};

use crate::offload::{as_users, peak_rss_mb};
use crate::stats::{ms, summarize};

const KINDS: [&str; 4] = ["echo", "store", "file-content", "file-tools"];

/// One client's calls: latencies per kind, and the answers that were wrong.
pub struct Outcome {
    pub samples: Vec<(usize, Duration)>,
    pub wrong: Vec<String>,
    /// Still connected, so the server's memory can be read before it exits.
    pub client: Option<Client>,
}

impl Outcome {
    pub fn new(calls: usize) -> Self {
        Self {
            samples: Vec::with_capacity(calls),
            wrong: Vec::new(),
            client: None,
        }
    }
}

/// The 100-row CSV the mixed calls read and send.
pub fn write_rows(ctx: &TestContext) -> std::io::Result<std::path::PathBuf> {
    let csv = ctx.root.join("rows.csv");
    let mut text = String::from("id,name\n");
    for i in 0..100 {
        text.push_str(&format!("{i},name {i}\n"));
    }
    std::fs::write(&csv, text)?;
    Ok(csv)
}

async fn one_client(client: Client, id: usize, calls: usize, csv: &Path) -> Outcome {
    let mut out = Outcome::new(calls);
    let csv = csv.display().to_string();
    for n in 0..calls {
        let token = format!("client-{id}-call-{n}");
        let kind = n % KINDS.len();
        let start = Instant::now();
        let problem = match kind {
            0 => {
                let r = call(
                    &client,
                    "call_tool",
                    json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": token}}),
                )
                .await;
                (text(&r) != token).then(|| format!("echo answered {:?}", text(&r)))
            }
            1 => {
                let r = call(&client, "call_tool_and_store", json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": token}, "file_format": "txt"})).await;
                let path = r
                    .structured_content
                    .as_ref()
                    .and_then(|s| s["path"].as_str())
                    .unwrap_or_default()
                    .to_owned();
                match std::fs::read_to_string(&path) {
                    Ok(stored) if stored.contains(&token) => None,
                    Ok(stored) => Some(format!("stored {stored:?} for {token}")),
                    Err(e) => Some(format!("store: {e}: {}", text(&r))),
                }
            }
            2 => {
                let r = call(&client, "call_tool_with_file_content", json!({"server": "fx", "tool_name": "received", "file_path": csv, "data_key": "rows", "tool_args": {"tag": token}})).await;
                let s = r.structured_content.clone().unwrap_or(Value::Null);
                (s["rows"] != 100 || s["last"]["id"] != 99)
                    .then(|| format!("file-content answered {s}"))
            }
            _ => {
                let offset = (n / KINDS.len()) % 90;
                let r = call(
                    &client,
                    "read_file",
                    json!({"path": csv, "offset": offset + 1, "length": 1}),
                )
                .await;
                let want = format!("{offset},name {offset}");
                (!text(&r).contains(&want))
                    .then(|| format!("read_file answered {:?}, not {want}", text(&r)))
            }
        };
        out.samples.push((kind, start.elapsed()));
        if let Some(p) = problem {
            out.wrong.push(format!("client {id} call {n}: {p}"));
        }
    }
    out.client = Some(client);
    out
}

pub async fn close(outcomes: &mut [Outcome]) {
    for o in outcomes {
        if let Some(c) = o.client.take() {
            let _ = c.cancel().await;
        }
    }
}

fn text(r: &rmcp::model::CallToolResult) -> String {
    offload_testkit::text(r)
}

pub async fn run_clients(
    clients: Vec<Client>,
    calls: usize,
    csv: &Path,
) -> (Duration, Vec<Outcome>) {
    let csv = csv.to_owned();
    spawn_each(clients, move |id, c| {
        let csv = csv.clone();
        async move { one_client(c, id, calls, &csv).await }
    })
    .await
}

/// Runs `work` for every client at once (each on a task of its own, given its index) and waits
/// for all: the time it took and each client's outcome, in order.
pub async fn spawn_each<F, Fut>(clients: Vec<Client>, work: F) -> (Duration, Vec<Outcome>)
where
    F: Fn(usize, Client) -> Fut,
    Fut: Future<Output = Outcome> + Send + 'static,
{
    let start = Instant::now();
    let tasks: Vec<_> = clients
        .into_iter()
        .enumerate()
        .map(|(id, c)| tokio::spawn(work(id, c)))
        .collect();
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(t.await.expect("client task"));
    }
    (start.elapsed(), outcomes)
}

/// Prints a run's figures (overall and per kind of call, and what went wrong); its throughput
/// (calls/s) and p99.
pub fn report(label: &str, took: Duration, outcomes: &[Outcome], rss: &str) -> (f64, Duration) {
    let calls: usize = outcomes.iter().map(|o| o.samples.len()).sum();
    let wrong: Vec<&String> = outcomes.iter().flat_map(|o| &o.wrong).collect();
    let mut all: Vec<Duration> = outcomes
        .iter()
        .flat_map(|o| o.samples.iter().map(|s| s.1))
        .collect();
    let s = summarize(&mut all);
    println!(
        "{label}: {calls} calls in {:.2} s ({:.0}/s), {} lost or wrong, p50 {}, p99 {}; {rss}",
        took.as_secs_f64(),
        calls as f64 / took.as_secs_f64(),
        wrong.len(),
        ms(s.median),
        ms(s.p99)
    );
    for (k, name) in KINDS.iter().enumerate() {
        let mut kind: Vec<Duration> = outcomes
            .iter()
            .flat_map(|o| o.samples.iter().filter(|s| s.0 == k).map(|s| s.1))
            .collect();
        if !kind.is_empty() {
            let s = summarize(&mut kind);
            println!(
                "    {name:<13} p50 {:>10}  p99 {:>10}",
                ms(s.median),
                ms(s.p99)
            );
        }
    }
    for w in wrong.iter().take(5) {
        println!("    WRONG: {w}");
    }
    (calls as f64 / took.as_secs_f64(), s.p99)
}

pub async fn run(clients: usize, calls: usize) -> anyhow::Result<()> {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));
    let csv = write_rows(&ctx)?;
    println!(
        "{clients} clients x {calls} calls each, mixed: echo, call_tool_and_store, call_tool_with_file_content, read_file (every answer checked)"
    );

    // Baseline: the same number of clients calling the fixture's echo directly.
    let mut direct = Vec::new();
    for _ in 0..clients {
        direct.push(connect(tokio::process::Command::new(target_bin("offload-fixture"))).await);
    }
    let start = Instant::now();
    let tasks: Vec<_> = direct
        .into_iter()
        .map(|c| {
            tokio::spawn(async move {
                let mut samples = Vec::with_capacity(calls);
                for n in 0..calls {
                    let t = Instant::now();
                    let r = call(&c, "echo", json!({"text": n.to_string()})).await;
                    assert_eq!(offload_testkit::text(&r), n.to_string());
                    samples.push((0, t.elapsed()));
                }
                Outcome {
                    samples,
                    wrong: Vec::new(),
                    client: Some(c),
                }
            })
        })
        .collect();
    let mut outcomes = Vec::new();
    for t in tasks {
        outcomes.push(t.await?);
    }
    report(
        "baseline, echo straight to the fixture",
        start.elapsed(),
        &outcomes,
        "",
    );
    close(&mut outcomes).await;

    // Each client with its own embedded engine.
    let mut embedded = Vec::new();
    let mut pids = Vec::new();
    for _ in 0..clients {
        let (c, pid) = crate::offload::spawn(&ctx).await;
        embedded.push(c);
        pids.push(pid);
    }
    let (took, mut outcomes) = run_clients(embedded, calls, &csv).await;
    let rss: Vec<f64> = pids.iter().map(|p| peak_rss_mb(*p)).collect();
    let max = rss.iter().copied().fold(0.0, f64::max);
    report(
        "embedded (one offload mcp per client)",
        took,
        &outcomes,
        &format!("peak RSS per process up to {max:.1} MiB"),
    );
    close(&mut outcomes).await;

    // All clients through one host.
    let mut host_cmd = as_users(ctx.host_command());
    host_cmd.stderr(std::process::Stdio::null());
    let mut host = ctx.host_from(host_cmd).await;
    let host_pid = host.child.id().unwrap_or_default();
    let label = "through one host (offload serve, the app's engine)";
    through_host(&ctx, clients, calls, &csv, label, ("host", host_pid)).await;
    let _ = host.child.kill().await;

    // All clients through the desktop app, which needs a display (`scripts/bench.sh load` gives
    // it a virtual one).
    if std::env::var_os("DISPLAY").is_none() {
        println!("  through the desktop app: skipped (no display; scripts/bench.sh load has one)");
        return Ok(());
    }
    let (app, _) = crate::app::start(&ctx, crate::app::app_command(&ctx)).await;
    let app_pid = app.id().unwrap_or_default();
    let label = "through the desktop app (offload-app process)";
    through_host(&ctx, clients, calls, &csv, label, ("app", app_pid)).await;
    crate::app::stop(app).await;
    Ok(())
}

/// Runs the clients as `offload mcp` shims of the host listening on the context's socket and
/// reports them with the host's peak memory (`(name, pid)`).
async fn through_host(
    ctx: &TestContext,
    clients: usize,
    calls: usize,
    csv: &Path,
    label: &str,
    (host, pid): (&str, u32),
) {
    let mut hosted = Vec::new();
    for _ in 0..clients {
        hosted.push(connect(as_users(ctx.offload_command(&["--mode", "app"]))).await);
    }
    let (took, mut outcomes) = run_clients(hosted, calls, csv).await;
    let memory = format!("{host} peak RSS {:.1} MiB", peak_rss_mb(pid));
    report(label, took, &outcomes, &memory);
    close(&mut outcomes).await;
}
