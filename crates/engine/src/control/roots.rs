//! Allowed directories as the app's Directories screen shows and edits them. The user picks
//! them (through the native folder picker); the model never can.

use std::path::{Path, PathBuf};

use serde::Serialize;

use super::{ControlError, edit_config};
use crate::config::{RootEntry, edit, expand_tilde};
use crate::{Engine, ErrorCode};

/// One allowed directory.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
#[serde(rename_all = "camelCase")]
pub struct RootView {
    /// As written in `config.json` (or the built-in default directory's path).
    pub path: String,
    /// The directory it resolves to, when it is usable.
    pub resolved: Option<String>,
    pub writable: bool,
    /// Where stored responses go when no `storage_path` is given.
    pub default: bool,
    /// False for the built-in directory used while none is configured.
    pub configured: bool,
    /// Why the directory is not in use (missing, not a directory, ...).
    pub problem: Option<String>,
    /// Stored responses inside it, and their size.
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub files: u64,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub bytes: u64,
}

fn canonical(path: &str) -> Option<PathBuf> {
    std::fs::canonicalize(expand_tilde(path)).ok()
}

pub fn roots(engine: &Engine) -> Vec<RootView> {
    let effective = engine.roots();
    let default = effective.default_dir().map(Path::to_owned);
    let records = engine.store.records();
    let stored = |dir: &Path| {
        records
            .iter()
            .filter(|r| Path::new(&r.path).starts_with(dir))
            .fold((0, 0), |(n, b), r| (n + 1, b + r.bytes))
    };
    let view = |path: String, resolved: Option<PathBuf>, writable, configured, problem| {
        let (files, bytes) = resolved.as_deref().map_or((0, 0), stored);
        RootView {
            default: resolved.is_some() && resolved == default,
            resolved: resolved.map(|r| r.display().to_string()),
            path,
            writable,
            configured,
            problem,
            files,
            bytes,
        }
    };
    let configured = engine.config().roots;
    if configured.is_empty() {
        return effective
            .list()
            .iter()
            .map(|r| {
                let p = r.path.display().to_string();
                view(p, Some(r.path.clone()), r.writable, false, None)
            })
            .collect();
    }
    configured
        .iter()
        .map(|entry| {
            let resolved =
                canonical(entry.path()).filter(|c| effective.list().iter().any(|r| &r.path == c));
            let problem =
                resolved
                    .is_none()
                    .then(|| match std::fs::metadata(expand_tilde(entry.path())) {
                        Err(e) => format!("cannot be used: {e}"),
                        Ok(m) if !m.is_dir() => "is not a directory".to_owned(),
                        Ok(_) => "is listed twice".to_owned(),
                    });
            view(
                entry.path().to_owned(),
                resolved,
                entry.writable(),
                true,
                problem,
            )
        })
        .collect()
}

fn entry(path: String, writable: bool) -> RootEntry {
    if writable {
        RootEntry::Path(path)
    } else {
        RootEntry::Full {
            path,
            writable,
            extra: serde_json::Map::new(),
        }
    }
}

/// The index of the configured root that is `path` (as written, or the same directory).
fn position(roots: &[RootEntry], path: &str) -> Result<usize, edit::EditError> {
    let wanted = canonical(path);
    roots
        .iter()
        .position(|r| r.path() == path || (wanted.is_some() && canonical(r.path()) == wanted))
        .ok_or_else(|| edit::EditError::Invalid(format!("'{path}' is not an allowed directory")))
}

/// Allows `path`, an existing directory. While no directory is configured, Offload uses its
/// built-in one; that one is written down first, so adding a directory takes nothing away.
pub async fn add_root(engine: &Engine, path: &str, writable: bool) -> Result<(), ControlError> {
    let full = expand_tilde(path.trim());
    if !full.is_absolute() {
        return Err(ControlError::invalid(format!(
            "'{path}' is not an absolute path; choose the folder with the picker"
        )));
    }
    let canonical = std::fs::canonicalize(&full).map_err(|e| {
        ControlError::new(ErrorCode::PathNotFound, format!("cannot use '{path}': {e}"))
    })?;
    if !canonical.is_dir() {
        return Err(ControlError::new(
            ErrorCode::PathUnusable,
            format!("'{path}' is not a directory"),
        ));
    }
    let builtin: Vec<RootEntry> = engine
        .roots()
        .list()
        .iter()
        .map(|r| entry(r.path.display().to_string(), r.writable))
        .collect();
    edit_config(engine, |doc| {
        let mut roots = edit::roots(doc)?;
        if roots.is_empty() {
            roots = builtin;
        }
        if position(&roots, &canonical.display().to_string()).is_ok() {
            return Err(edit::EditError::Invalid(format!(
                "'{}' is already allowed",
                canonical.display()
            )));
        }
        roots.push(entry(canonical.display().to_string(), writable));
        edit::set_roots(doc, &roots)
    })
    .await
}

pub async fn remove_root(engine: &Engine, path: &str) -> Result<(), ControlError> {
    edit_config(engine, |doc| {
        let mut roots = edit::roots(doc)?;
        roots.remove(position(&roots, path)?);
        edit::set_roots(doc, &roots)
    })
    .await
}

/// Makes `path` the default directory (it moves first in the list); it must be writable.
pub async fn set_default_root(engine: &Engine, path: &str) -> Result<(), ControlError> {
    edit_config(engine, |doc| {
        let mut roots = edit::roots(doc)?;
        let root = roots.remove(position(&roots, path)?);
        if !root.writable() {
            return Err(edit::EditError::Invalid(format!(
                "'{path}' is read-only; make it writable before making it the default"
            )));
        }
        roots.insert(0, root);
        edit::set_roots(doc, &roots)
    })
    .await
}

pub async fn set_root_writable(
    engine: &Engine,
    path: &str,
    writable: bool,
) -> Result<(), ControlError> {
    edit_config(engine, |doc| {
        let mut roots = edit::roots(doc)?;
        let at = position(&roots, path)?;
        roots[at] = match roots[at].clone() {
            RootEntry::Full { path, extra, .. } if !extra.is_empty() => RootEntry::Full {
                path,
                writable,
                extra,
            },
            other => entry(other.path().to_owned(), writable),
        };
        edit::set_roots(doc, &roots)
    })
    .await
}
