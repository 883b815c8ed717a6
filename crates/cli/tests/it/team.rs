//! Replicas on several machines: two `offload serve --http` processes, each with a data
//! directory of its own (as on two machines), sharing their access tokens through the state
//! bucket (`http.state`; SeaweedFS, a real S3 server). A token made through one replica's
//! command works on both; a revocation made through either holds on both within a second
//! (measured, round after round); a state bucket that does not answer makes a replica refuse
//! every token (503, try again), never accept an unchecked one.

use std::time::{Duration, Instant};

use offload_testkit::nginx::{Nginx, backend};
use offload_testkit::s3::Weed;
use offload_testkit::{Host, TestContext, call, error_code, text};
use serde_json::{Value, json};

use crate::http::http_client;

/// A replica: its own home and data directory, the team's configuration.
async fn replica(state: &Value) -> (TestContext, Host, String) {
    let ctx = TestContext::new();
    ctx.write_config(json!({"roots": [ctx.root], "mcpServers": {}, "http": {"state": state}}));
    let (host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
    (ctx, host, url)
}

/// The HTTP status of an MCP initialize sent with `token`.
async fn status_with(url: &str, token: &str) -> u16 {
    reqwest::Client::new()
        .post(url)
        .bearer_auth(token)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"t","version":"0"}}}"#)
        .send()
        .await
        .expect("HTTP request")
        .status()
        .as_u16()
}

/// How long after `since` both replicas answer `want` for `token` (polled every 10 ms, at most
/// 5 s).
async fn until_both(urls: &[String], token: &str, want: u16, since: Instant) -> Duration {
    loop {
        let mut all = true;
        for url in urls {
            all &= status_with(url, token).await == want;
        }
        if all {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < Duration::from_secs(5),
            "the replicas did not all answer {want} within 5 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

fn ok(out: std::process::Output) -> String {
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn tokens_made_and_revoked_through_one_replica_hold_on_every_replica_within_a_second() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("team-state");
    let mut state = weed.root(&prefix, true);
    state.as_object_mut().unwrap().remove("writable");
    let (a, _host_a, url_a) = replica(&state).await;
    let (b, _host_b, url_b) = replica(&state).await;
    let urls = [url_a.clone(), url_b.clone()];

    // Made through A's command: kept in the bucket as a hash, on neither machine's disk.
    let token = a.token("agent", "read,call");
    for ctx in [&a, &b] {
        assert!(
            !ctx.home.join(".local/share/offload/tokens.json").exists(),
            "a replica kept tokens on its own disk"
        );
    }
    let kept =
        String::from_utf8(weed.object(&format!("{prefix}/tokens.json")).await.unwrap()).unwrap();
    assert!(
        kept.contains("\"agent\"") && !kept.contains(&token["offload_".len()..]),
        "{kept}"
    );
    assert!(ok(b.run_offload(&["token", "list"])).contains("agent\tread,call"));

    // Both replicas serve a real client with it.
    for url in &urls {
        let client = http_client(url, &token).await;
        let r = call(&client, "list_allowed_directories", json!({})).await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
        let _ = client.cancel().await;
    }

    // Revoked through B: refused by both within a second. Then made again and revoked through
    // the other replica, round after round; the slowest round is the figure.
    let mut slowest = Duration::ZERO;
    let mut token = token;
    for round in 0..6 {
        let (maker, revoker) = if round % 2 == 0 { (&a, &b) } else { (&b, &a) };
        if round > 0 {
            token = maker.token("agent", "read");
            let made = Instant::now();
            slowest = slowest.max(until_both(&urls, &token, 200, made).await);
        }
        let revoked = Instant::now();
        assert!(ok(revoker.run_offload(&["token", "revoke", "agent"])).contains("revoked"));
        slowest = slowest.max(until_both(&urls, &token, 401, revoked).await);
    }
    assert!(
        slowest < Duration::from_secs(1),
        "a change through one replica took {slowest:?} to hold on both"
    );

    // Two replicas making tokens at once: conditional writes lose neither.
    let (ta, tb) = std::thread::scope(|s| {
        let ta = s.spawn(|| a.run_offload(&["token", "create", "one", "--scope", "read"]));
        let tb = s.spawn(|| b.run_offload(&["token", "create", "two", "--scope", "read"]));
        (ta.join().unwrap(), tb.join().unwrap())
    });
    ok(ta);
    ok(tb);
    let listed = ok(a.run_offload(&["token", "list"]));
    assert!(
        listed.contains("one\t") && listed.contains("two\t"),
        "{listed}"
    );
}

/// What calling `fx__echo` through `client` answers now: its text, or the error's code.
async fn echo_through(client: &offload_testkit::Client) -> String {
    let r = call(client, "fx__echo", json!({"text": "approved"})).await;
    match r.is_error {
        // A direct call's own errors carry their code in the text alone (no structured content:
        // it would have to match the upstream tool's output schema).
        Some(true) if r.structured_content.is_none() => text(&r)
            .strip_prefix("Error [")
            .and_then(|t| t.split_once(']'))
            .map_or_else(|| text(&r), |(code, _)| code.to_owned()),
        Some(true) => error_code(&r),
        _ => text(&r),
    }
}

/// Polls both clients every 10 ms until each answers `want` (at most 10 s); how long it took.
async fn until_echo(clients: &[offload_testkit::Client], want: &str, since: Instant) -> Duration {
    loop {
        let mut all = true;
        for c in clients {
            all &= echo_through(c).await == want;
        }
        if all {
            return since.elapsed();
        }
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "the replicas did not all answer {want} within 10 s"
        );
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
}

#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn a_tool_approved_through_one_replica_is_released_on_every_replica_within_a_second() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("team-pins");
    let mut state = weed.root(&prefix, true);
    state.as_object_mut().unwrap().remove("writable");
    // One upstream as each machine would run it: the same server, the change it makes seen
    // by both (its flag file).
    let flags = tempfile::tempdir().unwrap();
    let flag = flags.path().join("echo-changed");
    let fx = TestContext::fixture(&["--echo-changed-file", flag.to_str().unwrap()]);
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let ctx = TestContext::new();
        ctx.write_config(json!({
            "roots": [ctx.root], "mcpServers": {"fx": fx}, "tools": {"expose": "direct"},
            "http": {"state": state},
        }));
        let (host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
        replicas.push((ctx, host, url));
    }
    let token = replicas[0].0.token("agent", "read,call");
    let mut clients = Vec::new();
    for (_, _, url) in &replicas {
        clients.push(http_client(url, &token).await);
    }
    // Pinned once, in the bucket: on neither machine's disk.
    until_echo(&clients, "approved", Instant::now()).await;
    let pins =
        String::from_utf8(weed.object(&format!("{prefix}/pins.json")).await.unwrap()).unwrap();
    assert!(
        pins.contains("\"fx\"") && pins.contains("\"echo\""),
        "{pins}"
    );
    for (ctx, _, _) in &replicas {
        assert!(!ctx.home.join(".local/share/offload/pins.json").exists());
    }

    // The server changes echo: held on both replicas (each one's own process of it says so).
    for c in &clients {
        call(c, "fx__change_echo", json!({})).await;
    }
    until_echo(&clients, "tool_changed", Instant::now()).await;

    // Approved through the first replica's command: released on both within a second.
    let out = ok(replicas[0]
        .0
        .run_offload(&["tools", "approve", "fx", "echo"]));
    let approved = Instant::now();
    assert!(out.contains("approved 1"), "{out}");
    let took = until_echo(&clients, "approved", approved).await;
    eprintln!("approval held on both replicas after {took:?}");
    assert!(
        took < Duration::from_secs(1),
        "an approval through one replica took {took:?} to hold on both"
    );
    // The definition approved is the new one, on both.
    for c in &clients {
        let tools = c.list_all_tools().await.unwrap();
        let echo = tools.iter().find(|t| t.name == "fx__echo").expect("listed");
        assert!(echo.description.as_deref().unwrap().contains("id_rsa"));
    }
    for c in clients {
        let _ = c.cancel().await;
    }
}

#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn every_replicas_calls_are_in_the_shared_audit_log_within_seconds() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("team-audit");
    let mut state = weed.root(&prefix, true);
    state.as_object_mut().unwrap().remove("writable");
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let ctx = TestContext::new();
        ctx.write_config(json!({
            "roots": [ctx.root], "mcpServers": {"fx": TestContext::fixture(&[])},
            "http": {"state": state},
        }));
        let (host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
        replicas.push((ctx, host, url));
    }
    let token = replicas[0].0.token("agent", "read,call");
    // Each replica serves its own calls: 5 through the first, 3 through the second.
    for ((_, _, url), n) in replicas.iter().zip([5, 3]) {
        let client = http_client(url, &token).await;
        for i in 0..n {
            let r = call(&client, "fx__echo", json!({"text": format!("call {i}")})).await;
            assert_eq!(text(&r), format!("call {i}"));
        }
        let _ = client.cancel().await;
    }
    // `offload audit` through either replica's configuration: both replicas' calls, in time
    // order, within seconds.
    let since = Instant::now();
    let events = loop {
        let out = ok(replicas[1].0.run_offload(&["audit", "--since", "10m"]));
        let events: Vec<Value> = out
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .filter(|e: &Value| e["tool"] == "fx__echo")
            .collect();
        if events.len() >= 8 || since.elapsed() > Duration::from_secs(10) {
            break events;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    };
    eprintln!(
        "both replicas' calls in the shared audit log {:?} after the last",
        since.elapsed()
    );
    assert_eq!(events.len(), 8, "{events:#?}");
    let pids: std::collections::BTreeSet<u64> =
        events.iter().map(|e| e["pid"].as_u64().unwrap()).collect();
    assert_eq!(pids.len(), 2, "from both replicas: {pids:?}");
    let times: Vec<&str> = events.iter().map(|e| e["time"].as_str().unwrap()).collect();
    let mut sorted = times.clone();
    sorted.sort();
    assert_eq!(times, sorted, "in time order");
    assert!(
        events
            .iter()
            .all(|e| e["outcome"] == "ok" && e["server"] == "fx")
    );
    // Each machine still has its own calls on its own disk.
    for ((ctx, _, _), n) in replicas.iter().zip([5, 3]) {
        let local = std::fs::read_to_string(ctx.home.join(".local/share/offload/audit.jsonl"))
            .unwrap_or_default();
        assert_eq!(local.matches("\"fx__echo\"").count(), n);
    }
    // `--limit` keeps the newest.
    let out = ok(replicas[0].0.run_offload(&["audit", "--limit", "2"]));
    assert_eq!(out.lines().count(), 2, "{out}");
}

/// A 2026-07-28 call parked for its client's answers lives in the replica that asked (the
/// upstream call is open there): the client's retry reaching the other replica is handed to it.
#[tokio::test]
#[ignore = "needs weed mini: run scripts/setup-interop.sh"]
async fn a_clients_answers_reaching_another_replica_are_handed_to_the_one_that_asked() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("team-rounds");
    let mut state = weed.root(&prefix, true);
    state.as_object_mut().unwrap().remove("writable");
    let python = offload_testkit::interop_dir().join(".venv/bin/python");
    let asking = offload_testkit::interop_dir().join("asking_server.py");
    let mut replicas = Vec::new();
    for _ in 0..2 {
        let ctx = TestContext::new();
        ctx.write_config(json!({
            "roots": [ctx.root], "tools": {"expose": "direct"},
            "mcpServers": {"asking": {"command": python, "args": [asking]}},
            "http": {"state": state},
        }));
        let (host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
        replicas.push((ctx, host, url));
    }
    let token = replicas[0].0.token("agent", "read,call");
    let out = crate::interop::run_script_within(
        &replicas[0].0,
        offload_testkit::interop_dir().join(".venv/bin/python"),
        &[
            "asking_replicas_client.py",
            &replicas[0].2,
            &replicas[1].2,
            &token,
        ],
        Duration::from_secs(120),
    )
    .await;
    assert_eq!(
        out.matches("ok asked by one replica, answered through the other")
            .count(),
        6,
        "{out}"
    );
    assert!(out.contains("ok answered Frances"), "{out}");
}

/// Shared pins that cannot be read hold every upstream tool — a changed tool is never let
/// through unchecked — and a call says why at once, for the model to tell the user.
#[tokio::test]
async fn pins_that_cannot_be_read_hold_every_tool_and_the_call_says_why() {
    let port = offload_testkit::free_port();
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root], "mcpServers": {"fx": TestContext::fixture(&[])},
        "http": {"state": {"path": "s3://team/state", "endpoint": format!("http://127.0.0.1:{port}"),
                           "region": "us-east-1", "accessKeyId": "k", "secretAccessKey": "s"}},
    }));
    let client = ctx.client().await;
    let t = Instant::now();
    let listed = client.list_all_tools().await.unwrap();
    assert!(
        !listed.iter().any(|t| t.name.starts_with("fx")),
        "no upstream tool listed: {:?}",
        listed
            .iter()
            .map(|t| t.name.to_string())
            .collect::<Vec<_>>()
    );
    let r = call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "x"}}),
    )
    .await;
    assert_eq!(error_code(&r), "server_unavailable", "{}", text(&r));
    assert!(
        text(&r).contains("s3://team/state/pins.json"),
        "{}",
        text(&r)
    );
    assert!(t.elapsed() < Duration::from_secs(10), "{:?}", t.elapsed());
    // Offload's own tools work meanwhile.
    let r = call(&client, "list_allowed_directories", json!({})).await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_state_bucket_that_does_not_answer_accepts_no_token() {
    // Nothing listens on this port: the bucket is down from the start.
    let port = offload_testkit::free_port();
    let state = json!({
        "path": "s3://team/state",
        "endpoint": format!("http://127.0.0.1:{port}"),
        "region": "us-east-1",
        "accessKeyId": "k",
        "secretAccessKey": "s",
    });
    let (ctx, _host, url) = replica(&state).await;
    let out = ctx.run_offload(&["token", "create", "agent", "--scope", "read"]);
    assert!(!out.status.success());
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(said.contains("s3://team/state/tokens.json"), "{said}");
    // Any token (even one that once was good) waits for the shared list: 503, try again.
    let t = Instant::now();
    let response = reqwest::Client::new()
        .post(&url)
        .bearer_auth(format!("offload_{}", "0".repeat(64)))
        .header("content-type", "application/json")
        .body("{}")
        .send()
        .await
        .unwrap();
    assert_eq!(response.status().as_u16(), 503);
    assert_eq!(response.headers()["retry-after"], "1");
    assert!(t.elapsed() < Duration::from_secs(5), "{:?}", t.elapsed());
    assert!(response.text().await.unwrap().contains("cannot be checked"));
    // The process itself is healthy; it is the tokens that cannot be checked.
    let base = url.trim_end_matches("/mcp");
    let health = reqwest::get(format!("{base}/healthz")).await.unwrap();
    assert_eq!(health.status().as_u16(), 200);
}

/// The calls a replica counted, all tools and outcomes together.
async fn calls_counted(url: &str, token: &str) -> f64 {
    crate::http::metrics(url.trim_end_matches("/mcp"), token)
        .await
        .lines()
        .filter(|l| l.starts_with("offload_calls_total{"))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// One 2025-11-25 session through nginx round-robin: its requests alternate between two
/// replicas, each continuing the session the other made (its `initialize` parameters in the
/// shared state); a query of a CSV in the shared bucket answers right on either. Then one
/// replica is killed (SIGKILL) and the session goes on through the other.
#[tokio::test]
#[ignore = "needs weed mini and nginx: run scripts/setup-interop.sh"]
async fn one_session_goes_on_across_replicas_behind_a_round_robin_balancer_and_past_a_kill() {
    let weed = Weed::get().await;
    let prefix = weed.prefix("team-sessions");
    let mut state = weed.root(&format!("{prefix}/state"), true);
    state.as_object_mut().unwrap().remove("writable");
    let files = weed.root(&format!("{prefix}/files"), false);
    weed.put(
        &format!("{prefix}/files/rows.csv"),
        b"id,amount\n1,10\n2,20\n3,30\n".to_vec(),
    )
    .await;
    let replica_with_files = |state: Value, files: Value| async move {
        let ctx = TestContext::new();
        ctx.write_config(json!({"roots": [files], "mcpServers": {}, "http": {"state": state}}));
        let (host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
        (ctx, host, url)
    };
    let (a, mut host_a, url_a) = replica_with_files(state.clone(), files.clone()).await;
    let (_b, _host_b, url_b) = replica_with_files(state.clone(), files.clone()).await;
    let token = a.token("agent", "read,call");
    let dir = tempfile::tempdir().unwrap();
    let balancer = Nginx::start(dir.path(), &[backend(&url_a), backend(&url_b)]);
    let url = balancer.url.clone();

    let client = http_client(&url, &token).await;
    let csv = format!(
        "s3://{}/{prefix}/files/rows.csv",
        offload_testkit::s3::BUCKET
    );
    let ask = |n: u64| json!({"path": csv, "sql": format!("SELECT sum(amount) * {n} AS total FROM data")});
    for n in 1..=12u64 {
        let r = call(&client, "query_file", ask(n)).await;
        assert!(
            text(&r).contains(&(60 * n).to_string()),
            "call {n}: {}",
            text(&r)
        );
    }
    let (on_a, on_b) = (
        calls_counted(&url_a, &token).await,
        calls_counted(&url_b, &token).await,
    );
    assert_eq!(on_a + on_b, 12.0);
    assert!(
        on_a >= 3.0 && on_b >= 3.0,
        "A {on_a}, B {on_b}: not both served the session"
    );

    // A is killed; the same session goes on through B.
    host_a.child.start_kill().unwrap();
    let _ = host_a.child.wait().await;
    for n in 13..=20u64 {
        let r = call(&client, "query_file", ask(n)).await;
        assert!(
            text(&r).contains(&(60 * n).to_string()),
            "call {n} after the kill: {}",
            text(&r)
        );
    }
    assert_eq!(calls_counted(&url_b, &token).await, on_b + 8.0);
    let _ = client.cancel().await;
}
