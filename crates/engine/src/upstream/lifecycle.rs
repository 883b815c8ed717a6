//! One upstream server's life: not started, starting, ready, failed (with the next attempt
//! scheduled), stopped. Starts and retries run on a background task of their own; callers only
//! look at the state (a short, synchronous lock) and wait for a start they asked for, bounded
//! by the start timeout. Nothing here ever holds a lock across an await, so a server that hangs
//! or crash-loops delays nobody: not its own callers (they answer at once while it is known to
//! be broken), not other servers, not a reconfiguration (which stops it at once).

use std::sync::{Arc, Mutex, Weak};
use std::time::{Duration, Instant};

use tokio_util::sync::CancellationToken;

use super::ServerState;
use crate::ErrorCode;

/// Where a server is in its life. `C` is the connection (generic so the rules can be tested
/// without processes).
pub enum Life<C> {
    /// Not started yet, or stopped by a reconfiguration or a restart: the next use starts it.
    Idle,
    /// A start is under way. `asked` is true when a caller asked for it (a first start, or a
    /// restart after a crash): callers wait for it. A scheduled retry of a server known to be
    /// broken is not waited for: callers answer at once.
    Starting {
        asked: bool,
    },
    Ready {
        conn: Arc<C>,
        since: Instant,
    },
    /// The last start failed. `retry_at` is when the next attempt runs in the background;
    /// `None` when Offload will not try again by itself (a configuration error, or the user
    /// chose *Stop retrying*): the next call tries once more.
    Failed {
        retry_at: Option<Instant>,
    },
}

impl<C> Life<C> {
    pub fn state(&self) -> ServerState {
        match self {
            Self::Idle => ServerState::Idle,
            Self::Starting { .. } => ServerState::Starting,
            Self::Ready { .. } => ServerState::Ready,
            Self::Failed { .. } => ServerState::Error,
        }
    }
}

/// Health figures kept across restarts, for error messages and the app.
#[derive(Default, Clone)]
pub struct Health {
    pub last_error: Option<String>,
    /// The code of the last failed start (`server_unavailable`, `config_invalid`, ...).
    pub last_code: Option<ErrorCode>,
    /// Failed starts (and crashes) since the last successful start.
    pub failures: u32,
    /// Starts after the first one (crashes recovered, retries, restarts by the user).
    pub restarts: u32,
    pub tool_count: Option<usize>,
    started_once: bool,
    /// The user chose *Stop retrying*: failed starts are not retried in the background until
    /// the server is restarted or reconfigured.
    pub held: bool,
}

/// The delay before background attempt number `failures` + 1: 1 s, doubling, at most 30 s.
pub fn backoff(failures: u32) -> Duration {
    Duration::from_millis(1000u64.saturating_mul(1 << failures.saturating_sub(1).min(5)))
        .min(Duration::from_secs(30))
}

/// The state machine and its background starter. `C` is the connection type.
pub struct Lifecycle<C> {
    life: Mutex<Life<C>>,
    health: Mutex<Health>,
    /// Bumped on every change of `life`, so waiting callers wake up.
    changed: tokio::sync::watch::Sender<u64>,
    /// Cancelled by `stop`: ends a start under way and any scheduled retry.
    stop: Mutex<CancellationToken>,
    /// Told of every change, for whoever shows the servers' tools.
    on_change: Box<dyn Fn() + Send + Sync>,
}

/// A server's state at one moment.
pub struct Snapshot {
    pub state: ServerState,
    /// How long it has been ready.
    pub up: Option<Duration>,
    /// When the next background start runs.
    pub retry_in: Option<Duration>,
    /// Ready, but its connection is closed (noticed on the next use, which restarts it).
    pub crashed: bool,
}

/// Why `acquire` did not return a connection.
pub enum NotReady {
    /// The server is known to be broken (the message says why and when it is retried).
    Down {
        last_error: String,
        code: ErrorCode,
        retry_in: Option<Duration>,
        starting: bool,
    },
    /// A start this caller waited for did not finish in time.
    StartTimedOut,
    /// The server was stopped while this caller waited (reconfigured, restarted, removed).
    Stopped,
}

/// What a start attempt produced.
pub enum Started<C> {
    Ok(C),
    /// Failed; `retry` is false when trying again by itself cannot help (a configuration
    /// error, a missing secret).
    Failed {
        message: String,
        code: ErrorCode,
        retry: bool,
    },
}

impl<C: Send + Sync + 'static> Lifecycle<C> {
    pub fn new(on_change: impl Fn() + Send + Sync + 'static) -> Self {
        Self {
            life: Mutex::new(Life::Idle),
            health: Mutex::new(Health::default()),
            changed: tokio::sync::watch::Sender::new(0),
            stop: Mutex::new(CancellationToken::new()),
            on_change: Box::new(on_change),
        }
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Life<C>> {
        self.life.lock().unwrap_or_else(|p| p.into_inner())
    }

    pub fn health(&self) -> Health {
        self.health
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone()
    }

    pub fn with_health<T>(&self, f: impl FnOnce(&mut Health) -> T) -> T {
        f(&mut self.health.lock().unwrap_or_else(|p| p.into_inner()))
    }

    fn set(&self, life: &mut Life<C>, next: Life<C>) {
        *life = next;
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
        (self.on_change)();
    }

    /// The state now, for status displays.
    pub fn snapshot(&self, closed: impl Fn(&C) -> bool) -> Snapshot {
        let life = self.lock();
        let mut now = Snapshot {
            state: life.state(),
            up: None,
            retry_in: None,
            crashed: false,
        };
        match &*life {
            Life::Ready { conn, .. } if closed(conn) => {
                now.state = ServerState::Error;
                now.crashed = true;
            }
            Life::Ready { since, .. } => now.up = Some(since.elapsed()),
            Life::Failed { retry_at } => {
                now.retry_in = retry_at.map(|t| t.saturating_duration_since(Instant::now()));
            }
            _ => {}
        }
        now
    }

    /// The live connection, starting the server if nobody has; waits at most `wait` for a
    /// start this call asked for. `closed` tells a dead connection (it is then restarted once,
    /// the crash noted as `crashed()` says). `start` opens a connection.
    pub async fn acquire<F, Fut>(
        self: &Arc<Self>,
        wait: Duration,
        closed: impl Fn(&C) -> bool,
        crashed: impl Fn() -> String,
        start: F,
    ) -> Result<Arc<C>, NotReady>
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Started<C>> + Send + 'static,
    {
        let deadline = tokio::time::Instant::now() + wait;
        let start = Arc::new(start);
        let mut changes = self.changed.subscribe();
        // Whether this caller is waiting for a start: it then takes that start's outcome, and
        // never starts the server a second time.
        let mut waiting = false;
        loop {
            changes.mark_unchanged();
            {
                let mut life = self.lock();
                match &*life {
                    Life::Ready { conn, .. } if !closed(conn) => return Ok(conn.clone()),
                    _ if waiting && !matches!(&*life, Life::Starting { asked: true }) => {
                        return Err(match &*life {
                            Life::Failed { retry_at } => self.failed(*retry_at),
                            Life::Starting { .. } => self.down(None, true),
                            _ => NotReady::Stopped,
                        });
                    }
                    Life::Ready { .. } => {
                        let message = crashed();
                        self.with_health(|h| {
                            h.failures += 1;
                            h.last_error = Some(message);
                            h.last_code = Some(ErrorCode::ServerUnavailable);
                        });
                        self.set(&mut life, Life::Starting { asked: true });
                        self.spawn_starts(start.clone());
                    }
                    Life::Idle | Life::Failed { retry_at: None } => {
                        // Not started yet, or Offload does not retry by itself: this call
                        // starts it once.
                        self.set(&mut life, Life::Starting { asked: true });
                        self.spawn_starts(start.clone());
                    }
                    Life::Starting { asked: true } => {}
                    Life::Starting { asked: false } => return Err(self.down(None, true)),
                    Life::Failed { retry_at } => return Err(self.failed(*retry_at)),
                }
                waiting = true;
            }
            match tokio::time::timeout_at(deadline, changes.changed()).await {
                Ok(Ok(())) => {}
                Ok(Err(_)) | Err(_) => {
                    // Still starting: report what is known, or that the start is slow.
                    let life = self.lock();
                    return match &*life {
                        Life::Ready { conn, .. } if !closed(conn) => Ok(conn.clone()),
                        Life::Failed { retry_at } => Err(self.failed(*retry_at)),
                        _ => Err(NotReady::StartTimedOut),
                    };
                }
            }
        }
    }

    /// The answer while the last start failed (and is retried at `retry_at`, if at all).
    fn failed(&self, retry_at: Option<Instant>) -> NotReady {
        self.down(
            retry_at.map(|t| t.saturating_duration_since(Instant::now())),
            false,
        )
    }

    fn down(&self, retry_in: Option<Duration>, starting: bool) -> NotReady {
        let health = self.health();
        NotReady::Down {
            last_error: health
                .last_error
                .unwrap_or_else(|| "it failed to start".into()),
            code: health.last_code.unwrap_or(ErrorCode::ServerUnavailable),
            retry_in,
            starting,
        }
    }

    /// Runs starts on a task of its own until one succeeds, a start says retrying cannot help,
    /// or `stop` is called. Failed attempts are retried after `backoff`.
    fn spawn_starts<F, Fut>(self: &Arc<Self>, start: Arc<F>)
    where
        F: Fn() -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Started<C>> + Send + 'static,
    {
        let weak: Weak<Self> = Arc::downgrade(self);
        let stop = self.stop.lock().unwrap_or_else(|p| p.into_inner()).clone();
        tokio::spawn(async move {
            loop {
                let outcome = tokio::select! {
                    outcome = start() => outcome,
                    () = stop.cancelled() => return,
                };
                let Some(me) = weak.upgrade() else { return };
                let wait = {
                    let mut life = me.lock();
                    if stop.is_cancelled() {
                        return;
                    }
                    match outcome {
                        Started::Ok(conn) => {
                            me.with_health(|h| {
                                if h.started_once {
                                    h.restarts += 1;
                                }
                                h.started_once = true;
                                h.failures = 0;
                            });
                            let conn = Arc::new(conn);
                            me.set(
                                &mut life,
                                Life::Ready {
                                    conn,
                                    since: Instant::now(),
                                },
                            );
                            return;
                        }
                        Started::Failed {
                            message,
                            code,
                            retry,
                        } => {
                            let failures = me.with_health(|h| {
                                h.failures += 1;
                                h.last_error = Some(message);
                                h.last_code = Some(code);
                                h.failures
                            });
                            let wait = (retry && !me.health().held).then(|| backoff(failures));
                            let retry_at = wait.map(|w| Instant::now() + w);
                            me.set(&mut life, Life::Failed { retry_at });
                            wait
                        }
                    }
                };
                drop(me);
                let Some(wait) = wait else { return };
                tokio::select! {
                    () = tokio::time::sleep(wait) => {}
                    () = stop.cancelled() => return,
                }
                let Some(me) = weak.upgrade() else { return };
                let mut life = me.lock();
                if stop.is_cancelled() || !matches!(&*life, Life::Failed { .. }) {
                    return;
                }
                me.set(&mut life, Life::Starting { asked: false });
            }
        });
    }

    /// The connection, when the server is ready now (never starts it).
    pub fn ready(&self) -> Option<Arc<C>> {
        match &*self.lock() {
            Life::Ready { conn, .. } => Some(conn.clone()),
            _ => None,
        }
    }

    /// Ends a start under way and any scheduled retry, and forgets the connection (returned,
    /// so the caller can close it). The next use starts the server again.
    pub fn stop(&self) -> Option<Arc<C>> {
        let mut life = self.lock();
        let token = std::mem::take(&mut *self.stop.lock().unwrap_or_else(|p| p.into_inner()));
        token.cancel();
        let old = std::mem::replace(&mut *life, Life::Idle);
        self.with_health(|h| h.held = false);
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
        (self.on_change)();
        match old {
            Life::Ready { conn, .. } => Some(conn),
            _ => None,
        }
    }

    /// The server refused the connection's credentials mid-session (a revoked sign-in): the
    /// connection is forgotten (returned, to close) and the server is failed with `code`, not
    /// retried in the background (a new credential comes from the user); the next call tries.
    pub fn refused(&self, message: String, code: ErrorCode) -> Option<Arc<C>> {
        let mut life = self.lock();
        let token = std::mem::take(&mut *self.stop.lock().unwrap_or_else(|p| p.into_inner()));
        token.cancel();
        self.with_health(|h| {
            h.failures += 1;
            h.last_error = Some(message);
            h.last_code = Some(code);
        });
        let old = std::mem::replace(&mut *life, Life::Failed { retry_at: None });
        self.changed.send_modify(|n| *n = n.wrapping_add(1));
        (self.on_change)();
        match old {
            Life::Ready { conn, .. } => Some(conn),
            _ => None,
        }
    }

    /// *Stop retrying*: a failed server stays failed until a call or the user starts it.
    pub fn stop_retrying(&self) {
        let mut life = self.lock();
        self.with_health(|h| h.held = true);
        if let Life::Failed { retry_at: Some(_) } | Life::Starting { asked: false } = &*life {
            let token = std::mem::take(&mut *self.stop.lock().unwrap_or_else(|p| p.into_inner()));
            token.cancel();
            self.set(&mut life, Life::Failed { retry_at: None });
        }
    }
}
