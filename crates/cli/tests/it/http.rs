//! `offload serve --http`: the MCP surface over streamable HTTP, checked with rmcp's HTTP client
//! and raw requests — access tokens and their scopes, revocation, Host/Origin validation (DNS
//! rebinding), the loopback opt-out, TLS. The official SDKs' HTTP clients are in `published`.

use offload_testkit::{Recorder, TestContext, call, error_code, text};
use rmcp::ServiceExt;
use rmcp::transport::StreamableHttpClientTransport;
use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;
use serde_json::json;

use crate::with_fixture;

const INITIALIZE: &str = r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"raw","version":"0"}}}"#;

pub(crate) async fn http_client(url: &str, token: &str) -> offload_testkit::Client {
    let transport = StreamableHttpClientTransport::from_config(
        StreamableHttpClientTransportConfig::with_uri(url).auth_header(token),
    );
    Recorder::default()
        .serve(transport)
        .await
        .expect("MCP handshake over HTTP")
}

/// What `/metrics` of the server at `base` (`http://host:port`) answers `token`.
pub(crate) async fn metrics(base: &str, token: &str) -> String {
    reqwest::Client::new()
        .get(format!("{base}/metrics"))
        .bearer_auth(token)
        .send()
        .await
        .expect("HTTP request")
        .text()
        .await
        .expect("a text answer")
}

/// POSTs an initialize request with `headers`; the status and the response's headers.
async fn post(url: &str, headers: &[(&str, &str)]) -> (u16, reqwest::header::HeaderMap) {
    let mut request = reqwest::Client::new()
        .post(url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .body(INITIALIZE);
    for (k, v) in headers {
        request = request.header(*k, *v);
    }
    let response = request.send().await.expect("HTTP request");
    (response.status().as_u16(), response.headers().clone())
}

#[tokio::test]
async fn tokens_decide_who_may_do_what_and_a_revoked_one_stops_at_once() {
    let ctx = with_fixture();
    std::fs::write(ctx.root.join("notes.txt"), "one\ntwo\n").unwrap();
    let all = ctx.token("all", "read,call,store");
    let reader = ctx.token("reader", "read");
    let (_host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
    assert!(
        url.starts_with("http://127.0.0.1:") && url.ends_with("/mcp"),
        "{url}"
    );

    // No token, a malformed header, an unknown token: 401 with a Bearer challenge.
    let (status, headers) = post(&url, &[]).await;
    assert_eq!(status, 401);
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap()
            .starts_with("Bearer")
    );
    let (status, _) = post(&url, &[("authorization", "Basic dXNlcjpwYXNz")]).await;
    assert_eq!(status, 401);
    let (status, headers) = post(&url, &[("authorization", "Bearer offload_0000")]).await;
    assert_eq!(status, 401);
    assert!(
        headers["www-authenticate"]
            .to_str()
            .unwrap()
            .contains("invalid_token")
    );
    let (status, _) = post(&url, &[("authorization", &format!("Bearer {all}"))]).await;
    assert_eq!(status, 200);

    // A full token calls upstream tools and stores.
    let client = http_client(&url, &all).await;
    let r = crate::fx(&client, "echo", json!({"text": "over http"})).await;
    assert!(text(&r).contains("over http"), "{r:?}");
    let r = call(
        &client,
        "call_tool_and_store",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "kept"}, "filename": "kept.json"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{r:?}");

    // A read-only token reads files, is refused calls and stores (logged), and lists nothing
    // it may not use.
    let read_only = http_client(&url, &reader).await;
    let r = call(
        &read_only,
        "read_file",
        json!({"path": ctx.root.join("notes.txt")}),
    )
    .await;
    assert!(text(&r).contains("two"), "{r:?}");
    let r = crate::fx(&read_only, "echo", json!({"text": "x"})).await;
    assert_eq!(error_code(&r), "forbidden", "{r:?}");
    assert!(text(&r).contains("call"), "{}", text(&r));
    let r = call(
        &read_only,
        "call_tool_and_store",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": "x"}}),
    )
    .await;
    assert_eq!(error_code(&r), "forbidden");
    assert!(read_only.list_all_resources().await.is_ok());
    let log = ctx.log();
    assert!(
        log.contains("token:reader") && log.contains("refused"),
        "{log}"
    );
    assert!(
        !log.contains(&reader) && !log.contains(&all),
        "a token reached the log"
    );

    // Revoked in another process: the very next request is refused.
    let out = ctx.run_offload(&["token", "revoke", "all"]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut params = rmcp::model::CallToolRequestParams::new("list_allowed_directories");
    params.arguments = Some(Default::default());
    assert!(
        client.call_tool(params).await.is_err(),
        "a revoked token still works"
    );
    let (status, _) = post(&url, &[("authorization", &format!("Bearer {all}"))]).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn foreign_hosts_and_origins_are_refused() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    let token = ctx.token("t", "read");
    let (_host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
    let auth = format!("Bearer {token}");
    let port = url.split(':').nth(2).unwrap().trim_end_matches("/mcp");
    // A DNS-rebinding page: the browser sends the attacker's host name and origin.
    let evil_host = format!("evil.example:{port}");
    let (status, _) = post(&url, &[("authorization", &auth), ("host", &evil_host)]).await;
    assert_eq!(status, 403);
    let (status, _) = post(
        &url,
        &[("authorization", &auth), ("origin", "http://evil.example")],
    )
    .await;
    assert_eq!(status, 403);
    let same_machine = format!("http://127.0.0.1:{port}");
    let (status, _) = post(&url, &[("authorization", &auth), ("origin", &same_machine)]).await;
    assert_eq!(status, 200, "a page on this machine's loopback origin");
    let localhost = format!("localhost:{port}");
    let (status, _) = post(&url, &[("authorization", &auth), ("host", &localhost)]).await;
    assert_eq!(status, 200);
    let (status, _) = post(&url.replace("/mcp", "/other"), &[("authorization", &auth)]).await;
    assert_eq!(status, 404);
}

#[tokio::test]
async fn without_tokens_only_on_loopback_and_only_when_asked() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    let out = ctx
        .host_command()
        .args(["--http", "0.0.0.0:0", "--allow-unauthenticated-loopback"])
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(
        ctx.log().contains("only applies to a loopback address"),
        "{}",
        ctx.log()
    );

    let (_host, url) = ctx
        .http_host("127.0.0.1:0", &["--allow-unauthenticated-loopback"])
        .await;
    let (status, _) = post(&url, &[]).await;
    assert_eq!(status, 200);
    // A token that is not ours is still refused: open means "no token", not "any token".
    let (status, _) = post(&url, &[("authorization", "Bearer offload_bad")]).await;
    assert_eq!(status, 401);
}

#[tokio::test]
async fn https_with_the_users_certificate() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    let (ca, cert, key) = make_certificate(&ctx.home);
    let token = ctx.token("t", "read");
    let (_host, url) = ctx
        .http_host(
            "127.0.0.1:0",
            &[
                "--tls-cert",
                cert.to_str().unwrap(),
                "--tls-key",
                key.to_str().unwrap(),
            ],
        )
        .await;
    assert!(url.starts_with("https://"), "{url}");
    let client = reqwest::Client::builder()
        .add_root_certificate(reqwest::Certificate::from_pem(&std::fs::read(&ca).unwrap()).unwrap())
        .build()
        .unwrap();
    let response = client
        .post(&url)
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("authorization", format!("Bearer {token}"))
        .body(INITIALIZE)
        .send()
        .await
        .expect("HTTPS request");
    assert_eq!(response.status().as_u16(), 200);
    // Plain HTTP to the TLS port gets no MCP answer.
    let plain = reqwest::Client::new()
        .post(url.replace("https://", "http://"))
        .body(INITIALIZE)
        .send()
        .await;
    assert!(plain.is_err() || plain.unwrap().status().as_u16() >= 400);

    // A key that is not PEM is a clear error at start.
    std::fs::write(&key, "not a key").unwrap();
    let out = ctx
        .host_command()
        .args([
            "--http",
            "127.0.0.1:0",
            "--tls-cert",
            cert.to_str().unwrap(),
            "--tls-key",
            key.to_str().unwrap(),
        ])
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(
        ctx.log().contains("cannot read the private key"),
        "{}",
        ctx.log()
    );
}

/// A CA and a certificate for localhost/127.0.0.1 signed by it (openssl): (ca, cert, key).
fn make_certificate(
    dir: &std::path::Path,
) -> (std::path::PathBuf, std::path::PathBuf, std::path::PathBuf) {
    let p = |name: &str| dir.join(name);
    let ext = p("leaf.ext");
    std::fs::write(
        &ext,
        "subjectAltName=DNS:localhost,IP:127.0.0.1\nbasicConstraints=CA:FALSE\n",
    )
    .unwrap();
    let steps: [Vec<std::ffi::OsString>; 3] = [
        [
            "req",
            "-x509",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-days",
            "2",
            "-subj",
            "/CN=Offload test CA",
            "-keyout",
        ]
        .iter()
        .map(Into::into)
        .chain([p("ca.key").into(), "-out".into(), p("ca.pem").into()])
        .collect(),
        [
            "req",
            "-newkey",
            "ec",
            "-pkeyopt",
            "ec_paramgen_curve:P-256",
            "-nodes",
            "-subj",
            "/CN=localhost",
            "-keyout",
        ]
        .iter()
        .map(Into::into)
        .chain([p("key.pem").into(), "-out".into(), p("leaf.csr").into()])
        .collect(),
        ["x509", "-req", "-days", "2", "-in"]
            .iter()
            .map(Into::into)
            .chain([
                p("leaf.csr").into(),
                "-CA".into(),
                p("ca.pem").into(),
                "-CAkey".into(),
                p("ca.key").into(),
                "-CAcreateserial".into(),
                "-extfile".into(),
                ext.into(),
                "-out".into(),
                p("cert.pem").into(),
            ])
            .collect(),
    ];
    for args in steps {
        let out = std::process::Command::new("openssl")
            .args(&args)
            .output()
            .expect("openssl");
        assert!(
            out.status.success(),
            "openssl {args:?}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
    (p("ca.pem"), p("cert.pem"), p("key.pem"))
}

/// What an orchestrator and Prometheus see of a replica: `/healthz` and `/readyz` answer without
/// a token; `/metrics` needs one and counts the calls a real client made in the default mode
/// (a call, a stored answer, a query of it, a tool that does not exist) with the bytes
/// kept out of the model's context equal to the stored file's size.
#[tokio::test]
async fn orchestrators_see_health_readiness_and_the_calls_counted() {
    let ctx = with_fixture();
    let token = ctx.token("scraper", "read,call,store");
    let (_host, url) = ctx.http_host("127.0.0.1:0", &[]).await;
    let base = url.trim_end_matches("/mcp");
    let http = reqwest::Client::new();
    let get = |path: &str, token: Option<&str>| {
        let mut request = http.get(format!("{base}{path}"));
        if let Some(t) = token {
            request = request.bearer_auth(t);
        }
        async move {
            let response = request.send().await.expect("HTTP request");
            let status = response.status().as_u16();
            let kind = response
                .headers()
                .get("content-type")
                .map(|v| v.to_str().unwrap().to_owned())
                .unwrap_or_default();
            (status, kind, response.text().await.unwrap())
        }
    };
    assert_eq!(get("/healthz", None).await.2, "ok\n");
    let (status, _, body) = get("/readyz", None).await;
    assert_eq!((status, body.as_str()), (200, "ready\n"));
    let (status, _, body) = get("/metrics", None).await;
    assert_eq!(status, 401, "{body}");
    assert!(!body.contains("offload_calls"), "{body}");
    let (status, _, _) = get("/metrics", Some("offload_0000")).await;
    assert_eq!(status, 401);

    // A client walks in the default mode: the upstream's echo through call_tool, an answer
    // stored, a query of the stored file, a tool the upstream lacks.
    let client = http_client(&url, &token).await;
    let r = crate::fx(&client, "echo", json!({"text": "hi"})).await;
    assert!(text(&r).contains("hi"), "{r:?}");
    let r = call(
        &client,
        "call_tool_and_store",
        json!({"server": "fx", "tool_name": "rows", "tool_args": {"n": 20}, "filename": "rows.json"}),
    )
    .await;
    let stored = r.structured_content.clone().expect("a stored answer");
    let (path, bytes) = (
        stored["path"].as_str().unwrap().to_owned(),
        stored["bytes"].as_u64().unwrap(),
    );
    assert_eq!(std::fs::metadata(&path).unwrap().len(), bytes);
    let r = call(
        &client,
        "query_file",
        json!({"path": path, "sql": "SELECT count(*) AS n FROM data"}),
    )
    .await;
    assert!(text(&r).contains("20"), "{}", text(&r));
    let r = crate::fx(&client, "no_such_tool", json!({})).await;
    assert_eq!(error_code(&r), "unknown_tool", "{r:?}");

    let (status, kind, metrics) = get("/metrics", Some(&token)).await;
    assert_eq!(status, 200);
    assert!(kind.starts_with("application/openmetrics-text"), "{kind}");
    let value = |series: &str| -> f64 {
        metrics
            .lines()
            .find_map(|l| l.strip_prefix(series)?.strip_prefix(' '))
            .unwrap_or_else(|| panic!("no {series} in\n{metrics}"))
            .parse()
            .unwrap()
    };
    assert_eq!(
        value(r#"offload_calls_total{server="fx",tool="echo",outcome="ok"}"#),
        1.0
    );
    assert_eq!(
        value(r#"offload_calls_total{server="fx",tool="rows",outcome="ok"}"#),
        1.0
    );
    assert_eq!(
        value(r#"offload_calls_total{server="offload",tool="query_file",outcome="ok"}"#),
        1.0
    );
    assert_eq!(
        value(r#"offload_calls_total{server="fx",tool="unknown",outcome="unknown_tool"}"#),
        1.0
    );
    assert_eq!(
        value(r#"offload_call_duration_seconds_count{server="fx"}"#),
        3.0
    );
    assert_eq!(
        value(r#"offload_bytes_kept_out_of_context_total{server="fx"}"#),
        bytes as f64
    );
    assert_eq!(
        value(r#"offload_server_state{server="fx",state="ready"}"#),
        1.0
    );
    assert!(!metrics.contains(&token), "a token in the metrics");
}
