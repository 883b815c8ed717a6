//! `call_tool_with_file_content`: a file becomes (part of) a tool's arguments without passing
//! through the model; in batch mode a list is streamed to the tool a slice at a time.

mod batch;
mod many;
mod output;

use std::sync::Arc;
use std::time::Instant;

use rmcp::RoleServer;
use rmcp::model::{CallToolResult, ContentBlock, ProgressNotificationParam};
use rmcp::service::RequestContext;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value, json};

use super::prelude::*;
use crate::server::{answer, params, relay, store};
use crate::{Engine, ErrorCode, ToolError};
use offload_formats::Format;
use offload_formats::inputs;

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    pub server: String,
    pub tool_name: String,
    /// A file, glob or allowed URL.
    #[serde(default)]
    pub file_path: String,
    /// Several files or globs, rows joined.
    #[serde(default)]
    pub file_paths: Option<Vec<String>>,
    // Adds each row's file as `source_file`.
    #[serde(default)]
    pub source_file: Option<bool>,
    /// The argument that takes the data (dotted); without it a JSON object file is the
    /// arguments.
    #[serde(default)]
    pub data_key: Option<String>,
    #[serde(default, deserialize_with = "params::object_or_json_text")]
    #[schemars(with = "Option<Map<String, Value>>")]
    pub tool_args: Option<Map<String, Value>>,
    // json (default), string, markdown, structured, raw: said in an error when wrong.
    #[serde(default)]
    pub output_format: Option<String>,
    /// When the extension does not say.
    #[serde(default)]
    pub file_format: Option<String>,
    /// Name or 0-based index.
    #[serde(default)]
    pub sheet: Option<String>,
    // Types all-number and all-boolean CSV columns (default true); 00123 stays text.
    #[serde(default)]
    pub infer_types: Option<bool>,
    /// {column: string|integer|number|boolean|json|list}
    #[serde(default)]
    pub column_types: Option<std::collections::BTreeMap<String, String>>,
    // Splits `list` columns (default ";").
    #[serde(default)]
    pub list_separator: Option<String>,
    /// Items per call, streamed: any size. Needs data_key.
    #[serde(default)]
    pub batch_size: Option<u64>,
    // Batches: go on after a failed one.
    #[serde(default)]
    pub continue_on_error: bool,
    // Storing the answer, as call_tool_and_store does (said in the tool's description).
    #[serde(default)]
    pub description: Option<String>,
    #[serde(default)]
    pub storage_path: Option<String>,
    #[serde(default)]
    pub filename: Option<String>,
    #[serde(default)]
    pub response_format: Option<String>,
}

pub struct CallToolWithFileContent;

impl OwnTool for CallToolWithFileContent {
    type Params = Params;
    const NAME: &'static str = "call_tool_with_file_content";
    const TITLE: &'static str = "Call an upstream tool with a file's data as arguments";
    const DESCRIPTION: &'static str = "Pass a file's data (CSV, TSV, JSON, JSONL, YAML, XML, Excel, text) to an upstream \
         tool without it passing through you (description, storage_path, filename, \
         response_format: store the answer). Example: \
         {\"server\": \"db\", \"tool_name\": \"insert\", \"file_path\": \"a.csv\", \
         \"data_key\": \"rows\", \"batch_size\": 5000}";
    const HINTS: Hints = Hints::CallsUpstream;
    const SCOPES: &'static [Scope] = &[Scope::Read, Scope::Call];

    fn event(args: Option<&JsonObject>) -> EventKind {
        if args.is_some_and(|a| a.contains_key("batch_size")) {
            EventKind::Batch
        } else {
            EventKind::FileContent
        }
    }

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        call_tool_with_file_content(engine, p, ctx).await
    }
}

pub async fn call_tool_with_file_content(
    engine: &Arc<Engine>,
    p: Params,
    ctx: &RequestContext<RoleServer>,
) -> CallToolResult {
    match run(engine, p, ctx).await {
        Ok(r) => r,
        Err(e) => answer::error(&e),
    }
}

async fn run(
    engine: &Arc<Engine>,
    p: Params,
    ctx: &RequestContext<RoleServer>,
) -> Result<CallToolResult, ToolError> {
    let output = output::OutputFormat::parse(p.output_format.as_deref())?;
    let files = many::sources(engine, &p).await?;
    let several = files.len() > 1 || p.source_file.unwrap_or(false);
    let mut p = p;
    if !several {
        p.file_path = files[0].clone();
    }
    let format = many::format_of(&p, &files[0])?;
    let infer = typing(&p)?;
    let mut base = p.tool_args.clone().unwrap_or_default();
    if crate::refs::has_refs(&base) {
        base = relay::resolve_refs(engine, base).await?;
    }
    if let Some(size) = p.batch_size {
        return batch::run(engine, &p, &files, infer, base, size, ctx).await;
    }

    let storing = p.description.is_some()
        || p.storage_path.is_some()
        || p.filename.is_some()
        || p.response_format.is_some();
    let prepared = match p.data_key.as_deref().filter(|k| !k.is_empty()) {
        _ if several => many::prepare(engine, &p, &files, infer, base, storing).await?,
        Some(key) if format.is_list() => {
            prepare_list(engine, &p.file_path, format, infer, base, key, storing).await?
        }
        _ => prepare_parsed(engine, &p, format, infer, base, storing).await?,
    };
    let Prepared {
        args,
        recorded,
        warnings,
        splice,
    } = prepared;
    let started = Instant::now();
    let result = relay::forward_resolved(engine, &p.server, &p.tool_name, Some(args), ctx).await;
    drop(splice);
    let result = result?;
    // What a record of this call keeps of its arguments (never the file's data).
    let recorded = if recorded.is_null() {
        json!({"file_path": p.file_path, "data_key": p.data_key})
    } else {
        recorded
    };

    if storing {
        if result.is_error == Some(true) {
            return Ok(answer::error(&store::upstream_tool_error(
                &p.server,
                &p.tool_name,
                &result,
            )));
        }
        let options = store::StoreOptions {
            description: p.description.clone(),
            storage_path: p.storage_path.clone(),
            filename: p.filename.clone(),
            format: p.response_format.clone(),
        };
        let stored = store::store(
            engine,
            &p.server,
            &p.tool_name,
            recorded,
            result,
            started,
            options,
        )
        .await?;
        return Ok(store::stored_answer(&stored, None));
    }
    let out = output.apply(result)?;
    // Like every answer, within the inline budget: a bigger one is stored and linked.
    let mut out =
        store::offload_if_large(engine, &p.server, &p.tool_name, recorded, out, started).await;
    if !warnings.is_empty() {
        out.content.push(ContentBlock::text(format!(
            "Offload: {}",
            warnings.join("; ")
        )));
    }
    Ok(out)
}

/// CSV/TSV typing from `infer_types`, `column_types` and `list_separator`.
fn typing(p: &Params) -> Result<inputs::Typing, ToolError> {
    let separator = p.list_separator.as_deref().unwrap_or(";");
    if separator.is_empty() {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            "list_separator must not be empty",
        ));
    }
    let mut columns = std::collections::BTreeMap::new();
    for (name, kind) in p.column_types.iter().flatten() {
        let kind = inputs::ColumnType::parse(kind, separator).ok_or_else(|| {
            ToolError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "column_types['{name}'] is '{kind}'; use string, integer, number, boolean, json or list"
                ),
            )
        })?;
        columns.insert(name.clone(), kind);
    }
    Ok(inputs::Typing {
        infer: p.infer_types.unwrap_or(true),
        columns,
    })
}

/// The arguments to send, and what the record keeps of them.
struct Prepared {
    args: Map<String, Value>,
    /// The arguments for the record when the answer is stored (elided there), else null.
    recorded: Value,
    warnings: Vec<String>,
    /// The file's list as JSON, registered until the call is sent.
    splice: Option<offload_wire::Splice>,
}

/// The file parsed whole and merged into the arguments.
async fn prepare_parsed(
    engine: &Arc<Engine>,
    p: &Params,
    format: Format,
    infer: inputs::Typing,
    base: Map<String, Value>,
    storing: bool,
) -> Result<Prepared, ToolError> {
    let limit = engine.limits().max_input_bytes;
    let (data, warnings) = crate::file_args::parsed(
        engine.roots(),
        limit,
        &p.file_path,
        format,
        infer,
        p.sheet.clone(),
    )
    .await?;
    let is_list = data.is_array();
    let args = merge(base, data, p.data_key.as_deref())?;
    crate::budget::check_message_size(
        engine.limits().max_upstream_message_bytes,
        &args,
        is_list.then_some("list"),
    )?;
    // The record keeps the arguments (elided); only then is a copy worth its memory.
    let recorded = if storing {
        Value::Object(args.clone())
    } else {
        Value::Null
    };
    Ok(Prepared {
        args,
        recorded,
        warnings,
        splice: None,
    })
}

/// A file that always holds a list (CSV, TSV, JSONL) is converted to JSON text as it is read
/// and spliced into the message as it is sent: its rows are never a tree in memory.
async fn prepare_list(
    engine: &Arc<Engine>,
    path: &str,
    format: Format,
    infer: inputs::Typing,
    base: Map<String, Value>,
    key: &str,
    storing: bool,
) -> Result<Prepared, ToolError> {
    let (json, items, warnings) =
        crate::file_args::list_json(engine.roots(), engine.limits(), path, format, infer).await?;
    let recorded = if storing {
        let note = Value::String(format!("({items} items from {path})"));
        Value::Object(merge(base.clone(), note, Some(key))?)
    } else {
        Value::Null
    };
    let budget = engine.limits().max_upstream_message_bytes;
    let (args, splice) = spliced(budget, base, key, json)?;
    Ok(Prepared {
        args,
        recorded,
        warnings,
        splice: Some(splice),
    })
}

/// The arguments with `json` (a list's JSON text) spliced in at `key`, if they fit the upstream
/// message budget. The splice must live until the call is sent.
pub(super) fn spliced(
    budget: u64,
    base: Map<String, Value>,
    key: &str,
    json: Vec<u8>,
) -> Result<(Map<String, Value>, offload_wire::Splice), ToolError> {
    let splice = offload_wire::Splice::new(json)
        .map_err(|e| ToolError::new(ErrorCode::Internal, e.to_string()))?;
    let args = merge(base, splice.placeholder(), Some(key))?;
    let size = crate::budget::json_size(&args).saturating_add_signed(splice.growth());
    crate::budget::check_size(budget, size, true)?;
    Ok((args, splice))
}

/// Puts the file's data into the arguments: at `data_key` (a dotted path), or, without one,
/// merges an object's fields. A clash with `tool_args` is an error naming the key.
pub fn merge(
    mut base: Map<String, Value>,
    data: Value,
    data_key: Option<&str>,
) -> Result<Map<String, Value>, ToolError> {
    let clash = |key: &str| {
        ToolError::new(
            ErrorCode::InvalidArguments,
            format!("'{key}' is both in tool_args and in the file's data; remove it from one of them or use data_key"),
        )
        .with("key", key)
    };
    let Some(key) = data_key.filter(|k| !k.is_empty()) else {
        return match data {
            Value::Object(fields) => {
                for (k, v) in fields {
                    if base.contains_key(&k) {
                        return Err(clash(&k));
                    }
                    base.insert(k, v);
                }
                Ok(base)
            }
            other => Err(ToolError::new(
                ErrorCode::InvalidArguments,
                format!(
                    "the file holds {}, not an object of arguments; name the argument it goes in with data_key (e.g. \"data_key\": \"rows\")",
                    describe(&other)
                ),
            )),
        };
    };
    let parts: Vec<&str> = key.split('.').collect();
    let mut node = &mut base;
    for (i, part) in parts.iter().enumerate() {
        let so_far = parts[..=i].join(".");
        if i == parts.len() - 1 {
            if node.contains_key(*part) {
                return Err(clash(&so_far));
            }
            node.insert((*part).to_owned(), data);
            break;
        }
        let next = node
            .entry((*part).to_owned())
            .or_insert_with(|| Value::Object(Map::new()));
        node = match next {
            Value::Object(m) => m,
            _ => return Err(clash(&so_far)),
        };
    }
    Ok(base)
}

fn describe(v: &Value) -> String {
    match v {
        Value::Array(items) => format!("a list of {} items", items.len()),
        Value::String(s) => format!("a text of {} characters", s.chars().count()),
        other => crate::server::params::kind(other).to_owned(),
    }
}

/// The summary of a batch run.
#[derive(Debug, Serialize, JsonSchema)]
pub struct BatchSummary {
    pub batches: u64,
    pub items: u64,
    pub succeeded: u64,
    /// Batches that failed (the first 20 are listed in `failed`).
    pub failed_batches: u64,
    pub failed: Vec<BatchFailure>,
    /// The last upstream result (the last failure's, when the run stopped on one); stored and
    /// linked instead when it is larger than half the inline budget.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub last_result: Option<Value>,
}

#[derive(Debug, Serialize, JsonSchema)]
pub struct BatchFailure {
    /// 1-based batch number.
    pub batch: u64,
    /// 0-based index of the batch's first item in the file.
    pub first_item: u64,
    pub error: String,
}

/// Tells the client how many items have been sent, when it asked for progress.
async fn progress(ctx: &RequestContext<RoleServer>, done: u64, message: String) {
    if let Some(token) = ctx.meta.get_progress_token() {
        let mut p = ProgressNotificationParam::new(token, done as f64);
        p.message = Some(message);
        let _ = ctx.peer.notify_progress(p).await;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn merging_by_data_key_and_by_object() {
        let base: Map<String, Value> = json!({"table": "users", "spec": {"mode": "x"}})
            .as_object()
            .cloned()
            .unwrap();
        let m = merge(base.clone(), json!([1, 2]), Some("spec.data.rows")).unwrap();
        assert_eq!(
            Value::Object(m),
            json!({"table": "users", "spec": {"mode": "x", "data": {"rows": [1, 2]}}})
        );
        let m = merge(base.clone(), json!({"limit": 3}), None).unwrap();
        assert_eq!(m["limit"], 3);
        let e = merge(base.clone(), json!({"table": "other"}), None).unwrap_err();
        assert!(e.message.contains("'table'"), "{e}");
        let e = merge(base.clone(), json!([1]), None).unwrap_err();
        assert!(
            e.message.contains("data_key") && e.message.contains("list of 1 items"),
            "{e}"
        );
        let e = merge(base.clone(), json!([1]), Some("table.rows")).unwrap_err();
        assert!(e.message.contains("'table'"), "{e}");
        let e = merge(base, json!([1]), Some("spec.mode")).unwrap_err();
        assert!(e.message.contains("'spec.mode'"), "{e}");
    }
}
