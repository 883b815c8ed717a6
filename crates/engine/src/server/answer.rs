//! Building tool results: structured content plus one short text block, and errors with a
//! stable code.

use rmcp::model::{CallToolResult, ContentBlock as Content};
use serde::Serialize;
use serde_json::json;

use crate::ToolError;

/// A successful answer: `structuredContent` and a compact text for clients that ignore it.
pub fn structured<T: Serialize>(value: &T, text: String) -> CallToolResult {
    let mut result = CallToolResult::success(vec![Content::text(text)]);
    result.structured_content = Some(serde_json::to_value(value).unwrap_or_else(
        |e| json!({"error": {"code": "internal", "message": format!("cannot serialise the answer: {e}")}}),
    ));
    result
}

/// An error a model can act on: `isError`, a one-line message, `structuredContent.error`.
pub fn error(e: &ToolError) -> CallToolResult {
    let mut result = CallToolResult::error(vec![Content::text(format!(
        "Error [{}]: {}",
        e.code.as_str(),
        e.message
    ))]);
    result.structured_content = Some(json!({ "error": e.to_json() }));
    result
}
