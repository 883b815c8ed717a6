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
