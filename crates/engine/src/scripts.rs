//! The processes scripts run in: `offload-script-worker` (beside `offload`), each confined
//! before it reads its one script (no file system, no sockets, no new processes; see
//! `crates/cli/src/bin/offload-script-worker.rs`), spoken to over its pipes
//! (`offload_script::protocol`). One worker is kept started and confined ahead of the next
//! script, so a script starts without waiting for a process.
//!
//! The worker enforces a script's limits itself; this side holds them too: past the deadline
//! and a grace the worker is killed, and a worker that dies costs its one script.

use std::path::PathBuf;
use std::process::Stdio;
use std::sync::Mutex;
use std::time::{Duration, Instant};

use futures::future::BoxFuture;
use futures::stream::{FuturesUnordered, StreamExt};
use offload_script::protocol::{Answer, FromWorker, Stopped, ToWorker};
use offload_script::{Call, HostError, Limits, Outcome, Request};
use serde_json::Value;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

use crate::upstream::limited::LimitedLines;

/// Workers kept started ahead of the next script.
const WARM: usize = 1;
/// Scripts that run at once; more wait for a place (within their own deadline).
const AT_ONCE: usize = 4;
/// Past a script's deadline, how long its worker has to say so before it is killed.
const GRACE: Duration = Duration::from_millis(500);

pub struct Workers {
    /// The `offload-script-worker` program; `None` where there is none (scripts cannot run).
    program: Option<PathBuf>,
    warm: Mutex<Vec<Worker>>,
    places: tokio::sync::Semaphore,
}

/// One started worker, waiting for its script.
struct Worker {
    child: Child,
    stdin: ChildStdin,
    /// Its messages, each at most [`LONGEST`] bytes: a worker taken over by its script cannot
    /// make the engine buffer without bound.
    stdout: Lines<BufReader<LimitedLines<ChildStdout>>>,
}

/// The longest message a worker may send: an answer as large as a script's heap can hold,
/// written out, with room.
const LONGEST: u64 = 512 << 20;

/// How a script's host calls are answered: one future per request.
pub type Answerer<'a> =
    dyn Fn(Request) -> BoxFuture<'a, Result<Value, HostError>> + Send + Sync + 'a;

impl Workers {
    pub fn new(program: Option<PathBuf>) -> Self {
        Workers {
            program,
            warm: Mutex::new(Vec::new()),
            places: tokio::sync::Semaphore::new(AT_ONCE),
        }
    }

    /// Starts a worker for the next script, unless one waits already. Call it on a runtime.
    pub fn warm_up(&self) {
        let mut warm = self.warm.lock().unwrap_or_else(|p| p.into_inner());
        warm.retain_mut(|w| matches!(w.child.try_wait(), Ok(None)));
        while warm.len() < WARM {
            match self.start() {
                Ok(worker) => warm.push(worker),
                Err(e) => {
                    tracing::debug!("no script worker started ahead: {}", e.message);
                    break;
                }
            }
        }
    }

    fn start(&self) -> Result<Worker, Stopped> {
        let Some(program) = &self.program else {
            return Err(Stopped::before(
                "script_unavailable",
                "scripts run in Offload's `offload-script-worker`, which was not found beside `offload`",
            ));
        };
        let mut child = Command::new(program)
            .env_clear()
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .map_err(|e| {
                Stopped::before(
                    "script_unavailable",
                    format!("the script worker could not be started: {e}"),
                )
            })?;
        let (Some(stdin), Some(stdout)) = (child.stdin.take(), child.stdout.take()) else {
            return Err(Stopped::before(
                "internal",
                "the worker's pipes are missing",
            ));
        };
        Ok(Worker {
            child,
            stdin,
            stdout: BufReader::new(LimitedLines::new(stdout, LONGEST)).lines(),
        })
    }

    /// A worker that waited, or a new one.
    fn take(&self) -> Result<Worker, Stopped> {
        let waiting = {
            let mut warm = self.warm.lock().unwrap_or_else(|p| p.into_inner());
            std::iter::from_fn(|| warm.pop())
                .find_map(|mut w| matches!(w.child.try_wait(), Ok(None)).then_some(w))
        };
        match waiting {
            Some(worker) => Ok(worker),
            None => self.start(),
        }
    }

    /// Runs `code` under `limits` in a worker of its own; each host call is answered by
    /// `answer`, several at once as the script makes them.
    pub async fn run(
        &self,
        code: &str,
        limits: &Limits,
        answer: &Answerer<'_>,
    ) -> Result<Outcome, Stopped> {
        let started = Instant::now();
        let Ok(Ok(_place)) = tokio::time::timeout(limits.deadline, self.places.acquire()).await
        else {
            return Err(Stopped::before(
                "script_timeout",
                format!(
                    "the script waited its whole deadline of {} ms for one of the {AT_ONCE} places scripts run in",
                    limits.deadline.as_millis()
                ),
            ));
        };
        let worker = self.take()?;
        let left = Limits {
            deadline: limits.deadline.saturating_sub(started.elapsed()),
            ..limits.clone()
        };
        let result = worker.drive(code, &left, answer).await;
        self.warm_up();
        result
    }
}

impl Worker {
    async fn send(&mut self, message: &ToWorker) -> std::io::Result<()> {
        let mut line = serde_json::to_vec(message).map_err(std::io::Error::other)?;
        line.push(b'\n');
        self.stdin.write_all(&line).await?;
        self.stdin.flush().await
    }

    async fn drive(
        mut self,
        code: &str,
        limits: &Limits,
        answer: &Answerer<'_>,
    ) -> Result<Outcome, Stopped> {
        let killed_at = tokio::time::Instant::now() + limits.deadline + GRACE;
        let run = ToWorker::Run {
            code: code.to_owned(),
            limits: limits.clone(),
        };
        // What this side saw answered, for a worker that cannot say so itself any more.
        let mut calls: Vec<Call> = Vec::new();
        if self.send(&run).await.is_err() {
            return Err(self.gone(calls).await);
        }
        let mut pending = FuturesUnordered::new();
        loop {
            tokio::select! {
                line = self.stdout.next_line() => match line {
                    Ok(Some(line)) => match serde_json::from_str::<FromWorker>(&line) {
                        Ok(FromWorker::Ask { id, request }) => {
                            let label = request.label();
                            let asked = answer(request);
                            pending.push(async move {
                                let started = Instant::now();
                                let reply = asked.await;
                                (id, label, started.elapsed(), reply)
                            });
                        }
                        Ok(FromWorker::Done(outcome)) => return Ok(outcome),
                        Ok(FromWorker::Failed(stopped)) => return Err(stopped),
                        Err(e) => tracing::warn!("a script worker said something unreadable: {e}"),
                    },
                    _ => return Err(self.gone(calls).await),
                },
                Some((id, label, took, reply)) = pending.next(), if !pending.is_empty() => {
                    Call::tally(&mut calls, label, reply.is_ok(), took);
                    let message = ToWorker::Answer(Answer { id, reply: reply.into() });
                    if self.send(&message).await.is_err() {
                        return Err(self.gone(calls).await);
                    }
                }
                () = tokio::time::sleep_until(killed_at) => {
                    let _ = self.child.start_kill();
                    let mut stopped = Stopped::before(
                        "script_timeout",
                        format!(
                            "the script ran past its deadline of {} ms and its worker was stopped",
                            limits.deadline.as_millis()
                        ),
                    );
                    stopped.calls = calls;
                    return Err(stopped);
                }
            }
        }
    }

    /// The worker ended without an answer: how, and the last words it wrote.
    async fn gone(mut self, calls: Vec<Call>) -> Stopped {
        let _ = self.child.start_kill();
        let status = tokio::time::timeout(Duration::from_secs(2), self.child.wait()).await;
        let mut last = String::new();
        if let Some(mut stderr) = self.child.stderr.take() {
            let mut said = Vec::new();
            let _ = tokio::time::timeout(
                Duration::from_millis(200),
                (&mut stderr).take(16 << 10).read_to_end(&mut said),
            )
            .await;
            last = String::from_utf8_lossy(&said)
                .lines()
                .rev()
                .find(|l| !l.trim().is_empty())
                .map(|l| offload_formats::clip::clip(l.trim(), 300).into_owned())
                .unwrap_or_default();
        }
        let how = match status {
            Ok(Ok(status)) => describe(status),
            _ => "stopped answering".to_owned(),
        };
        let mut stopped = Stopped::before(
            "script_crashed",
            format!(
                "the worker running the script {how}{}; only this script was lost, so run it again or make it simpler",
                if last.is_empty() {
                    String::new()
                } else {
                    format!(" (it said: {last})")
                }
            ),
        );
        stopped.calls = calls;
        stopped
    }
}

fn describe(status: std::process::ExitStatus) -> String {
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("was killed by signal {signal}");
        }
    }
    match status.code() {
        Some(code) => format!("exited with code {code}"),
        None => "exited".to_owned(),
    }
}
