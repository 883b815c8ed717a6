//! Compressed files (`.gz`, `.zst`, `.bz2`, `.xz`, also as `data.csv.gz`), read as what they
//! hold. Reading from the start (parsers, batch mode) decompresses as it goes and never holds
//! the file; reading by position (a tail, a deep page, a schema's row count, SQL) needs the
//! plain bytes, so the first such read decompresses the whole stream into an unnamed temporary
//! file that the source keeps while it lives. Every decompressed stream is capped: a bomb ends
//! as an error at the cap, not as a full disk.

use std::borrow::Cow;
use std::fs::File;
use std::io::{BufReader, Read};
use std::path::Path;
use std::sync::{Arc, Mutex, OnceLock};

use super::Source;

/// The most a compressed file may decompress to when it is read by position (a temporary file
/// of that size is written). Sequential reads have their callers' own limits.
pub const MAX_PLAIN_BYTES: u64 = 8 << 30;

/// What the error of a stream that went past its cap says.
pub const OVER_CAP: &str = "decompresses to more than";

/// A compression format, known by its extension.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Codec {
    Gzip,
    Zstd,
    Bzip2,
    Xz,
}

impl Codec {
    /// The codec `path`'s last extension names.
    pub fn of_path(path: &Path) -> Option<Self> {
        let ext = path.extension()?.to_str()?.to_ascii_lowercase();
        Some(match ext.as_str() {
            "gz" | "gzip" => Self::Gzip,
            "zst" | "zstd" => Self::Zstd,
            "bz2" => Self::Bzip2,
            "xz" => Self::Xz,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            Self::Gzip => "gzip",
            Self::Zstd => "zstd",
            Self::Bzip2 => "bzip2",
            Self::Xz => "xz",
        }
    }

    /// The extension a file compressed so ends with.
    pub fn extension(self) -> &'static str {
        match self {
            Self::Gzip => "gz",
            Self::Zstd => "zst",
            Self::Bzip2 => "bz2",
            Self::Xz => "xz",
        }
    }

    pub fn mime_type(self) -> &'static str {
        match self {
            Self::Gzip => "application/gzip",
            Self::Zstd => "application/zstd",
            Self::Bzip2 => "application/x-bzip2",
            Self::Xz => "application/x-xz",
        }
    }

    /// `name` split into what it holds and how it is compressed (`csv.gz` → `csv`, gzip).
    pub fn split(name: &str) -> (&str, Option<Self>) {
        match name.rsplit_once('.') {
            Some((inner, ext)) => match Self::of_path(Path::new(&format!("x.{ext}"))) {
                Some(codec) => (inner, Some(codec)),
                None => (name, None),
            },
            None => (name, None),
        }
    }

    /// A reader of what `compressed` holds.
    fn decoder(
        self,
        compressed: impl Read + Send + 'static,
    ) -> std::io::Result<Box<dyn Read + Send>> {
        let buffered = BufReader::with_capacity(256 * 1024, compressed);
        Ok(match self {
            Self::Gzip => Box::new(flate2::read::MultiGzDecoder::new(buffered)),
            Self::Zstd => Box::new(zstd::stream::read::Decoder::with_buffer(buffered)?),
            Self::Bzip2 => Box::new(bzip2::read::MultiBzDecoder::new(buffered)),
            Self::Xz => Box::new(XzReader::start(buffered)?),
        })
    }
}

/// Writes what `fill` writes to `out`, compressed with `codec` when there is one (gzip, zstd
/// and bzip2; xz is read but not written).
pub fn write_packed<T>(
    codec: Option<Codec>,
    out: &mut (dyn std::io::Write + Send),
    fill: impl FnOnce(&mut (dyn std::io::Write + Send)) -> std::io::Result<T>,
) -> std::io::Result<T> {
    match codec {
        None => fill(out),
        Some(Codec::Gzip) => {
            let mut packed = flate2::write::GzEncoder::new(out, flate2::Compression::default());
            let done = fill(&mut packed)?;
            packed.finish()?;
            Ok(done)
        }
        Some(Codec::Zstd) => {
            let mut packed = zstd::stream::write::Encoder::new(out, 3)?;
            let done = fill(&mut packed)?;
            packed.finish()?;
            Ok(done)
        }
        Some(Codec::Bzip2) => {
            let mut packed = bzip2::write::BzEncoder::new(out, bzip2::Compression::default());
            let done = fill(&mut packed)?;
            packed.finish()?;
            Ok(done)
        }
        Some(Codec::Xz) => Err(std::io::Error::new(
            std::io::ErrorKind::Unsupported,
            "xz is read but not written; store as .gz, .zst or .bz2",
        )),
    }
}

/// `path` without its compression extension (`data.csv.gz` → `data.csv`): the name that says
/// what the file holds.
pub fn plain_name(path: &Path) -> Cow<'_, Path> {
    match Codec::of_path(path) {
        Some(_) => Cow::Owned(path.with_extension("")),
        None => Cow::Borrowed(path),
    }
}

/// A compressed source, read as what it holds.
pub struct Compressed {
    inner: Source,
    codec: Codec,
    /// The most a stream of it may decompress to.
    cap: u64,
    /// The whole plain content, once something read by position.
    plain: OnceLock<Result<File, String>>,
}

impl std::fmt::Debug for Compressed {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Compressed")
            .field("codec", &self.codec)
            .field("cap", &self.cap)
            .finish()
    }
}

impl Compressed {
    pub fn new(inner: Source, codec: Codec) -> Self {
        Self {
            inner,
            codec,
            cap: MAX_PLAIN_BYTES,
            plain: OnceLock::new(),
        }
    }

    /// The same file, its streams capped at `cap` bytes (a caller's input limit).
    pub fn capped(&self, cap: u64) -> std::io::Result<Self> {
        Ok(Self {
            inner: self.inner.try_clone()?,
            codec: self.codec,
            cap: cap.min(MAX_PLAIN_BYTES),
            plain: OnceLock::new(),
        })
    }

    pub fn codec(&self) -> Codec {
        self.codec
    }

    pub fn inner(&self) -> &Source {
        &self.inner
    }

    /// Whether the plain content has been written out (reads by position are cheap then).
    pub fn is_plain(&self) -> bool {
        self.plain.get().is_some_and(|p| p.is_ok())
    }

    /// A fresh stream of the plain content from its start.
    pub fn stream(&self) -> std::io::Result<Box<dyn Read + Send>> {
        let raw = self.inner.owned_reader()?;
        Ok(Box::new(Capped {
            inner: self.codec.decoder(raw)?,
            left: self.cap,
            cap: self.cap,
        }))
    }

    /// The plain content, written out on first use.
    pub fn plain(&self) -> std::io::Result<&File> {
        let plain = self.plain.get_or_init(|| {
            let mut out = tempfile::tempfile().map_err(|e| e.to_string())?;
            let mut stream = self.stream().map_err(|e| e.to_string())?;
            std::io::copy(&mut stream, &mut out).map_err(|e| e.to_string())?;
            Ok(out)
        });
        plain
            .as_ref()
            .map_err(|e| std::io::Error::new(std::io::ErrorKind::InvalidData, e.clone()))
    }
}

/// A stream that fails once it has given `cap` bytes and would give more.
struct Capped {
    inner: Box<dyn Read + Send>,
    left: u64,
    cap: u64,
}

impl Read for Capped {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        if self.left == 0 {
            // At the cap: one more byte means the content is bigger.
            let mut probe = [0u8; 1];
            return match self.inner.read(&mut probe)? {
                0 => Ok(0),
                _ => Err(std::io::Error::new(
                    std::io::ErrorKind::InvalidData,
                    format!(
                        "it {OVER_CAP} {} (limits.maxInputBytes, or {} for a file read by position)",
                        crate::units::human_bytes(self.cap),
                        crate::units::human_bytes(MAX_PLAIN_BYTES)
                    ),
                )),
            };
        }
        let want = buf
            .len()
            .min(usize::try_from(self.left).unwrap_or(usize::MAX));
        let n = self.inner.read(&mut buf[..want])?;
        self.left -= n as u64;
        Ok(n)
    }
}

/// xz through `lzma-rs` (pure Rust), which decodes into a writer: a thread decodes into a pipe
/// this reads from. A reader dropped early closes the pipe and the thread ends.
struct XzReader {
    pipe: std::io::PipeReader,
    failed: Arc<Mutex<Option<String>>>,
    thread: Option<std::thread::JoinHandle<()>>,
}

impl XzReader {
    fn start(mut compressed: impl std::io::BufRead + Send + 'static) -> std::io::Result<Self> {
        let (pipe, mut writer) = std::io::pipe()?;
        let failed = Arc::new(Mutex::new(None));
        let noted = failed.clone();
        let thread = std::thread::Builder::new()
            .name("offload-xz".into())
            .spawn(move || {
                if let Err(e) = lzma_rs::xz_decompress(&mut compressed, &mut writer) {
                    let broken = matches!(&e, lzma_rs::error::Error::IoError(io) if io.kind() == std::io::ErrorKind::BrokenPipe);
                    if !broken {
                        *noted.lock().unwrap_or_else(|p| p.into_inner()) =
                            Some(format!("not valid xz: {e}"));
                    }
                }
            })?;
        Ok(Self {
            pipe,
            failed,
            thread: Some(thread),
        })
    }
}

impl Read for XzReader {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.pipe.read(buf)?;
        if n == 0 && !buf.is_empty() {
            // The end: the decoder's own verdict decides whether it is a clean one.
            if let Some(thread) = self.thread.take() {
                let _ = thread.join();
            }
            if let Some(e) = self.failed.lock().unwrap_or_else(|p| p.into_inner()).take() {
                return Err(std::io::Error::new(std::io::ErrorKind::InvalidData, e));
            }
        }
        Ok(n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    const TEXT: &str = "id,name\n1,a\n2,b\n";

    fn compress(codec: Codec, bytes: &[u8]) -> Vec<u8> {
        match codec {
            Codec::Gzip => {
                let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
                e.write_all(bytes).unwrap();
                e.finish().unwrap()
            }
            Codec::Zstd => zstd::encode_all(bytes, 1).unwrap(),
            Codec::Bzip2 => {
                let mut e = bzip2::write::BzEncoder::new(Vec::new(), bzip2::Compression::fast());
                e.write_all(bytes).unwrap();
                e.finish().unwrap()
            }
            Codec::Xz => {
                let mut out = Vec::new();
                lzma_rs::xz_compress(&mut std::io::Cursor::new(bytes), &mut out).unwrap();
                out
            }
        }
    }

    fn source(bytes: Vec<u8>) -> Source {
        let mut f = tempfile::tempfile().unwrap();
        f.write_all(&bytes).unwrap();
        Source::Local(f)
    }

    #[test]
    fn each_codec_reads_as_what_it_holds_by_stream_and_by_position() {
        for codec in [Codec::Gzip, Codec::Zstd, Codec::Bzip2, Codec::Xz] {
            let c = Compressed::new(source(compress(codec, TEXT.as_bytes())), codec);
            let mut read = String::new();
            c.stream().unwrap().read_to_string(&mut read).unwrap();
            assert_eq!(read, TEXT, "{codec:?}");
            assert!(!c.is_plain());
            let mut tail = [0u8; 4];
            let n =
                super::super::super::read_at(c.plain().unwrap(), &mut tail, TEXT.len() as u64 - 4)
                    .unwrap();
            assert_eq!(&tail[..n], b"2,b\n", "{codec:?}");
            assert!(c.is_plain());
        }
    }

    #[test]
    fn names_say_what_a_file_holds() {
        assert_eq!(
            plain_name(Path::new("/d/data.csv.gz")),
            Path::new("/d/data.csv")
        );
        assert_eq!(
            plain_name(Path::new("rows.jsonl.zst")),
            Path::new("rows.jsonl")
        );
        assert_eq!(plain_name(Path::new("a.csv")), Path::new("a.csv"));
        assert_eq!(Codec::of_path(Path::new("x.TAR.XZ")), Some(Codec::Xz));
        assert_eq!(Codec::of_path(Path::new("x.bz2")), Some(Codec::Bzip2));
        assert_eq!(Codec::of_path(Path::new("x.zip")), None);
    }

    #[test]
    fn a_bomb_stops_at_the_cap_and_garbage_is_an_error() {
        // 64 MiB of zeros compress to a few KB.
        let zeros = vec![0u8; 64 << 20];
        for codec in [Codec::Gzip, Codec::Zstd, Codec::Bzip2] {
            let bomb = compress(codec, &zeros);
            assert!(bomb.len() < 1 << 20, "{codec:?}: {}", bomb.len());
            let c = Compressed::new(source(bomb), codec)
                .capped(1 << 20)
                .unwrap();
            let e = std::io::copy(&mut c.stream().unwrap(), &mut std::io::sink()).unwrap_err();
            assert!(
                e.to_string().contains("decompresses to more than 1.0 MB"),
                "{codec:?}: {e}"
            );
        }
        for codec in [Codec::Gzip, Codec::Zstd, Codec::Bzip2, Codec::Xz] {
            let c = Compressed::new(source(b"this is not compressed at all".to_vec()), codec);
            let read = c
                .stream()
                .and_then(|mut s| std::io::copy(&mut s, &mut std::io::sink()));
            assert!(read.is_err(), "{codec:?} accepted garbage");
            assert!(c.plain().is_err(), "{codec:?}");
        }
    }
}
