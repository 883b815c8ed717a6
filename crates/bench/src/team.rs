//! A team's gateway under load with a replica killed: three `offload serve --http` replicas
//! (each with a data directory of its own, as on three machines) behind Debian's nginx
//! round-robin, sharing tokens and sessions through SeaweedFS (`http.state`) and storing
//! answers in a bucket root there. Concurrent streamable-HTTP clients (rmcp's) make mixed
//! calls, every answer checked: echo through `call_tool`, an answer stored, a query of the
//! client's last stored file, a read of it, a `$file` sent to a tool. A third of the way in, one
//! replica is killed with SIGKILL and started again 2 s later. Counted: wrong answers, stored
//! files missing at the end (each listed in the bucket), failed calls and when they failed.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use offload_testkit::nginx::{Nginx, backend};
use offload_testkit::s3::{BUCKET, Weed};
use offload_testkit::{Client, Recorder, TestContext};
use rmcp::ServiceExt;
use rmcp::model::CallToolRequestParams;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

const KINDS: [&str; 5] = ["echo", "store", "query", "read", "$file"];

async fn connect(url: &str, token: &str) -> Option<Client> {
    let config = StreamableHttpClientTransportConfig::with_uri(url.to_owned()).auth_header(token);
    Recorder::default()
        .serve(StreamableHttpClientTransport::from_config(config))
        .await
        .ok()
}

/// One call: its answer, or why there was none.
async fn ask(
    client: &Client,
    name: &str,
    args: Value,
) -> Result<rmcp::model::CallToolResult, String> {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = args.as_object().cloned();
    match tokio::time::timeout(Duration::from_secs(30), client.call_tool(params)).await {
        Ok(Ok(r)) if r.is_error == Some(true) => Err(offload_testkit::text(&r)),
        Ok(Ok(r)) => Ok(r),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("no answer within 30 s".into()),
    }
}

#[derive(Default)]
struct Tally {
    ok: usize,
    wrong: Vec<String>,
    /// When each failed call was made (since the run began), and why it failed.
    failed: Vec<(Duration, String)>,
    /// Every answer stored: its object URL and what it must hold.
    stored: Vec<(String, String)>,
    reconnects: usize,
}

#[allow(clippy::too_many_arguments)]
async fn one_client(
    id: usize,
    calls: usize,
    url: String,
    token: String,
    prefix: String,
    note: String,
    done: Arc<AtomicUsize>,
    began: Instant,
) -> Tally {
    let mut tally = Tally::default();
    let mut client = connect(&url, &token).await;
    let mut last: Option<(String, u64)> = None;
    for n in 0..calls {
        let Some(c) = client.as_ref() else {
            tally
                .failed
                .push((began.elapsed(), "could not connect".into()));
            client = connect(&url, &token).await;
            tally.reconnects += 1;
            done.fetch_add(1, Ordering::Relaxed);
            continue;
        };
        let tag = format!("c{id}-n{n}");
        let asked = began.elapsed();
        let kind = if last.is_none() && n % KINDS.len() >= 2 {
            1 // nothing stored yet to query or read
        } else {
            n % KINDS.len()
        };
        let outcome: Result<Option<String>, String> = match kind {
            0 => ask(c, "call_tool", json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": tag}}))
                .await
                .map(|r| {
                    let got = offload_testkit::text(&r);
                    (got != tag).then(|| format!("echo answered {got:?} to {tag}"))
                }),
            1 => {
                let rows = 1 + (n as u64 % 40);
                let name = format!("{tag}.json");
                ask(c, "call_tool_and_store", json!({"server": "fx", "tool_name": "rows", "tool_args": {"n": rows}, "storage_path": prefix, "filename": name}))
                    .await
                    .map(|r| {
                        let s = r.structured_content.unwrap_or(Value::Null);
                        let uri = s["path"].as_str().unwrap_or_default().to_owned();
                        if s["summary"]["rows"] != rows {
                            return Some(format!("stored {s} for {rows} rows"));
                        }
                        tally.stored.push((uri.clone(), format!("\"id\": {}", rows - 1)));
                        last = Some((uri, rows));
                        None
                    })
            }
            2 => {
                let (path, rows) = last.clone().expect("stored first");
                ask(c, "query_file", json!({"path": path, "sql": "SELECT count(*) AS n FROM data"}))
                    .await
                    .map(|r| {
                        let got = r.structured_content.unwrap_or(Value::Null);
                        let n = got["rows"][0][0].as_u64();
                        (n != Some(rows)).then(|| format!("query of {path} answered {got}, not {rows}"))
                    })
            }
            3 => {
                let (path, _) = last.clone().expect("stored first");
                ask(c, "read_file", json!({"path": path, "length": 200}))
                    .await
                    .map(|r| {
                        let got = offload_testkit::text(&r);
                        (!got.contains("\"id\": 0,")).then(|| format!("read of {path} answered {got:?}"))
                    })
            }
            _ => ask(c, "call_tool", json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": {"$file": note}}}))
                .await
                .map(|r| {
                    let got = offload_testkit::text(&r);
                    (got != "a note every replica reads").then(|| format!("$file sent {got:?}"))
                }),
        };
        match outcome {
            Ok(None) => tally.ok += 1,
            Ok(Some(wrong)) => tally
                .wrong
                .push(format!("client {id} call {n} ({}): {wrong}", KINDS[kind])),
            Err(why) => {
                tally
                    .failed
                    .push((asked, format!("{}: {why}", KINDS[kind])));
                // A session whose connection broke is given up for a new one.
                if c.is_transport_closed() {
                    client = connect(&url, &token).await;
                    tally.reconnects += 1;
                }
            }
        }
        done.fetch_add(1, Ordering::Relaxed);
    }
    if let Some(c) = client {
        let _ = c.cancel().await;
    }
    tally
}

pub async fn run(clients: usize, calls: usize) -> anyhow::Result<()> {
    let weed = Weed::get().await;
    let prefix = weed.prefix("team-bench");
    let mut state = weed.root(&format!("{prefix}/state"), true);
    state.as_object_mut().expect("an object").remove("writable");
    let files = weed.root(&format!("{prefix}/files"), true);
    let files_url = format!("s3://{BUCKET}/{prefix}/files");
    weed.put(
        &format!("{prefix}/files/note.txt"),
        b"a note every replica reads".to_vec(),
    )
    .await;

    // Three replicas on fixed ports, so the one killed comes back where nginx expects it.
    let mut replicas = Vec::new();
    for _ in 0..3 {
        let ctx = TestContext::new();
        ctx.write_config(json!({
            "roots": [files],
            "mcpServers": {"fx": TestContext::fixture(&[])},
            "http": {"state": state},
        }));
        let port = offload_testkit::free_port();
        let (host, url) = ctx.http_host(&format!("127.0.0.1:{port}"), &[]).await;
        replicas.push((ctx, Some(host), url, port));
    }
    let token = replicas[0].0.token("bench", "read,call,store");
    let dir = tempfile::tempdir()?;
    let backends: Vec<String> = replicas.iter().map(|r| backend(&r.2)).collect();
    let balancer = Nginx::start(dir.path(), &backends);
    println!(
        "{clients} clients x {calls} mixed checked calls ({}) through nginx round-robin over 3 replicas sharing SeaweedFS; one replica killed (SIGKILL) a third of the way in and started again 2 s later",
        KINDS.join(", ")
    );

    let done = Arc::new(AtomicUsize::new(0));
    let began = Instant::now();
    let tasks: Vec<_> = (0..clients)
        .map(|id| {
            tokio::spawn(one_client(
                id,
                calls,
                balancer.url.clone(),
                token.clone(),
                format!("{files_url}/c{id}"),
                format!("{files_url}/note.txt"),
                done.clone(),
                began,
            ))
        })
        .collect();

    // A third of the way in: replica 2 is killed, then started again.
    let total = clients * calls;
    while done.load(Ordering::Relaxed) < total / 3 {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let (ctx, host, _, port) = &mut replicas[1];
    let mut killed = host.take().expect("running");
    let kill_at = began.elapsed();
    killed.child.start_kill()?;
    let _ = killed.child.wait().await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    let (again, _) = ctx.http_host(&format!("127.0.0.1:{port}"), &[]).await;
    *host = Some(again);
    let back_at = began.elapsed();

    let mut all = Tally::default();
    for t in tasks {
        let t = t.await?;
        all.ok += t.ok;
        all.wrong.extend(t.wrong);
        all.failed.extend(t.failed);
        all.stored.extend(t.stored);
        all.reconnects += t.reconnects;
    }
    let took = began.elapsed();

    // Every answer stored is in the bucket, whole.
    let mut lost = Vec::new();
    for (uri, holds) in &all.stored {
        let key = uri
            .strip_prefix(&format!("s3://{BUCKET}/"))
            .unwrap_or(uri.as_str());
        match weed.object(key).await {
            Some(bytes) if String::from_utf8_lossy(&bytes).contains(holds.as_str()) => {}
            Some(_) => lost.push(format!("{uri}: not what was stored")),
            None => lost.push(format!("{uri}: missing")),
        }
    }
    // A call made up to a second before the kill may have been in flight on the killed
    // replica; one made while it was down was refused at connecting and sent to another.
    let in_window = all
        .failed
        .iter()
        .filter(|(at, _)| {
            *at + Duration::from_secs(1) >= kill_at && *at <= back_at + Duration::from_secs(1)
        })
        .count();
    println!(
        "{} calls in {:.1} s ({:.0}/s): {} answered right, {} wrong, {} failed ({} of them made from 1 s before the kill at {:.1} s to 1 s after the replica was back at {:.1} s), {} sessions made again",
        total,
        took.as_secs_f64(),
        total as f64 / took.as_secs_f64(),
        all.ok,
        all.wrong.len(),
        all.failed.len(),
        in_window,
        kill_at.as_secs_f64(),
        back_at.as_secs_f64(),
        all.reconnects
    );
    println!(
        "stored answers: {} made, {} lost or damaged",
        all.stored.len(),
        lost.len()
    );
    for w in all.wrong.iter().take(5) {
        println!("  wrong: {w}");
    }
    for (at, why) in all.failed.iter().take(8) {
        println!(
            "  failed at {:.2} s: {}",
            at.as_secs_f64(),
            offload_formats::clip::clip(&why.replace('\n', " "), 160)
        );
    }
    for l in lost.iter().take(5) {
        println!("  lost: {l}");
    }
    let held = all.wrong.is_empty() && lost.is_empty() && in_window == all.failed.len();
    println!(
        "targets (0 wrong, 0 stored files lost, failures only around the kill): {}",
        if held { "met" } else { "NOT met" }
    );
    drop(balancer);
    Ok(())
}
