//! A message's bulk, moved out of the parsed JSON before rmcp decodes the message and moved
//! into the decoded message after.
//!
//! rmcp's message types are untagged, internally tagged and flattened serde enums. Decoding
//! one buffers every value it holds, once per level of such enums, so a 10 MB tool result is
//! copied four or five times on its way in, and a tool call's tree of 100,000 arguments is
//! rebuilt as often. Here a line is parsed once into a `Value`; the parts that can be large —
//! the text, data and blobs of a tool result's content blocks, its structured content, a tool
//! call's arguments — are taken out, rmcp decodes the small rest, and the parts are moved into
//! the typed message. Anything that does not decode as expected is decoded whole, as before.

use rmcp::model::{ClientRequest, ContentBlock, JsonRpcMessage, ResourceContents, ServerResult};
use rmcp::service::{RxJsonRpcMessage, ServiceRole};
use rmcp::{RoleClient, RoleServer};
use serde_json::{Map, Value};

/// A role whose incoming messages can be decoded without copying their bulk.
pub trait Bulk: ServiceRole {
    /// Decodes one incoming message.
    fn decode(message: Value) -> Result<RxJsonRpcMessage<Self>, serde_json::Error>;
}

/// Where a listed tool's `execution` (its task support, which rmcp's `Tool` does not keep) is
/// kept: in the tool's `_meta`, under this key.
pub const EXECUTION_META: &str = "dev.offload/execution";

/// Copies each listed tool's `execution` into its `_meta` (see [`EXECUTION_META`]).
fn keep_tool_execution(message: &mut Value) {
    let Some(tools) = message
        .get_mut("result")
        .and_then(|r| r.get_mut("tools"))
        .and_then(Value::as_array_mut)
    else {
        return;
    };
    for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
        let Some(execution) = tool.get("execution").filter(|e| e.is_object()).cloned() else {
            continue;
        };
        let meta = tool
            .entry("_meta")
            .or_insert_with(|| Value::Object(Map::new()));
        if let Value::Object(meta) = meta {
            meta.insert(EXECUTION_META.to_owned(), execution);
        }
    }
}

/// A client receives tool results.
impl Bulk for RoleClient {
    fn decode(mut message: Value) -> Result<RxJsonRpcMessage<Self>, serde_json::Error> {
        keep_tool_execution(&mut message);
        let Some(parts) = ResultParts::take(&mut message) else {
            return serde_json::from_value(message);
        };
        // Without its bulk the message is small: decoding a copy costs little and keeps the
        // original for the fallback.
        let decoded = serde_json::from_value::<RxJsonRpcMessage<Self>>(message.clone());
        if let Ok(JsonRpcMessage::Response(mut response)) = decoded
            && let ServerResult::CallToolResult(result) = &mut response.result
            && parts.fits(&mut result.content, result.structured_content.as_ref())
        {
            parts.restore(&mut result.content, &mut result.structured_content);
            return Ok(JsonRpcMessage::Response(response));
        }
        parts.put_back(&mut message);
        serde_json::from_value(message)
    }
}

/// A server receives tool calls.
impl Bulk for RoleServer {
    fn decode(mut message: Value) -> Result<RxJsonRpcMessage<Self>, serde_json::Error> {
        let Some(arguments) = take_arguments(&mut message) else {
            return serde_json::from_value(message);
        };
        let decoded = serde_json::from_value::<RxJsonRpcMessage<Self>>(message.clone());
        if let Ok(JsonRpcMessage::Request(mut request)) = decoded
            && let ClientRequest::CallToolRequest(call) = &mut request.request
            && call.params.arguments.is_none()
        {
            call.params.arguments = Some(arguments);
            return Ok(JsonRpcMessage::Request(request));
        }
        if let Some(slot) = message
            .get_mut("params")
            .and_then(|p| p.get_mut("arguments"))
        {
            *slot = Value::Object(arguments);
        }
        serde_json::from_value(message)
    }
}

/// A `tools/call` request's arguments (an object), leaving `null` in their place.
fn take_arguments(message: &mut Value) -> Option<Map<String, Value>> {
    if message.get("method")?.as_str()? != "tools/call" {
        return None;
    }
    let slot = message.get_mut("params")?.get_mut("arguments")?;
    match slot.take() {
        Value::Object(arguments) => Some(arguments),
        other => {
            *slot = other;
            None
        }
    }
}

/// The large parts of a tool result: its structured content and the big string of each
/// content block (by position).
struct ResultParts {
    structured: Option<Value>,
    strings: Vec<(usize, String)>,
}

impl ResultParts {
    /// Takes the parts out of a response's `result`, leaving `null` and empty strings, which
    /// decode to the same shape.
    fn take(message: &mut Value) -> Option<Self> {
        let result = message.get_mut("result")?.as_object_mut()?;
        let structured = result.get_mut("structuredContent").map(Value::take);
        let mut strings = Vec::new();
        if let Some(Value::Array(blocks)) = result.get_mut("content") {
            for (i, block) in blocks.iter_mut().enumerate() {
                if let Some(Value::String(s)) = block_bulk(block) {
                    strings.push((i, std::mem::take(s)));
                }
            }
        }
        (structured.is_some() || !strings.is_empty()).then_some(Self {
            structured,
            strings,
        })
    }

    /// Whether the decoded result has a place for every part.
    fn fits(&self, content: &mut [ContentBlock], structured: Option<&Value>) -> bool {
        let structured_fits = self.structured.is_none() || structured == Some(&Value::Null);
        structured_fits
            && self
                .strings
                .iter()
                .all(|(i, _)| content.get_mut(*i).and_then(typed_bulk).is_some())
    }

    /// Moves the parts into the decoded result (after `fits`).
    fn restore(self, content: &mut [ContentBlock], structured: &mut Option<Value>) {
        if self.structured.is_some() {
            *structured = self.structured;
        }
        for (i, s) in self.strings {
            if let Some(slot) = content.get_mut(i).and_then(typed_bulk) {
                *slot = s;
            }
        }
    }

    /// Puts the parts back where they were taken from.
    fn put_back(self, message: &mut Value) {
        let Some(result) = message.get_mut("result").and_then(Value::as_object_mut) else {
            return;
        };
        if let Some(structured) = self.structured {
            result.insert("structuredContent".to_owned(), structured);
        }
        if let Some(Value::Array(blocks)) = result.get_mut("content") {
            for (i, s) in self.strings {
                if let Some(slot) = blocks.get_mut(i).and_then(block_bulk) {
                    *slot = Value::String(s);
                }
            }
        }
    }
}

/// The field of a content block (as JSON) that can be large.
fn block_bulk(block: &mut Value) -> Option<&mut Value> {
    let key = match block.get("type")?.as_str()? {
        "text" => "text",
        "image" | "audio" => "data",
        "resource" => {
            let resource = block.get_mut("resource")?.as_object_mut()?;
            // rmcp reads a resource with text as text contents, whatever else it has.
            let key = if resource.contains_key("text") {
                "text"
            } else {
                "blob"
            };
            return resource.get_mut(key);
        }
        _ => return None,
    };
    block.get_mut(key)
}

/// The same field of a decoded content block.
fn typed_bulk(block: &mut ContentBlock) -> Option<&mut String> {
    match block {
        ContentBlock::Text(t) => Some(&mut t.text),
        ContentBlock::Image(i) => Some(&mut i.data),
        ContentBlock::Audio(a) => Some(&mut a.data),
        ContentBlock::Resource(r) => match &mut r.resource {
            ResourceContents::TextResourceContents { text, .. } => Some(text),
            ResourceContents::BlobResourceContents { blob, .. } => Some(blob),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// The lean decoding gives exactly what rmcp's own decoding gives.
    fn same<R: Bulk>(message: Value)
    where
        RxJsonRpcMessage<R>: serde::Serialize,
    {
        let stock: RxJsonRpcMessage<R> = serde_json::from_value(message.clone()).unwrap();
        let lean = R::decode(message).unwrap();
        assert_eq!(
            serde_json::to_value(&lean).unwrap(),
            serde_json::to_value(&stock).unwrap()
        );
    }

    #[test]
    fn tool_results_decode_as_rmcp_decodes_them() {
        let big = "x\"y\n".repeat(10_000);
        for result in [
            json!({"content": [{"type": "text", "text": big}], "isError": false}),
            json!({"content": [
                {"type": "text", "text": "a", "_meta": {"k": 1}, "annotations": {"priority": 0.5}},
                {"type": "image", "data": "aGVsbG8=", "mimeType": "image/png"},
                {"type": "audio", "data": "aGVsbG8=", "mimeType": "audio/wav"},
                {"type": "resource", "resource": {"uri": "file:///a", "text": big}},
                {"type": "resource", "resource": {"uri": "file:///b", "blob": "aGk=", "mimeType": "application/octet-stream"}},
                {"type": "resource_link", "uri": "file:///c", "name": "c"},
            ], "structuredContent": {"rows": [{"a": 1}, {"a": [2, {"b": null}]}]}}),
            json!({"structuredContent": null}),
            json!({"structuredContent": [1, 2]}),
            json!({"content": [], "isError": true}),
            // Not tool results: other results and shapes pass through whole.
            json!({"tools": []}),
            json!({"contents": [{"uri": "file:///a", "text": "t"}]}),
            json!({}),
        ] {
            same::<RoleClient>(json!({"jsonrpc": "2.0", "id": 7, "result": result}));
        }
        same::<RoleClient>(json!({"jsonrpc": "2.0", "method": "notifications/progress",
            "params": {"progressToken": 1, "progress": 2}}));
        same::<RoleClient>(
            json!({"jsonrpc": "2.0", "id": "a", "error": {"code": -1, "message": "no"}}),
        );
    }

    #[test]
    fn a_result_rmcp_reads_otherwise_is_decoded_whole() {
        // A task result (resultType other than complete) is not a CallToolResult: the parts
        // go back and nothing is lost.
        let message = json!({"jsonrpc": "2.0", "id": 1, "result": {
            "resultType": "incomplete", "content": [{"type": "text", "text": "kept"}]}});
        let stock: Result<RxJsonRpcMessage<RoleClient>, _> =
            serde_json::from_value(message.clone());
        let lean = RoleClient::decode(message);
        assert_eq!(format!("{lean:?}"), format!("{stock:?}"));
        if let Ok(m) = lean {
            assert!(format!("{m:?}").contains("kept"));
        }
        // A content block whose text is not a string is left to rmcp, which refuses it.
        let bad = json!({"jsonrpc": "2.0", "id": 1, "result": {"content": [{"type": "text", "text": 5}]}});
        assert_eq!(
            RoleClient::decode(bad.clone()).is_ok(),
            serde_json::from_value::<RxJsonRpcMessage<RoleClient>>(bad).is_ok()
        );
    }

    #[test]
    fn tool_calls_decode_as_rmcp_decodes_them() {
        let rows: Vec<Value> = (0..1000)
            .map(|i| json!({"id": i, "name": format!("n{i}"), "tags": ["a", null]}))
            .collect();
        for params in [
            json!({"name": "insert", "arguments": {"table": "t", "rows": rows}}),
            json!({"name": "insert", "arguments": {}, "_meta": {"progressToken": 3}}),
            json!({"name": "insert"}),
            json!({"name": "insert", "arguments": null}),
        ] {
            same::<RoleServer>(
                json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": params}),
            );
        }
        same::<RoleServer>(json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}));
        same::<RoleServer>(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}));
        // Arguments that are not an object stay where they are (and rmcp refuses them).
        let bad = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
            "params": {"name": "x", "arguments": [1]}});
        assert_eq!(
            RoleServer::decode(bad.clone()).is_ok(),
            serde_json::from_value::<RxJsonRpcMessage<RoleServer>>(bad).is_ok()
        );
    }
}
