use offload_testkit::{TestContext, call, structured};
use serde_json::json;

#[tokio::test]
async fn positional_dirs_replace_the_roots_and_the_first_is_the_default() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    let a = ctx.tmp.path().join("a");
    let b = ctx.tmp.path().join("b");
    std::fs::create_dir_all(&a).unwrap();
    std::fs::create_dir_all(&b).unwrap();
    let client = ctx
        .client_with(&[a.to_str().unwrap(), b.to_str().unwrap()])
        .await;
    let r = call(&client, "list_allowed_directories", json!({})).await;
    let s = structured(&r);
    let dirs: Vec<&str> = s["directories"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d["path"].as_str().unwrap())
        .collect();
    let canon = |p: &std::path::Path| std::fs::canonicalize(p).unwrap().display().to_string();
    assert_eq!(dirs, [canon(&a), canon(&b)]);
    assert_eq!(s["default_directory"], json!(canon(&a)));
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn app_config_path_and_abstract_proxy_servers_pick_upstreams_from_a_client_config() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    let client_config = ctx.tmp.path().join("claude_desktop_config.json");
    std::fs::write(
        &client_config,
        serde_json::to_vec(&json!({"mcpServers": {
            "one": TestContext::fixture(&[]),
            "two": TestContext::fixture(&[]),
            "offload": {"command": "/usr/local/bin/offload", "args": ["mcp"]},
        }}))
        .unwrap(),
    )
    .unwrap();
    let mut cmd = ctx.offload_command(&[]);
    cmd.env("APP_CONFIG_PATH", &client_config)
        .env("ABSTRACT_PROXY_SERVERS", "one, offload");
    let client = offload_testkit::connect(cmd).await;
    let r = call(&client, "list_available_tools", json!({})).await;
    let names: Vec<String> = structured(&r)["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        ["one"],
        "only the named server, and never Offload itself"
    );
    client.cancel().await.unwrap();
}

#[tokio::test]
async fn no_configured_root_uses_a_default_root_in_the_data_dir() {
    let ctx = TestContext::new();
    ctx.write_config(json!({}));
    let client = ctx.client().await;
    let r = call(&client, "list_allowed_directories", json!({})).await;
    let expected = ctx.home.join(".local/share/offload/files");
    assert_eq!(
        structured(&r)["default_directory"],
        json!(expected.display().to_string())
    );
    assert!(expected.is_dir());
    client.cancel().await.unwrap();
}

/// `offload secret` refuses names `${keyring:}` cannot hold and empty values before it touches
/// the keychain (saving for real is driven against a real Secret Service by the app's E2E run).
#[test]
fn offload_secret_refuses_bad_names_and_empty_values() {
    use std::io::Write;
    let run = |args: &[&str], stdin: &str| {
        let mut child = std::process::Command::new(offload_testkit::target_bin("offload"))
            .args(args)
            .stdin(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        child
            .stdin
            .take()
            .unwrap()
            .write_all(stdin.as_bytes())
            .unwrap();
        child.wait_with_output().unwrap()
    };
    let out = run(&["secret", "set", "a b"], "value\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("cannot name a secret"));
    let out = run(&["secret", "set", "token"], "\n");
    assert!(!out.status.success());
    assert!(String::from_utf8_lossy(&out.stderr).contains("empty"));
}

/// `offload mcp --config FILE` with problems in FILE: each is a clear error on stderr and a
/// failed start, never a server with zero upstreams.
#[tokio::test]
async fn a_named_config_that_is_missing_empty_or_wrong_is_an_error() {
    let ctx = TestContext::new();
    let run = |args: Vec<String>| {
        let mut cmd = ctx.offload_command(&[]);
        cmd.args(args)
            .env_remove("OFFLOAD_LOG_FILE")
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped());
        async move {
            let out = cmd.output().await.unwrap();
            (
                out.status.success(),
                String::from_utf8_lossy(&out.stderr).into_owned(),
            )
        }
    };
    let missing = ctx.tmp.path().join("nope.json");
    let (ok, err) = run(vec!["--config".into(), missing.display().to_string()]).await;
    assert!(!ok && err.contains("does not exist"), "{err}");

    let empty = ctx.tmp.path().join("empty.json");
    std::fs::write(&empty, "  \n").unwrap();
    let (ok, err) = run(vec!["--config".into(), empty.display().to_string()]).await;
    assert!(!ok && err.contains("is empty"), "{err}");

    // JSON, but a value of the wrong type: said as such, with line and column.
    let typed = ctx.tmp.path().join("typed.json");
    std::fs::write(
        &typed,
        "{\"mcpServers\": {\"a\": {\"command\": \"x\",\n \"timeoutSecs\": \"ten\"}}}",
    )
    .unwrap();
    let (ok, err) = run(vec!["--config".into(), typed.display().to_string()]).await;
    assert!(!ok, "{err}");
    assert!(
        err.contains("line 2") && err.contains("invalid type"),
        "{err}"
    );
    assert!(!err.contains("not valid JSON"), "{err}");
}

/// VS Code's `servers` shape is a configuration too.
#[tokio::test]
async fn a_config_in_vs_codes_servers_shape_is_accepted() {
    let ctx = TestContext::new();
    let mut entry = TestContext::fixture(&[]);
    entry["type"] = json!("stdio");
    ctx.write_config(json!({"roots": [ctx.root], "servers": {"fx": entry}}));
    let client = ctx.client().await;
    let r = crate::fx(&client, "echo", json!({"text": "from servers"})).await;
    assert_eq!(offload_testkit::text(&r), "from servers");
    client.cancel().await.unwrap();
}

/// `--config` while a host runs: this invocation's own configuration, so the shim stays
/// embedded and says so; `--mode app` with `--config` is refused with the reason.
#[tokio::test]
async fn a_named_config_keeps_the_shim_embedded_while_a_host_runs() {
    let ctx = TestContext::new();
    ctx.write_servers(json!({"host-only": TestContext::fixture(&[])}));
    let _host = ctx.host().await;
    let own = ctx.tmp.path().join("own.json");
    std::fs::write(
        &own,
        serde_json::to_vec(
            &json!({"roots": [ctx.root], "mcpServers": {"fx": TestContext::fixture(&[])}}),
        )
        .unwrap(),
    )
    .unwrap();
    let own_arg = own.display().to_string();
    let client = ctx.client_with(&["--config", &own_arg]).await;
    let r = call(&client, "list_available_tools", json!({})).await;
    let names: Vec<String> = structured(&r)["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        ["fx"],
        "the named configuration applies, not the host's"
    );
    let instructions = client
        .peer_info()
        .and_then(|i| i.instructions.clone())
        .unwrap_or_default();
    assert!(instructions.contains("own.json"), "{instructions}");
    client.cancel().await.unwrap();

    let out = ctx
        .offload_command(&["--mode", "app", "--config", &own_arg])
        .env_remove("OFFLOAD_LOG_FILE")
        .stdin(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .output()
        .await
        .unwrap();
    assert!(!out.status.success());
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("drop --config"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A configured directory that does not exist is not created; the model is told it is not
/// available, and the others work.
#[tokio::test]
async fn a_missing_root_is_reported_not_created() {
    let ctx = TestContext::new();
    let missing = ctx.tmp.path().join("nonexistent/ro");
    ctx.write_config(json!({"roots": [missing, ctx.root], "mcpServers": {}}));
    let client = ctx.client().await;
    let r = call(&client, "list_allowed_directories", json!({})).await;
    assert!(!missing.exists());
    let s = structured(&r);
    assert_eq!(s["directories"].as_array().unwrap().len(), 1);
    assert!(
        s["unavailable"][0]["reason"]
            .as_str()
            .unwrap()
            .contains("does not exist"),
        "{s}"
    );
    assert!(offload_testkit::text(&r).contains("not available"));
    client.cancel().await.unwrap();
}
