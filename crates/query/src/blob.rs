//! What a query reads: a file the engine opened, read by position. A local file is one; the
//! engine hands over its own kinds too (objects in bucket roots, read with ranged requests).
//! Reads block: the query runs them on blocking threads, unless the bytes are at hand.

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
    /// Fills what it can of `buf` from `offset` without waiting for a disk or a network (what
    /// the page cache holds, on Linux); `None` when it cannot tell, or would wait.
    fn read_ready(&self, _buf: &mut [u8], _offset: u64) -> Option<usize> {
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

    #[cfg(target_os = "linux")]
    fn read_ready(&self, buf: &mut [u8], offset: u64) -> Option<usize> {
        use rustix::io::{IoSliceMut, ReadWriteFlags, preadv2};
        preadv2(
            self,
            &mut [IoSliceMut::new(buf)],
            offset,
            ReadWriteFlags::NOWAIT,
        )
        .ok()
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

    fn read_ready(&self, buf: &mut [u8], offset: u64) -> Option<usize> {
        self.read_at(buf, offset).ok()
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

#[cfg(test)]
mod tests {
    use super::*;

    /// A file's bytes in the page cache are read without a blocking thread, exactly; what
    /// would wait (a pipe with nothing in it) is not read at all, and nothing blocks.
    #[cfg(target_os = "linux")]
    #[test]
    fn only_bytes_at_hand_are_read_at_once() {
        let data: Vec<u8> = (0..300_000u32).map(|i| (i % 251) as u8).collect();
        let mut file = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut file, &data).unwrap();
        let mut buf = vec![0u8; 100_000];
        assert_eq!(file.read_ready(&mut buf, 150_000), Some(100_000));
        assert_eq!(buf, data[150_000..250_000]);
        assert_eq!(
            file.read_ready(&mut buf, 250_000),
            Some(50_000),
            "to the end"
        );

        let (reader, _writer) = std::io::pipe().unwrap();
        let pipe = File::from(std::os::fd::OwnedFd::from(reader));
        let started = std::time::Instant::now();
        assert_eq!(pipe.read_ready(&mut buf, 0), None);
        assert!(started.elapsed() < std::time::Duration::from_secs(1));

        let bytes = bytes::Bytes::from(data.clone());
        assert_eq!(bytes.read_ready(&mut buf, 0), Some(100_000));
        assert_eq!(buf, data[..100_000]);
    }
}
