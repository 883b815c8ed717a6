//! Resolving a path a model sent into a checked, canonical path inside a root, and opening it
//! through the root's capability handle.

use std::fs::File;
use std::path::{Component, Path, PathBuf};

use super::{Root, Roots};
use crate::config::expand_tilde;
use crate::{ErrorCode, ToolError};

/// What the caller intends to do with the path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Access {
    Read,
    Write,
}

/// A path that passed the guard.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Resolved {
    /// Canonical, absolute.
    pub path: PathBuf,
    /// The innermost root that holds it.
    pub root: Root,
}

impl Resolved {
    /// The path relative to its root (empty for the root itself).
    pub fn relative(&self) -> &Path {
        self.path
            .strip_prefix(&self.root.path)
            .unwrap_or(Path::new(""))
    }
}

#[derive(Debug, thiserror::Error)]
pub enum PathError {
    #[error(
        "'{input}' is outside the allowed directories; use a path inside one of them (see list_allowed_directories)"
    )]
    Outside { input: String },
    #[error("'{input}' does not exist (resolved to {path})")]
    NotFound { input: String, path: PathBuf },
    #[error(
        "'{input}' is in the read-only directory {root}; choose a path in a writable directory"
    )]
    ReadOnly { input: String, root: PathBuf },
    #[error("'{input}' is not a usable path: {reason}")]
    Invalid { input: String, reason: String },
    #[error("'{input}' cannot be used: {source}")]
    Io {
        input: String,
        source: std::io::Error,
    },
}

impl PathError {
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::Outside { .. } => ErrorCode::PathOutsideRoots,
            Self::NotFound { .. } => ErrorCode::PathNotFound,
            Self::ReadOnly { .. } => ErrorCode::ReadOnlyRoot,
            Self::Invalid { .. } | Self::Io { .. } => ErrorCode::PathUnusable,
        }
    }
}

impl From<PathError> for ToolError {
    fn from(e: PathError) -> Self {
        let code = e.code();
        let input = match &e {
            PathError::Outside { input }
            | PathError::NotFound { input, .. }
            | PathError::ReadOnly { input, .. }
            | PathError::Invalid { input, .. }
            | PathError::Io { input, .. } => input.clone(),
        };
        ToolError::new(code, e.to_string()).with("path", input)
    }
}

impl Roots {
    /// Resolves an existing path: `~` expanded, relative paths against the default directory,
    /// symlinks followed, and the final path required to lie inside a root.
    pub fn resolve(&self, input: &str, access: Access) -> Result<Resolved, PathError> {
        let joined = self.absolute(input)?;
        let canonical = match std::fs::canonicalize(&joined) {
            Ok(p) => p,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                // Say "not found" only for paths that would be inside a root; otherwise do not
                // reveal whether something exists out there.
                let lexical = normalize(&joined);
                return Err(if self.innermost(&lexical).is_some() {
                    PathError::NotFound {
                        input: input.to_owned(),
                        path: lexical,
                    }
                } else {
                    PathError::Outside {
                        input: input.to_owned(),
                    }
                });
            }
            Err(source) => {
                return Err(PathError::Io {
                    input: input.to_owned(),
                    source,
                });
            }
        };
        let root = self
            .innermost(&canonical)
            .ok_or_else(|| PathError::Outside {
                input: input.to_owned(),
            })?
            .clone();
        if access == Access::Write && !root.writable {
            return Err(PathError::ReadOnly {
                input: input.to_owned(),
                root: root.path,
            });
        }
        Ok(Resolved {
            path: canonical,
            root,
        })
    }

    /// Resolves and opens a file for reading through the root's capability handle: what is
    /// opened is what was checked, even if the path is swapped for a symlink in between.
    pub fn open_read(&self, input: &str) -> Result<(File, Resolved), PathError> {
        let resolved = self.resolve(input, Access::Read)?;
        let file = open_beneath(&resolved, input)?;
        Ok((file, resolved))
    }

    /// `input` made absolute: `~` expanded, relative paths joined to the base directory.
    pub(super) fn absolute(&self, input: &str) -> Result<PathBuf, PathError> {
        let invalid = |reason: &str| PathError::Invalid {
            input: input.to_owned(),
            reason: reason.to_owned(),
        };
        if input.trim().is_empty() {
            return Err(invalid("the path is empty"));
        }
        if input.contains('\0') {
            return Err(invalid("the path contains a NUL byte"));
        }
        let expanded = expand_tilde(input);
        if expanded.is_absolute() {
            return Ok(expanded);
        }
        match self.base_dir() {
            Some(base) => Ok(base.join(expanded)),
            None => Err(invalid("no allowed directory is configured")),
        }
    }

    /// The innermost root containing `path` (component-wise), if any.
    fn innermost(&self, path: &Path) -> Option<&Root> {
        self.roots
            .iter()
            .filter(|r| path.starts_with(&r.path))
            .max_by_key(|r| r.path.components().count())
    }
}

/// Opens `resolved` relative to its root with `cap-std`, which refuses to leave the root.
fn open_beneath(resolved: &Resolved, input: &str) -> Result<File, PathError> {
    let root =
        cap_std::fs::Dir::open_ambient_dir(&resolved.root.path, cap_std::ambient_authority())
            .map_err(|source| PathError::Io {
                input: input.to_owned(),
                source,
            })?;
    let relative = resolved.relative();
    let mut options = cap_std::fs::OpenOptions::new();
    options.read(true);
    #[cfg(unix)]
    {
        use cap_std::fs::OpenOptionsExt;
        options.custom_flags(offload_formats::special_files::OPEN_FLAGS);
    }
    let opened = if relative.as_os_str().is_empty() {
        root.open_with(".", &options)
    } else {
        root.open_with(relative, &options)
    };
    match opened {
        Ok(file) => {
            let file = file.into_std();
            match offload_formats::special_files::special_kind(&file) {
                Ok(None) => Ok(file),
                Ok(Some(kind)) => Err(PathError::Invalid {
                    input: input.to_owned(),
                    reason: offload_formats::special_files::refusal(kind),
                }),
                Err(source) => Err(PathError::Io {
                    input: input.to_owned(),
                    source,
                }),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(PathError::NotFound {
            input: input.to_owned(),
            path: resolved.path.clone(),
        }),
        // cap-std refuses paths that lead out of the root. Classify by looking again at where
        // the path leads now (it changed since the check), not by the error's text.
        Err(source) => match std::fs::canonicalize(&resolved.path) {
            Ok(now) if now.starts_with(&resolved.root.path) => Err(PathError::Io {
                input: input.to_owned(),
                source,
            }),
            _ => Err(PathError::Outside {
                input: input.to_owned(),
            }),
        },
    }
}

#[cfg(test)]
pub(super) fn open_beneath_for_tests(resolved: &Resolved) -> Result<File, PathError> {
    open_beneath(resolved, "test")
}

/// Removes `.` and resolves `..` textually (used only to classify a path that does not exist).
fn normalize(path: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in path.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                out.pop();
            }
            other => out.push(other),
        }
    }
    out
}
