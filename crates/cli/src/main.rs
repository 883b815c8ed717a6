//! The `offload` command.
//!
//! `offload mcp` serves Offload's MCP tools on stdio for an MCP client. stdout belongs to the
//! protocol: everything else goes to stderr (or the file named by `OFFLOAD_LOG_FILE`).

mod audit;
mod auth;
mod doctor;
mod files;
mod mcp;
mod sandbox;
mod secret;
mod serve;
mod token;
mod tools;

use std::path::PathBuf;

use clap::{Parser, Subcommand};

#[derive(Parser)]
#[command(
    name = "offload",
    version,
    about = "Offload: an MCP proxy that keeps big data out of the model's context.",
    long_about = "Offload sits between an MCP client (Claude Desktop, Cursor, VS Code, Claude Code, ...) \
                  and your MCP servers. Big answers go to files in directories you allow; files go \
                  into tool arguments without passing through the model.\n\n\
                  Add it to a client as a stdio server: command \"offload\", args [\"mcp\"]."
)]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

/// `--config`, for the commands that read the configuration.
#[derive(clap::Args)]
struct ConfigArg {
    /// Configuration file [default: $OFFLOAD_CONFIG, else the platform's, e.g.
    /// ~/.config/offload/config.json]. Named here, it must exist and keeps `offload mcp`
    /// embedded even while the app runs.
    #[arg(long, value_name = "PATH")]
    config: Option<PathBuf>,
}

impl ConfigArg {
    /// The file to use, and whether it was named on the command line (`OFFLOAD_CONFIG` is
    /// shared with the app, so it is not "this invocation's own" configuration).
    fn resolve(self) -> mcp::ConfigChoice {
        match self.config {
            Some(path) => mcp::ConfigChoice {
                path: Some(path),
                named: true,
            },
            None => mcp::ConfigChoice {
                path: std::env::var_os("OFFLOAD_CONFIG").map(PathBuf::from),
                named: false,
            },
        }
    }
}

#[derive(Subcommand)]
enum Command {
    /// Serve Offload's MCP tools on stdin/stdout (what MCP clients launch).
    Mcp {
        #[command(flatten)]
        config: ConfigArg,
        #[command(flatten)]
        args: mcp::McpArgs,
    },
    /// Host the engine for `offload mcp` on the local socket, without a window (what the desktop
    /// app does; for machines without a display); with --http, also for agents on other machines.
    Serve {
        #[command(flatten)]
        config: ConfigArg,
        #[command(flatten)]
        args: serve::ServeArgs,
    },
    /// Sign in to remote servers that need OAuth (tokens kept in the OS keychain).
    Auth {
        #[command(flatten)]
        config: ConfigArg,
        #[command(subcommand)]
        command: auth::AuthCommand,
    },
    /// Access tokens for clients that reach Offload over HTTP (`offload serve --http`); shared
    /// by replicas when the configuration names `http.state`.
    Token {
        #[command(flatten)]
        config: ConfigArg,
        #[command(subcommand)]
        command: token::TokenCommand,
    },
    /// The calls served, as JSON lines: every replica's when the configuration names
    /// `http.state` (the shared audit log), else this machine's.
    Audit {
        #[command(flatten)]
        config: ConfigArg,
        #[command(flatten)]
        args: audit::AuditArgs,
    },
    /// Print the configuration file path Offload uses.
    ConfigPath {
        #[command(flatten)]
        config: ConfigArg,
    },
    /// Save or remove a secret that `${keyring:NAME}` reads from the OS keychain.
    #[command(subcommand)]
    Secret(secret::SecretCommand),
    /// See and approve the upstream tools clients are shown (held tools, the mode in effect).
    Tools {
        #[command(flatten)]
        config: ConfigArg,
        #[command(subcommand)]
        command: tools::ToolsCommand,
    },
    /// Show a file's structure: CSV columns and types, JSON shape, sheets, PDF pages, ...
    Schema(files::SchemaArgs),
    /// Show a file's first and last lines, line count, encoding.
    Summarize(files::SummarizeArgs),
    /// Print lines of a text file (or rows of a sheet, pages of a PDF), exactly.
    Read(files::ReadArgs),
    /// Check what this machine can enforce on the servers Offload starts (Landlock, seccomp,
    /// process limits), run a hostile self-test of the launcher, and list unconfined servers.
    Doctor {
        #[command(flatten)]
        config: ConfigArg,
        #[command(flatten)]
        args: doctor::DoctorArgs,
    },
    /// Internal: extract PDF text from stdin (run by the engine with a deadline).
    #[command(hide = true)]
    PdfText {
        from: u32,
        count: u32,
        /// Embedded images to decode and send (0: none).
        #[arg(default_value_t = 0)]
        images: u32,
    },
    /// Internal: confine this process with a policy, then run a server in its place (run by
    /// the engine for every confined server).
    #[command(hide = true)]
    SandboxExec(sandbox::ExecArgs),
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Mcp { config, args } => mcp::run(config.resolve(), args),
        Command::Serve { config, args } => serve::run(config.resolve(), args),
        Command::Auth { config, command } => auth::run(config.resolve(), command),
        Command::Token { config, command } => token::run(config.resolve(), command),
        Command::Audit { config, args } => audit::run(config.resolve(), args),
        Command::Secret(command) => secret::run(command),
        Command::Tools { config, command } => tools::run(config.resolve(), command),
        Command::Schema(args) => files::schema(args),
        Command::Summarize(args) => files::summarize(args),
        Command::Read(args) => files::read(args),
        Command::PdfText {
            from,
            count,
            images,
        } => files::pdf_text(from, count, images),
        Command::SandboxExec(args) => sandbox::exec(args),
        Command::Doctor { config, args } => doctor::run(config.resolve(), args),
        Command::ConfigPath { config } => {
            let path = config
                .resolve()
                .path
                .or_else(|| offload_engine::config::AppDirs::platform().map(|d| d.config_file()));
            match path {
                Some(p) => {
                    // A human command: stdout is not a protocol stream here.
                    #[allow(clippy::print_stdout)]
                    {
                        println!("{}", p.display());
                    }
                    std::process::ExitCode::SUCCESS
                }
                None => {
                    eprintln!("offload: cannot determine the home directory");
                    std::process::ExitCode::FAILURE
                }
            }
        }
    }
}
