//! `offload serve`: the host without a window — one engine on the local socket for every
//! `offload mcp` (machines without a display), and with `--http ADDR` the same MCP surface over
//! streamable HTTP for agents on other machines.

use std::net::SocketAddr;
use std::path::PathBuf;
use std::process::ExitCode;

use clap::Args;
use offload_engine::config::CompatInputs;
use offload_engine::http::{HttpOptions, HttpServer};
use offload_engine::ipc;
use tokio_util::sync::CancellationToken;

use crate::mcp::{self, ConfigChoice};

#[derive(Debug, Args)]
pub struct ServeArgs {
    /// Also serve MCP over streamable HTTP at http://ADDR/mcp (e.g. 127.0.0.1:8765, or
    /// 0.0.0.0:8765 for other machines; those need an access token: `offload token create`).
    #[arg(long, value_name = "ADDR")]
    http: Option<SocketAddr>,
    /// Serve HTTPS with this PEM certificate chain (with --tls-key).
    #[arg(long, value_name = "PEM", requires = "tls_key", requires = "http")]
    tls_cert: Option<PathBuf>,
    /// The PEM private key of --tls-cert.
    #[arg(long, value_name = "PEM", requires = "tls_cert")]
    tls_key: Option<PathBuf>,
    /// On a loopback ADDR, let requests without a token do everything (local agents only).
    #[arg(long, requires = "http")]
    allow_unauthenticated_loopback: bool,
    /// A host name clients use to reach this server (the Host header), beyond the bind address
    /// and localhost. Repeatable.
    #[arg(long = "allow-host", value_name = "HOST", requires = "http")]
    allowed_hosts: Vec<String>,
    /// A browser origin allowed to call (e.g. https://app.example.com:443), besides this
    /// machine's loopback origins. Repeatable.
    #[arg(long = "allow-origin", value_name = "ORIGIN", requires = "http")]
    allowed_origins: Vec<String>,
}

pub fn run(config: ConfigChoice, args: ServeArgs) -> ExitCode {
    offload_engine::logging::init();
    let Some(runtime) = mcp::runtime() else {
        return ExitCode::FAILURE;
    };
    runtime.block_on(async {
        let Some(path) = mcp::socket() else {
            return ExitCode::FAILURE;
        };
        let Some(engine) = mcp::load(config, CompatInputs::default()) else {
            return ExitCode::FAILURE;
        };
        let http = match args.http {
            None => None,
            Some(addr) => {
                let options = HttpOptions {
                    tls: args.tls_cert.zip(args.tls_key),
                    allow_unauthenticated_loopback: args.allow_unauthenticated_loopback,
                    allowed_hosts: args.allowed_hosts,
                    allowed_origins: args.allowed_origins,
                    ..HttpOptions::new(addr)
                };
                match HttpServer::bind(engine.clone(), &options).await {
                    Ok(server) => Some(server),
                    Err(e) => {
                        tracing::error!("{e}");
                        return ExitCode::FAILURE;
                    }
                }
            }
        };
        // Serving HTTP, the local socket is a convenience: the desktop app (or another
        // replica) may hold it already.
        let host = match ipc::Host::bind(&path).await {
            Ok(host) => Some(host),
            Err(e @ ipc::IpcError::InUse(_)) if http.is_some() => {
                tracing::info!("{e}: serving HTTP only");
                None
            }
            Err(e) => {
                tracing::error!("{e}");
                return ExitCode::FAILURE;
            }
        };
        let _watch = offload_engine::config_watch::watch_or_warn(engine.clone());
        engine.keep_shared_state_fresh();
        // Retention rules (off unless the user sets one).
        let _tidy = offload_engine::control::keep_tidy(&engine, |_| {});
        let stop = CancellationToken::new();
        let http_task = http.map(|server| tokio::spawn(server.serve(stop.clone())));
        let local = async {
            match host {
                Some(host) => host.serve(engine.clone()).await,
                None => std::future::pending().await,
            }
        };
        tokio::select! {
            () = local => {}
            () = mcp::shutdown_signal() => {}
        }
        stop.cancel();
        if let Some(task) = http_task {
            let _ = task.await;
        }
        engine.shutdown().await;
        ExitCode::SUCCESS
    })
}
