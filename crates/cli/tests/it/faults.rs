use std::time::{Duration, Instant};

use offload_testkit::{TestContext, call, error_code, process_alive, text};
use serde_json::json;

use crate::{fx, with_fixture};

#[tokio::test]
async fn a_crash_mid_call_is_an_error_and_the_next_call_restarts_the_server() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let pid_before = text(&fx(&client, "pid", json!({})).await);
    assert_eq!(text(&fx(&client, "counter", json!({})).await), "1");
    let r = fx(&client, "crash", json!({})).await;
    assert_eq!(error_code(&r), "upstream_closed");
    assert!(
        text(&r).contains("crashing on purpose"),
        "stderr tail in the message: {}",
        text(&r)
    );
    let r = fx(&client, "counter", json!({})).await;
    assert_eq!(text(&r), "1", "a fresh process after restart: {r:?}");
    assert_ne!(text(&fx(&client, "pid", json!({})).await), pid_before);
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_hung_call_ends_at_the_timeout_is_cancelled_upstream_and_later_calls_work() {
    let ctx = TestContext::new();
    let mut entry = TestContext::fixture(&[]);
    entry["timeoutSecs"] = json!(1);
    ctx.write_servers(json!({"fx": entry}));
    let client = ctx.client().await;
    let start = Instant::now();
    // No progress for 20 s (a progress notification would restart the timer).
    let r = fx(&client, "slow", json!({"ms": 20000})).await;
    let took = start.elapsed();
    assert_eq!(error_code(&r), "upstream_timeout");
    assert!(took < Duration::from_secs(5), "{took:?}");
    assert_eq!(
        text(&fx(&client, "echo", json!({"text": "still here"})).await),
        "still here"
    );
    let stats = text(&fx(&client, "stats", json!({})).await);
    assert_eq!(
        stats, r#"{"cancelled":1}"#,
        "the timeout was sent upstream as a cancellation"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn servers_that_cannot_start_say_why_and_others_keep_working() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({
        "fx": TestContext::fixture(&[]),
        "missing": {"command": "offload-no-such-command-xyz", "args": ["x"]},
        "refuses": TestContext::fixture(&["--fail-start"]),
        "badtype": {"type": "sse", "url": "http://127.0.0.1:9/sse"},
    }));
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool",
        json!({"server": "missing", "tool_name": "echo"}),
    )
    .await;
    assert_eq!(error_code(&r), "server_unavailable");
    assert!(
        text(&r).contains("'offload-no-such-command-xyz' was not found"),
        "{}",
        text(&r)
    );
    let r = call(
        &client,
        "call_tool",
        json!({"server": "refuses", "tool_name": "echo"}),
    )
    .await;
    assert_eq!(error_code(&r), "server_unavailable");
    assert!(
        text(&r).contains("refusing to start"),
        "stderr in the message: {}",
        text(&r)
    );
    let r = call(
        &client,
        "call_tool",
        json!({"server": "badtype", "tool_name": "echo"}),
    )
    .await;
    assert_eq!(error_code(&r), "config_invalid");
    assert_eq!(
        text(&fx(&client, "echo", json!({"text": "fine"})).await),
        "fine"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn closing_the_client_ends_offload_quietly_and_its_upstreams_with_it() {
    let ctx = with_fixture();
    let mut cmd = ctx.offload_command(&[]);
    cmd.kill_on_drop(false);
    let (transport, _) = rmcp::transport::TokioChildProcess::builder(cmd)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let offload_pid = transport.id().unwrap();
    let client = rmcp::ServiceExt::serve(offload_testkit::Recorder::default(), transport)
        .await
        .unwrap();
    assert!(!text(&fx(&client, "pid", json!({})).await).is_empty());
    // The upstream's processes (its launcher — the small `offload-script-worker sandbox-exec`,
    // not the 60 MB `offload` — and the server in its process namespace).
    let upstream = offload_testkit::descendants(offload_pid);
    assert!(!upstream.is_empty());
    assert!(
        upstream.iter().any(|p| offload_testkit::command_line(*p)
            .is_some_and(|c| c.contains("offload-script-worker sandbox-exec --policy"))),
        "started through offload-script-worker sandbox-exec"
    );
    // Closing our end of the pipes is all an MCP client does when it quits.
    let mut client = client;
    client.close().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    let upstream_alive = || upstream.iter().any(|p| process_alive(*p));
    while (process_alive(offload_pid) || upstream_alive()) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!process_alive(offload_pid), "offload exited");
    assert!(!upstream_alive(), "the upstream was terminated with it");
    assert!(!ctx.log().contains("ERROR"), "quiet exit: {}", ctx.log());
}

#[tokio::test]
async fn a_config_that_does_not_parse_stops_offload_with_line_and_column_and_is_kept() {
    let ctx = TestContext::new();
    let broken = "{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",,}\n  }\n}\n";
    std::fs::write(&ctx.config_path, broken).unwrap();
    let out = ctx
        .offload_command(&[])
        .stdin(std::process::Stdio::null())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    let log = ctx.log();
    assert!(log.contains("line 3, column"), "{log}");
    assert_eq!(
        std::fs::read_to_string(&ctx.config_path).unwrap(),
        broken,
        "never overwritten"
    );
    assert!(out.stdout.is_empty(), "nothing on stdout");
}

#[tokio::test]
async fn an_answer_over_the_upstream_limit_is_a_clear_error_not_a_hang() {
    let ctx = TestContext::new();
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "limits": {"maxUpstreamAnswerBytes": 100_000}
    }));
    let client = ctx.client().await;
    let start = Instant::now();
    let r = fx(&client, "large", json!({"bytes": 200_000})).await;
    assert_eq!(error_code(&r), "upstream_error");
    assert!(text(&r).contains("maxUpstreamAnswerBytes"), "{}", text(&r));
    assert!(
        start.elapsed() < Duration::from_secs(5),
        "no hang until the timeout"
    );
    // Within the inline budget (16 KiB), so it comes back as it is.
    assert_eq!(
        text(&fx(&client, "large", json!({"bytes": 10_000})).await).len(),
        10_000,
        "restarted and fine"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_disabled_server_is_not_started_and_says_so() {
    let ctx = TestContext::new();
    let mut entry = TestContext::fixture(&[]);
    entry["disabled"] = json!(true);
    ctx.write_servers(json!({"fx": entry}));
    let client = ctx.client().await;
    let r = fx(&client, "echo", json!({"text": "x"})).await;
    assert_eq!(error_code(&r), "server_disabled");
    assert!(text(&r).contains("enable it"), "{}", text(&r));
    client.cancel().await.unwrap();
}

/// Upstreams that break the protocol in every way the fixture can: each call to them is a clear
/// error within the timeout, a call to a healthy server at the same moment is unaffected, and
/// the broken server is retried in the background.
#[tokio::test]
async fn broken_upstreams_give_clear_errors_fast_and_leave_the_others_alone() {
    let ctx = TestContext::new();
    let mut entries = serde_json::Map::new();
    entries.insert("fx".into(), TestContext::fixture(&[]));
    for (name, flags) in [
        ("exits-in-init", &["--exit-during-init"][..]),
        ("garbage-out", &["--garbage-stdout"][..]),
        ("slow-start", &["--start-delay-ms", "8000"][..]),
    ] {
        let mut e = TestContext::fixture(flags);
        e["startTimeoutSecs"] = json!(3);
        entries.insert(name.into(), e);
    }
    ctx.write_servers(serde_json::Value::Object(entries));
    let client = ctx.client().await;

    for (server, code, says) in [
        (
            "exits-in-init",
            "server_unavailable",
            "exiting during initialize",
        ),
        ("garbage-out", "server_unavailable", ""),
        (
            "slow-start",
            "server_unavailable",
            "did not finish starting within 3 s",
        ),
    ] {
        let start = Instant::now();
        let broken = call(
            &client,
            "call_tool",
            json!({"server": server, "tool_name": "echo", "tool_args": {"text": "x"}}),
        );
        let healthy = fx(&client, "echo", json!({"text": "unaffected"}));
        let (broken, healthy) = tokio::join!(broken, healthy);
        let took = start.elapsed();
        assert_eq!(error_code(&broken), code, "{server}: {}", text(&broken));
        assert!(text(&broken).contains(says), "{server}: {}", text(&broken));
        assert!(took < Duration::from_secs(6), "{server} took {took:?}");
        assert_eq!(text(&healthy), "unaffected", "{server}");
    }
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn garbage_mid_call_is_an_error_and_the_next_call_gets_a_fresh_server() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let pid_before = text(&fx(&client, "pid", json!({})).await);
    let start = Instant::now();
    let r = fx(&client, "garbage", json!({})).await;
    assert!(r.is_error == Some(true), "{r:?}");
    assert!(
        ["upstream_closed", "upstream_error"].contains(&error_code(&r).as_str()),
        "{}: {}",
        error_code(&r),
        text(&r)
    );
    assert!(start.elapsed() < Duration::from_secs(5));
    assert_ne!(text(&fx(&client, "pid", json!({})).await), pid_before);
    client.cancel().await.unwrap();
}

/// 32 MiB written to stderr before the server even starts: it starts, calls work, and what
/// Offload keeps of it (and shows in messages) stays small.
#[tokio::test]
async fn a_stderr_flood_is_bounded_and_calls_still_work() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"flood": TestContext::fixture(&["--stderr-flood-mb", "32"])}));
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool",
        json!({"server": "flood", "tool_name": "echo", "tool_args": {"text": "through"}}),
    )
    .await;
    assert_eq!(text(&r), "through");
    let r = call(
        &client,
        "call_tool",
        json!({"server": "flood", "tool_name": "crash"}),
    )
    .await;
    assert_eq!(error_code(&r), "upstream_closed");
    assert!(
        text(&r).len() < 16 * 1024,
        "bounded: {} bytes",
        text(&r).len()
    );
    client.cancel().await.unwrap();
}

/// A server that started a child of its own and then died: the child is ended with it when
/// Offload restarts the server, so nothing is left behind.
#[cfg(unix)]
#[tokio::test]
async fn a_dead_servers_children_are_not_left_behind() {
    let ctx = TestContext::new();
    let pid_file = ctx.work.join("child.pid");
    let flags = ["--child-pid-file", pid_file.to_str().unwrap()];
    ctx.write_servers(json!({"forks": TestContext::fixture(&flags)}));
    let client = ctx.client().await;
    let call_forks = |tool: &'static str| {
        call(
            &client,
            "call_tool",
            json!({"server": "forks", "tool_name": tool, "tool_args": {"text": "x"}}),
        )
    };
    assert_eq!(text(&call_forks("echo").await), "x");
    // The child's command line (its pid inside the server's process namespace is not its pid
    // here), saved through a private folder (not a root): linked back a moment after.
    let read_child = |before: Option<&str>| {
        let deadline = Instant::now() + Duration::from_secs(5);
        loop {
            let said = std::fs::read_to_string(&pid_file).unwrap_or_default();
            if !said.is_empty() && Some(said.as_str()) != before {
                return said;
            }
            assert!(
                Instant::now() < deadline,
                "nothing new in {}",
                pid_file.display()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    };
    let child = read_child(None);
    let alive = |command: &str| !offload_testkit::running(command).is_empty();
    assert!(alive(&child), "{child}");
    assert_eq!(error_code(&call_forks("crash").await), "upstream_closed");
    assert_eq!(text(&call_forks("echo").await), "x", "restarted");
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(&child) {
        assert!(
            Instant::now() < deadline,
            "the dead server's child {child} is still running"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let second = read_child(Some(&child));
    assert!(alive(&second), "{second}");
    client.cancel().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(&second) {
        assert!(
            Instant::now() < deadline,
            "the child {second} outlived Offload"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}
