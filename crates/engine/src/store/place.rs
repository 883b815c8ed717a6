//! Where a stored answer goes: a directory inside a writable root, or a prefix inside a writable
//! bucket root. Files are always written whole on local disk first (the same renderers, the
//! same never-overwrite rule); for a bucket they are written into a private staging directory
//! and then uploaded as new objects (`objects::put_new`: nothing replaced, nothing half-visible),
//! the staging copies removed with the directory.

use std::path::{Path, PathBuf};

use object_store::ObjectStoreExt as _;
use object_store::path::Path as Key;

use super::{file_uri, inside_writable};
use crate::objects::{self, Bucket, ObjectUrl, WriteError};
use crate::roots::{Access, Roots};
use crate::{ErrorCode, ToolError};

pub enum Place {
    Dir(PathBuf),
    Bucket {
        /// The prefix the files go under.
        url: ObjectUrl,
        bucket: Bucket,
        staging: tempfile::TempDir,
    },
}

/// A file where it ended up: what to show and its URI.
#[derive(Debug, Clone)]
pub struct Published {
    pub path: String,
    pub uri: String,
}

impl Place {
    /// The place for `storage_path` (a directory, created inside a writable root when missing,
    /// or an `s3://…` prefix inside a writable bucket root), or the default directory.
    pub fn of(
        roots: &Roots,
        storage_path: Option<&str>,
        staging_root: &Path,
    ) -> Result<Self, ToolError> {
        match storage_path {
            Some(input) if objects::is_object_url(input) => {
                let resolved = roots.resolve_object(input, Access::Write)?;
                let below = &resolved.url.segments[resolved.bucket.url.segments.len()..];
                if below.first().is_some_and(|s| s == ".offload") {
                    return Err(ToolError::new(
                        ErrorCode::PathUnusable,
                        format!("{input} is where Offload keeps its own records; store elsewhere"),
                    )
                    .with("path", input));
                }
                std::fs::create_dir_all(staging_root).map_err(|e| write_failed(staging_root, e))?;
                let staging = tempfile::Builder::new()
                    .prefix("upload-")
                    .tempdir_in(staging_root)
                    .map_err(|e| write_failed(staging_root, e))?;
                Ok(Self::Bucket {
                    url: resolved.url,
                    bucket: resolved.bucket,
                    staging,
                })
            }
            _ => super::storage_dir(roots, storage_path).map(Self::Dir),
        }
    }

    /// Where the files are written first.
    pub fn dir(&self) -> &Path {
        match self {
            Self::Dir(d) => d,
            Self::Bucket { staging, .. } => staging.path(),
        }
    }

    /// The bucket root the files go to, if any.
    pub fn bucket(&self) -> Option<&Bucket> {
        match self {
            Self::Dir(_) => None,
            Self::Bucket { bucket, .. } => Some(bucket),
        }
    }

    /// Puts the written files where they belong, checking each final place: inside a writable
    /// root (after resolving links), or uploaded as new objects, the side files first and
    /// `written[main]` last. Answers where each ended up, in the order of `written`. On failure
    /// nothing stays: files are removed, objects already uploaded deleted.
    pub fn publish(
        &self,
        roots: &Roots,
        written: &[PathBuf],
        main: usize,
    ) -> Result<Vec<Published>, ToolError> {
        match self {
            Self::Dir(_) => {
                let mut out = Vec::new();
                for path in written {
                    match inside_writable(roots, path) {
                        Ok(p) => out.push(Published {
                            path: p.display().to_string(),
                            uri: file_uri(&p),
                        }),
                        Err(e) => {
                            remove(written);
                            return Err(e);
                        }
                    }
                }
                Ok(out)
            }
            Self::Bucket { url, bucket, .. } => {
                let handle = tokio::runtime::Handle::try_current().map_err(|e| {
                    ToolError::new(
                        ErrorCode::Internal,
                        format!("no runtime for the upload: {e}"),
                    )
                })?;
                let target = |path: &PathBuf| {
                    url.join(
                        &path
                            .file_name()
                            .map(|n| n.to_string_lossy().into_owned())
                            .unwrap_or_default(),
                    )
                };
                let mut uploaded: Vec<Key> = Vec::new();
                let order = (0..written.len()).filter(|&i| i != main).chain([main]);
                for path in order.map(|i| &written[i]) {
                    let target = target(path);
                    let hidden = bucket.hidden(&format!(
                        "uploads/{}-{}",
                        std::process::id(),
                        fastrand::u64(..)
                    ));
                    let done = std::fs::File::open(path)
                        .and_then(|f| Ok((f.metadata()?.len(), f)))
                        .map_err(WriteError::Io)
                        .and_then(|(size, file)| {
                            handle.block_on(objects::put_new(
                                &bucket.store,
                                &target.key(),
                                &hidden.key(),
                                file,
                                size,
                            ))
                        });
                    if let Err(e) = done {
                        for key in &uploaded {
                            let _ = handle.block_on(bucket.store.delete(key));
                        }
                        return Err(match e {
                            WriteError::Exists(_) => ToolError::new(
                                ErrorCode::FileExists,
                                format!(
                                    "{target} already exists; choose another filename (nothing is ever overwritten)"
                                ),
                            )
                            .with("path", target.to_string()),
                            e => ToolError::new(
                                ErrorCode::WriteFailed,
                                format!("cannot upload {target}: {e}"),
                            )
                            .with("path", target.to_string()),
                        });
                    }
                    uploaded.push(target.key());
                }
                Ok(written
                    .iter()
                    .map(|path| {
                        let shown = target(path).to_string();
                        Published {
                            uri: shown.clone(),
                            path: shown,
                        }
                    })
                    .collect())
            }
        }
    }
}

fn remove(paths: &[PathBuf]) {
    for p in paths {
        let _ = std::fs::remove_file(p);
    }
}

fn write_failed(path: &Path, e: std::io::Error) -> ToolError {
    ToolError::new(
        ErrorCode::WriteFailed,
        format!("cannot prepare the upload in {}: {e}", path.display()),
    )
}
