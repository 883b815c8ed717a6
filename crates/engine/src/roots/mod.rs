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

mod buckets;
mod glob;
mod guard;

pub use glob::is_glob;
pub use guard::{Access, PathError};

use std::path::{Path, PathBuf};

use crate::config::{NoKeychain, RootEntry, SecretSource, expand_tilde};
use crate::objects::{Bucket, is_object_url};

/// One allowed directory, canonical and absolute.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Root {
    pub path: PathBuf,
    pub writable: bool,
}

/// A configured root that is not in use, and why.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, schemars::JsonSchema)]
pub struct Unavailable {
    pub path: String,
    pub reason: String,
}

/// The set of allowed directories.
#[derive(Debug, Clone)]
pub struct Roots {
    roots: Vec<Root>,
    /// Bucket prefixes in object storage, used like directories.
    buckets: Vec<Bucket>,
    default_index: Option<usize>,
    unavailable: Vec<Unavailable>,
}

impl Roots {
    /// Builds the roots from configuration entries. A configured root that does not exist is
    /// not created (a typo must not make directories wherever it points, least of all as
    /// root): it is reported (log, app, `list_allowed_directories`) and skipped. With no usable
    /// root, `fallback` — the directory Offload owns — is created and used as the one writable
    /// default root.
    pub fn from_entries(entries: &[RootEntry], fallback: &Path) -> (Self, Vec<String>) {
        Self::from_entries_with(entries, fallback, &NoKeychain)
    }

    /// [`Roots::from_entries`], with bucket roots' `${keyring:…}` settings read from `secrets`.
    /// A bucket root's client is built here; nothing is contacted until a tool uses it.
    pub fn from_entries_with(
        entries: &[RootEntry],
        fallback: &Path,
        secrets: &dyn SecretSource,
    ) -> (Self, Vec<String>) {
        let mut warnings = Vec::new();
        let mut roots: Vec<Root> = Vec::new();
        let mut buckets: Vec<Bucket> = Vec::new();
        let mut unavailable = Vec::new();
        for entry in entries {
            if is_object_url(entry.path()) {
                match Bucket::from_entry(entry.path(), entry.writable(), entry.extra(), secrets) {
                    Ok(bucket) => {
                        if !buckets.iter().any(|b| b.url == bucket.url) {
                            buckets.push(bucket);
                        }
                    }
                    Err(why) => {
                        warnings.push(format!("root '{}' ignored: {why}", entry.path()));
                        unavailable.push(Unavailable {
                            path: entry.path().to_owned(),
                            reason: why.to_string(),
                        });
                    }
                }
                continue;
            }
            match prepare(&expand_tilde(entry.path()), false) {
                Ok(path) => {
                    if !roots.iter().any(|r| r.path == path) {
                        roots.push(Root {
                            path,
                            writable: entry.writable(),
                        });
                    }
                }
                Err(why) => {
                    warnings.push(format!("root '{}' ignored: {why}", entry.path()));
                    unavailable.push(Unavailable {
                        path: entry.path().to_owned(),
                        reason: why,
                    });
                }
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
                buckets,
                default_index,
                unavailable,
            },
            warnings,
        )
    }

    pub fn list(&self) -> &[Root] {
        &self.roots
    }

    /// The bucket roots.
    pub fn buckets(&self) -> &[Bucket] {
        &self.buckets
    }

    /// Configured roots that are not in use (missing, not a directory), with the reason.
    pub fn unavailable(&self) -> &[Unavailable] {
        &self.unavailable
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

/// Makes `path` usable as a root: absolute, existing (created only when `create`: the default
/// root Offload owns), canonical.
fn prepare(path: &Path, create: bool) -> Result<PathBuf, String> {
    if !path.is_absolute() {
        return Err("a root must be an absolute path (or start with ~/)".into());
    }
    if !path.exists() {
        if !create {
            return Err(
                "it does not exist; create it, or remove it from the allowed directories".into(),
            );
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
