//! Columnar copies of queried files. A model rarely asks one question of a big file; the first
//! `query_file` of a CSV, TSV, JSON or JSON-lines file parses the text, and once it has
//! answered, its columns are written as Parquet (LZ4) in `<data>/columns`, named by a hash of
//! the file's path, size and version (modification time; a bucket object's ETag) and its
//! delimiter. Later questions of the same version scan the copy's columns instead of parsing
//! the text again. A file that changed has another name: an old copy is never read for it.
//!
//! Bounded on disk by `limits.queryCacheBytes` (default 2 GiB, 0 turns copies off): the copies
//! read least recently go first. Safe with queries at once and with replicas sharing the data
//! directory: a copy is written as an unnamed file and linked under its name when whole (a
//! process ended mid-copy leaves nothing), and only when the file still is the version it was
//! read as; a process makes one copy of a file, one file at a time.

use std::collections::HashSet;
use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::{SystemTime, UNIX_EPOCH};

use offload_formats::files::{self, Version};
use offload_query::{Data, Format, Limits, Querier, Source};
use sha2::{Digest, Sha256};
use tokio_util::sync::CancellationToken;

use crate::store::write::write_new;

/// Bumped when what a copy holds changes: copies of an older layout are never read.
const LAYOUT: u32 = 1;

/// The copies of one data directory.
#[derive(Debug)]
pub struct ColumnCopies {
    dir: PathBuf,
    /// Files whose copy this process is making.
    making: Mutex<HashSet<String>>,
    /// Copies are made one at a time, on a runtime of their own.
    queries: Querier,
    one_at_a_time: Mutex<()>,
}

/// What a query found for one of its files.
pub enum Found {
    /// The copy of the file as it is now.
    Copy(File),
    /// No copy yet: what making one takes.
    Missing(Missing),
    /// Never copied: a Parquet file already is columns; copies are off; a file without a
    /// version (nothing to tell its next version by).
    Never,
}

/// A file to copy once its query has answered.
#[derive(Debug)]
pub struct Missing {
    name: String,
    file: files::Source,
    format: Format,
    label: String,
    size: u64,
    version: Version,
}

impl ColumnCopies {
    pub fn new(data_dir: &Path) -> Self {
        Self {
            dir: data_dir.join("columns"),
            making: Mutex::default(),
            queries: Querier::new(),
            one_at_a_time: Mutex::default(),
        }
    }

    /// The copy of `file` (shown as `label`, read as `format`) as it is now, if one was made.
    /// `cap` is `limits.queryCacheBytes`.
    pub fn find(&self, file: &files::Source, label: &str, format: &Format, cap: u64) -> Found {
        if cap == 0 || *format == Format::Parquet {
            return Found::Never;
        }
        let Some((size, version)) = identity(file) else {
            return Found::Never;
        };
        if version.modified.is_none() && version.tag.is_none() {
            return Found::Never;
        }
        let name = name_of(label, size, &version, format);
        let path = self.dir.join(format!("{name}.parquet"));
        if let Ok(copy) = File::open(&path)
            && is_whole(&copy)
        {
            // Read now: the last to be evicted.
            let _ = copy.set_modified(SystemTime::now());
            tracing::debug!("query_file reads the columnar copy of {label}");
            return Found::Copy(copy);
        }
        match file.try_clone() {
            Ok(file) => Found::Missing(Missing {
                name,
                file,
                format: format.clone(),
                label: label.to_owned(),
                size,
                version,
            }),
            Err(_) => Found::Never,
        }
    }

    /// Makes the copies of `missing` on a thread of its own (the query has answered: its
    /// caller does not wait), then keeps the copies within `cap` bytes.
    pub fn make(self: &Arc<Self>, missing: Vec<Missing>, memory: u64, cap: u64) {
        if missing.is_empty() {
            return;
        }
        // Marked before the thread starts: a second query of the same file meanwhile makes no
        // second copy.
        let missing: Vec<Missing> = missing
            .into_iter()
            .filter(|m| self.making(&m.name, true))
            .collect();
        if missing.is_empty() {
            return;
        }
        let copies = self.clone();
        let spawned = std::thread::Builder::new()
            .name("offload-columns".into())
            .spawn(move || {
                let _one = copies
                    .one_at_a_time
                    .lock()
                    .unwrap_or_else(|e| e.into_inner());
                for m in missing {
                    let name = m.name.clone();
                    if let Err(e) = copies.make_one(m, memory) {
                        tracing::debug!("no columnar copy made: {e}");
                    }
                    copies.making(&name, false);
                }
                copies.keep_within(cap);
            });
        if let Err(e) = spawned {
            tracing::warn!("no columnar copies made: {e}");
            self.making
                .lock()
                .unwrap_or_else(|e| e.into_inner())
                .clear();
        }
    }

    /// Marks `name` as being made (false when it already is) or done.
    fn making(&self, name: &str, start: bool) -> bool {
        let mut making = self.making.lock().unwrap_or_else(|e| e.into_inner());
        if start {
            making.insert(name.to_owned())
        } else {
            making.remove(name)
        }
    }

    fn make_one(&self, m: Missing, memory: u64) -> Result<(), String> {
        let path = self.dir.join(format!("{}.parquet", m.name));
        if path.exists() {
            return Ok(());
        }
        std::fs::create_dir_all(&self.dir).map_err(|e| e.to_string())?;
        let limits = Limits {
            rows: 0,
            budget: 0,
            memory: memory.max(1 << 20) as usize,
            // `SELECT *` never spills; a directory for it would be left behind by a process
            // ended mid-copy.
            spill_dir: None,
        };
        let source = Source {
            name: "data".into(),
            label: m.label.clone(),
            data: Data::File {
                file: Arc::new(m.file.try_clone().map_err(|e| e.to_string())?),
                format: m.format,
            },
        };
        // Written unnamed and named when whole (a process ended meanwhile leaves nothing), and
        // only a copy of the version its name says: a file changed while it was read is not
        // copied.
        let (_, _, written) = write_new(&self.dir, &format!("{}.parquet", m.name), |out| {
            let written = self
                .queries
                .copy(source, &limits, &CancellationToken::new(), out)
                .map_err(std::io::Error::other)?;
            if identity(&m.file) != Some((m.size, m.version)) {
                return Err(std::io::Error::other(format!(
                    "{} changed while it was copied",
                    m.label
                )));
            }
            Ok(written)
        })
        .map_err(|e| e.message)?;
        tracing::debug!(
            "columnar copy of {} made: {} rows",
            m.label,
            written.row_count
        );
        Ok(())
    }

    /// Removes the copies read least recently until the rest fit in `cap` bytes.
    fn keep_within(&self, cap: u64) {
        let Ok(entries) = std::fs::read_dir(&self.dir) else {
            return;
        };
        let mut copies: Vec<(SystemTime, u64, PathBuf)> = entries
            .flatten()
            .filter(|e| e.path().extension().is_some_and(|x| x == "parquet"))
            .filter_map(|e| {
                let meta = e.metadata().ok()?;
                Some((meta.modified().ok()?, meta.len(), e.path()))
            })
            .collect();
        copies.sort();
        let mut total: u64 = copies.iter().map(|c| c.1).sum();
        for (_, len, path) in copies {
            if total <= cap {
                break;
            }
            if std::fs::remove_file(&path).is_ok() {
                tracing::debug!("columnar copy {} removed: over the cap", path.display());
            }
            total -= len;
        }
    }
}

/// A file's size and version, read from what was opened (a compressed file by its own bytes:
/// its size is not known without reading it whole).
fn identity(file: &files::Source) -> Option<(u64, Version)> {
    match file {
        files::Source::Local(f) => {
            let meta = f.metadata().ok()?;
            Some((meta.len(), file.version().ok()?))
        }
        files::Source::Remote(o) => Some((o.size(), o.version())),
        files::Source::Compressed(c) => {
            let (size, version) = identity(c.inner())?;
            // The same bytes read through another codec are another table.
            let tag = format!("{:?}{}", c.codec(), version.tag.unwrap_or_default());
            Some((
                size,
                Version {
                    modified: version.modified,
                    tag: Some(tag),
                },
            ))
        }
    }
}

/// The name of a version's copy.
fn name_of(label: &str, size: u64, version: &Version, format: &Format) -> String {
    let modified = version
        .modified
        .and_then(|m| m.duration_since(UNIX_EPOCH).ok())
        .map_or(0, |d| d.as_nanos());
    let mut hash = Sha256::new();
    hash.update(
        format!(
            "{LAYOUT}\0{label}\0{size}\0{modified}\0{}\0{format:?}",
            version.tag.as_deref().unwrap_or("")
        )
        .as_bytes(),
    );
    hex::encode(&hash.finalize()[..16])
}

/// Whether `file` ends as a Parquet file does (a copy is renamed into place whole; this keeps
/// a file damaged since from being read as one).
fn is_whole(mut file: &File) -> bool {
    let mut magic = [0u8; 4];
    file.seek(SeekFrom::End(-4)).is_ok() && file.read_exact(&mut magic).is_ok() && &magic == b"PAR1"
}

#[cfg(test)]
mod tests {
    use super::*;

    fn csv(dir: &Path, name: &str, rows: usize) -> (PathBuf, files::Source) {
        let path = dir.join(name);
        let mut text = String::from("n,g\n");
        for i in 0..rows {
            text.push_str(&format!("{i},g{}\n", i % 3));
        }
        std::fs::write(&path, text).unwrap();
        let opened = File::open(&path).unwrap().into();
        (path, opened)
    }

    const CSV: Format = Format::Delimited { delimiter: b',' };

    /// Waits for the copies being made to be done.
    fn settle(copies: &ColumnCopies) {
        for _ in 0..600 {
            if copies.making.lock().unwrap().is_empty() {
                let _one = copies.one_at_a_time.lock().unwrap();
                return;
            }
            std::thread::sleep(std::time::Duration::from_millis(10));
        }
        panic!("copies still being made after 6 s");
    }

    /// Makes the copy `find` says is missing, within `cap`, and waits for it.
    fn copy(
        copies: &Arc<ColumnCopies>,
        file: &files::Source,
        label: &str,
        format: &Format,
        cap: u64,
    ) {
        copies.make(
            vec![missing(copies.find(file, label, format, 1 << 30))],
            64 << 20,
            cap,
        );
        settle(copies);
    }

    fn missing(found: Found) -> Missing {
        match found {
            Found::Missing(m) => m,
            Found::Copy(_) => panic!("a copy where none was made"),
            Found::Never => panic!("never copied"),
        }
    }

    #[test]
    fn a_copy_is_found_for_the_same_version_only_and_kept_within_the_cap() {
        let data = tempfile::tempdir().unwrap();
        let files = tempfile::tempdir().unwrap();
        let copies = Arc::new(ColumnCopies::new(data.path()));
        let (a_path, a) = csv(files.path(), "a.csv", 1000);
        let label = a_path.display().to_string();

        // First: missing; made once asked; then found.
        copy(&copies, &a, &label, &CSV, 1 << 30);
        assert!(matches!(
            copies.find(&a, &label, &CSV, 1 << 30),
            Found::Copy(_)
        ));
        // Control: another delimiter, another label, copies off, Parquet: not this copy.
        let tsv = Format::Delimited { delimiter: b'\t' };
        assert!(matches!(
            copies.find(&a, &label, &tsv, 1 << 30),
            Found::Missing(_)
        ));
        assert!(matches!(
            copies.find(&a, "other", &CSV, 1 << 30),
            Found::Missing(_)
        ));
        assert!(matches!(copies.find(&a, &label, &CSV, 0), Found::Never));
        assert!(matches!(
            copies.find(&a, &label, &Format::Parquet, 1 << 30),
            Found::Never
        ));

        // The file changes (a row more, a later time): the old copy is not its copy.
        let mut text = std::fs::read_to_string(&a_path).unwrap();
        text.push_str("1000,g1\n");
        std::fs::write(&a_path, text).unwrap();
        let a2: files::Source = File::open(&a_path).unwrap().into();
        assert!(matches!(
            copies.find(&a2, &label, &CSV, 1 << 30),
            Found::Missing(_)
        ));
        // Same size, another modification time: not its copy either.
        let (b_path, b) = csv(files.path(), "b.csv", 1000);
        let b_label = b_path.display().to_string();
        copy(&copies, &b, &b_label, &CSV, 1 << 30);
        File::options()
            .write(true)
            .open(&b_path)
            .unwrap()
            .set_modified(SystemTime::now() + std::time::Duration::from_secs(5))
            .unwrap();
        let b2: files::Source = File::open(&b_path).unwrap().into();
        assert!(matches!(
            copies.find(&b2, &b_label, &CSV, 1 << 30),
            Found::Missing(_)
        ));
        assert!(matches!(
            copies.find(&b, &b_label, &CSV, 1 << 30),
            Found::Missing(_)
        ));

        // Within the cap: the copy read least recently goes. `a` copied again, `c` made; a cap
        // that holds two of them keeps the two read last.
        copy(&copies, &a2, &label, &CSV, 1 << 30);
        let one = std::fs::read_dir(&copies.dir)
            .unwrap()
            .flatten()
            .map(|e| e.metadata().unwrap().len())
            .max()
            .unwrap();
        std::thread::sleep(std::time::Duration::from_millis(20));
        assert!(matches!(
            copies.find(&a2, &label, &CSV, 1 << 30),
            Found::Copy(_)
        ));
        let (c_path, c) = csv(files.path(), "c.csv", 1000);
        let c_label = c_path.display().to_string();
        copy(&copies, &c, &c_label, &CSV, 2 * one + one / 2);
        assert!(matches!(
            copies.find(&a2, &label, &CSV, 1 << 30),
            Found::Copy(_)
        ));
        assert!(matches!(
            copies.find(&c, &c_label, &CSV, 1 << 30),
            Found::Copy(_)
        ));
        let kept = std::fs::read_dir(&copies.dir).unwrap().count();
        assert_eq!(kept, 2, "the oldest copies went");
    }

    #[test]
    fn a_damaged_copy_is_not_read_and_a_bad_file_makes_none() {
        let data = tempfile::tempdir().unwrap();
        let files = tempfile::tempdir().unwrap();
        let copies = Arc::new(ColumnCopies::new(data.path()));
        let (path, a) = csv(files.path(), "a.csv", 100);
        let label = path.display().to_string();
        let m = missing(copies.find(&a, &label, &CSV, 1 << 30));
        let made = copies.dir.join(format!("{}.parquet", m.name));
        copies.make(vec![m], 64 << 20, 1 << 30);
        settle(&copies);
        assert!(matches!(
            copies.find(&a, &label, &CSV, 1 << 30),
            Found::Copy(_)
        ));
        // Cut short: not read.
        let len = std::fs::metadata(&made).unwrap().len();
        File::options()
            .write(true)
            .open(&made)
            .unwrap()
            .set_len(len / 2)
            .unwrap();
        assert!(matches!(
            copies.find(&a, &label, &CSV, 1 << 30),
            Found::Missing(_)
        ));

        // Not a table: no copy, nothing left behind.
        let bad = files.path().join("bad.json");
        std::fs::write(&bad, "[1, 2]").unwrap();
        let opened: files::Source = File::open(&bad).unwrap().into();
        let bad_label = bad.display().to_string();
        copy(&copies, &opened, &bad_label, &Format::Json, 1 << 30);
        assert!(matches!(
            copies.find(&opened, &bad_label, &Format::Json, 1 << 30),
            Found::Missing(_)
        ));
        let names: Vec<String> = std::fs::read_dir(&copies.dir)
            .unwrap()
            .flatten()
            .map(|e| e.file_name().to_string_lossy().into_owned())
            .collect();
        assert_eq!(names.len(), 1, "{names:?}");
    }
}
