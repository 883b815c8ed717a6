//! Storing a finished file as a new object, never replacing one.
//!
//! Up to [`SINGLE_PUT`] bytes: one `PUT` with `If-None-Match: *`. Larger: a multipart upload
//! under a hidden key (parts of [`PART`] bytes read from the file, a few in flight; an upload
//! that is never completed is invisible, so a killed process leaves no object), then a
//! server-side copy to the final key that completes only if nothing is there
//! (`copy_if_not_exists`), and the hidden object removed. Memory stays at a few parts
//! whatever the size.

use std::io::Read;
use std::sync::Arc;

use object_store::path::Path as Key;
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload, WriteMultipart};

/// Objects up to this size are one conditional `PUT`.
const SINGLE_PUT: u64 = 16 << 20;
/// The part size of multipart uploads.
const PART: usize = 8 << 20;
/// Parts uploading at once.
const IN_FLIGHT: usize = 2;

#[derive(Debug, thiserror::Error)]
pub enum WriteError {
    #[error("{0} already exists")]
    Exists(String),
    #[error("reading the file to upload: {0}")]
    Io(#[from] std::io::Error),
    #[error("{0}")]
    Store(String),
}

impl From<object_store::Error> for WriteError {
    fn from(e: object_store::Error) -> Self {
        match e {
            object_store::Error::AlreadyExists { path, .. } => Self::Exists(path),
            e => Self::Store(e.to_string()),
        }
    }
}

/// Uploads `file` (read from its start, `size` bytes) as the new object `key`; `hidden` is a
/// key for the upload in progress when it is large. Fails with [`WriteError::Exists`] if `key`
/// exists. Async; the file is read on the blocking pool.
pub async fn put_new(
    store: &Arc<dyn ObjectStore>,
    key: &Key,
    hidden: &Key,
    file: std::fs::File,
    size: u64,
) -> Result<(), WriteError> {
    let file = Arc::new(std::sync::Mutex::new(file));
    if size <= SINGLE_PUT {
        let bytes = read_part(&file, size as usize).await?;
        let options = PutOptions {
            mode: PutMode::Create,
            ..Default::default()
        };
        store
            .put_opts(key, PutPayload::from(bytes), options)
            .await?;
        return Ok(());
    }
    // Fail early (and cheaply) when the name is taken; the copy checks again.
    if store.head(key).await.is_ok() {
        return Err(WriteError::Exists(key.to_string()));
    }
    let upload = store.put_multipart(hidden).await?;
    let mut writer = WriteMultipart::new_with_chunk_size(upload, PART);
    let mut left = size;
    while left > 0 {
        let n = left.min(PART as u64);
        let part = match read_part(&file, n as usize).await {
            Ok(p) => p,
            Err(e) => {
                let _ = writer.abort().await;
                return Err(e.into());
            }
        };
        if let Err(e) = writer.wait_for_capacity(IN_FLIGHT).await {
            let _ = writer.abort().await;
            return Err(e.into());
        }
        writer.put(part.into());
        left -= n;
    }
    writer.finish().await?;
    let copied = store.copy_if_not_exists(hidden, key).await;
    let _ = store.delete(hidden).await;
    copied?;
    Ok(())
}

async fn read_part(
    file: &Arc<std::sync::Mutex<std::fs::File>>,
    n: usize,
) -> std::io::Result<Vec<u8>> {
    let file = file.clone();
    tokio::task::spawn_blocking(move || {
        let mut buf = vec![0; n];
        let mut file = file.lock().unwrap_or_else(|e| e.into_inner());
        file.read_exact(&mut buf)?;
        Ok(buf)
    })
    .await
    .map_err(std::io::Error::other)?
}
