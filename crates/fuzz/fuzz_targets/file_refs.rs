//! `$file` references in arbitrary tool arguments, against a real root on disk.
//!
//! Checks: no panic on any JSON; every resolved file lies inside the root; nothing outside it
//! is ever read (a secret file beside the root never shows up); the total stays within the
//! limit; after a successful resolution no reference is left (to the walk's depth).
#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use offload_engine::fuzzing::{RootEntry, Roots, resolve_refs};
use serde_json::{Map, Value};

const SECRET: &str = "OUTSIDE-SECRET-7f3a";
const LIMIT: u64 = 4096;

struct World {
    _dir: tempfile::TempDir,
    root: PathBuf,
    roots: Roots,
}

fn world() -> &'static World {
    static WORLD: OnceLock<World> = OnceLock::new();
    WORLD.get_or_init(|| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("root");
        std::fs::create_dir_all(root.join("sub")).unwrap();
        std::fs::write(root.join("a.txt"), "hello\n").unwrap();
        std::fs::write(root.join("b.json"), r#"{"k": [1, 2, {"$file": "a.txt"}]}"#).unwrap();
        std::fs::write(root.join("c.csv"), "id,name\n1,x\n2,y\n").unwrap();
        std::fs::write(root.join("sub/d.yaml"), "a: 1\nb: [x, y]\n").unwrap();
        std::fs::write(root.join("big.txt"), "x".repeat(LIMIT as usize + 1)).unwrap();
        std::fs::write(dir.path().join("secret.txt"), SECRET).unwrap();
        std::os::unix::fs::symlink(dir.path().join("secret.txt"), root.join("link.txt")).unwrap();
        let entries = [RootEntry::Path(root.display().to_string())];
        let (roots, _) = Roots::from_entries(&entries, &root);
        let root = root.canonicalize().unwrap();
        World {
            _dir: dir,
            root,
            roots,
        }
    })
}

/// References left at most `depth` levels down (the resolver's walk stops at 64).
fn refs_left(v: &Value, depth: usize) -> bool {
    if depth > 64 {
        return false;
    }
    match v {
        Value::Object(m) => {
            let is_ref = m.get("$file").is_some_and(Value::is_string)
                && (m.len() == 1 || (m.len() == 2 && m.get("as").is_some_and(Value::is_string)));
            is_ref || m.values().any(|v| refs_left(v, depth + 1))
        }
        Value::Array(items) => items.iter().any(|v| refs_left(v, depth + 1)),
        _ => false,
    }
}

fuzz_target!(|data: &[u8]| {
    let Ok(mut args) = serde_json::from_slice::<Map<String, Value>>(data) else {
        return;
    };
    // The secret may only show up if the model sent it itself.
    if data.windows(SECRET.len()).any(|w| w == SECRET.as_bytes()) {
        return;
    }
    let w = world();
    let before = args.clone();
    match resolve_refs(&mut args, &w.roots, LIMIT) {
        Ok(done) => {
            assert!(done.iter().map(|r| r.bytes).sum::<u64>() <= LIMIT);
            for r in &done {
                assert!(
                    std::path::Path::new(&r.path).starts_with(&w.root),
                    "{} is outside the root",
                    r.path
                );
            }
            // File data is never scanned for references, so only check what the model sent.
            if done.is_empty() {
                assert_eq!(args, before);
                assert!(!args.values().any(|v| refs_left(v, 0)));
            }
            let text = serde_json::to_string(&args).unwrap();
            assert!(!text.contains(SECRET), "a file outside the root was read");
        }
        Err(e) => {
            let text = format!("{e:?}");
            assert!(
                !text.contains(SECRET),
                "an error quotes a file outside the root"
            );
        }
    }
});
