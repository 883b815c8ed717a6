//! What `run_script` saves: "for each of 200 rows of a CSV, look the row up with a tool and total
//! a field", walked step by step through the meta tools (query_file, then call_tool once a row,
//! the sum made by the model) beside one script doing the same, against a server written with
//! the official Python SDK (tests/interop/rows_server.py's `get_order`), both in the same run:
//! the bytes that pass through the model's context (its requests and the answers) and the wall
//! time of the tool calls. (A model's own turn between steps is not in the step-by-step time:
//! the real gap is wider.) Then how long a script takes to start: `run_script` returning at
//! once with the worker kept warm, beside a cold worker (`offload-script-worker` started,
//! confined and run), beside an Offload tool that does no work.

use std::io::Write as _;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use offload_testkit::{Client, TestContext, call, connect};
use serde_json::{Value, json};

use crate::offload::as_users;
use crate::stats::{header, row, summarize};

const ROWS: u64 = 200;

pub async fn run(rounds: usize, starts: usize) -> anyhow::Result<()> {
    let interop = std::fs::canonicalize(offload_testkit::interop_dir())?;
    let python = interop.join(".venv/bin/python");
    if !python.exists() {
        println!("scripts: skipped (run scripts/setup-interop.sh for the Python SDK server)");
        return Ok(());
    }
    let ctx = TestContext::new();
    let mut csv = String::from("id,note\n");
    for i in 0..ROWS {
        csv.push_str(&format!("{},order {i}\n", i * 7));
    }
    std::fs::write(ctx.root.join("orders.csv"), csv)?;
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {
            "rows": {"command": python, "args": [interop.join("rows_server.py")]},
            "fx": TestContext::fixture(&[]),
        },
    }));
    let want: f64 = (0..ROWS).map(|i| value(i * 7)).sum();
    let client = connect(as_users(ctx.offload_command(&["--expose", "meta"]))).await;
    for upstream in [Upstream::Python, Upstream::Native] {
        let direct = connect(upstream.command(&python, &interop)).await;
        compare(&client, &direct, upstream, rounds, want).await?;
        direct.cancel().await?;
    }
    starting(&client, starts).await?;
    client.cancel().await?;
    Ok(())
}

/// The upstream the rows are looked up on.
#[derive(Clone, Copy)]
enum Upstream {
    /// tests/interop/rows_server.py's `get_order` (official Python SDK).
    Python,
    /// The Rust fixture's `echo` of the row's qty × price: what Offload itself costs a step.
    Native,
}

impl Upstream {
    /// The upstream started on its own, for a client that calls it directly.
    fn command(
        self,
        python: &std::path::Path,
        interop: &std::path::Path,
    ) -> tokio::process::Command {
        match self {
            Upstream::Python => {
                let mut cmd = tokio::process::Command::new(python);
                cmd.arg(interop.join("rows_server.py"));
                cmd
            }
            Upstream::Native => {
                tokio::process::Command::new(offload_testkit::target_bin("offload-fixture"))
            }
        }
    }
}

async fn compare(
    client: &Client,
    direct: &Client,
    upstream: Upstream,
    rounds: usize,
    want: f64,
) -> anyhow::Result<()> {
    // Every path once before measuring: the server started, its tools listed, caches warm.
    step_by_step(client, upstream, want).await?;
    one_script(client, upstream, want).await?;
    upstream_alone(direct, upstream).await?;
    let (mut steps, mut scripts, mut alone) = (Vec::new(), Vec::new(), Vec::new());
    let (mut step_bytes, mut script_bytes) = (0, 0);
    for _ in 0..rounds {
        let t = Instant::now();
        step_bytes = step_by_step(client, upstream, want).await?;
        steps.push(t.elapsed());
        let t = Instant::now();
        script_bytes = one_script(client, upstream, want).await?;
        scripts.push(t.elapsed());
        let t = Instant::now();
        upstream_alone(direct, upstream).await?;
        alone.push(t.elapsed());
    }
    let (s, o, a) = (
        summarize(&mut scripts),
        summarize(&mut steps),
        summarize(&mut alone),
    );
    let label = match upstream {
        Upstream::Python => "a Python SDK server's get_order",
        Upstream::Native => "the Rust fixture's echo (Offload's own cost per step)",
    };
    println!(
        "for each of {ROWS} CSV rows call a tool ({label}) and total a field: one run_script beside step by step through the meta tools, {rounds} rounds each, alternating"
    );
    println!("{}", header("script", "step by step"));
    println!("{}", row("median", s.median, o.median));
    println!("{}", row("p99", s.p99, o.p99));
    let fewer = 100.0 * (1.0 - script_bytes as f64 / step_bytes as f64);
    let faster = o.median.as_secs_f64() / s.median.as_secs_f64();
    println!(
        "bytes through the model's context: script {script_bytes}, step by step {step_bytes}: {fewer:.1}% fewer; {faster:.1}x faster (tool time only)"
    );
    // What no gateway can beat: the same lookups made straight to the upstream by a client
    // beside it, as many at once as a script makes.
    println!(
        "the upstream alone ({ROWS} lookups, {AT_ONCE} at once, a client calling it directly): median {:.1} ms; the script's own cost over it {:.1} ms",
        ms(a.median),
        ms(s.median.saturating_sub(a.median)),
    );
    // Step by step, the model takes a turn after each answer (201 here), the script one: the
    // turn a model takes between steps past which the script is 10x faster end to end.
    let turns = ROWS as f64 + 1.0;
    let break_even = (10.0 * ms(s.median) - ms(o.median)) / (turns - 10.0);
    println!(
        "end to end with the model's turns ({turns} step by step, 1 for the script): 10x faster once a model's turn takes over {:.1} ms",
        break_even.max(0.0)
    );
    println!(
        "target (>= 95% fewer bytes, >= 10x faster): bytes {}, time {} on tool time alone; met end to end for any model turn over {:.1} ms",
        if fewer >= 95.0 { "met" } else { "NOT met" },
        if faster >= 10.0 { "met" } else { "NOT met" },
        break_even.max(0.0)
    );
    println!();
    Ok(())
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

/// Concurrent calls made straight to the upstream at once, as a script makes them.
const AT_ONCE: usize = 8;

/// The same lookups as the script's, made by a client straight to the upstream.
async fn upstream_alone(direct: &Client, upstream: Upstream) -> anyhow::Result<()> {
    use futures::stream::{self, StreamExt, TryStreamExt};
    stream::iter(0..ROWS)
        .map(|i| async move {
            let (_, tool, args) = lookup(upstream, i * 7);
            let r = call(direct, tool, args).await;
            anyhow::ensure!(r.is_error != Some(true), "{r:?}");
            Ok(())
        })
        .buffer_unordered(AT_ONCE)
        .try_collect::<Vec<()>>()
        .await?;
    Ok(())
}

/// The bytes a message takes as JSON.
fn size(value: &impl serde::Serialize) -> usize {
    serde_json::to_string(value).map_or(0, |s| s.len())
}

/// How a row is looked up: the call's server, tool and arguments; and the row's value in what
/// it answers.
fn lookup(upstream: Upstream, id: u64) -> (&'static str, &'static str, Value) {
    match upstream {
        Upstream::Python => ("rows", "get_order", json!({"id": id})),
        Upstream::Native => (
            "fx",
            "echo",
            json!({"text": (value(id) * 100.0).round().to_string()}),
        ),
    }
}

/// qty × price of order `id`, as rows_server.py makes it.
fn value(id: u64) -> f64 {
    (id % 13) as f64 * ((id % 1000) as f64 * 0.25)
}

/// query_file for the ids, call_tool for each, the sum made here (as a model would).
async fn step_by_step(client: &Client, upstream: Upstream, want: f64) -> anyhow::Result<usize> {
    let ask = json!({"path": "orders.csv", "sql": "SELECT id FROM data", "limit": ROWS});
    let r = call(client, "query_file", ask.clone()).await;
    let mut bytes = size(&ask) + size(&r);
    let ids: Vec<u64> = r
        .structured_content
        .as_ref()
        .and_then(|s| s["rows"].as_array())
        .into_iter()
        .flatten()
        .filter_map(|row| row[0].as_u64())
        .collect();
    anyhow::ensure!(ids.len() == ROWS as usize, "the ids: {r:?}");
    let mut total = 0.0;
    for id in ids {
        let (server, tool, args) = lookup(upstream, id);
        let ask = json!({"server": server, "tool_name": tool, "tool_args": args});
        let r = call(client, "call_tool", ask.clone()).await;
        bytes += size(&ask) + size(&r);
        total += match upstream {
            Upstream::Python => {
                let order = r.structured_content.unwrap_or(Value::Null);
                let field = |k: &str| order[k].as_f64().unwrap_or(f64::NAN);
                field("qty") * field("price")
            }
            Upstream::Native => {
                offload_testkit::text(&r).parse::<f64>().unwrap_or(f64::NAN) / 100.0
            }
        };
    }
    anyhow::ensure!(
        (total - want).abs() < 1e-6,
        "step by step totalled {total}, not {want}"
    );
    Ok(bytes)
}

const PYTHON: &str = r#"const rows = await offload.query("orders.csv", "SELECT id FROM data");
let total = 0;
const orders = await Promise.all(rows.map(r => tools.rows.get_order({ id: r.id })));
for (const o of orders) total += o.qty * o.price;
return { rows: rows.length, total };"#;

const NATIVE: &str = r#"const rows = await offload.query("orders.csv", "SELECT id FROM data");
const value = (id) => (id % 13) * ((id % 1000) * 0.25);
let total = 0;
const echoed = await Promise.all(rows.map(r => tools.fx.echo({ text: String(Math.round(value(r.id) * 100)) })));
for (const e of echoed) total += Number(e) / 100;
return { rows: rows.length, total };"#;

async fn one_script(client: &Client, upstream: Upstream, want: f64) -> anyhow::Result<usize> {
    let code = match upstream {
        Upstream::Python => PYTHON,
        Upstream::Native => NATIVE,
    };
    let ask = json!({"code": code});
    let r = call(client, "run_script", ask.clone()).await;
    let result = r
        .structured_content
        .as_ref()
        .map(|s| s["result"].clone())
        .unwrap_or_default();
    let total = result["total"].as_f64().unwrap_or(f64::NAN);
    anyhow::ensure!(
        result["rows"] == json!(ROWS) && (total - want).abs() < 1e-6,
        "the script answered {r:?}, not {want}"
    );
    Ok(size(&ask) + size(&r))
}

/// A script's start, warm and cold, beside an Offload tool that does no work.
async fn starting(client: &Client, starts: usize) -> anyhow::Result<()> {
    let (mut warm, mut base) = (Vec::new(), Vec::new());
    for _ in 0..starts {
        let t = Instant::now();
        let r = call(client, "run_script", json!({"code": "return 1"})).await;
        anyhow::ensure!(r.is_error != Some(true), "{r:?}");
        warm.push(t.elapsed());
        let t = Instant::now();
        call(client, "list_allowed_directories", json!({})).await;
        base.push(t.elapsed());
    }
    let mut cold = Vec::new();
    for _ in 0..starts.min(100) {
        cold.push(cold_worker()?);
    }
    let (w, b, c) = (
        summarize(&mut warm),
        summarize(&mut base),
        summarize(&mut cold),
    );
    println!(
        "a script's start: run_script returning at once (worker kept warm) beside list_allowed_directories, {starts} calls each, alternating"
    );
    println!("{}", header("run_script", "no-op tool"));
    println!("{}", row("median", w.median, b.median));
    println!("{}", row("p99", w.p99, b.p99));
    println!(
        "a cold worker (offload-script-worker started, confined, run, exited): median {:.3} ms, p99 {:.3} ms",
        c.median.as_secs_f64() * 1e3,
        c.p99.as_secs_f64() * 1e3
    );
    let added = w.median.saturating_sub(b.median);
    println!(
        "target (a script starts in <= 5 ms): {:.3} ms added, {}",
        added.as_secs_f64() * 1e3,
        if added <= Duration::from_millis(5) {
            "met"
        } else {
            "NOT met"
        }
    );
    Ok(())
}

fn cold_worker() -> anyhow::Result<Duration> {
    let t = Instant::now();
    let mut child = Command::new(offload_testkit::target_bin("offload-script-worker"))
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()?;
    writeln!(
        child.stdin.take().expect("piped"),
        r#"{{"run": {{"code": "return 1"}}}}"#
    )?;
    let out = child.wait_with_output()?;
    anyhow::ensure!(
        String::from_utf8_lossy(&out.stdout).contains("\"done\""),
        "the worker said {}",
        String::from_utf8_lossy(&out.stdout)
    );
    Ok(t.elapsed())
}
