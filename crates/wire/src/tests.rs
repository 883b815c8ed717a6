use super::*;
use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CallToolResult, ContentBlock, JsonRpcMessage,
    ServerCapabilities, ServerConfig,
};
use rmcp::service::RequestContext;
use rmcp::{RoleClient, RoleServer, ServerHandler, ServiceExt};
use serde_json::json;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, duplex, split};

/// Answers every call with the size of its arguments (as JSON) and, when asked, `bytes` of text.
struct Echo;

impl ServerHandler for Echo {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
    }

    async fn call_tool(
        &self,
        request: CallToolRequestParams,
        _: RequestContext<RoleServer>,
    ) -> Result<CallToolResponse, ErrorData> {
        let args = Value::Object(request.arguments.unwrap_or_default());
        let text = match args.get("bytes").and_then(Value::as_u64) {
            Some(n) => "é\"\n".repeat(n as usize / 4),
            None => serde_json::to_string(&args).unwrap_or_default(),
        };
        let mut result = CallToolResult::success(vec![ContentBlock::text(text)]);
        result.structured_content = Some(json!({"rows": args.get("rows").cloned()}));
        Ok(result.into())
    }
}

/// A client and a server over in-memory pipes, both framed by `Lines`.
async fn pair() -> rmcp::service::RunningService<RoleClient, ()> {
    let (a, b) = duplex(64 * 1024);
    let (server_read, server_write) = split(a);
    let (client_read, client_write) = split(b);
    tokio::spawn(async move {
        let server = Echo
            .serve(Lines::<RoleServer, _, _>::new(server_read, server_write))
            .await
            .unwrap();
        let _ = server.waiting().await;
    });
    ().serve(Lines::<RoleClient, _, _>::new(client_read, client_write))
        .await
        .unwrap()
}

#[tokio::test]
async fn large_calls_and_results_arrive_whole() {
    let client = pair().await;
    let rows: Vec<Value> = (0..20_000)
        .map(|i| json!({"id": i, "name": format!("row \"{i}\"\n"), "tags": ["a", null, 1.5]}))
        .collect();
    let rows_json = serde_json::to_vec(&rows).unwrap();
    let splice = Splice::new(rows_json.clone()).unwrap();
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = json!({"table": "t", "rows": splice.placeholder()})
        .as_object()
        .cloned();
    let result = client.call_tool(params).await.unwrap();
    // The server saw the rows themselves, not the placeholder.
    let seen: Value = serde_json::from_str(&result.content[0].as_text().unwrap().text).unwrap();
    assert_eq!(seen, json!({"table": "t", "rows": rows}));
    assert_eq!(result.structured_content, Some(json!({"rows": rows})));

    // A result larger than the read buffer many times over, with escapes and multi-byte text.
    let mut params = CallToolRequestParams::new("echo");
    params.arguments = json!({"bytes": 4_000_000}).as_object().cloned();
    let result = client.call_tool(params).await.unwrap();
    assert_eq!(
        result.content[0].as_text().unwrap().text,
        "é\"\n".repeat(1_000_000)
    );
    client.cancel().await.unwrap();
}

/// A server-side `Lines` fed raw lines; what it answers is read back raw.
async fn raw_server(
    max_line: usize,
) -> (
    tokio::io::WriteHalf<tokio::io::DuplexStream>,
    tokio::io::BufReader<tokio::io::ReadHalf<tokio::io::DuplexStream>>,
    tokio::sync::mpsc::UnboundedReceiver<RxJsonRpcMessage<RoleServer>>,
) {
    let (a, b) = duplex(64 * 1024);
    let (read, write) = split(a);
    let (peer_read, peer_write) = split(b);
    let mut lines = Lines::<RoleServer, _, _>::new(read, write).with_max_line_length(max_line);
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Some(m) = lines.receive().await {
            if tx.send(m).is_err() {
                break;
            }
        }
    });
    (peer_write, tokio::io::BufReader::new(peer_read), rx)
}

#[tokio::test]
async fn bad_lines_are_skipped_and_unreadable_requests_answered() {
    let (mut peer, mut answers, mut received) = raw_server(200).await;
    let ping = br#"{"jsonrpc":"2.0","id":1,"method":"ping"}"#;
    let mut input = Vec::new();
    input.extend_from_slice(b"not json\n\n   \r\n");
    input.extend_from_slice(&[b'x'; 500]); // longer than the limit: dropped whole
    input.extend_from_slice(b"\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"method\":\"notifications/unknown\"}\n");
    input.extend_from_slice(b"{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":5}\n");
    input.extend_from_slice(b"\xef\xbb\xbf");
    input.extend_from_slice(ping);
    input.extend_from_slice(b"\r\n");
    peer.write_all(&input).await.unwrap();

    // The notification and the ping get through (an unknown notification is rmcp's custom
    // notification), nothing else.
    let m = received.recv().await.unwrap();
    assert!(
        matches!(&m, JsonRpcMessage::Notification(n) if format!("{n:?}").contains("notifications/unknown")),
        "{m:?}"
    );
    let m = received.recv().await.unwrap();
    assert!(
        matches!(&m, JsonRpcMessage::Request(r) if r.id == RequestId::Number(1)),
        "{m:?}"
    );
    // The request whose method is not a string is answered as an invalid request, with its id.
    let mut line = String::new();
    answers.read_line(&mut line).await.unwrap();
    let answer: Value = serde_json::from_str(&line).unwrap();
    assert_eq!(answer["id"], 9);
    assert_eq!(answer["error"]["code"], -32600, "{answer}");
    assert!(received.try_recv().is_err());
}

#[tokio::test]
async fn a_line_split_across_reads_is_whole() {
    let (mut peer, _answers, mut received) = raw_server(DEFAULT_MAX_LINE).await;
    let text = "y".repeat(300_000);
    let call = serde_json::to_vec(&json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "t", "arguments": {"text": text}}}))
    .unwrap();
    for chunk in call.chunks(7_919) {
        peer.write_all(chunk).await.unwrap();
        tokio::task::yield_now().await;
    }
    peer.write_all(b"\n").await.unwrap();
    let m = received.recv().await.unwrap();
    let JsonRpcMessage::Request(r) = m else {
        panic!("{m:?}")
    };
    let rmcp::model::ClientRequest::CallToolRequest(call) = r.request else {
        panic!("not a call")
    };
    assert_eq!(call.params.arguments.unwrap()["text"], text);
}

#[tokio::test]
async fn a_closed_transport_refuses_to_send() {
    let (a, _b) = duplex(1024);
    let (read, write) = split(a);
    let mut lines = Lines::<RoleClient, _, _>::new(read, write);
    lines.close().await.unwrap();
    let e = lines
        .send(TxJsonRpcMessage::<RoleClient>::error(
            ErrorData::invalid_request("x", None),
            None,
        ))
        .await
        .unwrap_err();
    assert_eq!(e.kind(), std::io::ErrorKind::NotConnected);
}
