use std::time::Duration;

use offload_testkit::wire::Wire;
use offload_testkit::{TestContext, call, error_code, structured, text};
use rmcp::model::{CallToolRequest, CallToolRequestParams, ClientRequest};
use rmcp::service::PeerRequestOptions;
use serde_json::json;

use crate::{fx, with_fixture};

#[tokio::test]
async fn forwards_calls_on_one_kept_open_connection() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    assert_eq!(
        text(&fx(&client, "echo", json!({"text": "héllo"})).await),
        "héllo"
    );
    let counts: Vec<String> = futures_counts(&client).await;
    assert_eq!(
        counts,
        ["1", "2", "3"],
        "the upstream process is kept between calls"
    );
    let pid1 = text(&fx(&client, "pid", json!({})).await);
    let pid2 = text(&fx(&client, "pid", json!({})).await);
    assert_eq!(pid1, pid2);
    client.cancel().await.unwrap();
}

async fn futures_counts(client: &offload_testkit::Client) -> Vec<String> {
    let mut v = Vec::new();
    for _ in 0..3 {
        v.push(text(&fx(client, "counter", json!({})).await));
    }
    v
}

#[tokio::test]
async fn upstream_results_pass_through_unchanged() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let r = fx(
        &client,
        "fail",
        json!({"message": "the database is locked"}),
    )
    .await;
    assert_eq!(r.is_error, Some(true));
    assert_eq!(text(&r), "the database is locked");
    assert!(
        r.structured_content.is_none(),
        "an upstream isError is not rewritten"
    );

    let r = fx(&client, "structured", json!({"n": 2})).await;
    assert_eq!(
        structured(&r)["items"][1],
        json!({"id": 1, "name": "item 1"})
    );

    // Models often send tool_args as a JSON string.
    let r = call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": "{\"text\": \"s\"}"}),
    )
    .await;
    assert_eq!(text(&r), "s");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn unknown_server_and_tool_name_the_closest() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool",
        json!({"server": "fix", "tool_name": "echo"}),
    )
    .await;
    assert_eq!(error_code(&r), "unknown_server");
    assert!(text(&r).contains("did you mean 'fx'"), "{}", text(&r));
    let r = fx(&client, "cuonter", json!({})).await;
    assert_eq!(error_code(&r), "unknown_tool");
    assert_eq!(structured(&r)["error"]["suggestions"][0], "counter");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn upstream_progress_reaches_the_client() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let r = fx(&client, "slow", json!({"ms": 300, "steps": 3})).await;
    assert_eq!(text(&r), "slept 300 ms");
    // rmcp's client attaches a progress token to every request; Offload maps the upstream's
    // notifications back to it.
    let progress = client.service().progress.lock().unwrap().clone();
    assert_eq!(progress.len(), 3, "{progress:?}");
    assert_eq!(progress[2].progress, 3.0);
    assert_eq!(progress[2].message.as_deref(), Some("step 3 of 3"));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn client_cancellation_is_forwarded_upstream() {
    let ctx = with_fixture();
    let client = ctx.client().await;
    let mut params = CallToolRequestParams::new("call_tool");
    params.arguments =
        json!({"server": "fx", "tool_name": "slow", "tool_args": {"ms": 10000, "steps": 100}})
            .as_object()
            .cloned();
    let handle = client
        .peer()
        .send_request_with_option(
            ClientRequest::CallToolRequest(CallToolRequest::new(params)),
            PeerRequestOptions::no_options(),
        )
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    handle
        .cancel(Some("user pressed stop".into()))
        .await
        .unwrap();
    let mut cancelled = 0;
    for _ in 0..50 {
        let stats: serde_json::Value =
            serde_json::from_str(&text(&fx(&client, "stats", json!({})).await)).unwrap();
        cancelled = stats["cancelled"].as_u64().unwrap();
        if cancelled == 1 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert_eq!(cancelled, 1, "the upstream saw the cancellation");
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn upstreams_get_only_their_configured_environment() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"fx": {
        "command": offload_testkit::target_bin("offload-fixture"),
        "env": {"TOKEN": "${env:OFFLOAD_TEST_TOKEN}", "PLAIN": "p"}
    }}));
    let mut cmd = ctx.offload_command(&[]);
    cmd.env("OFFLOAD_TEST_TOKEN", "t0k3n")
        .env("OFFLOAD_TEST_LEAK", "leak");
    let client = offload_testkit::connect(cmd).await;
    let value = |name: &str| {
        let client = &client;
        let name = name.to_owned();
        async move { structured(&fx(client, "env", json!({"name": name})).await)["value"].clone() }
    };
    assert_eq!(value("TOKEN").await, "t0k3n");
    assert_eq!(value("PLAIN").await, "p");
    assert_eq!(value("OFFLOAD_TEST_LEAK").await, serde_json::Value::Null);
    assert_eq!(value("OFFLOAD_TEST_TOKEN").await, serde_json::Value::Null);
    assert!(value("PATH").await.as_str().is_some_and(|p| !p.is_empty()));
    assert!(value("HOME").await.is_string());
    assert!(
        !ctx.log().contains("t0k3n"),
        "the secret value is not logged"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn a_missing_secret_is_a_clear_error_for_that_server_only() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({
        "fx": TestContext::fixture(&[]),
        "needs_secret": {"command": offload_testkit::target_bin("offload-fixture"),
                         "env": {"K": "${keyring:some_api_key}"}},
    }));
    let client = ctx.client().await;
    let r = call(
        &client,
        "call_tool",
        json!({"server": "needs_secret", "tool_name": "echo", "tool_args": {"text": "x"}}),
    )
    .await;
    assert_eq!(error_code(&r), "secret_unavailable");
    assert!(text(&r).contains("keyring:some_api_key"), "{}", text(&r));
    assert_eq!(
        text(&fx(&client, "echo", json!({"text": "ok"})).await),
        "ok"
    );
    client.cancel().await.unwrap();
}

/// On the wire, every progress notification of a call comes before its response.
#[tokio::test]
async fn progress_notifications_precede_the_response_on_the_wire() {
    let ctx = with_fixture();
    let mut wire = Wire::start(&ctx).await;
    let args = json!({"server": "fx", "tool_name": "slow", "tool_args": {"ms": 50, "steps": 5}});
    wire.call(2, "call_tool", args, Some("tok")).await;
    let (_, progress) = wire.answer(2, "tok").await;
    let seen: Vec<f64> = progress.into_iter().map(|(p, _)| p).collect();
    assert_eq!(
        seen,
        [1.0, 2.0, 3.0, 4.0, 5.0],
        "all before the response, in order"
    );
}
