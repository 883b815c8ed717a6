//! Retention rules: what they delete (only what Offload stored, in writable roots), the
//! preview the app asks before one is set; and what the Directories and Responses screens count.

use super::*;
use crate::config::Retention;
use rmcp::model::{CallToolResult, ContentBlock};

fn store(engine: &Engine, result: CallToolResult) -> crate::store::Record {
    let request = crate::store::StoreRequest {
        origin: crate::store::Origin {
            server: "shots",
            tool: "take",
            arguments: &json!({}),
            description: None,
            duration: Duration::from_millis(3),
        },
        destination: crate::store::Destination {
            format: Some("json"),
            ..Default::default()
        },
        result,
    };
    engine.store.store(&engine.roots(), request).unwrap().record
}

fn rows(n: usize) -> CallToolResult {
    CallToolResult::structured(json!((0..n).map(|i| json!({"id": i})).collect::<Vec<_>>()))
}

fn exists(path: &str) -> bool {
    std::path::Path::new(path).exists()
}

#[tokio::test]
async fn a_rule_deletes_only_old_or_excess_stored_responses_with_their_images() {
    let t = TestContext::new();
    let shelf = t.tmp.path().join("shelf");
    std::fs::create_dir_all(&shelf).unwrap();
    std::fs::write(shelf.join("old-input.csv"), "a\n1\n").unwrap();
    // A rule on a read-only root (written by hand) deletes nothing there.
    t.write_config(json!({
        "roots": [t.root, {"path": shelf, "writable": false, "retention": {"days": 1}}],
        "mcpServers": {},
    }));
    let engine = engine(&t);
    let root = t.root.canonicalize().unwrap().display().to_string();
    let png = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        b"\x89PNG\r\n\x1a\n not really",
    );
    let oldest = store(
        &engine,
        CallToolResult::success(vec![ContentBlock::image(png, "image/png")]),
    );
    assert_eq!(
        oldest.files.len(),
        1,
        "the image is written beside the answer"
    );
    let image = oldest.files[0].path.clone();
    let middle = store(&engine, rows(200));
    let newest = store(&engine, rows(100));
    std::fs::write(t.root.join("input.csv"), "a\n1\n").unwrap();

    // Both screens count the same files: 3 responses + 1 image stored, 1 other file.
    let listed = responses(&engine).items;
    let image_row = listed
        .iter()
        .find(|r| r.path == image)
        .expect("the image is listed");
    assert!(image_row.stored && image_row.beside.as_deref() == Some(oldest.path.as_str()));
    assert_eq!(image_row.server.as_deref(), Some("shots"));
    let ours = roots(&engine)
        .into_iter()
        .find(|r| r.resolved.as_deref() == Some(&root))
        .unwrap();
    let stored_here: Vec<_> = listed
        .iter()
        .filter(|r| r.root == root && r.stored)
        .collect();
    assert_eq!((ours.files, ours.others), (4, 1));
    assert_eq!(ours.files as usize, stored_here.len());
    assert_eq!(ours.bytes, stored_here.iter().map(|r| r.bytes).sum::<u64>());
    assert_eq!(ours.retention, None, "off by default");
    let shelf_view = roots(&engine).into_iter().find(|r| !r.writable).unwrap();
    assert_eq!((shelf_view.files, shelf_view.others), (0, 1));

    // No rule on the writable root: nothing goes, however late it is.
    let later = chrono::Utc::now() + chrono::Duration::days(400);
    assert!(sweep_at(&engine, later).is_empty());
    assert!(shelf.join("old-input.csv").exists());

    // Refused: a rule on a read-only root, zero days, a size that is not a size.
    let shelf_path = shelf.display().to_string();
    let days = |d| {
        Some(Retention {
            days: Some(d),
            max_gb: None,
        })
    };
    assert_eq!(
        set_root_retention(&engine, &shelf_path, days(3))
            .await
            .unwrap_err()
            .code,
        ErrorCode::InvalidArguments
    );
    assert!(set_root_retention(&engine, &root, days(0)).await.is_err());
    let nan = Some(Retention {
        days: None,
        max_gb: Some(f64::NAN),
    });
    assert!(set_root_retention(&engine, &root, nan).await.is_err());

    // A size budget keeps the newest that fit: here the two newest.
    let size = |r: &crate::store::Record| std::fs::metadata(&r.path).unwrap().len();
    let budget = size(&newest) + size(&middle);
    let by_size = Retention {
        days: None,
        max_gb: Some((budget as f64 + 0.5) / 1024f64.powi(3)),
    };
    let asked = retention_preview(&engine, &root, by_size);
    let oldest_size = size(&oldest) + std::fs::metadata(&image).unwrap().len();
    assert_eq!((asked.files, asked.bytes), (1, oldest_size));
    assert!(exists(&oldest.path), "a preview deletes nothing");
    set_root_retention(&engine, &root, Some(by_size))
        .await
        .unwrap();
    assert_eq!(
        file(&t)["roots"][0]["retention"],
        json!({"maxGb": by_size.max_gb.unwrap()})
    );
    assert_eq!(roots(&engine)[0].retention, Some(by_size));
    let swept = sweep_at(&engine, chrono::Utc::now());
    assert_eq!(swept.len(), 1);
    assert_eq!((swept[0].files, swept[0].bytes), (1, oldest_size));
    assert!(
        !exists(&oldest.path) && !exists(&image),
        "the image went with its answer"
    );
    assert!(exists(&middle.path) && exists(&newest.path));
    assert!(
        t.root.join("input.csv").exists(),
        "a file Offload did not store stays"
    );

    // Days: nothing is old yet; a week later both go, and the other file stays.
    set_root_retention(&engine, &root, days(7)).await.unwrap();
    assert!(sweep_at(&engine, chrono::Utc::now()).is_empty());
    let swept = sweep_at(&engine, chrono::Utc::now() + chrono::Duration::days(8));
    assert_eq!(swept[0].files, 2);
    assert!(!exists(&middle.path) && !exists(&newest.path));
    assert!(t.root.join("input.csv").exists() && shelf.join("old-input.csv").exists());
    let ours = roots(&engine)
        .into_iter()
        .find(|r| r.resolved.as_deref() == Some(&root))
        .unwrap();
    assert_eq!((ours.files, ours.others), (0, 1));

    // Off again: the key is gone from the file.
    set_root_retention(&engine, &root, None).await.unwrap();
    assert!(file(&t)["roots"][0].get("retention").is_none());
}
