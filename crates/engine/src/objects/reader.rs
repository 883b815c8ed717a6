//! An object read like a file: positional reads become ranged GETs.
//!
//! Every GET names the version the object had when it was opened (`If-Match` with its ETag),
//! so an object replaced mid-read fails the read instead of mixing two versions. Reads go
//! through a few cached chunks: small reads near each other (a page, a tail, a probe) cost one
//! request of [`CHUNK`] bytes; reads that follow one another double the next request up to
//! [`READ_AHEAD`], so a scan of a large object is a few hundred requests, not millions.
//!
//! Reads block their thread (as file reads do): call them where file reads are made, off the
//! async threads.

use std::ops::Range;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use bytes::Bytes;
use object_store::path::Path as Key;
use object_store::{GetOptions, ObjectStore, ObjectStoreExt};
use tokio::runtime::Handle;

/// The smallest request.
const CHUNK: u64 = 256 << 10;
/// The largest request of a sequential scan.
const READ_AHEAD: u64 = 8 << 20;
/// Bytes of chunks kept per opened object.
const CACHE_BYTES: u64 = 16 << 20;
/// How long one ranged GET may take, whatever the client's retries do.
const GET_DEADLINE: Duration = Duration::from_secs(60);

/// Bytes and requests an object's reads cost, for figures and tests.
#[derive(Debug, Default)]
pub struct Fetched {
    pub bytes: AtomicU64,
    pub requests: AtomicU64,
}

/// An opened object (cheap to clone: clones share the cache and the counters).
#[derive(Clone)]
pub struct Object {
    inner: Arc<Inner>,
}

struct Inner {
    store: Arc<dyn ObjectStore>,
    key: Key,
    size: u64,
    e_tag: Option<String>,
    modified: SystemTime,
    handle: Handle,
    cache: Mutex<Cache>,
    fetched: Arc<Fetched>,
}

#[derive(Default)]
struct Cache {
    /// Chunks by start offset, most recently used last.
    chunks: Vec<(u64, Bytes)>,
    /// Where the last fetch ended and how much it fetched, to spot sequential reads.
    last_end: u64,
    last_len: u64,
}

impl std::fmt::Debug for Object {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Object")
            .field("key", &self.inner.key.as_ref())
            .field("size", &self.inner.size)
            .field("e_tag", &self.inner.e_tag)
            .finish_non_exhaustive()
    }
}

impl Object {
    /// Opens `key`: one HEAD request for its size and version. Blocks; `handle` is the
    /// runtime that runs the requests.
    pub fn open(
        store: Arc<dyn ObjectStore>,
        key: Key,
        handle: Handle,
        fetched: Arc<Fetched>,
    ) -> object_store::Result<Self> {
        let meta = handle.block_on(async {
            match tokio::time::timeout(GET_DEADLINE, store.head(&key)).await {
                Ok(r) => r,
                Err(_) => Err(timeout_error(&key)),
            }
        })?;
        Ok(Self {
            inner: Arc::new(Inner {
                store,
                key,
                size: meta.size,
                e_tag: meta.e_tag,
                modified: meta.last_modified.into(),
                handle,
                cache: Mutex::default(),
                fetched,
            }),
        })
    }

    pub fn len(&self) -> u64 {
        self.inner.size
    }

    /// The version the reads are pinned to.
    pub fn e_tag(&self) -> Option<&str> {
        self.inner.e_tag.as_deref()
    }

    pub fn modified(&self) -> SystemTime {
        self.inner.modified
    }

    /// Fills as much of `buf` as the object has from `offset`; returns how many bytes that is.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let size = self.inner.size;
        if offset >= size || buf.is_empty() {
            return Ok(0);
        }
        let want = (buf.len() as u64).min(size - offset) as usize;
        let mut done = 0usize;
        while done < want {
            let at = offset + done as u64;
            let chunk = self.chunk_at(at, (want - done) as u64)?;
            let (start, bytes) = chunk;
            let from = (at - start) as usize;
            let n = (bytes.len() - from).min(want - done);
            if n == 0 {
                break;
            }
            buf[done..done + n].copy_from_slice(&bytes[from..from + n]);
            done += n;
        }
        Ok(done)
    }

    /// The cached chunk holding `at`, fetched when none does.
    fn chunk_at(&self, at: u64, wanted: u64) -> std::io::Result<(u64, Bytes)> {
        let range = {
            let mut cache = self.inner.cache.lock().unwrap_or_else(|e| e.into_inner());
            if let Some(i) = cache
                .chunks
                .iter()
                .position(|(s, b)| *s <= at && at < *s + b.len() as u64)
            {
                let hit = cache.chunks.remove(i);
                cache.chunks.push(hit.clone());
                return Ok(hit);
            }
            let start = at - at % CHUNK;
            let sequential = cache.last_end == start && cache.last_len > 0;
            let len = if sequential {
                (cache.last_len * 2).min(READ_AHEAD)
            } else {
                CHUNK
            }
            .max((at - start + wanted).div_ceil(CHUNK) * CHUNK)
            .min(READ_AHEAD.max(wanted));
            start..(start + len).min(self.inner.size)
        };
        let bytes = self.get(range.clone())?;
        let mut cache = self.inner.cache.lock().unwrap_or_else(|e| e.into_inner());
        cache.last_end = range.end;
        cache.last_len = range.end - range.start;
        cache.chunks.push((range.start, bytes.clone()));
        while cache.chunks.len() > 1
            && cache
                .chunks
                .iter()
                .map(|(_, b)| b.len() as u64)
                .sum::<u64>()
                > CACHE_BYTES
        {
            cache.chunks.remove(0);
        }
        Ok((range.start, bytes))
    }

    fn get(&self, range: Range<u64>) -> std::io::Result<Bytes> {
        let inner = &self.inner;
        let options = GetOptions {
            range: Some(range.clone().into()),
            if_match: inner.e_tag.clone(),
            ..Default::default()
        };
        let bytes = inner
            .handle
            .block_on(async {
                let get = async {
                    inner
                        .store
                        .get_opts(&inner.key, options)
                        .await?
                        .bytes()
                        .await
                };
                match tokio::time::timeout(GET_DEADLINE, get).await {
                    Ok(r) => r,
                    Err(_) => Err(timeout_error(&inner.key)),
                }
            })
            .map_err(|e| match e {
                object_store::Error::Precondition { .. } => std::io::Error::other(format!(
                    "{} changed while it was being read; ask again",
                    inner.key
                )),
                object_store::Error::NotFound { .. } => std::io::Error::new(
                    std::io::ErrorKind::NotFound,
                    format!("{} was deleted while it was being read", inner.key),
                ),
                e => std::io::Error::other(e.to_string()),
            })?;
        inner.fetched.requests.fetch_add(1, Ordering::Relaxed);
        inner
            .fetched
            .bytes
            .fetch_add(bytes.len() as u64, Ordering::Relaxed);
        if bytes.len() as u64 != range.end - range.start {
            return Err(std::io::Error::other(format!(
                "the store sent {} bytes for a range of {}",
                bytes.len(),
                range.end - range.start
            )));
        }
        Ok(bytes)
    }
}

fn timeout_error(key: &Key) -> object_store::Error {
    object_store::Error::Generic {
        store: "object store",
        source: format!(
            "no answer for {key} within {} s; is the endpoint up?",
            GET_DEADLINE.as_secs()
        )
        .into(),
    }
}

/// The file tools read an object as they read a local file: by position.
impl offload_formats::files::Remote for Object {
    fn size(&self) -> u64 {
        self.len()
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        self.read_at(buf, offset)
    }

    fn version(&self) -> offload_formats::files::Version {
        offload_formats::files::Version {
            modified: Some(self.modified()),
            tag: self.e_tag().map(str::to_owned),
        }
    }
}
