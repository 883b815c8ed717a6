//! Allowed directories edited through the file.

use super::*;

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
async fn url_patterns_are_allowed_checked_and_removed_through_the_file() {
    let t = TestContext::new();
    t.write_config(json!({"mcpServers": {}, "urls": {"timeoutSecs": 30}}));
    let engine = engine(&t);
    assert!(urls(&engine).allow.is_empty(), "none by default");
    let url = url::Url::parse("https://data.example.com/r/a.csv").unwrap();
    assert!(engine.url_rules().allowing(&url).is_err());

    allow_url(&engine, " https://data.example.com/r/* ")
        .await
        .unwrap();
    allow_url(&engine, "https://*.cdn.example.com")
        .await
        .unwrap();
    let view = urls(&engine);
    assert_eq!(
        view.allow
            .iter()
            .map(|p| (p.pattern.as_str(), p.names_host))
            .collect::<Vec<_>>(),
        [
            ("https://data.example.com/r/*", true),
            ("https://*.cdn.example.com", false)
        ]
    );
    assert_eq!(view.timeout_secs, 30, "the other settings stay");
    assert_eq!(file(&t)["urls"]["timeoutSecs"], 30);
    assert!(
        engine.url_rules().allowing(&url).is_ok(),
        "in effect at once"
    );

    let e = allow_url(&engine, "https://data.example.com/r/*")
        .await
        .unwrap_err();
    assert!(e.message.contains("already allowed"), "{e:?}");
    let e = allow_url(&engine, "data.example.com").await.unwrap_err();
    assert!(e.message.contains("scheme"), "{e:?}");
    let e = allow_url(&engine, "https://user:pw@example.com/*")
        .await
        .unwrap_err();
    assert!(e.message.contains("user name"), "{e:?}");

    remove_url(&engine, "https://data.example.com/r/*")
        .await
        .unwrap();
    assert!(engine.url_rules().allowing(&url).is_err());
    assert_eq!(
        file(&t)["urls"]["allow"],
        json!(["https://*.cdn.example.com"])
    );

    // A hand-written pattern that does not parse is shown with why it is skipped.
    t.write_config(json!({"mcpServers": {}, "urls": {"allow": ["ftp://x.org/*"]}}));
    engine.reload().await.unwrap();
    let view = urls(&engine);
    assert!(
        view.allow[0]
            .problem
            .as_deref()
            .unwrap()
            .contains("only http and https"),
        "{view:?}"
    );
}

/// A dropped folder allowed read-only is then inside an allowed directory (itself), as the
/// Dropped screen asks right after allowing it.
#[tokio::test]
async fn an_added_folder_is_its_own_allowed_directory() {
    let t = TestContext::new();
    t.write_config(json!({"mcpServers": {}}));
    let engine = engine(&t);
    let folder = std::fs::canonicalize(t.tmp.path())
        .unwrap()
        .join("dropped-folder");
    std::fs::create_dir(&folder).unwrap();
    std::fs::write(folder.join("a.csv"), "a\n1\n").unwrap();
    let path = folder.to_str().unwrap();
    assert_eq!(file_info(&engine, path).unwrap().root, None);
    add_root(&engine, path, false).await.unwrap();
    let info = file_info(&engine, path).unwrap();
    assert!(info.directory);
    assert_eq!(info.root.as_deref(), Some(path));
}
