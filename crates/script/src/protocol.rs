//! What the engine and a script worker (`offload script-worker`) say to each other over the
//! worker's pipes: JSON, one message a line. To the worker: one [`ToWorker::Run`], then an
//! [`ToWorker::Answer`] for each ask. From it: an [`FromWorker::Ask`] for each host call, then
//! [`FromWorker::Done`] or [`FromWorker::Failed`].

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::{Call, Failed, HostError, Limits, Outcome, Request};

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToWorker {
    Run {
        code: String,
        #[serde(default)]
        limits: Limits,
    },
    Answer(Answer),
}

/// The host's answer to one ask.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Answer {
    pub id: u64,
    #[serde(flatten)]
    pub reply: Reply,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Reply {
    Value { value: Value },
    Error { error: HostError },
}

impl From<Result<Value, HostError>> for Reply {
    fn from(result: Result<Value, HostError>) -> Self {
        match result {
            Ok(value) => Reply::Value { value },
            Err(error) => Reply::Error { error },
        }
    }
}

impl From<Reply> for Result<Value, HostError> {
    fn from(reply: Reply) -> Self {
        match reply {
            Reply::Value { value } => Ok(value),
            Reply::Error { error } => Err(error),
        }
    }
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum FromWorker {
    Ask { id: u64, request: Request },
    Done(Outcome),
    Failed(Stopped),
}

/// A run that ended without an answer, as the model is told: the error's code (`script_timeout`,
/// `script_memory`, `too_many_calls`, `script_error`, `tool_error`, or the worker's own
/// `script_unavailable`), its message, where in the script, and what happened before.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Stopped {
    pub code: String,
    pub message: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub line: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub column: Option<u32>,
    #[serde(default)]
    pub logs: Vec<String>,
    #[serde(default)]
    pub calls: Vec<Call>,
}

impl Stopped {
    /// A stop before any script ran.
    pub fn before(code: &str, message: impl Into<String>) -> Self {
        Stopped {
            code: code.to_owned(),
            message: message.into(),
            line: None,
            column: None,
            logs: Vec::new(),
            calls: Vec::new(),
        }
    }
}

impl From<Failed> for Stopped {
    fn from(failed: Failed) -> Self {
        let (line, column) = match &failed.failure {
            crate::Failure::Script { line, column, .. } => (*line, *column),
            _ => (None, None),
        };
        Stopped {
            code: failed.failure.code().to_owned(),
            message: failed.failure.to_string(),
            line,
            column,
            logs: failed.logs,
            calls: failed.calls,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn messages_read_as_they_are_written() {
        let run: ToWorker = serde_json::from_value(
            json!({"run": {"code": "return 1", "limits": {"deadline_ms": 250}}}),
        )
        .unwrap();
        let ToWorker::Run { limits, .. } = &run else {
            panic!("{run:?}")
        };
        assert_eq!(limits.deadline, std::time::Duration::from_millis(250));
        assert_eq!(
            limits.calls,
            Limits::default().calls,
            "missing limits are the defaults"
        );
        let answer = ToWorker::Answer(Answer {
            id: 7,
            reply: Err(HostError {
                code: "forbidden".into(),
                message: "no".into(),
            })
            .into(),
        });
        let text = serde_json::to_string(&answer).unwrap();
        assert_eq!(
            text,
            r#"{"answer":{"id":7,"error":{"code":"forbidden","message":"no"}}}"#
        );
        assert_eq!(serde_json::from_str::<ToWorker>(&text).unwrap(), answer);
        let ask: FromWorker = serde_json::from_value(
            json!({"ask": {"id": 1, "request": {"kind": "query", "path": "a.csv", "sql": "SELECT 1"}}}),
        )
        .unwrap();
        assert!(matches!(
            ask,
            FromWorker::Ask {
                id: 1,
                request: Request::Query { .. }
            }
        ));
        assert!(serde_json::from_str::<FromWorker>(r#"{"done": 1}"#).is_err());
    }
}
