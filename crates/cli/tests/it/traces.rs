//! OpenTelemetry traces through Offload served over HTTP: a client's W3C trace context (the
//! `traceparent` header, or `_meta.traceparent`) goes on to an upstream over HTTP — an official
//! Python SDK server whose OpenTelemetry propagator reads it — as a child span, in the header
//! and in `_meta`; and the spans Offload exports reach an OTLP receiver that holds them to
//! OTLP's own schema (`opentelemetry-proto`), parented as the trace says.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use offload_testkit::{Client, Recorder, TestContext, call, free_port, text};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::{Value, json};

use crate::interop::interop_dir;

/// Runs `script` of tests/interop with the venv's Python until it prints "listening" and
/// `port` accepts.
async fn python_listening(script: &str, args: &[String], port: u16) -> tokio::process::Child {
    use tokio::io::AsyncBufReadExt;
    let mut child = tokio::process::Command::new(interop_dir().join(".venv/bin/python"))
        .arg(interop_dir().join(script))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("python");
    let mut lines = tokio::io::BufReader::new(child.stdout.take().unwrap()).lines();
    while let Some(line) = lines.next_line().await.unwrap() {
        if line.contains("listening") {
            break;
        }
    }
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return child;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{script} did not listen on {port}");
}

async fn client_with(url: &str, token: &str, traceparent: Option<&str>) -> Client {
    let mut headers = HashMap::new();
    if let Some(tp) = traceparent {
        headers.insert(
            reqwest::header::HeaderName::from_static("traceparent"),
            reqwest::header::HeaderValue::from_str(tp).unwrap(),
        );
    }
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url)
            .auth_header(token)
            .custom_headers(headers),
    );
    Recorder::default()
        .serve(transport)
        .await
        .expect("MCP over HTTP")
}

/// What the upstream said it saw.
fn seen(r: &rmcp::model::CallToolResult) -> Value {
    assert_ne!(r.is_error, Some(true), "{}", text(r));
    serde_json::from_str(&text(r)).expect("trace_seen answers JSON")
}

/// The spans received so far, flattened.
fn spans(received: &std::path::Path) -> Vec<Value> {
    std::fs::read_to_string(received)
        .unwrap_or_default()
        .lines()
        .flat_map(|l| {
            let doc: Value = serde_json::from_str(l).unwrap();
            let mut out = Vec::new();
            for rs in doc["resourceSpans"].as_array().unwrap() {
                let service = rs["resource"]["attributes"]
                    .as_array()
                    .unwrap()
                    .iter()
                    .find(|a| a["key"] == "service.name")
                    .map(|a| a["value"]["stringValue"].clone());
                assert_eq!(service, Some(json!("offload")));
                for ss in rs["scopeSpans"].as_array().unwrap() {
                    out.extend(ss["spans"].as_array().unwrap().iter().cloned());
                }
            }
            out
        })
        .collect()
}

/// Waits (at most 10 s) until the spans of `trace` number `n`.
async fn spans_of(received: &std::path::Path, trace: &str, n: usize) -> Vec<Value> {
    let since = Instant::now();
    loop {
        let found: Vec<Value> = spans(received)
            .into_iter()
            .filter(|s| s["traceId"] == trace)
            .collect();
        if found.len() >= n {
            assert_eq!(found.len(), n, "{found:#?}");
            return found;
        }
        assert!(
            since.elapsed() < Duration::from_secs(10),
            "{} of {n} spans of {trace} arrived: {found:#?}",
            found.len()
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
}

/// The two spans of one traced call through the upstream: Offload's (server, child of the
/// client's span `client_span`) and its request upstream (client, child of Offload's), whose id
/// is the one the upstream received. Checks them and the upstream's view.
fn check_call(spans: &[Value], seen: &Value, trace: &str, client_span: Option<&str>, tool: &str) {
    let serving = spans
        .iter()
        .find(|s| s["kind"] == 2)
        .expect("a server span");
    let upstream = spans
        .iter()
        .find(|s| s["kind"] == 3)
        .expect("a client span");
    assert_eq!(serving["name"], format!("tools/call {tool}"));
    assert_eq!(
        serving.get("parentSpanId").and_then(Value::as_str),
        client_span,
        "Offload's span is the client's span's child"
    );
    assert_eq!(upstream["name"], "tools/call trace_seen");
    assert_eq!(upstream["parentSpanId"], serving["spanId"]);
    for s in [serving, upstream] {
        assert_eq!(s["status"]["code"], 1, "{s}");
        let start: u128 = s["startTimeUnixNano"].as_str().unwrap().parse().unwrap();
        let end: u128 = s["endTimeUnixNano"].as_str().unwrap().parse().unwrap();
        assert!(start > 0 && end >= start);
    }
    let attribute = |s: &Value, key: &str| {
        s["attributes"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["key"] == key)
            .map(|a| a["value"]["stringValue"].clone())
    };
    assert_eq!(attribute(upstream, "offload.server"), Some(json!("traced")));
    assert_eq!(
        attribute(upstream, "gen_ai.tool.name"),
        Some(json!("trace_seen"))
    );
    // The upstream got the context of Offload's request to it, in the header and in `_meta`,
    // and OpenTelemetry's propagator reads it.
    let sent = format!("00-{trace}-{}-01", upstream["spanId"].as_str().unwrap());
    assert_eq!(seen["header"], sent);
    assert_eq!(seen["meta"], sent);
    assert_eq!(seen["otel_trace_id"], trace);
    assert_eq!(seen["otel_span_id"], upstream["spanId"]);
}

#[tokio::test]
#[ignore = "needs the interop venv: run scripts/setup-interop.sh"]
async fn a_clients_trace_goes_on_through_offload_to_an_http_upstream_and_to_the_collector() {
    let work = tempfile::tempdir().unwrap();
    let received = work.path().join("spans.jsonl");
    let (up_port, otlp_port) = (free_port(), free_port());
    let _upstream = python_listening("trace_server.py", &[up_port.to_string()], up_port).await;
    let _receiver = python_listening(
        "otlp_receiver.py",
        &[otlp_port.to_string(), received.display().to_string()],
        otlp_port,
    )
    .await;

    let ctx = TestContext::new();
    ctx.write_config(json!({"roots": [ctx.root], "mcpServers": {
        "traced": {"type": "http", "url": format!("http://127.0.0.1:{up_port}/mcp")},
    }}));
    let token = ctx.token("agent", "read,call");
    let mut cmd = ctx.host_command();
    cmd.env(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        format!("http://127.0.0.1:{otlp_port}"),
    );
    let (_host, url) = ctx.http_host_from(cmd, "127.0.0.1:0", &[]).await;

    // 1. The client's `traceparent` header, a direct call (the default mode lists the
    //    upstream's one tool directly).
    let trace = "4bf92f3577b34da6a3ce929d0e0e4736";
    let parent = "00f067aa0ba902b7";
    let client = client_with(&url, &token, Some(&format!("00-{trace}-{parent}-01"))).await;
    let listed = client.list_all_tools().await.unwrap();
    assert!(listed.iter().any(|t| t.name == "traced__trace_seen"));
    let r = call(&client, "traced__trace_seen", json!({})).await;
    let found = spans_of(&received, trace, 2).await;
    check_call(&found, &seen(&r), trace, Some(parent), "traced__trace_seen");
    let _ = client.cancel().await;

    // 2. `_meta.traceparent` (SEP-414), through `call_tool`.
    let trace = "0af7651916cd43dd8448eb211c80319c";
    let parent = "b7ad6b7169203331";
    let client = client_with(&url, &token, None).await;
    let mut params = rmcp::model::CallToolRequestParams::new("call_tool").with_arguments(
        json!({"server": "traced", "tool_name": "trace_seen"})
            .as_object()
            .unwrap()
            .clone(),
    );
    params
        .meta
        .get_or_insert_with(Default::default)
        .set_traceparent(format!("00-{trace}-{parent}-01"));
    let r = client.call_tool(params).await.unwrap();
    let found = spans_of(&received, trace, 2).await;
    check_call(&found, &seen(&r), trace, Some(parent), "call_tool");

    // 3. No context from the client: while spans are exported, the call starts a trace.
    let r = call(&client, "traced__trace_seen", json!({})).await;
    let seen = seen(&r);
    let header = seen["header"].as_str().unwrap();
    let trace = header
        .split('-')
        .nth(1)
        .expect("a traceparent went upstream");
    assert!(
        ![
            "4bf92f3577b34da6a3ce929d0e0e4736",
            "0af7651916cd43dd8448eb211c80319c"
        ]
        .contains(&trace)
    );
    let found = spans_of(&received, trace, 2).await;
    check_call(&found, &seen, trace, None, "traced__trace_seen");

    // A malformed `traceparent` is not continued (W3C: start afresh), and the call works.
    let client2 = client_with(&url, &token, Some("00-XYZ-not-a-context-01")).await;
    let r = call(&client2, "traced__trace_seen", json!({})).await;
    let fresh = self::seen(&r);
    assert!(!fresh["header"].as_str().unwrap().contains("XYZ"));
    assert_eq!(fresh["header"].as_str().unwrap().len(), 55);
    let _ = client2.cancel().await;
    let _ = client.cancel().await;
}

/// A collector that accepts connections and never answers (a hung peer) costs the calls nothing:
/// spans wait in their own queue, the calls do not wait for them.
#[tokio::test]
async fn a_hung_collector_never_delays_a_call() {
    // Accepts, reads nothing, answers nothing; counts who came.
    let hung = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = hung.local_addr().unwrap().port();
    let came = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let counted = came.clone();
    let _collector = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = hung.accept().await {
            counted.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            held.push(conn);
        }
    });
    let ctx = TestContext::new();
    ctx.write_config(json!({"roots": [ctx.root], "mcpServers": {"fx": TestContext::fixture(&[])}}));
    let token = ctx.token("agent", "read,call");
    let mut cmd = ctx.host_command();
    cmd.env(
        "OTEL_EXPORTER_OTLP_ENDPOINT",
        format!("http://127.0.0.1:{port}"),
    );
    let (_host, url) = ctx.http_host_from(cmd, "127.0.0.1:0", &[]).await;
    let client = client_with(
        &url,
        &token,
        Some("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"),
    )
    .await;
    // Calls for 3 s, while the exporter's first batches hang on the collector.
    let started = Instant::now();
    let (mut calls, mut slowest) = (0, Duration::ZERO);
    while started.elapsed() < Duration::from_secs(3) {
        let t = Instant::now();
        let r = call(&client, "fx__echo", json!({"text": format!("n{calls}")})).await;
        assert_eq!(text(&r), format!("n{calls}"));
        slowest = slowest.max(t.elapsed());
        calls += 1;
    }
    assert!(
        came.load(std::sync::atomic::Ordering::SeqCst) >= 1,
        "the exporter tried the collector"
    );
    assert!(
        slowest < Duration::from_secs(2),
        "the slowest of {calls} traced calls took {slowest:?} with the collector hung"
    );
    let _ = client.cancel().await;
}
