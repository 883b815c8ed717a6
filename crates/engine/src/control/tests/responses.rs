//! Stored responses: the list, previews, deletion, and the live feed.

use super::*;

fn store_rows(engine: &Engine, format: &str, rows: Value) -> crate::store::Stored {
    let request = crate::store::StoreRequest {
        origin: crate::store::Origin {
            server: "crm",
            tool: "contacts",
            arguments: &json!({"query": "all", "api_key": "k-123"}),
            description: Some("every contact".into()),
            duration: Duration::from_millis(12),
        },
        destination: crate::store::Destination {
            format: Some(format),
            ..Default::default()
        },
        result: rmcp::model::CallToolResult::structured(rows),
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
    assert!(recorded.recorded && recorded.deletable && recorded.stored);
    let found = list.items.iter().find(|r| r.name == "todo.md").unwrap();
    assert_eq!(
        (found.server.as_ref(), found.recorded, found.stored),
        (None, false, false)
    );
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
        kind: EventKind::Store,
        tool: "call_tool_and_store".into(),
        client: Some("c/1".into()),
        server: Some("crm".into()),
        upstream_tool: Some("contacts".into()),
        format: Some("json".into()),
        bytes_out: 10,
        bytes_kept: 0,
        rows: Some(1),
        duration_ms: 3,
        ..crate::events::sample(0)
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

#[tokio::test]
async fn a_dropped_folder_is_described_as_one() {
    let t = TestContext::new();
    let outside = t.tmp.path().join("drop me");
    std::fs::create_dir_all(outside.join("inner")).unwrap();
    t.write_config(json!({"roots": [t.root], "mcpServers": {}}));
    let engine = engine(&t);
    let info = file_info(&engine, outside.to_str().unwrap()).unwrap();
    assert!(info.directory);
    assert_eq!(
        (info.name.as_str(), info.root.as_deref()),
        ("drop me", None)
    );
    assert_eq!(
        info.path,
        outside.canonicalize().unwrap().display().to_string()
    );
    std::fs::create_dir_all(t.root.join("sub")).unwrap();
    let inside = file_info(&engine, t.root.join("sub").to_str().unwrap()).unwrap();
    assert!(inside.directory);
    assert_eq!(
        inside.root.as_deref(),
        Some(t.root.canonicalize().unwrap().to_str().unwrap())
    );
    let file = t.root.join("a.txt");
    std::fs::write(&file, "x").unwrap();
    assert!(
        !file_info(&engine, file.to_str().unwrap())
            .unwrap()
            .directory
    );
}

#[tokio::test]
async fn json_lines_preview_as_a_table_of_records_and_other_lines_as_text() {
    let t = TestContext::new();
    t.write_config(json!({"roots": [t.root], "mcpServers": {}}));
    let engine = engine(&t);
    let records = t.root.join("events.jsonl");
    std::fs::write(
        &records,
        "{\"id\":1,\"name\":\"Ada\"}\n\n{\"id\":2,\"tags\":[\"x\"],\"name\":null}\n{\"id\":3,\"extra\":true}\n",
    )
    .unwrap();
    let page = content(&engine, records.to_str().unwrap(), 0, 3).unwrap();
    assert_eq!(page.kind, "table");
    assert_eq!(page.columns.as_deref().unwrap(), ["id", "name", "tags"]);
    assert_eq!(
        page.rows.as_ref().unwrap(),
        &[vec!["1", "Ada", ""], vec!["2", "", "[\"x\"]"]]
    );
    assert_eq!(page.offset, 0);
    assert!(page.next_offset.is_some());
    let rest = content(
        &engine,
        records.to_str().unwrap(),
        page.next_offset.unwrap(),
        10,
    )
    .unwrap();
    assert_eq!(rest.columns.as_deref().unwrap(), ["id", "extra"]);
    assert_eq!(rest.rows.unwrap(), [vec!["3", "true"]]);
    assert_eq!(rest.next_offset, None);

    // A line that is not an object: the page is text, nothing lost.
    let mixed = t.root.join("mixed.ndjson");
    std::fs::write(&mixed, "{\"id\":1}\n[1,2]\nnot json\n").unwrap();
    let page = content(&engine, mixed.to_str().unwrap(), 0, 10).unwrap();
    assert_eq!(page.rows, None);
    assert_eq!(page.text.as_deref().unwrap(), "{\"id\":1}\n[1,2]\nnot json");
}

#[tokio::test]
async fn a_table_whose_values_hold_line_breaks_says_its_position_in_lines() {
    let t = TestContext::new();
    t.write_config(json!({"roots": [t.root], "mcpServers": {}}));
    let engine = engine(&t);
    let path = t.root.join("notes.csv");
    std::fs::write(&path, "id,text\n1,\"two\nlines\"\n2,plain\n").unwrap();
    let page = content(&engine, path.to_str().unwrap(), 0, 10).unwrap();
    assert_eq!(
        page.rows.as_ref().unwrap(),
        &[vec!["1", "two\nlines"], vec!["2", "plain"]]
    );
    assert_eq!((page.count, page.total), (3, Some(3)));
    assert!(
        page.note
            .as_deref()
            .unwrap()
            .starts_with("2 rows on these 3 lines"),
        "{:?}",
        page.note
    );
    // One line per row: no note.
    std::fs::write(&path, "id,text\n1,a\n2,b\n").unwrap();
    let page = content(&engine, path.to_str().unwrap(), 0, 10).unwrap();
    assert_eq!((page.count, page.note), (2, None));
}
