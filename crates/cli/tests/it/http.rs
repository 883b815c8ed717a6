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
