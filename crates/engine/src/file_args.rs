//! A file read for a tool's arguments (`call_tool_with_file_content`): opened through the
//! guard within the input limit (`limits.maxInputBytes`; a compressed file capped as it is
//! decompressed), then parsed whole, or streamed item by item into a list's JSON text that
//! stops as soon as it is over the upstream message budget. On a blocking thread.

use std::sync::Arc;

use offload_formats::Format;
use offload_formats::inputs;
use offload_formats::units::human_bytes;
use serde_json::Value;

use crate::config::Limits;
use crate::roots::Roots;
use crate::{ErrorCode, ToolError};

/// Opens the file and checks its size against the input limit.
fn open_checked(
    roots: &Roots,
    limit: u64,
    path: &str,
    format: Format,
) -> Result<(offload_formats::files::Source, String), ToolError> {
    let (file, shown) = roots.open(path)?;
    if file.codec().is_some() {
        // What it holds is read as it is decompressed, and may not be more than the limit.
        let capped = file
            .capped(limit)
            .map_err(|e| ToolError::new(ErrorCode::PathUnusable, format!("{path}: {e}")))?;
        return Ok((capped, shown.display().to_string()));
    }
    let size = file.len().unwrap_or(0);
    if size > limit {
        let hint = if format.streams() {
            " If it holds a list, send it in parts with batch_size (no size limit then)."
        } else {
            ""
        };
        return Err(ToolError::new(
            ErrorCode::FileTooLarge,
            format!(
                "{path} is {}, more than the input limit of {} (limits.maxInputBytes).{hint}",
                human_bytes(size),
                human_bytes(limit)
            ),
        )
        .with("path", path)
        .with("bytes", size));
    }
    Ok((file, shown.display().to_string()))
}

/// Reads and parses the whole file on a blocking thread, after checking its size against
/// `limit` (the input limit).
pub async fn parsed(
    roots: Arc<Roots>,
    limit: u64,
    path: &str,
    format: Format,
    infer: inputs::Typing,
    sheet: Option<String>,
) -> Result<(Value, Vec<String>), ToolError> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let (file, display) = open_checked(&roots, limit, &path, format)?;
        let options = inputs::ReadOptions {
            typing: infer,
            sheet,
        };
        inputs::parse_with(&mut file.reader(), format, &options)
            .map_err(|e| crate::error::input_error(e, &display, format))
    })
    .await
    .map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string()))?
}

/// Streams the file's list into JSON text on a blocking thread (item by item, never a tree),
/// stopping as soon as it is over the message budget. Returns the JSON and the item count.
pub async fn list_json(
    roots: Arc<Roots>,
    limits: Arc<Limits>,
    path: &str,
    format: Format,
    infer: inputs::Typing,
) -> Result<(Vec<u8>, u64, Vec<String>), ToolError> {
    let path = path.to_owned();
    tokio::task::spawn_blocking(move || {
        let (file, display) = open_checked(&roots, limits.max_input_bytes, &path, format)?;
        let budget = limits.max_upstream_message_bytes;
        let size = file.len().unwrap_or(0);
        // JSON of a CSV is about twice its size; capacity is only address space until used.
        let mut json = Vec::with_capacity(size.saturating_mul(2).min(budget + 1) as usize);
        json.push(b'[');
        let mut items = 0u64;
        let mut over = false;
        let options = inputs::ReadOptions {
            typing: infer,
            sheet: None,
        };
        let read = inputs::read_items(&mut file.reader(), format, &options, &mut |item| {
            if items > 0 {
                json.push(b',');
            }
            item.write_json(&mut json)?;
            items += 1;
            if json.len() as u64 > budget {
                over = true;
                return Err(inputs::InputError::parse("over the message budget"));
            }
            Ok(())
        });
        if over {
            return Err(crate::budget::too_large(
                budget,
                json.len() as u64,
                true,
                true,
            ));
        }
        let warnings = read.map_err(|e| crate::error::input_error(e, &display, format))?;
        json.push(b']');
        Ok((json, items, warnings))
    })
    .await
    .map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string()))?
}
