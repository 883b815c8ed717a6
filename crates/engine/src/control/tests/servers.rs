//! Servers added, edited, renamed, toggled and removed through the file; a broken file kept.

use super::*;

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

    let b_tools = engine.pool.get("b").unwrap().tools().await.unwrap();
    engine.pins.check("b", &b_tools);
    assert!(
        std::fs::read_to_string(engine.dirs.data_dir.join("pins.json"))
            .unwrap()
            .contains("\"b\"")
    );
    remove_server(&engine, "b").await.unwrap();
    assert_eq!(names(&engine), ["first"]);
    assert!(
        !std::fs::read_to_string(engine.dirs.data_dir.join("pins.json"))
            .unwrap()
            .contains("\"b\""),
        "a removed server's pins are forgotten"
    );

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

/// A server that fails every start is retried in the background; turning it off stops it at
/// once — its state, its buttons (no call waits on it) and its retries.
#[tokio::test]
async fn turning_off_a_crash_looping_server_takes_effect_at_once() {
    let t = TestContext::new();
    let starts = t.root.join("starts.log");
    let mut looping =
        TestContext::fixture(&["--starts-log", starts.to_str().unwrap(), "--fail-start"]);
    looping["startTimeoutSecs"] = json!(2);
    t.write_servers(json!({"fx": TestContext::fixture(&[]), "loop": looping}));
    let engine = engine(&t);
    // The desktop notification: said once when it fails, not on every retry.
    let mut notices = crate::control::Notices::default();
    assert!(
        notices
            .changes(&crate::control::Look::of(&engine))
            .is_empty()
    );
    assert!(server_tools(&engine, "loop").await.is_err());
    let said = notices.changes(&crate::control::Look::of(&engine));
    assert_eq!(said.len(), 1, "{said:?}");
    assert_eq!(said[0].title, "loop stopped working");
    assert!(said[0].body.contains("refusing to start"), "{said:?}");
    // Retried by itself (1 s, then 2 s later).
    let count = || {
        std::fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count()
    };
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    let server = engine.pool.get("loop").unwrap();
    while count() < 2 || server.status().status != ServerState::Error {
        assert!(
            std::time::Instant::now() < deadline,
            "no retry in the background"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    let status = server.status();
    assert_eq!(status.status, ServerState::Error);
    assert!(status.error.unwrap().contains("refusing to start"));
    assert!(
        notices
            .changes(&crate::control::Look::of(&engine))
            .is_empty(),
        "a retry that failed again is not news"
    );

    let started = std::time::Instant::now();
    set_server_enabled(&engine, "loop", false).await.unwrap();
    let took = started.elapsed();
    assert!(
        took < Duration::from_secs(1),
        "turning it off took {took:?}"
    );
    let view = servers(&engine)
        .into_iter()
        .find(|s| s.name == "loop")
        .unwrap();
    assert_eq!(view.status, ServerState::Disabled);
    let seen = count();
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert_eq!(count(), seen, "no start after it was turned off");
    engine.shutdown().await;
}

/// A server whose start hangs is turned off at once too, and the call waiting for it ends.
#[tokio::test]
async fn turning_off_a_server_that_hangs_while_starting_takes_effect_at_once() {
    let t = TestContext::new();
    let starts = t.root.join("starts.log");
    t.write_servers(json!({"hang": TestContext::fixture(&["--starts-log", starts.to_str().unwrap(), "--start-delay-ms", "600000"])}));
    let engine = engine(&t);
    let waiting = {
        let engine = engine.clone();
        tokio::spawn(async move { server_tools(&engine, "hang").await })
    };
    while !starts.exists() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let started = std::time::Instant::now();
    set_server_enabled(&engine, "hang", false).await.unwrap();
    let waited = tokio::time::timeout(Duration::from_secs(1), waiting)
        .await
        .expect("the waiting call ends with the server")
        .unwrap();
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert!(waited.unwrap_err().message.contains("stopped"));
    ended(&starts, "the hanging process").await;
    engine.shutdown().await;
}

/// *Stop retrying* ends the background retries of a failing server; a call still tries once.
#[tokio::test]
async fn stop_retrying_ends_background_starts() {
    let t = TestContext::new();
    let starts = t.root.join("starts.log");
    t.write_servers(json!({"loop": TestContext::fixture(&["--starts-log", starts.to_str().unwrap(), "--fail-start"])}));
    let engine = engine(&t);
    let count = || {
        std::fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count()
    };
    assert!(server_tools(&engine, "loop").await.is_err());
    let server = engine.pool.get("loop").unwrap();
    assert!(server.status().retry_in_secs.is_some());
    server.stop_retrying();
    assert_eq!(server.status().retry_in_secs, None);
    let seen = count();
    tokio::time::sleep(Duration::from_millis(2500)).await;
    assert_eq!(count(), seen, "no background start after Stop retrying");
    assert!(server_tools(&engine, "loop").await.is_err());
    assert_eq!(count(), seen + 1, "a call tries once");
    engine.shutdown().await;
}

#[tokio::test]
async fn held_tools_are_counted_without_asking_any_server() {
    let t = TestContext::new();
    t.write_config(
        json!({"roots": [t.root], "mcpServers": {"a": {"command": target_bin("offload-fixture")}}}),
    );
    let engine = engine(&t);
    assert_eq!(
        crate::control::tools::held_count(&engine),
        0,
        "nothing started"
    );
    let tools = engine.pool.get("a").unwrap().tools().await.unwrap();
    engine.pins.check("a", &tools);
    assert_eq!(crate::control::tools::held_count(&engine), 0);
    // The approved definition of echo differs from what the server lists now.
    let path = engine.dirs.data_dir.join("pins.json");
    let mut pins: serde_json::Value =
        serde_json::from_slice(&std::fs::read(&path).unwrap()).unwrap();
    pins["servers"]["a"]["echo"]["hash"] = json!("0000");
    // A later modification time than the save's, whatever the clock's granularity.
    std::thread::sleep(Duration::from_millis(50));
    let mut notices = crate::control::Notices::default();
    notices.changes(&crate::control::Look::of(&engine));
    std::fs::write(&path, serde_json::to_vec(&pins).unwrap()).unwrap();
    assert_eq!(crate::control::tools::held_count(&engine), 1);
    let look = crate::control::Look::of(&engine);
    assert_eq!(look.held, [("a".to_owned(), "echo".to_owned())]);
    let said = notices.changes(&look);
    assert_eq!(said.len(), 1);
    assert_eq!(said[0].title, "a changed its tool echo");
    approve_tool(&engine, "a", Some("echo")).await.unwrap();
    assert_eq!(crate::control::tools::held_count(&engine), 0);
}

/// Whether `server`'s `echo` is among the `usable` tools.
fn lists_echo(usable: &[(String, Vec<rmcp::model::Tool>)], server: &str) -> bool {
    usable
        .iter()
        .any(|(n, tools)| n == server && tools.iter().any(|t| t.name == "echo"))
}

/// The same when the user changed the entry while Offload was not running (turned a server's
/// sandbox off in the file, then started a client): the next Offload pins it afresh, and the
/// control, whose entry did not change, has its changed tool held.
#[tokio::test]
async fn a_server_whose_entry_changed_while_offload_was_not_running_is_pinned_afresh() {
    let t = TestContext::new();
    let flag = |n: &str| t.root.join(format!("echo-changed-{n}"));
    let entry = |n: &str, sandbox: Value| {
        json!({"command": target_bin("offload-fixture"),
               "args": ["--echo-changed-file", flag(n)], "sandbox": sandbox})
    };
    let config = |a: Value| json!({"roots": [t.root], "mcpServers": {"a": entry("a", a), "b": entry("b", json!({}))}});
    t.write_config(config(json!({})));
    let first = engine(&t);
    for name in ["a", "b"] {
        let tools = first.pool.get(name).unwrap().tools().await.unwrap();
        first.pins.check(name, &tools);
    }
    tokio::time::sleep(Duration::from_millis(200)).await; // pins saved
    first.shutdown().await;
    drop(first);
    std::fs::write(flag("a"), "").unwrap();
    std::fs::write(flag("b"), "").unwrap();
    t.write_config(config(json!("off")));
    let engine = engine(&t);
    for name in ["a", "b"] {
        engine.pool.get(name).unwrap().tools().await.unwrap();
    }
    tokio::time::sleep(Duration::from_millis(200)).await; // pins saved
    let (usable, held) = crate::available::usable(&engine, crate::upstream::Listing::Client).await;
    let has_echo = |s: &str| lists_echo(&usable, s);
    assert!(has_echo("a"), "a was pinned afresh: {held:?}");
    assert!(!has_echo("b"), "the control: b's changed echo is held");
    engine.shutdown().await;
}

/// A server whose entry the user changed (here its environment; turning its sandbox off is the
/// same) is pinned afresh: what it lists may follow from the change (desktop-commander's
/// descriptions name what it can see). The control: the same new definition from a server
/// whose entry did not change is held.
#[tokio::test]
async fn a_server_whose_entry_the_user_changed_is_pinned_afresh() {
    let t = TestContext::new();
    let flag = |n: &str| t.root.join(format!("echo-changed-{n}"));
    let entry = |n: &str, env: Value| {
        json!({"command": target_bin("offload-fixture"),
               "args": ["--echo-changed-file", flag(n)], "env": env})
    };
    let config = |env_a: Value| json!({"roots": [t.root], "mcpServers": {"a": entry("a", env_a), "b": entry("b", json!({}))}});
    t.write_config(config(json!({})));
    let engine = engine(&t);
    for name in ["a", "b"] {
        let tools = engine.pool.get(name).unwrap().tools().await.unwrap();
        engine.pins.check(name, &tools);
    }
    tokio::time::sleep(Duration::from_millis(200)).await; // pins saved
    // Both servers now describe echo otherwise; the user changed a's entry, not b's.
    std::fs::write(flag("a"), "").unwrap();
    std::fs::write(flag("b"), "").unwrap();
    t.write_config(config(json!({"MODE": "2"})));
    let reloaded = engine.reload().await.unwrap();
    assert_eq!(reloaded.servers.restarted, ["a"]);
    engine.pool.restart("b").await.unwrap();
    engine.pool.get("a").unwrap().tools().await.unwrap();
    tokio::time::sleep(Duration::from_millis(200)).await; // pins forgotten
    let (usable, held) = crate::available::usable(&engine, crate::upstream::Listing::Client).await;
    let has_echo = |s: &str| lists_echo(&usable, s);
    assert!(has_echo("a"), "a was pinned afresh: {held:?}");
    assert!(!has_echo("b"), "the control: b's changed echo is held");
    assert!(
        held.iter().any(|h| h.server == "b" && h.tool == "echo"),
        "{held:?}"
    );
    engine.shutdown().await;
}

/// *Test connection*: the server as the editor has it starts, lists its tools and stops again;
/// nothing is saved, nothing keeps running, a broken one answers why (with its stderr) in time.
#[tokio::test]
async fn test_connection_starts_lists_and_stops_without_saving() {
    let t = TestContext::new();
    t.write_servers(json!({"fx": TestContext::fixture(&[])}));
    let engine = engine(&t);
    let before = file(&t);
    let starts = t.root.join("starts.log");
    let spec = ServerSpec {
        args: vec!["--starts-log".into(), starts.display().to_string()],
        ..fixture()
    };
    let secret = NewSecret {
        place: Place::Env,
        key: "FIXTURE_TOKEN".into(),
        value: "typed-not-saved".into(),
    };
    let trial = test_server(&engine, "new one", &spec, &[secret])
        .await
        .unwrap();
    let tools = trial.tools.expect("it listed its tools");
    assert!(tools.iter().any(|t| t == "echo"), "{tools:?}");
    assert_eq!(trial.error, None);
    assert_eq!(file(&t), before, "nothing was saved");
    assert_eq!(names(&engine), ["fx"]);
    ended(&starts, "the tried server").await;

    // One that refuses to start: why, and what it printed.
    let broken = ServerSpec {
        args: vec![
            "--stderr".into(),
            "missing API key".into(),
            "--fail-start".into(),
        ],
        ..fixture()
    };
    let trial = test_server(&engine, "broken", &broken, &[]).await.unwrap();
    assert_eq!(trial.tools, None);
    assert!(trial.error.unwrap().contains("refusing to start"));
    assert!(trial.stderr.contains("missing API key"), "{}", trial.stderr);

    // One that hangs while starting answers within the trial's limit, and is ended.
    let hang_starts = t.root.join("hang.log");
    let hanging = ServerSpec {
        args: vec![
            "--starts-log".into(),
            hang_starts.display().to_string(),
            "--start-delay-ms".into(),
            "600000".into(),
        ],
        ..fixture()
    };
    let entry = hanging.to_entry().unwrap();
    let started = std::time::Instant::now();
    let (listed, _) = engine
        .pool
        .trial("hang", entry, Duration::from_secs(1))
        .await;
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    assert_eq!(listed.unwrap_err().code(), ErrorCode::UpstreamTimeout);
    ended(&hang_starts, "the hanging server").await;

    // A command that does not exist; an invalid entry is refused before anything starts.
    let missing = ServerSpec {
        command: "/nonexistent/offload-test-server".into(),
        ..fixture()
    };
    let trial = test_server(&engine, "missing", &missing, &[])
        .await
        .unwrap();
    assert!(trial.error.unwrap().contains("nonexistent"));
    let invalid = ServerSpec {
        command: String::new(),
        ..fixture()
    };
    assert!(test_server(&engine, "x", &invalid, &[]).await.is_err());
    engine.shutdown().await;
}

/// The Output tab's history: every stderr line kept, with its time, across restarts.
#[tokio::test]
async fn stderr_history_is_kept_across_restarts() {
    let t = TestContext::new();
    t.write_servers(json!({"fx": TestContext::fixture(&["--stderr", "hello from fx"])}));
    let engine = engine(&t);
    server_tools(&engine, "fx").await.unwrap();
    restart_server(&engine, "fx").await.unwrap();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    loop {
        let lines = server_stderr(&engine, "fx").unwrap();
        let hellos = lines.iter().filter(|l| l.text == "hello from fx").count();
        if hellos == 2 {
            assert!(lines.windows(2).all(|w| w[0].time <= w[1].time));
            break;
        }
        assert!(std::time::Instant::now() < deadline, "{lines:?}");
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert_eq!(
        server_stderr(&engine, "nope").unwrap_err().code,
        ErrorCode::UnknownServer
    );
    engine.shutdown().await;
}

/// Waits (at most 2 s) for the fixture that logs its starts to `starts` to be gone: every
/// process started for it (its launcher, and the server in its process namespace, whose pid
/// there is not its pid here).
async fn ended(starts: &std::path::Path, what: &str) {
    assert!(starts.exists(), "{what} started");
    let needle = starts.display().to_string();
    let deadline = std::time::Instant::now() + Duration::from_secs(2);
    while !offload_testkit::running_with(&needle).is_empty() {
        assert!(std::time::Instant::now() < deadline, "{what} still runs");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Desktop notifications are off until the switch writes `"notifications": true`; off removes it.
#[tokio::test]
async fn notifications_are_off_by_default_and_switched_in_the_file() {
    let t = TestContext::new();
    t.write_servers(json!({}));
    let engine = engine(&t);
    assert!(!crate::control::notifications(&engine));
    crate::control::set_notifications(&engine, true)
        .await
        .unwrap();
    assert_eq!(file(&t)["notifications"], json!(true));
    assert!(crate::control::notifications(&engine));
    crate::control::set_notifications(&engine, false)
        .await
        .unwrap();
    assert!(file(&t).get("notifications").is_none());
    assert!(!crate::control::notifications(&engine));
}
