//! A big CSV file read by several threads at once. DataFusion reads a CSV whose quoted values may
//! hold line breaks on one thread (a cut at a line break could fall inside a value), so the
//! first question of a big CSV was as slow as one core parses. Here the file is cut where its
//! records end: one pass over it follows the quotes (`memchr`, a few milliseconds for 100 MB)
//! and notes the first line break outside quotes past each cut point; each part is served to
//! DataFusion as a file of its own, the header line put before it, so every part reads as the
//! whole file would.
//!
//! Following quotes says where a record ends only when every quote is where RFC 4180 puts it:
//! opening a field, closing it, or doubled inside it. A file with a quote anywhere else (`5"
//! screen` in an unquoted field, which the CSV reader takes as a letter) is not cut: it is read
//! on one thread, as before. Parts change the order rows arrive in, so they are used only for
//! a query whose answer does not depend on it (`order_free`), and only for a file on this
//! machine's disk (an object in a bucket would be fetched twice).

use std::ops::Range;
use std::sync::Arc;
use std::time::SystemTime;

use datafusion::common::tree_node::{TreeNode, TreeNodeRecursion};
use datafusion::logical_expr::{Aggregate, Expr, LogicalPlan};

use crate::blob::Blob;

/// Bytes read at a time while following the quotes.
const BUFFER: usize = 1 << 20;

/// Where a CSV file can be cut: its header line, and the parts after it (the first part starts
/// at the header; together they are the whole file, in order).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Cuts {
    pub header: Range<u64>,
    pub parts: Vec<Range<u64>>,
}

/// The cuts of `file` into at most `n` parts of about the same size, each ending where a record
/// does; `None` when the quotes do not say where records end (see the module's notes) or the
/// file has no line after its header.
pub fn cut(file: &dyn Blob, delimiter: u8, n: usize) -> std::io::Result<Option<Cuts>> {
    let size = file.size()?;
    let targets: Vec<u64> = (1..n as u64).map(|k| k * size / n as u64).collect();
    let mut follow = Follow::new(delimiter, targets);
    let mut buf = vec![0u8; BUFFER];
    let mut at = 0u64;
    while at < size {
        let got = file.read_at(&mut buf, at)?;
        if got == 0 {
            break;
        }
        if !follow.feed(&buf[..got], at) {
            return Ok(None);
        }
        at += got as u64;
    }
    if !follow.finish() {
        return Ok(None);
    }
    let Some(header_end) = follow.header_end else {
        return Ok(None);
    };
    let mut starts = vec![0];
    starts.extend(
        follow
            .ends
            .iter()
            .copied()
            .filter(|&e| e > header_end && e < size),
    );
    starts.dedup();
    if starts.len() < 2 {
        return Ok(None);
    }
    let mut parts: Vec<Range<u64>> = starts.windows(2).map(|w| w[0]..w[1]).collect();
    parts.push(*starts.last().unwrap_or(&0)..size);
    Ok(Some(Cuts {
        header: 0..header_end,
        parts,
    }))
}

/// The state of one pass over the file.
struct Follow {
    delimiter: u8,
    /// Inside a quoted value.
    inside: bool,
    /// The last byte seen (before the current buffer's first).
    last: Option<u8>,
    /// A quote inside a value was the last byte of a buffer: closing, or the first of a doubled
    /// pair, as the next byte says.
    pending_quote: bool,
    /// Cut points not reached yet, in order; `ends` gets the record end that follows each.
    targets: Vec<u64>,
    ends: Vec<u64>,
    /// Where the header line ends (just after its line break).
    header_end: Option<u64>,
}

impl Follow {
    fn new(delimiter: u8, mut targets: Vec<u64>) -> Self {
        targets.reverse();
        Self {
            delimiter,
            inside: false,
            last: None,
            pending_quote: false,
            targets,
            ends: Vec::new(),
            header_end: None,
        }
    }

    /// Follows `bytes`, found at `offset`; false when a quote is out of place.
    fn feed(&mut self, bytes: &[u8], offset: u64) -> bool {
        let mut i = 0;
        if self.pending_quote {
            self.pending_quote = false;
            match bytes.first() {
                // Doubled: still inside, past the pair.
                Some(b'"') => i = 1,
                Some(&b) if self.ends_value(b) => self.inside = false,
                _ => return false,
            }
        }
        while i < bytes.len() {
            if self.inside {
                let Some(q) = memchr::memchr(b'"', &bytes[i..]) else {
                    break;
                };
                let q = i + q;
                match bytes.get(q + 1) {
                    Some(b'"') => i = q + 2,
                    Some(&b) if self.ends_value(b) => {
                        self.inside = false;
                        i = q + 1;
                    }
                    Some(_) => return false,
                    None => {
                        self.pending_quote = true;
                        i = q + 1;
                    }
                }
            } else {
                let q = memchr::memchr(b'"', &bytes[i..]).map_or(bytes.len(), |q| i + q);
                // Outside quotes from `i` to `q`: the line breaks there end records.
                self.note_ends(&bytes[i..q], offset + i as u64);
                if q == bytes.len() {
                    break;
                }
                let before = if q > 0 { Some(bytes[q - 1]) } else { self.last };
                if before.is_some_and(|b| b != self.delimiter && b != b'\n' && b != b'\r') {
                    return false;
                }
                self.inside = true;
                i = q + 1;
            }
        }
        self.last = bytes.last().copied().or(self.last);
        true
    }

    /// After the last byte: a value left open, or closed at the end of the file.
    fn finish(&mut self) -> bool {
        if self.pending_quote {
            self.pending_quote = false;
            self.inside = false;
        }
        !self.inside
    }

    fn ends_value(&self, b: u8) -> bool {
        b == self.delimiter || b == b'\n' || b == b'\r'
    }

    /// Notes the header's end and, past each cut point, the next record end in `plain` (bytes
    /// outside quotes found at `offset`).
    fn note_ends(&mut self, plain: &[u8], offset: u64) {
        let end = offset + plain.len() as u64;
        if self.header_end.is_none() {
            match memchr::memchr(b'\n', plain) {
                Some(at) => self.header_end = Some(offset + at as u64 + 1),
                None => return,
            }
        }
        while let Some(&target) = self.targets.last() {
            if target >= end {
                return;
            }
            let from = target.max(offset) - offset;
            match memchr::memchr(b'\n', &plain[from as usize..]) {
                Some(at) => {
                    self.ends.push(offset + from + at as u64 + 1);
                    self.targets.pop();
                }
                None => return,
            }
        }
    }
}

/// One part of a CSV file read as a file of its own: the header line, then the part (the first
/// part is the file's start, header and all).
#[derive(Debug)]
pub struct Part {
    file: Arc<dyn Blob>,
    header: Range<u64>,
    range: Range<u64>,
}

impl Part {
    /// The parts of `file` as `cuts` says.
    pub fn all(file: &Arc<dyn Blob>, cuts: &Cuts) -> Vec<Part> {
        cuts.parts
            .iter()
            .enumerate()
            .map(|(i, range)| Part {
                file: file.clone(),
                header: if i == 0 { 0..0 } else { cuts.header.clone() },
                range: range.clone(),
            })
            .collect()
    }
}

impl Blob for Part {
    fn size(&self) -> std::io::Result<u64> {
        Ok(self.header.end - self.header.start + self.range.end - self.range.start)
    }

    fn read_at(&self, buf: &mut [u8], offset: u64) -> std::io::Result<usize> {
        let header_len = self.header.end - self.header.start;
        let mut done = 0;
        if offset < header_len {
            let n = ((header_len - offset) as usize).min(buf.len());
            done = self
                .file
                .read_at(&mut buf[..n], self.header.start + offset)?;
            if done < n {
                return Ok(done);
            }
        }
        let from = offset + done as u64 - header_len;
        let left = (self.range.end - self.range.start).saturating_sub(from);
        let n = (left as usize).min(buf.len() - done);
        if n > 0 {
            done += self
                .file
                .read_at(&mut buf[done..done + n], self.range.start + from)?;
        }
        Ok(done)
    }

    fn modified(&self) -> Option<SystemTime> {
        self.file.modified()
    }

    fn is_local(&self) -> bool {
        self.file.is_local()
    }
}

/// Whether the answer of `plan` is the same whatever order the rows of its tables arrive in,
/// and reading in parts costs no more memory: an aggregate of functions that do not look at
/// order (sorted or not), or the first rows of a sort (`ORDER BY … LIMIT n`), over filters and
/// projections of the tables. A plain `SELECT … LIMIT n`, a window or `first_value` keeps the one
/// thread and the file's order; so does a whole sort or a join (in parts, each would hold more
/// of the query's memory at once).
pub fn order_free(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Projection(p) => order_free(&p.input),
        LogicalPlan::SubqueryAlias(a) => order_free(&a.input),
        LogicalPlan::Limit(l) => match under_projections(&l.input) {
            LogicalPlan::Sort(s) => rows_free(&s.input),
            _ => false,
        },
        LogicalPlan::Sort(s) => reduced(&s.input),
        _ => reduced(plan),
    }
}

/// Whether `plan` is an aggregate (maybe under projections and filters) whose rows do not
/// depend on the order of its tables' rows.
fn reduced(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::Projection(_) | LogicalPlan::Filter(_) | LogicalPlan::SubqueryAlias(_) => {
            plan.inputs().iter().all(|i| reduced(i))
        }
        LogicalPlan::Aggregate(a) => aggregates_free(a) && rows_free(&a.input),
        LogicalPlan::Distinct(_) => plan.inputs().iter().all(|i| rows_free(i)),
        _ => false,
    }
}

/// Whether the rows `plan` makes, as a set, do not depend on the order of its tables' rows.
fn rows_free(plan: &LogicalPlan) -> bool {
    match plan {
        LogicalPlan::TableScan(s) => s.fetch.is_none(),
        LogicalPlan::Filter(_) | LogicalPlan::Projection(_) | LogicalPlan::SubqueryAlias(_) => {
            plan.inputs().iter().all(|i| rows_free(i))
        }
        _ => reduced(plan),
    }
}

/// `plan` without the projections on top of it.
fn under_projections(plan: &LogicalPlan) -> &LogicalPlan {
    match plan {
        LogicalPlan::Projection(p) => under_projections(&p.input),
        _ => plan,
    }
}

/// Aggregate functions whose result does not depend on the order of their rows.
const ORDER_FREE: &[&str] = &[
    "count",
    "sum",
    "avg",
    "mean",
    "min",
    "max",
    "median",
    "stddev",
    "stddev_pop",
    "stddev_samp",
    "var",
    "var_pop",
    "var_samp",
    "var_population",
    "var_sample",
    "corr",
    "covar",
    "covar_pop",
    "covar_samp",
    "approx_distinct",
    "approx_median",
    "bool_and",
    "bool_or",
    "bit_and",
    "bit_or",
    "bit_xor",
    "regr_slope",
    "regr_intercept",
    "regr_count",
    "regr_r2",
    "regr_avgx",
    "regr_avgy",
    "regr_sxx",
    "regr_syy",
    "regr_sxy",
];

fn aggregates_free(a: &Aggregate) -> bool {
    a.aggr_expr.iter().all(|e| {
        let mut free = true;
        let _ = e.apply(|e| {
            if let Expr::AggregateFunction(f) = e {
                let name = f.func.name().to_ascii_lowercase();
                free &= ORDER_FREE.contains(&name.as_str());
            }
            Ok(TreeNodeRecursion::Continue)
        });
        free
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The record ends a CSV reader finds, as byte offsets just past each record.
    fn record_ends(data: &[u8]) -> Vec<u64> {
        let mut reader = csv::ReaderBuilder::new()
            .has_headers(false)
            .from_reader(data);
        let mut ends = Vec::new();
        let mut record = csv::ByteRecord::new();
        while reader.read_byte_record(&mut record).unwrap() {
            ends.push(reader.position().byte());
        }
        ends
    }

    fn blob(data: &[u8]) -> Arc<dyn Blob> {
        let mut f = tempfile::tempfile().unwrap();
        std::io::Write::write_all(&mut f, data).unwrap();
        Arc::new(f)
    }

    fn read_all(b: &dyn Blob) -> Vec<u8> {
        let mut out = vec![0u8; b.size().unwrap() as usize];
        assert_eq!(b.read_at(&mut out, 0).unwrap(), out.len());
        out
    }

    #[test]
    fn cuts_fall_where_records_end_and_parts_read_as_whole_files() {
        let mut data = b"id,note,amount\n".to_vec();
        for i in 0..5000 {
            let note = match i % 4 {
                0 => "plain".to_owned(),
                1 => format!("\"two\nlines {i}\""),
                2 => format!("\"a \"\"quoted\"\", comma\r\n{i}\""),
                _ => String::new(),
            };
            data.extend_from_slice(format!("{i},{note},{}.5\n", i * 3).as_bytes());
        }
        let file = blob(&data);
        let ends = record_ends(&data);
        for n in [2, 3, 7] {
            let cuts = cut(&*file, b',', n).unwrap().expect("the file can be cut");
            assert_eq!(cuts.header, 0..15);
            assert_eq!(cuts.parts.len(), n);
            assert_eq!(cuts.parts[0].start, 0);
            assert_eq!(cuts.parts.last().unwrap().end, data.len() as u64);
            for w in cuts.parts.windows(2) {
                assert_eq!(w[0].end, w[1].start);
                assert!(
                    ends.contains(&w[1].start),
                    "cut at {} is no record end",
                    w[1].start
                );
            }
            // Each part, read as a file, has the header and then whole records.
            let mut rows = 0;
            for part in Part::all(&file, &cuts) {
                let bytes = read_all(&part);
                let mut r = csv::Reader::from_reader(&bytes[..]);
                assert_eq!(r.headers().unwrap(), vec!["id", "note", "amount"]);
                for record in r.records() {
                    assert_eq!(record.unwrap().len(), 3);
                    rows += 1;
                }
            }
            assert_eq!(rows, 5000, "{n} parts");
        }
    }

    #[test]
    fn a_part_reads_across_its_header_and_body_at_any_offset() {
        let file = blob(b"h1,h2\n1,2\n3,4\n5,6\n");
        let part = Part {
            file,
            header: 0..6,
            range: 14..18,
        };
        assert_eq!(part.size().unwrap(), 10);
        assert_eq!(read_all(&part), b"h1,h2\n5,6\n");
        let mut buf = [0u8; 4];
        assert_eq!(part.read_at(&mut buf, 4).unwrap(), 4);
        assert_eq!(&buf, b"2\n5,");
        assert_eq!(part.read_at(&mut buf, 8).unwrap(), 2);
        assert_eq!(part.read_at(&mut buf, 10).unwrap(), 0);
    }

    #[test]
    fn quotes_out_of_place_keep_the_file_whole() {
        // A quote inside an unquoted value (a CSV reader takes it as a letter), a quote closing
        // before other letters, and a value left open at the end: none can be followed.
        for data in [
            "name,size\nscreen,15\"\nother,\"a\nb\"\n",
            "name,size\n\"15\" inch,3\nother,4\n",
            "name,size\nx,\"open\n1,2\n3,4\n",
        ] {
            assert_eq!(
                cut(&*blob(data.as_bytes()), b',', 2).unwrap(),
                None,
                "{data:?}"
            );
        }
        // A header alone, or an empty file, has nothing to cut.
        assert_eq!(cut(&*blob(b"a,b\n"), b',', 2).unwrap(), None);
        assert_eq!(cut(&*blob(b""), b',', 2).unwrap(), None);
    }

    #[test]
    fn quotes_across_the_reading_buffer_are_followed() {
        // A doubled quote and a closing quote each split across two reads.
        let mut data = b"a,b\n\"".to_vec();
        data.extend_from_slice(&vec![b'x'; BUFFER - 6]);
        data.push(b'"');
        assert_eq!(data.len(), BUFFER);
        data.extend_from_slice(b"\"y\",2\n");
        for i in 0..20000 {
            data.extend_from_slice(format!("{i},\"q\"\n").as_bytes());
        }
        let file = blob(&data);
        let cuts = cut(&*file, b',', 2).unwrap().expect("cut");
        assert!(record_ends(&data).contains(&cuts.parts[1].start));
        // A closing quote as a buffer's last byte.
        let mut data = b"a,b\n\"".to_vec();
        data.extend_from_slice(&vec![b'x'; BUFFER - 6]);
        data.extend_from_slice(b"\",2\n");
        assert_eq!(data[BUFFER - 1], b'"');
        for i in 0..20000 {
            data.extend_from_slice(format!("{i},3\n").as_bytes());
        }
        let cuts = cut(&*blob(&data), b',', 2).unwrap().expect("cut");
        assert!(record_ends(&data).contains(&cuts.parts[1].start));
    }

    #[test]
    fn only_questions_whose_answer_ignores_row_order_are_order_free() {
        use datafusion::arrow::array::{Int64Array, StringArray};
        use datafusion::arrow::datatypes::{DataType, Field, Schema};
        use datafusion::arrow::record_batch::RecordBatch;
        let schema = Arc::new(Schema::new(vec![
            Field::new("region", DataType::Utf8, true),
            Field::new("amount", DataType::Int64, true),
        ]));
        let batch = RecordBatch::try_new(
            schema,
            vec![
                Arc::new(StringArray::from(vec!["north", "south"])),
                Arc::new(Int64Array::from(vec![1, 2])),
            ],
        )
        .unwrap();
        let ctx = datafusion::prelude::SessionContext::new();
        ctx.register_batch("data", batch).unwrap();
        let runtime = tokio::runtime::Runtime::new().unwrap();
        let free = |sql: &str| {
            runtime.block_on(async {
                let df = ctx.sql(sql).await.unwrap();
                order_free(df.logical_plan())
            })
        };
        for sql in [
            "SELECT region, SUM(amount), COUNT(*) FROM data GROUP BY region",
            "SELECT COUNT(DISTINCT region), MIN(amount), MAX(amount), AVG(amount) FROM data",
            "SELECT * FROM data ORDER BY amount DESC LIMIT 10",
            "SELECT DISTINCT region FROM data",
            "SELECT r, n FROM (SELECT region AS r, COUNT(*) AS n FROM data GROUP BY region) t ORDER BY n",
            "SELECT SUM(n) FROM (SELECT region, COUNT(*) AS n FROM data GROUP BY region) t",
        ] {
            assert!(free(sql), "{sql}");
        }
        for sql in [
            "SELECT * FROM data",
            "SELECT * FROM data LIMIT 5",
            "SELECT region FROM data WHERE amount > 1",
            "SELECT first_value(amount) FROM data",
            "SELECT region, array_agg(amount) FROM data GROUP BY region",
            "SELECT SUM(amount) FROM (SELECT amount FROM data LIMIT 10) t",
            "SELECT region, ROW_NUMBER() OVER () FROM data ORDER BY region",
            "SELECT a.region FROM data a JOIN data b ON a.region = b.region",
            "SELECT a.region, COUNT(*) FROM data a JOIN data b ON a.region = b.region GROUP BY a.region",
            "SELECT region FROM data WHERE amount > 1 ORDER BY region",
        ] {
            assert!(!free(sql), "{sql}");
        }
    }
}
