//! Word documents (`.docx`): the text of the document part as Markdown — headings as `#`, list
//! items as `-`, tables as Markdown tables — paged by blocks (a paragraph, a heading, a list
//! item or a whole table); the schema counts them and gives the outline (the headings).
//!
//! A `.docx` is a zip. Only two parts are read, by name, each through a cap on what it may
//! decompress to (a zip bomb stops there with a clear error): `word/document.xml` and, for
//! the names of heading styles, `word/styles.xml`. Nothing is extracted to disk.

use std::collections::{HashMap, HashSet};
use std::io::{BufReader, Read};

use quick_xml::events::{BytesStart, Event};
use schemars::JsonSchema;
use serde::Serialize;

use super::reading::{ReadAnswer, ReadRequest};
use super::{FileError, Probe};

/// The largest `.docx` opened.
const MAX_FILE: u64 = 256 << 20;
/// What the document part may decompress to.
const MAX_DOCUMENT: u64 = 64 << 20;
/// What the styles part may decompress to.
const MAX_STYLES: u64 = 8 << 20;
/// Headings listed in the schema's outline.
const OUTLINE: usize = 200;

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct DocxSchema {
    /// Blocks `read_file` pages by: paragraphs (headings and list items included) and tables.
    pub blocks: u64,
    pub paragraphs: u64,
    pub tables: u64,
    pub words: u64,
    /// The headings: level (1 = top), text and the block to read from.
    pub outline: Vec<Heading>,
}

#[derive(Debug, Clone, Serialize, JsonSchema)]
pub struct Heading {
    pub level: u8,
    pub text: String,
    pub block: u64,
}

/// One block of the document as Markdown.
#[derive(Debug, Clone, PartialEq)]
struct Block {
    markdown: String,
    heading: Option<u8>,
    table: bool,
}

pub fn schema(probe: &Probe) -> Result<DocxSchema, FileError> {
    let blocks = blocks(probe)?;
    let tables = blocks.iter().filter(|b| b.table).count() as u64;
    let words = blocks
        .iter()
        .map(|b| {
            b.markdown
                .split_whitespace()
                .filter(|w| w.chars().any(char::is_alphanumeric))
                .count() as u64
        })
        .sum();
    let outline = blocks
        .iter()
        .enumerate()
        .filter_map(|(i, b)| {
            b.heading.map(|level| Heading {
                level,
                text: crate::clip::clip(b.markdown.trim_start_matches('#').trim(), 160)
                    .into_owned(),
                block: i as u64,
            })
        })
        .take(OUTLINE)
        .collect();
    Ok(DocxSchema {
        blocks: blocks.len() as u64,
        paragraphs: blocks.len() as u64 - tables,
        tables,
        words,
        outline,
    })
}

pub fn read(probe: Probe, request: &ReadRequest, budget: usize) -> Result<ReadAnswer, FileError> {
    if request.sheet.is_some() || request.range.is_some() || request.byte_offset.is_some() {
        return Err(FileError::Invalid(
            "Word documents are paged by offset (0-based first block) and length (blocks: \
             paragraphs and tables)"
                .into(),
        ));
    }
    let blocks = blocks(&probe)?;
    let total = blocks.len() as u64;
    // A negative offset counts from the end, as for lines.
    let from = if request.offset < 0 {
        total.saturating_sub(request.offset.unsigned_abs())
    } else {
        (request.offset as u64).min(total)
    };
    let mut out = String::new();
    let mut count = 0u64;
    let mut truncated = false;
    for block in blocks
        .iter()
        .skip(from as usize)
        .take(request.length as usize)
    {
        let piece = &block.markdown;
        if out.len() + piece.len() + 2 > budget {
            truncated = true;
            if count == 0 {
                out.push_str(&crate::clip::clip(piece, budget));
                count = 1;
            }
            break;
        }
        out.push_str(piece);
        out.push_str("\n\n");
        count += 1;
    }
    let next = from + count;
    Ok(ReadAnswer {
        kind: "document".into(),
        content: Some(out.trim_end().to_owned()),
        offset: Some(from),
        count: Some(count),
        total: Some(total),
        next_offset: (next < total).then_some(next),
        truncated,
        ..ReadAnswer::default()
    })
}

/// The document's blocks, in order.
fn blocks(probe: &Probe) -> Result<Vec<Block>, FileError> {
    if probe.size > MAX_FILE {
        return Err(FileError::TooLarge(format!(
            "the Word document is {} MiB; documents over {} MiB are not read",
            probe.size >> 20,
            MAX_FILE >> 20
        )));
    }
    let mut zip = zip::ZipArchive::new(BufReader::new(probe.file.reader()))
        .map_err(|e| FileError::Parse(format!("not a readable Word document (zip): {e}")))?;
    let styles = match part(&mut zip, "word/styles.xml", MAX_STYLES) {
        Ok(Some(xml)) => Styles::of(&xml),
        _ => Styles::default(),
    };
    let document = part(&mut zip, "word/document.xml", MAX_DOCUMENT)?.ok_or_else(|| {
        FileError::Parse("not a Word document: it has no word/document.xml".into())
    })?;
    parse(&document, &styles)
}

/// A part of the zip, decompressed up to `cap` bytes (more is an error, not a truncation).
fn part<R: Read + std::io::Seek>(
    zip: &mut zip::ZipArchive<R>,
    name: &str,
    cap: u64,
) -> Result<Option<Vec<u8>>, FileError> {
    let entry = match zip.by_name(name) {
        Ok(entry) => entry,
        Err(zip::result::ZipError::FileNotFound) => return Ok(None),
        Err(e) => return Err(FileError::Parse(format!("{name} cannot be read: {e}"))),
    };
    let mut bytes = Vec::new();
    entry
        .take(cap + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| FileError::Parse(format!("{name} cannot be read: {e}")))?;
    if bytes.len() as u64 > cap {
        return Err(FileError::TooLarge(format!(
            "{name} decompresses to more than {} MiB (a zip bomb, or a document too big to read)",
            cap >> 20
        )));
    }
    Ok(Some(bytes))
}

/// What paragraph styles mean, by style id (ids are localised, names are not).
#[derive(Debug, Default)]
struct Styles {
    /// Heading level: styles named `heading N` or `Title`, or with an outline level.
    headings: HashMap<String, u8>,
    /// List styles: numbered in the style itself, or named `List Bullet`/`List Number`.
    lists: HashSet<String>,
}

impl Styles {
    fn of(xml: &[u8]) -> Self {
        let mut out = Self::default();
        let mut reader = quick_xml::Reader::from_reader(xml);
        let mut buf = Vec::new();
        let mut current: Option<String> = None;
        loop {
            match reader.read_event_into(&mut buf) {
                Ok(Event::Start(e)) if e.local_name().into_inner() == "style" => {
                    current = attribute(&e, "styleId");
                }
                Ok(Event::End(e)) if e.local_name().into_inner() == "style" => current = None,
                Ok(Event::Start(e) | Event::Empty(e)) => {
                    let Some(id) = &current else { continue };
                    match e.local_name().into_inner() {
                        "name" => {
                            let name = attribute(&e, "val").unwrap_or_default();
                            if let Some(level) = level_of_name(&name) {
                                out.headings.insert(id.clone(), level);
                            }
                            let lower = name.to_ascii_lowercase();
                            if lower.starts_with("list bullet") || lower.starts_with("list number")
                            {
                                out.lists.insert(id.clone());
                            }
                        }
                        "numPr" => {
                            out.lists.insert(id.clone());
                        }
                        "outlineLvl" => {
                            if let Some(level) =
                                attribute(&e, "val").and_then(|v| v.parse::<u8>().ok())
                            {
                                out.headings.entry(id.clone()).or_insert((level + 1).min(6));
                            }
                        }
                        _ => {}
                    }
                }
                Ok(Event::Eof) | Err(_) => break,
                _ => {}
            }
            buf.clear();
        }
        out
    }
}

/// `heading 2` → 2, `Title` → 1 (style names are English whatever the document's language).
fn level_of_name(name: &str) -> Option<u8> {
    let lower = name.to_ascii_lowercase();
    if lower == "title" {
        return Some(1);
    }
    let n = lower.strip_prefix("heading")?.trim().parse::<u8>().ok()?;
    (1..=9).contains(&n).then_some(n.min(6))
}

fn attribute(e: &BytesStart, local: &str) -> Option<String> {
    e.attributes()
        .flatten()
        .find_map(|a| (a.key.local_name().into_inner() == local).then(|| a.value.to_string()))
}

/// A paragraph being read.
#[derive(Default)]
struct Paragraph {
    text: String,
    style: Option<String>,
    list: Option<u8>,
}

/// The document part as blocks. Text is taken from `w:t` only (not field codes or deleted
/// text); a table becomes one block, a table inside a table text in its cell.
fn parse(xml: &[u8], styles: &Styles) -> Result<Vec<Block>, FileError> {
    let mut reader = quick_xml::Reader::from_reader(xml);
    reader.config_mut().check_end_names = true;
    let mut buf = Vec::new();
    let mut blocks = Vec::new();
    let mut paragraph: Option<Paragraph> = None;
    let mut in_text = false;
    let mut tables = 0usize; // depth
    let mut rows: Vec<Vec<String>> = Vec::new();
    loop {
        let event = reader.read_event_into(&mut buf).map_err(|e| {
            FileError::Parse(format!(
                "word/document.xml is not well-formed XML at byte {}: {e}",
                reader.buffer_position()
            ))
        })?;
        match event {
            Event::DocType(_) => {
                return Err(FileError::Parse(
                    "word/document.xml has a DTD; it is not read".into(),
                ));
            }
            Event::Start(e) => match e.local_name().into_inner() {
                "p" => paragraph = Some(Paragraph::default()),
                "t" => in_text = true,
                "tbl" => {
                    tables += 1;
                    if tables == 1 {
                        rows.clear();
                    }
                }
                "tr" if tables == 1 => rows.push(Vec::new()),
                "tc" if tables == 1 => {
                    if let Some(row) = rows.last_mut() {
                        row.push(String::new());
                    }
                }
                other => properties(other, &e, paragraph.as_mut()),
            },
            Event::Empty(e) => match e.local_name().into_inner() {
                "tab" => push(paragraph.as_mut(), "\t"),
                "br" | "cr" => push(paragraph.as_mut(), "\n"),
                other => properties(other, &e, paragraph.as_mut()),
            },
            Event::Text(t) if in_text => {
                push(
                    paragraph.as_mut(),
                    &t.xml_content(quick_xml::XmlVersion::Implicit1_0),
                );
            }
            Event::GeneralRef(r) if in_text => {
                let c = match r.resolve_char_ref() {
                    Ok(Some(c)) => Some(c),
                    _ => match &*r {
                        "amp" => Some('&'),
                        "lt" => Some('<'),
                        "gt" => Some('>'),
                        "quot" => Some('"'),
                        "apos" => Some('\''),
                        _ => None, // custom entities are not expanded
                    },
                };
                if let Some(c) = c {
                    push(paragraph.as_mut(), c.encode_utf8(&mut [0; 4]));
                }
            }
            Event::End(e) => match e.local_name().into_inner() {
                "t" => in_text = false,
                "p" => {
                    let Some(p) = paragraph.take() else { continue };
                    let text = p.text.trim();
                    if tables > 0 {
                        if let Some(cell) = rows.last_mut().and_then(|r| r.last_mut())
                            && !text.is_empty()
                        {
                            if !cell.is_empty() {
                                cell.push(' ');
                            }
                            cell.push_str(text);
                        }
                    } else if !text.is_empty() {
                        blocks.push(paragraph_block(&p, text, styles));
                    }
                }
                "tbl" => {
                    tables = tables.saturating_sub(1);
                    if tables == 0 && rows.iter().any(|r| !r.is_empty()) {
                        blocks.push(Block {
                            markdown: table(&rows),
                            heading: None,
                            table: true,
                        });
                        rows.clear();
                    }
                }
                _ => {}
            },
            Event::Eof => break,
            _ => {}
        }
        buf.clear();
    }
    Ok(blocks)
}

/// Paragraph properties: its style and list level.
fn properties(name: &str, e: &BytesStart, paragraph: Option<&mut Paragraph>) {
    let Some(p) = paragraph else { return };
    match name {
        "pStyle" => p.style = attribute(e, "val"),
        "numPr" => p.list = p.list.or(Some(0)),
        "ilvl" => p.list = attribute(e, "val").and_then(|v| v.parse().ok()).or(Some(0)),
        _ => {}
    }
}

fn push(paragraph: Option<&mut Paragraph>, text: &str) {
    if let Some(p) = paragraph {
        p.text.push_str(text);
    }
}

fn paragraph_block(p: &Paragraph, text: &str, styles: &Styles) -> Block {
    let style = p.style.as_deref();
    let level = style.and_then(|s| styles.headings.get(s).copied().or_else(|| level_of_name(s)));
    let list = p
        .list
        .or_else(|| style.is_some_and(|s| styles.lists.contains(s)).then_some(0));
    let one_line = |t: &str| t.lines().map(str::trim).collect::<Vec<_>>().join(" ");
    let markdown = match (level, list) {
        (Some(level), _) => format!("{} {}", "#".repeat(level as usize), one_line(text)),
        (None, Some(depth)) => {
            format!("{}- {}", "  ".repeat(depth.min(8) as usize), one_line(text))
        }
        (None, None) => text.to_owned(),
    };
    Block {
        markdown,
        heading: level,
        table: false,
    }
}

/// Rows as a Markdown table (the first row is the header; short rows are padded).
fn table(rows: &[Vec<String>]) -> String {
    let width = rows.iter().map(Vec::len).max().unwrap_or(0).max(1);
    let cell = |c: &str| c.replace('|', "\\|").replace('\n', " ");
    let line = |row: &[String]| {
        let mut cells: Vec<String> = row.iter().map(|c| cell(c)).collect();
        cells.resize(width, String::new());
        format!("| {} |", cells.join(" | "))
    };
    let mut rows = rows.iter().filter(|r| !r.is_empty());
    let mut out = String::new();
    if let Some(header) = rows.next() {
        out.push_str(&line(header));
        out.push('\n');
        out.push_str(&format!("|{}", " --- |".repeat(width)));
    }
    for row in rows {
        out.push('\n');
        out.push_str(&line(row));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    const W: &str = r#"xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main""#;

    fn document(body: &str) -> Vec<u8> {
        format!(r#"<?xml version="1.0"?><w:document {W}><w:body>{body}</w:body></w:document>"#)
            .into_bytes()
    }

    #[test]
    fn headings_lists_tables_and_text_become_markdown_blocks() {
        let styles = Styles {
            headings: [("Berschrift1".to_owned(), 1), ("Berschrift2".to_owned(), 2)].into(),
            lists: ["Aufzhlung".to_owned()].into(),
        };
        let xml = document(concat!(
            r#"<w:p><w:pPr><w:pStyle w:val="Berschrift1"/></w:pPr><w:r><w:t>Report</w:t></w:r></w:p>"#,
            r#"<w:p><w:r><w:t xml:space="preserve">Sales &amp; costs </w:t></w:r><w:r><w:t>grew.</w:t></w:r>"#,
            r#"<w:r><w:instrText>PAGE \* MERGEFORMAT</w:instrText></w:r><w:r><w:delText>old</w:delText></w:r></w:p>"#,
            r#"<w:p/>"#,
            r#"<w:p><w:pPr><w:numPr><w:ilvl w:val="1"/><w:numId w:val="3"/></w:numPr></w:pPr><w:r><w:t>a point</w:t></w:r></w:p>"#,
            r#"<w:tbl><w:tr><w:tc><w:p><w:r><w:t>Region</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>Total</w:t></w:r></w:p></w:tc></w:tr>"#,
            r#"<w:tr><w:tc><w:p><w:r><w:t>North|East</w:t></w:r></w:p><w:p><w:r><w:t>(2)</w:t></w:r></w:p></w:tc><w:tc><w:p><w:r><w:t>10</w:t></w:r></w:p></w:tc></w:tr></w:tbl>"#,
            r#"<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>By</w:t><w:br/><w:t>month</w:t></w:r></w:p>"#,
            r#"<w:p><w:pPr><w:pStyle w:val="Aufzhlung"/></w:pPr><w:r><w:t>styled item</w:t></w:r></w:p>"#,
        ));
        let blocks = parse(&xml, &styles).unwrap();
        let md: Vec<&str> = blocks.iter().map(|b| b.markdown.as_str()).collect();
        assert_eq!(
            md,
            [
                "# Report",
                "Sales & costs grew.",
                "  - a point",
                "| Region | Total |\n| --- | --- |\n| North\\|East (2) | 10 |",
                "## By month",
                "- styled item",
            ]
        );
        assert_eq!(
            blocks.iter().map(|b| b.heading).collect::<Vec<_>>(),
            [Some(1), None, None, None, Some(2), None]
        );
        assert!(blocks[3].table);
    }

    #[test]
    fn style_names_give_heading_levels_and_lists() {
        let styles = Styles::of(format!(concat!(
            r#"<w:styles {}><w:style w:type="paragraph" w:styleId="Titel"><w:name w:val="Title"/></w:style>"#,
            r#"<w:style w:styleId="berschrift3"><w:name w:val="heading 3"/></w:style>"#,
            r#"<w:style w:styleId="Custom"><w:name w:val="My Heading"/><w:pPr><w:outlineLvl w:val="1"/></w:pPr></w:style>"#,
            r#"<w:style w:styleId="Listenabsatz"><w:name w:val="List Bullet 2"/></w:style>"#,
            r#"<w:style w:styleId="Nummern"><w:name w:val="Steps"/><w:pPr><w:numPr><w:numId w:val="4"/></w:numPr></w:pPr></w:style>"#,
            r#"<w:style w:styleId="Normal"><w:name w:val="Normal"/></w:style></w:styles>"#), W).as_bytes());
        assert_eq!(styles.headings.get("Titel"), Some(&1));
        assert_eq!(styles.headings.get("berschrift3"), Some(&3));
        assert_eq!(styles.headings.get("Custom"), Some(&2));
        assert_eq!(styles.headings.get("Normal"), None);
        assert!(styles.lists.contains("Listenabsatz") && styles.lists.contains("Nummern"));
        assert!(!styles.lists.contains("Normal"));
    }

    #[test]
    fn hostile_xml_is_an_error_not_a_hang() {
        let dtd = br#"<?xml version="1.0"?><!DOCTYPE x [<!ENTITY a "aaaa">]><w:document><w:body/></w:document>"#;
        assert!(
            matches!(parse(dtd, &Styles::default()), Err(FileError::Parse(m)) if m.contains("DTD"))
        );
        let broken = document("<w:p><w:r><w:t>open</w:r></w:p>");
        assert!(matches!(
            parse(&broken, &Styles::default()),
            Err(FileError::Parse(_))
        ));
    }
}
