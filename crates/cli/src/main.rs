//! The `offload` command.
//!
//! `offload mcp` serves Offload's MCP tools on stdio for an MCP client. stdout belongs to the
//! protocol: everything else goes to stderr (or the file named by `OFFLOAD_LOG_FILE`).

mod files;
mod mcp;
mod secret;

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
    /// Configuration file [default: the platform's, e.g. ~/.config/offload/config.json]
    #[arg(long, global = true, env = "OFFLOAD_CONFIG", value_name = "PATH")]
    config: Option<PathBuf>,

    #[command(subcommand)]
    command: Command,
}

#[derive(Subcommand)]
enum Command {
    /// Serve Offload's MCP tools on stdin/stdout (what MCP clients launch).
    Mcp(mcp::McpArgs),
    /// Host the engine for `offload mcp` on the local socket, without a window (what the desktop
    /// app does; for machines without a display).
    Serve,
    /// Print the configuration file path Offload uses.
    ConfigPath,
    /// Save or remove a secret that `${keyring:NAME}` reads from the OS keychain.
    #[command(subcommand)]
    Secret(secret::SecretCommand),
    /// Show a file's structure: CSV columns and types, JSON shape, sheets, PDF pages, ...
    Schema(files::SchemaArgs),
    /// Show a file's first and last lines, line count, encoding.
    Summarize(files::SummarizeArgs),
    /// Print lines of a text file (or rows of a sheet, pages of a PDF), exactly.
    Read(files::ReadArgs),
    /// Internal: extract PDF text from stdin (run by the engine with a deadline).
    #[command(hide = true)]
    PdfText { from: u32, count: u32 },
}

fn main() -> std::process::ExitCode {
    let cli = Cli::parse();
    match cli.command {
        Command::Mcp(args) => mcp::run(cli.config, args),
        Command::Serve => mcp::host(cli.config),
        Command::Secret(command) => secret::run(command),
        Command::Schema(args) => files::schema(args),
        Command::Summarize(args) => files::summarize(args),
        Command::Read(args) => files::read(args),
        Command::PdfText { from, count } => files::pdf_text(from, count),
        Command::ConfigPath => {
            let path = cli
                .config
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
