//! `offload script-worker`: the process a model's script runs in (issue 40's isolation). It
//! confines itself before it reads anything — no file, no socket, no network, no new
//! privileges, its memory and threads limited — then runs one script with `offload_script`,
//! asking the engine over its pipes for whatever the script calls, and exits. A crash of the
//! script engine costs this process, never the gateway.
//!
//! The pipes carry JSON, a message a line. In: `{"run": {"code", "limits"}}` once, then
//! `{"answer": {"id", "ok", "value" | "error"}}` for each ask. Out: `{"ask": {"id", "request"}}`
//! for each host call, then `{"done": {"result", "logs", "calls"}}` or `{"failed": {"code",
//! "message", "logs", "calls"}}`.

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::rc::Rc;
use std::time::Duration;

use offload_script::{Failed, Host, HostError, HostFuture, Limits, Request};
use serde::Deserialize;
use serde_json::{Value, json};
use tokio::io::AsyncBufReadExt;

/// What a worker is given to run.
#[derive(Deserialize)]
struct Run {
    code: String,
    #[serde(default)]
    limits: LimitsIn,
}

#[derive(Deserialize, Default)]
#[serde(default)]
struct LimitsIn {
    deadline_ms: Option<u64>,
    memory: Option<usize>,
    calls: Option<usize>,
    concurrency: Option<usize>,
    log_bytes: Option<usize>,
}

impl LimitsIn {
    fn limits(&self) -> Limits {
        let d = Limits::default();
        Limits {
            deadline: self.deadline_ms.map_or(d.deadline, Duration::from_millis),
            memory: self.memory.unwrap_or(d.memory),
            calls: self.calls.unwrap_or(d.calls),
            concurrency: self.concurrency.unwrap_or(d.concurrency),
            log_bytes: self.log_bytes.unwrap_or(d.log_bytes),
        }
    }
}

/// The worker's own confinement: nothing to read or write, no network, no unix sockets; its
/// heap bounded well above a script's cap, a few threads (the runtime's and stdin's).
fn policy() -> offload_sandbox::Policy {
    offload_sandbox::Policy {
        limits: offload_sandbox::Limits {
            memory: Some(1 << 30),
            processes: Some(16),
        },
        ..offload_sandbox::Policy::default()
    }
}

pub fn run() -> ExitCode {
    #[cfg(target_os = "linux")]
    if let Err(e) = offload_sandbox::confine(&policy()) {
        return say_failed(
            "script_unavailable",
            &format!("the script worker cannot be confined: {e}"),
        );
    }
    #[cfg(not(target_os = "linux"))]
    {
        let _ = policy();
        return say_failed(
            "script_unavailable",
            "scripts run in a confined worker, which is built for Linux only so far",
        );
    }
    #[allow(unreachable_code)]
    {
        let runtime = match tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
        {
            Ok(r) => r,
            Err(e) => return say_failed("script_unavailable", &format!("no runtime: {e}")),
        };
        runtime.block_on(serve())
    }
}

fn say(message: &Value) {
    let mut out = std::io::stdout().lock();
    let _ = writeln!(out, "{message}");
    let _ = out.flush();
}

fn say_failed(code: &str, message: &str) -> ExitCode {
    say(&json!({"failed": {"code": code, "message": message, "logs": [], "calls": []}}));
    ExitCode::FAILURE
}

/// The asks sent and not answered yet, by id.
type Waiting = Rc<RefCell<HashMap<u64, tokio::sync::oneshot::Sender<Result<Value, HostError>>>>>;

/// Asks go out on stdout; answers come in on stdin, matched by id.
struct PipeHost {
    next: Cell<u64>,
    waiting: Waiting,
}

impl Host for PipeHost {
    fn ask(&self, request: Request) -> HostFuture {
        let id = self.next.get();
        self.next.set(id + 1);
        let (tx, rx) = tokio::sync::oneshot::channel();
        self.waiting.borrow_mut().insert(id, tx);
        say(&json!({"ask": {"id": id, "request": request}}));
        Box::pin(async move {
            rx.await.unwrap_or_else(|_| {
                Err(HostError {
                    code: "internal".into(),
                    message: "the engine went away".into(),
                })
            })
        })
    }
}

async fn serve() -> ExitCode {
    let mut lines = tokio::io::BufReader::new(tokio::io::stdin()).lines();
    let run: Run = match lines.next_line().await {
        Ok(Some(line)) => match serde_json::from_str::<Value>(&line)
            .ok()
            .and_then(|v| serde_json::from_value(v.get("run")?.clone()).ok())
        {
            Some(run) => run,
            None => {
                return say_failed(
                    "invalid_arguments",
                    "the first line is not {\"run\": {\"code\": ...}}",
                );
            }
        },
        _ => return say_failed("invalid_arguments", "nothing to run"),
    };
    let waiting: Waiting = Rc::default();
    let host = Rc::new(PipeHost {
        next: Cell::new(1),
        waiting: waiting.clone(),
    });
    let answers = async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let Some(answer) = serde_json::from_str::<Value>(&line)
                .ok()
                .and_then(|v| v.get("answer").cloned())
            else {
                continue;
            };
            let Some(id) = answer.get("id").and_then(Value::as_u64) else {
                continue;
            };
            let Some(tx) = waiting.borrow_mut().remove(&id) else {
                continue;
            };
            let result = if answer.get("ok").and_then(Value::as_bool) == Some(true) {
                Ok(answer.get("value").cloned().unwrap_or(Value::Null))
            } else {
                Err(
                    serde_json::from_value(answer.get("error").cloned().unwrap_or_default())
                        .unwrap_or(HostError {
                            code: "internal".into(),
                            message: "the engine's answer could not be read".into(),
                        }),
                )
            };
            let _ = tx.send(result);
        }
        // The engine closed the pipe: nothing more will be answered.
        std::future::pending::<()>().await;
    };
    let limits = run.limits.limits();
    let script = offload_script::run(&run.code, host, &limits);
    let outcome = tokio::select! {
        outcome = script => outcome,
        () = answers => unreachable!("pending forever"),
    };
    match outcome {
        Ok(done) => {
            say(&json!({"done": done}));
            ExitCode::SUCCESS
        }
        Err(Failed {
            failure,
            logs,
            calls,
        }) => {
            say(&json!({"failed": {
                "code": failure.code(),
                "message": failure.to_string(),
                "logs": logs,
                "calls": calls,
            }}));
            ExitCode::SUCCESS
        }
    }
}
