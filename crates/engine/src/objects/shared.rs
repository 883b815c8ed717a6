//! A small JSON document that replicas on different machines share through a bucket
//! (`http.state` in `config.json`): access tokens, pinned tool definitions. A look returns the last snapshot at
//! once, never waiting on the bucket; a background task checks for a newer version every
//! [`CHECK_EVERY`] (a GET with `If-None-Match`, so an unchanged document costs a 304). A change
//! is a read-modify-write with a conditional PUT (`If-Match` the version read, or
//! `If-None-Match: *` for the first one), done again when another replica wrote in between.

use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use object_store::{GetOptions, ObjectStore, PutMode, PutOptions, PutPayload, UpdateVersion};
use serde::Serialize;
use serde::de::DeserializeOwned;

use super::Bucket;

/// How often a replica checks for a newer version: a change made through another replica is
/// seen within this and one request.
pub const CHECK_EVERY: Duration = Duration::from_millis(250);
/// One check gives up after this; the snapshot then ages until a check succeeds.
const CHECK_TIMEOUT: Duration = Duration::from_secs(2);
/// How many times a change is tried when other replicas keep writing first.
const ATTEMPTS: usize = 16;

/// What one read of the document found.
enum Fetched {
    Found(bytes::Bytes, UpdateVersion),
    Missing,
    /// The version asked about is still the bucket's.
    Unchanged,
}

struct Snapshot<T> {
    value: Arc<T>,
    /// The version read (`None`: there was no document).
    version: Option<UpdateVersion>,
    /// When the bucket last answered a check.
    checked: Option<Instant>,
}

impl<T: Default> Snapshot<T> {
    fn empty() -> Self {
        Snapshot {
            value: Arc::new(T::default()),
            version: None,
            checked: None,
        }
    }
}

pub struct SharedObject<T> {
    /// One read on demand at a time ([`SharedObject::vouched_since`]); when the last one was
    /// asked.
    reading: tokio::sync::Mutex<Option<Instant>>,
    store: Arc<dyn ObjectStore>,
    key: object_store::path::Path,
    /// `s3://bucket/prefix/name`, for messages.
    url: String,
    snapshot: Mutex<Snapshot<T>>,
    /// Counts the versions seen (for those who recompute what depends on the document).
    seen: tokio::sync::watch::Sender<u64>,
}

impl<T> SharedObject<T>
where
    T: Default + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    /// The document `name` under the bucket's prefix. Nothing is contacted here.
    pub fn new(bucket: &Bucket, name: &str) -> Self {
        let url = bucket.url.join(name);
        Self {
            reading: tokio::sync::Mutex::new(None),
            store: bucket.store.clone(),
            key: url.key(),
            url: url.to_string(),
            snapshot: Mutex::new(Snapshot::empty()),
            seen: tokio::sync::watch::channel(0).0,
        }
    }

    /// Changes whenever another version of the document is seen.
    pub fn subscribe(&self) -> tokio::sync::watch::Receiver<u64> {
        self.seen.subscribe()
    }

    /// How many versions have been seen: a different number, a different document.
    pub fn generation(&self) -> u64 {
        *self.seen.borrow()
    }

    /// Holds `snapshot` from now on, a new version.
    fn hold(&self, snapshot: Snapshot<T>) {
        *self.lock() = snapshot;
        self.seen.send_modify(|n| *n += 1);
    }

    pub fn url(&self) -> &str {
        &self.url
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Snapshot<T>> {
        self.snapshot.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// The last snapshot and how long ago the bucket last vouched for it (`None`: never).
    pub fn load(&self) -> (Arc<T>, Option<Duration>) {
        let s = self.lock();
        (s.value.clone(), s.checked.map(|t| t.elapsed()))
    }

    /// The document's bytes and version as the bucket has them; `Unchanged` when its ETag is
    /// still `known`.
    async fn fetch(&self, known: Option<String>) -> Result<Fetched, String> {
        let options = GetOptions {
            if_none_match: known,
            ..Default::default()
        };
        match self.store.get_opts(&self.key, options).await {
            Ok(got) => {
                let version = UpdateVersion {
                    e_tag: got.meta.e_tag.clone(),
                    version: got.meta.version.clone(),
                };
                let bytes = got.bytes().await.map_err(|e| self.failed(e))?;
                Ok(Fetched::Found(bytes, version))
            }
            Err(object_store::Error::NotModified { .. }) => Ok(Fetched::Unchanged),
            Err(object_store::Error::NotFound { .. }) => Ok(Fetched::Missing),
            Err(e) => Err(self.failed(e)),
        }
    }

    /// Reads the document when it changed since the snapshot. A document that does not parse
    /// reads as empty (for tokens: none is accepted), and says so in the log. The snapshot is
    /// vouched for as of when the read was asked, not answered: a write that landed while the
    /// read was under way may be missing from it (a token just made through another replica).
    pub async fn refresh(&self) -> Result<(), String> {
        let asked = Instant::now();
        let known = self.lock().version.as_ref().and_then(|v| v.e_tag.clone());
        let (value, version) = match self.fetch(known).await? {
            Fetched::Unchanged => {
                self.lock().checked = Some(asked);
                return Ok(());
            }
            Fetched::Missing => {
                let mut s = self.lock();
                if s.version.is_none() && s.checked.is_some() {
                    // Still none: nothing new.
                    s.checked = Some(asked);
                    return Ok(());
                }
                drop(s);
                (T::default(), None)
            }
            Fetched::Found(bytes, version) => {
                let value = serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                    tracing::warn!("{} is not usable ({e}); it counts as empty", self.url);
                    T::default()
                });
                (value, Some(version))
            }
        };
        self.hold(Snapshot {
            value: Arc::new(value),
            version,
            checked: Some(asked),
        });
        Ok(())
    }

    /// A snapshot the bucket vouched for within `age`: read again first when the one held is
    /// older (see [`SharedObject::vouched_since`]).
    pub async fn fresher_than(&self, age: Duration) -> Result<Arc<T>, String> {
        // So soon after boot that nothing came before: any snapshot read will do.
        let since = Instant::now().checked_sub(age);
        self.vouched_since(since, Duration::ZERO).await
    }

    /// A snapshot from a read asked at or after `since` (`None`: any read): read again first
    /// when the one held is older — one read at a time, those who waited for it use it, and
    /// reads on demand at least `gap` apart. Why not, when the bucket does not answer within
    /// [`CHECK_TIMEOUT`].
    pub async fn vouched_since(
        &self,
        since: Option<Instant>,
        gap: Duration,
    ) -> Result<Arc<T>, String> {
        let fresh = |s: &Self| {
            let snapshot = s.lock();
            snapshot
                .checked
                .is_some_and(|asked| since.is_none_or(|since| asked >= since))
                .then(|| snapshot.value.clone())
        };
        if let Some(value) = fresh(self) {
            return Ok(value);
        }
        let mut last = self.reading.lock().await;
        if let Some(value) = fresh(self) {
            return Ok(value);
        }
        if let Some(wait) = last.and_then(|asked| gap.checked_sub(asked.elapsed())) {
            tokio::time::sleep(wait).await;
        }
        *last = Some(Instant::now());
        match tokio::time::timeout(CHECK_TIMEOUT, self.refresh()).await {
            Ok(Ok(())) => Ok(self.load().0),
            Ok(Err(e)) => Err(e),
            Err(_) => Err(format!(
                "no answer from {} within {CHECK_TIMEOUT:?}",
                self.url
            )),
        }
    }

    fn failed(&self, e: impl std::fmt::Display) -> String {
        format!("cannot read {}: {e}", self.url)
    }

    /// Changes the document with `change` (which may refuse with a message), written only if
    /// no other replica wrote since it was read, else read and changed again.
    pub async fn update<R>(
        &self,
        mut change: impl FnMut(&mut T) -> Result<R, String>,
    ) -> Result<R, String> {
        for attempt in 0..ATTEMPTS {
            let (mut value, version) = match self.fetch(None).await? {
                Fetched::Found(bytes, version) => {
                    let value = serde_json::from_slice(&bytes).map_err(|e| {
                        format!("{} is not usable ({e}); fix or remove it first", self.url)
                    })?;
                    (value, Some(version))
                }
                // No version was asked about, so none can be unchanged.
                Fetched::Missing | Fetched::Unchanged => (T::default(), None),
            };
            let out = change(&mut value)?;
            let body = serde_json::to_vec_pretty(&value).map_err(|e| e.to_string())?;
            let mode = match &version {
                Some(v) => PutMode::Update(v.clone()),
                None => PutMode::Create,
            };
            let options = PutOptions {
                mode,
                ..Default::default()
            };
            match self
                .store
                .put_opts(&self.key, PutPayload::from(body), options)
                .await
            {
                Ok(put) => {
                    self.hold(Snapshot {
                        value: Arc::new(value),
                        version: Some(UpdateVersion {
                            e_tag: put.e_tag,
                            version: put.version,
                        }),
                        checked: Some(Instant::now()),
                    });
                    return Ok(out);
                }
                Err(
                    object_store::Error::Precondition { .. }
                    | object_store::Error::AlreadyExists { .. },
                ) => {
                    // Another replica wrote first: read its version and change that.
                    let wait = 5 * (attempt as u64 + 1) + u64::from(rand_byte() % 20);
                    tokio::time::sleep(Duration::from_millis(wait)).await;
                }
                Err(e) => return Err(format!("cannot write {}: {e}", self.url)),
            }
        }
        Err(format!(
            "{} was changed by others {ATTEMPTS} times while this change was made; try again",
            self.url
        ))
    }

    /// Checks for a newer version every [`CHECK_EVERY`] on a task of its own, for as long as
    /// this document is in use (the task ends when the last `Arc` is dropped). A failed check
    /// is logged once until one succeeds again.
    pub fn keep_fresh(self: &Arc<Self>) {
        let this = Arc::downgrade(self);
        tokio::spawn(async move {
            let mut failing = false;
            loop {
                let Some(doc) = this.upgrade() else { break };
                match tokio::time::timeout(CHECK_TIMEOUT, doc.refresh()).await {
                    Ok(Ok(())) => {
                        if failing {
                            tracing::info!("{} can be read again", doc.url);
                        }
                        failing = false;
                    }
                    Ok(Err(e)) if !failing => {
                        tracing::warn!("{e}");
                        failing = true;
                    }
                    Err(_) if !failing => {
                        tracing::warn!("no answer from {} within {CHECK_TIMEOUT:?}", doc.url);
                        failing = true;
                    }
                    _ => {}
                }
                drop(doc);
                tokio::time::sleep(CHECK_EVERY).await;
            }
        });
    }
}

/// The bucket `http.state` names, if it names one; why it cannot be used, if so.
pub fn state_bucket(
    http: Option<&crate::config::HttpConfig>,
    secrets: &dyn crate::config::SecretSource,
) -> Option<Result<Bucket, String>> {
    let state = http?.state.as_ref()?;
    Some(
        Bucket::from_entry(&state.path, true, &state.extra, secrets)
            .map_err(|e| format!("http.state cannot be used: {e}")),
    )
}

/// A little jitter, so replicas that collided do not collide again in step.
fn rand_byte() -> u8 {
    let mut b = [0u8; 1];
    let _ = getrandom::fill(&mut b);
    b[0]
}
