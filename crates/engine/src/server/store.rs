//! `call_tool_and_store`, and the automatic offload of `call_tool` answers larger than the
//! inline budget: both call the upstream, then hand the result to the store on a blocking
//! thread and answer with a resource link and a short summary.

use std::sync::Arc;
use std::time::Instant;

use rmcp::model::{
    CallToolResult, ContentBlock, GetPromptResult, PromptMessage, ReadResourceResult, Resource,
    ResourceContents, Role,
};
use schemars::JsonSchema;
use serde::Serialize;
use serde_json::Value;

use super::answer;
use crate::store::{Destination, Origin, StoreRequest, Stored, Summary};
use crate::{Engine, ErrorCode, ToolError};
use offload_formats::units::human_bytes;

/// The structured answer of a store.
#[derive(Debug, Serialize, JsonSchema)]
pub struct StoredAnswer {
    /// Percent-encoded `file://` URI of the stored file.
    pub uri: String,
    pub path: String,
    pub bytes: u64,
    pub format: String,
    pub mime_type: String,
    pub summary: Summary,
    /// Binary files written beside it (images, audio, blobs).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<String>,
    /// Why it was stored, when Offload decided it (automatic offload).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// A table's header and first rows (CSV), a text's first lines and headings.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub preview: Option<String>,
    /// How to read or query it.
    pub next: String,
}

/// An upstream `isError` is not data: nothing is stored and the upstream's message is passed on.
pub fn upstream_tool_error(server: &str, tool: &str, result: &CallToolResult) -> ToolError {
    let text: Vec<&str> = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect();
    let message = if text.is_empty() {
        "no message".to_owned()
    } else {
        offload_formats::clip::clip(&text.join(" "), 2000).into_owned()
    };
    ToolError::new(
        ErrorCode::UpstreamToolError,
        format!("{server}/{tool} answered with an error, so nothing was stored: {message}"),
    )
    .with("server", server)
    .with("tool", tool)
    .with("upstream_message", message)
}

#[derive(Default)]
pub struct StoreOptions {
    pub description: Option<String>,
    pub storage_path: Option<String>,
    pub filename: Option<String>,
    pub format: Option<String>,
}

/// Stores `result` on a blocking thread.
pub async fn store(
    engine: &Arc<Engine>,
    server: &str,
    tool: &str,
    arguments: Value,
    result: CallToolResult,
    started: Instant,
    options: StoreOptions,
) -> Result<Stored, ToolError> {
    let engine = engine.clone();
    let (server, tool) = (server.to_owned(), tool.to_owned());
    let duration = started.elapsed();
    tokio::task::spawn_blocking(move || {
        let stored = engine.store.store(
            &engine.roots(),
            StoreRequest {
                origin: Origin {
                    server: &server,
                    tool: &tool,
                    arguments: &arguments,
                    description: options.description,
                    duration,
                },
                destination: Destination {
                    storage_path: options.storage_path.as_deref(),
                    filename: options.filename.as_deref(),
                    format: options.format.as_deref(),
                },
                result,
            },
        )?;
        crate::query::copy_stored(&engine, &stored);
        Ok(stored)
    })
    .await
    .unwrap_or_else(|e| {
        Err(ToolError::new(
            ErrorCode::Internal,
            format!("the store task failed: {e}"),
        ))
    })
}

/// A resource link, the summary text, and the structured answer.
pub fn stored_answer(stored: &Stored, note: Option<String>) -> CallToolResult {
    let r = &stored.record;
    let name = std::path::Path::new(&r.path)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_else(|| r.id.clone());
    let description = r
        .description
        .clone()
        .unwrap_or_else(|| format!("{}/{} response", r.server, r.tool));
    let link = Resource::new(r.uri.clone(), name)
        .with_mime_type(r.mime_type.clone())
        .with_size(r.bytes)
        .with_description(description);
    let next = next_step(&r.path, &stored.summary.kind, &r.format);
    let text = stored_text(stored, note.as_deref(), &next);
    let out = StoredAnswer {
        uri: r.uri.clone(),
        path: r.path.clone(),
        bytes: r.bytes,
        format: r.format.clone(),
        mime_type: r.mime_type.clone(),
        summary: stored.summary.clone(),
        files: r.files.iter().map(|f| f.path.clone()).collect(),
        note,
        preview: stored.preview.clone(),
        next: next.trim().to_owned(),
    };
    let mut result = answer::structured(&out, String::new());
    result.content = vec![ContentBlock::resource_link(link), ContentBlock::text(text)];
    result
}

/// What a model reads of a stored answer: the note, the summary, the preview and the next step.
fn stored_text(stored: &Stored, note: Option<&str>, next: &str) -> String {
    let mut text = match note {
        Some(n) => format!("{n} {}", stored.text),
        None => stored.text.clone(),
    };
    if let Some(preview) = &stored.preview {
        text.push('\n');
        text.push_str(preview);
    }
    text.push_str(next);
    text
}

/// A relayed prompt whose messages are over the inline budget: they are stored as one answer
/// (in order, embedded resources included) and the prompt becomes one message saying where,
/// with the preview — the budget holds for prompts as for tool answers.
pub async fn prompt_within_budget(
    engine: &Arc<Engine>,
    server: &str,
    prompt: &str,
    arguments: Value,
    mut result: GetPromptResult,
    started: Instant,
) -> GetPromptResult {
    let relayed =
        CallToolResult::success(result.messages.iter().map(|m| m.content.clone()).collect());
    if answer_size(&relayed) <= engine.limits().inline_bytes {
        return result;
    }
    let role = result
        .messages
        .first()
        .map_or(Role::User, |m| m.role.clone());
    let what = format!("the prompt {server}/{prompt}");
    let text = held(engine, server, prompt, arguments, relayed, started, &what).await;
    result.messages = vec![PromptMessage::new_text(role, text)];
    result
}

/// A relayed resource over the inline budget: its contents stored, and in their place one text
/// saying where, with the preview. The URI stays the one asked for.
pub async fn resource_within_budget(
    engine: &Arc<Engine>,
    server: &str,
    uri: &str,
    mut result: ReadResourceResult,
    started: Instant,
) -> ReadResourceResult {
    // A text is stored as the text it is (Markdown, JSON, a table...), a blob as a file.
    let relayed = CallToolResult::success(
        result
            .contents
            .iter()
            .map(|c| match c {
                ResourceContents::TextResourceContents { text, .. } => {
                    ContentBlock::text(text.clone())
                }
                other => ContentBlock::resource(other.clone()),
            })
            .collect(),
    );
    if answer_size(&relayed) <= engine.limits().inline_bytes {
        return result;
    }
    let what = format!("the resource {uri}");
    let arguments = serde_json::json!({ "uri": uri });
    let text = held(engine, server, uri, arguments, relayed, started, &what).await;
    result.contents = vec![ResourceContents::TextResourceContents {
        uri: uri.to_owned(),
        mime_type: Some("text/plain".into()),
        text,
        meta: None,
    }];
    result
}

/// Stores what `server` relayed and says, in one text, where it went and how to go on; or, when
/// it cannot be stored, that it was held back and why (never the flood itself).
async fn held(
    engine: &Arc<Engine>,
    server: &str,
    name: &str,
    arguments: Value,
    relayed: CallToolResult,
    started: Instant,
    what: &str,
) -> String {
    let budget = engine.limits().inline_bytes;
    let size = answer_size(&relayed);
    let options = StoreOptions {
        description: Some(format!(
            "{what}, stored because it was over the inline budget"
        )),
        ..StoreOptions::default()
    };
    match store(engine, server, name, arguments, relayed, started, options).await {
        Ok(stored) => {
            let note = format!(
                "{what} came to {}, over the inline budget ({}), so Offload stored it as a file.",
                human_bytes(size),
                human_bytes(budget)
            );
            let next = next_step(
                &stored.record.path,
                &stored.summary.kind,
                &stored.record.format,
            );
            stored_text(&stored, Some(&note), &next)
        }
        Err(e) => format!(
            "{what} came to {}, over the inline budget ({}), and could not be stored: {}",
            human_bytes(size),
            human_bytes(budget),
            e.message
        ),
    }
}

/// The one line saying how to go on from a stored file of this kind and format: SQL for a
/// table `query_file` reads, lines for a text, jq for other JSON and YAML.
fn next_step(path: &str, kind: &str, format: &str) -> String {
    let path = serde_json::to_string(path).unwrap_or_default();
    let base = format.split('.').next().unwrap_or(format);
    match (kind, base) {
        ("table" | "tables", "json" | "jsonl" | "csv" | "tsv" | "parquet") => format!(
            "\nAsk it with query_file {{\"path\": {path}, \"sql\": \"SELECT ... FROM data\"}}, or read rows with read_file."
        ),
        ("text", "txt" | "md") => format!(
            "\nRead it by lines with read_file {{\"path\": {path}, \"offset\": 0, \"length\": 200}}."
        ),
        (_, "json" | "jsonl" | "yaml") => format!(
            "\nAsk it with query_file {{\"path\": {path}, \"jq\": \"...\"}}, or read it with read_file."
        ),
        _ => format!("\nRead it with read_file {{\"path\": {path}}}."),
    }
}

/// The size of an answer as a model receives it: a client shows the model either the text or
/// the structured content (its twin, as the spec asks servers to send both), so the larger of
/// the two counts, once; binary data and other blocks count as they travel.
pub fn answer_size(result: &CallToolResult) -> u64 {
    let (mut text, mut other) = (0usize, 0usize);
    for c in &result.content {
        match c {
            ContentBlock::Text(t) => text += t.text.len(),
            ContentBlock::Image(i) => other += i.data.len(),
            ContentBlock::Audio(a) => other += a.data.len(),
            c => other += serde_json::to_vec(c).map(|v| v.len()).unwrap_or(0),
        }
    }
    let structured = result
        .structured_content
        .as_ref()
        .map_or(0, |v| serde_json::to_vec(v).map(|v| v.len()).unwrap_or(0));
    (text.max(structured) + other) as u64
}

/// Stores an answer that is over the inline budget and answers with the link instead.
pub async fn offload_if_large(
    engine: &Arc<Engine>,
    server: &str,
    tool: &str,
    arguments: Value,
    result: CallToolResult,
    started: Instant,
) -> CallToolResult {
    let size = answer_size(&result);
    let budget = engine.limits().inline_bytes;
    if result.is_error == Some(true) || size <= budget {
        return result;
    }
    let options = StoreOptions {
        description: Some(format!(
            "{server}/{tool} answer, stored because it was over the inline budget"
        )),
        ..StoreOptions::default()
    };
    let note = format!(
        "The answer was larger than the inline budget ({}), so Offload stored it as a file instead of returning it; read it with read_file or get_file_schema.",
        human_bytes(budget)
    );
    match store(engine, server, tool, arguments, result, started, options).await {
        Ok(stored) => stored_answer(&stored, Some(note)),
        Err(e) => answer::error(&ToolError::new(
            e.code,
            format!(
                "the answer ({}) is larger than the inline budget and could not be stored: {}",
                human_bytes(size),
                e.message
            ),
        )),
    }
}

#[cfg(test)]
mod tests {
    use super::next_step;

    #[test]
    fn the_next_step_fits_the_stored_files_kind_and_format() {
        let next = |kind, format| next_step("/r/a b.x", kind, format);
        assert!(next("table", "csv.gz").contains(r#"query_file {"path": "/r/a b.x", "sql""#));
        assert!(next("table", "parquet").contains("\"sql\""));
        assert!(next("text", "md").contains("Read it by lines"));
        assert!(next("text", "json").contains("\"jq\""));
        assert!(next("object", "yaml").contains("\"jq\""));
        assert_eq!(
            next("table", "html"),
            "\nRead it with read_file {\"path\": \"/r/a b.x\"}."
        );
    }
}
