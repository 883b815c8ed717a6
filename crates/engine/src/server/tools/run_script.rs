//! `run_script`: a model's script run in a confined worker (`crate::scripts`), its calls answered
//! here through the same doors as the model's own: scopes, pins, turned-off tools, the pause,
//! roots, and an audit event each, marked with the run's number so the Live log shows them
//! under it. Only the script's answer reaches the model; one over the inline budget is stored
//! and linked like any big answer.

use std::sync::Arc;
use std::time::{Duration, Instant};

use futures::FutureExt;
use offload_script::protocol::Stopped;
use offload_script::{HostError, Limits, Outcome, Request};
use rmcp::model::{CallToolResult, ContentBlock, JsonObject};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::{Value, json};

use super::prelude::*;
use super::query_file as query;
use super::{CallTool, CallToolAndStore, Ctx, GetFileSchema, QueryFile, ReadFile};
use crate::events::{Event, EventKind};
use crate::server::{answer, audit, relay, scopes, store};
use crate::{Engine, ErrorCode, ToolError};

#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct Params {
    /// Body of an async function; return the answer.
    pub code: String,
    /// Deadline (30000).
    #[serde(default)]
    pub timeout_ms: Option<u64>,
}

pub struct RunScript;

impl OwnTool for RunScript {
    type Params = Params;
    const NAME: &'static str = "run_script";
    const TITLE: &'static str = "Run a script that calls tools";
    const DESCRIPTION: &'static str = "Run JavaScript (an async function's body) next to the data; only what it returns \
         reaches you. For loops, branches and joins over many tool calls. Globals: \
         tools.<server>.<tool>(args) -> the tool's value (a failure throws ToolError); \
         offload.query(path, sql) -> rows; offload.read, offload.schema, offload.store(value, \
         {name?, format?}) -> {path}; console.log. list_tool_details gives TypeScript \
         declarations. Example: let t = 0; for (const r of await offload.query(\"o.csv\", \
         \"SELECT id FROM data\")) t += (await tools.shop.get_order({id: r.id})).total; return t;";
    const HINTS: Hints = Hints::RunsScripts;
    const OUTPUT: Option<Output> = Some(Output::of::<ScriptAnswer>("result logs calls"));
    const SCOPES: &'static [Scope] = &[Scope::Call];

    fn event(_args: Option<&JsonObject>) -> EventKind {
        EventKind::Script
    }

    async fn call(engine: &Arc<Engine>, p: Self::Params, ctx: &Ctx) -> CallToolResult {
        run_script(engine, p, ctx).await
    }
}

/// `run_script`'s structured answer.
#[derive(Serialize, JsonSchema)]
pub struct ScriptAnswer {
    /// What the script returned.
    pub result: Value,
    /// What it logged with `console`.
    pub logs: Vec<String>,
    /// The calls it made: `{call, ok, millis}`.
    pub calls: Vec<Value>,
}

/// Rows one `offload.query` answers at most.
const QUERY_ROWS: u64 = 10_000;

pub async fn run_script(engine: &Arc<Engine>, p: Params, ctx: &Ctx) -> CallToolResult {
    let started = Instant::now();
    let limits = match limits(&engine.limits(), p.timeout_ms) {
        Ok(l) => l,
        Err(e) => return answer::error(&e),
    };
    let run = fastrand::u64(1..1 << 52);
    let host = Host { engine, ctx, run };
    let answerer = |request: Request| host.answer(request).boxed();
    let ran = engine.scripts.run(&p.code, &limits, &answerer).await;
    // The run's own number, for the audit event `serve_call` records.
    if let Some(slot) = ctx.extensions.get::<crate::server::marks::ScriptRun>() {
        slot.0.store(run, std::sync::atomic::Ordering::Relaxed);
    }
    match ran {
        Ok(outcome) => answered(engine, outcome, started).await,
        Err(stopped) => answer::error(&failure(stopped)),
    }
}

/// The limits of this run: the configured ones, and the deadline asked for up to its maximum.
fn limits(
    configured: &crate::config::Limits,
    timeout_ms: Option<u64>,
) -> Result<Limits, ToolError> {
    let deadline = timeout_ms.unwrap_or(configured.script_timeout_ms);
    if deadline == 0 || deadline > configured.max_script_timeout_ms {
        return Err(ToolError::new(
            ErrorCode::InvalidArguments,
            format!(
                "timeout_ms must be between 1 and {} (limits.maxScriptTimeoutMs)",
                configured.max_script_timeout_ms
            ),
        ));
    }
    Ok(Limits {
        deadline: Duration::from_millis(deadline),
        memory: usize::try_from(configured.script_memory_bytes).unwrap_or(usize::MAX),
        calls: usize::try_from(configured.script_calls).unwrap_or(usize::MAX),
        ..Limits::default()
    })
}

/// The script's answer, stored and linked when it is over the inline budget.
async fn answered(engine: &Arc<Engine>, outcome: Outcome, started: Instant) -> CallToolResult {
    let Outcome {
        result,
        logs,
        calls,
    } = outcome;
    let mut text = serde_json::to_string(&result).unwrap_or_default();
    if !logs.is_empty() {
        text.push_str("\nlogs:\n");
        text.push_str(&logs.join("\n"));
    }
    let size = (text.len() as u64).saturating_add(crate::budget::json_size(&result));
    if size <= engine.limits().inline_bytes {
        let calls = calls.iter().map(|c| json!(c)).collect();
        return answer::structured(
            &ScriptAnswer {
                result,
                logs,
                calls,
            },
            text,
        );
    }
    let options = store::StoreOptions {
        description: Some("run_script answer, stored because it was over the inline budget".into()),
        ..store::StoreOptions::default()
    };
    match store_value(engine, result, started, options).await {
        Ok(stored) => {
            let note = "The script's answer was larger than the inline budget, so Offload stored it as a file; query it with query_file.";
            let mut answer = store::stored_answer(&stored, Some(note.into()));
            if let Some(Value::Object(s)) = answer.structured_content.as_mut() {
                s.insert("logs".into(), json!(logs));
                s.insert("calls".into(), json!(calls));
            }
            answer
        }
        Err(e) => answer::error(&ToolError::new(
            e.code,
            format!(
                "the script's answer is larger than the inline budget and could not be stored: {}",
                e.message
            ),
        )),
    }
}

/// A script's value written as a stored response of `run_script`.
async fn store_value(
    engine: &Arc<Engine>,
    value: Value,
    started: Instant,
    options: store::StoreOptions,
) -> Result<crate::store::Stored, ToolError> {
    let mut whole = CallToolResult::success(Vec::new());
    whole.structured_content = Some(value);
    store::store(
        engine,
        "offload",
        RunScript::NAME,
        Value::Null,
        whole,
        started,
        options,
    )
    .await
}

/// A run that ended without an answer, as the model's error.
fn failure(stopped: Stopped) -> ToolError {
    let code = match stopped.code.as_str() {
        "script_timeout" => ErrorCode::ScriptTimeout,
        "script_memory" => ErrorCode::ScriptMemory,
        "too_many_calls" => ErrorCode::TooManyCalls,
        "script_error" => ErrorCode::ScriptError,
        "tool_error" => ErrorCode::ToolError,
        "script_crashed" => ErrorCode::ScriptCrashed,
        "script_unavailable" => ErrorCode::ScriptUnavailable,
        "invalid_arguments" => ErrorCode::InvalidArguments,
        _ => ErrorCode::Internal,
    };
    let mut error = ToolError::new(code, stopped.message);
    if let Some(line) = stopped.line {
        error = error.with("line", line);
    }
    if let Some(column) = stopped.column {
        error = error.with("column", column);
    }
    error
        .with("calls", json!(stopped.calls))
        .with("logs", json!(stopped.logs))
}

/// Answers one script's calls.
struct Host<'a> {
    engine: &'a Arc<Engine>,
    ctx: &'a Ctx,
    run: u64,
}

impl Host<'_> {
    async fn answer(&self, request: Request) -> Result<Value, HostError> {
        let label = request.label();
        let query = matches!(request, Request::Query { .. });
        let started = Instant::now();
        let (mut event, result) = match request {
            Request::Tool { server, tool, args } => self.tool(&server, &tool, args).await,
            Request::Store {
                value,
                name,
                format,
            } => self.store(value, name, format, started).await,
            Request::Query { path, sql } => {
                let p = query::Params {
                    path,
                    sql: Some(sql),
                    jq: None,
                    tables: None,
                    limit: Some(QUERY_ROWS),
                    description: None,
                    storage_path: None,
                    filename: None,
                    file_format: None,
                };
                let args = json!({"path": p.path, "sql": p.sql});
                let (event, refused) = self.begin(QueryFile::NAME, &args);
                let result = match refused {
                    Some(r) => answer::error(&r),
                    None => {
                        let budget = self.engine.limits().max_upstream_message_bytes;
                        query::query_file_within(self.engine, p, self.ctx, budget).await
                    }
                };
                (event, result)
            }
            Request::Read { path, options } => {
                let mut args = match options {
                    Value::Object(o) => o,
                    Value::Null => JsonObject::new(),
                    _ => {
                        return Err(refused(
                            "invalid_arguments",
                            "read's options must be an object",
                        ));
                    }
                };
                args.insert("path".into(), json!(path));
                self.read(args).await
            }
            Request::Schema { path } => {
                let mut args = JsonObject::new();
                args.insert("path".into(), json!(path));
                self.own(GetFileSchema::NAME, args).await
            }
        };
        event.tool = label;
        event.script = Some(self.run);
        let event = audit::finish(event, &result, started, None);
        self.engine.events.emit(event);
        let value = value_of(result)?;
        if query { rows_of(value) } else { Ok(value) }
    }

    /// The call's audit event begun, and the refusal when its caller lacks a scope it needs.
    fn begin(&self, tool: &str, args: &Value) -> (Event, Option<ToolError>) {
        let args = args.as_object();
        let event = audit::start(tool, super::event_kind(tool, args), args, self.ctx);
        let refused = scopes::refusal(
            &self.ctx.extensions,
            tool,
            &super::scopes_needed(tool, args),
        );
        (event, refused)
    }

    async fn tool(&self, server: &str, tool: &str, args: Value) -> (Event, CallToolResult) {
        // The event names the call; its arguments are measured, not copied.
        let named = json!({"server": server, "tool_name": tool});
        let mut event = audit::start(CallTool::NAME, EventKind::Call, named.as_object(), self.ctx);
        event.bytes_in = crate::budget::json_size(&args);
        let args = match args {
            Value::Object(a) => Some(a),
            Value::Null => None,
            _ => {
                let e = ToolError::new(
                    ErrorCode::InvalidArguments,
                    format!("tools.{server}.{tool}: the arguments must be an object"),
                );
                return (event, answer::error(&e));
            }
        };
        // Scopes as for `call_tool`: `call`, and `read` when a `$file` reads a file.
        let needed = scopes::upstream_call(args.as_ref());
        if let Some(refused) = scopes::refusal(&self.ctx.extensions, CallTool::NAME, &needed) {
            return (event, answer::error(&refused));
        }
        let result = match relay::forward(self.engine, server, tool, args, self.ctx).await {
            Ok(result) => result,
            Err(e) => answer::error(&e),
        };
        (event, result)
    }

    async fn store(
        &self,
        value: Value,
        name: Option<String>,
        format: Option<String>,
        started: Instant,
    ) -> (Event, CallToolResult) {
        let described = json!({"filename": name, "file_format": format});
        let (mut event, refused) = self.begin(CallToolAndStore::NAME, &described);
        event.kind = EventKind::Store;
        event.server = None;
        if let Some(refused) = refused {
            return (event, answer::error(&refused));
        }
        let options = store::StoreOptions {
            description: Some("stored by a script".into()),
            filename: name,
            format,
            ..store::StoreOptions::default()
        };
        let result = match store_value(self.engine, value, started, options).await {
            Ok(stored) => store::stored_answer(&stored, None),
            Err(e) => answer::error(&e),
        };
        (event, result)
    }

    /// `read`: `read_file`'s page as a value (the tool sends a model text), within the
    /// inspector's budget rather than the inline one: a script's reads do not reach the model.
    async fn read(&self, args: JsonObject) -> (Event, CallToolResult) {
        let tool = ReadFile::NAME;
        let (event, refused) = self.begin(tool, &Value::Object(args.clone()));
        if let Some(refused) = refused {
            return (event, answer::error(&refused));
        }
        let result = match serde_json::from_value::<super::read_file::Params>(Value::Object(args)) {
            Ok(p) => match super::read_file::read_page(self.engine, p, self.ctx, None).await {
                Ok(page) => answer::structured(&page, String::new()),
                Err(e) => answer::error(&e),
            },
            Err(e) => answer::error(&ToolError::new(
                ErrorCode::InvalidArguments,
                format!("read: {e}"),
            )),
        };
        (event, result)
    }

    /// One of Offload's own file tools, called as the model would.
    async fn own(&self, tool: &str, args: JsonObject) -> (Event, CallToolResult) {
        let (event, refused) = self.begin(tool, &Value::Object(args.clone()));
        if let Some(refused) = refused {
            return (event, answer::error(&refused));
        }
        let Some(found) = super::find(tool) else {
            let e = ToolError::new(ErrorCode::Internal, format!("{tool} is not a tool"));
            return (event, answer::error(&e));
        };
        let result = match (found.call)(self.engine, Some(args), self.ctx).await {
            Ok(result) => result,
            Err(e) => answer::error(&ToolError::new(ErrorCode::InvalidArguments, e.message)),
        };
        (event, result)
    }
}

fn refused(code: &str, message: &str) -> HostError {
    HostError {
        code: code.to_owned(),
        message: message.to_owned(),
    }
}

/// What a script gets of an answer: its error thrown; else its structured content (the Python
/// SDK's lone `result` wrapper taken off, a JSON text in it parsed), else the JSON of a lone
/// text, else the text; several blocks as a list.
fn value_of(result: CallToolResult) -> Result<Value, HostError> {
    if result.is_error == Some(true) {
        let error = result
            .structured_content
            .as_ref()
            .and_then(|s| s.get("error"));
        let code = error
            .and_then(|e| e.get("code"))
            .and_then(Value::as_str)
            .unwrap_or("upstream_tool_error");
        let message = match error.and_then(|e| e.get("message")).and_then(Value::as_str) {
            Some(m) => m.to_owned(),
            None => texts(&result.content).join(" "),
        };
        return Err(refused(code, &message));
    }
    if let Some(structured) = result.structured_content {
        return Ok(match structured {
            Value::Object(mut map) if map.len() == 1 && map.contains_key("result") => {
                match map.remove("result").unwrap_or_default() {
                    Value::String(text) => parsed(text),
                    other => other,
                }
            }
            other => other,
        });
    }
    let mut content = result.content;
    if content.len() == 1
        && let Some(ContentBlock::Text(t)) = content.pop()
    {
        return Ok(parsed(t.text));
    }
    if content.iter().all(|c| c.as_text().is_some()) {
        return Ok(Value::Array(
            content
                .into_iter()
                .filter_map(|c| match c {
                    ContentBlock::Text(t) => Some(parsed(t.text)),
                    _ => None,
                })
                .collect(),
        ));
    }
    Ok(serde_json::to_value(content).unwrap_or_default())
}

/// A query's answer as the rows a script iterates: one object a row, keyed by column. A result
/// cut short is an error rather than rows silently missing.
fn rows_of(answer: Value) -> Result<Value, HostError> {
    if answer.get("truncated") == Some(&Value::Bool(true)) {
        let count = answer.get("row_count").and_then(Value::as_u64).unwrap_or(0);
        return Err(refused(
            "file_too_large",
            &format!(
                "the query has {count} rows, more than a script gets at once ({QUERY_ROWS}, or 8 MiB): aggregate in SQL, or page with LIMIT and OFFSET"
            ),
        ));
    }
    let names: Vec<String> = answer
        .get("columns")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|c| {
            c.get("name")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned()
        })
        .collect();
    let rows = match answer.get("rows") {
        Some(Value::Array(rows)) => rows,
        _ => return Ok(answer),
    };
    Ok(Value::Array(
        rows.iter()
            .map(|row| {
                let cells = row.as_array().map(Vec::as_slice).unwrap_or_default();
                Value::Object(names.iter().cloned().zip(cells.iter().cloned()).collect())
            })
            .collect(),
    ))
}

fn texts(content: &[ContentBlock]) -> Vec<&str> {
    content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.as_str()))
        .collect()
}

/// A text that holds JSON, as that JSON; any other text as itself.
fn parsed(text: String) -> Value {
    let looks = matches!(
        text.trim_start().as_bytes().first(),
        Some(b'{' | b'[' | b'"' | b'-' | b'0'..=b'9' | b't' | b'f' | b'n')
    );
    if looks && let Ok(value) = serde_json::from_str(&text) {
        return value;
    }
    Value::String(text)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(t: &str) -> CallToolResult {
        CallToolResult::success(vec![ContentBlock::text(t)])
    }

    #[test]
    fn a_tools_value_is_what_a_script_expects() {
        let mut python = text("{\"result\": 3}");
        python.structured_content = Some(json!({"result": 3}));
        assert_eq!(value_of(python).unwrap(), json!(3));
        let mut wrapped_text = text("");
        wrapped_text.structured_content = Some(json!({"result": "[{\"a\": 1}]"}));
        assert_eq!(value_of(wrapped_text).unwrap(), json!([{"a": 1}]));
        let mut structured = text("ignored");
        structured.structured_content = Some(json!({"total": 2, "items": []}));
        assert_eq!(
            value_of(structured).unwrap(),
            json!({"total": 2, "items": []})
        );
        assert_eq!(value_of(text("{\"a\": [1]}")).unwrap(), json!({"a": [1]}));
        assert_eq!(value_of(text("hello")).unwrap(), json!("hello"));
        assert_eq!(value_of(text("12 apples")).unwrap(), json!("12 apples"));
        let two = CallToolResult::success(vec![ContentBlock::text("1"), ContentBlock::text("x")]);
        assert_eq!(value_of(two).unwrap(), json!([1, "x"]));
        let failed = CallToolResult::error(vec![ContentBlock::text("no such issue")]);
        let e = value_of(failed).unwrap_err();
        assert_eq!(
            (e.code.as_str(), e.message.as_str()),
            ("upstream_tool_error", "no such issue")
        );
        let ours = answer::error(&ToolError::new(
            ErrorCode::PathNotFound,
            "gone.csv is not there",
        ));
        assert_eq!(value_of(ours).unwrap_err().code, "path_not_found");
    }
}
