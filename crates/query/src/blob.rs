//! What a query reads: a file the engine opened, read by position. A local file is one; the
//! engine hands over its own kinds too (objects in bucket roots, read with ranged requests).
//! Reads block: the query runs them on blocking threads.

use std::fs::File;
use std::io::Read;
use std::sync::Arc;
use std::time::SystemTime;

pub trait Blob: Send + Sync + std::fmt::Debug {
    /// Its size in bytes.
    fn size(&self) -> std::io::Result<u64>;
    /// Fills as much of `buf` as there is from `offset`; returns how many bytes were read.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize>;
    fn modified(&self) -> Option<SystemTime> {
        None
    }
    /// A file on this machine's disk, cheap to read again and at any place (not an object
    /// fetched by ranges, nor a compressed stream): only such a file is read in parts.
    fn is_local(&self) -> bool {
        false
    }
}

impl Blob for File {
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.metadata()?.len())
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let mut done = 0;
        while done < buf.len() {
            #[cfg(unix)]
            let n =
                std::os::unix::fs::FileExt::read_at(self, &mut buf[done..], offset + done as u64);
            #[cfg(windows)]
            let n = std::os::windows::fs::FileExt::seek_read(
                self,
                &mut buf[done..],
                offset + done as u64,
            );
            match n {
                Ok(0) => break,
                Ok(n) => done += n,
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
        Ok(done)
    }

    fn modified(&self) -> Option<SystemTime> {
        self.metadata().ok()?.modified().ok()
    }

    fn is_local(&self) -> bool {
        true
    }
}

/// A file held in memory (the query engine's warm-up makes one).
impl Blob for bytes::Bytes {
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.len() as u64)
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let start = usize::try_from(offset)
            .unwrap_or(usize::MAX)
            .min(self.len());
        let n = buf.len().min(self.len() - start);
        buf[..n].copy_from_slice(&self[start..start + n]);
        Ok(n)
    }
}

/// Reads exactly `buf.len()` bytes at `offset`.
pub(crate) fn read_exact_at(blob: &dyn Blob, buf: &mut [u8], offset: u64) -> std::io::Result<()> {
    let got = blob.read_at(buf, offset)?;
    if got < buf.len() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::UnexpectedEof,
            format!("expected {} bytes at {offset}, found {got}", buf.len()),
        ));
    }
    Ok(())
}

/// `Read` over a blob from its start.
#[derive(Debug)]
pub(crate) struct BlobReader {
    blob: Arc<dyn Blob>,
    pos: u64,
}

impl BlobReader {
    pub(crate) fn new(blob: Arc<dyn Blob>) -> Self {
        Self::at(blob, 0)
    }

    /// Reading from `pos` on.
    pub(crate) fn at(blob: Arc<dyn Blob>, pos: u64) -> Self {
        Self { blob, pos }
    }
}

impl Read for BlobReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.blob.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}
