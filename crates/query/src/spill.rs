//! Where a query spills: DataFusion's own disk manager, made in the query's directory when the
//! query first spills. Most queries never do, and making the directory (and DataFusion's own
//! inside it) for each query, then removing both, cost about 0.3 ms of every answer.

use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use datafusion::error::{DataFusionError, Result};
use datafusion::execution::SpillFile;
use datafusion::execution::TempFileFactory;
use datafusion::execution::disk_manager::{DiskManager, DiskManagerBuilder, DiskManagerMode};

/// Spill files of one query, in `dir` (made, with what is above it, on the first one).
pub(crate) struct SpillOnDemand {
    dir: PathBuf,
    disk: Mutex<Option<Arc<DiskManager>>>,
}

impl SpillOnDemand {
    pub(crate) fn new(dir: PathBuf) -> Self {
        Self {
            dir,
            disk: Mutex::new(None),
        }
    }
}

impl TempFileFactory for SpillOnDemand {
    fn create_temp_file(&self, description: &str) -> Result<Arc<dyn SpillFile>> {
        let disk = {
            let mut made = self.disk.lock().unwrap_or_else(|e| e.into_inner());
            match &*made {
                Some(disk) => disk.clone(),
                None => {
                    // A directory that cannot be made is no disk at all: the query is out of
                    // memory, as it is when spilling is off.
                    std::fs::create_dir_all(&self.dir).map_err(|e| {
                        DataFusionError::ResourcesExhausted(format!(
                            "{description}: no spill directory ({e})"
                        ))
                    })?;
                    let disk = DiskManagerBuilder::default()
                        .with_mode(DiskManagerMode::Directories(vec![self.dir.clone()]))
                        .build()?;
                    made.insert(Arc::new(disk)).clone()
                }
            }
        };
        disk.create_tmp_file(description)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Nothing is made until a file is asked for; then the directory and the file are, and the
    /// file is DataFusion's own (removed when dropped).
    #[test]
    fn the_directory_is_made_by_the_first_spill() {
        let root = tempfile::tempdir().unwrap();
        let dir = root.path().join("spill").join("q1");
        let spill = SpillOnDemand::new(dir.clone());
        assert!(!dir.exists(), "nothing made before a spill");
        let file = spill.create_temp_file("a test").unwrap();
        let path = file.path().unwrap().to_owned();
        assert!(path.starts_with(&dir) && path.exists(), "{path:?}");
        let second = spill.create_temp_file("a test").unwrap();
        assert_ne!(second.path().unwrap(), path);
        drop(file);
        assert!(!path.exists(), "a spill file goes when dropped");
    }

    /// A directory that cannot be made (under a file) leaves the query out of memory, as when
    /// spilling is off, not failing on a path.
    #[test]
    fn no_directory_is_out_of_memory() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(root.path().join("file"), "x").unwrap();
        let spill = SpillOnDemand::new(root.path().join("file").join("q1"));
        let Err(e) = spill.create_temp_file("a test") else {
            panic!("a spill file under a file")
        };
        assert!(matches!(e, DataFusionError::ResourcesExhausted(_)), "{e:?}");
    }
}
