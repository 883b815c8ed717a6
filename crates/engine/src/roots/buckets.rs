//! The guard for bucket roots: an object URL is inside a bucket root when its bucket is the
//! root's and its key starts with the root's prefix, segment by segment (see
//! `objects::key` for what a key may not contain); a read opens the object at its current
//! version.

use std::path::PathBuf;

use super::Roots;
use super::guard::{Access, PathError};
use crate::objects::{Bucket, Object, ObjectUrl};
use offload_formats::files::Source;

/// An object URL that passed the guard, with the bucket root that holds it.
#[derive(Debug, Clone)]
pub struct ObjectResolved {
    pub url: ObjectUrl,
    pub bucket: Bucket,
}

impl Roots {
    /// Checks an object URL: parsed without decoding anything, and inside a bucket root
    /// (a writable one for [`Access::Write`]).
    pub fn resolve_object(&self, input: &str, access: Access) -> Result<ObjectResolved, PathError> {
        let url = ObjectUrl::parse(input).map_err(|e| PathError::Invalid {
            input: input.to_owned(),
            reason: e.to_string(),
        })?;
        let bucket = self
            .buckets
            .iter()
            .filter(|b| b.holds(&url))
            .max_by_key(|b| b.url.segments.len())
            .ok_or_else(|| PathError::Outside {
                input: input.to_owned(),
            })?;
        if access == Access::Write && !bucket.writable {
            return Err(PathError::ReadOnly {
                input: input.to_owned(),
                root: PathBuf::from(bucket.url.to_string()),
            });
        }
        Ok(ObjectResolved {
            url,
            bucket: bucket.clone(),
        })
    }

    /// Opens a path or object URL for reading: what the file tools read, and the name to show.
    /// Objects are opened with one HEAD request; call this off the async threads (as for files).
    pub fn open(&self, input: &str) -> Result<(Source, PathBuf), PathError> {
        if !crate::objects::is_object_url(input) {
            let (file, resolved) = self.open_read(input)?;
            let source = Source::Local(file).decompressed_by_name(&resolved.path);
            return Ok((source, resolved.path));
        }
        let resolved = self.resolve_object(input, Access::Read)?;
        let object = open_object(&resolved, input)?;
        let shown = PathBuf::from(resolved.url.to_string());
        Ok((
            Source::Remote(std::sync::Arc::new(object)).decompressed_by_name(&shown),
            shown,
        ))
    }
}

/// Opens a checked object at its current version.
fn open_object(resolved: &ObjectResolved, input: &str) -> Result<Object, PathError> {
    let handle = tokio::runtime::Handle::try_current().map_err(|e| PathError::Io {
        input: input.to_owned(),
        source: std::io::Error::other(e),
    })?;
    if resolved.url.segments.len() == resolved.bucket.url.segments.len() {
        return Err(PathError::Invalid {
            input: input.to_owned(),
            reason: "it is the bucket root itself; give an object inside it".into(),
        });
    }
    Object::open(
        resolved.bucket.store.clone(),
        resolved.url.key(),
        handle,
        resolved.bucket.fetched.clone(),
    )
    .map_err(|e| match e {
        object_store::Error::NotFound { .. } => PathError::NotFound {
            input: input.to_owned(),
            path: PathBuf::from(resolved.url.to_string()),
        },
        e => PathError::Io {
            input: input.to_owned(),
            source: std::io::Error::other(e.to_string()),
        },
    })
}
