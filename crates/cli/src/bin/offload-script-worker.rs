//! `offload-script-worker`: the process a model's script runs in (issue 40's isolation), a
//! program of its own beside `offload` so that `offload` links no JavaScript engine and a worker
//! starts small. It confines itself before it reads anything — no file, no socket, no network,
//! no new processes or privileges, its memory and threads limited — then runs one script with
//! `offload_script`, asking the engine over its pipes for whatever the script calls, and exits.
//! A crash of the script engine costs this process, never the gateway.
//!
//! The pipes carry JSON, a message a line (`offload_script::protocol`). In: `{"run": {"code",
//! "limits"}}` once, then `{"answer": {"id", "value" | "error"}}` for each ask. Out: `{"ask":
//! {"id", "request"}}` for each host call, then `{"done": {"result", "logs", "calls"}}` or
//! `{"failed": {"code", "message", "line"?, "column"?, "logs", "calls"}}`.
//!
//! `--probe ATTEMPT [--unconfined]` instead makes one attempt at the outside world (`read:PATH`,
//! `write:PATH`, `tcp:PORT`, `unix:PATH`, `spawn:PROGRAM`, `exec:PROGRAM`, `thread`), confined as
//! for a script unless `--unconfined`, and says how it went: the proof of the confinement.
//!
//! `sandbox-exec --policy JSON -- PROGRAM ARGS...` is the launcher of confined servers, as
//! `offload sandbox-exec` is: it applies the policy to itself and execs the server
//! (`offload_sandbox::launch`). Every confined server's start runs it first, so it lives in this
//! small program rather than the 60 MB `offload` (milliseconds just to be loaded), and in no
//! program of its own (that was 0.5 MB more to install).

use std::cell::{Cell, RefCell};
use std::collections::HashMap;
use std::io::Write;
use std::process::ExitCode;
use std::rc::Rc;

use offload_script::protocol::{FromWorker, Stopped, ToWorker};
use offload_script::{Host, HostError, HostFuture, Request};
use serde_json::Value;
use tokio::io::AsyncBufReadExt;

/// The worker's own confinement: nothing to read or write, no network, no unix sockets, no new
/// processes or programs; its heap bounded well above a script's cap, a few threads (the
/// runtime's and stdin's).
fn policy() -> offload_sandbox::Policy {
    offload_sandbox::Policy {
        limits: offload_sandbox::Limits {
            memory: Some(1 << 30),
            processes: Some(16),
        },
        no_new_processes: true,
        ..offload_sandbox::Policy::default()
    }
}

fn main() -> ExitCode {
    let raw: Vec<std::ffi::OsString> = std::env::args_os().skip(1).collect();
    if raw.first().is_some_and(|a| a == offload_sandbox::LAUNCH) {
        return sandbox_exec(&raw[1..]);
    }
    let args: Vec<String> = raw
        .into_iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect();
    match args.iter().map(String::as_str).collect::<Vec<_>>()[..] {
        [] => run(),
        ["--probe", attempt] => probe(attempt, false),
        ["--probe", attempt, "--unconfined"] | ["--unconfined", "--probe", attempt] => {
            probe(attempt, true)
        }
        _ => {
            eprintln!(
                "offload-script-worker is started by Offload to run one script; \
                 usage: offload-script-worker [--probe ATTEMPT [--unconfined]], or \
                 offload-script-worker sandbox-exec --policy JSON -- PROGRAM [ARGS...]"
            );
            ExitCode::from(2)
        }
    }
}

/// The launcher: `--policy JSON -- PROGRAM ARGS...` (the server's arguments need not be UTF-8).
fn sandbox_exec(args: &[std::ffi::OsString]) -> ExitCode {
    let refuse = |why: &str| {
        eprintln!("offload sandbox: {why}; the server was not started");
        ExitCode::from(offload_sandbox::CANNOT_RUN)
    };
    match args {
        [flag, policy, dashes, command @ ..] if flag == "--policy" && dashes == "--" => {
            match policy.to_str() {
                Some(policy) => offload_sandbox::launch(policy, command),
                None => refuse("the policy is not UTF-8"),
            }
        }
        _ => refuse("usage: offload-script-worker sandbox-exec --policy JSON -- PROGRAM [ARGS...]"),
    }
}

fn run() -> ExitCode {
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

/// One attempt at the outside world, confined as a worker is (or not, for the positive
/// control); prints `{"attempt", "done", "error"?}`.
fn probe(attempt: &str, unconfined: bool) -> ExitCode {
    #[cfg(target_os = "linux")]
    if !unconfined && let Err(e) = offload_sandbox::confine(&policy()) {
        eprintln!("cannot confine: {e}");
        return ExitCode::FAILURE;
    }
    let (kind, target) = attempt.split_once(':').unwrap_or((attempt, ""));
    let outcome: std::io::Result<()> = match kind {
        "read" => std::fs::read(target).map(drop),
        "write" => std::fs::write(target, b"written by a script worker"),
        "tcp" => std::net::TcpStream::connect(("127.0.0.1", target.parse().unwrap_or(0))).map(drop),
        #[cfg(unix)]
        "unix" => std::os::unix::net::UnixStream::connect(target).map(drop),
        "spawn" => std::process::Command::new(target).status().map(drop),
        #[cfg(unix)]
        "exec" => {
            use std::os::unix::process::CommandExt;
            Err(std::process::Command::new(target).exec())
        }
        "thread" => std::thread::spawn(|| 1 + 1)
            .join()
            .map(drop)
            .map_err(|_| std::io::Error::other("the thread panicked")),
        other => Err(std::io::Error::other(format!("no attempt {other:?}"))),
    };
    let said = match &outcome {
        Ok(()) => serde_json::json!({"attempt": attempt, "done": true}),
        Err(e) => serde_json::json!({"attempt": attempt, "done": false, "error": e.to_string()}),
    };
    let _ = writeln!(std::io::stdout(), "{said}");
    ExitCode::SUCCESS
}

fn say(message: &FromWorker) {
    let mut out = std::io::stdout().lock();
    let _ = serde_json::to_writer(&mut out, message);
    let _ = writeln!(out);
    let _ = out.flush();
}

fn say_failed(code: &str, message: &str) -> ExitCode {
    say(&FromWorker::Failed(Stopped::before(code, message)));
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
        say(&FromWorker::Ask { id, request });
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

/// Stdin as a pipe the runtime polls, when it is one.
#[cfg(unix)]
fn stdin_pipe() -> Option<tokio::net::unix::pipe::Receiver> {
    use std::os::fd::AsFd;
    let fd = std::io::stdin().as_fd().try_clone_to_owned().ok()?;
    tokio::net::unix::pipe::Receiver::from_owned_fd(fd).ok()
}

#[cfg(not(unix))]
fn stdin_pipe() -> Option<tokio::io::Stdin> {
    None
}

async fn serve() -> ExitCode {
    // Stdin read through the runtime's own poller when it is a pipe (as the engine starts the
    // worker), not a thread that blocks on it: a script's every call waits on this read.
    let input: std::pin::Pin<Box<dyn tokio::io::AsyncRead>> = match stdin_pipe() {
        Some(pipe) => Box::pin(pipe),
        None => Box::pin(tokio::io::stdin()),
    };
    let mut lines = tokio::io::BufReader::new(input).lines();
    let (code, limits) = match lines.next_line().await {
        Ok(Some(line)) => match serde_json::from_str::<ToWorker>(&line) {
            Ok(ToWorker::Run { code, limits }) => (code, limits),
            _ => {
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
            let Ok(ToWorker::Answer(answer)) = serde_json::from_str::<ToWorker>(&line) else {
                continue;
            };
            let Some(tx) = waiting.borrow_mut().remove(&answer.id) else {
                continue;
            };
            let result: Result<Value, HostError> = answer.reply.into();
            let _ = tx.send(result);
        }
        // The engine closed the pipe: nothing more will be answered.
        std::future::pending::<()>().await;
    };
    let script = offload_script::run(&code, host, &limits);
    let outcome = tokio::select! {
        outcome = script => outcome,
        () = answers => unreachable!("pending forever"),
    };
    match outcome {
        Ok(done) => say(&FromWorker::Done(done)),
        Err(failed) => say(&FromWorker::Failed(failed.into())),
    }
    ExitCode::SUCCESS
}
