//! Secrets kept in the keychain, referenced from the file.

use super::*;

#[tokio::test]
async fn secrets_saved_in_the_editor_reach_the_server_and_never_the_file() {
    let t = TestContext::new();
    t.write_servers(json!({"other": TestContext::fixture(&[])}));
    let keychain = mock_keychain();
    let engine = engine_with(&t, keychain.clone());

    let mut spec = fixture();
    spec.env.insert("MODE".into(), "fast".into());
    let secret = NewSecret {
        place: Place::Env,
        key: "API_KEY".into(),
        value: "s3cret-value".into(),
    };
    put_server(&engine, None, "b", &spec, &[secret])
        .await
        .unwrap();

    let text = std::fs::read_to_string(&t.config_path).unwrap();
    assert!(!text.contains("s3cret-value"), "{text}");
    assert_eq!(
        file(&t)["mcpServers"]["b"]["env"]["API_KEY"],
        "${keyring:b_api_key}"
    );
    assert_eq!(
        keychain.secret("b_api_key").unwrap().as_deref(),
        Some("s3cret-value")
    );
    assert_eq!(env_of(&engine, "b", "API_KEY").await, "s3cret-value");
    let view = servers(&engine)
        .into_iter()
        .find(|s| s.name == "b")
        .unwrap();
    assert_eq!(
        view.secrets,
        [SecretRef {
            place: Place::Env,
            key: "API_KEY".into(),
            name: "b_api_key".into(),
            present: true,
        }]
    );
    assert!(view.plain_secrets.is_empty());

    // An empty secret is refused before anything is saved.
    let empty = NewSecret {
        place: Place::Env,
        key: "TOKEN".into(),
        value: String::new(),
    };
    let e = put_server(&engine, Some("b"), "b", &spec, &[empty])
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::InvalidArguments);

    // Removing the server removes the secret only it used.
    remove_server(&engine, "b").await.unwrap();
    assert_eq!(keychain.secret("b_api_key").unwrap(), None);
    engine.shutdown().await;
}

#[tokio::test]
async fn plain_text_secrets_are_offered_and_moved_into_the_keychain() {
    let t = TestContext::new();
    let mut entry = TestContext::fixture(&[]);
    entry["env"] = json!({"GITHUB_TOKEN": "ghp_plain", "MODE": "fast"});
    entry["custom"] = json!("kept");
    t.write_servers(json!({"gh": entry}));
    let keychain = mock_keychain();
    let engine = engine_with(&t, keychain.clone());

    let view = servers(&engine).into_iter().next().unwrap();
    assert_eq!(
        view.plain_secrets,
        [PlainSecret {
            place: Place::Env,
            key: "GITHUB_TOKEN".into()
        }]
    );
    assert_eq!(move_secrets_to_keychain(&engine, "gh").await.unwrap(), 1);
    let text = std::fs::read_to_string(&t.config_path).unwrap();
    assert!(!text.contains("ghp_plain"), "{text}");
    let server = &file(&t)["mcpServers"]["gh"];
    assert_eq!(server["env"]["GITHUB_TOKEN"], "${keyring:gh_github_token}");
    assert_eq!(server["env"]["MODE"], "fast");
    assert_eq!(server["custom"], "kept");
    assert_eq!(env_of(&engine, "gh", "GITHUB_TOKEN").await, "ghp_plain");
    assert_eq!(move_secrets_to_keychain(&engine, "gh").await.unwrap(), 0);
    engine.shutdown().await;
}

#[tokio::test]
async fn a_secret_is_taken_back_when_the_file_cannot_be_written() {
    let t = TestContext::new();
    t.write_servers(json!({}));
    let keychain = mock_keychain();
    let engine = engine_with(&t, keychain.clone());
    std::fs::write(&t.config_path, "{ broken").unwrap();
    engine.reload().await.unwrap_err();
    let secret = NewSecret {
        place: Place::Header,
        key: "Authorization".into(),
        value: "Bearer t".into(),
    };
    let mut spec = fixture();
    spec.transport = "http".into();
    spec.url = "http://127.0.0.1:9/mcp".into();
    let e = put_server(&engine, None, "r", &spec, &[secret])
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ConfigInvalid);
    assert_eq!(keychain.secret("r_authorization").unwrap(), None);
}
