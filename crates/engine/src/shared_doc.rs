//! A small JSON document every Offload process shares — access tokens, pinned tool definitions:
//! a file in the data directory (`shared_file`), or, for replicas on several machines, an object
//! under the state bucket's prefix (`http.state`; `objects::SharedObject`). A state entry that
//! cannot be used keeps nothing anywhere else: each use says why (deny by default).

use std::path::Path;
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::objects::{Bucket, SharedObject};
use crate::shared_file::SharedJson;

/// A shared document the bucket has not vouched for within this is not trusted (a revocation
/// or an approval made elsewhere might not have been seen).
pub const MAX_STALE: Duration = Duration::from_secs(5);

pub struct SharedDoc<T> {
    place: Place<T>,
}

enum Place<T> {
    File(SharedJson<T>),
    Shared(Arc<SharedObject<T>>),
    /// `http.state` cannot be used (why).
    Unusable(String),
}

/// Which version of a document is held: a different stamp, a different document.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stamp {
    File(Option<SystemTime>),
    Shared(u64),
    Unusable,
}

impl<T> SharedDoc<T>
where
    T: Clone + Default + Serialize + DeserializeOwned + Send + Sync + 'static,
{
    /// The document `name`: in the state bucket when `state` (what `state_bucket` made of
    /// `http.state`) names one, else in `data_dir`.
    pub fn at(data_dir: &Path, name: &str, state: Option<Result<Bucket, String>>) -> Self {
        let place = match state {
            Some(Ok(bucket)) => Place::Shared(Arc::new(SharedObject::new(&bucket, name))),
            Some(Err(why)) => Place::Unusable(why),
            None => Place::File(SharedJson::new(data_dir.join(name))),
        };
        Self { place }
    }

    /// Why it cannot be used at all, if so.
    pub fn unusable(&self) -> Option<&str> {
        match &self.place {
            Place::Unusable(why) => Some(why),
            _ => None,
        }
    }

    /// Whether it is the replicas' shared document (or meant to be).
    pub fn is_shared(&self) -> bool {
        !matches!(self.place, Place::File(_))
    }

    /// Where it is kept, for messages.
    pub fn place(&self) -> String {
        match &self.place {
            Place::File(f) => f.path().display().to_string(),
            Place::Shared(d) => d.url().to_owned(),
            Place::Unusable(_) => "nowhere (http.state cannot be used)".into(),
        }
    }

    /// For a process that reads it as requests come: a shared document is checked for a newer
    /// version on a task of its own, for as long as it is in use. Must run inside a runtime.
    pub fn keep_fresh(&self) {
        if let Place::Shared(d) = &self.place {
            d.keep_fresh();
        }
    }

    /// Changes whenever a shared document's next version is seen (`None` for a file).
    pub fn subscribe(&self) -> Option<tokio::sync::watch::Receiver<u64>> {
        match &self.place {
            Place::Shared(d) => Some(d.subscribe()),
            _ => None,
        }
    }

    /// Which version is held now (for a file: read when it changed on disk).
    pub fn stamp(&self) -> Stamp {
        match &self.place {
            Place::File(f) => Stamp::File(f.modified()),
            Place::Shared(d) => Stamp::Shared(d.generation()),
            Place::Unusable(_) => Stamp::Unusable,
        }
    }

    /// The document now, without waiting: a shared one as the bucket vouched for it within
    /// [`MAX_STALE`], else why not.
    pub fn load(&self) -> Result<Arc<T>, String> {
        match &self.place {
            Place::File(f) => Ok(f.load()),
            Place::Shared(d) => match d.load() {
                (value, Some(age)) if age <= MAX_STALE => Ok(value),
                (_, Some(age)) => Err(format!(
                    "{} was last read {:.0} s ago (the shared state does not answer)",
                    d.url(),
                    age.as_secs_f64()
                )),
                (_, None) => Err(format!("{} has not been read yet", d.url())),
            },
            Place::Unusable(why) => Err(why.clone()),
        }
    }

    /// The last version seen, however old (for what is only shown, never for a decision).
    pub fn last(&self) -> Arc<T> {
        match &self.place {
            Place::File(f) => f.load(),
            Place::Shared(d) => d.load().0,
            Place::Unusable(_) => Arc::default(),
        }
    }

    /// A version the bucket vouched for within `age`: read first when the one held is older.
    pub async fn fresher_than(&self, age: Duration) -> Result<Arc<T>, String> {
        match &self.place {
            Place::File(f) => Ok(f.load()),
            Place::Shared(d) => d.fresher_than(age).await,
            Place::Unusable(why) => Err(why.clone()),
        }
    }

    /// A version from a read asked at or after `since`, such reads on demand at least `gap`
    /// apart (see [`SharedObject::vouched_since`]).
    pub async fn vouched_since(&self, since: Instant, gap: Duration) -> Result<Arc<T>, String> {
        match &self.place {
            Place::File(f) => Ok(f.load()),
            Place::Shared(d) => d.vouched_since(Some(since), gap).await,
            Place::Unusable(why) => Err(why.clone()),
        }
    }

    /// The document as it is now (a shared one read again).
    pub async fn current(&self) -> Result<Arc<T>, String> {
        match &self.place {
            Place::File(f) => Ok(f.load()),
            Place::Shared(d) => {
                d.refresh().await?;
                Ok(d.load().0)
            }
            Place::Unusable(why) => Err(why.clone()),
        }
    }

    /// Applies `change` (which may refuse with a message) and saves the document; a shared one
    /// only if no other replica changed it meanwhile, else on the version it wrote.
    pub async fn change<R>(
        &self,
        mut change: impl FnMut(&mut T) -> Result<R, String>,
    ) -> Result<R, String> {
        match &self.place {
            Place::File(f) => {
                let mut value = (*f.load()).clone();
                let out = change(&mut value)?;
                f.save(value)
                    .map_err(|e| format!("cannot write {}: {e}", f.path().display()))?;
                Ok(out)
            }
            Place::Shared(d) => d.update(change).await,
            Place::Unusable(why) => Err(why.clone()),
        }
    }
}
