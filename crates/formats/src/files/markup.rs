//! Structure of JSON, JSONL, YAML and XML files, streamed: JSON through a serde visitor that keeps
//! only the merged shape, JSONL line by line, YAML documents (up to a size limit, since the YAML
//! parser holds a document's events), XML as the root and its children's names, counts and
//! attributes (quick-xml; no DTD, no entity expansion).

use std::collections::BTreeSet;
use std::io::{BufRead, BufReader, Read};

use indexmap::IndexMap;
use quick_xml::events::Event;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeSeed;
use serde_json::Value;

use super::shape::Shape;
use super::{At, FileError, Observer, Probe, stopped};

/// YAML above this size gets the text schema (the parser would hold the whole document).
pub const YAML_LIMIT: u64 = 32 << 20;
/// Distinct child element names listed under the XML root.
const XML_CHILDREN: usize = 50;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DataSchema {
    /// `object`, `array`, ... (several joined with `|` when documents differ).
    pub root_type: String,
    /// Elements of the top-level array (JSON, YAML), or values (JSONL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub element_count: Option<u64>,
    /// YAML documents in the file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub documents: Option<u64>,
    /// The merged shape: `{type, keys: {name: {type, optional?, ...}}, items?}`.
    pub shape: Value,
    /// The same, compact: `[{id: integer, email?: string|null}]`.
    pub outline: String,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct XmlSchema {
    pub root: String,
    pub root_attributes: Vec<String>,
    /// Elements in the whole document.
    pub element_count: u64,
    /// The root's child elements by name, in first-seen order.
    pub children: Vec<XmlChild>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct XmlChild {
    pub name: String,
    pub count: u64,
    pub attributes: Vec<String>,
    /// Names of the elements inside them.
    pub children: Vec<String>,
}

/// Reads the file from the start of its data (after any BOM), watched by `observer`.
fn body<'a>(probe: &'a Probe, observer: &'a dyn Observer) -> BufReader<impl Read + 'a> {
    let start = probe.encoding.map_or(0, |e| e.bom_len);
    BufReader::with_capacity(
        256 * 1024,
        At::watched(&probe.file, start, probe.size, observer),
    )
}

fn data_schema(shape: &Shape, documents: Option<u64>) -> DataSchema {
    let json = shape.to_json();
    let root_type = match &json["type"] {
        Value::Array(names) => names
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        other => other.as_str().unwrap_or("unknown").to_owned(),
    };
    let element_count = (root_type.contains("array")).then(|| shape.item_count());
    DataSchema {
        root_type,
        element_count,
        documents,
        shape: json,
        outline: crate::clip::clip(&shape.render(), 2000).into_owned(),
    }
}

pub fn json(probe: &Probe, observer: &dyn Observer) -> Result<DataSchema, FileError> {
    not_utf16(probe)?;
    let mut shape = Shape::default();
    let mut de = serde_json::Deserializer::from_reader(body(probe, observer));
    shape
        .seed(0)
        .deserialize(&mut de)
        .and_then(|()| de.end())
        .map_err(|e| stopped(observer, json_error(&e, None)))?;
    Ok(data_schema(&shape, None))
}

pub fn jsonl(probe: &Probe, observer: &dyn Observer) -> Result<DataSchema, FileError> {
    not_utf16(probe)?;
    // Each line is one value; their shapes merge into the shape of an array's items.
    let mut items = Shape::default();
    let mut reader = body(probe, observer);
    let mut line = Vec::new();
    let mut number = 0u64;
    let mut values = 0u64;
    loop {
        line.clear();
        let read = reader.read_until(b'\n', &mut line);
        if read.map_err(|e| stopped(observer, e.into()))? == 0 {
            break;
        }
        number += 1;
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        let mut de = serde_json::Deserializer::from_slice(&line);
        items
            .seed(1)
            .deserialize(&mut de)
            .and_then(|()| de.end())
            .map_err(|e| json_error(&e, Some(number)))?;
        values += 1;
    }
    let mut schema = data_schema(&items, None);
    schema.root_type = "lines".into();
    schema.element_count = Some(values);
    schema.outline = format!("{values} lines of {}", schema.outline);
    Ok(schema)
}

pub fn yaml(probe: &Probe, observer: &dyn Observer) -> Result<DataSchema, FileError> {
    not_utf16(probe)?;
    if probe.size > YAML_LIMIT {
        return Err(FileError::TooLarge(format!(
            "YAML over {} MiB is described as text",
            YAML_LIMIT >> 20
        )));
    }
    let mut shape = Shape::default();
    let mut documents = 0u64;
    for document in serde_yaml::Deserializer::from_reader(body(probe, observer)) {
        shape
            .seed(0)
            .deserialize(document)
            .map_err(|e| stopped(observer, yaml_error(&e)))?;
        documents += 1;
    }
    Ok(data_schema(&shape, Some(documents)))
}

fn yaml_error(e: &serde_yaml::Error) -> FileError {
    match e.location() {
        Some(l) => FileError::Parse(format!(
            "not valid YAML at line {}, column {}: {e}",
            l.line(),
            l.column()
        )),
        None => FileError::Parse(format!("not valid YAML: {e}")),
    }
}

pub fn xml(probe: &Probe, observer: &dyn Observer) -> Result<XmlSchema, FileError> {
    not_utf16(probe)?;
    let mut reader = quick_xml::Reader::from_reader(body(probe, observer));
    reader.config_mut().check_end_names = true;
    let mut buf = Vec::new();
    let mut depth = 0usize;
    let mut root: Option<(String, Vec<String>)> = None;
    let mut elements = 0u64;
    let mut children: IndexMap<String, (u64, BTreeSet<String>, BTreeSet<String>)> = IndexMap::new();
    let mut current_child: Option<String> = None;
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| {
            let error = FileError::Parse(format!(
                "not valid XML near byte {}: {e}",
                reader.buffer_position()
            ));
            stopped(observer, error)
        })?;
        let (start, empty) = match &event {
            Event::Start(e) => (Some(e), false),
            Event::Empty(e) => (Some(e), true),
            Event::End(_) => {
                depth = depth.saturating_sub(1);
                if depth == 1 {
                    current_child = None;
                }
                (None, false)
            }
            Event::DocType(_) => {
                return Err(FileError::Parse(
                    "XML with a DTD is refused (entities are never expanded)".into(),
                ));
            }
            Event::Eof => break,
            _ => (None, false),
        };
        if let Some(e) = start {
            elements += 1;
            let name = e.name().as_ref().to_owned();
            let attrs: Vec<String> = e
                .attributes()
                .filter_map(Result::ok)
                .map(|a| a.key.as_ref().to_owned())
                .collect();
            match depth {
                0 => root = Some((name, attrs)),
                1 => {
                    if children.len() < XML_CHILDREN || children.contains_key(&name) {
                        let entry = children.entry(name.clone()).or_default();
                        entry.0 += 1;
                        entry.1.extend(attrs);
                        current_child = Some(name);
                    } else {
                        current_child = None;
                    }
                }
                2 => {
                    if let Some(child) = current_child.as_ref().and_then(|c| children.get_mut(c))
                        && child.2.len() < XML_CHILDREN
                    {
                        child.2.insert(name);
                    }
                }
                _ => {}
            }
            if !empty {
                depth += 1;
            } else if depth == 1 {
                current_child = None;
            }
        }
        buf.clear();
    }
    let (root, root_attributes) =
        root.ok_or_else(|| FileError::Parse("the XML document has no root element".into()))?;
    Ok(XmlSchema {
        root,
        root_attributes,
        element_count: elements,
        children: children
            .into_iter()
            .map(|(name, (count, attrs, kids))| XmlChild {
                name,
                count,
                attributes: attrs.into_iter().collect(),
                children: kids.into_iter().collect(),
            })
            .collect(),
    })
}

fn not_utf16(probe: &Probe) -> Result<(), FileError> {
    match probe.encoding {
        Some(e) if e.is_utf16() => Err(FileError::Invalid(
            "structure of UTF-16 files is not computed; they are described as text".into(),
        )),
        _ => Ok(()),
    }
}

fn json_error(e: &serde_json::Error, line: Option<u64>) -> FileError {
    match line {
        Some(n) => FileError::Parse(format!("line {n} is not valid JSON: {e}")),
        None => FileError::Parse(format!("not valid JSON: {e}")),
    }
}
