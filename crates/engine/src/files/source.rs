//! What the file tools read: a local file, or an object in a bucket root read by ranges. Both
//! are read by position, so handles share no cursor and clones read independently.

use std::fs::File;
use std::io::{Read, Seek, SeekFrom};
use std::time::SystemTime;

use offload_query::parquet::{Bytes, ChunkReader, Length};

use crate::objects::Object;

#[derive(Debug)]
pub enum Source {
    Local(File),
    Object(Object),
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
    pub fn len(&self) -> std::io::Result<u64> {
        match self {
            Self::Local(f) => Ok(f.metadata()?.len()),
            Self::Object(o) => Ok(o.len()),
        }
    }

    pub fn is_empty(&self) -> std::io::Result<bool> {
        Ok(self.len()? == 0)
    }

    pub fn is_dir(&self) -> std::io::Result<bool> {
        match self {
            Self::Local(f) => Ok(f.metadata()?.is_dir()),
            Self::Object(_) => Ok(false),
        }
    }

    pub fn version(&self) -> std::io::Result<Version> {
        Ok(match self {
            Self::Local(f) => Version {
                modified: f.metadata()?.modified().ok(),
                tag: None,
            },
            Self::Object(o) => Version {
                modified: Some(o.modified()),
                tag: o.e_tag().map(str::to_owned),
            },
        })
    }

    pub fn try_clone(&self) -> std::io::Result<Self> {
        Ok(match self {
            Self::Local(f) => Self::Local(f.try_clone()?),
            Self::Object(o) => Self::Object(o.clone()),
        })
    }

    /// Fills as much of `buf` as the source has from `offset`; returns how many bytes were read.
    pub fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        match self {
            Self::Local(f) => super::read_at(f, buf, offset),
            Self::Object(o) => o.read_at(buf, offset),
        }
    }

    /// A reader from the start (for parsers that want `Read + Seek`).
    pub fn reader(&self) -> Cursor<'_> {
        Cursor {
            source: self,
            pos: 0,
        }
    }
}

/// `Read + Seek` over a [`Source`] by positional reads.
#[derive(Debug)]
pub struct Cursor<'a> {
    source: &'a Source,
    pos: u64,
}

impl Read for Cursor<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
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
