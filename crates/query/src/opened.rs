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
use futures::StreamExt;
use futures::stream::BoxStream;
use object_store::path::Path;
use object_store::{
    CopyOptions, GetOptions, GetResult, GetResultPayload, ListResult, MultipartUpload, ObjectMeta,
    ObjectStore, PutMultipartOptions, PutOptions, PutPayload, PutResult,
};
use url::Url;

use crate::blob::{Blob, read_exact_at};

/// The scheme and host of every table's URL: `offload://files/<name>.<ext>`.
pub const BASE: &str = "offload://files/";

/// How much one read hands DataFusion at a time.
const CHUNK: u64 = 4 << 20;

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

/// Reads `range` of `file` in chunks on blocking threads.
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
            let chunk = tokio::task::spawn_blocking(move || {
                let mut buf = vec![0u8; len];
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
            GetResultPayload::Stream(read_stream(opened.file.clone(), range.clone()))
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
