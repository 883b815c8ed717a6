//! The run itself: a QuickJS-NG runtime and context per script, the prelude's globals wired to
//! the host, and the limits enforced.

use std::cell::{Cell, RefCell};
use std::rc::Rc;
use std::time::{Duration, Instant};

use rquickjs::prelude::Async;
use rquickjs::{AsyncContext, AsyncRuntime, CatchResultExt, CaughtError, Ctx, Function, Promise};
use serde_json::Value;

use crate::{Call, Failed, Failure, Host, Limits, Outcome, Request};

const PRELUDE: &str = include_str!("prelude.js");

/// What the host functions share with the run.
struct State {
    host: Rc<dyn Host>,
    limits: Limits,
    calls: RefCell<Vec<Call>>,
    asked: Cell<usize>,
    over: Cell<bool>,
    in_flight: tokio::sync::Semaphore,
    logs: RefCell<Vec<String>>,
    logged: Cell<usize>,
    cut: Cell<usize>,
}

impl State {
    /// The host's answer to `request` (JSON text), as the prelude reads it.
    async fn answer(self: Rc<Self>, request: String) -> String {
        let refusal = |code: &str, message: String| {
            serde_json::json!({"ok": false, "error": {"code": code, "message": message}})
                .to_string()
        };
        let request: Request = match serde_json::from_str(&request) {
            Ok(r) => r,
            Err(e) => return refusal("invalid_arguments", format!("not a request: {e}")),
        };
        // What acts counts: tool calls and stores. Reading files is bounded by the deadline.
        if matches!(request, Request::Tool { .. } | Request::Store { .. }) {
            let n = self.asked.get() + 1;
            self.asked.set(n);
            if n > self.limits.calls {
                self.over.set(true);
                return refusal(
                    "too_many_calls",
                    format!(
                        "the script made more than its {} tool calls and stores",
                        self.limits.calls
                    ),
                );
            }
        }
        let Ok(_permit) = self.in_flight.acquire().await else {
            return refusal("internal", "the run is over".into());
        };
        let label = request.label();
        let started = Instant::now();
        let answer = self.host.ask(request).await;
        Call::tally(
            &mut self.calls.borrow_mut(),
            label,
            answer.is_ok(),
            started.elapsed(),
        );
        match answer {
            Ok(value) => serde_json::json!({"ok": true, "value": value}).to_string(),
            Err(e) => refusal(&e.code, e.message),
        }
    }

    fn log(&self, line: String) {
        let room = self.limits.log_bytes.saturating_sub(self.logged.get());
        if line.len() > room {
            self.cut.set(self.cut.get() + line.len());
            return;
        }
        self.logged.set(self.logged.get() + line.len());
        self.logs.borrow_mut().push(line);
    }

    fn logs(&self) -> Vec<String> {
        let mut logs = self.logs.borrow().clone();
        if self.cut.get() > 0 {
            logs.push(format!(
                "… {} more bytes of log left out (the limit is {} bytes)",
                self.cut.get(),
                self.limits.log_bytes
            ));
        }
        logs
    }
}

/// Runs `code` (an async function's body) against `host` under `limits`.
pub async fn run(code: &str, host: Rc<dyn Host>, limits: &Limits) -> Result<Outcome, Failed> {
    let state = Rc::new(State {
        host,
        limits: limits.clone(),
        calls: RefCell::default(),
        asked: Cell::new(0),
        over: Cell::new(false),
        in_flight: tokio::sync::Semaphore::new(limits.concurrency.max(1)),
        logs: RefCell::default(),
        logged: Cell::new(0),
        cut: Cell::new(0),
    });
    let ended = |failure: Failure| Failed {
        failure,
        logs: state.logs(),
        calls: state.calls.borrow().clone(),
    };
    let deadline = Instant::now() + limits.deadline;
    let run = evaluate(code, state.clone(), deadline, limits);
    let answer = match tokio::time::timeout_at(deadline.into(), run).await {
        Ok(answer) => answer,
        // Waiting on the host, or on a timer, past the deadline.
        Err(_) => Err(Failure::Timeout(limits.deadline)),
    };
    if state.over.get() {
        return Err(ended(Failure::TooManyCalls(limits.calls)));
    }
    match answer {
        Ok(text) => Ok(Outcome {
            result: serde_json::from_str(&text).unwrap_or(Value::String(text)),
            logs: state.logs(),
            calls: state.calls.borrow().clone(),
        }),
        Err(failure) => Err(ended(failure)),
    }
}

/// The script's answer as JSON text.
async fn evaluate(
    code: &str,
    state: Rc<State>,
    deadline: Instant,
    limits: &Limits,
) -> Result<String, Failure> {
    let setup = |e: rquickjs::Error| Failure::Script {
        message: format!("the script engine could not start: {e}"),
        line: None,
        column: None,
    };
    let runtime = AsyncRuntime::new().map_err(setup)?;
    runtime.set_memory_limit(limits.memory).await;
    runtime.set_max_stack_size(1 << 20).await;
    // Checked by the interpreter as it runs: past the deadline, or over its calls, the script
    // is stopped with an exception no `catch` sees.
    let over = state.clone();
    runtime
        .set_interrupt_handler(Some(Box::new(move || {
            over.over.get() || Instant::now() >= deadline
        })))
        .await;
    let context = AsyncContext::full(&runtime).await.map_err(setup)?;
    let body = format!("__run(async () => {{\n{code}\n}})");
    let memory = limits.memory;
    let timeout = limits.deadline;
    context
        .async_with(async move |ctx| {
            let failed = |c: CaughtError<'_>| failure(c, memory, timeout, deadline);
            install(&ctx, state).catch(&ctx).map_err(failed)?;
            ctx.eval::<(), _>(PRELUDE).catch(&ctx).map_err(failed)?;
            let promise: Promise = ctx.eval(body).catch(&ctx).map_err(failed)?;
            let answer = promise.into_future::<String>().await;
            answer.catch(&ctx).map_err(failed)
        })
        .await
}

/// The host functions the prelude takes: `__host`, `__log`, `__sleep`.
fn install(ctx: &Ctx<'_>, state: Rc<State>) -> rquickjs::Result<()> {
    let globals = ctx.globals();
    let asking = state.clone();
    globals.set(
        "__host",
        Function::new(
            ctx.clone(),
            Async(move |request: String| {
                let state = asking.clone();
                async move { Ok::<_, rquickjs::Error>(state.answer(request).await) }
            }),
        )?,
    )?;
    let logging = state;
    globals.set(
        "__log",
        Function::new(ctx.clone(), move |line: String| logging.log(line))?,
    )?;
    globals.set(
        "__sleep",
        Function::new(
            ctx.clone(),
            Async(|ms: f64| async move {
                let ms = if ms.is_finite() && ms > 0.0 { ms } else { 0.0 };
                tokio::time::sleep(Duration::from_secs_f64(ms / 1000.0)).await;
                Ok::<_, rquickjs::Error>(())
            }),
        )?,
    )?;
    Ok(())
}

/// What went wrong, from the error the engine gave.
fn failure(
    caught: CaughtError<'_>,
    memory: usize,
    timeout: Duration,
    deadline: Instant,
) -> Failure {
    if Instant::now() >= deadline {
        return Failure::Timeout(timeout);
    }
    match &caught {
        CaughtError::Error(rquickjs::Error::Allocation) => return Failure::Memory(memory),
        CaughtError::Exception(e) => {
            let message = e.message().unwrap_or_default();
            if message.contains("out of memory") {
                return Failure::Memory(memory);
            }
            let (line, column) = e.stack().as_deref().map_or((None, None), position);
            let name = e
                .get::<_, String>("name")
                .ok()
                .unwrap_or_else(|| "Error".into());
            if name == "ToolError" {
                let field = |k: &str| e.get::<_, String>(k).unwrap_or_default();
                return Failure::Tool {
                    server: field("server"),
                    tool: field("tool"),
                    message,
                };
            }
            return Failure::Script {
                message: format!("{name}: {message}"),
                line,
                column,
            };
        }
        // QuickJS throws `null` when it cannot even allocate its "out of memory" error (a
        // script that throws `null` itself is reported the same way).
        CaughtError::Value(v) if v.is_null() || v.is_undefined() => {
            return Failure::Memory(memory);
        }
        CaughtError::Value(v) => {
            let text = v
                .as_string()
                .and_then(|s| s.to_string().ok())
                .unwrap_or_else(|| format!("{v:?}"));
            if text.contains("out of memory") {
                return Failure::Memory(memory);
            }
            return Failure::Script {
                message: format!("the script threw {text}"),
                line: None,
                column: None,
            };
        }
        _ => {}
    }
    let text = caught.to_string();
    if text.contains("out of memory") || text.contains("Allocation") {
        return Failure::Memory(memory);
    }
    Failure::Script {
        message: text,
        line: None,
        column: None,
    }
}

/// The script's line and column of the innermost frame in `stack` (its first line is line 1:
/// the wrapper's own line is taken off).
fn position(stack: &str) -> (Option<u32>, Option<u32>) {
    for frame in stack.lines() {
        let Some(open) = frame.rfind('(') else {
            continue;
        };
        let inner = frame[open + 1..].trim_end_matches(')');
        let mut parts = inner.rsplitn(3, ':');
        let column = parts.next().and_then(|c| c.parse::<u32>().ok());
        let line = parts.next().and_then(|l| l.parse::<u32>().ok());
        if let (Some(line), Some(column)) = (line, column) {
            return (Some(line.saturating_sub(1).max(1)), Some(column));
        }
    }
    (None, None)
}
