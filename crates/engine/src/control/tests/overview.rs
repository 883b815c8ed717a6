//! The overview's counts and the pause.

use super::*;

#[test]
fn overview_counts_calls_and_bytes_kept_out_of_context() {
    let t = TestContext::new();
    t.write_servers(json!({}));
    let engine = engine(&t);
    let event = |kind, bytes_in, bytes_out, outcome: &str| Event {
        kind,
        tool: "t".into(),
        client: None,
        server: None,
        upstream_tool: None,
        bytes_in,
        bytes_out,
        outcome: outcome.into(),
        ..crate::events::sample(0)
    };
    engine
        .events
        .emit(event(EventKind::Store, 1_000_000, 500, "ok"));
    engine
        .events
        .emit(event(EventKind::FileContent, 20_000, 100, "ok"));
    engine
        .events
        .emit(event(EventKind::FileRef, 3_000, 0, "ok"));
    engine.events.emit(event(EventKind::Call, 50, 40, "ok"));
    engine
        .events
        .emit(event(EventKind::Store, 9_999, 100, "upstream_tool_error"));
    let o = overview(&engine);
    assert_eq!(o.today.calls, 4, "a $file reference is part of its call");
    assert_eq!(o.today.errors, 1);
    assert_eq!(o.today.bytes_kept, 999_500 + 20_000 + 3_000);
    assert_eq!(o.recorded, o.today);
    assert_eq!(o.status.clients, 0);
    assert!(!o.status.paused);
    engine.set_paused(true);
    assert!(status(&engine).paused);
}

#[tokio::test]
async fn while_paused_upstream_tools_are_not_called() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;

    let t = TestContext::new();
    t.write_servers(json!({"a": TestContext::fixture(&[])}));
    let engine = engine(&t);
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn({
        let engine = engine.clone();
        async move { engine.serve(ours).await }
    });
    let client = ().serve(theirs).await.unwrap();
    let call = |text: &str| {
        let args = json!({"server": "a", "tool_name": "echo", "tool_args": {"text": text}});
        CallToolRequestParams::new("call_tool").with_arguments(args.as_object().unwrap().clone())
    };

    engine.set_paused(true);
    let paused = client.call_tool(call("hi")).await.unwrap();
    assert_eq!(paused.is_error, Some(true));
    let error = &paused.structured_content.unwrap()["error"];
    assert_eq!(error["code"], "paused");
    assert_eq!(
        status(&engine).servers.ready,
        0,
        "the server was not even started"
    );

    engine.set_paused(false);
    let resumed = client.call_tool(call("hi")).await.unwrap();
    assert_ne!(resumed.is_error, Some(true), "{resumed:?}");
    assert_eq!(status(&engine).clients, 1);
    client.cancel().await.unwrap();
    served.await.unwrap().unwrap();
    engine.shutdown().await;
}
