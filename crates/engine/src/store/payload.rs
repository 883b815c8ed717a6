//! What is stored from a tool result: `structuredContent` if present (a lone string field that
//! holds JSON is that JSON; a text wrapper such as `{"content": "<text>"}` is the text); else a
//! single text block (parsed as JSON when it is JSON, as rows when it is a Python literal list
//! of dicts, the text otherwise); else several text blocks that are not JSON as one text; else
//! the list of content blocks. A table sent as rows of values (`{columns, rows}`, `{values}`)
//! becomes rows of objects. Image, audio and blob blocks are decoded into binary files of their
//! own; the payload refers to them by name.

use base64::Engine as _;
use rmcp::model::{CallToolResult, ContentBlock, ResourceContents};
use serde_json::{Value, json};

use offload_formats::output::Payload;

/// A decoded binary block, to be written beside the main file.
#[derive(Debug, Clone, PartialEq)]
pub struct Binary {
    pub bytes: Vec<u8>,
    pub mime_type: String,
    pub extension: &'static str,
    /// The name it will have (set by the store before the payload is rendered).
    pub name: String,
}

/// Splits a result into the payload to render and the binaries to write beside it. `name_for`
/// gives the file name of the n-th binary (1-based) with its extension.
pub fn extract(
    result: CallToolResult,
    name_for: impl Fn(usize, &str) -> String,
) -> Result<(Payload, Vec<Binary>), String> {
    let mut binaries = Vec::new();
    let CallToolResult {
        mut content,
        structured_content,
        ..
    } = result;
    if let Some(structured) = structured_content {
        for block in &content {
            block_json(block, &mut binaries, &name_for)?;
        }
        return Ok((tidy(Payload::from_structured(structured)), binaries));
    }
    if content.len() == 1
        && matches!(content[0], ContentBlock::Text(_))
        && let Some(ContentBlock::Text(t)) = content.pop()
    {
        // The common case: one (possibly huge) text. It is moved, never copied.
        return Ok((tidy(Payload::from_text(t.text)), binaries));
    }
    // Several texts, none of them JSON (a page in parts, a log and its footer): one text.
    let texts: Option<Vec<&str>> = content
        .iter()
        .map(|b| b.as_text().map(|t| t.text.as_str()))
        .collect();
    if let Some(texts) = texts.filter(|t| !t.is_empty())
        && !texts
            .iter()
            .any(|t| matches!(t.trim_start().as_bytes().first(), Some(b'{' | b'[')))
    {
        return Ok((Payload::Text(texts.join("\n")), binaries));
    }
    let blocks = content
        .iter()
        .map(|b| block_json(b, &mut binaries, &name_for))
        .collect::<Result<Vec<_>, _>>()?;
    Ok((Payload::Json(Value::Array(blocks)), binaries))
}

/// A table sent as rows of values as objects; one string as that text.
fn tidy(payload: Payload) -> Payload {
    payload.tabulated().into_text()
}

fn block_json(
    block: &ContentBlock,
    binaries: &mut Vec<Binary>,
    name_for: &impl Fn(usize, &str) -> String,
) -> Result<Value, String> {
    let mut binary =
        |kind: &str, data: &str, mime: &str, uri: Option<&str>| -> Result<Value, String> {
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(data.trim())
                .map_err(|e| format!("the {kind} block is not valid base64: {e}"))?;
            let extension = extension_for(mime);
            let name = name_for(binaries.len() + 1, extension);
            binaries.push(Binary {
                bytes,
                mime_type: mime.to_owned(),
                extension,
                name: name.clone(),
            });
            let mut v = json!({"type": kind, "file": name, "mimeType": mime});
            if let Some(uri) = uri {
                v["uri"] = json!(uri);
            }
            Ok(v)
        };
    match block {
        ContentBlock::Text(t) => Ok(json!({"type": "text", "text": t.text})),
        ContentBlock::Image(i) => binary("image", &i.data, &i.mime_type, None),
        ContentBlock::Audio(a) => binary("audio", &a.data, &a.mime_type, None),
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::TextResourceContents {
                uri,
                mime_type,
                text,
                ..
            } => Ok(json!({"type": "resource", "uri": uri, "mimeType": mime_type, "text": text})),
            ResourceContents::BlobResourceContents {
                uri,
                mime_type,
                blob,
                ..
            } => binary(
                "resource",
                blob,
                mime_type.as_deref().unwrap_or("application/octet-stream"),
                Some(uri),
            ),
            other => Ok(serde_json::to_value(other).unwrap_or(Value::Null)),
        },
        ContentBlock::ResourceLink(l) => Ok(serde_json::to_value(l)
            .map(|mut v| {
                v["type"] = json!("resource_link");
                v
            })
            .unwrap_or(Value::Null)),
        other => Ok(serde_json::to_value(other).unwrap_or(Value::Null)),
    }
}

/// A file extension for a MIME type.
pub fn extension_for(mime: &str) -> &'static str {
    match mime
        .split(';')
        .next()
        .unwrap_or("")
        .trim()
        .to_ascii_lowercase()
        .as_str()
    {
        "image/png" => "png",
        "image/jpeg" | "image/jpg" => "jpg",
        "image/gif" => "gif",
        "image/webp" => "webp",
        "image/svg+xml" => "svg",
        "image/bmp" => "bmp",
        "image/tiff" => "tiff",
        "audio/wav" | "audio/x-wav" | "audio/wave" => "wav",
        "audio/mpeg" | "audio/mp3" => "mp3",
        "audio/ogg" => "ogg",
        "audio/flac" => "flac",
        "application/pdf" => "pdf",
        "application/zip" => "zip",
        "application/gzip" => "gz",
        "application/json" => "json",
        "text/plain" => "txt",
        "text/csv" => "csv",
        _ => "bin",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn name(n: usize, ext: &str) -> String {
        format!("r.{n}.{ext}")
    }

    #[test]
    fn structured_content_wins_then_json_text_then_text() {
        let mut r = CallToolResult::success(vec![ContentBlock::text("{\"a\": 1}")]);
        assert!(matches!(
            extract(r.clone(), name).unwrap().0,
            Payload::JsonText { .. }
        ));
        r.structured_content = Some(json!([1, 2]));
        assert_eq!(
            extract(r.clone(), name).unwrap().0,
            Payload::Json(json!([1, 2]))
        );
        let r = CallToolResult::success(vec![ContentBlock::text("not json")]);
        assert_eq!(
            extract(r.clone(), name).unwrap().0,
            Payload::Text("not json".into())
        );
    }

    /// The Python SDK wraps a tool's `str` answer as `{"result": "..."}`; a server answering
    /// `str(rows)` puts a Python literal there. It is the rows, not the wrapper.
    #[test]
    fn python_literal_rows_inside_the_sdk_wrapper_are_the_rows() {
        let mut r = CallToolResult::success(vec![ContentBlock::text(
            "[{'id': 0, 'name': 'Ann', 'ok': True, 'note': None}, {'id': 1, 'name': \"O'Neil\", 'ok': False, 'note': 'x'}]",
        )]);
        r.structured_content = Some(json!({"result": r.content[0].as_text().unwrap().text}));
        assert_eq!(
            extract(r, name).unwrap().0,
            Payload::Json(json!([
                {"id": 0, "name": "Ann", "ok": true, "note": null},
                {"id": 1, "name": "O'Neil", "ok": false, "note": "x"}
            ]))
        );
        // A wrapper around text that is neither is that text.
        let mut r = CallToolResult::success(vec![]);
        r.structured_content = Some(json!({"result": "[not a literal"}));
        assert_eq!(
            extract(r, name).unwrap().0,
            Payload::Text("[not a literal".into())
        );
        let mut r = CallToolResult::success(vec![]);
        r.structured_content = Some(json!({"result": "[{\"a\": 1}]"}));
        assert!(matches!(
            extract(r, name).unwrap().0,
            Payload::JsonText { .. }
        ));
    }

    /// git_log, fetch, server-filesystem's `{content}`, markitdown's `{result}`: the text
    /// itself, not a JSON string holding it.
    #[test]
    fn text_answers_are_their_text() {
        let page = "# Title\n\nline one\nline two\n";
        let wrapped = |key: &str| {
            let mut r = CallToolResult::success(vec![ContentBlock::text(page)]);
            r.structured_content = Some(json!({ key: page }));
            r
        };
        for key in ["content", "result", "text"] {
            assert_eq!(
                extract(wrapped(key), name).unwrap().0,
                Payload::Text(page.into())
            );
        }
        // Another field's lone string stays an object: its name may be the point.
        assert!(matches!(
            extract(wrapped("city"), name).unwrap().0,
            Payload::Json(_)
        ));
        // A JSON string text block, and several text blocks, are the text.
        let r = CallToolResult::success(vec![ContentBlock::text(json!(page).to_string())]);
        assert_eq!(extract(r, name).unwrap().0, Payload::Text(page.into()));
        let r = CallToolResult::success(vec![
            ContentBlock::text("part one"),
            ContentBlock::text("part two"),
        ]);
        assert_eq!(
            extract(r, name).unwrap().0,
            Payload::Text("part one\npart two".into())
        );
    }

    /// mcp-server-motherduck's `{columns, rows}` and excel-mcp-server's `{range, values}`.
    #[test]
    fn rows_of_values_are_a_table_of_objects() {
        let text = json!({"columns": ["id", "city"], "columnTypes": ["INTEGER", "VARCHAR"],
                          "rows": [[1, "Oslo"], [2, "Rome"]]})
        .to_string();
        let r = CallToolResult::success(vec![ContentBlock::text(text)]);
        let (payload, _) = extract(r, name).unwrap();
        let info = offload_formats::output::table_info(&payload).expect("a table");
        assert_eq!(info.rows, 2);
        assert_eq!(info.path.as_deref(), Some("rows"));
        let mut r = CallToolResult::success(vec![]);
        r.structured_content = Some(json!({"range": "A1:B3",
            "values": [["id", "city"], [1, "Oslo"], [2, "Rome"]]}));
        let (payload, _) = extract(r, name).unwrap();
        let info = offload_formats::output::table_info(&payload).expect("a table");
        assert_eq!((info.rows, info.columns.len()), (2, 2));
    }

    #[test]
    fn binaries_become_files_referenced_by_name() {
        let png = base64::engine::general_purpose::STANDARD.encode(b"\x89PNG fake");
        let r = CallToolResult::success(vec![
            ContentBlock::text("caption"),
            ContentBlock::image(png, "image/png"),
        ]);
        let (payload, bins) = extract(r, name).unwrap();
        assert_eq!(bins.len(), 1);
        assert_eq!(bins[0].bytes, b"\x89PNG fake");
        assert_eq!(bins[0].name, "r.1.png");
        assert_eq!(
            payload,
            Payload::Json(
                json!([{"type": "text", "text": "caption"}, {"type": "image", "file": "r.1.png", "mimeType": "image/png"}])
            )
        );
        let bad = CallToolResult::success(vec![ContentBlock::image("%%%", "image/png")]);
        assert!(extract(bad, name).unwrap_err().contains("base64"));
    }
}
