//! URLs read by every file tool, `call_tool_with_file_content`, `$file` and `query_file`,
//! through a real `offload mcp` session and a real (local) HTTP server: what is allowed is
//! fetched into a stored download and read as that file; what is not — a URL outside the
//! patterns, a redirect out of them, a host on a private address behind a wildcard, a body
//! too slow or too big — is refused with a clear code and leaves no file behind.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use offload_testkit::{TestContext, call, error_code, structured, text};
use serde_json::json;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;

/// A small HTTP/1.1 server on 127.0.0.1 with the answers the tests need, counting the
/// requests per path.
struct Site {
    port: u16,
    hits: Arc<Mutex<HashMap<String, usize>>>,
}

impl Site {
    async fn start(csv: String) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let port = listener.local_addr().unwrap().port();
        let hits: Arc<Mutex<HashMap<String, usize>>> = Arc::default();
        let counted = hits.clone();
        let csv = Arc::new(csv);
        tokio::spawn(async move {
            loop {
                let Ok((mut stream, _)) = listener.accept().await else {
                    return;
                };
                let (counted, csv) = (counted.clone(), csv.clone());
                tokio::spawn(async move {
                    let mut request = Vec::new();
                    let mut buf = [0u8; 4096];
                    while !request.windows(4).any(|w| w == b"\r\n\r\n") {
                        match stream.read(&mut buf).await {
                            Ok(0) | Err(_) => return,
                            Ok(n) => request.extend_from_slice(&buf[..n]),
                        }
                    }
                    let line = String::from_utf8_lossy(&request)
                        .lines()
                        .next()
                        .unwrap_or("")
                        .to_owned();
                    let path = line.split(' ').nth(1).unwrap_or("/").to_owned();
                    *counted.lock().unwrap().entry(path.clone()).or_default() += 1;
                    let _ = answer(&mut stream, &path, &csv, port).await;
                });
            }
        });
        Self { port, hits }
    }

    fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    fn hits(&self, path: &str) -> usize {
        self.hits.lock().unwrap().get(path).copied().unwrap_or(0)
    }
}

async fn answer(
    stream: &mut tokio::net::TcpStream,
    path: &str,
    csv: &str,
    port: u16,
) -> std::io::Result<()> {
    let whole = |status: &str, kind: &str, body: &[u8]| {
        let mut out = format!(
            "HTTP/1.1 {status}\r\nContent-Type: {kind}\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            body.len()
        )
        .into_bytes();
        out.extend_from_slice(body);
        out
    };
    let redirect = |to: &str| {
        format!(
            "HTTP/1.1 302 Found\r\nLocation: {to}\r\nContent-Length: 0\r\nConnection: close\r\n\r\n"
        )
        .into_bytes()
    };
    match path {
        "/data.csv" => {
            stream
                .write_all(&whole("200 OK", "text/csv", csv.as_bytes()))
                .await
        }
        "/api/args" => {
            let body = br#"{"text": "from a URL"}"#;
            stream
                .write_all(&whole("200 OK", "application/json; charset=utf-8", body))
                .await
        }
        "/secret" => {
            stream
                .write_all(&whole("200 OK", "text/plain", b"the router's admin page"))
                .await
        }
        "/missing" => {
            stream
                .write_all(&whole("404 Not Found", "text/plain", b"no"))
                .await
        }
        "/redirect-in" => stream.write_all(&redirect("/data.csv")).await,
        "/redirect-out" => {
            stream
                .write_all(&redirect("https://example.invalid/steal"))
                .await
        }
        "/redirect-private" => {
            stream
                .write_all(&redirect(&format!("http://localhost:{port}/secret")))
                .await
        }
        "/redirect-loop" => stream.write_all(&redirect("/redirect-loop")).await,
        "/slow" => {
            stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 1000\r\n\r\n",
                )
                .await?;
            for _ in 0..1000 {
                stream.write_all(b"x").await?;
                tokio::time::sleep(Duration::from_millis(200)).await;
            }
            Ok(())
        }
        "/huge" => {
            // Announced as 10 MB: refused before the body is read.
            stream
                .write_all(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 10000000\r\n\r\n")
                .await?;
            stream.write_all(&vec![b'y'; 64 * 1024]).await
        }
        "/endless" => {
            // No length: read until the limit stops it.
            stream
                .write_all(
                    b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nConnection: close\r\n\r\n",
                )
                .await?;
            let chunk = vec![b'z'; 64 * 1024];
            for _ in 0..10_000 {
                stream.write_all(&chunk).await?;
            }
            Ok(())
        }
        _ => {
            stream
                .write_all(&whole("404 Not Found", "text/plain", b"unknown"))
                .await
        }
    }
}

/// The stored downloads in the root.
fn downloads(ctx: &TestContext) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(&ctx.root)
        .unwrap()
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("download-") || n.starts_with(".offload-"))
        .collect();
    names.sort();
    names
}

fn config(ctx: &TestContext, site: &Site) {
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"fx": TestContext::fixture(&[])},
        "tools": {"expose": "meta"},
        "urls": {
            // The site by its address (named: a loopback address is allowed), and a wildcard
            // host that also matches localhost (not named: its loopback address is refused).
            "allow": [format!("http://127.0.0.1:{}/*", site.port), format!("http://local*:{}/*", site.port)],
            "maxBytes": 1_000_000,
            "timeoutSecs": 3
        }
    }));
}

#[tokio::test]
async fn allowed_urls_are_read_as_their_downloads_by_every_tool() {
    let ctx = TestContext::new();
    let csv: String = std::iter::once("id,region,amount\n".to_owned())
        .chain((0..5000).map(|i| format!("{i},{},{}\n", ["north", "south"][i % 2], i % 10)))
        .collect();
    let site = Site::start(csv).await;
    config(&ctx, &site);
    let client = ctx.client().await;

    // The schema of a CSV at a URL: exact, from its stored download.
    let r = call(
        &client,
        "get_file_schema",
        json!({"path": site.url("/data.csv")}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let s = structured(&r);
    assert_eq!(s["row_count"], 5000, "{s}");
    let stored = downloads(&ctx);
    assert_eq!(stored.len(), 1, "{stored:?}");
    assert!(
        stored[0].starts_with("download-127.0.0.1-data-") && stored[0].ends_with(".csv"),
        "{stored:?}"
    );
    assert_eq!(
        s["path"],
        ctx.root.join(&stored[0]).display().to_string(),
        "{s}"
    );

    // Paging through it (desktop-commander's isUrl is accepted) reads the same download.
    let r = call(
        &client,
        "read_file",
        json!({"path": site.url("/data.csv"), "isUrl": true, "offset": -2}),
    )
    .await;
    let t = text(&r);
    assert!(
        t.contains("4998,north,8") && t.contains("4999,south,9"),
        "{t}"
    );
    let r = call(
        &client,
        "summarize_file",
        json!({"path": site.url("/data.csv"), "max_lines": 3}),
    )
    .await;
    assert_eq!(structured(&r)["line_count"], 5001, "{}", text(&r));
    assert_eq!(site.hits("/data.csv"), 1, "fetched once for three calls");
    let r = call(
        &client,
        "read_file",
        json!({"path": "data.csv", "isUrl": true}),
    )
    .await;
    assert_eq!(error_code(&r), "invalid_arguments", "{}", text(&r));

    // A redirect inside the allowed patterns is followed.
    let r = call(
        &client,
        "read_file",
        json!({"path": site.url("/redirect-in"), "length": 2}),
    )
    .await;
    assert!(text(&r).contains("0,north,0"), "{}", text(&r));

    // Into a tool's arguments, in batches, by $file, and queried.
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "fx", "tool_name": "received", "file_path": site.url("/data.csv"), "data_key": "rows", "batch_size": 2000}),
    )
    .await;
    let s = structured(&r);
    assert_eq!(
        (s["batches"].clone(), s["items"].clone()),
        (json!(3), json!(5000)),
        "{s}"
    );
    let r = call(
        &client,
        "call_tool",
        json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": {"$file": site.url("/api/args"), "as": "text"}}}),
    )
    .await;
    assert!(text(&r).contains("from a URL"), "{}", text(&r));
    let r = call(
        &client,
        "query_file",
        json!({"path": site.url("/data.csv"), "sql": "SELECT region, SUM(amount) AS total FROM data GROUP BY region ORDER BY region"}),
    )
    .await;
    assert_eq!(
        structured(&r)["rows"],
        json!([["north", 10000], ["south", 12500]]),
        "{}",
        text(&r)
    );

    // Each download has its record: the URL, the content type.
    let index =
        std::fs::read_to_string(ctx.home.join(".local/share/offload/records.jsonl")).unwrap();
    let records: Vec<serde_json::Value> = index
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let downloads: Vec<&serde_json::Value> =
        records.iter().filter(|r| r["tool"] == "download").collect();
    assert_eq!(
        downloads.len(),
        3,
        "data.csv, the redirect, the JSON: {index}"
    );
    let json_download = downloads
        .iter()
        .find(|r| r["arguments"]["url"] == site.url("/api/args"))
        .unwrap();
    assert_eq!(
        json_download["mime_type"], "application/json",
        "{json_download}"
    );
    assert!(
        json_download["path"].as_str().unwrap().ends_with(".json"),
        "{json_download}"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn urls_outside_the_rules_are_refused_and_leave_nothing() {
    let ctx = TestContext::new();
    let site = Site::start("a\n1\n".into()).await;
    config(&ctx, &site);
    let client = ctx.client().await;
    // `read_file` of `path` is refused with `code`; its message.
    let refused = async |path: String, code: &str| {
        let r = call(&client, "read_file", json!({"path": path})).await;
        assert_eq!(error_code(&r), code, "{path}: {}", text(&r));
        text(&r)
    };

    // Not in the patterns: not even asked.
    let t = refused("https://example.com/data.csv".into(), "url_not_allowed").await;
    assert!(
        t.contains("http://127.0.0.1:"),
        "the message lists what is allowed: {t}"
    );
    let other_port = format!("http://127.0.0.1:{}/data.csv", site.port + 1);
    refused(other_port, "url_not_allowed").await;
    // User-info posing as the allowed host.
    let posing = format!("http://127.0.0.1:{}@example.com/x", site.port);
    refused(posing, "url_not_allowed").await;

    // A wildcard host on a loopback address (SSRF): refused before connecting.
    let secret = format!("http://localhost:{}/secret", site.port);
    let t = refused(secret, "url_not_allowed").await;
    assert!(t.contains("127.0.0.1") || t.contains("::1"), "{t}");
    // Redirects out of the patterns, or to the wildcard's loopback host.
    let t = refused(site.url("/redirect-out"), "url_not_allowed").await;
    assert!(
        t.contains("redirects to https://example.invalid/steal"),
        "{t}"
    );
    refused(site.url("/redirect-private"), "url_not_allowed").await;
    assert_eq!(
        site.hits("/secret"),
        0,
        "the private page was never asked for"
    );
    refused(site.url("/redirect-loop"), "url_unreachable").await;
    let t = refused(site.url("/missing"), "url_unreachable").await;
    assert!(t.contains("404"), "{t}");

    // Too big: announced (refused before the body) or endless (stopped at the limit).
    let t = refused(site.url("/huge"), "file_too_large").await;
    assert!(t.contains("urls.maxBytes"), "{t}");
    refused(site.url("/endless"), "file_too_large").await;
    // Too slow: the deadline (3 s) ends it, and a healthy call is answered meanwhile.
    let started = Instant::now();
    let slow = call(&client, "read_file", json!({"path": site.url("/slow")}));
    let healthy = async {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let at = Instant::now();
        let r = crate::fx(&client, "echo", json!({"text": "meanwhile"})).await;
        assert_eq!(text(&r), "meanwhile");
        at.elapsed()
    };
    let (slow, healthy) = tokio::join!(slow, healthy);
    assert_eq!(error_code(&slow), "timeout", "{}", text(&slow));
    let took = started.elapsed();
    assert!(
        took >= Duration::from_secs(3) && took < Duration::from_secs(8),
        "{took:?}"
    );
    assert!(
        healthy < Duration::from_secs(1),
        "a healthy call waited {healthy:?}"
    );

    assert_eq!(
        downloads(&ctx),
        Vec::<String>::new(),
        "no file, not even a partial one"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn without_patterns_no_url_is_fetched() {
    let ctx = TestContext::new();
    let site = Site::start("a\n1\n".into()).await;
    ctx.write_servers(json!({"fx": TestContext::fixture(&[])}));
    let client = ctx.client().await;
    for (tool, args) in [
        ("read_file", json!({"path": site.url("/data.csv")})),
        ("get_file_schema", json!({"path": site.url("/data.csv")})),
        (
            "call_tool_with_file_content",
            json!({"server": "fx", "tool_name": "received", "file_path": site.url("/data.csv")}),
        ),
        (
            "call_tool",
            json!({"server": "fx", "tool_name": "echo", "tool_args": {"text": {"$file": site.url("/data.csv")}}}),
        ),
        (
            "query_file",
            json!({"path": site.url("/data.csv"), "sql": "SELECT * FROM data"}),
        ),
    ] {
        let r = call(&client, tool, args).await;
        assert_eq!(error_code(&r), "url_not_allowed", "{tool}: {}", text(&r));
        assert!(text(&r).contains("urls.allow"), "{tool}: {}", text(&r));
    }
    assert_eq!(site.hits("/data.csv"), 0);
    client.cancel().await.unwrap();
}
