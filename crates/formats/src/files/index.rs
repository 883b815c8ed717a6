//! A sparse line index: how many line ends each 256 KiB block of a file holds, built only as far
//! as reads have needed and cached per (path, size, version — modification time or ETag —,
//! encoding). A deep read scans the blocks before it once (SIMD counting); the next deep read
//! jumps to its block and scans at most one block (for an object in a bucket: one ranged GET).
//! 10 GB of text costs 320 KB of index.

use std::collections::VecDeque;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use super::newline::Newline;
use super::{FileError, Observer, Source, Version};

/// Bytes per index block.
pub const BLOCK: u64 = 256 << 10;

/// How many files' indexes are kept.
const CACHED_FILES: usize = 64;

#[derive(Debug)]
pub struct LineIndex {
    data_start: u64,
    size: u64,
    newline: Newline,
    /// `ends[i]`: line ends in `[data_start, end of block i)`.
    ends: Vec<u64>,
}

impl LineIndex {
    pub fn new(data_start: u64, size: u64, newline: Newline) -> Self {
        Self {
            data_start,
            size,
            newline,
            ends: Vec::new(),
        }
    }

    fn blocks(&self) -> u64 {
        self.size.saturating_sub(self.data_start).div_ceil(BLOCK)
    }

    fn block_range(&self, i: u64) -> (u64, u64) {
        let start = self.data_start + i * BLOCK;
        (start, (start + BLOCK).min(self.size))
    }

    /// Whether the whole file has been counted.
    pub fn is_complete(&self) -> bool {
        self.ends.len() as u64 == self.blocks()
    }

    /// Line ends in the whole file, when counted.
    pub fn total_line_ends(&self) -> Option<u64> {
        self.is_complete()
            .then(|| self.ends.last().copied().unwrap_or(0))
    }

    /// Bytes counted so far.
    pub fn scanned_bytes(&self) -> u64 {
        self.ends.len() as u64 * BLOCK
    }

    /// Counts further blocks until `enough(blocks counted, line ends so far)` holds or the file
    /// ends.
    fn extend(
        &mut self,
        file: &Source,
        buf: &mut Vec<u8>,
        observer: &dyn Observer,
        enough: impl Fn(u64, u64) -> bool,
    ) -> Result<(), FileError> {
        buf.resize(BLOCK as usize, 0);
        let blocks = self.blocks();
        while (self.ends.len() as u64) < blocks {
            let so_far = self.ends.last().copied().unwrap_or(0);
            if enough(self.ends.len() as u64, so_far) {
                break;
            }
            let i = self.ends.len() as u64;
            let (start, end) = self.block_range(i);
            let block = &mut buf[..(end - start) as usize];
            let got = file.read_at(block, start)?;
            if got < block.len() {
                // The file shrank under us: count what is there, and treat it as the end.
                self.size = start + got as u64;
            }
            self.ends.push(so_far + self.newline.count(&block[..got]));
            if (i + 1).is_multiple_of(super::WATCH_EVERY / BLOCK) {
                super::checkpoint(observer, end - self.data_start, self.size - self.data_start)?;
            }
        }
        Ok(())
    }

    /// Counts at least the first `bytes` bytes; returns how many bytes and line ends that is.
    pub fn count_prefix(
        &mut self,
        file: &Source,
        bytes: u64,
        observer: &dyn Observer,
    ) -> Result<(u64, u64), FileError> {
        let mut buf = Vec::new();
        let blocks = bytes.div_ceil(BLOCK);
        self.extend(file, &mut buf, observer, |done, _| done >= blocks)?;
        let scanned = (self.scanned_bytes()).min(self.size - self.data_start);
        Ok((scanned, self.ends.last().copied().unwrap_or(0)))
    }

    /// Counts the whole file; returns its line ends.
    pub fn complete(&mut self, file: &Source, observer: &dyn Observer) -> Result<u64, FileError> {
        let mut buf = Vec::new();
        self.extend(file, &mut buf, observer, |_, _| false)?;
        Ok(self.total_line_ends().unwrap_or(0))
    }

    /// Byte offset just after the `n`-th line end (1-based), if the file has that many.
    pub fn after_line_end(
        &mut self,
        file: &Source,
        n: u64,
        observer: &dyn Observer,
    ) -> Result<Option<u64>, FileError> {
        let mut buf = Vec::new();
        if self.ends.last().copied().unwrap_or(0) < n {
            self.extend(file, &mut buf, observer, |_, so_far| so_far >= n)?;
        }
        // The first block whose running count reaches n holds the n-th line end.
        let i = self.ends.partition_point(|&ends| ends < n);
        if i == self.ends.len() {
            return Ok(None);
        }
        let before = if i == 0 { 0 } else { self.ends[i - 1] };
        let (start, end) = self.block_range(i as u64);
        buf.resize((end - start) as usize, 0);
        let got = file.read_at(&mut buf, start)?;
        Ok(self
            .newline
            .find_nth(&buf[..got], n - before)
            .ok()
            .map(|at| start + (at + self.newline.width()) as u64))
    }

    /// Line ends before byte `at`, if the index has reached it (reads at most one block).
    pub fn line_ends_before(&self, file: &Source, at: u64) -> Result<Option<u64>, FileError> {
        if at <= self.data_start {
            return Ok(Some(0));
        }
        let i = (at - self.data_start) / BLOCK;
        if i >= self.ends.len() as u64 {
            return Ok(None);
        }
        let before = if i == 0 { 0 } else { self.ends[i as usize - 1] };
        let (start, _) = self.block_range(i);
        let mut buf = vec![0; (at - start) as usize];
        let got = file.read_at(&mut buf, start)?;
        Ok(Some(before + self.newline.count(&buf[..got])))
    }
}

/// What identifies one version of one file's index.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct IndexKey {
    pub path: PathBuf,
    pub size: u64,
    pub version: Version,
    pub data_start: u64,
    pub newline: Newline,
}

/// The indexes of recently read files; the oldest is dropped first.
#[derive(Debug, Default)]
pub struct IndexCache {
    entries: Mutex<VecDeque<(IndexKey, Arc<Mutex<LineIndex>>)>>,
}

impl IndexCache {
    /// The index for `key`, new and empty when the file is new or has changed.
    pub fn get(&self, key: IndexKey) -> Arc<Mutex<LineIndex>> {
        let mut entries = self.entries.lock().unwrap_or_else(|e| e.into_inner());
        if let Some((_, index)) = entries.iter().find(|(k, _)| *k == key) {
            return index.clone();
        }
        // A changed file replaces its old index.
        entries.retain(|(k, _)| k.path != key.path);
        if entries.len() >= CACHED_FILES {
            entries.pop_front();
        }
        let index = Arc::new(Mutex::new(LineIndex::new(
            key.data_start,
            key.size,
            key.newline,
        )));
        entries.push_back((key, index.clone()));
        index
    }
}
