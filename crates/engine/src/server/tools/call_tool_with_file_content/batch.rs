//! Batch mode: the file's list (or several files' lists, one after the other) is read by a
//! blocking thread, `batch_size` items at a time, through a channel of two batches, so memory
//! does not grow with the files; each batch is one upstream call, in order, and a batch may
//! hold the end of one file and the start of the next. A batch travels as JSON text written
//! item by item (a CSV row straight from its cells) and is spliced into the call's message,
//! never built as a tree.

use std::sync::Arc;

use rmcp::RoleServer;
use rmcp::model::CallToolResult;
use rmcp::service::RequestContext;
use serde_json::{Map, Value};

use crate::server::{answer, relay, store};

/// Failures listed one by one in the summary (all are counted).
const MAX_LISTED_FAILURES: usize = 20;
use super::{BatchFailure, BatchSummary, Params, progress, spliced};
use crate::events::{Event, EventKind};
use crate::{Engine, ErrorCode, ToolError};
use offload_formats::Format;
use offload_formats::inputs;

enum Chunk {
    /// A JSON list of `count` items.
    Items {
        json: Vec<u8>,
        count: u64,
    },
    Failed(String),
}

pub async fn run(
    engine: &Arc<Engine>,
    p: &Params,
    files: &[String],
    infer: inputs::Typing,
    base: Map<String, Value>,
    size: u64,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ToolError> {
    let Some(data_key) = p.data_key.clone().filter(|k| !k.is_empty()) else {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            "batch mode needs data_key: the argument that takes each batch's list (e.g. \"data_key\": \"rows\")",
        ));
    };
    if size == 0 {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            "batch_size must be at least 1",
        ));
    }
    let formats = files
        .iter()
        .map(|f| super::many::format_of(p, f))
        .collect::<Result<Vec<Format>, ToolError>>()?;
    let tag = p.source_file.unwrap_or(false);
    // Every path is checked before the first batch goes out (objects are checked when opened).
    let (roots, checked) = (engine.roots(), files.to_vec());
    tokio::task::spawn_blocking(move || {
        checked
            .iter()
            .filter(|f| !crate::objects::is_object_url(f))
            .try_for_each(|f| roots.resolve(f, crate::roots::Access::Read).map(|_| ()))
    })
    .await
    .map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string()))??;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Chunk>(2);
    let size = usize::try_from(size).unwrap_or(usize::MAX).min(1_000_000);
    let options = inputs::ReadOptions {
        typing: infer,
        sheet: p.sheet.clone(),
    };
    let (roots, files_read) = (engine.roots(), files.to_vec());
    let reader = tokio::task::spawn_blocking(move || {
        let mut json = Vec::new();
        let mut count = 0u64;
        let mut columns: Option<(String, Vec<String>)> = None;
        for (file, format) in files_read.iter().zip(formats) {
            // Opening an object in a bucket root asks the store: on this blocking thread.
            let source = match roots.open(file) {
                Ok((source, _)) => source,
                Err(e) => {
                    let _ = tx.blocking_send(Chunk::Failed(format!("{file}: {e}")));
                    return;
                }
            };
            let mut reader = source.reader();
            let mut first = true;
            let outcome = inputs::read_items(&mut reader, format, &options, &mut |item| {
                if first {
                    first = false;
                    if format.is_table()
                        && let Some(names) = item.columns()
                    {
                        super::many::same_columns(&mut columns, file, names.to_vec())
                            .map_err(|e| inputs::InputError::parse(e.message))?;
                    }
                }
                json.push(if count == 0 { b'[' } else { b',' });
                if tag {
                    item.write_json_with(&mut json, super::many::SOURCE_FILE, file)?;
                } else {
                    item.write_json(&mut json)?;
                }
                count += 1;
                if count == size as u64 {
                    json.push(b']');
                    // The next batch is likely about as long as this one.
                    let next = Vec::with_capacity(json.len());
                    let full = std::mem::replace(&mut json, next);
                    tx.blocking_send(Chunk::Items { json: full, count })
                        .map_err(|_| inputs::InputError::parse("stopped"))?;
                    count = 0;
                }
                Ok(())
            });
            match outcome {
                Ok(_) => {}
                Err(e) if e.message == "stopped" => return,
                Err(e) => {
                    let failure = if files_read.len() > 1 {
                        format!("{file}: {}", e.message)
                    } else {
                        e.message
                    };
                    let _ = tx.blocking_send(Chunk::Failed(failure));
                    return;
                }
            }
        }
        if count > 0 {
            json.push(b']');
            let _ = tx.blocking_send(Chunk::Items { json, count });
        }
    });

    let mut summary = BatchSummary {
        batches: 0,
        items: 0,
        succeeded: 0,
        failed_batches: 0,
        failed: Vec::new(),
        last_result: None,
    };
    let mut last: Option<CallToolResult> = None;
    let started_run = std::time::Instant::now();
    while let Some(chunk) = rx.recv().await {
        if ctx.ct.is_cancelled() {
            break;
        }
        let (json, count) = match chunk {
            Chunk::Items { json, count } => (json, count),
            Chunk::Failed(error) => {
                summary.failed_batches += 1;
                summary.failed.push(BatchFailure {
                    batch: summary.batches + 1,
                    first_item: summary.items,
                    error: format!("reading the file: {error}"),
                });
                break;
            }
        };
        summary.batches += 1;
        let first_item = summary.items;
        summary.items += count;
        let started = std::time::Instant::now();
        let outcome = send(engine, p, &base, &data_key, json, ctx).await;
        let code = match &outcome {
            Ok(r) if r.is_error == Some(true) => "upstream_tool_error".to_owned(),
            Ok(_) => "ok".to_owned(),
            Err(e) => e.code.as_str().to_owned(),
        };
        engine.events.emit(part_event(
            p,
            ctx,
            summary.batches,
            first_item,
            count,
            started,
            code,
        ));
        let failure = match outcome {
            Ok(result) => {
                let failed = result.is_error == Some(true);
                let text = result
                    .content
                    .iter()
                    .filter_map(|c| c.as_text().map(|t| t.text.clone()))
                    .collect::<Vec<_>>()
                    .join(" ");
                last = Some(result);
                failed.then(|| crate::server::clip(&text, 500).into_owned())
            }
            Err(e) => Some(e.message),
        };
        match failure {
            None => summary.succeeded += 1,
            Some(error) => {
                summary.failed_batches += 1;
                if summary.failed.len() < MAX_LISTED_FAILURES {
                    summary.failed.push(BatchFailure {
                        batch: summary.batches,
                        first_item,
                        error,
                    });
                }
                if !p.continue_on_error {
                    break;
                }
            }
        }
        progress(
            ctx,
            summary.items,
            format!("batch {}: {} items sent", summary.batches, summary.items),
        )
        .await;
    }
    drop(rx);
    let _ = reader.await;

    // The last answer rides along only while the whole summary stays within the inline budget;
    // a bigger one is stored and linked, as call_tool does.
    let mut stored_note = String::new();
    if let Some(result) = last {
        let size = store::answer_size(&result);
        let budget = engine.limits().inline_bytes;
        if size > budget / 2 {
            let options = store::StoreOptions {
                description: Some(format!(
                    "{}/{}: the last batch's answer (over the inline budget)",
                    p.server, p.tool_name
                )),
                ..store::StoreOptions::default()
            };
            let recorded = serde_json::json!({"file_paths": files, "batch": summary.batches});
            match store::store(
                engine,
                &p.server,
                &p.tool_name,
                recorded,
                result,
                started_run,
                options,
            )
            .await
            {
                Ok(stored) => {
                    stored_note = format!(
                        " The last batch's answer was larger than the inline budget, so it was stored at {}.",
                        stored.record.path
                    );
                    summary.last_result = store::stored_answer(&stored, None).structured_content;
                }
                Err(e) => {
                    stored_note = format!(
                        " The last batch's answer ({}) was larger than the inline budget and could not be stored: {}.",
                        offload_formats::units::human_bytes(size),
                        e.message
                    );
                }
            }
        } else {
            summary.last_result = serde_json::to_value(&result).ok();
        }
    }
    let from = match files {
        [one] => one.clone(),
        many => format!("{} files", many.len()),
    };
    let text = format!(
        "Sent {} items from {from} in {} batches of up to {size}: {} succeeded, {} failed{}.{stored_note}",
        summary.items,
        summary.batches,
        summary.succeeded,
        summary.failed_batches,
        match summary.failed.first() {
            Some(f) => format!(
                " (first failure: batch {} starting at item {}: {})",
                f.batch,
                f.first_item,
                crate::server::clip(&f.error, 300)
            ),
            None => String::new(),
        }
    );
    let mut result = answer::structured(&summary, text);
    if summary.failed_batches > 0 {
        result.is_error = Some(true);
    }
    Ok(result)
}

/// Calls the tool with one batch (JSON text) spliced in at `data_key`, if it fits the budget.
async fn send(
    engine: &Arc<Engine>,
    p: &Params,
    base: &Map<String, Value>,
    data_key: &str,
    json: Vec<u8>,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ToolError> {
    let budget = engine.limits().max_upstream_message_bytes;
    let (args, splice) = spliced(budget, base.clone(), data_key, json)?;
    let result = relay::forward_resolved(engine, &p.server, &p.tool_name, Some(args), ctx).await;
    drop(splice);
    result
}

/// The audit record of one batch, written as soon as the upstream answered it.
fn part_event(
    p: &Params,
    ctx: &RequestContext<RoleServer>,
    batch: u64,
    first_item: u64,
    items: u64,
    started: std::time::Instant,
    outcome: String,
) -> Event {
    Event {
        time: chrono::Utc::now(),
        kind: EventKind::BatchPart,
        tool: <super::CallToolWithFileContent as super::super::OwnTool>::NAME.to_owned(),
        client: crate::server::audit::client(ctx),
        server: Some(p.server.clone()),
        upstream_tool: Some(p.tool_name.clone()),
        file: Some(if p.file_path.is_empty() {
            p.file_paths
                .as_ref()
                .and_then(|f| f.first().cloned())
                .unwrap_or_default()
        } else {
            p.file_path.clone()
        }),
        format: p.file_format.clone(),
        bytes_in: 0,
        bytes_out: 0,
        bytes_kept: 0,
        rows: Some(items),
        batches: Some(batch),
        first_item: Some(first_item),
        duration_ms: started.elapsed().as_millis() as u64,
        outcome,
        message: None,
        stored: None,
        pid: std::process::id(),
        script: None,
    }
}
