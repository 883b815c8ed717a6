//! `offload mcp`: serve the engine on stdio.
//!
//! Today the shim always runs an embedded engine. The desktop app will listen on a per-user
//! socket; `Mode::Auto` is the seam where the shim will connect to it and only pump bytes.

use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::Arc;

use clap::{Args, ValueEnum};
use offload_engine::config::{CompatInputs, NoKeychain};
use offload_engine::{Engine, EngineOptions};

#[derive(Args)]
pub struct McpArgs {
    /// Allowed directories (read-write; the first is the default). Replace the configured roots.
    #[arg(value_name = "DIR")]
    dirs: Vec<String>,

    /// A client config file whose `mcpServers` (or `servers`) become upstreams.
    #[arg(long, env = "APP_CONFIG_PATH", value_name = "PATH")]
    app_config: Option<PathBuf>,

    /// Comma-separated names of the servers to take from --app-config (all when absent).
    #[arg(long, env = "ABSTRACT_PROXY_SERVERS", value_name = "NAMES")]
    servers: Option<String>,

    /// Where the engine runs.
    #[arg(long, value_enum, default_value_t = Mode::Auto)]
    mode: Mode,
}

#[derive(Clone, Copy, ValueEnum)]
enum Mode {
    /// Connect to the running app if there is one, else run an embedded engine.
    Auto,
    /// Always run an embedded engine in this process.
    Embedded,
}

pub fn run(config: Option<PathBuf>, args: McpArgs) -> ExitCode {
    init_logging();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            tracing::error!("cannot start the async runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    runtime.block_on(serve(config, args))
}

async fn serve(config: Option<PathBuf>, args: McpArgs) -> ExitCode {
    let options = EngineOptions {
        config_path: config,
        compat: CompatInputs {
            dirs: args.dirs,
            app_config_path: args.app_config,
            proxy_servers: args.servers,
        },
        secrets: Arc::new(NoKeychain),
    };
    let (engine, warnings) = match Engine::load(options) {
        Ok(loaded) => loaded,
        Err(e) => {
            tracing::error!("{e}");
            return ExitCode::FAILURE;
        }
    };
    for w in warnings {
        tracing::warn!("{w}");
    }
    match args.mode {
        Mode::Auto | Mode::Embedded => tracing::info!("serving in embedded mode"),
    }
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
    let engine = Arc::new(engine);
    let served = tokio::select! {
        r = engine.serve(rmcp_stdio()) => r,
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

async fn shutdown_signal() {
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

/// Logs to stderr, or to `OFFLOAD_LOG_FILE` when set; level from `OFFLOAD_LOG` (default info).
///
/// rmcp logs whole messages at debug level, and messages carry tool arguments and results that
/// may hold secrets; so rmcp stays at info unless `OFFLOAD_LOG` names it explicitly.
fn init_logging() {
    use tracing_subscriber::EnvFilter;
    let mut spec = std::env::var("OFFLOAD_LOG").unwrap_or_else(|_| "info".into());
    if !spec.contains("rmcp") {
        spec.push_str(",rmcp=info");
    }
    let filter = EnvFilter::try_new(&spec).unwrap_or_else(|_| EnvFilter::new("info,rmcp=info"));
    let builder = tracing_subscriber::fmt()
        .with_env_filter(filter)
        .with_ansi(false)
        .with_target(false);
    match std::env::var_os("OFFLOAD_LOG_FILE") {
        Some(path) => match std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(&path)
        {
            Ok(file) => builder.with_writer(std::sync::Mutex::new(file)).init(),
            Err(_) => builder.with_writer(std::io::stderr).init(),
        },
        None => builder.with_writer(std::io::stderr).init(),
    }
}
