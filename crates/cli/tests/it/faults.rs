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
    let r = fx(&client, "slow", json!({"ms": 20000, "steps": 200})).await;
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
    let upstream_pid: u32 = text(&fx(&client, "pid", json!({})).await).parse().unwrap();
    assert!(process_alive(upstream_pid));
    // Closing our end of the pipes is all an MCP client does when it quits.
    let mut client = client;
    client.close().await.unwrap();
    let deadline = Instant::now() + Duration::from_secs(10);
    while (process_alive(offload_pid) || process_alive(upstream_pid)) && Instant::now() < deadline {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(!process_alive(offload_pid), "offload exited");
    assert!(
        !process_alive(upstream_pid),
        "the upstream was terminated with it"
    );
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
    assert_eq!(
        text(&fx(&client, "large", json!({"bytes": 50_000})).await).len(),
        50_000,
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
