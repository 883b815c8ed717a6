//! Reading lines of a text file of any size: pages from a line offset, tails, and slices from a
//! byte offset (to continue inside one very long line). Head and tail cost what they return; a
//! deep offset is found through the cached [`LineIndex`]. Every answer fits a byte budget; a line
//! that does not is cut with a marker that says how to continue.

use std::path::Path;
use std::sync::{Arc, Mutex};

use super::encoding::TextEncoding;
use super::index::{IndexCache, IndexKey, LineIndex};
use super::newline::Newline;
use super::{FileError, Observer, Source};

/// Files up to this size are counted whole whenever a total would help (it costs < 5 ms).
const COUNT_SMALL: u64 = 16 << 20;
/// A cut line is scanned at most this far to say how long it is.
const MEASURE_LIMIT: u64 = 64 << 20;
/// A page stops when less room than this is left.
const MIN_ROOM: usize = 128;
/// Bytes read per step when walking forwards or backwards.
const STEP: usize = 64 * 1024;

/// An open text file with its encoding and line ends.
pub struct TextFile {
    file: Source,
    pub size: u64,
    pub encoding: TextEncoding,
    pub newline: Newline,
    index: Arc<Mutex<LineIndex>>,
}

/// How much a page may hold.
#[derive(Debug, Clone, Copy)]
pub struct Budget {
    /// Bytes of text in the whole answer.
    pub total: usize,
    /// Bytes of one line before it is cut with a marker.
    pub line: usize,
}

impl Budget {
    pub fn of(total: usize) -> Self {
        Self { total, line: total }
    }
}

/// Some lines of a file, and where to go on.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Page {
    /// The lines, each without its line end, joined with `\n`.
    pub text: String,
    /// 0-based number of the first line delivered, when known (a tail of a large file that was
    /// never counted does not know it).
    pub first_line: Option<u64>,
    /// Lines delivered (a cut line counts).
    pub lines: u64,
    /// Lines in the file, when known.
    pub total_lines: Option<u64>,
    /// The line offset to read next; `None` at the end of the file.
    pub next_offset: Option<u64>,
    /// Set when a line was cut: the byte offset to continue reading it from.
    pub next_byte_offset: Option<u64>,
    /// Why the page ends before `length` lines or the end: `budget` or `long_line`.
    pub cut: Option<&'static str>,
}

/// One raw line as the cursor found it.
struct RawLine {
    start: u64,
    /// The first bytes of the line (at most the cap asked for), line end excluded.
    kept: Vec<u8>,
    /// The line's length in bytes, or a lower bound when `measured` is false.
    len: u64,
    measured: bool,
}

impl TextFile {
    /// `file` (already opened and checked) in `encoding`; `sample` is its first bytes.
    pub fn new(
        file: Source,
        path: &Path,
        encoding: TextEncoding,
        sample: &[u8],
        cache: &IndexCache,
    ) -> Result<Self, FileError> {
        let size = file.len()?;
        let body = sample.get(encoding.bom_len as usize..).unwrap_or_default();
        let newline = Newline::detect(encoding, body);
        let index = cache.get(IndexKey {
            path: path.to_owned(),
            size,
            version: file.version()?,
            data_start: encoding.bom_len,
            newline,
        });
        Ok(Self {
            file,
            size,
            encoding,
            newline,
            index,
        })
    }

    fn data_start(&self) -> u64 {
        self.encoding.bom_len.min(self.size)
    }

    fn index(&self) -> std::sync::MutexGuard<'_, LineIndex> {
        self.index.lock().unwrap_or_else(|e| e.into_inner())
    }

    /// Whether the file's last code unit is a line end (which ends the last line rather than
    /// starting a new one).
    fn ends_with_newline(&self) -> Result<bool, FileError> {
        let w = self.newline.width() as u64;
        if self.size < self.data_start() + w {
            return Ok(false);
        }
        let mut last = [0u8; 2];
        let unit = &mut last[..w as usize];
        self.file.read_at(unit, self.size - w)?;
        Ok(self.newline.is_at(unit, 0))
    }

    fn lines_from_ends(&self, ends: u64) -> Result<u64, FileError> {
        let trailing = self.size > self.data_start() && !self.ends_with_newline()?;
        Ok(ends + u64::from(trailing))
    }

    /// Lines in the file when already known (or cheap: small files are counted).
    pub fn known_total(&self) -> Result<Option<u64>, FileError> {
        let mut index = self.index();
        if !index.is_complete() && self.size <= COUNT_SMALL {
            index.complete(&self.file, &super::Quiet)?;
        }
        match index.total_line_ends() {
            Some(ends) => Ok(Some(self.lines_from_ends(ends)?)),
            None => Ok(None),
        }
    }

    /// Counts every line (SIMD, block by block; the index is kept for later deep reads).
    pub fn count_lines(&self, observer: &dyn Observer) -> Result<u64, FileError> {
        let ends = self.index().complete(&self.file, observer)?;
        self.lines_from_ends(ends)
    }

    /// Lines in the file: exact when the file is at most `exact_limit` bytes (or already
    /// counted); otherwise estimated from the first `exact_limit` bytes. Returns `(lines, exact)`.
    pub fn line_count(
        &self,
        exact_limit: u64,
        observer: &dyn Observer,
    ) -> Result<(u64, bool), FileError> {
        if self.size <= exact_limit || self.index().is_complete() {
            return Ok((self.count_lines(observer)?, true));
        }
        let (scanned, ends) = self
            .index()
            .count_prefix(&self.file, exact_limit, observer)?;
        let per_byte = ends as f64 / scanned.max(1) as f64;
        let estimate = (per_byte * (self.size - self.data_start()) as f64).round() as u64;
        Ok((estimate.max(ends), false))
    }

    /// Lines `[offset, offset + length)`.
    pub fn page(
        &self,
        offset: u64,
        length: u64,
        budget: Budget,
        observer: &dyn Observer,
    ) -> Result<Page, FileError> {
        let start = if offset == 0 {
            Some(self.data_start())
        } else {
            self.index()
                .after_line_end(&self.file, offset, observer)?
                .filter(|&at| at < self.size)
        };
        let Some(start) = start else {
            // Beyond the end: say how many lines there are.
            let total = self.count_lines(observer)?;
            return Ok(Page {
                first_line: Some(offset),
                total_lines: Some(total),
                ..Page::default()
            });
        };
        let mut cursor = Cursor::new(self, start);
        let mut page = Page {
            first_line: Some(offset),
            ..Page::default()
        };
        let mut out = String::new();
        while page.lines < length {
            let room = budget.total.saturating_sub(out.len());
            if room < MIN_ROOM && page.lines > 0 {
                page.cut = Some("budget");
                page.next_offset = Some(offset + page.lines);
                break;
            }
            let cap = room.min(budget.line);
            let Some(line) = cursor.next_line(cap)? else {
                break;
            };
            if line.measured && line.len as usize <= cap {
                if page.lines > 0 {
                    out.push('\n');
                }
                page.lines += 1;
                out.push_str(&self.decode_line(&line.kept));
                continue;
            }
            if page.lines > 0 && budget.line >= room {
                // Only the full answer stops this line: it starts the next page.
                page.cut = Some("budget");
                page.next_offset = Some(offset + page.lines);
                break;
            }
            // A line longer than allowed: show its start and say how to go on inside it.
            if page.lines > 0 {
                out.push('\n');
            }
            page.lines += 1;
            let kept = self.cut_point(&line.kept);
            out.push_str(&self.decode_line(&line.kept[..kept]));
            let next_byte = line.start + kept as u64;
            out.push_str(&cut_marker(
                line.len - kept as u64,
                line.measured,
                next_byte,
            ));
            if budget.line < budget.total && line.measured {
                // Summaries cut each long line and go on with the next.
                continue;
            }
            page.cut = Some("long_line");
            page.next_byte_offset = Some(next_byte);
            page.next_offset = line.measured.then_some(offset + page.lines);
            break;
        }
        if page.cut.is_none() {
            if cursor.at_end() {
                page.total_lines = Some(offset + page.lines);
            } else {
                page.next_offset = Some(offset + page.lines);
            }
        }
        if page.total_lines.is_none() {
            page.total_lines = self.known_total()?;
        }
        if page
            .total_lines
            .is_some_and(|t| page.next_offset == Some(t))
        {
            page.next_offset = None;
        }
        page.text = out;
        Ok(page)
    }

    /// The last `n` lines. Reads backwards from the end in blocks and decodes once.
    pub fn tail(&self, n: u64, budget: Budget) -> Result<Page, FileError> {
        let w = self.newline.width() as u64;
        let data_start = self.data_start();
        let mut end = self.size;
        if self.ends_with_newline()? {
            end -= w;
        }
        // Collect blocks backwards until `n` line ends are behind us, or the budget is spent.
        let limit = (budget.total as u64).saturating_mul(2).max(STEP as u64);
        let mut blocks: Vec<Vec<u8>> = Vec::new();
        let mut pos = end;
        let mut seen = 0u64;
        let mut start = data_start;
        let mut partial = false;
        while pos > data_start && n > 0 {
            let mut from = pos.saturating_sub(STEP as u64).max(data_start);
            from -= (from - data_start) % w;
            let mut block = vec![0; (pos - from) as usize];
            let got = self.file.read_at(&mut block, from)?;
            block.truncate(got);
            match self.newline.rfind_nth(&block, n - seen) {
                Ok(at) => {
                    start = from + at as u64 + w;
                    block.drain(..at + w as usize);
                    blocks.push(block);
                    pos = start;
                    break;
                }
                Err(found) => seen += found,
            }
            blocks.push(block);
            pos = from;
            if end - pos > limit && pos > data_start {
                partial = true;
                start = pos;
                break;
            }
        }
        if pos <= data_start {
            start = data_start;
        }
        let mut raw = Vec::with_capacity((end - start) as usize);
        for block in blocks.iter().rev() {
            raw.extend_from_slice(block);
        }
        let mut skipped = 0;
        if partial {
            skipped = self.char_start(&raw);
        }
        let text = self.encoding.decode(&raw[skipped..]);
        let lines: Vec<&str> = if self.size <= data_start || n == 0 {
            Vec::new()
        } else {
            self.split_lines(&text)
        };
        // Keep the newest lines that fit the budget; cut the oldest kept one if it alone is
        // too long.
        let mut page = Page::default();
        let mut used = 0usize;
        let mut keep = 0usize;
        for line in lines.iter().rev() {
            if used + line.len() + 1 > budget.total && keep > 0 {
                break;
            }
            used += line.len() + 1;
            keep += 1;
        }
        let first_kept = lines.len() - keep;
        let dropped_before = first_kept > 0 || partial;
        let mut out: Vec<String> = lines[first_kept..]
            .iter()
            .map(|s| (*s).to_owned())
            .collect();
        if let Some(first) = out.first_mut() {
            let too_long = first.len() > budget.total;
            if too_long || (partial && first_kept == 0) {
                let keep_from = if too_long {
                    let mut at = first.len() - budget.total;
                    while !first.is_char_boundary(at) {
                        at += 1;
                    }
                    at
                } else {
                    0
                };
                *first = format!(
                    "[... start of this line cut: read it from a line offset or a byte offset before {}] {}",
                    start + skipped as u64,
                    &first[keep_from..]
                );
                page.cut = Some("long_line");
            } else if dropped_before {
                page.cut = Some("budget");
            }
        }
        page.lines = out.len() as u64;
        page.text = out.join("\n");
        page.total_lines = self.known_total()?;
        page.first_line = page.total_lines.map(|t| t - page.lines);
        Ok(page)
    }

    /// Up to `budget` bytes from byte `at`, on character boundaries: for reading inside one very
    /// long line.
    pub fn slice(&self, at: u64, budget: usize) -> Result<Page, FileError> {
        let w = self.newline.width() as u64;
        let data_start = self.data_start();
        let mut at = at.max(data_start);
        at -= (at - data_start) % w;
        if at >= self.size {
            return Ok(Page {
                total_lines: self.known_total()?,
                ..Page::default()
            });
        }
        let want = (budget as u64).min(self.size - at) as usize;
        let mut raw = vec![0; want];
        let got = self.file.read_at(&mut raw, at)?;
        raw.truncate(got);
        let skip = self.char_start(&raw);
        let mut end = raw.len();
        if at + end as u64 != self.size {
            end = skip + self.cut_point(&raw[skip..]);
        }
        let text = self.encoding.decode(&raw[skip..end]);
        let from = at + skip as u64;
        let to = at + end as u64;
        let line = self.index().line_ends_before(&self.file, from)?;
        Ok(Page {
            lines: u64::from(!text.is_empty()),
            first_line: line,
            text,
            total_lines: self.known_total()?,
            next_byte_offset: (to < self.size).then_some(to),
            cut: (to < self.size).then_some("budget"),
            next_offset: None,
        })
    }

    /// Decodes one line's bytes, without a `\r` left over from a CRLF line end.
    fn decode_line(&self, bytes: &[u8]) -> String {
        let mut text = self.encoding.decode(bytes);
        if self.newline.byte == b'\n' && text.ends_with('\r') {
            text.pop();
        }
        text
    }

    /// Splits decoded text on the file's line end (dropping CRs of CRLF line ends).
    fn split_lines<'t>(&self, text: &'t str) -> Vec<&'t str> {
        let sep = self.newline.byte as char;
        text.split(sep)
            .map(|l| {
                if sep == '\n' {
                    l.strip_suffix('\r').unwrap_or(l)
                } else {
                    l
                }
            })
            .collect()
    }

    /// How many leading bytes of `raw` to skip so decoding starts on a character.
    fn char_start(&self, raw: &[u8]) -> usize {
        if self.encoding.encoding == encoding_rs::UTF_8 {
            raw.iter()
                .take(3)
                .take_while(|&&b| b & 0xC0 == 0x80)
                .count()
        } else {
            0
        }
    }

    /// A prefix length of `raw` that ends on a character boundary.
    fn cut_point(&self, raw: &[u8]) -> usize {
        let w = self.newline.width();
        let mut end = raw.len() - raw.len() % w;
        if self.encoding.encoding == encoding_rs::UTF_8 {
            // Back up over an incomplete trailing character.
            let mut back = 0;
            while back < 3 && back < end && raw[end - 1 - back] & 0xC0 == 0x80 {
                back += 1;
            }
            if back < end {
                let lead = raw[end - 1 - back];
                let need = match lead {
                    b if b >= 0xF0 => 4,
                    b if b >= 0xE0 => 3,
                    b if b >= 0xC0 => 2,
                    _ => 1,
                };
                if need > back + 1 {
                    end -= back + 1;
                }
            }
        } else if self.encoding.is_utf16() && end >= 2 {
            // Do not end between the two halves of a surrogate pair.
            let unit = if self.encoding.encoding == encoding_rs::UTF_16LE {
                u16::from_le_bytes([raw[end - 2], raw[end - 1]])
            } else {
                u16::from_be_bytes([raw[end - 2], raw[end - 1]])
            };
            if (0xD800..0xDC00).contains(&unit) {
                end -= 2;
            }
        }
        end
    }
}

fn cut_marker(more: u64, measured: bool, next_byte: u64) -> String {
    let more = if measured {
        format!("{more} more bytes")
    } else {
        format!("more than {more} more bytes")
    };
    format!(" [... line cut: {more}; continue with byte_offset={next_byte}]")
}

/// Walks forwards through the file line by line, holding at most a step and one capped line.
struct Cursor<'a> {
    text: &'a TextFile,
    buf: Vec<u8>,
    /// File offset of `buf[0]`.
    base: u64,
    pos: usize,
    filled: usize,
}

impl<'a> Cursor<'a> {
    fn new(text: &'a TextFile, start: u64) -> Self {
        Self {
            text,
            buf: vec![0; STEP],
            base: start,
            pos: 0,
            filled: 0,
        }
    }

    fn at_end(&mut self) -> bool {
        if self.pos < self.filled {
            return false;
        }
        !matches!(self.refill(), Ok(true))
    }

    /// Reads more bytes after the unread ones; false at the end of the file.
    fn refill(&mut self) -> Result<bool, FileError> {
        self.buf.copy_within(self.pos..self.filled, 0);
        self.base += self.pos as u64;
        self.filled -= self.pos;
        self.pos = 0;
        let at = self.base + self.filled as u64;
        if at >= self.text.size {
            return Ok(false);
        }
        let got = self.text.file.read_at(&mut self.buf[self.filled..], at)?;
        self.filled += got;
        Ok(got > 0)
    }

    /// The next line, keeping at most `cap` of its bytes; `None` at the end of the file.
    fn next_line(&mut self, cap: usize) -> Result<Option<RawLine>, FileError> {
        let w = self.text.newline.width();
        let start = self.base + self.pos as u64;
        let mut kept = Vec::new();
        let mut len = 0u64;
        loop {
            let hay = &self.buf[self.pos..self.filled];
            if let Some(at) = self.text.newline.find(hay) {
                keep(&mut kept, &hay[..at], cap);
                len += at as u64;
                self.pos += at + w;
                return Ok(Some(RawLine {
                    start,
                    kept,
                    len,
                    measured: true,
                }));
            }
            let whole = hay.len() - hay.len() % w;
            keep(&mut kept, &hay[..whole], cap);
            len += whole as u64;
            self.pos += whole;
            if len > cap as u64 + MEASURE_LIMIT {
                return Ok(Some(RawLine {
                    start,
                    kept,
                    len,
                    measured: false,
                }));
            }
            if !self.refill()? {
                if len == 0 && self.pos >= self.filled {
                    return Ok(None);
                }
                self.pos = self.filled;
                return Ok(Some(RawLine {
                    start,
                    kept,
                    len,
                    measured: true,
                }));
            }
        }
    }
}

fn keep(kept: &mut Vec<u8>, bytes: &[u8], cap: usize) {
    let room = cap.saturating_sub(kept.len());
    kept.extend_from_slice(&bytes[..bytes.len().min(room)]);
}
