//! Opening one connection to an upstream: spawning a stdio child in its own process group with a
//! minimal environment, or opening a streamable-HTTP session; then the MCP handshake.

use std::collections::BTreeMap;
use std::sync::Arc;

use std::sync::atomic::AtomicU64;

use process_wrap::tokio::{ChildWrapper, CommandWrap};
use rmcp::RoleClient;
use rmcp::service::RunningService;

use super::callers::Callers;
use super::error::StartError;
use super::handler::UpstreamHandler;
use super::limited::LimitedLines;
use super::progress::{Forwarding, ProgressRoutes};
use super::search_path::SearchPath;
use super::stderr::StderrRing;
use crate::config::{Sandbox, SandboxPolicy};
use crate::config::{SecretSource, Transport, expand_tilde, interpolate, interpolate_noting};

pub type Client = RunningService<RoleClient, UpstreamHandler>;

/// What a started connection needs besides the transport settings.
pub struct ConnectContext<'a> {
    pub name: &'a str,
    pub secrets: &'a Arc<dyn SecretSource>,
    pub search_path: &'a SearchPath,
    pub stderr: Arc<StderrRing>,
    pub routes: Arc<ProgressRoutes>,
    /// The calls in flight, whose clients get the upstream's log messages.
    pub callers: Arc<Callers>,
    /// Where its log messages are kept.
    pub logs: Arc<super::logs::LogRing>,
    /// Where a confined server's proxy tells of the hosts it refused.
    pub witness: super::egress::Witness,
    pub handler: UpstreamHandler,
    /// The largest message accepted from the upstream.
    pub answer_limit: u64,
    /// How the connection starts (`initialize`, or 2026-07-28's `server/discover`).
    pub lifecycle: rmcp::service::ClientLifecycleMode,
    /// Told when a remote server refuses the connection's sign-in.
    pub auth_watch: Arc<crate::oauth::watch::AuthWatch>,
    /// How a confined stdio server is started.
    pub confinement: Arc<super::confine::Setting>,
}

/// A live connection: the rmcp client and, for stdio, the child and its process group.
pub struct Opened {
    pub client: Client,
    pub process_group: Option<u32>,
    /// Dropped with the connection: the server process is then killed (see [`watch_exit`]).
    pub stop: Option<tokio::sync::oneshot::Sender<()>>,
    /// Non-zero when an upstream message went over the answer limit.
    pub exceeded: Arc<AtomicU64>,
}

pub async fn open(transport: &Transport, ctx: ConnectContext<'_>) -> Result<Opened, StartError> {
    match transport {
        Transport::Stdio {
            command,
            args,
            env,
            cwd,
            sandbox,
        } => {
            let confined = match sandbox {
                Sandbox::Confined(policy) => Some(policy),
                Sandbox::Off => None,
            };
            open_stdio(command, args, env, cwd.as_deref(), confined, ctx).await
        }
        Transport::Http {
            url,
            headers,
            oauth,
        } => open_http(url, headers, oauth.as_ref(), transport.signs_in(), ctx).await,
    }
}

async fn open_stdio(
    command: &str,
    args: &[String],
    env: &BTreeMap<String, String>,
    cwd: Option<&str>,
    sandbox: Option<&SandboxPolicy>,
    ctx: ConnectContext<'_>,
) -> Result<Opened, StartError> {
    let cwd = match cwd {
        Some(c) => {
            let dir = expand_tilde(&interpolate(c, ctx.secrets.as_ref())?);
            if !dir.is_dir() {
                return Err(StartError::unavailable(format!(
                    "\"cwd\" {} is not a directory",
                    dir.display()
                )));
            }
            Some(dir)
        }
        None => None,
    };
    let command = interpolate(command, ctx.secrets.as_ref())?;
    let program = ctx
        .search_path
        .resolve(&command, cwd.as_deref())
        .await
        .map_err(|e| StartError::unavailable(e.to_string()))?;

    // Values a server must not echo into Offload's log or messages: keychain values, secret-named
    // environment variables, and env values under secret-looking keys.
    let mut sensitive = Vec::new();
    let args = args
        .iter()
        .map(|a| interpolate_noting(a, ctx.secrets.as_ref(), &mut sensitive))
        .collect::<Result<Vec<_>, _>>()?;
    let mut env_values = Vec::new();
    for (k, v) in env {
        let value = interpolate_noting(v, ctx.secrets.as_ref(), &mut sensitive)?;
        if crate::config::looks_secret(k) {
            sensitive.push(value.clone());
        }
        env_values.push((k, value));
    }
    let path_var = ctx.search_path.child_path().await;
    // A network allow-list is held by a proxy of the server's own, which lives as long as it.
    let egress = match sandbox
        .map(|s| super::confine::allow_list(s, &program))
        .transpose()
        .map_err(StartError::unavailable)?
        .flatten()
    {
        Some(allow) => Some(
            super::egress::start(ctx.name, allow, ctx.witness.clone())
                .await
                .map_err(|e| {
                    StartError::unavailable(format!("sandbox: cannot start the network proxy: {e}"))
                })?,
        ),
        None => None,
    };
    // The files a confined server saves through a private folder, linked back as it saves them.
    let mut saves = None;
    let mut cmd = match sandbox {
        None => {
            let mut cmd = tokio::process::Command::new(&program);
            cmd.args(&args);
            cmd.env_clear();
            for (k, v) in safe_environment() {
                cmd.env(k, v);
            }
            cmd
        }
        Some(sandbox) => {
            let values: Vec<String> = env_values.iter().map(|(_, v)| v.clone()).collect();
            let server = super::confine::Server {
                name: ctx.name,
                sandbox,
                program: &program,
                args: &args,
                env_values: &values,
                cwd: cwd.as_deref(),
                path_var: &path_var,
                egress: egress.as_ref(),
            };
            let launch = super::confine::launch(server, &ctx.confinement)
                .map_err(StartError::unavailable)?;
            if !launch.saved.is_empty() {
                let saved = launch.saved.clone();
                saves = Some(
                    tokio::task::spawn_blocking(move || {
                        super::confine::beside::Saves::start(saved)
                    })
                    .await
                    .map_err(|e| StartError::unavailable(e.to_string()))?
                    .map_err(|e| {
                        StartError::unavailable(format!(
                            "sandbox: cannot prepare the files the server saves: {e}"
                        ))
                    })?,
                );
            }
            super::confine::command(&launch, &program, &args, &sandbox.env)
                .map_err(StartError::unavailable)?
        }
    };
    cmd.env("PATH", path_var);
    for (k, v) in env_values {
        cmd.env(k, v);
    }
    if let Some(dir) = &cwd {
        cmd.current_dir(dir);
    }
    cmd.stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped());
    let mut wrapped = CommandWrap::from(cmd);
    wrapped.wrap(process_wrap::tokio::KillOnDrop);
    #[cfg(unix)]
    wrapped.wrap(process_wrap::tokio::ProcessGroup::leader());
    #[cfg(windows)]
    wrapped.wrap(process_wrap::tokio::JobObject);

    let mut child = wrapped
        .spawn()
        .map_err(|e| StartError::unavailable(format!("cannot start {}: {e}", program.display())))?;
    let process_group = child.id();
    let (Some(stdin), Some(stdout)) = (child.stdin().take(), child.stdout().take()) else {
        return Err(StartError::unavailable(
            "the child's stdio could not be captured",
        ));
    };
    // What this start prints, apart from earlier runs' lines.
    let since = ctx.stderr.pushed();
    let confined = sandbox.is_some();
    if let Some(stderr) = child.stderr().take() {
        let ring = ctx.stderr.clone();
        let name = ctx.name.to_owned();
        // A confined server's refusals it names on stderr are kept for the app to offer.
        let witness = sandbox.is_some().then(|| ctx.witness.clone());
        tokio::spawn(async move {
            let watch = |line: &str| {
                if let Some(w) = &witness
                    && w.refusals.stderr_line(line)
                    && let Some(told) = &w.told
                {
                    told();
                }
            };
            ring.drain(&name, stderr, &sensitive, watch).await
        });
    }
    // Our framing moves large results instead of copying them (see `offload_wire`); our reader
    // ends the connection on an oversized message, which the framing would otherwise drop
    // silently (its limit is set above ours so ours decides).
    let stdout = LimitedLines::new(stdout, ctx.answer_limit);
    let exceeded = stdout.exceeded.clone();
    let framed = offload_wire::Lines::<RoleClient, _, _>::new(stdout, stdin).with_max_line_length(
        usize::try_from(ctx.answer_limit)
            .unwrap_or(usize::MAX)
            .saturating_add(1024),
    );
    let transport = Forwarding {
        inner: framed,
        routes: ctx.routes.clone(),
        callers: ctx.callers.clone(),
        server: ctx.name.to_owned(),
        logs: ctx.logs.clone(),
        writes_splices: true,
    };
    let stderr_ring = ctx.stderr.clone();
    match rmcp::service::serve_client_with_lifecycle(ctx.handler, transport, ctx.lifecycle).await {
        Ok(client) => Ok(Opened {
            client,
            process_group,
            stop: Some(watch_exit(child, process_group, egress, saves)),
            exceeded,
        }),
        Err(e) => {
            // Give the stderr reader a moment: the child usually says why it died.
            tokio::time::sleep(std::time::Duration::from_millis(50)).await;
            let cause = stderr_ring.cause(Some(since), 400);
            let mut hint = if cause.is_empty() {
                String::new()
            } else {
                format!("; stderr: {cause}")
            };
            if confined
                && let Some(advice) = super::refusals::advice(
                    stderr_ring.fresh(Some(since)).iter().map(String::as_str),
                )
            {
                hint.push_str(&format!(". {advice}"));
            }
            Err(StartError::unavailable(format!(
                "MCP handshake failed: {e}{hint}"
            )))
        }
    }
}

/// Owns the server process. When it exits, its process group goes with it: a child it left
/// behind holding our pipes (an `npx` grandchild, a helper it forked) would otherwise keep the
/// connection open, and calls in flight would wait for their timeout instead of failing at once.
/// When the returned sender is dropped (the connection is gone), the process is killed (the
/// wrapper kills on drop: its group on Unix, its job object on Windows). Then what it saved
/// through a private folder is linked back for the last time.
fn watch_exit(
    mut child: Box<dyn ChildWrapper>,
    group: Option<u32>,
    egress: Option<super::egress::Egress>,
    saves: Option<super::confine::beside::Saves>,
) -> tokio::sync::oneshot::Sender<()> {
    let (stop, stopped) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        // The server's proxy ends with it.
        let _egress = egress;
        tokio::select! {
            _ = child.wait() => kill_group(group),
            _ = stopped => {}
        }
        drop(child);
        if let Some(saves) = saves {
            let _ = tokio::task::spawn_blocking(move || saves.finish()).await;
        }
    });
    stop
}

async fn open_http(
    url: &str,
    headers: &BTreeMap<String, String>,
    oauth: Option<&crate::config::OAuthConfig>,
    signs_in: bool,
    ctx: ConnectContext<'_>,
) -> Result<Opened, StartError> {
    use crate::oauth::watch::{SignIn, Watched};
    use rmcp::transport::StreamableHttpClientTransport;
    use rmcp::transport::streamable_http_client::StreamableHttpClientTransportConfig;

    // rmcp builds its reqwest client with the process's TLS provider.
    crate::crypto::install_crypto_provider();
    let url = interpolate(url, ctx.secrets.as_ref())?;
    let mut map = std::collections::HashMap::new();
    for (k, v) in headers {
        let name = http::HeaderName::from_bytes(k.as_bytes())
            .map_err(|_| StartError::unavailable(format!("header name '{k}' is not valid")))?;
        // The value may hold a secret: never put it in the message.
        let value =
            http::HeaderValue::from_str(&interpolate(v, ctx.secrets.as_ref())?).map_err(|_| {
                StartError::unavailable(format!("the value of header '{k}' is not valid"))
            })?;
        map.insert(name, value);
    }
    let config = StreamableHttpClientTransportConfig::with_uri(url.clone()).custom_headers(map);
    // A server without a static `Authorization` header may need a sign-in: its connection sends
    // the stored token, and a 401 then means `sign_in_required`.
    let client = if signs_in {
        let http = Watched {
            inner: crate::oauth::authorized_client(ctx.name, &url, oauth, ctx.secrets)
                .await
                .map_err(StartError::unavailable)?,
            sign_in: Some(SignIn {
                watch: ctx.auth_watch.clone(),
                server: ctx.name.to_owned(),
                url: url.clone(),
                secrets: ctx.secrets.clone(),
            }),
        };
        handshake(
            StreamableHttpClientTransport::with_client(http, config),
            ctx,
        )
        .await
    } else {
        let http = Watched {
            inner: crate::oauth::http_client(),
            sign_in: None,
        };
        handshake(
            StreamableHttpClientTransport::with_client(http, config),
            ctx,
        )
        .await
    };
    let client = client.map_err(|e| super::http_error::explain(&url, &e, signs_in))?;
    Ok(Opened {
        client,
        process_group: None,
        stop: None,
        exceeded: Arc::default(),
    })
}

async fn handshake<T>(
    inner: T,
    ctx: ConnectContext<'_>,
) -> Result<Client, rmcp::service::ClientInitializeError>
where
    T: rmcp::transport::Transport<RoleClient> + Send + 'static,
{
    let transport = Forwarding {
        inner,
        routes: ctx.routes.clone(),
        callers: ctx.callers.clone(),
        server: ctx.name.to_owned(),
        logs: ctx.logs.clone(),
        writes_splices: false,
    };
    rmcp::service::serve_client_with_lifecycle(ctx.handler, transport, ctx.lifecycle).await
}

/// The variables an upstream gets from Offload's own environment; everything else it gets only
/// through its `env` entry. PATH is set separately (see `SearchPath`).
fn safe_environment() -> impl Iterator<Item = (String, std::ffi::OsString)> {
    const KEEP: &[&str] = &[
        "HOME",
        "USER",
        "LOGNAME",
        "SHELL",
        "LANG",
        "LANGUAGE",
        "LC_ALL",
        "LC_CTYPE",
        "TZ",
        "TMPDIR",
        "TERM",
        "XDG_RUNTIME_DIR",
        "XDG_CONFIG_HOME",
        "XDG_DATA_HOME",
        "XDG_CACHE_HOME",
        "XDG_STATE_HOME",
        "SSL_CERT_FILE",
        "SSL_CERT_DIR",
        "NODE_EXTRA_CA_CERTS",
        "HTTP_PROXY",
        "HTTPS_PROXY",
        "NO_PROXY",
        "http_proxy",
        "https_proxy",
        "no_proxy",
        // Windows essentials
        "SYSTEMROOT",
        "SYSTEMDRIVE",
        "WINDIR",
        "COMSPEC",
        "PATHEXT",
        "APPDATA",
        "LOCALAPPDATA",
        "USERPROFILE",
        "PROGRAMDATA",
        "PROGRAMFILES",
        "TEMP",
        "TMP",
        "USERNAME",
    ];
    KEEP.iter()
        .filter_map(|k| std::env::var_os(k).map(|v| ((*k).to_owned(), v)))
}

/// SIGKILL to a whole process group (children and grandchildren, such as `npx`'s node).
pub(super) fn kill_group(group: Option<u32>) {
    #[cfg(unix)]
    if let Some(pgid) = group.and_then(|g| i32::try_from(g).ok()) {
        use nix::sys::signal::{Signal, killpg};
        let _ = killpg(nix::unistd::Pid::from_raw(pgid), Signal::SIGKILL);
    }
    #[cfg(not(unix))]
    let _ = group;
}
