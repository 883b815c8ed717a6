//! The overview's counts and the pause.

use super::*;

#[test]
fn overview_counts_calls_and_bytes_kept_out_of_context() {
    let t = TestContext::new();
    t.write_servers(json!({}));
    let engine = engine(&t);
    let event = |kind, bytes_kept, outcome: &str| Event {
        kind,
        tool: "t".into(),
        client: None,
        server: None,
        upstream_tool: None,
        bytes_in: 3_600,
        bytes_out: 500,
        bytes_kept,
        outcome: outcome.into(),
        ..crate::events::sample(0)
    };
    engine.events.emit(event(EventKind::Store, 1_000_000, "ok"));
    engine
        .events
        .emit(event(EventKind::FileContent, 20_000, "ok"));
    engine.events.emit(event(EventKind::FileRef, 3_000, "ok"));
    engine.events.emit(event(EventKind::Call, 0, "ok"));
    engine
        .events
        .emit(event(EventKind::Store, 9_999, "upstream_tool_error"));
    let o = overview(&engine, crate::control::Span::Day);
    assert_eq!(o.today.calls, 4, "a $file reference is part of its call");
    // The chart comes from the same reading: the same calls and bytes.
    assert_eq!(o.activity.total.calls.iter().sum::<u64>(), 4);
    assert_eq!(o.activity.total.errors.iter().sum::<u64>(), 1);
    assert_eq!(
        o.activity.total.bytes_kept.iter().sum::<u64>(),
        o.today.bytes_kept
    );
    assert_eq!(o.today.errors, 1);
    assert_eq!(o.today.bytes_kept, 1_000_000 + 20_000 + 3_000);
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

/// The headline figure, end to end: a known payload stored through a real session counts as
/// its stored file's size — not the size of the call's arguments (the bug that made it 300×
/// too small) — and so do files sent to a tool and answers stored automatically.
#[tokio::test]
async fn bytes_kept_out_of_context_is_what_was_stored_and_sent() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;

    let t = TestContext::new();
    t.write_servers(json!({"a": TestContext::fixture(&[])}));
    let engine = engine(&t);
    let (ours, theirs) = tokio::io::duplex(1 << 20);
    let served = tokio::spawn({
        let engine = engine.clone();
        async move { engine.serve(ours).await }
    });
    let client = ().serve(theirs).await.unwrap();
    let call = |tool: &str, args: Value| {
        let mut params = CallToolRequestParams::new(tool.to_owned());
        params.arguments = args.as_object().cloned();
        client.call_tool(params)
    };
    // About 1 MB stored on purpose, then about 1 MB stored automatically (over the budget).
    let stored = call(
        "call_tool_and_store",
        json!({"server": "a", "tool_name": "large", "tool_args": {"bytes": 1_000_000}, "file_format": "txt"}),
    )
    .await
    .unwrap();
    let first = stored.structured_content.unwrap()["bytes"]
        .as_u64()
        .unwrap();
    let auto = call(
        "call_tool",
        json!({"server": "a", "tool_name": "large", "tool_args": {"bytes": 500_000}}),
    )
    .await
    .unwrap();
    let second = auto.structured_content.unwrap()["bytes"].as_u64().unwrap();
    std::fs::write(
        t.root.join("rows.csv"),
        "a\n".to_owned() + &"1\n".repeat(10_000),
    )
    .unwrap();
    let sent = call(
        "call_tool_with_file_content",
        json!({"server": "a", "tool_name": "received", "file_path": "rows.csv", "data_key": "rows"}),
    )
    .await
    .unwrap();
    assert_ne!(sent.is_error, Some(true), "{sent:?}");
    let file = std::fs::metadata(t.root.join("rows.csv")).unwrap().len();
    // A small answer keeps nothing out.
    call(
        "call_tool",
        json!({"server": "a", "tool_name": "echo", "tool_args": {"text": "hi"}}),
    )
    .await
    .unwrap();
    assert!(first >= 1_000_000 && second >= 500_000, "{first} {second}");
    let o = overview(&engine, crate::control::Span::Week);
    assert_eq!(o.today.bytes_kept, first + second + file);
    drop(client);
    let _ = served.await;
    engine.shutdown().await;
}
