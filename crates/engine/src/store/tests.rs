use super::*;
use crate::config::RootEntry;
use rmcp::model::ContentBlock;
use serde_json::json;

struct Fx {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    roots: Roots,
    store: Store,
}

fn fx() -> Fx {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    std::fs::create_dir_all(base.join("root")).unwrap();
    std::fs::create_dir_all(base.join("ro")).unwrap();
    std::fs::create_dir_all(base.join("outside")).unwrap();
    let (roots, _) = Roots::from_entries(
        &[
            RootEntry::Path(base.join("root").display().to_string()),
            RootEntry::Full {
                path: base.join("ro").display().to_string(),
                writable: false,
                extra: Default::default(),
            },
        ],
        &base.join("fallback"),
    );
    let (store, _) = Store::open(&base.join("data"), &roots);
    Fx {
        _tmp: tmp,
        base,
        roots,
        store,
    }
}

fn result(v: Value) -> CallToolResult {
    let mut r = CallToolResult::success(vec![ContentBlock::text(v.to_string())]);
    r.structured_content = Some(v);
    r
}

fn req<'a>(r: &CallToolResult, args: &'a Value) -> StoreRequest<'a> {
    StoreRequest {
        origin: Origin {
            server: "srv",
            tool: "list",
            arguments: args,
            description: Some("test".into()),
            duration: Duration::from_millis(5),
        },
        destination: Destination::default(),
        result: r.clone(),
    }
}

#[test]
fn stores_in_the_default_directory_with_a_default_name_and_records_it() {
    let f = fx();
    let r = result(json!({"results": [{"id": 1, "name": "a"}, {"id": 2, "name": "b"}]}));
    let args = json!({"q": "x", "token": "secret-value"});
    let mut rq = req(&r, &args);
    rq.destination.format = Some("csv");
    let stored = f.store.store(&f.roots, rq).unwrap();
    let path = PathBuf::from(&stored.record.path);
    assert!(path.starts_with(f.base.join("root")));
    assert!(
        path.file_name()
            .unwrap()
            .to_str()
            .unwrap()
            .starts_with("srv-list-")
    );
    assert_eq!(
        std::fs::read_to_string(&path).unwrap(),
        "id,name\r\n1,a\r\n2,b\r\n"
    );
    assert_eq!(stored.summary.rows, Some(2));
    assert!(
        stored
            .text
            .contains("2 rows x 2 columns: id integer, name string"),
        "{}",
        stored.text
    );
    assert!(stored.text.len() <= 600);
    assert!(stored.record.uri.starts_with("file:///"));
    assert_eq!(stored.record.arguments["token"], "[redacted]");
    let records = f.store.records();
    assert_eq!(records.len(), 1);
    assert_eq!(records[0].id, stored.record.id);
    // Reopening reads the same records back.
    let (again, _) = Store::open(&f.base.join("data"), &f.roots);
    assert_eq!(again.records()[0].id, stored.record.id);
}

#[test]
fn filenames_and_storage_paths_cannot_leave_the_roots() {
    let f = fx();
    let r = result(json!([1]));
    let args = json!({});
    let outside = f.base.join("outside");
    std::os::unix::fs::symlink(&outside, f.base.join("root/link-out")).unwrap();
    for (storage, name, code) in [
        (None, Some("../x.json"), ErrorCode::InvalidArguments),
        (None, Some("/abs.json"), ErrorCode::InvalidArguments),
        (None, Some("a/b.json"), ErrorCode::InvalidArguments),
        (Some("../outside"), None, ErrorCode::PathOutsideRoots),
        (
            Some(outside.to_str().unwrap()),
            None,
            ErrorCode::PathOutsideRoots,
        ),
        (Some("link-out"), None, ErrorCode::PathOutsideRoots),
        (
            Some(f.base.join("ro").to_str().unwrap()),
            None,
            ErrorCode::ReadOnlyRoot,
        ),
    ] {
        let mut rq = req(&r, &args);
        rq.destination.storage_path = storage;
        rq.destination.filename = name;
        let e = f.store.store(&f.roots, rq).unwrap_err();
        assert_eq!(e.code, code, "{storage:?} {name:?}: {e}");
    }
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "nothing written outside"
    );
}

#[test]
fn existing_files_are_never_overwritten_and_formats_follow_the_name() {
    let f = fx();
    let r = result(json!({"a": 1}));
    let args = json!({});
    let mut rq = req(&r, &args);
    rq.destination.filename = Some("out.yaml");
    let s = f.store.store(&f.roots, rq).unwrap();
    assert_eq!(s.record.format, "yaml");
    let mut rq = req(&r, &args);
    rq.destination.filename = Some("out.yaml");
    assert_eq!(
        f.store.store(&f.roots, rq).unwrap_err().code,
        ErrorCode::FileExists
    );
    let mut rq = req(&r, &args);
    rq.destination.filename = Some("other.csv");
    rq.destination.format = Some("json");
    assert_eq!(
        f.store.store(&f.roots, rq).unwrap_err().code,
        ErrorCode::InvalidArguments
    );
    let mut rq = req(&r, &args);
    rq.destination.format = Some("feather");
    assert_eq!(
        f.store.store(&f.roots, rq).unwrap_err().code,
        ErrorCode::UnsupportedFormat
    );
    let mut rq = req(&r, &args);
    rq.destination.filename = Some("noext");
    rq.destination.format = Some("md");
    assert!(
        f.store
            .store(&f.roots, rq)
            .unwrap()
            .record
            .path
            .ends_with("noext.md")
    );
}

#[test]
fn missing_storage_directories_are_created_inside_the_root() {
    let f = fx();
    let r = result(json!({"a": 1}));
    let args = json!({});
    let mut rq = req(&r, &args);
    rq.destination.storage_path = Some("reports/2026");
    let s = f.store.store(&f.roots, rq).unwrap();
    assert!(
        s.record
            .path
            .starts_with(&f.base.join("root/reports/2026").display().to_string())
    );
}

#[test]
fn binary_blocks_are_written_beside_the_main_file() {
    use base64::Engine as _;
    let f = fx();
    let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG\r\n\x1a\nrest");
    let r = CallToolResult::success(vec![
        ContentBlock::text("a picture"),
        ContentBlock::image(png, "image/png"),
    ]);
    let args = json!({});
    let mut rq = req(&r, &args);
    rq.destination.filename = Some("pic.json");
    let s = f.store.store(&f.roots, rq).unwrap();
    assert_eq!(s.record.files.len(), 1);
    let side = &s.record.files[0];
    assert!(side.path.ends_with("pic.1.png"));
    assert_eq!(std::fs::read(&side.path).unwrap(), b"\x89PNG\r\n\x1a\nrest");
    let main: Value =
        serde_json::from_str(&std::fs::read_to_string(&s.record.path).unwrap()).unwrap();
    assert_eq!(main[1]["file"], "pic.1.png");
}

#[cfg(unix)]
#[test]
fn the_records_index_and_the_audit_log_are_private() {
    use std::os::unix::fs::PermissionsExt;
    let dir = tempfile::tempdir().unwrap();
    let records = dir.path().join("records.jsonl");
    // An index an older version left readable by others is made private on the next write.
    std::fs::write(&records, "").unwrap();
    std::fs::set_permissions(&records, std::fs::Permissions::from_mode(0o644)).unwrap();
    let mut file = crate::whole_file::open_private_append(&records).unwrap();
    std::io::Write::write_all(&mut file, b"{}\n").unwrap();
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&records), 0o600);
    let events = crate::events::Events::new(Some(dir.path()), 1024 * 1024);
    events.emit(crate::events::sample(1));
    let audit = std::fs::read_dir(dir.path())
        .unwrap()
        .filter_map(Result::ok)
        .map(|e| e.path())
        .find(|p| {
            p.file_name()
                .is_some_and(|n| n.to_string_lossy().starts_with("audit"))
        })
        .expect("an audit log");
    assert_eq!(mode(&audit), 0o600);
}
