//! CSV/TSV schemas: delimiter and header sniffed from the first rows, an exact quote-aware record
//! count, and column types from every row of small files or from rows sampled across the whole
//! file (the first ones and some after each of evenly spread record starts) for large ones.

use std::io::Read;

use schemars::JsonSchema;
use serde::Serialize;

use super::columns::{Column, ColumnStats, ColumnType, classify_text};
use super::encoding::TextEncoding;
use super::{At, FileError, Kind, Observer, Probe, records, stopped};

/// Rows read from the start of a large file, and after each anchor.
const HEAD_ROWS: usize = 2000;
const ANCHORS: usize = 64;
const ROWS_PER_ANCHOR: usize = 100;
/// Rows used to sniff the delimiter and header.
const SNIFF_ROWS: usize = 50;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DelimitedSchema {
    /// `,`, `\t`, `;` or `|`.
    pub delimiter: String,
    pub encoding: String,
    pub has_header: bool,
    /// Data rows (the header excluded).
    pub row_count: u64,
    pub row_count_exact: bool,
    /// `all_rows` (small files) or `sample` (rows from across the whole file).
    pub typed_from: String,
    pub sampled_rows: u64,
    pub columns: Vec<Column>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub warnings: Vec<String>,
}

pub fn schema(
    probe: &Probe,
    full_scan_limit: u64,
    max_samples: usize,
    observer: &dyn Observer,
) -> Result<DelimitedSchema, FileError> {
    let (file, size, sample) = (&probe.file, probe.size, &probe.sample[..]);
    let encoding = probe.encoding.unwrap_or(TextEncoding::UTF8);
    let tab_hint = probe.kind == Kind::Delimited { tab: true };
    // UTF-16 (Excel's "Unicode text") is transcoded to UTF-8 as it streams, and always scanned
    // whole: record starts found in UTF-8 would not be byte offsets of the file.
    let utf16 = encoding.is_utf16();
    let start = encoding.bom_len;
    let transcoded;
    let body = if utf16 {
        transcoded = encoding.decode(&sample[start as usize..]);
        transcoded.as_bytes()
    } else {
        &sample[start as usize..]
    };
    let whole = sample.len() as u64 >= size;
    let decode = |b: &[u8]| {
        if utf16 {
            String::from_utf8_lossy(b).into_owned()
        } else {
            encoding.decode(b)
        }
    };
    let delimiter = sniff_delimiter(body, whole, tab_hint);
    let first = first_rows(body, whole, delimiter, SNIFF_ROWS, &decode);
    let has_header = sniff_header(&first);
    let width = first.first().map_or(0, Vec::len);
    let mut warnings = Vec::new();
    let names: Vec<String> = match (has_header, first.first()) {
        (true, Some(header)) => header
            .iter()
            .enumerate()
            .map(|(i, n)| {
                if n.trim().is_empty() {
                    format!("column_{}", i + 1)
                } else {
                    n.clone()
                }
            })
            .collect(),
        _ => (1..=width).map(|i| format!("column_{i}")).collect(),
    };
    let mut stats: Vec<ColumnStats> = names
        .iter()
        .map(|n| ColumnStats::new(n.clone(), max_samples))
        .collect();
    let mut ragged = 0u64;
    let mut first_ragged = None;
    let mut sampled = 0u64;
    let mut observe = |fields: &csv::ByteRecord, line: u64| {
        if fields.len() != stats.len() {
            ragged += 1;
            first_ragged.get_or_insert((line, fields.len()));
            return;
        }
        sampled += 1;
        for (stat, field) in stats.iter_mut().zip(fields.iter()) {
            stat.text(&decode(field));
        }
    };
    let skip_header = u64::from(has_header);
    // A csv reader over the records from byte `pos` (a record start) to the end.
    let rows_from = |pos| reader(At::new(file, pos, size), delimiter);
    let (row_count, typed_from) = if size <= full_scan_limit || utf16 {
        let bytes = At::watched(file, start, size, observer);
        let source: Box<dyn Read + '_> = if utf16 {
            let utf8 = encoding_rs_io::DecodeReaderBytesBuilder::new()
                .encoding(Some(encoding.encoding))
                .build(bytes);
            Box::new(utf8)
        } else {
            Box::new(bytes)
        };
        let mut reader = reader(source, delimiter);
        let mut record = csv::ByteRecord::new();
        let mut records = 0u64;
        while reader
            .read_byte_record(&mut record)
            .map_err(|e| stopped(observer, csv_error(e)))?
        {
            records += 1;
            if records > skip_header {
                observe(&record, line_of(&record));
            }
        }
        (records.saturating_sub(skip_header), "all_rows")
    } else {
        let count = records::count(file, start, size, delimiter, ANCHORS, observer)?;
        let mut from_head = rows_from(start);
        let mut record = csv::ByteRecord::new();
        let mut n = 0;
        while n < HEAD_ROWS + has_header as usize
            && from_head.read_byte_record(&mut record).map_err(csv_error)?
        {
            n += 1;
            if n > has_header as usize {
                observe(&record, line_of(&record));
            }
        }
        for &anchor in &count.anchors {
            let mut rows = rows_from(anchor);
            for _ in 0..ROWS_PER_ANCHOR {
                if !rows.read_byte_record(&mut record).map_err(csv_error)? {
                    break;
                }
                // Line numbers here are relative to the anchor: not worth reporting.
                observe(&record, 0);
            }
        }
        (count.records.saturating_sub(skip_header), "sample")
    };
    if let Some((line, got)) = first_ragged {
        let at = if line > 0 {
            format!(" (first at line {line}, with {got} fields)")
        } else {
            String::new()
        };
        warnings.push(format!(
            "{ragged} row(s) do not have {} fields{at}; they were left out of the types",
            stats.len()
        ));
    }
    let exact = typed_from == "all_rows";
    Ok(DelimitedSchema {
        delimiter: (delimiter as char).to_string(),
        encoding: encoding.name(),
        has_header,
        row_count,
        row_count_exact: true,
        typed_from: typed_from.into(),
        sampled_rows: sampled,
        columns: stats.into_iter().map(|s| s.finish(exact)).collect(),
        warnings,
    })
}

fn reader<R: Read>(source: R, delimiter: u8) -> csv::Reader<R> {
    csv::ReaderBuilder::new()
        .delimiter(delimiter)
        .has_headers(false)
        .flexible(true)
        .buffer_capacity(64 * 1024)
        .from_reader(source)
}

fn line_of(record: &csv::ByteRecord) -> u64 {
    record.position().map_or(0, |p| p.line())
}

fn csv_error(e: csv::Error) -> FileError {
    match e.into_kind() {
        csv::ErrorKind::Io(io) => FileError::Io(io),
        other => FileError::Parse(format!("{other:?}")),
    }
}

/// The first `n` records of the sample, decoded (the last one dropped when the sample may have
/// cut it).
fn first_rows(
    body: &[u8],
    whole: bool,
    delimiter: u8,
    n: usize,
    decode: &dyn Fn(&[u8]) -> String,
) -> Vec<Vec<String>> {
    let mut rows: Vec<Vec<String>> = reader(body, delimiter)
        .byte_records()
        .take(n + 1)
        .filter_map(Result::ok)
        .map(|r| r.iter().map(decode).collect())
        .collect();
    if !whole || rows.len() > n {
        rows.pop();
    }
    rows
}

/// The delimiter that splits the first rows into the same number (> 1) of fields most often.
/// The delimiter of an opened CSV/TSV file, from its first 64 KiB.
pub fn delimiter_of(file: &super::Source, tab_hint: bool) -> Result<u8, FileError> {
    let mut head = vec![0u8; 64 * 1024];
    let got = file.read_at(&mut head, 0)?;
    let whole = got < head.len();
    head.truncate(got);
    Ok(sniff_delimiter(&head, whole, tab_hint))
}

fn sniff_delimiter(body: &[u8], whole: bool, tab_hint: bool) -> u8 {
    let preferred = if tab_hint { b'\t' } else { b',' };
    let mut best = (0.0f64, preferred);
    for candidate in [preferred, b',', b'\t', b';', b'|'] {
        let mut widths: Vec<usize> = reader(body, candidate)
            .byte_records()
            .take(SNIFF_ROWS + 1)
            .filter_map(Result::ok)
            .map(|r| r.len())
            .collect();
        if !whole && widths.len() > 1 {
            widths.pop();
        }
        let Some(mode) = mode(&widths) else { continue };
        if mode < 2 {
            continue;
        }
        let agree = widths.iter().filter(|&&w| w == mode).count() as f64 / widths.len() as f64;
        // Consistency first; more fields break ties.
        let score = agree + (mode as f64).min(100.0) / 10_000.0;
        if score > best.0 + 1e-9 {
            best = (score, candidate);
        }
    }
    best.1
}

fn mode(values: &[usize]) -> Option<usize> {
    let mut counts = std::collections::HashMap::new();
    for &v in values {
        *counts.entry(v).or_insert(0usize) += 1;
    }
    counts
        .into_iter()
        .max_by_key(|&(v, c)| (c, v))
        .map(|(v, _)| v)
}

/// Whether the first row names the columns: its cells are text where the columns below hold
/// numbers, dates or booleans; or, for text columns, it is all distinct, non-empty and unlike
/// the values below it.
fn sniff_header(rows: &[Vec<String>]) -> bool {
    let Some((first, body)) = rows.split_first() else {
        return false;
    };
    let all_text = first
        .iter()
        .all(|c| classify_text(c) == Some(ColumnType::String));
    if !all_text {
        return false;
    }
    if body.is_empty() {
        return true;
    }
    let mut vote = 0i32;
    for (i, cell) in first.iter().enumerate() {
        let body_kind = body
            .iter()
            .filter_map(|r| r.get(i))
            .filter_map(|v| classify_text(v))
            .reduce(|a, b| if a == b { a } else { ColumnType::String });
        match body_kind {
            Some(ColumnType::String) | None => {
                if body.iter().any(|r| r.get(i) == Some(cell)) {
                    vote -= 1;
                }
            }
            Some(_) => vote += 1,
        }
    }
    let distinct = {
        let mut seen = std::collections::HashSet::new();
        first.iter().all(|c| !c.trim().is_empty() && seen.insert(c))
    };
    vote > 0 || (vote == 0 && distinct)
}
