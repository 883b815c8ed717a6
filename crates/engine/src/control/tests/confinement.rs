//! What a confined server was refused, as the Servers screen offers it, and allowing it.

use super::*;

/// The native hostile server's `attempt` with `args`; its answer's content as JSON text.
async fn attempt(server: &crate::upstream::Upstream, args: Value) -> String {
    let answer = server
        .call("attempt", args.as_object().cloned(), Default::default())
        .await
        .unwrap();
    serde_json::to_string(&answer.content).unwrap()
}

/// A confined server's network refusals, as the Servers screen shows them: the native hostile
/// server (rmcp) with an allow-list fetches a host its proxy refuses; the refusal is listed
/// with its host and port; allowing it writes the host into the entry's allow-list (the rest of
/// the entry kept) and it is no longer offered; the editor's spec carries the sandbox both ways.
#[tokio::test]
async fn a_refused_host_is_shown_and_allowing_it_writes_the_allow_list() {
    let t = TestContext::new();
    t.write_config(json!({
        "roots": [t.root],
        "mcpServers": {"h": {
            "command": target_bin("offload-hostile"),
            "sandbox": {"network": {"allow": ["localhost:1"]}, "memory_mb": 2048},
        }},
    }));
    let engine = engine(&t);
    let view = &servers(&engine)[0];
    assert_eq!(
        serde_json::to_value(&view.spec.sandbox).unwrap(),
        json!({"network": {"allow": ["localhost:1"]}, "memory_mb": 2048})
    );
    assert!(view.refused.is_empty());
    let server = engine.pool.get("h").unwrap();
    let text = attempt(
        &server,
        json!({"kind": "fetch", "path": "http://127.0.0.1:9/"}),
    )
    .await;
    assert!(text.contains("refused: HTTP/1.1 403"), "{text}");
    let refused = &servers(&engine)[0].refused;
    assert_eq!(
        refused,
        &[crate::upstream::Refusal {
            host: "127.0.0.1".into(),
            port: 9,
            times: 1
        }]
    );

    allow_host(&engine, "h", "127.0.0.1", 9).await.unwrap();
    assert_eq!(
        file(&t)["mcpServers"]["h"]["sandbox"],
        json!({"network": {"allow": ["localhost:1", "127.0.0.1:9"]}, "memory_mb": 2048})
    );
    assert!(
        servers(&engine)[0].refused.is_empty(),
        "allowed: no longer offered"
    );
    // A server whose network is off gets a list; a bad host is refused with what to write.
    put_server(&engine, None, "quiet", &fixture(), &[])
        .await
        .unwrap();
    allow_host(&engine, "quiet", "api.github.com", 443)
        .await
        .unwrap();
    assert_eq!(
        file(&t)["mcpServers"]["quiet"]["sandbox"],
        json!({"network": {"allow": ["api.github.com"]}})
    );
    let e = allow_host(&engine, "quiet", "a b", 443).await.unwrap_err();
    assert!(e.message.contains("host:port"), "{}", e.message);

    // The editor writes what it is given, and "off".
    let mut spec = servers(&engine)[1].spec.clone();
    spec.sandbox = Some(crate::config::Sandbox::Off);
    put_server(&engine, Some("quiet"), "quiet", &spec, &[])
        .await
        .unwrap();
    assert_eq!(file(&t)["mcpServers"]["quiet"]["sandbox"], "off");
}

/// A path a confined server says on stderr it was refused is offered for allowing, unless no
/// server gets it by design (Offload's config); allowing writes it into the entry's `read`.
#[tokio::test]
async fn a_refused_path_named_on_stderr_is_offered_and_allowing_it_writes_read() {
    let t = TestContext::new();
    let outside = t.tmp.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    let data = outside.join("data.csv");
    std::fs::write(&data, "a,b").unwrap();
    t.write_config(json!({
        "roots": [t.root],
        "mcpServers": {"h": {"command": target_bin("offload-hostile"), "sandbox": {}}},
    }));
    let engine = engine(&t);
    let server = engine.pool.get("h").unwrap();
    for path in [data.clone(), t.config_path.clone()] {
        let text = attempt(&server, json!({"kind": "read", "path": path})).await;
        assert!(text.contains("refused"), "{text}");
    }
    // Read from its stderr as it comes: wait for both lines.
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while server.path_refusals().len() < 2 {
        assert!(
            std::time::Instant::now() < deadline,
            "{:?}",
            server.path_refusals()
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let offered = servers(&engine)[0].refused_paths.clone();
    assert_eq!(
        offered,
        [crate::upstream::PathRefusal {
            path: data.display().to_string(),
            times: 1
        }],
        "Offload's config is never offered"
    );
    let e = allow_path(&engine, "h", &t.config_path.display().to_string(), false)
        .await
        .unwrap_err();
    assert!(
        e.message.contains("kept from every server"),
        "{}",
        e.message
    );

    allow_path(&engine, "h", &data.display().to_string(), false)
        .await
        .unwrap();
    assert_eq!(
        file(&t)["mcpServers"]["h"]["sandbox"],
        json!({"read": [data.display().to_string()]})
    );
    assert!(servers(&engine)[0].refused_paths.is_empty());
    // Started again with it, the server reads the file.
    let server = engine.pool.get("h").unwrap();
    let text = attempt(&server, json!({"kind": "read", "path": data})).await;
    assert!(text.contains("ok: a,b"), "{text}");
}
