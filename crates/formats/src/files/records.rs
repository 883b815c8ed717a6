//! Counting CSV records exactly, fast: one pass that jumps from quote to quote and from line end
//! to line end (`memchr`), with the same rules as the `csv` crate, which reads the sampled rows:
//! a quote opens a quoted field only at the start of a field, `""` inside one is a quote, line
//! ends inside quotes belong to the field, `\r`, `\n` and `\r\n` end records, and blank lines are
//! not records. Unit tests hold the two to the same answers on tricky and random input.
//!
//! On the way it notes where records start at evenly spread points of the file, so rows can be
//! sampled from the whole file, not only its beginning.

use super::{FileError, Observer, Source};

const CHUNK: usize = 1 << 20;

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Count {
    /// Records in the file (a header row included).
    pub records: u64,
    /// Byte offsets where a record starts, about evenly spread over the file.
    pub anchors: Vec<u64>,
}

/// Counts the records of `file` from byte `start` (after any BOM), with `delimiter`; notes about
/// `anchors` record starts across the file.
pub fn count(
    file: &Source,
    start: u64,
    size: u64,
    delimiter: u8,
    anchors: usize,
    observer: &dyn Observer,
) -> Result<Count, FileError> {
    let mut buf = vec![0u8; CHUNK];
    let mut counter = Counter::new(delimiter, start, size, anchors);
    let mut at = start;
    let mut chunks = 0u64;
    while at < size {
        let want = CHUNK.min((size - at) as usize);
        let got = file.read_at(&mut buf[..want], at)?;
        if got == 0 {
            break;
        }
        counter.feed(&buf[..got], at);
        at += got as u64;
        chunks += 1;
        if chunks.is_multiple_of(super::WATCH_EVERY / CHUNK as u64) {
            super::checkpoint(observer, at - start, size - start)?;
        }
    }
    Ok(counter.finish())
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    Unquoted,
    Quoted,
    /// A quote inside a quoted field: it closes the field unless another quote follows.
    QuoteInQuoted,
}

/// The counting state machine, fed chunk by chunk.
struct Counter {
    delimiter: u8,
    state: State,
    /// The byte before the current chunk (`None` at the start of the data).
    prev: Option<u8>,
    records: u64,
    /// Whether the current record has content (so its line end ends a record, not a blank line).
    open_record: bool,
    anchor_every: u64,
    next_anchor: u64,
    anchors: Vec<u64>,
    start: u64,
}

impl Counter {
    fn new(delimiter: u8, start: u64, size: u64, anchors: usize) -> Self {
        let anchor_every = ((size - start) / (anchors as u64 + 1)).max(1);
        Self {
            delimiter,
            state: State::Unquoted,
            prev: None,
            records: 0,
            open_record: false,
            anchor_every,
            next_anchor: start + anchor_every,
            anchors: Vec::with_capacity(anchors),
            start,
        }
    }

    fn feed(&mut self, chunk: &[u8], base: u64) {
        let mut pos = 0;
        while pos < chunk.len() {
            match self.state {
                State::Quoted => match memchr::memchr(b'"', &chunk[pos..]) {
                    Some(q) => {
                        self.state = State::QuoteInQuoted;
                        pos += q + 1;
                    }
                    None => pos = chunk.len(),
                },
                State::QuoteInQuoted => {
                    if chunk[pos] == b'"' {
                        // `""`: an escaped quote; the field goes on.
                        self.state = State::Quoted;
                        pos += 1;
                    } else {
                        self.state = State::Unquoted;
                    }
                }
                State::Unquoted => {
                    let seg_end = match memchr::memchr(b'"', &chunk[pos..]) {
                        Some(q) => pos + q,
                        None => chunk.len(),
                    };
                    self.unquoted(&chunk[pos..seg_end], base + pos as u64);
                    if seg_end < chunk.len() {
                        let before = if seg_end > 0 {
                            Some(chunk[seg_end - 1])
                        } else {
                            self.prev
                        };
                        // A quote opens a quoted field only at the start of a field.
                        if before.is_none_or(|b| matches!(b, b'\n' | b'\r') || b == self.delimiter)
                        {
                            self.state = State::Quoted;
                        }
                        self.open_record = true;
                    }
                    pos = seg_end + 1;
                }
            }
        }
        self.prev = chunk.last().copied().or(self.prev);
    }

    /// Counts the record ends in `seg`, which lies outside quotes and starts at file offset `at`.
    fn unquoted(&mut self, seg: &[u8], at: u64) {
        let mut next = 0;
        for t in memchr::memchr2_iter(b'\n', b'\r', seg) {
            if t > next {
                self.open_record = true;
            }
            next = t + 1;
            if self.open_record {
                self.records += 1;
                self.open_record = false;
                let record_start = at + t as u64 + 1;
                if record_start >= self.next_anchor && self.anchors.len() < self.anchors.capacity()
                {
                    self.anchors.push(record_start);
                    let step = (record_start - self.start) / self.anchor_every + 1;
                    self.next_anchor = self.start + step * self.anchor_every;
                }
            }
        }
        if seg.len() > next {
            self.open_record = true;
        }
    }

    fn finish(self) -> Count {
        Count {
            records: self.records + u64::from(self.open_record),
            anchors: self.anchors,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Write;

    fn ours(data: &[u8], chunk: usize) -> u64 {
        let mut counter = Counter::new(b',', 0, data.len() as u64, 4);
        for (i, piece) in data.chunks(chunk.max(1)).enumerate() {
            counter.feed(piece, (i * chunk) as u64);
        }
        counter.finish().records
    }

    fn theirs(data: &[u8]) -> u64 {
        csv::ReaderBuilder::new()
            .has_headers(false)
            .flexible(true)
            .from_reader(data)
            .byte_records()
            .count() as u64
    }

    #[test]
    fn agrees_with_the_csv_crate_on_tricky_input() {
        for case in [
            &b""[..],
            b"a",
            b"a\n",
            b"a\nb",
            b"\n\n\na\n\n",
            b"\r\n\r\na\r\nb\r\n\r\n",
            b"a,\"b\nc\",d\ne\n",
            b"\"x\"\"y\",1\n2\n",
            b"5'10\",x\ny\n",
            b"\"open\nnever closed",
            b"a,b\r\nc,d\r\n",
            b"a\r\rb\n",
            b"\"\"\n\n",
            b"x,\"\"\"\n\"\n",
        ] {
            for chunk in [1, 2, 3, 7, 1 << 20] {
                assert_eq!(
                    ours(case, chunk),
                    theirs(case),
                    "{:?} in chunks of {chunk}",
                    String::from_utf8_lossy(case)
                );
            }
        }
    }

    #[test]
    fn agrees_with_the_csv_crate_on_random_input() {
        let mut rng = fastrand::Rng::with_seed(7);
        let alphabet = b"ab,\"\n\r ";
        for _ in 0..20_000 {
            let len = rng.usize(0..40);
            let data: Vec<u8> = (0..len)
                .map(|_| alphabet[rng.usize(..alphabet.len())])
                .collect();
            let chunk = rng.usize(1..8);
            assert_eq!(
                ours(&data, chunk),
                theirs(&data),
                "{:?} in chunks of {chunk}",
                String::from_utf8_lossy(&data)
            );
        }
    }

    #[test]
    fn anchors_are_record_starts_spread_over_the_file() {
        let mut file = tempfile::NamedTempFile::new().unwrap();
        let mut expected_starts = vec![0u64];
        let mut at = 0u64;
        for i in 0..10_000 {
            let row = format!("{i},\"multi\nline {i}\",x\n");
            at += row.len() as u64;
            expected_starts.push(at);
            file.write_all(row.as_bytes()).unwrap();
        }
        let size = at;
        let source = Source::from(file.as_file().try_clone().unwrap());
        let count = count(&source, 0, size, b',', 8, &super::super::Quiet).unwrap();
        assert_eq!(count.records, 10_000);
        assert_eq!(count.anchors.len(), 8);
        for (i, a) in count.anchors.iter().enumerate() {
            assert!(
                expected_starts.binary_search(a).is_ok(),
                "{a} is not a record start"
            );
            let ideal = size * (i as u64 + 1) / 9;
            assert!(a.abs_diff(ideal) < 100, "anchor {a} far from {ideal}");
        }
    }
}
