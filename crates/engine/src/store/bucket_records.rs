//! Records of responses stored in bucket roots live in the bucket (`<root>/.offload/records/`,
//! one small object per response, written once), so every Offload process that uses the bucket
//! lists the same responses. Records never change, so a refresh lists the keys and fetches only
//! the new ones; a bucket that does not answer within [`REFRESH_DEADLINE`] keeps what was read
//! before.

use std::collections::{BTreeMap, HashMap};
use std::sync::Mutex;
use std::time::Duration;

use futures::{StreamExt, TryStreamExt};
use object_store::{ObjectStore, ObjectStoreExt, PutMode, PutOptions, PutPayload};

use super::Record;
use crate::objects::{Bucket, ObjectUrl};
use crate::roots::Roots;

/// How long a refresh may wait on one bucket.
const REFRESH_DEADLINE: Duration = Duration::from_secs(5);
/// Records fetched at once.
const FETCHES: usize = 8;

#[derive(Default)]
pub struct BucketRecords {
    /// By bucket root URL: records by key.
    cache: Mutex<HashMap<String, BTreeMap<String, Record>>>,
}

fn records_prefix(bucket: &Bucket) -> ObjectUrl {
    bucket.hidden("records")
}

impl BucketRecords {
    /// Writes `record` into its bucket (blocking: call from a blocking thread) and lists it at
    /// once. A record that cannot be written is logged: the response is stored either way.
    pub fn add(&self, bucket: &Bucket, record: &Record) {
        let name = format!(
            "{}-{:08x}.json",
            record.time.format("%Y%m%dT%H%M%S%.3fZ"),
            fastrand::u32(..)
        );
        let key = records_prefix(bucket).join(&name).key();
        let written = serde_json::to_vec(record)
            .map_err(|e| e.to_string())
            .and_then(|body| {
                let handle = tokio::runtime::Handle::try_current().map_err(|e| e.to_string())?;
                let options = PutOptions {
                    mode: PutMode::Create,
                    ..Default::default()
                };
                handle
                    .block_on(async {
                        tokio::time::timeout(
                            REFRESH_DEADLINE,
                            bucket.store.put_opts(&key, PutPayload::from(body), options),
                        )
                        .await
                    })
                    .map_err(|_| "no answer in time".to_owned())?
                    .map_err(|e| e.to_string())
            });
        if let Err(e) = written {
            tracing::warn!(
                "stored {} but could not record it in the bucket: {e}",
                record.path
            );
        }
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .entry(bucket.url.to_string())
            .or_default()
            .insert(key.to_string(), record.clone());
    }

    /// Deletes the stored response `path` from `bucket`: the object, the objects beside it and
    /// its record, so no process lists it any more (blocking). The main object must go; the
    /// others are deleted as well as they can be.
    pub fn delete(
        &self,
        bucket: &Bucket,
        path: &ObjectUrl,
        sides: &[ObjectUrl],
    ) -> Result<(), String> {
        let handle = tokio::runtime::Handle::try_current().map_err(|e| e.to_string())?;
        let store = &bucket.store;
        handle.block_on(bounded(store.delete(&path.key())))?;
        let shown = path.to_string();
        let records: Vec<String> = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(&bucket.url.to_string())
            .map(|m| {
                m.iter()
                    .filter(|(_, r)| r.path == shown)
                    .map(|(k, _)| k.clone())
                    .collect()
            })
            .unwrap_or_default();
        for side in sides {
            if let Err(e) = handle.block_on(bounded(store.delete(&side.key()))) {
                tracing::warn!("cannot delete {side}: {e}");
            }
        }
        for key in &records {
            let key = object_store::path::Path::from(key.as_str());
            if let Err(e) = handle.block_on(bounded(store.delete(&key))) {
                tracing::warn!("cannot delete the record {key}: {e}");
            }
        }
        if let Some(m) = self
            .cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get_mut(&bucket.url.to_string())
        {
            m.retain(|k, _| !records.contains(k));
        }
        Ok(())
    }

    /// Whether any bucket's records are cached.
    pub fn is_empty(&self) -> bool {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .is_empty()
    }

    /// Every cached record of the bucket roots.
    pub fn all(&self) -> Vec<Record> {
        self.cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .values()
            .flat_map(|m| m.values().cloned())
            .collect()
    }

    /// Reads the records of every bucket root in `roots` (new keys only; records removed from
    /// the bucket leave the list). Forgets buckets that are no longer roots.
    pub async fn refresh(&self, roots: &Roots) {
        let known: HashMap<String, BTreeMap<String, Record>> =
            self.cache.lock().unwrap_or_else(|p| p.into_inner()).clone();
        let refreshed = futures::future::join_all(roots.buckets().iter().map(|bucket| {
            let url = bucket.url.to_string();
            let before = known.get(&url).cloned().unwrap_or_default();
            async move {
                match tokio::time::timeout(REFRESH_DEADLINE, read_all(bucket, &before)).await {
                    Ok(Ok(records)) => (url, records),
                    Ok(Err(e)) => {
                        tracing::warn!("cannot list the records in {url}: {e}");
                        (url, before)
                    }
                    Err(_) => {
                        tracing::warn!("the records in {url} did not arrive in time");
                        (url, before)
                    }
                }
            }
        }))
        .await;
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = refreshed.into_iter().collect();
    }
}

/// `f` within twice the refresh deadline, its error in words.
async fn bounded(f: impl Future<Output = object_store::Result<()>>) -> Result<(), String> {
    tokio::time::timeout(REFRESH_DEADLINE * 2, f)
        .await
        .map_err(|_| "no answer in time".to_owned())?
        .map_err(|e| e.to_string())
}

/// The records under `bucket`'s records prefix, reusing `known` ones.
async fn read_all(
    bucket: &Bucket,
    known: &BTreeMap<String, Record>,
) -> object_store::Result<BTreeMap<String, Record>> {
    let prefix = records_prefix(bucket).key();
    let keys: Vec<object_store::path::Path> = bucket
        .store
        .list(Some(&prefix))
        .map_ok(|meta| meta.location)
        .try_collect()
        .await?;
    let store = &bucket.store;
    let fetched: Vec<(String, Option<Record>)> = futures::stream::iter(keys)
        .map(|key| async move {
            let name = key.to_string();
            if let Some(r) = known.get(&name) {
                return (name, Some(r.clone()));
            }
            let record = fetch(store, &key).await;
            (name, record)
        })
        .buffer_unordered(FETCHES)
        .collect()
        .await;
    Ok(fetched
        .into_iter()
        .filter_map(|(k, r)| r.map(|r| (k, r)))
        .collect())
}

async fn fetch(
    store: &std::sync::Arc<dyn ObjectStore>,
    key: &object_store::path::Path,
) -> Option<Record> {
    let bytes = match store.get(key).await {
        Ok(r) => r.bytes().await.ok()?,
        Err(e) => {
            tracing::warn!("cannot read the record {key}: {e}");
            return None;
        }
    };
    serde_json::from_slice(&bytes)
        .inspect_err(|e| tracing::warn!("the record {key} is damaged: {e}"))
        .ok()
}
