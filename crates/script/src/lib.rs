//! Runs a model's script: the body of an async JavaScript function (ES2023, QuickJS-NG through
//! `rquickjs`), whose `return` is the answer. The script reaches the world only through its
//! globals — `tools.<server>.<tool>(args)`, `tools.call(server, tool, args)`, `offload.store`,
//! `offload.query`, `offload.read`, `offload.schema` — each a request to a [`Host`], which
//! decides what it may do. No `require`, `process`, `fetch` or module imports exist.
//!
//! Limits that hold: a deadline enforced by an interrupt the script cannot catch (and, while it
//! waits on the host, by a timer); a memory cap; a number of host calls and how many run at
//! once; the bytes its `console` may log. Knows nothing of MCP or the engine: the engine is the
//! host, and the worker process around this is confined (see `offload-sandbox`).
//!
//! A run is not `Send` (the JavaScript runtime lives on one thread): await it on a
//! current-thread runtime.
//!
//! Without the default `runtime` feature the crate is only its types and the [`protocol`] the
//! engine and the worker process speak: the engine uses it so, and links no JavaScript engine.

use std::future::Future;
use std::pin::Pin;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use serde_json::Value;

pub mod protocol;
#[cfg(feature = "runtime")]
mod runtime;
#[cfg(feature = "runtime")]
pub use runtime::run;

/// How much a script may use.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Limits {
    /// Wall-clock time from start to answer.
    #[serde(rename = "deadline_ms", with = "millis")]
    pub deadline: Duration,
    /// Bytes of JavaScript heap.
    pub memory: usize,
    /// Tool calls and stores in all (reading files is bounded by the deadline).
    pub calls: usize,
    /// Host calls at once.
    pub concurrency: usize,
    /// Bytes of `console` output kept.
    pub log_bytes: usize,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            deadline: Duration::from_secs(30),
            memory: 64 << 20,
            calls: 200,
            concurrency: 8,
            log_bytes: 64 << 10,
        }
    }
}

/// A duration as whole milliseconds.
mod millis {
    use std::time::Duration;

    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(d: &Duration, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_u64(u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<Duration, D::Error> {
        u64::deserialize(d).map(Duration::from_millis)
    }
}

/// What a script asks of its host.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Request {
    Tool {
        server: String,
        tool: String,
        args: Value,
    },
    Store {
        value: Value,
        name: Option<String>,
        format: Option<String>,
    },
    Query {
        path: String,
        sql: String,
    },
    Read {
        path: String,
        options: Value,
    },
    Schema {
        path: String,
    },
}

impl Request {
    /// How the call reads in a script (`tools.fx.echo`, `offload.query`).
    pub fn label(&self) -> String {
        match self {
            Request::Tool { server, tool, .. } => format!("tools.{server}.{tool}"),
            Request::Store { .. } => "offload.store".into(),
            Request::Query { .. } => "offload.query".into(),
            Request::Read { .. } => "offload.read".into(),
            Request::Schema { .. } => "offload.schema".into(),
        }
    }
}

/// A host's refusal or failure, as the script sees it (`ToolError` for a tool's).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize, thiserror::Error)]
#[error("{message}")]
pub struct HostError {
    pub code: String,
    pub message: String,
}

/// The answer to one request, made on the script's thread.
pub type HostFuture = Pin<Box<dyn Future<Output = Result<Value, HostError>>>>;

/// What answers a script's requests (the engine, through the worker's pipe).
pub trait Host {
    fn ask(&self, request: Request) -> HostFuture;
}

/// The calls a script made to one thing (`tools.fx.echo`, `offload.query`, ...), tallied: a
/// script that calls a tool 200 times costs its answer one line, not 200.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Call {
    pub call: String,
    pub count: u32,
    /// How many of them failed.
    pub failed: u32,
    /// Their time added up, in whole milliseconds.
    pub millis: u64,
    /// The same in microseconds, so that many short calls add up.
    #[serde(skip)]
    micros: u64,
}

impl Call {
    /// Adds one call of `label` to `calls`.
    pub fn tally(calls: &mut Vec<Call>, label: String, ok: bool, took: Duration) {
        let micros = u64::try_from(took.as_micros()).unwrap_or(u64::MAX);
        let failed = u32::from(!ok);
        let call = match calls.iter_mut().position(|c| c.call == label) {
            Some(i) => &mut calls[i],
            None => {
                calls.push(Call {
                    call: label,
                    count: 0,
                    failed: 0,
                    millis: 0,
                    micros: 0,
                });
                calls.last_mut().expect("pushed")
            }
        };
        call.count += 1;
        call.failed += failed;
        call.micros = call.micros.saturating_add(micros);
        call.millis = call.micros / 1000;
    }

    /// Calls in all.
    pub fn total(calls: &[Call]) -> u32 {
        calls.iter().map(|c| c.count).sum()
    }
}

/// A finished run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Outcome {
    pub result: Value,
    pub logs: Vec<String>,
    pub calls: Vec<Call>,
}

/// Why a run ended without an answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Failure {
    #[error("the script ran past its deadline of {} ms", .0.as_millis())]
    Timeout(Duration),
    #[error("the script needed more than its {} MiB of memory", .0 >> 20)]
    Memory(usize),
    #[error("the script made more than its {0} tool calls and stores")]
    TooManyCalls(usize),
    #[error("{message}{}", at(*.line, *.column))]
    Script {
        message: String,
        line: Option<u32>,
        column: Option<u32>,
    },
    #[error("{server}.{tool} failed: {message}")]
    Tool {
        server: String,
        tool: String,
        message: String,
    },
}

fn at(line: Option<u32>, column: Option<u32>) -> String {
    match (line, column) {
        (Some(l), Some(c)) => format!(" (line {l}, column {c})"),
        (Some(l), None) => format!(" (line {l})"),
        _ => String::new(),
    }
}

impl Failure {
    /// The error code the model sees.
    pub fn code(&self) -> &'static str {
        match self {
            Failure::Timeout(_) => "script_timeout",
            Failure::Memory(_) => "script_memory",
            Failure::TooManyCalls(_) => "too_many_calls",
            Failure::Script { .. } => "script_error",
            Failure::Tool { .. } => "tool_error",
        }
    }
}

/// A run that ended without an answer, with what it logged and called before.
#[derive(Debug, Clone, PartialEq)]
pub struct Failed {
    pub failure: Failure,
    pub logs: Vec<String>,
    pub calls: Vec<Call>,
}

#[cfg(all(test, feature = "runtime"))]
mod tests;
