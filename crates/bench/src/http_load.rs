//! Serving over HTTP under load: concurrent streamable-HTTP clients (rmcp's client, each with
//! its own session) against `offload serve --http` with an access token — the load bench's
//! mixed checked calls, and echo alone beside the published gateways serving the same fixture
//! upstream to the same client load: mcp-proxy (PyPI, named-server mode, streamable HTTP) and
//! mcp-hub (npm), and beside Offload's own stdio path (`offload mcp` through one host) for the
//! HTTP overhead.
//!
//! mcp-hub 4.2.1 (the newest) serves its unified endpoint only over MCP's legacy HTTP+SSE
//! transport, so its clients are the same rmcp client over [`SseClientTransport`]: the same
//! calls and checks, carried the only way that peer offers.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use offload_testkit::{Client, Recorder, TestContext, call, connect};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

use crate::load::{Outcome, close, report, run_clients, spawn_each, write_rows};
use crate::offload::{as_users, cpu_secs, peak_rss_mb};
use crate::sse::SseClientTransport;

/// An rmcp streamable-HTTP client of `url`, sending `token` when given.
async fn http_client(url: &str, token: Option<&str>) -> Client {
    let mut config = StreamableHttpClientTransportConfig::with_uri(url.to_owned());
    if let Some(t) = token {
        config = config.auth_header(t.to_owned());
    }
    Recorder::default()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .expect("MCP handshake over HTTP")
}

/// An rmcp client of an MCP HTTP+SSE endpoint (2024-11-05).
async fn sse_client(url: &str) -> anyhow::Result<Client> {
    Ok(Recorder::default()
        .serve(SseClientTransport::connect(url).await?)
        .await?)
}

/// Which tool a client calls to echo.
enum Echo {
    /// Offload's `call_tool` with the fixture's echo.
    ThroughCallTool,
    /// The tool under the name the peer lists it.
    Named(String),
}

/// Each client calls echo `calls` times with its own text and checks the answer.
async fn echo_clients(clients: Vec<Client>, calls: usize, echo: Echo) -> (Duration, Vec<Outcome>) {
    let echo = std::sync::Arc::new(echo);
    spawn_each(clients, move |id, c| {
        let echo = echo.clone();
        async move {
            let mut out = Outcome::new(calls);
            for n in 0..calls {
                let text = format!("client-{id}-call-{n}");
                let t = Instant::now();
                let r = match &*echo {
                    Echo::ThroughCallTool => call(
                        &c,
                        "call_tool",
                        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": text}}),
                    )
                    .await,
                    Echo::Named(tool) => call(&c, tool, json!({"text": text})).await,
                };
                out.samples.push((0, t.elapsed()));
                let got = offload_testkit::text(&r);
                if got != text {
                    out.wrong
                        .push(format!("client {id} call {n}: echo answered {got:?}"));
                }
            }
            out.client = Some(c);
            out
        }
    })
    .await
}

/// One line of the echo table: who, calls/s, p99, and the gateway process's CPU time per call
/// (user + system, its own threads; not the upstream's, a process of its own).
struct Row {
    name: &'static str,
    rate: f64,
    p99: Duration,
    cpu_per_call: Option<Duration>,
}

/// Echo on `clients`, printed under `label` (with the peak RSS and CPU time of the gateway
/// process `gateway` names, after its prefix); the table's row for `name`.
async fn echo_row(
    name: &'static str,
    label: &str,
    clients: Vec<Client>,
    calls: usize,
    echo: Echo,
    gateway: Option<(&str, u32)>,
) -> Row {
    let cpu_before = gateway.map(|(_, pid)| cpu_secs(pid));
    let (took, mut outcomes) = echo_clients(clients, calls, echo).await;
    let total: usize = outcomes.iter().map(|o| o.samples.len()).sum();
    let cpu_per_call = gateway.zip(cpu_before).map(|((_, pid), before)| {
        Duration::from_secs_f64((cpu_secs(pid) - before).max(0.0) / total.max(1) as f64)
    });
    let about = gateway
        .zip(cpu_per_call)
        .map(|((prefix, pid), cpu)| {
            format!(
                "{prefix}peak RSS {:.1} MiB, CPU {} µs a call",
                peak_rss_mb(pid),
                cpu.as_micros()
            )
        })
        .unwrap_or_default();
    let (rate, p99) = report(label, took, &outcomes, &about);
    close(&mut outcomes).await;
    Row {
        name,
        rate,
        p99,
        cpu_per_call,
    }
}

/// Echo (as `echo`) by `clients` streamable-HTTP clients of the server `child` serves at
/// `url`, with its CPU per call; the server is ended after.
async fn served_row(
    name: &'static str,
    label: &str,
    (mut child, url): (tokio::process::Child, &str),
    clients: usize,
    calls: usize,
) -> Row {
    let mut connected = Vec::new();
    for _ in 0..clients {
        connected.push(http_client(url, None).await);
    }
    let pid = child.id().unwrap_or_default();
    let row = echo_row(
        name,
        label,
        connected,
        calls,
        Echo::Named("echo".into()),
        Some(("", pid)),
    )
    .await;
    let _ = child.kill().await;
    row
}

pub async fn run(
    clients: usize,
    calls: usize,
    mcp_proxy: Option<PathBuf>,
    mcp_hub: Option<PathBuf>,
) -> anyhow::Result<()> {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));
    let csv = write_rows(&ctx)?;
    println!("{clients} streamable-HTTP clients x {calls} calls each (every answer checked)");

    let token = ctx.token("bench", "read,call,store");
    let (mut host, url) = {
        // The URL is read from its log file (at the level users run it).
        let mut cmd = ctx.host_command();
        cmd.env("OFFLOAD_LOG", "info")
            .stderr(std::process::Stdio::null());
        let before = ctx.log().len();
        let child = cmd
            .args(["--http", "127.0.0.1:0"])
            .stdin(std::process::Stdio::null())
            .spawn()?;
        let mut url = None;
        for _ in 0..400 {
            if let Some(u) = ctx.log()[before..]
                .lines()
                .rev()
                .find_map(|l| l.split("serving MCP at ").nth(1))
            {
                url = Some(u.trim().to_owned());
                break;
            }
            tokio::time::sleep(Duration::from_millis(25)).await;
        }
        (child, url.expect("offload serve --http listens"))
    };
    let pid = host.id().unwrap_or_default();

    // The load bench's mixed checked calls, over HTTP.
    let mut mixed = Vec::new();
    for _ in 0..clients {
        mixed.push(http_client(&url, Some(&token)).await);
    }
    let (took, mut outcomes) = run_clients(mixed, calls, &csv).await;
    report(
        "offload serve --http, mixed (echo, store, file-content, read_file)",
        took,
        &outcomes,
        &format!("serve peak RSS {:.1} MiB", peak_rss_mb(pid)),
    );
    close(&mut outcomes).await;

    // Echo alone: Offload over HTTP and over its stdio path, then the peers.
    let mut rows = Vec::new();
    let mut over_http = Vec::new();
    for _ in 0..clients {
        over_http.push(http_client(&url, Some(&token)).await);
    }
    rows.push(
        echo_row(
            "Offload over HTTP",
            "echo: offload serve --http",
            over_http,
            calls,
            Echo::ThroughCallTool,
            Some(("serve ", pid)),
        )
        .await,
    );
    let mut over_stdio = Vec::new();
    for _ in 0..clients {
        over_stdio.push(connect(as_users(ctx.offload_command(&["--mode", "app"]))).await);
    }
    rows.push(
        echo_row(
            "Offload over stdio",
            "echo: offload mcp through the same host (stdio + local socket)",
            over_stdio,
            calls,
            Echo::ThroughCallTool,
            None,
        )
        .await,
    );
    let _ = host.kill().await;

    // The floor: no gateway, the fixture itself served by rmcp's streamable-HTTP server (what
    // Offload serves with), its echo answered in-process. CPU here is the fixture's.
    let (child, floor_url) = start_fixture_over_http().await?;
    rows.push(
        served_row(
            "rmcp's HTTP server alone",
            "echo: the fixture served by rmcp's own streamable-HTTP server (no gateway, no upstream)",
            (child, &floor_url),
            clients,
            calls,
        )
        .await,
    );
    // ... and the other half of any gateway built on rmcp: its client calling the upstream over
    // stdio, one connection shared by every caller. CPU here is this bench process's own.
    rows.push(stdio_client_row(clients, calls).await);

    match mcp_proxy {
        Some(proxy) => {
            let (child, proxy_url) = start_mcp_proxy(&proxy).await?;
            rows.push(
                served_row(
                    "mcp-proxy",
                    "echo: mcp-proxy 0.13.0 (PyPI), named server over streamable HTTP",
                    (child, &proxy_url),
                    clients,
                    calls,
                )
                .await,
            );
        }
        None => {
            println!("  mcp-proxy: skipped (pass --mcp-proxy; scripts/bench.sh http installs it)")
        }
    }
    match mcp_hub {
        Some(hub) => {
            let (mut child, hub_url, _config_dir) = start_mcp_hub(&hub).await?;
            let mut peers = Vec::new();
            for _ in 0..clients {
                peers.push(sse_client(&hub_url).await?);
            }
            // Its name for the fixture's echo (it prefixes tools with the server's name).
            let echo = peers[0]
                .list_all_tools()
                .await?
                .iter()
                .map(|t| t.name.to_string())
                .find(|n| n.ends_with("echo"))
                .ok_or_else(|| anyhow::anyhow!("mcp-hub lists no echo tool"))?;
            rows.push(
                echo_row(
                    "mcp-hub",
                    "echo: mcp-hub 4.2.1 (npm), unified endpoint over HTTP+SSE",
                    peers,
                    calls,
                    Echo::Named(echo),
                    Some(("", child.id().unwrap_or_default())),
                )
                .await,
            );
            let _ = child.kill().await;
        }
        None => println!("  mcp-hub: skipped (pass --mcp-hub; scripts/bench.sh http installs it)"),
    }
    println!(
        "\n| echo, {clients} clients x {calls} | calls/s | p99 | server CPU per call (user + system) |"
    );
    println!("|---|---|---|---|");
    for r in &rows {
        let cpu = r
            .cpu_per_call
            .map_or("—".to_owned(), |c| format!("{} µs", c.as_micros()));
        println!(
            "| {} | {:.0} | {} | {cpu} |",
            r.name,
            r.rate,
            crate::stats::ms(r.p99)
        );
    }
    let ours = rows.iter().find(|r| r.name == "Offload over HTTP");
    let peers = || {
        rows.iter()
            .filter(|r| r.name == "mcp-proxy" || r.name == "mcp-hub")
    };
    let faster = peers().max_by(|a, b| a.rate.total_cmp(&b.rate));
    let thriftier = peers()
        .filter(|r| r.cpu_per_call.is_some())
        .min_by_key(|r| r.cpu_per_call);
    if let (Some(ours), Some(peer)) = (ours, faster) {
        println!(
            "Offload over HTTP: {:.1}x the faster peer's ({}) throughput, p99 {} vs {}",
            ours.rate / peer.rate,
            peer.name,
            crate::stats::ms(ours.p99),
            crate::stats::ms(peer.p99)
        );
    }
    if let (Some(ours), Some(peer)) = (ours, thriftier)
        && let (Some(a), Some(b)) = (ours.cpu_per_call, peer.cpu_per_call)
    {
        println!(
            "Offload over HTTP: CPU per call {} µs, {:.2} of the thriftier peer's ({}, {} µs) (target <= 0.33)",
            a.as_micros(),
            a.as_secs_f64() / b.as_secs_f64(),
            peer.name,
            b.as_micros()
        );
    }
    let floor = rows
        .iter()
        .find(|r| r.name == "rmcp's HTTP server alone")
        .and_then(|r| r.cpu_per_call);
    let client = rows
        .iter()
        .find(|r| r.name == "rmcp's stdio client alone")
        .and_then(|r| r.cpu_per_call);
    if let (Some(floor), Some(client), Some(peer)) =
        (floor, client, thriftier.and_then(|p| p.cpu_per_call))
    {
        println!(
            "rmcp alone, the two halves a gateway on it runs: its HTTP server {} µs + its stdio client {} µs = {} µs a call, {:.2} of the thriftier peer's",
            floor.as_micros(),
            client.as_micros(),
            (floor + client).as_micros(),
            (floor + client).as_secs_f64() / peer.as_secs_f64()
        );
    }
    Ok(())
}

/// rmcp's stdio client alone: `tasks` callers sharing one client of the fixture, each calling
/// echo `calls` times and checking the answer; the CPU per call is this process's.
async fn stdio_client_row(tasks: usize, calls: usize) -> Row {
    let client = connect(tokio::process::Command::new(offload_testkit::target_bin(
        "offload-fixture",
    )))
    .await;
    let me = std::process::id();
    let before = cpu_secs(me);
    let start = Instant::now();
    let mut running = Vec::new();
    for id in 0..tasks {
        let peer = client.peer().clone();
        running.push(tokio::spawn(async move {
            let mut out = Outcome::new(calls);
            for n in 0..calls {
                let text = format!("caller-{id}-call-{n}");
                let mut params = rmcp::model::CallToolRequestParams::new("echo");
                params.arguments = json!({"text": text}).as_object().cloned();
                let t = Instant::now();
                let got = match peer.call_tool(params).await {
                    Ok(r) => offload_testkit::text(&r),
                    Err(e) => e.to_string(),
                };
                out.samples.push((0, t.elapsed()));
                if got != text {
                    out.wrong.push(format!("caller {id} call {n}: {got:?}"));
                }
            }
            out
        }));
    }
    let mut outcomes = Vec::new();
    for r in running {
        outcomes.push(r.await.expect("a caller panicked"));
    }
    let took = start.elapsed();
    let total: usize = outcomes.iter().map(|o| o.samples.len()).sum();
    let cpu = Duration::from_secs_f64((cpu_secs(me) - before).max(0.0) / total.max(1) as f64);
    let (rate, p99) = report(
        "echo: rmcp's client alone, to the fixture over stdio (no HTTP, no gateway)",
        took,
        &outcomes,
        &format!("the client's CPU {} µs a call", cpu.as_micros()),
    );
    let _ = client.cancel().await;
    Row {
        name: "rmcp's stdio client alone",
        rate,
        p99,
        cpu_per_call: Some(cpu),
    }
}

/// `offload-fixture --http`: the fixture behind rmcp's own streamable-HTTP server; its URL.
async fn start_fixture_over_http() -> anyhow::Result<(tokio::process::Child, String)> {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(offload_testkit::target_bin("offload-fixture"))
        .args(["--http", "127.0.0.1:0"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let stdout = child.stdout.take().expect("piped");
    let mut first = String::new();
    tokio::io::BufReader::new(stdout)
        .read_line(&mut first)
        .await?;
    let url = first
        .trim()
        .strip_prefix("listening on ")
        .ok_or_else(|| anyhow::anyhow!("offload-fixture --http said {first:?}"))?;
    Ok((child, url.to_owned()))
}

/// mcp-proxy serving the fixture as the named server `fx`; its streamable-HTTP URL.
async fn start_mcp_proxy(proxy: &Path) -> anyhow::Result<(tokio::process::Child, String)> {
    let port = offload_testkit::free_port();
    let fixture = offload_testkit::target_bin("offload-fixture");
    let child = tokio::process::Command::new(proxy)
        .args([
            "--port",
            &port.to_string(),
            "--host",
            "127.0.0.1",
            "--log-level",
            "WARNING",
        ])
        .args(["--named-server", "fx", &fixture.display().to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    for _ in 0..400 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            break;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    Ok((child, format!("http://127.0.0.1:{port}/servers/fx/mcp")))
}

/// mcp-hub serving the fixture as the server `fx`; its unified endpoint's URL (HTTP+SSE), once
/// the fixture's tools are there. The directory holds its configuration.
async fn start_mcp_hub(
    hub: &Path,
) -> anyhow::Result<(tokio::process::Child, String, tempfile::TempDir)> {
    let port = offload_testkit::free_port();
    let dir = tempfile::tempdir()?;
    let config = dir.path().join("mcp-hub.json");
    let fixture = offload_testkit::target_bin("offload-fixture");
    std::fs::write(
        &config,
        json!({"mcpServers": {"fx": {"command": fixture, "args": []}}}).to_string(),
    )?;
    let child = tokio::process::Command::new(hub)
        .args(["--port", &port.to_string(), "--config"])
        .arg(&config)
        .current_dir(dir.path())
        .env("HOME", dir.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .kill_on_drop(true)
        .spawn()?;
    let url = format!("http://127.0.0.1:{port}/mcp");
    for _ in 0..400 {
        if let Ok(c) = sse_client(&url).await {
            let ready = c
                .list_all_tools()
                .await
                .is_ok_and(|t| t.iter().any(|t| t.name.ends_with("echo")));
            let _ = c.cancel().await;
            if ready {
                return Ok((child, url, dir));
            }
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    anyhow::bail!("mcp-hub did not list the fixture's tools within 20 s")
}
