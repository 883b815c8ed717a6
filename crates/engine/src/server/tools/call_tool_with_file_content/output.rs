//! `output_format`: how the upstream's answer to `call_tool_with_file_content` is given back.
//! `json` (the default) is the result as the tool gave it; `string` its text only; `markdown`
//! its content rendered for reading (JSON as Markdown tables, key/value tables for other
//! values, text as it is; images and other blocks kept); `structured` its structured content
//! only; `raw` the whole upstream result, exactly, as JSON text.

use rmcp::model::{CallToolResult, ContentBlock};

use crate::{ErrorCode, ToolError};
use offload_formats::output::{Payload, markdown};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum OutputFormat {
    Json,
    String,
    Markdown,
    Structured,
    Raw,
}

impl OutputFormat {
    pub fn parse(name: Option<&str>) -> Result<Self, ToolError> {
        Ok(match name.map(str::to_ascii_lowercase).as_deref() {
            None | Some("json") => Self::Json,
            Some("string") | Some("text") => Self::String,
            Some("markdown") | Some("md") => Self::Markdown,
            Some("structured") => Self::Structured,
            Some("raw") => Self::Raw,
            Some(other) => {
                return Err(ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!(
                        "output_format '{other}' is not one of json, string, markdown, structured, raw"
                    ),
                ));
            }
        })
    }

    /// The answer in this format. An upstream `isError` stays one in every format.
    pub fn apply(self, result: CallToolResult) -> Result<CallToolResult, ToolError> {
        Ok(match self {
            Self::Json => result,
            Self::String => only_text(result),
            Self::Markdown => rendered(result),
            Self::Structured => structured(result)?,
            Self::Raw => raw(result),
        })
    }
}

fn answer(is_error: bool, content: Vec<ContentBlock>) -> CallToolResult {
    if is_error {
        CallToolResult::error(content)
    } else {
        CallToolResult::success(content)
    }
}

fn only_text(result: CallToolResult) -> CallToolResult {
    let text = result
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect::<Vec<_>>()
        .join("\n");
    answer(
        result.is_error == Some(true),
        vec![ContentBlock::text(text)],
    )
}

fn markdown_of(payload: &Payload) -> String {
    let mut out = Vec::new();
    match markdown::write(payload, &mut out) {
        Ok(_) => String::from_utf8_lossy(&out).into_owned(),
        Err(e) => format!("(cannot render as Markdown: {e})"),
    }
}

/// Structured content as one Markdown text (the text blocks that repeat it dropped); otherwise
/// each text block rendered (JSON as tables, other text as it is). Other blocks are kept.
fn rendered(result: CallToolResult) -> CallToolResult {
    let is_error = result.is_error == Some(true);
    let mut content = Vec::new();
    if let Some(structured) = result.structured_content {
        content.push(ContentBlock::text(markdown_of(&Payload::from_structured(
            structured,
        ))));
        content.extend(result.content.into_iter().filter(|c| c.as_text().is_none()));
        return answer(is_error, content);
    }
    for block in result.content {
        match block {
            ContentBlock::Text(t) => {
                let payload = Payload::from_text(t.text);
                content.push(ContentBlock::text(match payload {
                    Payload::Text(text) => text,
                    json => markdown_of(&json),
                }));
            }
            ContentBlock::ResourceLink(link) => {
                let name = link.title.clone().unwrap_or_else(|| link.name.clone());
                content.push(ContentBlock::text(format!(
                    "[{}]({})",
                    markdown::escape(&name),
                    link.uri
                )));
            }
            other => content.push(other),
        }
    }
    answer(is_error, content)
}

/// The structured content alone (with its compact JSON as the one text block); a single text
/// block that is a JSON object counts as structured content.
fn structured(result: CallToolResult) -> Result<CallToolResult, ToolError> {
    let is_error = result.is_error == Some(true);
    let value = match result.structured_content {
        Some(v) => v,
        None => {
            let texts: Vec<&str> = result
                .content
                .iter()
                .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
                .collect();
            match texts.as_slice() {
                [one] => match serde_json::from_str::<serde_json::Value>(one) {
                    Ok(v @ serde_json::Value::Object(_)) => v,
                    _ => return Err(no_structured()),
                },
                _ => return Err(no_structured()),
            }
        }
    };
    let mut out = answer(is_error, vec![ContentBlock::text(value.to_string())]);
    out.structured_content = Some(value);
    Ok(out)
}

fn no_structured() -> ToolError {
    ToolError::new(
        ErrorCode::UnsupportedFormat,
        "the tool answered no structured content (nor a single JSON object); use output_format json, string or markdown",
    )
}

/// The upstream result exactly, as JSON text.
fn raw(result: CallToolResult) -> CallToolResult {
    let is_error = result.is_error == Some(true);
    let text = serde_json::to_string(&result).unwrap_or_else(|e| format!("{{\"error\": \"{e}\"}}"));
    answer(is_error, vec![ContentBlock::text(text)])
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn text(result: &CallToolResult) -> String {
        result
            .content
            .iter()
            .filter_map(|c| c.as_text().map(|t| t.text.clone()))
            .collect::<Vec<_>>()
            .join("\n")
    }

    #[test]
    fn formats_are_named_and_unknown_ones_refused() {
        assert_eq!(OutputFormat::parse(None).unwrap(), OutputFormat::Json);
        assert_eq!(
            OutputFormat::parse(Some("Markdown")).unwrap(),
            OutputFormat::Markdown
        );
        let e = OutputFormat::parse(Some("xml")).unwrap_err();
        assert!(
            e.message.contains("markdown, structured, raw"),
            "{}",
            e.message
        );
    }

    #[test]
    fn markdown_renders_json_text_as_tables_and_keeps_images() {
        let rows = json!([{"id": 1, "name": "a|b"}, {"id": 2, "name": "c"}]).to_string();
        let result = CallToolResult::success(vec![
            ContentBlock::text(rows),
            ContentBlock::image("iVBORw0KGgo=", "image/png"),
            ContentBlock::text("plain *words*"),
        ]);
        let out = OutputFormat::Markdown.apply(result).unwrap();
        let t = text(&out);
        assert!(
            t.contains("| id | name |") && t.contains("| 1 | a\\|b |"),
            "{t}"
        );
        assert!(
            t.contains("plain *words*"),
            "plain text stays as written: {t}"
        );
        assert!(
            out.content
                .iter()
                .any(|c| matches!(c, ContentBlock::Image(_)))
        );
    }

    #[test]
    fn markdown_of_structured_content_replaces_its_text_twin() {
        let mut result = CallToolResult::success(vec![ContentBlock::text(r#"{"temp":21}"#)]);
        result.structured_content = Some(json!({"temp": 21, "city": "Lyon"}));
        let out = OutputFormat::Markdown.apply(result).unwrap();
        assert_eq!(out.content.len(), 1);
        let t = text(&out);
        assert!(
            t.contains("temp") && t.contains("21") && t.contains("Lyon"),
            "{t}"
        );
        assert!(!t.contains('{'), "{t}");
    }

    #[test]
    fn structured_keeps_only_the_structured_content() {
        let mut result = CallToolResult::success(vec![
            ContentBlock::text("a long explanation"),
            ContentBlock::image("iVBORw0KGgo=", "image/png"),
        ]);
        result.structured_content = Some(json!({"ok": true}));
        let out = OutputFormat::Structured.apply(result).unwrap();
        assert_eq!(out.structured_content, Some(json!({"ok": true})));
        assert_eq!(text(&out), r#"{"ok":true}"#);
        assert_eq!(out.content.len(), 1);
        let plain = CallToolResult::success(vec![ContentBlock::text("no json here")]);
        assert_eq!(
            OutputFormat::Structured.apply(plain).unwrap_err().code,
            ErrorCode::UnsupportedFormat
        );
        let json_text = CallToolResult::success(vec![ContentBlock::text(r#"{"n": 3}"#)]);
        assert_eq!(
            OutputFormat::Structured
                .apply(json_text)
                .unwrap()
                .structured_content,
            Some(json!({"n": 3}))
        );
    }

    #[test]
    fn raw_is_the_whole_result_and_errors_stay_errors() {
        let mut result = CallToolResult::error(vec![ContentBlock::text("boom")]);
        result.meta = None;
        let out = OutputFormat::Raw.apply(result.clone()).unwrap();
        assert_eq!(out.is_error, Some(true));
        let back: serde_json::Value = serde_json::from_str(&text(&out)).unwrap();
        assert_eq!(back, serde_json::to_value(&result).unwrap());
        let out = OutputFormat::String
            .apply(CallToolResult::error(vec![ContentBlock::text("boom")]))
            .unwrap();
        assert_eq!((out.is_error, text(&out).as_str()), (Some(true), "boom"));
    }
}
