//! What the file tools read: a local file, an object in a bucket root read by ranges, or either
//! compressed (read as what it holds, see `compressed`). All are read by position, so handles
//! share no cursor and clones read independently.

pub mod compressed;

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::sync::Arc;
use std::time::SystemTime;

use offload_query::parquet::{Bytes, ChunkReader, Length};

use compressed::{Codec, Compressed};

#[derive(Debug)]
pub enum Source {
    Local(File),
    /// Bytes elsewhere, read by ranges (an object in a bucket).
    Remote(Arc<dyn Remote>),
    Compressed(Arc<Compressed>),
}

/// What is read by position from somewhere other than a local file: an object in a bucket,
/// fetched by ranges. Its version is fixed when it is opened, so reads agree with each other.
pub trait Remote: std::fmt::Debug + Send + Sync {
    /// Its size in bytes.
    fn size(&self) -> u64;
    /// Fills as much of `buf` as there is from `offset`; returns how many bytes that is.
    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize>;
    fn version(&self) -> Version;
}

impl From<File> for Source {
    fn from(file: File) -> Self {
        Self::Local(file)
    }
}

/// What tells one version of a source from another (for caches).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Version {
    pub modified: Option<SystemTime>,
    /// An object's ETag.
    pub tag: Option<String>,
}

impl Source {
    /// `self` read as what it holds when `path` names a compressed file (`.gz`, `.zst`, `.bz2`,
    /// `.xz`).
    pub fn decompressed_by_name(self, path: &std::path::Path) -> Self {
        match Codec::of_path(path) {
            Some(codec) => Self::Compressed(Arc::new(Compressed::new(self, codec))),
            None => self,
        }
    }

    /// The same source with its decompressed streams capped at `cap` bytes (unchanged when it
    /// is not compressed).
    pub fn capped(&self, cap: u64) -> std::io::Result<Self> {
        match self {
            Self::Compressed(c) => Ok(Self::Compressed(Arc::new(c.capped(cap)?))),
            other => other.try_clone(),
        }
    }

    /// The compression it is read through, if any.
    pub fn codec(&self) -> Option<Codec> {
        match self {
            Self::Compressed(c) => Some(c.codec()),
            _ => None,
        }
    }

    /// The size of what it holds. A compressed source is decompressed whole for it.
    pub fn len(&self) -> std::io::Result<u64> {
        match self {
            Self::Local(f) => Ok(f.metadata()?.len()),
            Self::Remote(o) => Ok(o.size()),
            Self::Compressed(c) => Ok(c.plain()?.metadata()?.len()),
        }
    }

    pub fn is_empty(&self) -> std::io::Result<bool> {
        Ok(self.len()? == 0)
    }

    pub fn is_dir(&self) -> std::io::Result<bool> {
        match self {
            Self::Local(f) => Ok(f.metadata()?.is_dir()),
            Self::Remote(_) => Ok(false),
            Self::Compressed(c) => c.inner().is_dir(),
        }
    }

    pub fn version(&self) -> std::io::Result<Version> {
        Ok(match self {
            Self::Local(f) => Version {
                modified: f.metadata()?.modified().ok(),
                tag: None,
            },
            Self::Remote(o) => o.version(),
            Self::Compressed(c) => c.inner().version()?,
        })
    }

    pub fn try_clone(&self) -> std::io::Result<Self> {
        Ok(match self {
            Self::Local(f) => Self::Local(f.try_clone()?),
            Self::Remote(o) => Self::Remote(o.clone()),
            Self::Compressed(c) => Self::Compressed(c.clone()),
        })
    }

    /// An owned reader from the start (a compressed source's raw bytes are read through it).
    pub fn owned_reader(&self) -> std::io::Result<OwnedCursor> {
        Ok(OwnedCursor {
            source: self.try_clone()?,
            pos: 0,
        })
    }

    /// Fills as much of `buf` as the source has from `offset`; returns how many bytes were read.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        match self {
            Self::Local(f) => super::read_at(f, buf, offset),
            Self::Remote(o) => o.read_at(buf, offset),
            Self::Compressed(c) => super::read_at(c.plain()?, buf, offset),
        }
    }

    /// A reader from the start (for parsers that want `Read + Seek`). A compressed source is
    /// decompressed as it is read (a seek back starts again; a seek from the end decompresses
    /// it whole).
    pub fn reader(&self) -> Cursor<'_> {
        Cursor {
            source: self,
            pos: 0,
            stream: None,
        }
    }
}

/// `Read + Seek` over a [`Source`] by positional reads (or, for a compressed source not yet
/// decompressed whole, over a stream of it).
pub struct Cursor<'a> {
    source: &'a Source,
    pos: u64,
    /// A decompressing stream and how far it has read.
    stream: Option<(Box<dyn Read + Send>, u64)>,
}

impl std::fmt::Debug for Cursor<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Cursor")
            .field("source", self.source)
            .field("pos", &self.pos)
            .finish()
    }
}

impl Read for Cursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if let Source::Compressed(c) = self.source
            && !c.is_plain()
        {
            if self.stream.as_ref().is_none_or(|(_, at)| *at > self.pos) {
                self.stream = Some((c.stream()?, 0));
            }
            let (stream, at) = self.stream.as_mut().expect("started above");
            if *at < self.pos {
                let skipped = std::io::copy(
                    &mut stream.as_mut().take(self.pos - *at),
                    &mut std::io::sink(),
                )?;
                *at += skipped;
                if *at < self.pos {
                    return Ok(0); // past the end
                }
            }
            let n = stream.read(buf)?;
            *at += n as u64;
            self.pos += n as u64;
            return Ok(n);
        }
        let n = self.source.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl Seek for Cursor<'_> {
    fn seek(&mut self, to: SeekFrom) -> std::io::Result<u64> {
        let target = match to {
            SeekFrom::Start(n) => Some(n),
            SeekFrom::End(d) => self.source.len()?.checked_add_signed(d),
            SeekFrom::Current(d) => self.pos.checked_add_signed(d),
        };
        self.pos = target.ok_or_else(|| {
            std::io::Error::new(std::io::ErrorKind::InvalidInput, "seek before the start")
        })?;
        Ok(self.pos)
    }
}

/// An owned reader from an offset, for Parquet's `ChunkReader`.
#[derive(Debug)]
pub struct OwnedCursor {
    source: Source,
    pos: u64,
}

impl Read for OwnedCursor {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.source.read_at(buf, self.pos)?;
        self.pos += n as u64;
        Ok(n)
    }
}

impl offload_query::Blob for Source {
    fn size(&self) -> std::io::Result<u64> {
        Source::len(self)
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        Source::read_at(self, buf, offset)
    }

    fn modified(&self) -> Option<SystemTime> {
        self.version().ok()?.modified
    }

    fn read_ready(&self, buf: &mut [u8], offset: u64) -> Option<usize> {
        match self {
            Source::Local(file) => file.read_ready(buf, offset),
            _ => None,
        }
    }

    fn is_local(&self) -> bool {
        matches!(self, Source::Local(_))
    }
}

impl Length for Source {
    fn len(&self) -> u64 {
        Source::len(self).unwrap_or(0)
    }
}

impl ChunkReader for Source {
    type T = OwnedCursor;

    fn get_read(&self, start: u64) -> offload_query::parquet::ParquetResult<OwnedCursor> {
        Ok(OwnedCursor {
            source: self.try_clone()?,
            pos: start,
        })
    }

    fn get_bytes(&self, start: u64, length: usize) -> offload_query::parquet::ParquetResult<Bytes> {
        let mut buf = vec![0; length];
        let got = self.read_at(&mut buf, start)?;
        if got < length {
            return Err(std::io::Error::new(
                std::io::ErrorKind::UnexpectedEof,
                format!("expected {length} bytes at {start}, found {got}"),
            )
            .into());
        }
        Ok(buf.into())
    }
}
