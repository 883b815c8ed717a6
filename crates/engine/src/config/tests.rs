use super::*;
use std::path::Path;

fn parse(text: &str) -> Result<Config, ConfigError> {
    Config::parse(text, Path::new("config.json"))
}

#[test]
fn parses_the_documented_example_and_keeps_order_and_unknown_keys() {
    let cfg = parse(
        r#"{
          "roots": ["~/Offload", {"path": "~/datasets", "writable": false}],
          "mcpServers": {
            "sqlite": {"command": "uvx", "args": ["mcp-server-sqlite", "--db-path", "~/test.db"]},
            "tavily": {"command": "npx", "args": ["-y", "tavily-mcp"],
                       "env": {"TAVILY_API_KEY": "${keyring:tavily_api_key}"},
                       "disabled": false, "timeoutSecs": 60, "cwd": "~", "alwaysAllow": ["x"]},
            "remote": {"type": "http", "url": "https://example.invalid/mcp",
                       "headers": {"Authorization": "Bearer ${keyring:remote_token}"}}
          },
          "limits": {"maxInputBytes": 10485760, "maxUpstreamMessageBytes": 8388608, "inlineBytes": 102400},
          "theme": "dark"
        }"#,
    )
    .unwrap();
    let names: Vec<_> = cfg.mcp_servers.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, ["sqlite", "tavily", "remote"]);
    assert!(cfg.roots[0].writable() && !cfg.roots[1].writable());
    assert_eq!(cfg.extra["theme"], "dark");
    assert_eq!(cfg.mcp_servers[1].1.extra["alwaysAllow"][0], "x");
    assert!(matches!(
        cfg.mcp_servers[2].1.transport("remote").unwrap(),
        Transport::Http { .. }
    ));
    // Round trip keeps everything, unknown keys included.
    let again = parse(&serde_json::to_string(&cfg).unwrap()).unwrap();
    assert_eq!(again, cfg);
}

#[test]
fn parse_errors_name_line_and_column() {
    let err =
        parse("{\n  \"mcpServers\": {\n    \"a\": {\"command\": \"x\",}\n  }\n}").unwrap_err();
    match err {
        ConfigError::Parse { line, column, .. } => {
            assert_eq!(line, 3);
            assert!(column > 20, "column {column}");
        }
        other => panic!("unexpected {other:?}"),
    }
    let msg = parse("[1,2").unwrap_err().to_string();
    assert!(msg.contains("line 1"), "{msg}");
    assert!(msg.contains("will not overwrite"), "{msg}");
}

#[test]
fn missing_and_empty_files_are_empty_configs() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(
        Config::load(&dir.path().join("none.json")).unwrap(),
        Config::default()
    );
    std::fs::write(dir.path().join("empty.json"), "  \n").unwrap();
    assert_eq!(
        Config::load(&dir.path().join("empty.json")).unwrap(),
        Config::default()
    );
}

#[test]
fn transport_errors_say_what_to_do() {
    let e = ServerEntry::default()
        .transport("x")
        .unwrap_err()
        .to_string();
    assert!(e.contains("\"command\"") && e.contains("\"url\""), "{e}");
    let sse = ServerEntry {
        kind: Some("sse".into()),
        url: Some("http://h/sse".into()),
        ..Default::default()
    };
    assert!(
        sse.transport("x")
            .unwrap_err()
            .to_string()
            .contains("streamable HTTP")
    );
    let windsurf: ServerEntry = serde_json::from_str(r#"{"serverUrl": "http://h/mcp"}"#).unwrap();
    assert_eq!(
        windsurf.transport("w").unwrap(),
        Transport::Http {
            url: "http://h/mcp".into(),
            headers: Default::default(),
            oauth: None,
        }
    );
}

#[test]
fn timeout_defaults_to_sixty_seconds() {
    assert_eq!(ServerEntry::default().timeout().as_secs(), 60);
    let e = ServerEntry {
        timeout_secs: Some(5),
        ..Default::default()
    };
    assert_eq!(e.timeout().as_secs(), 5);
}

struct Fixed;
impl SecretSource for Fixed {
    fn secret(&self, name: &str) -> Result<Option<String>, String> {
        Ok((name == "token").then(|| "s3cret".to_owned()))
    }
}

#[test]
fn interpolation_resolves_env_and_keyring_and_never_echoes_values() {
    // PATH is set in every test environment (setting a variable would need `unsafe`).
    let path = std::env::var("PATH").unwrap();
    assert_eq!(
        interpolate("a ${env:PATH} b ${keyring:token} ${OTHER} $", &Fixed).unwrap(),
        format!("a {path} b s3cret ${{OTHER}} $")
    );
    let e = interpolate("${keyring:missing}", &Fixed).unwrap_err();
    assert_eq!(e.code(), crate::ErrorCode::SecretUnavailable);
    assert!(e.to_string().contains("keyring:missing"));
    let e = interpolate("${env:OFFLOAD_TEST_SURELY_UNSET}", &Fixed).unwrap_err();
    assert!(e.to_string().contains("OFFLOAD_TEST_SURELY_UNSET"));
    assert!(interpolate("${keyring:token}", &NoKeychain).is_err());
    assert_eq!(
        interpolate("${unterminated", &Fixed).unwrap(),
        "${unterminated"
    );
}

#[test]
fn a_sandbox_entry_reads_off_or_a_policy_and_says_what_is_wrong() {
    let entry = |sandbox: &str| {
        parse(&format!(
            r#"{{"mcpServers": {{"a": {{"command": "x", "sandbox": {sandbox}}}}}}}"#
        ))
    };
    let off = entry(r#""off""#).unwrap();
    assert_eq!(off.mcp_servers[0].1.sandbox, Some(Sandbox::Off));
    let policy = entry(
        r#"{"network": {"allow": ["api.github.com", "localhost:8080"]}, "read": ["~/data"]}"#,
    )
    .unwrap();
    let Some(Sandbox::Confined(p)) = &policy.mcp_servers[0].1.sandbox else {
        panic!("{policy:?}")
    };
    assert_eq!(
        p.network,
        Some(SandboxNetwork::Allow(vec![
            "api.github.com".into(),
            "localhost:8080".into()
        ]))
    );
    assert_eq!(p.read, ["~/data"]);
    // Written back as it was read.
    assert_eq!(
        serde_json::to_value(&policy.mcp_servers[0].1.sandbox).unwrap(),
        serde_json::json!({"network": {"allow": ["api.github.com", "localhost:8080"]}, "read": ["~/data"]})
    );
    for (bad, says) in [
        (r#""of""#, "\"sandbox\" is \"off\" or an object"),
        (r#"{"raed": []}"#, "unknown field `raed`"),
        (
            r#"{"network": "some"}"#,
            "\"network\" is \"off\", \"all\" or",
        ),
        (r#"{"network": {"allow": [1]}}"#, "\"network\" is"),
    ] {
        let e = entry(bad).unwrap_err().to_string();
        assert!(e.contains(says) && e.contains("line 1"), "{bad}: {e}");
    }
}

#[test]
fn servers_from_before_confinement_keep_their_network_once_per_file() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let path = dir.path().join("config.json");
    let read =
        || -> serde_json::Value { serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap() };
    // An Offload from before confinement ran here: it left its data directory.
    std::fs::create_dir_all(&data).unwrap();
    std::fs::write(data.join("pins.json"), "{}").unwrap();
    // A file that does not parse is left alone, and tried again once it does.
    std::fs::write(&path, "{oops").unwrap();
    assert!(edit::upgrade_for_sandbox(&path, &data).is_err());
    std::fs::write(
        &path,
        serde_json::json!({"mcpServers": {
            "a": {"command": "npx", "args": ["-y", "x"]},
            "b": {"command": "uvx", "sandbox": "off"},
            "c": {"url": "https://example.com/mcp"},
        }})
        .to_string(),
    )
    .unwrap();
    assert_eq!(edit::upgrade_for_sandbox(&path, &data).unwrap(), ["a"]);
    let file = read();
    assert_eq!(
        file["mcpServers"]["a"]["sandbox"],
        serde_json::json!({"network": "all"})
    );
    assert_eq!(
        file["mcpServers"]["a"]["args"],
        serde_json::json!(["-y", "x"])
    );
    assert_eq!(file["mcpServers"]["b"]["sandbox"], "off");
    assert!(file["mcpServers"]["c"].get("sandbox").is_none());
    // Once: a server added afterwards gets the defaults (the file is not touched again).
    let mut file = file;
    file["mcpServers"]["d"] = serde_json::json!({"command": "node"});
    std::fs::write(&path, file.to_string()).unwrap();
    assert!(edit::upgrade_for_sandbox(&path, &data).unwrap().is_empty());
    assert!(read()["mcpServers"]["d"].get("sandbox").is_none());
    let entry: ServerEntry = serde_json::from_value(read()["mcpServers"]["d"].clone()).unwrap();
    match entry.transport("d").unwrap() {
        Transport::Stdio { sandbox, .. } => {
            assert_eq!(
                sandbox,
                Sandbox::Confined(SandboxPolicy::default()),
                "confined by default"
            )
        }
        other => panic!("{other:?}"),
    }
    // A file that does not exist yet is new: whatever is added to it gets the defaults.
    let fresh = dir.path().join("fresh.json");
    assert!(edit::upgrade_for_sandbox(&fresh, &data).unwrap().is_empty());
    std::fs::write(&fresh, r#"{"mcpServers": {"e": {"command": "node"}}}"#).unwrap();
    assert!(edit::upgrade_for_sandbox(&fresh, &data).unwrap().is_empty());
}

/// A new user (no data directory yet) pastes servers into a hand-written config, or names a file
/// with `--config`: nothing was there before confinement, so every server is confined with the
/// network off; and once any file was seen, later files are new too.
#[test]
fn a_new_users_servers_are_confined_with_the_network_off() {
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let servers = r#"{"mcpServers": {"memory": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-memory"]}}}"#;
    for name in ["config.json", "other.json"] {
        let path = dir.path().join(name);
        std::fs::write(&path, servers).unwrap();
        assert!(
            edit::upgrade_for_sandbox(&path, &data).unwrap().is_empty(),
            "{name}"
        );
        assert_eq!(
            std::fs::read_to_string(&path).unwrap(),
            servers,
            "{name} untouched"
        );
        // Offload's own files appear in the data directory once it runs.
        std::fs::write(data.join("pins.json"), "{}").unwrap();
    }
}
