//! `offload mcp`: what MCP clients launch. When an Offload host (the desktop app, or
//! `offload serve`) answers on the local socket, the shim only pumps bytes between stdio and it;
//! otherwise it runs an embedded engine on stdio. The mode is said on stderr.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use offload_engine::config::{AppDirs, CompatInputs};
use offload_engine::keychain::Keychain;
use offload_engine::{Engine, EngineOptions, ipc};

#[derive(Args)]
pub struct McpArgs {
    /// Allowed directories (read-write; the first is the default). Replace the configured roots
    /// (and so run an embedded engine, since the app's roots are the app's).
    #[arg(value_name = "DIR")]
    dirs: Vec<String>,

    /// A client config file whose `mcpServers` (or `servers`) become upstreams (embedded only).
    #[arg(long, env = "APP_CONFIG_PATH", value_name = "PATH")]
    app_config: Option<PathBuf>,

    /// Comma-separated names of the servers to take from --app-config (all when absent).
    #[arg(long, env = "ABSTRACT_PROXY_SERVERS", value_name = "NAMES")]
    servers: Option<String>,

    /// How this client sees the upstream tools: each as a tool of its own (direct), behind
    /// Offload's call_tool (meta), or direct up to tools.directLimit (auto). Default: the
    /// configuration's tools.expose.
    #[arg(long, value_name = "MODE", value_parser = parse_expose)]
    expose: Option<offload_engine::config::Expose>,

    /// Where the engine runs. Connected to the app, the app's configuration applies; --config,
    /// DIR or --app-config keep it embedded (auto) or are refused (app).
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    mode: Mode,
}

fn parse_expose(text: &str) -> Result<offload_engine::config::Expose, String> {
    offload_engine::config::Expose::parse(text)
        .ok_or_else(|| format!("'{text}' is not auto, direct or meta"))
}

#[derive(Clone, Copy, PartialEq, Eq, ValueEnum)]
enum Mode {
    /// Connect to the running app if there is one, else run an embedded engine.
    Auto,
    /// Connect to the running app, or fail.
    App,
    /// Always run an embedded engine in this process.
    Embedded,
}

/// The configuration file for this process.
pub struct ConfigChoice {
    pub path: Option<PathBuf>,
    /// Named with `--config`: it must exist, and it is this invocation's own.
    pub named: bool,
}

/// A runtime for a command; logs why when there cannot be one.
pub fn runtime() -> Option<tokio::runtime::Runtime> {
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .map_err(|e| tracing::error!("cannot start the async runtime: {e}"))
        .ok()
}

/// Runs `work` on a runtime with this machine's directories and the configuration `config`
/// names (for the commands that work on what it says, e.g. where the shared state is).
pub fn with_config<F, Fut>(config: ConfigChoice, work: F) -> ExitCode
where
    F: FnOnce(AppDirs, offload_engine::config::Config) -> Fut,
    Fut: Future<Output = ExitCode>,
{
    let Some(dirs) = AppDirs::platform() else {
        eprintln!("offload: cannot determine the home directory");
        return ExitCode::FAILURE;
    };
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    let path = config.path.unwrap_or_else(|| dirs.config_file());
    match offload_engine::config::Config::read(&path, config.named) {
        Ok(read) => runtime.block_on(work(dirs, read)),
        Err(e) => {
            eprintln!("offload: {e}");
            ExitCode::FAILURE
        }
    }
}

pub fn run(config: ConfigChoice, args: McpArgs) -> ExitCode {
    offload_engine::logging::init();
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    runtime.block_on(async {
        match connect_to_app(&args, config.named).await {
            Ok(Some(stream)) => pump(stream, args.expose).await,
            Ok(None) => serve(config, args).await,
            Err(code) => code,
        }
    })
}

/// The host's socket when this invocation should use it and it answers. A configuration of its
/// own (`--config`/`OFFLOAD_CONFIG`, directories, `--app-config`) keeps the shim embedded: the
/// host serves its own configuration, and silently using that instead would surprise.
async fn connect_to_app(
    args: &McpArgs,
    own_config: bool,
) -> Result<Option<ipc::Connection>, ExitCode> {
    let own_setup = !args.dirs.is_empty() || args.app_config.is_some() || own_config;
    match (args.mode, own_setup) {
        (Mode::Embedded, _) => return Ok(None),
        (Mode::Auto, true) => {
            tracing::info!(
                "--config, directories or --app-config given: running an embedded engine with them; a running Offload app keeps its own configuration"
            );
            return Ok(None);
        }
        (Mode::App, true) => {
            tracing::error!(
                "--mode app uses the app's configuration, directories and servers; drop --config, DIR and --app-config, or use --mode embedded"
            );
            return Err(ExitCode::FAILURE);
        }
        _ => {}
    }
    let path = socket().ok_or(ExitCode::FAILURE)?;
    match ipc::connect(&path).await {
        Some(stream) => {
            tracing::info!(socket = %path.display(), "connected to the Offload app; its configuration applies");
            Ok(Some(stream))
        }
        None if args.mode == Mode::App => {
            tracing::error!(socket = %path.display(), "no Offload app answers; start it, or use --mode auto");
            Err(ExitCode::FAILURE)
        }
        None => Ok(None),
    }
}

/// The host's socket path for this user; logs why when there is none.
pub fn socket() -> Option<PathBuf> {
    let dirs = AppDirs::platform();
    if dirs.is_none() {
        tracing::error!("cannot determine the home directory");
    }
    dirs.map(|d| ipc::socket_path(&d))
}

/// Connected mode: bytes between stdio and the app, nothing else.
async fn pump(stream: ipc::Connection, expose: Option<offload_engine::config::Expose>) -> ExitCode {
    match ipc::pump(stream, expose, tokio::io::stdin(), tokio::io::stdout()).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("the connection to the Offload app failed: {e}");
            ExitCode::FAILURE
        }
    }
}

/// Runs a human command (`offload tools`, `offload auth`) against an engine loaded from `config`,
/// and shuts the engine down after it.
pub fn with_engine<F, Fut>(config: ConfigChoice, command: F) -> ExitCode
where
    F: FnOnce(Arc<Engine>) -> Fut,
    Fut: std::future::Future<Output = ExitCode>,
{
    offload_engine::logging::init();
    let Some(runtime) = runtime() else {
        return ExitCode::FAILURE;
    };
    runtime.block_on(async {
        let Some(engine) = load(config, CompatInputs::default()) else {
            return ExitCode::FAILURE;
        };
        let code = command(engine.clone()).await;
        engine.shutdown().await;
        code
    })
}

pub fn load(config: ConfigChoice, compat: CompatInputs) -> Option<Arc<Engine>> {
    let options = EngineOptions {
        require_config: config.named,
        config_path: config.path,
        compat,
        secrets: Arc::new(Keychain::platform()),
        dirs: None,
    };
    match Engine::load(options) {
        Ok((engine, warnings)) => {
            for w in warnings {
                tracing::warn!("{w}");
            }
            Some(Arc::new(engine))
        }
        Err(e) => {
            tracing::error!("{e}");
            None
        }
    }
}

async fn serve(config: ConfigChoice, args: McpArgs) -> ExitCode {
    let args_expose = args.expose;
    let compat = CompatInputs {
        dirs: args.dirs,
        app_config_path: args.app_config,
        proxy_servers: args.servers,
    };
    let Some(engine) = load(config, compat) else {
        return ExitCode::FAILURE;
    };
    match engine.config_path() {
        Some(path) => tracing::info!(config = %path.display(), "serving in embedded mode"),
        None => tracing::info!("serving in embedded mode"),
    }
    let _watch = offload_engine::config_watch::watch_or_warn(engine.clone());
    engine.keep_shared_state_fresh();
    // Retention rules (off unless the user sets one).
    let _tidy = offload_engine::control::keep_tidy(&engine, |_| {});
    if std::io::IsTerminal::is_terminal(&std::io::stdin()) {
        eprintln!(
            "offload mcp is serving MCP on stdin/stdout and waits for a client.\n\
             Add it to your MCP client instead of running it by hand, e.g. for Claude Desktop:\n\
             {{\"mcpServers\": {{\"offload\": {{\"command\": \"{}\", \"args\": [\"mcp\"]}}}}}}\n\
             Press Ctrl-C to stop.",
            std::env::current_exe()
                .map(|p| p.display().to_string())
                .unwrap_or_else(|_| "offload".into())
        );
    }
    let served = tokio::select! {
        r = engine.serve_with(rmcp_stdio(), args_expose) => r,
        () = shutdown_signal() => Ok(()),
    };
    engine.shutdown().await;
    match served {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            tracing::error!("{e}");
            ExitCode::FAILURE
        }
    }
}

fn rmcp_stdio() -> (tokio::io::Stdin, tokio::io::Stdout) {
    (tokio::io::stdin(), tokio::io::stdout())
}

pub async fn shutdown_signal() {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{SignalKind, signal};
        let (Ok(mut term), Ok(mut int)) = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        ) else {
            return std::future::pending().await;
        };
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    }
    #[cfg(not(unix))]
    {
        let _ = tokio::signal::ctrl_c().await;
    }
}
