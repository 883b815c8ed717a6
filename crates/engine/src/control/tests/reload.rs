//! Hand edits of the file put in effect while running.

use super::*;

/// An engine watching its file, its one server "a" started; the watch lasts as long as `_watch`.
struct Watched {
    engine: Arc<Engine>,
    changed: tokio::sync::watch::Receiver<u64>,
    a: Arc<crate::upstream::Upstream>,
    _watch: crate::config_watch::ConfigWatch,
}

async fn watched(t: &TestContext) -> Watched {
    t.write_servers(json!({"a": TestContext::fixture(&[])}));
    let engine = engine(t);
    let _watch = crate::config_watch::watch(engine.clone()).unwrap().unwrap();
    let changed = engine.watch();
    server_tools(&engine, "a").await.unwrap();
    let a = engine.pool.get("a").unwrap();
    Watched {
        engine,
        changed,
        a,
        _watch,
    }
}

#[tokio::test]
async fn edits_on_disk_are_picked_up_while_running() {
    let t = TestContext::new();
    let Watched {
        engine,
        mut changed,
        a,
        _watch,
    } = watched(&t).await;

    // Saved the way editors save: a new file renamed over the old one ("a" as the file has it:
    // a new user's entry, confined by default, left as written).
    let on_disk: Value = serde_json::from_slice(&std::fs::read(&t.config_path).unwrap()).unwrap();
    assert!(on_disk["mcpServers"]["a"].get("sandbox").is_none());
    let next = json!({"roots": [t.root], "mcpServers": {
        "a": on_disk["mcpServers"]["a"],
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

/// A writer that truncates the file before it writes (Python's `write_text`, `echo >`, some
/// editors) leaves it empty for a moment; a reload that reads it then keeps every server as it
/// was (not "no servers", which stopped them all and restarted them a moment later), and the
/// written file is put in effect by the write's own event.
#[tokio::test]
async fn a_file_read_while_it_is_being_written_stops_nothing() {
    let t = TestContext::new();
    let Watched {
        engine,
        mut changed,
        a,
        _watch,
    } = watched(&t).await;
    let on_disk = std::fs::read(&t.config_path).unwrap();

    std::fs::write(&t.config_path, "").unwrap();
    let error = engine
        .reload()
        .await
        .expect_err("an empty file is not put in effect");
    assert!(error.to_string().contains("empty"), "{error}");
    assert_eq!(names(&engine), ["a"]);
    assert!(
        Arc::ptr_eq(&a, &engine.pool.get("a").unwrap()),
        "a untouched"
    );

    // The write ends: the same servers plus one.
    let mut next: Value = serde_json::from_slice(&on_disk).unwrap();
    next["mcpServers"]["b"] = TestContext::fixture(&[]);
    std::fs::write(&t.config_path, serde_json::to_vec_pretty(&next).unwrap()).unwrap();
    tokio::time::timeout(Duration::from_secs(10), async {
        while names(&engine) != ["a", "b"] || engine.config_error().is_some() {
            changed.changed().await.unwrap();
        }
    })
    .await
    .expect("the written file is put in effect");
    assert!(
        Arc::ptr_eq(&a, &engine.pool.get("a").unwrap()),
        "a still untouched"
    );
    engine.shutdown().await;
}

/// A keychain that is slow to give the secret `slow` (a Secret Service waking up).
struct SlowKeychain;

impl SecretSource for SlowKeychain {
    fn secret(&self, name: &str) -> Result<Option<String>, String> {
        if name == "slow" {
            std::thread::sleep(Duration::from_millis(400));
        }
        Ok(Some("key".into()))
    }
}

/// Two reloads at once — the file watcher's and a change made in the app — put the newer file
/// in effect last. Here the watcher's reload reads the file first and is slow to build its roots
/// (its bucket root's key comes from a slow keychain); the file changes meanwhile, the app adds
/// a folder and asks about it at once: the older roots must not be put back after the newer.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn of_reloads_at_once_the_newest_file_wins() {
    let t = TestContext::new();
    let bucket = |key: &str| {
        json!({"path": "s3://bucket/team", "endpoint": "http://127.0.0.1:9", "region": "us-east-1",
               "accessKeyId": format!("${{keyring:{key}}}"), "secretAccessKey": "${keyring:s}"})
    };
    t.write_config(json!({"roots": [t.root, bucket("fast")], "mcpServers": {}}));
    let engine = engine_with(&t, Arc::new(SlowKeychain));
    let folder = std::fs::canonicalize(t.tmp.path())
        .unwrap()
        .join("dropped-folder");
    std::fs::create_dir(&folder).unwrap();
    let path = folder.to_str().unwrap().to_owned();

    // The watcher's reload reads a file whose bucket key is slow to come.
    t.write_config(json!({"roots": [t.root, bucket("slow")], "mcpServers": {}}));
    let watcher = {
        let engine = engine.clone();
        tokio::spawn(async move { engine.reload().await.map(|_| ()) })
    };
    tokio::time::sleep(Duration::from_millis(100)).await;
    t.write_config(json!({"roots": [t.root, bucket("fast")], "mcpServers": {}}));
    add_root(&engine, &path, false).await.unwrap();
    assert_eq!(
        file_info(&engine, &path).unwrap().root.as_deref(),
        Some(path.as_str()),
        "the folder just allowed is allowed"
    );
    watcher.await.unwrap().unwrap();
    assert_eq!(
        file_info(&engine, &path).unwrap().root.as_deref(),
        Some(path.as_str()),
        "and stays allowed after the older reload ends"
    );
}
