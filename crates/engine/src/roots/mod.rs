//! Allowed directories ("roots") and the path guard.
//!
//! The user decides which directories Offload may touch; nothing the model sends can change them.
//! Every path is canonicalised and must lie inside a root, compared component by component, so
//! `/data-evil` is not inside `/data` and a symlink leading out of a root is refused. Files are
//! opened through a capability handle on the root (`cap-std`), so swapping a checked path for a
//! symlink between the check and the open cannot escape either.
//!
//! This module must never fall back to "everything": with no root configured it creates and uses
//! one default root in the platform's data directory.

mod guard;

pub use guard::{Access, PathError, Resolved};

use std::path::{Path, PathBuf};

use crate::config::{RootEntry, expand_tilde};

/// One allowed directory, canonical and absolute.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Root {
    pub path: PathBuf,
    pub writable: bool,
}

/// The set of allowed directories.
#[derive(Debug, Clone)]
pub struct Roots {
    roots: Vec<Root>,
    default_index: Option<usize>,
}

impl Roots {
    /// Builds the roots from configuration entries. Missing writable roots are created (the user
    /// named them); missing read-only ones are skipped with a warning. With no usable root,
    /// `fallback` is created and used as the one writable default root.
    pub fn from_entries(entries: &[RootEntry], fallback: &Path) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut roots: Vec<Root> = Vec::new();
        for entry in entries {
            match prepare(&expand_tilde(entry.path()), entry.writable()) {
                Ok(path) => {
                    if !roots.iter().any(|r| r.path == path) {
                        roots.push(Root {
                            path,
                            writable: entry.writable(),
                        });
                    }
                }
                Err(why) => warnings.push(format!("root '{}' ignored: {why}", entry.path())),
            }
        }
        if roots.is_empty() {
            match prepare(fallback, true) {
                Ok(path) => roots.push(Root {
                    path,
                    writable: true,
                }),
                Err(why) => warnings.push(format!(
                    "default root {} could not be created: {why}",
                    fallback.display()
                )),
            }
        }
        let default_index = roots.iter().position(|r| r.writable);
        (
            Self {
                roots,
                default_index,
            },
            warnings,
        )
    }

    pub fn list(&self) -> &[Root] {
        &self.roots
    }

    /// The first writable root: where relative paths resolve and responses are stored.
    pub fn default_dir(&self) -> Option<&Path> {
        self.default_index.map(|i| self.roots[i].path.as_path())
    }

    /// The directory relative paths are resolved against: the default directory, or the first
    /// root when every root is read-only.
    fn base_dir(&self) -> Option<&Path> {
        self.default_dir()
            .or_else(|| self.roots.first().map(|r| r.path.as_path()))
    }
}

/// Makes `path` usable as a root: absolute, existing (created when writable), canonical.
fn prepare(path: &Path, writable: bool) -> Result<PathBuf, String> {
    if !path.is_absolute() {
        return Err("a root must be an absolute path (or start with ~/)".into());
    }
    if !path.exists() {
        if !writable {
            return Err("it does not exist".into());
        }
        std::fs::create_dir_all(path).map_err(|e| format!("cannot create it: {e}"))?;
    }
    let canonical = std::fs::canonicalize(path).map_err(|e| e.to_string())?;
    if !canonical.is_dir() {
        return Err("it is not a directory".into());
    }
    Ok(canonical)
}

#[cfg(test)]
mod tests;
