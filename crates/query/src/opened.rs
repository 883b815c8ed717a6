//! The only files a query can read: those the engine opened through its path guard.
//!
//! DataFusion reads through `object_store`. Its runtime here has one store, under the
//! `offload://` scheme, serving the files handed to it, already open, by table name; there is no
//! `file://` store and no other scheme, so no SQL (a table function, a URL table) can reach a
//! path of its own. Reads are positional (`pread` on local files, ranged requests on objects),
//! so concurrent range reads of one file never share a cursor.

use std::collections::HashMap;
use std::ops::Range;
use std::sync::Arc;

use async_trait::async_trait;
use bytes::Bytes;
use datafusion::execution::object_store::ObjectStoreRegistry;
use futures::stream::BoxStream;
use futures::{StreamExt, TryStreamExt};
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use url::Url;

use crate::blob::{Blob, read_exact_at};

/// The scheme and host of every table's URL: `offload://files/<name>.<ext>`.
pub const BASE: &str = "offload://files/";

/// How much one read takes from the file.
const CHUNK: u64 = 4 << 20;

/// How much a whole file's stream hands DataFusion at a time. Its CSV and JSON readers take the
/// next piece each time they are asked for a batch, whether or not they used up the last one,
/// so pieces bigger than a batch pile up: with 4 MB pieces a 1 GB CSV was held whole while it
/// was read. A batch is 8,192 rows of at least 2 bytes, so pieces of 16 KB never pile up.
/// (DataFusion's own CSV schema inference cuts such a stream at line ends and gets quoted line
/// breaks wrong across pieces; Offload infers CSV types itself, see `sql::csv_schema`.)
const PIECE: usize = 16 << 10;

#[derive(Debug)]
struct Opened {
    file: Arc<dyn Blob>,
    meta: ObjectMeta,
}

/// Read-only store of pre-opened files, by object path.
#[derive(Debug, Default)]
pub struct OpenedFiles {
    files: HashMap<Path, Opened>,
}

impl std::fmt::Display for OpenedFiles {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "OpenedFiles({} files)", self.files.len())
    }
}

impl OpenedFiles {
    /// Adds `file` as `object` (a name such as `data.csv`); returns its URL.
    pub fn add(&mut self, object: &str, file: Arc<dyn Blob>) -> std::io::Result<String> {
        let location = Path::from(object);
        let modified = file.modified().map(chrono::DateTime::<chrono::Utc>::from);
        let meta = ObjectMeta {
            location: location.clone(),
            last_modified: modified.unwrap_or_default(),
            size: file.size()?,
            e_tag: None,
            version: None,
        };
        self.files.insert(location, Opened { file, meta });
        Ok(format!("{BASE}{object}"))
    }

    fn opened(&self, location: &Path) -> object_store::Result<&Opened> {
        self.files
            .get(location)
            .ok_or_else(|| object_store::Error::NotFound {
                path: location.to_string(),
                source: "only the files of this query can be read".into(),
            })
    }
}

fn read_only() -> object_store::Error {
    object_store::Error::NotSupported {
        source: "queries are read-only".into(),
    }
}

/// Reads `range` of `file` in chunks: at once when the bytes are at hand (a file in the page
/// cache: no trip through a blocking thread), on a blocking thread otherwise.
fn read_stream(
    file: Arc<dyn Blob>,
    range: Range<u64>,
) -> BoxStream<'static, object_store::Result<Bytes>> {
    futures::stream::try_unfold(range.start, move |at| {
        let file = file.clone();
        let end = range.end;
        async move {
            if at >= end {
                return Ok(None);
            }
            let len = (end - at).min(CHUNK) as usize;
            let mut buf = vec![0u8; len];
            if file.read_ready(&mut buf, at) == Some(len) {
                return Ok(Some((Bytes::from(buf), at + len as u64)));
            }
            let chunk = tokio::task::spawn_blocking(move || {
                read_exact_at(&*file, &mut buf, at).map(|()| buf)
            })
            .await
            .map_err(|e| object_store::Error::Generic {
                store: "offload",
                source: Box::new(e),
            })?
            .map_err(|e| object_store::Error::Generic {
                store: "offload",
                source: Box::new(e),
            })?;
            Ok(Some((Bytes::from(chunk), at + len as u64)))
        }
    })
    .boxed()
}

/// `stream`'s chunks cut in pieces of at most [`PIECE`] bytes (views of the same buffers).
fn in_pieces(
    stream: BoxStream<'static, object_store::Result<Bytes>>,
) -> BoxStream<'static, object_store::Result<Bytes>> {
    stream
        .map_ok(|chunk| {
            let pieces: Vec<_> = (0..chunk.len())
                .step_by(PIECE)
                .map(|at| Ok(chunk.slice(at..(at + PIECE).min(chunk.len()))))
                .collect();
            futures::stream::iter(pieces)
        })
        .try_flatten()
        .boxed()
}

#[async_trait]
impl ObjectStore for OpenedFiles {
    async fn put_opts(
        &self,
        _: &Path,
        _: PutPayload,
        _: PutOptions,
    ) -> object_store::Result<PutResult> {
        Err(read_only())
    }

    async fn put_multipart_opts(
        &self,
        _: &Path,
        _: PutMultipartOptions,
    ) -> object_store::Result<Box<dyn MultipartUpload>> {
        Err(read_only())
    }

    async fn get_opts(
        &self,
        location: &Path,
        options: GetOptions,
    ) -> object_store::Result<GetResult> {
        let opened = self.opened(location)?;
        options.check_preconditions(&opened.meta)?;
        let size = opened.meta.size;
        let range = match &options.range {
            Some(r) => r.as_range(size).map_err(|e| object_store::Error::Generic {
                store: "offload",
                source: Box::new(e),
            })?,
            None => 0..size,
        };
        let payload = if options.head {
            GetResultPayload::Stream(futures::stream::empty().boxed())
        } else {
            let stream = read_stream(opened.file.clone(), range.clone());
            // A read of the whole file is a scan (CSV, JSON lines): in pieces. Ranged reads
            // (Parquet's pages and footers) are collected whole by their callers.
            GetResultPayload::Stream(match options.range {
                None => in_pieces(stream),
                Some(_) => stream,
            })
        };
        Ok(GetResult {
            payload,
            meta: opened.meta.clone(),
            range,
            attributes: Default::default(),
        })
    }

    fn delete_stream(
        &self,
        locations: BoxStream<'static, object_store::Result<Path>>,
    ) -> BoxStream<'static, object_store::Result<Path>> {
        locations.map(|_| Err(read_only())).boxed()
    }

    fn list(&self, prefix: Option<&Path>) -> BoxStream<'static, object_store::Result<ObjectMeta>> {
        let found: Vec<_> = self
            .files
            .values()
            .filter(|o| prefix.is_none_or(|p| o.meta.location.prefix_matches(p)))
            .map(|o| Ok(o.meta.clone()))
            .collect();
        futures::stream::iter(found).boxed()
    }

    async fn list_with_delimiter(&self, prefix: Option<&Path>) -> object_store::Result<ListResult> {
        let objects = self.list(prefix).collect::<Vec<_>>().await;
        Ok(ListResult {
            common_prefixes: Vec::new(),
            objects: objects.into_iter().collect::<object_store::Result<_>>()?,
        })
    }

    async fn copy_opts(&self, _: &Path, _: &Path, _: CopyOptions) -> object_store::Result<()> {
        Err(read_only())
    }
}

/// The runtime's registry: `offload://files/` and nothing else.
#[derive(Debug)]
pub struct OnlyOpened(pub Arc<OpenedFiles>);

impl ObjectStoreRegistry for OnlyOpened {
    fn register_store(&self, _: &Url, _: Arc<dyn ObjectStore>) -> Option<Arc<dyn ObjectStore>> {
        None
    }

    fn deregister_store(&self, url: &Url) -> datafusion::error::Result<Arc<dyn ObjectStore>> {
        Err(datafusion::error::DataFusionError::Plan(format!(
            "no object store for {url}"
        )))
    }

    fn get_store(&self, url: &Url) -> datafusion::error::Result<Arc<dyn ObjectStore>> {
        if url.scheme() == "offload" && url.host_str() == Some("files") {
            Ok(self.0.clone())
        } else {
            Err(datafusion::error::DataFusionError::Plan(format!(
                "{url} cannot be read: a query reads only the files it names in `path` and `tables`"
            )))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A whole file reaches DataFusion in small pieces, in order; a range in one piece a read.
    #[test]
    fn a_whole_file_is_streamed_in_small_pieces() {
        let data: Vec<u8> = (0..(CHUNK as usize + 100_000))
            .map(|i| (i % 251) as u8)
            .collect();
        let mut f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut f, &data).unwrap();
        let mut files = OpenedFiles::default();
        files.add("a.csv", Arc::new(f)).unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let pieces = |options: GetOptions| {
            runtime.block_on(async {
                let got = files.get_opts(&Path::from("a.csv"), options).await.unwrap();
                let GetResultPayload::Stream(s) = got.payload else {
                    panic!("a stream")
                };
                s.try_collect::<Vec<Bytes>>().await.unwrap()
            })
        };
        let whole = pieces(GetOptions::default());
        assert!(whole.iter().all(|p| !p.is_empty() && p.len() <= PIECE));
        assert_eq!(whole.concat(), data);
        let ranged = pieces(GetOptions {
            range: Some((10..2_000_010).into()),
            ..GetOptions::default()
        });
        assert_eq!(ranged.len(), 1);
        assert_eq!(ranged.concat(), &data[10..2_000_010]);
    }
}
