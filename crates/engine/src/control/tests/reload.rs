//! Hand edits of the file put in effect while running.

use super::*;

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
