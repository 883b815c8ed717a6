//! The app's operations on a real engine: a real config file, the fixture server as upstream,
//! the real file watcher.

use std::sync::Arc;
use std::time::Duration;

use offload_testkit::{TestContext, target_bin};
use serde_json::{Value, json};

use super::*;
use crate::config::{AppDirs, NoKeychain, SecretSource};
use crate::events::{Event, EventKind};
use crate::keychain::Keychain;
use crate::upstream::ServerState;
use crate::{Engine, EngineOptions, ErrorCode};

fn engine(t: &TestContext) -> Arc<Engine> {
    engine_with(t, Arc::new(NoKeychain))
}

fn engine_with(t: &TestContext, secrets: Arc<dyn SecretSource>) -> Arc<Engine> {
    let options = EngineOptions {
        config_path: Some(t.config_path.clone()),
        compat: Default::default(),
        secrets,
        dirs: Some(AppDirs::under(&t.home)),
    };
    Arc::new(Engine::load(options).expect("engine").0)
}

/// A keychain over keyring-core's in-memory mock store: the real Secret Service is exercised by
/// the app's E2E run, which starts one; unit tests have no session bus.
fn mock_keychain() -> Arc<Keychain> {
    Arc::new(Keychain::with_store(
        keyring_core::mock::Store::new().unwrap(),
    ))
}

async fn env_of(engine: &Engine, server: &str, name: &str) -> Value {
    let args = json!({"name": name}).as_object().cloned();
    let r = engine.pool.get(server).unwrap();
    let r = r.call("env", args, Default::default()).await.unwrap();
    r.structured_content.unwrap()["value"].clone()
}

fn fixture() -> ServerSpec {
    ServerSpec {
        transport: "stdio".into(),
        command: target_bin("offload-fixture").display().to_string(),
        enabled: true,
        ..ServerSpec::default()
    }
}

fn file(t: &TestContext) -> Value {
    serde_json::from_slice(&std::fs::read(&t.config_path).unwrap()).unwrap()
}

fn names(engine: &Engine) -> Vec<String> {
    servers(engine).into_iter().map(|s| s.name).collect()
}

#[tokio::test]
async fn servers_are_added_edited_toggled_renamed_and_removed_in_the_file() {
    let t = TestContext::new();
    t.write_config(json!({
        "mine": {"kept": true},
        "roots": [t.root],
        "mcpServers": {"a": {"command": target_bin("offload-fixture"), "note": "keep me"}},
    }));
    let engine = engine(&t);

    put_server(&engine, None, "b", &fixture(), &[])
        .await
        .unwrap();
    assert_eq!(names(&engine), ["a", "b"]);
    let tools = server_tools(&engine, "b").await.unwrap();
    assert!(tools.iter().any(|t| t.name == "echo"), "{tools:?}");
    let view = servers(&engine)
        .into_iter()
        .find(|s| s.name == "b")
        .unwrap();
    assert_eq!(view.status, ServerState::Ready);
    assert_eq!(view.tool_count, Some(tools.len()));

    set_server_enabled(&engine, "b", false).await.unwrap();
    assert_eq!(file(&t)["mcpServers"]["b"]["disabled"], true);
    assert_eq!(servers(&engine)[1].status, ServerState::Disabled);
    set_server_enabled(&engine, "b", true).await.unwrap();
    assert!(file(&t)["mcpServers"]["b"].get("disabled").is_none());
    assert_eq!(servers(&engine)[1].status, ServerState::Idle);

    // Edit and rename "a": it stays first, and the key Offload does not know stays with it.
    let mut spec = fixture();
    spec.args = vec!["--flag".into()];
    spec.timeout_secs = Some(5);
    put_server(&engine, Some("a"), "first", &spec, &[])
        .await
        .unwrap();
    let doc = file(&t);
    let order: Vec<&String> = doc["mcpServers"].as_object().unwrap().keys().collect();
    assert_eq!(order, ["first", "b"]);
    assert_eq!(doc["mcpServers"]["first"]["note"], "keep me");
    assert_eq!(doc["mcpServers"]["first"]["timeoutSecs"], 5);
    assert_eq!(doc["mine"], json!({"kept": true}));

    remove_server(&engine, "b").await.unwrap();
    assert_eq!(names(&engine), ["first"]);

    let clash = put_server(&engine, None, "first", &fixture(), &[])
        .await
        .unwrap_err();
    assert_eq!(clash.code, ErrorCode::InvalidArguments);
    assert!(clash.message.contains("exists already"), "{clash}");
    let missing = remove_server(&engine, "nope").await.unwrap_err();
    assert!(missing.message.contains("no server 'nope'"), "{missing}");
    let no_command = ServerSpec {
        transport: "stdio".into(),
        ..ServerSpec::default()
    };
    let e = put_server(&engine, None, "x", &no_command, &[])
        .await
        .unwrap_err();
    assert!(e.message.contains("needs a command"), "{e}");
    let bad_url = ServerSpec {
        transport: "http".into(),
        url: "not a url".into(),
        ..ServerSpec::default()
    };
    let e = put_server(&engine, None, "x", &bad_url, &[])
        .await
        .unwrap_err();
    assert!(e.message.contains("is not a URL"), "{e}");
    assert_eq!(names(&engine), ["first"], "failed edits change nothing");
    engine.shutdown().await;
}

#[tokio::test]
async fn a_remote_server_written_the_windsurf_way_is_shown_and_edited_with_its_url() {
    let t = TestContext::new();
    t.write_servers(json!({"remote": {"serverUrl": "https://example.invalid/mcp"}}));
    let engine = engine(&t);
    let view = servers(&engine).remove(0);
    assert_eq!(view.spec.transport, "http");
    assert_eq!(view.spec.url, "https://example.invalid/mcp");
    let mut spec = view.spec;
    spec.timeout_secs = Some(30);
    put_server(&engine, Some("remote"), "remote", &spec, &[])
        .await
        .unwrap();
    let entry = &file(&t)["mcpServers"]["remote"];
    assert_eq!(entry["url"], "https://example.invalid/mcp");
    assert_eq!(
        entry["serverUrl"], "https://example.invalid/mcp",
        "kept as written"
    );
    assert_eq!(entry["timeoutSecs"], 30);
}

#[tokio::test]
async fn changing_one_server_leaves_the_others_running() {
    let t = TestContext::new();
    t.write_servers(json!({
        "a": TestContext::fixture(&[]),
        "b": TestContext::fixture(&[]),
    }));
    let engine = engine(&t);
    server_tools(&engine, "a").await.unwrap();
    server_tools(&engine, "b").await.unwrap();
    let a = engine.pool.get("a").unwrap();
    let b = engine.pool.get("b").unwrap();

    let mut spec = fixture();
    spec.env.insert("CHANGED".into(), "1".into());
    put_server(&engine, Some("b"), "b", &spec, &[])
        .await
        .unwrap();

    assert!(
        Arc::ptr_eq(&a, &engine.pool.get("a").unwrap()),
        "a untouched"
    );
    assert_eq!(a.status().status, ServerState::Ready, "a still running");
    assert!(
        !Arc::ptr_eq(&b, &engine.pool.get("b").unwrap()),
        "b replaced"
    );
    assert_eq!(
        restart_server(&engine, "b").await.unwrap(),
        a.tool_count().unwrap()
    );
    engine.shutdown().await;
}

#[tokio::test]
async fn a_broken_file_is_reported_kept_and_never_overwritten() {
    let t = TestContext::new();
    t.write_servers(json!({"a": TestContext::fixture(&[])}));
    let engine = engine(&t);
    let broken = "{\n  \"mcpServers\": {,\n}\n";
    std::fs::write(&t.config_path, broken).unwrap();

    let e = engine.reload().await.unwrap_err();
    assert!(e.to_string().contains("line 2"), "{e}");
    assert!(status(&engine).config_error.unwrap().contains("line 2"));
    assert_eq!(names(&engine), ["a"], "the configuration in effect stays");

    let e = put_server(&engine, None, "b", &fixture(), &[])
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ConfigInvalid);
    let e = add_root(&engine, t.root.to_str().unwrap(), true)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::ConfigInvalid);
    assert_eq!(std::fs::read_to_string(&t.config_path).unwrap(), broken);

    t.write_servers(json!({"c": TestContext::fixture(&[])}));
    engine.reload().await.unwrap();
    assert_eq!(status(&engine).config_error, None);
    assert_eq!(names(&engine), ["c"]);
}

#[tokio::test]
async fn directories_are_added_made_default_made_read_only_and_removed() {
    let t = TestContext::new();
    t.write_config(json!({"mcpServers": {}}));
    let engine = engine(&t);
    let builtin = roots(&engine);
    assert_eq!(builtin.len(), 1);
    assert!(!builtin[0].configured && builtin[0].default && builtin[0].writable);

    let data = t.tmp.path().join("data set");
    std::fs::create_dir(&data).unwrap();
    let data = std::fs::canonicalize(data).unwrap();
    let data_s = data.to_str().unwrap();
    add_root(&engine, data_s, true).await.unwrap();
    let listed = roots(&engine);
    assert_eq!(
        listed.len(),
        2,
        "the built-in directory is kept: {listed:?}"
    );
    assert!(listed.iter().all(|r| r.configured));
    assert_eq!(listed[0].path, builtin[0].path);
    assert!(listed[0].default);

    set_default_root(&engine, data_s).await.unwrap();
    assert_eq!(roots(&engine)[0].path, data_s);
    assert_eq!(engine.roots().default_dir(), Some(data.as_path()));

    set_root_writable(&engine, data_s, false).await.unwrap();
    assert_eq!(
        file(&t)["roots"][0],
        json!({"path": data_s, "writable": false})
    );
    assert!(
        !roots(&engine)[0].default,
        "a read-only directory is not the default"
    );
    let e = set_default_root(&engine, data_s).await.unwrap_err();
    assert!(e.message.contains("read-only"), "{e}");

    let e = add_root(&engine, data_s, true).await.unwrap_err();
    assert!(e.message.contains("already allowed"), "{e}");
    let e = add_root(&engine, "relative/dir", true).await.unwrap_err();
    assert!(e.message.contains("not an absolute path"), "{e}");
    let gone = t.tmp.path().join("gone");
    let e = add_root(&engine, gone.to_str().unwrap(), true)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PathNotFound);
    let a_file = t.tmp.path().join("f.txt");
    std::fs::write(&a_file, "x").unwrap();
    let e = add_root(&engine, a_file.to_str().unwrap(), true)
        .await
        .unwrap_err();
    assert_eq!(e.code, ErrorCode::PathUnusable);

    remove_root(&engine, data_s).await.unwrap();
    assert_eq!(roots(&engine).len(), 1);
    let e = remove_root(&engine, data_s).await.unwrap_err();
    assert!(e.message.contains("not an allowed directory"), "{e}");

    // A read-only directory that vanished is shown with the reason (writable ones are created).
    add_root(&engine, data_s, false).await.unwrap();
    std::fs::remove_dir(&data).unwrap();
    engine.reload().await.unwrap();
    let missing = roots(&engine)
        .into_iter()
        .find(|r| r.path == data_s)
        .unwrap();
    assert!(missing.problem.unwrap().contains("cannot be used"));
}

#[tokio::test]
async fn edits_on_disk_are_picked_up_while_running() {
    let t = TestContext::new();
    t.write_servers(json!({"a": TestContext::fixture(&[])}));
    let engine = engine(&t);
    let _watch = crate::config_watch::watch(engine.clone()).unwrap().unwrap();
    let mut changed = engine.watch();
    server_tools(&engine, "a").await.unwrap();
    let a = engine.pool.get("a").unwrap();

    // Saved the way editors save: a new file renamed over the old one.
    let next = json!({"roots": [t.root], "mcpServers": {
        "a": TestContext::fixture(&[]),
        "b": TestContext::fixture(&[]),
    }});
    let tmp = t.config_path.with_extension("swp");
    std::fs::write(&tmp, serde_json::to_vec_pretty(&next).unwrap()).unwrap();
    std::fs::rename(&tmp, &t.config_path).unwrap();

    tokio::time::timeout(Duration::from_secs(10), async {
        while names(&engine) != ["a", "b"] {
            changed.changed().await.unwrap();
        }
    })
    .await
    .expect("the new server appears");
    assert!(
        Arc::ptr_eq(&a, &engine.pool.get("a").unwrap()),
        "a untouched"
    );

    std::fs::write(&t.config_path, "{oops").unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while engine.config_error().is_none() {
            changed.changed().await.unwrap();
        }
    })
    .await
    .expect("the broken file is reported");
    assert_eq!(names(&engine), ["a", "b"]);
    engine.shutdown().await;
}

#[test]
fn overview_counts_calls_and_bytes_kept_out_of_context() {
    let t = TestContext::new();
    t.write_servers(json!({}));
    let engine = engine(&t);
    let event = |kind, bytes_in, bytes_out, outcome: &str| Event {
        time: chrono::Utc::now(),
        kind,
        tool: "t".into(),
        client: None,
        server: None,
        upstream_tool: None,
        file: None,
        format: None,
        bytes_in,
        bytes_out,
        rows: None,
        batches: None,
        duration_ms: 1,
        outcome: outcome.into(),
        pid: 1,
    };
    engine
        .events
        .emit(event(EventKind::Store, 1_000_000, 500, "ok"));
    engine
        .events
        .emit(event(EventKind::FileContent, 20_000, 100, "ok"));
    engine
        .events
        .emit(event(EventKind::FileRef, 3_000, 0, "ok"));
    engine.events.emit(event(EventKind::Call, 50, 40, "ok"));
    engine
        .events
        .emit(event(EventKind::Store, 9_999, 100, "upstream_tool_error"));
    let o = overview(&engine);
    assert_eq!(o.today.calls, 4, "a $file reference is part of its call");
    assert_eq!(o.today.errors, 1);
    assert_eq!(o.today.bytes_kept, 999_500 + 20_000 + 3_000);
    assert_eq!(o.recorded, o.today);
    assert_eq!(o.status.clients, 0);
    assert!(!o.status.paused);
    engine.set_paused(true);
    assert!(status(&engine).paused);
}

#[tokio::test]
async fn while_paused_upstream_tools_are_not_called() {
    use rmcp::ServiceExt;
    use rmcp::model::CallToolRequestParams;

    let t = TestContext::new();
    t.write_servers(json!({"a": TestContext::fixture(&[])}));
    let engine = engine(&t);
    let (ours, theirs) = tokio::io::duplex(1 << 16);
    let served = tokio::spawn({
        let engine = engine.clone();
        async move { engine.serve(ours).await }
    });
    let client = ().serve(theirs).await.unwrap();
    let call = |text: &str| {
        let args = json!({"server": "a", "tool_name": "echo", "tool_args": {"text": text}});
        CallToolRequestParams::new("call_tool").with_arguments(args.as_object().unwrap().clone())
    };

    engine.set_paused(true);
    let paused = client.call_tool(call("hi")).await.unwrap();
    assert_eq!(paused.is_error, Some(true));
    let error = &paused.structured_content.unwrap()["error"];
    assert_eq!(error["code"], "paused");
    assert_eq!(
        status(&engine).servers.ready,
        0,
        "the server was not even started"
    );

    engine.set_paused(false);
    let resumed = client.call_tool(call("hi")).await.unwrap();
    assert_ne!(resumed.is_error, Some(true), "{resumed:?}");
    assert_eq!(status(&engine).clients, 1);
    client.cancel().await.unwrap();
    served.await.unwrap().unwrap();
    engine.shutdown().await;
}

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

fn store_rows(engine: &Engine, format: &str, rows: Value) -> crate::store::Stored {
    let request = crate::store::StoreRequest {
        server: "crm",
        tool: "contacts",
        arguments: &json!({"query": "all", "api_key": "k-123"}),
        description: Some("every contact".into()),
        storage_path: None,
        filename: None,
        format: Some(format),
        result: rmcp::model::CallToolResult::structured(rows),
        duration: Duration::from_millis(12),
    };
    engine.store.store(&engine.roots(), request).unwrap()
}

#[tokio::test]
async fn responses_list_records_and_found_files_preview_them_and_delete_them() {
    let t = TestContext::new();
    let outside = t.tmp.path().join("outside");
    let shelf = t.tmp.path().join("shelf");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::create_dir_all(&shelf).unwrap();
    std::fs::write(shelf.join("ref.txt"), "kept\n").unwrap();
    t.write_config(json!({
        "roots": [t.root, {"path": shelf, "writable": false}],
        "mcpServers": {},
    }));
    let engine = engine(&t);
    let rows =
        json!([{"id": 1, "name": "Ada"}, {"id": 2, "name": "Grace"}, {"id": 3, "name": "Linus"}]);
    let stored = store_rows(&engine, "csv", rows);
    let stored_path = stored.record.path.clone();
    std::fs::create_dir_all(t.root.join("notes")).unwrap();
    std::fs::write(t.root.join("notes/todo.md"), "# todo\n").unwrap();
    std::fs::write(t.root.join(".hidden"), "no").unwrap();
    std::fs::write(outside.join("secret.txt"), "outside").unwrap();
    #[cfg(unix)]
    std::os::unix::fs::symlink(outside.join("secret.txt"), t.root.join("link.txt")).unwrap();

    let list = responses(&engine);
    assert!(!list.truncated);
    let names: Vec<&str> = list.items.iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names.len(), 3, "{names:?}");
    assert!(
        names.contains(&"todo.md") && names.contains(&"ref.txt"),
        "{names:?}"
    );
    let recorded = list.items.iter().find(|r| r.path == stored_path).unwrap();
    assert_eq!(recorded.server.as_deref(), Some("crm"));
    assert_eq!(recorded.tool.as_deref(), Some("contacts"));
    assert_eq!(recorded.format, "csv");
    assert!(recorded.recorded && recorded.deletable);
    let found = list.items.iter().find(|r| r.name == "todo.md").unwrap();
    assert_eq!((found.server.as_ref(), found.recorded), (None, false));
    assert_eq!(found.format, "md");
    assert!(
        !list
            .items
            .iter()
            .find(|r| r.name == "ref.txt")
            .unwrap()
            .deletable
    );

    let schema = schema(&engine, &stored_path).unwrap();
    let columns: Vec<(&str, &str)> = schema
        .columns
        .iter()
        .map(|c| (c.name.as_str(), c.kind.as_str()))
        .collect();
    assert_eq!(columns, [("id", "integer"), ("name", "string")]);
    let page = content(&engine, &stored_path, 0, 2).unwrap();
    assert_eq!(page.kind, "table");
    assert_eq!(page.columns.as_deref().unwrap(), ["id", "name"]);
    assert_eq!(
        page.rows.as_ref().unwrap(),
        &[vec!["1", "Ada"], vec!["2", "Grace"]]
    );
    assert_eq!(page.next_offset, Some(2));
    let page = content(&engine, &stored_path, 2, 10).unwrap();
    assert_eq!(page.rows.unwrap(), [vec!["3", "Linus"]]);
    assert_eq!(page.next_offset, None);
    assert_eq!(summary(&engine, &stored_path).unwrap().line_count, 4);
    let call = response_call(&engine, &stored_path).unwrap();
    assert_eq!(call.arguments["query"], "all");
    assert_eq!(call.arguments["api_key"], "[redacted]");
    assert_eq!(call.description.as_deref(), Some("every contact"));

    // A dropped file outside the roots previews and says it is outside.
    let info = file_info(&engine, outside.join("secret.txt").to_str().unwrap()).unwrap();
    assert_eq!(info.root, None);
    assert_eq!(
        info.folder,
        outside.canonicalize().unwrap().display().to_string()
    );
    assert!(
        summary(&engine, &info.path)
            .unwrap()
            .head
            .contains("outside")
    );
    let inside = file_info(&engine, &stored_path).unwrap();
    assert_eq!(
        inside.root.as_deref(),
        Some(t.root.canonicalize().unwrap().to_str().unwrap())
    );

    // Deleting: only inside a writable root, links resolved first.
    let e = delete_response(&engine, outside.join("secret.txt").to_str().unwrap()).unwrap_err();
    assert_eq!(e.code, ErrorCode::PathOutsideRoots);
    let e = delete_response(&engine, t.root.join("link.txt").to_str().unwrap()).unwrap_err();
    assert_eq!(e.code, ErrorCode::PathOutsideRoots);
    let e = delete_response(&engine, shelf.join("ref.txt").to_str().unwrap()).unwrap_err();
    assert_eq!(e.code, ErrorCode::ReadOnlyRoot);
    assert!(outside.join("secret.txt").exists() && shelf.join("ref.txt").exists());
    delete_response(&engine, &stored_path).unwrap();
    assert!(!std::path::Path::new(&stored_path).exists());
    assert!(
        responses(&engine)
            .items
            .iter()
            .all(|r| r.path != stored_path)
    );
}

#[tokio::test]
async fn the_feed_reports_new_calls_and_new_responses() {
    let t = TestContext::new();
    t.write_servers(json!({}));
    let engine = engine(&t);
    let mut feed = crate::activity::Feed::new(engine.clone());
    let first = feed.poll();
    assert!(first.events.is_empty() && !first.responses_changed);

    store_rows(&engine, "json", json!([{"a": 1}]));
    engine.events.emit(Event {
        time: chrono::Utc::now(),
        kind: EventKind::Store,
        tool: "call_tool_and_store".into(),
        client: Some("c/1".into()),
        server: Some("crm".into()),
        upstream_tool: Some("contacts".into()),
        file: None,
        format: Some("json".into()),
        bytes_in: 0,
        bytes_out: 10,
        rows: Some(1),
        batches: None,
        duration_ms: 3,
        outcome: "ok".into(),
        pid: 1,
    });
    let update = feed.poll();
    assert!(update.responses_changed);
    assert_eq!(update.events.len(), 1);
    assert_eq!(update.events[0].kind, EventKind::Store);
    assert!(!feed.poll().responses_changed, "reported once");

    // A file saved into a root by hand shows up too; reading one is not a change.
    std::fs::write(t.root.join("by-hand.csv"), "a\n1\n").unwrap();
    let mut seen = false;
    for _ in 0..40 {
        tokio::time::sleep(Duration::from_millis(50)).await;
        if feed.poll().responses_changed {
            seen = true;
            break;
        }
    }
    assert!(seen, "a new file in a root is noticed");
    tokio::time::sleep(Duration::from_millis(100)).await;
    feed.poll();
    summary(&engine, t.root.join("by-hand.csv").to_str().unwrap()).unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(!feed.poll().responses_changed, "a preview is not a change");
    assert_eq!(call_log(&engine, 10).len(), 1);
}
