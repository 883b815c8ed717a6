//! The desktop app as host: cold start to a socket that accepts, idle memory, and a client
//! session and calls through `offload mcp` → app, each beside `offload serve` (the same engine
//! without a window) or the embedded engine, measured in the same run. Needs a display: run it
//! under `xvfb-run -a dbus-run-session` (scripts/bench.sh does).

use std::time::{Duration, Instant};

use offload_testkit::{TestContext, connect, target_bin};
use serde_json::json;

use crate::latency::{echo_direct, echo_proxied, session_starts};
use crate::offload::as_users;
use crate::stats::{header, row, summarize};

const STARTS: usize = 10;

pub(crate) fn app_command(ctx: &TestContext) -> tokio::process::Command {
    let mut cmd = tokio::process::Command::new(target_bin("offload-app"));
    cmd.kill_on_drop(true)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    ctx.isolate(&mut cmd);
    as_users(cmd)
}

fn serve_command(ctx: &TestContext) -> tokio::process::Command {
    let mut cmd = as_users(ctx.host_command());
    cmd.stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null());
    cmd
}

/// Process start → the socket accepts a connection.
pub(crate) async fn start(
    ctx: &TestContext,
    mut cmd: tokio::process::Command,
) -> (tokio::process::Child, Duration) {
    let socket = ctx.socket();
    let _ = std::fs::remove_file(&socket);
    let t = Instant::now();
    let child = cmd.spawn().expect("spawn host");
    loop {
        if tokio::net::UnixStream::connect(&socket).await.is_ok() {
            return (child, t.elapsed());
        }
        assert!(
            t.elapsed() < Duration::from_secs(30),
            "the host did not listen"
        );
        tokio::time::sleep(Duration::from_millis(2)).await;
    }
}

pub(crate) async fn stop(mut child: tokio::process::Child) {
    let _ = child.kill().await;
    // The webview's helper processes go with their parent.
    tokio::time::sleep(Duration::from_millis(200)).await;
}

/// Resident memory of `pid` and all its descendants, in MiB (Linux).
fn tree_rss_mb(pid: u32) -> (f64, f64) {
    let mut parents = Vec::new();
    for entry in std::fs::read_dir("/proc").into_iter().flatten().flatten() {
        let Some(p) = entry
            .file_name()
            .to_str()
            .and_then(|s| s.parse::<u32>().ok())
        else {
            continue;
        };
        let stat = std::fs::read_to_string(entry.path().join("stat")).unwrap_or_default();
        // The parent pid is the second field after the command's closing parenthesis.
        let ppid = stat
            .rsplit_once(')')
            .and_then(|(_, rest)| rest.split_whitespace().nth(1))
            .and_then(|s| s.parse::<u32>().ok());
        if let Some(ppid) = ppid {
            parents.push((p, ppid));
        }
    }
    let mut tree = vec![pid];
    let mut i = 0;
    while i < tree.len() {
        let parent = tree[i];
        tree.extend(
            parents
                .iter()
                .filter(|(_, pp)| *pp == parent)
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    let rss = |p: u32| {
        std::fs::read_to_string(format!("/proc/{p}/status"))
            .unwrap_or_default()
            .lines()
            .find_map(|l| l.strip_prefix("VmRSS:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<f64>().ok())
            .map_or(0.0, |kb| kb / 1024.0)
    };
    (rss(pid), tree.iter().map(|p| rss(*p)).sum())
}

pub async fn run(calls: usize) -> anyhow::Result<()> {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));

    // Cold start, alternating app and `offload serve`.
    let mut app_starts = Vec::with_capacity(STARTS);
    let mut serve_starts = Vec::with_capacity(STARTS);
    for _ in 0..STARTS {
        let (child, took) = start(&ctx, app_command(&ctx)).await;
        app_starts.push(took);
        stop(child).await;
        let (child, took) = start(&ctx, serve_command(&ctx)).await;
        serve_starts.push(took);
        stop(child).await;
    }
    let a = summarize(&mut app_starts);
    let s = summarize(&mut serve_starts);
    println!("cold start to socket accepting, {STARTS} starts each (release build, Xvfb)");
    println!("{}", header("app", "offload serve"));
    println!("{}", row("median", a.median, s.median));
    println!("{}", row("slowest", a.p99, s.p99));

    // Idle memory after 3 s.
    let (serve, _) = start(&ctx, serve_command(&ctx)).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let serve_rss = tree_rss_mb(serve.id().unwrap_or(0)).0;
    stop(serve).await;
    let (app, _) = start(&ctx, app_command(&ctx)).await;
    tokio::time::sleep(Duration::from_secs(3)).await;
    let (app_rss, app_tree_rss) = tree_rss_mb(app.id().unwrap_or(0));
    println!();
    println!("idle resident memory after 3 s (MiB)");
    println!(
        "  app process {app_rss:.1}, with its webview processes {app_tree_rss:.1}; offload serve {serve_rss:.1}"
    );

    // A client session through the app, beside an embedded one.
    let (sa, se) = session_starts(&ctx, 30).await?;
    println!();
    println!("offload mcp start + initialize, 30 starts each");
    println!("{}", header("via app", "embedded"));
    println!("{}", row("median", sa.median, se.median));

    // Calls through the app, beside the embedded engine and the direct call.
    let hosted = connect(as_users(ctx.offload_command(&["--mode", "app"]))).await;
    let proxied = connect(as_users(ctx.offload_command(&["--mode", "embedded"]))).await;
    let direct = connect(tokio::process::Command::new(target_bin("offload-fixture"))).await;
    for _ in 0..200 {
        echo_proxied(&hosted).await;
        echo_proxied(&proxied).await;
        echo_direct(&direct).await;
    }
    let (mut h, mut p, mut d) = (Vec::new(), Vec::new(), Vec::new());
    for _ in 0..calls {
        h.push(echo_proxied(&hosted).await);
        p.push(echo_proxied(&proxied).await);
        d.push(echo_direct(&direct).await);
    }
    let (h, p, d) = (summarize(&mut h), summarize(&mut p), summarize(&mut d));
    println!();
    println!("call_tool -> fixture echo, {calls} calls each, alternating");
    println!("{}", header("via app", "embedded"));
    println!("{}", row("median", h.median, p.median));
    println!("{}", row("p99", h.p99, p.p99));
    println!("{}", header("via app", "direct"));
    println!("{}", row("median", h.median, d.median));

    let met = a.median < Duration::from_millis(1500)
        && app_tree_rss < 150.0
        && sa.median < Duration::from_millis(50)
        && h.median.saturating_sub(d.median) <= Duration::from_micros(500);
    println!();
    println!(
        "targets (cold start < 1.5 s; idle RSS < 150 MiB with webview processes; start + initialize via app < 50 ms; added latency via app <= 0.5 ms median over direct): {}",
        if met { "met" } else { "NOT met" }
    );
    hosted.cancel().await?;
    proxied.cancel().await?;
    direct.cancel().await?;
    stop(app).await;
    Ok(())
}
