use super::*;
use crate::ErrorCode;
use guard::Resolved;
use std::os::unix::fs::symlink;

struct Fixture {
    _tmp: tempfile::TempDir,
    base: PathBuf,
    roots: Roots,
}

/// base/data (rw, default), base/ro (read-only), base/data-evil and base/outside (not roots).
fn fixture() -> Fixture {
    let tmp = tempfile::tempdir().unwrap();
    let base = std::fs::canonicalize(tmp.path()).unwrap();
    for d in ["data/sub", "ro", "data-evil", "outside"] {
        std::fs::create_dir_all(base.join(d)).unwrap();
    }
    std::fs::write(base.join("data/a.txt"), "a").unwrap();
    std::fs::write(base.join("data/sub/b.txt"), "b").unwrap();
    std::fs::write(base.join("ro/r.txt"), "r").unwrap();
    std::fs::write(base.join("data-evil/x.txt"), "x").unwrap();
    std::fs::write(base.join("outside/secret.txt"), "secret").unwrap();
    let entries = vec![
        RootEntry::Path(base.join("data").to_string_lossy().into_owned()),
        RootEntry::Full {
            path: base.join("ro").to_string_lossy().into_owned(),
            writable: false,
            extra: Default::default(),
        },
    ];
    let (roots, warnings) = Roots::from_entries(&entries, &base.join("fallback"));
    assert!(warnings.is_empty(), "{warnings:?}");
    Fixture {
        _tmp: tmp,
        base,
        roots,
    }
}

fn code(r: Result<Resolved, PathError>) -> ErrorCode {
    r.unwrap_err().code()
}

#[test]
fn relative_paths_resolve_against_the_default_root() {
    let f = fixture();
    let r = f.roots.resolve("sub/b.txt", Access::Read).unwrap();
    assert_eq!(r.path, f.base.join("data/sub/b.txt"));
    assert_eq!(r.relative(), Path::new("sub/b.txt"));
    assert_eq!(f.roots.default_dir(), Some(f.base.join("data").as_path()));
}

#[test]
fn dot_dot_cannot_leave_a_root() {
    let f = fixture();
    for p in [
        "../outside/secret.txt",
        "sub/../../outside/secret.txt",
        "../../../../../etc/passwd",
    ] {
        assert_eq!(
            code(f.roots.resolve(p, Access::Read)),
            ErrorCode::PathOutsideRoots,
            "{p}"
        );
    }
    // `..` that stays inside is fine.
    assert!(f.roots.resolve("sub/../a.txt", Access::Read).is_ok());
}

#[test]
fn absolute_paths_outside_are_refused_and_existence_is_not_revealed() {
    let f = fixture();
    let secret = f.base.join("outside/secret.txt");
    let missing = f.base.join("outside/missing.txt");
    assert_eq!(
        code(f.roots.resolve(secret.to_str().unwrap(), Access::Read)),
        ErrorCode::PathOutsideRoots
    );
    assert_eq!(
        code(f.roots.resolve(missing.to_str().unwrap(), Access::Read)),
        ErrorCode::PathOutsideRoots
    );
    assert_eq!(
        code(f.roots.resolve("/etc/passwd", Access::Read)),
        ErrorCode::PathOutsideRoots
    );
}

#[test]
fn sibling_prefix_is_not_inside() {
    let f = fixture();
    let evil = f.base.join("data-evil/x.txt");
    assert_eq!(
        code(f.roots.resolve(evil.to_str().unwrap(), Access::Read)),
        ErrorCode::PathOutsideRoots
    );
    assert_eq!(
        code(f.roots.resolve("../data-evil/x.txt", Access::Read)),
        ErrorCode::PathOutsideRoots
    );
}

#[test]
fn symlinks_leading_out_are_refused_and_inside_ones_followed() {
    let f = fixture();
    symlink(
        f.base.join("outside/secret.txt"),
        f.base.join("data/link-out"),
    )
    .unwrap();
    symlink(f.base.join("outside"), f.base.join("data/dir-out")).unwrap();
    symlink(f.base.join("data/sub/b.txt"), f.base.join("data/link-in")).unwrap();
    assert_eq!(
        code(f.roots.resolve("link-out", Access::Read)),
        ErrorCode::PathOutsideRoots
    );
    assert_eq!(
        code(f.roots.resolve("dir-out/secret.txt", Access::Read)),
        ErrorCode::PathOutsideRoots
    );
    assert_eq!(
        f.roots.open_read("link-out").unwrap_err().code(),
        ErrorCode::PathOutsideRoots
    );
    let (mut file, r) = f.roots.open_read("link-in").unwrap();
    assert_eq!(r.path, f.base.join("data/sub/b.txt"));
    let mut s = String::new();
    std::io::Read::read_to_string(&mut file, &mut s).unwrap();
    assert_eq!(s, "b");
}

#[test]
fn a_path_swapped_for_a_symlink_after_the_check_is_not_opened() {
    let f = fixture();
    let resolved = f.roots.resolve("a.txt", Access::Read).unwrap();
    // Between check and use, a.txt becomes a link to a file outside.
    std::fs::remove_file(f.base.join("data/a.txt")).unwrap();
    symlink(f.base.join("outside/secret.txt"), f.base.join("data/a.txt")).unwrap();
    let err = guard_open(&resolved).unwrap_err();
    assert_eq!(err.code(), ErrorCode::PathOutsideRoots);
}

fn guard_open(r: &Resolved) -> Result<std::fs::File, PathError> {
    // Same function open_read uses after resolving.
    super::guard::open_beneath_for_tests(r)
}

#[test]
fn read_only_roots_refuse_writes_and_nested_roots_pick_the_innermost() {
    let f = fixture();
    let r = f.base.join("ro/r.txt");
    assert!(f.roots.resolve(r.to_str().unwrap(), Access::Read).is_ok());
    assert_eq!(
        code(f.roots.resolve(r.to_str().unwrap(), Access::Write)),
        ErrorCode::ReadOnlyRoot
    );

    let entries = vec![
        RootEntry::Path(f.base.to_string_lossy().into_owned()),
        RootEntry::Full {
            path: f.base.join("ro").to_string_lossy().into_owned(),
            writable: false,
            extra: Default::default(),
        },
    ];
    let (nested, _) = Roots::from_entries(&entries, &f.base.join("fallback"));
    assert_eq!(
        code(nested.resolve(r.to_str().unwrap(), Access::Write)),
        ErrorCode::ReadOnlyRoot
    );
    assert!(
        nested
            .resolve(f.base.join("data/a.txt").to_str().unwrap(), Access::Write)
            .is_ok()
    );
}

#[test]
fn missing_files_inside_are_not_found_and_bad_inputs_are_unusable() {
    let f = fixture();
    assert_eq!(
        code(f.roots.resolve("nope.txt", Access::Read)),
        ErrorCode::PathNotFound
    );
    assert_eq!(
        code(f.roots.resolve("", Access::Read)),
        ErrorCode::PathUnusable
    );
    assert_eq!(
        code(f.roots.resolve("a\0b", Access::Read)),
        ErrorCode::PathUnusable
    );
}

#[test]
fn tilde_expands_to_home_which_is_not_a_root_here() {
    let f = fixture();
    assert_eq!(
        code(f.roots.resolve("~/.ssh/id_rsa", Access::Read)),
        ErrorCode::PathOutsideRoots
    );
}

#[test]
fn no_configured_root_means_one_created_default_root() {
    let tmp = tempfile::tempdir().unwrap();
    let fallback = tmp.path().join("data/offload/files");
    let (roots, warnings) = Roots::from_entries(&[], &fallback);
    assert!(warnings.is_empty());
    assert_eq!(roots.list().len(), 1);
    assert!(roots.list()[0].writable);
    assert_eq!(
        roots.default_dir().unwrap(),
        std::fs::canonicalize(&fallback).unwrap()
    );
}

#[test]
fn unusable_roots_are_skipped_with_a_warning() {
    let tmp = tempfile::tempdir().unwrap();
    let entries = vec![
        RootEntry::Path("relative/dir".into()),
        RootEntry::Full {
            path: tmp.path().join("missing-ro").to_string_lossy().into_owned(),
            writable: false,
            extra: Default::default(),
        },
    ];
    let (roots, warnings) = Roots::from_entries(&entries, &tmp.path().join("fb"));
    assert_eq!(warnings.len(), 2, "{warnings:?}");
    assert_eq!(roots.list().len(), 1, "falls back to the default root");
}

#[test]
fn a_missing_writable_root_is_reported_and_never_created() {
    let tmp = tempfile::tempdir().unwrap();
    let existing = tmp.path().join("exists");
    std::fs::create_dir_all(&existing).unwrap();
    let missing = tmp.path().join("nonexistent/rw");
    let entries = vec![
        RootEntry::Path(missing.to_string_lossy().into_owned()),
        RootEntry::Path(existing.to_string_lossy().into_owned()),
    ];
    let (roots, warnings) = Roots::from_entries(&entries, &tmp.path().join("fb"));
    assert!(!missing.exists(), "a configured root is never created");
    assert!(!tmp.path().join("nonexistent").exists());
    assert_eq!(roots.list().len(), 1);
    assert_eq!(
        roots.default_dir().unwrap(),
        std::fs::canonicalize(&existing).unwrap()
    );
    assert_eq!(roots.unavailable().len(), 1);
    assert!(roots.unavailable()[0].reason.contains("does not exist"));
    assert!(warnings[0].contains("nonexistent/rw"), "{warnings:?}");
    assert!(
        !tmp.path().join("fb").exists(),
        "the fallback is only for no usable root"
    );
}
