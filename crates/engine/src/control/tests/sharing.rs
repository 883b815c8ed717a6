//! The Sharing screen: serving over HTTP as a setting (really served, moved, stopped), tokens
//! made with each client's entry, listed without the token, usable, revoked.

use super::*;
use crate::http::Serving;

/// The app applies the setting from its command and again when its file watcher sees the change:
/// at once, on two threads. Both must end serving the address once, with no "address in use".
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn serving_applied_twice_at_once_serves_once() {
    let t = TestContext::new();
    t.write_config(json!({"roots": [t.root], "mcpServers": {}}));
    let engine = engine(&t);
    let serving = Arc::new(Serving::default());
    for _ in 0..300 {
        let port = std::net::TcpListener::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap()
            .port();
        let listen = Some(format!("127.0.0.1:{port}"));
        let start = Arc::new(tokio::sync::Barrier::new(2));
        let both: Vec<_> = (0..2)
            .map(|_| {
                let (serving, engine, listen, start) = (
                    serving.clone(),
                    engine.clone(),
                    listen.clone(),
                    start.clone(),
                );
                tokio::spawn(async move {
                    start.wait().await;
                    serving.apply(&engine, listen).await;
                })
            })
            .collect();
        for one in both {
            one.await.unwrap();
        }
        let state = serving.state();
        assert_eq!(state.error, None);
        assert_eq!(state.url, Some(format!("http://127.0.0.1:{port}/mcp")));
        serving.apply(&engine, None).await;
    }
}

#[tokio::test]
async fn serving_follows_the_setting_and_tokens_come_with_each_clients_entry() {
    let t = TestContext::new();
    t.write_config(json!({"mine": true, "roots": [t.root], "mcpServers": {}}));
    let engine = engine(&t);
    let serving = Serving::default();

    // Turned on at a free port: written to the file, served.
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let listen = format!("127.0.0.1:{port}");
    set_http_listen(&engine, Some(listen.clone()))
        .await
        .unwrap();
    assert_eq!(file(&t)["http"]["listen"], listen);
    assert_eq!(file(&t)["mine"], true, "other keys are kept");
    serving
        .apply(
            &engine,
            engine.config().http.as_ref().and_then(|h| h.listen.clone()),
        )
        .await;
    let state = serving.state();
    let url = state.url.clone().expect("served");
    assert_eq!(url, format!("http://{listen}/mcp"));

    // A token: shown once with the entries, listed without it, accepted over HTTP.
    let made = create_token(&engine, "ci-agent", &["read".into(), "call".into()], &url).unwrap();
    assert!(made.token.len() > 40);
    for entry in &made.snippets {
        assert!(
            entry.text.contains(&url) && entry.text.contains(&made.token),
            "{entry:?}"
        );
    }
    assert!(
        made.snippets
            .iter()
            .any(|e| e.text.starts_with("claude mcp add --transport http"))
    );
    let vscode: Value = serde_json::from_str(
        &made
            .snippets
            .iter()
            .find(|e| e.client == "VS Code")
            .unwrap()
            .text,
    )
    .unwrap();
    assert_eq!(vscode["servers"]["offload"]["type"], "http");
    let view = sharing(&engine, serving.state());
    assert_eq!(view.tokens.len(), 1);
    assert_eq!(view.tokens[0].scopes, ["read", "call"]);
    assert!(!serde_json::to_string(&view).unwrap().contains(&made.token));
    let status = |token: Option<String>| {
        let url = url.clone();
        async move {
            let mut r = reqwest::Client::new()
                .post(&url)
                .header("accept", "application/json, text/event-stream")
                .json(
                    &json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "t", "version": "1"}}}),
                );
            if let Some(t) = token {
                r = r.bearer_auth(t);
            }
            r.send().await.unwrap().status().as_u16()
        }
    };
    assert_eq!(status(None).await, 401);
    assert_eq!(status(Some(made.token.clone())).await, 200);
    assert!(
        create_token(&engine, "ci-agent", &["read".into()], &url)
            .unwrap_err()
            .message
            .contains("exists")
    );
    assert!(create_token(&engine, "no-scope", &[], &url).is_err());

    // Revoked: refused from the next request on.
    revoke_token(&engine, "ci-agent").unwrap();
    assert_eq!(status(Some(made.token.clone())).await, 401);
    assert!(revoke_token(&engine, "ci-agent").is_err());

    // A bad address is refused before it reaches the file; turned off, nothing is served.
    assert!(
        set_http_listen(&engine, Some("everywhere".into()))
            .await
            .is_err()
    );
    set_http_listen(&engine, None).await.unwrap();
    assert!(file(&t).get("http").is_none());
    serving.apply(&engine, None).await;
    assert_eq!(serving.state(), Default::default());
    tokio::time::sleep(Duration::from_millis(200)).await;
    assert!(
        reqwest::Client::new().post(&url).send().await.is_err(),
        "nothing listens any more"
    );
}
