//! A small JSON file that every Offload process shares (`pins.json`, `tokens.json`): read again
//! only when it changed on disk (its modification time or length), handed out as a shared
//! snapshot (no copy per look), and replaced whole on save (see `whole_file`), so a change made
//! by one process reaches the others on their next look.

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::SystemTime;

use serde::Serialize;
use serde::de::DeserializeOwned;

/// When and how big the file was when read: a change to either means it is read again.
type Stamp = Option<(SystemTime, u64)>;

pub(crate) struct SharedJson<T> {
    path: PathBuf,
    cache: Mutex<(Stamp, Arc<T>)>,
}

impl<T: Default + Serialize + DeserializeOwned> SharedJson<T> {
    pub fn new(path: PathBuf) -> Self {
        Self {
            path,
            cache: Mutex::new((None, Arc::default())),
        }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// When the file last changed (`None` while there is none).
    pub fn modified(&self) -> Option<SystemTime> {
        self.stamp().map(|(t, _)| t)
    }

    fn stamp(&self) -> Stamp {
        let meta = std::fs::metadata(&self.path).ok()?;
        Some((meta.modified().ok()?, meta.len()))
    }

    /// The file as it is on disk now; the default while there is none. A file that does not
    /// parse counts as the default too (and the log says so): callers deny rather than guess.
    pub fn load(&self) -> Arc<T> {
        let mut cache = self.cache.lock().unwrap_or_else(|p| p.into_inner());
        let stamp = self.stamp();
        // While there is no file, a look is one stat, not a failed open as well.
        if stamp != cache.0 {
            let value = match std::fs::read(&self.path) {
                Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
                    tracing::error!(
                        "{} does not parse ({e}); it counts as empty until it is fixed",
                        self.path.display()
                    );
                    T::default()
                }),
                Err(_) => T::default(),
            };
            *cache = (stamp, Arc::new(value));
        }
        cache.1.clone()
    }

    /// Replaces the file with `value` (pretty JSON), whole or not at all.
    pub fn save(&self, value: T) -> std::io::Result<()> {
        crate::whole_file::replace(&self.path, |w| {
            serde_json::to_writer_pretty(&mut *w, &value).map_err(std::io::Error::other)?;
            w.write_all(b"\n")
        })?;
        *self.cache.lock().unwrap_or_else(|p| p.into_inner()) = (self.stamp(), Arc::new(value));
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    type Doc = BTreeMap<String, u32>;

    #[test]
    fn a_file_that_appears_changes_and_goes_is_seen_each_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("doc.json");
        let doc = SharedJson::<Doc>::new(path.clone());
        assert!(doc.load().is_empty(), "no file: the default");
        assert!(doc.load().is_empty(), "still none");
        // Another process writes it, then changes its length, then removes it.
        std::fs::write(&path, r#"{"a": 1}"#).unwrap();
        assert_eq!(doc.load().get("a"), Some(&1));
        std::fs::write(&path, r#"{"a": 1, "b": 22}"#).unwrap();
        assert_eq!(doc.load().get("b"), Some(&22));
        std::fs::remove_file(&path).unwrap();
        assert!(doc.load().is_empty(), "removed: the default again");
        // Saved here, read back without a change on disk.
        doc.save(BTreeMap::from([("c".to_owned(), 3)])).unwrap();
        assert_eq!(doc.load().get("c"), Some(&3));
        // A file that does not parse counts as the default.
        std::fs::write(&path, "{ not json").unwrap();
        assert!(doc.load().is_empty());
    }
}
