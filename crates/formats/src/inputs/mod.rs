//! Parsers in: a file turned into JSON for a tool's arguments, with the same parsers for
//! `call_tool_with_file_content` and `{"$file": ..., "as": "data"}`.
//!
//! Formats: json, jsonl/ndjson (a list), csv and tsv (a list of objects keyed by the header),
//! yaml/yml (several documents make a list), xml (see `xml`), txt (JSON when it parses as JSON,
//! else the text). Every error says what is wrong and, where there is one, on which line; nothing
//! here can overflow the stack (serde_json and serde_yaml limit nesting) or expand an entity.

pub(crate) mod csv;
pub(crate) mod sheet;
mod xml;

use std::io::{BufRead, BufReader, Read, Seek};

use serde::Deserialize;
use serde_json::Value;

use crate::Format;

pub use self::csv::{ColumnType, Typing};

/// A file to read: CSV and TSV are read twice (their columns are typed from every cell first).
pub trait Source: Read + Seek {}
impl<T: Read + Seek> Source for T {}

/// A parse failure, with the line when known.
#[derive(Debug, Clone, thiserror::Error)]
#[error("{message}")]
pub struct InputError {
    pub message: String,
    pub line: Option<u64>,
}

impl InputError {
    pub fn parse(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
            line: None,
        }
    }

    pub fn at_line(mut self, line: u64) -> Self {
        self.line = Some(line);
        self
    }

    /// A file that held more than the cap set on decompressing it.
    pub fn over_cap(&self) -> bool {
        self.message.contains(crate::files::compressed::OVER_CAP)
    }
}

/// Refuses content that is clearly binary (a NUL byte early on).
fn check_text(head: &[u8]) -> Result<(), InputError> {
    if memchr::memchr(0, &head[..head.len().min(8192)]).is_some() {
        return Err(InputError::parse(
            "the file is binary, not text; pass it with {\"$file\": ..., \"as\": \"base64\"} if the tool takes bytes",
        ));
    }
    Ok(())
}

/// Reads UTF-8 text (a BOM is removed); binary content and invalid UTF-8 are errors.
pub fn read_text(reader: &mut dyn Read) -> Result<String, InputError> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::parse(e.to_string()))?;
    check_text(&bytes)?;
    let bytes = bytes
        .strip_prefix(b"\xef\xbb\xbf")
        .map(<[u8]>::to_vec)
        .unwrap_or(bytes);
    String::from_utf8(bytes).map_err(|e| {
        let at = e.utf8_error().valid_up_to();
        let line = e.as_bytes()[..at].iter().filter(|b| **b == b'\n').count() as u64 + 1;
        InputError::parse(format!("line {line}: not valid UTF-8 (at byte {at})")).at_line(line)
    })
}

/// The whole file as one JSON value.
pub fn parse(
    reader: &mut dyn Source,
    format: Format,
    infer_types: bool,
) -> Result<(Value, Vec<String>), InputError> {
    parse_with(
        reader,
        format,
        &ReadOptions {
            typing: Typing {
                infer: infer_types,
                ..Typing::default()
            },
            sheet: None,
        },
    )
}

/// How to read a file.
#[derive(Debug, Clone, Default)]
pub struct ReadOptions {
    /// CSV/TSV: type inference per column, and the types asked for by name.
    pub typing: Typing,
    /// The spreadsheet's sheet (name or 0-based index); the first when absent.
    pub sheet: Option<String>,
}

/// `parse` with every option.
pub fn parse_with(
    reader: &mut dyn Source,
    format: Format,
    options: &ReadOptions,
) -> Result<(Value, Vec<String>), InputError> {
    match format {
        Format::Sheet => {
            let mut bytes = Vec::new();
            reader
                .read_to_end(&mut bytes)
                .map_err(|e| InputError::parse(e.to_string()))?;
            sheet::read(bytes, options.sheet.as_deref())
        }
        Format::Json => {
            let text = read_text(reader)?;
            let v = serde_json::from_str(&text).map_err(json_error)?;
            Ok((v, Vec::new()))
        }
        Format::Jsonl | Format::Csv | Format::Tsv | Format::Parquet => {
            let mut items = Vec::new();
            let warnings = for_each_item(reader, format, options, &mut |v| {
                items.push(v);
                Ok(())
            })?;
            Ok((Value::Array(items), warnings))
        }
        Format::Yaml => {
            let text = read_text(reader)?;
            let mut docs = Vec::new();
            for doc in serde_yaml::Deserializer::from_str(&text) {
                docs.push(Value::deserialize(doc).map_err(yaml_error)?);
            }
            let v = match docs.len() {
                0 => Value::Null,
                1 => docs.pop().unwrap_or(Value::Null),
                _ => Value::Array(docs),
            };
            Ok((v, Vec::new()))
        }
        Format::Xml => Ok((xml::parse(&read_text(reader)?)?, Vec::new())),
        Format::Txt | Format::Md | Format::Html => {
            let text = read_text(reader)?;
            let v = serde_json::from_str(&text).unwrap_or(Value::String(text));
            Ok((v, Vec::new()))
        }
    }
}

/// One element of a file's list: a CSV/TSV row, built only as the caller needs it, or a value.
pub enum Item<'a> {
    Row(csv::Row<'a>),
    Value(Value),
}

impl Item<'_> {
    pub fn into_value(self) -> Value {
        match self {
            Item::Row(row) => Value::Object(row.to_map()),
            Item::Value(v) => v,
        }
    }

    /// A table row's column names (CSV, TSV); `None` for other items.
    pub fn columns(&self) -> Option<&[String]> {
        match self {
            Item::Row(row) => Some(row.names()),
            Item::Value(_) => None,
        }
    }

    /// Like `write_json`, with one more field (`key`: `value`) at the object's end, e.g. the
    /// file a row came from. An item that is not an object cannot take it.
    pub fn write_json_with(
        &self,
        out: &mut Vec<u8>,
        key: &str,
        value: &str,
    ) -> Result<(), InputError> {
        let start = out.len();
        self.write_json(out)?;
        if out.last() != Some(&b'}') {
            out.truncate(start);
            return Err(InputError::parse(format!(
                "'{key}' needs items that are objects (rows), and this file holds other values"
            )));
        }
        out.pop();
        if out.len() > start + 1 {
            out.push(b',');
        }
        serde_json::to_writer(&mut *out, key).map_err(|e| InputError::parse(e.to_string()))?;
        out.push(b':');
        serde_json::to_writer(&mut *out, value).map_err(|e| InputError::parse(e.to_string()))?;
        out.push(b'}');
        Ok(())
    }

    /// Appends the item to `out` as JSON (a row straight from its cells, never as a map).
    pub fn write_json(&self, out: &mut Vec<u8>) -> Result<(), InputError> {
        match self {
            Item::Row(row) => {
                row.write_json(out);
                Ok(())
            }
            Item::Value(v) => {
                serde_json::to_writer(out, v).map_err(|e| InputError::parse(e.to_string()))
            }
        }
    }
}

/// Calls `item` with each element of the file's list as a value; see `read_items`.
pub fn for_each_item(
    reader: &mut dyn Source,
    format: Format,
    options: &ReadOptions,
    item: &mut dyn FnMut(Value) -> Result<(), InputError>,
) -> Result<Vec<String>, InputError> {
    read_items(reader, format, options, &mut |it| item(it.into_value()))
}

/// Calls `item` with each element of the file's list, streaming formats that allow it (CSV,
/// TSV, JSONL, a JSON array); other formats are parsed whole and must be a list.
pub fn read_items(
    reader: &mut dyn Source,
    format: Format,
    options: &ReadOptions,
    item: &mut dyn FnMut(Item<'_>) -> Result<(), InputError>,
) -> Result<Vec<String>, InputError> {
    let io = |e: std::io::Error| InputError::parse(e.to_string());
    let start = reader.stream_position().map_err(io)?;
    let mut reader = BufReader::with_capacity(256 * 1024, reader);
    if format == Format::Parquet {
        return parquet_rows(&mut reader, item);
    }
    if format != Format::Sheet {
        let head = reader
            .fill_buf()
            .map_err(|e| InputError::parse(e.to_string()))?;
        check_text(head)?;
        // A BOM is removed, as when a file is read whole (found by fuzzing: a JSON list with
        // one failed in batches).
        if head.starts_with(b"\xef\xbb\xbf") {
            reader.consume(3);
        }
    }
    match format {
        Format::Csv | Format::Tsv => {
            let delimiter = if format == Format::Csv { b',' } else { b'\t' };
            let typing = &options.typing;
            let kinds = if typing.needs_plan() {
                let bom = reader.stream_position().map_err(io)? - start;
                let kinds = csv::plan(&mut reader, delimiter, typing)?;
                reader
                    .seek(std::io::SeekFrom::Start(start + bom))
                    .map_err(io)?;
                kinds
            } else {
                Vec::new()
            };
            csv::read(reader, delimiter, typing, kinds, &mut |row| {
                item(Item::Row(row))
            })
        }
        Format::Jsonl => {
            let mut line = String::new();
            let mut n = 0u64;
            loop {
                line.clear();
                n += 1;
                let read = reader.read_line(&mut line).map_err(|e| {
                    InputError::parse(format!(
                        "line {n}: {}",
                        if e.kind() == std::io::ErrorKind::InvalidData {
                            "not valid UTF-8".to_owned()
                        } else {
                            e.to_string()
                        }
                    ))
                    .at_line(n)
                })?;
                if read == 0 {
                    break;
                }
                let trimmed = line.trim_start_matches('\u{feff}').trim();
                if trimmed.is_empty() {
                    continue;
                }
                let v = serde_json::from_str(trimmed)
                    .map_err(|e| InputError::parse(format!("line {n}: {e}")).at_line(n))?;
                item(Item::Value(v))?;
            }
            Ok(Vec::new())
        }
        Format::Json => {
            let mut de = serde_json::Deserializer::from_reader(reader);
            serde::Deserializer::deserialize_seq(&mut de, Items(item)).map_err(json_error)?;
            de.end().map_err(json_error)?;
            Ok(Vec::new())
        }
        _ => {
            let (v, warnings) = parse_with(&mut reader, format, options)?;
            match v {
                Value::Array(items) => {
                    for v in items {
                        item(Item::Value(v))?;
                    }
                    Ok(warnings)
                }
                _ => Err(InputError::parse(
                    "the data is not a list, so it cannot be sent in batches",
                )),
            }
        }
    }
}

struct Items<'a>(&'a mut dyn FnMut(Item<'_>) -> Result<(), InputError>);

impl<'de> serde::de::Visitor<'de> for Items<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a JSON list")
    }
    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut seq: A) -> Result<(), A::Error> {
        use serde::de::Error;
        while let Some(v) = seq.next_element::<Value>()? {
            (self.0)(Item::Value(v)).map_err(|e| A::Error::custom(e.message))?;
        }
        Ok(())
    }
}

fn json_error(e: serde_json::Error) -> InputError {
    let line = e.line() as u64;
    let message = e.to_string();
    let message = if message.contains("recursion limit") {
        format!("line {line}: nested more than 128 levels deep")
    } else {
        message
    };
    InputError::parse(message).at_line(line)
}

fn yaml_error(e: serde_yaml::Error) -> InputError {
    let line = e.location().map(|l| l.line() as u64);
    let err = InputError::parse(e.to_string());
    match line {
        Some(l) => err.at_line(l),
        None => err,
    }
}

#[cfg(test)]
mod tests;

/// The rows of a Parquet file as objects (the file is read into memory: Parquet's footer is at
/// its end, and the reader wants random access).
fn parquet_rows(
    reader: &mut dyn Read,
    item: &mut dyn FnMut(Item<'_>) -> Result<(), InputError>,
) -> Result<Vec<String>, InputError> {
    let mut bytes = Vec::new();
    reader
        .read_to_end(&mut bytes)
        .map_err(|e| InputError::parse(e.to_string()))?;
    let mut failed = None;
    offload_query::parquet::for_each_row(offload_query::parquet::Bytes::from(bytes), &mut |row| {
        match item(Item::Value(Value::Object(row))) {
            Ok(()) => Ok(true),
            Err(e) => {
                failed = Some(e);
                Ok(false)
            }
        }
    })
    .map_err(|e| InputError::parse(e.to_string()))?;
    match failed {
        Some(e) => Err(e),
        None => Ok(Vec::new()),
    }
}
