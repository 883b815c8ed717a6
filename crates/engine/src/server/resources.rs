//! Stored responses as MCP resources: `resources/list` (newest first, paginated) and
//! `resources/read` (text or blob by MIME type, through the path guard).

use std::collections::HashSet;

use base64::Engine as _;
use rmcp::ErrorData as McpError;
use rmcp::model::{ListResourcesResult, ReadResourceResult, Resource, ResourceContents};

use crate::Engine;
use crate::store::{Record, Store};

const PAGE: usize = 100;

/// A page of stored responses, and (for the first page) the URIs of all of them, which an
/// upstream resource must not take. Reads the records index: call it off the async threads.
pub fn list(
    store: &Store,
    cursor: Option<&str>,
) -> Result<(ListResourcesResult, Option<HashSet<String>>), McpError> {
    let records = store.records();
    let start: usize = match cursor {
        None => 0,
        Some(c) => c
            .parse()
            .map_err(|_| McpError::invalid_params(format!("invalid cursor '{c}'"), None))?,
    };
    let end = (start + PAGE).min(records.len());
    let page: Vec<Resource> = records
        .get(start..end)
        .unwrap_or_default()
        .iter()
        .flat_map(resources_of)
        .collect();
    let mut result = ListResourcesResult::with_all_items(page);
    if end < records.len() {
        result.next_cursor = Some(end.to_string());
    }
    let uris = cursor.is_none().then(|| {
        records
            .iter()
            .flat_map(|r| {
                std::iter::once(r.uri.clone()).chain(r.files.iter().map(|f| f.uri.clone()))
            })
            .collect()
    });
    Ok((result, uris))
}

fn resources_of(r: &Record) -> Vec<Resource> {
    let name = |path: &str| {
        std::path::Path::new(path)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    };
    let description = r.description.clone().unwrap_or_else(|| {
        format!(
            "{}/{} response of {}",
            r.server,
            r.tool,
            r.time.format("%Y-%m-%d %H:%M UTC")
        )
    });
    let mut out = vec![
        Resource::new(r.uri.clone(), name(&r.path))
            .with_title(format!("{}/{}", r.server, r.tool))
            .with_description(description)
            .with_mime_type(r.mime_type.clone())
            .with_size(r.bytes),
    ];
    for f in &r.files {
        out.push(
            Resource::new(f.uri.clone(), name(&f.path))
                .with_description(format!("binary part of {}", name(&r.path)))
                .with_mime_type(f.mime_type.clone())
                .with_size(f.bytes),
        );
    }
    out
}

/// The stored file behind `uri` (a response or one of its parts) and its MIME type.
fn stored(records: &[Record], uri: &str) -> Option<(String, String)> {
    records.iter().find_map(|r| {
        if r.uri == uri {
            return Some((r.path.clone(), r.mime_type.clone()));
        }
        r.files
            .iter()
            .find(|f| f.uri == uri)
            .map(|f| (f.path.clone(), f.mime_type.clone()))
    })
}

/// Whether `uri` is a stored response's (or one of its parts'). Reads the records index: call
/// it off the async threads.
pub fn owns(store: &Store, uri: &str) -> bool {
    stored(&store.records(), uri).is_some()
}

/// Reads the stored response `uri`; `None` when no stored response has it (it may be an
/// upstream's). Call it off the async threads.
pub fn read(engine: &Engine, uri: &str) -> Result<Option<ReadResourceResult>, McpError> {
    let Some((path, mime)) = stored(&engine.store.records(), uri) else {
        return Ok(None);
    };
    let (source, _) = engine
        .roots()
        .open(&path)
        .map_err(|e| McpError::resource_not_found(format!("{uri} cannot be read: {e}"), None))?;
    let limit = engine.limits().max_upstream_message_bytes;
    let size = source.len().unwrap_or(0);
    if size > limit {
        return Err(McpError::invalid_params(
            format!(
                "{path} is {size} bytes, more than a resource read may return ({limit}); read it in pages with read_file"
            ),
            None,
        ));
    }
    let mut bytes = Vec::with_capacity(size as usize);
    std::io::Read::read_to_end(
        &mut std::io::Read::take(source.reader(), limit + 1),
        &mut bytes,
    )
    .map_err(|e| McpError::internal_error(format!("cannot read {path}: {e}"), None))?;
    let textual = mime.starts_with("text/")
        || mime.contains("json")
        || mime.contains("yaml")
        || mime.contains("xml");
    let contents = match (textual, String::from_utf8(bytes)) {
        (true, Ok(text)) => ResourceContents::TextResourceContents {
            uri: uri.to_owned(),
            mime_type: Some(mime),
            text,
            meta: None,
        },
        (_, Ok(text)) => blob(uri, mime, text.into_bytes()),
        (_, Err(e)) => blob(uri, mime, e.into_bytes()),
    };
    Ok(Some(ReadResourceResult::new(vec![contents])))
}

fn blob(uri: &str, mime: String, bytes: Vec<u8>) -> ResourceContents {
    ResourceContents::BlobResourceContents {
        uri: uri.to_owned(),
        mime_type: Some(mime),
        blob: base64::engine::general_purpose::STANDARD.encode(bytes),
        meta: None,
    }
}
