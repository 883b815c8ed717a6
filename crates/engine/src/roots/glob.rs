//! Globs in file paths (`data/2026-*.csv`, `logs/**/*.jsonl`), expanded inside the allowed
//! directories only. The part before the first segment with a wildcard is an ordinary path
//! that the guard resolves (so it must lie inside a root); the walk starts there, never
//! follows a symlinked directory, and every match is resolved again, so a symlink in the tree
//! that leads out is refused, not read.

use std::path::{Component, PathBuf};

use globset::GlobBuilder;

use super::Roots;
use super::guard::{Access, PathError};

/// Whether `input` is a glob rather than a path (it has `*`, `?` or `[`).
pub fn is_glob(input: &str) -> bool {
    input.contains(['*', '?', '['])
}

impl Roots {
    /// The files `pattern` names, sorted by path, canonical; at most `limit` of them (more is
    /// an error, not a silent cut). `**` crosses directories, `*` and `?` do not.
    pub fn expand_glob(&self, pattern: &str, limit: usize) -> Result<Vec<PathBuf>, PathError> {
        let invalid = |reason: String| PathError::Invalid {
            input: pattern.to_owned(),
            reason,
        };
        let absolute = self.absolute(pattern)?;
        let mut base = PathBuf::new();
        let mut rest: Vec<String> = Vec::new();
        for part in absolute.components() {
            let text = part.as_os_str().to_string_lossy();
            if !rest.is_empty() || is_glob(&text) {
                if matches!(part, Component::ParentDir | Component::CurDir) {
                    return Err(invalid("'..' and '.' cannot follow a wildcard".into()));
                }
                rest.push(text.into_owned());
            } else {
                base.push(part);
            }
        }
        if rest.is_empty() {
            return Err(invalid("it has no wildcard".into()));
        }
        let base_input = base.to_string_lossy().into_owned();
        let resolved = self
            .resolve(&base_input, Access::Read)
            .map_err(|e| match e {
                PathError::Outside { .. } => PathError::Outside {
                    input: pattern.to_owned(),
                },
                other => other,
            })?;
        let glob = rest.join("/");
        let matcher = GlobBuilder::new(&glob)
            .literal_separator(true)
            .build()
            .map_err(|e| invalid(format!("not a valid glob: {e}")))?
            .compile_matcher();
        let deep = rest.iter().any(|r| r.contains("**"));
        let mut walk = walkdir::WalkDir::new(&resolved.path)
            .follow_links(false)
            .min_depth(1);
        if !deep {
            walk = walk.max_depth(rest.len());
        }
        let mut found = Vec::new();
        for entry in walk {
            let entry = entry.map_err(|e| PathError::Io {
                input: pattern.to_owned(),
                source: e.into(),
            })?;
            if entry.file_type().is_dir() {
                continue;
            }
            let relative = entry
                .path()
                .strip_prefix(&resolved.path)
                .unwrap_or(entry.path());
            if !matcher.is_match(relative) {
                continue;
            }
            // A symlink that matches must lead inside the roots as well.
            let checked = self.resolve(&entry.path().to_string_lossy(), Access::Read)?;
            if !checked.path.is_file() {
                continue;
            }
            found.push(checked.path);
            if found.len() > limit {
                return Err(invalid(format!(
                    "it names more than {limit} files; narrow it"
                )));
            }
        }
        found.sort();
        found.dedup();
        Ok(found)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::RootEntry;
    use std::path::Path;

    fn roots(dir: &Path) -> Roots {
        Roots::from_entries(&[RootEntry::Path(dir.display().to_string())], dir).0
    }

    #[test]
    fn a_glob_names_the_files_it_matches_in_order() {
        let tmp = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(tmp.path()).unwrap();
        std::fs::create_dir_all(root.join("data/old")).unwrap();
        for name in [
            "data/2026-02.csv",
            "data/2026-01.csv",
            "data/2025-12.csv",
            "data/old/2026-03.csv",
            "data/2026-x.txt",
        ] {
            std::fs::write(root.join(name), "a\n1\n").unwrap();
        }
        let r = roots(&root);
        let names = |pattern: &str| -> Vec<String> {
            r.expand_glob(pattern, 100)
                .unwrap()
                .iter()
                .map(|p| p.strip_prefix(&root).unwrap().display().to_string())
                .collect()
        };
        assert_eq!(
            names("data/2026-*.csv"),
            ["data/2026-01.csv", "data/2026-02.csv"]
        );
        assert_eq!(
            names(&format!("{}/data/**/2026-*.csv", root.display())),
            [
                "data/2026-01.csv",
                "data/2026-02.csv",
                "data/old/2026-03.csv"
            ]
        );
        assert_eq!(
            names("data/2026-0?.csv"),
            ["data/2026-01.csv", "data/2026-02.csv"]
        );
        assert!(names("data/*.parquet").is_empty());
        let e = r.expand_glob("data/*.csv", 2).unwrap_err();
        assert!(e.to_string().contains("more than 2 files"), "{e}");
    }

    #[test]
    fn a_glob_cannot_leave_the_roots() {
        let tmp = tempfile::tempdir().unwrap();
        let base = std::fs::canonicalize(tmp.path()).unwrap();
        let root = base.join("root");
        let outside = base.join("outside");
        std::fs::create_dir_all(&root).unwrap();
        std::fs::create_dir_all(&outside).unwrap();
        std::fs::write(outside.join("secret.csv"), "a\n1\n").unwrap();
        std::fs::write(root.join("ok.csv"), "a\n1\n").unwrap();
        let r = roots(&root);
        for pattern in [
            "../outside/*.csv",
            "../*/*.csv",
            &format!("{}/*.csv", outside.display()),
            "/etc/*",
            "*/../../outside/*.csv",
        ] {
            let e = r.expand_glob(pattern, 100).unwrap_err();
            assert!(
                matches!(e, PathError::Outside { .. } | PathError::Invalid { .. }),
                "{pattern}: {e}"
            );
        }
        // A symlink inside the root that leads out is refused, not read.
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(outside.join("secret.csv"), root.join("link.csv")).unwrap();
            let e = r.expand_glob("*.csv", 100).unwrap_err();
            assert!(matches!(e, PathError::Outside { .. }), "{e}");
            std::fs::remove_file(root.join("link.csv")).unwrap();
            std::os::unix::fs::symlink(&outside, root.join("dir")).unwrap();
            assert_eq!(
                r.expand_glob("**/*.csv", 100).unwrap(),
                [root.join("ok.csv")],
                "a symlinked directory is not walked"
            );
        }
    }
}
