//! What a tool's result holds, read for assertions.

use rmcp::model::CallToolResult;
use serde_json::Value;

/// The concatenated text blocks of a result.
pub fn text(result: &CallToolResult) -> String {
    result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.clone()))
        .collect::<Vec<_>>()
        .join("\n")
}

/// The structured content of a result (panics when there is none).
pub fn structured(result: &CallToolResult) -> &Value {
    result
        .structured_content
        .as_ref()
        .expect("structuredContent")
}

/// A `read_file` answer as one value, rebuilt from what travels: its numbers from
/// `_meta["dev.offload/page"]`, and from its text block (after the header line) `content`, or
/// for sheets and tables `rows` (a JSON array a line, under a line of column names when the
/// numbers list `columns`). Panics when the answer is not a page.
pub fn page(result: &CallToolResult) -> Value {
    let mut page = result
        .meta
        .as_ref()
        .and_then(|m| m.get("dev.offload/page"))
        .unwrap_or_else(|| panic!("not a page: {result:?}"))
        .clone();
    let text = result
        .content
        .iter()
        .find_map(|c| c.as_text().map(|t| t.text.clone()))
        .unwrap_or_default();
    let body = text.split_once('\n').map_or("", |(_, body)| body);
    match page["kind"].as_str() {
        Some("sheet" | "table") => {
            let mut lines = body.lines();
            if page.get("columns").is_some() {
                lines.next();
            }
            let rows: Vec<Value> = lines
                .map(|l| serde_json::from_str(l).unwrap_or_else(|e| panic!("{e}: {l}")))
                .collect();
            page["rows"] = Value::Array(rows);
        }
        Some("image") => {}
        _ => page["content"] = Value::String(body.to_owned()),
    }
    page
}

/// `structuredContent.error.code` of an error result.
pub fn error_code(result: &CallToolResult) -> String {
    assert_eq!(
        result.is_error,
        Some(true),
        "expected an error, got {result:?}"
    );
    structured(result)["error"]["code"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}
