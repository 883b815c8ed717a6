//! `offload auth login|logout|status`: signing in to remote servers that need OAuth, from a
//! terminal. The tokens go to the OS keychain, where the app and `offload mcp` find them.

use std::process::ExitCode;

use clap::Subcommand;
use offload_engine::control;

use crate::mcp::{self, ConfigChoice};

#[derive(Debug, Subcommand)]
pub enum AuthCommand {
    /// Sign in to SERVER: opens the browser on its sign-in page (prints the link when no browser
    /// can be opened) and waits for you to finish there.
    Login {
        server: String,
        /// Print the link instead of opening a browser (for a machine without one: open it on
        /// a machine whose browser can reach this one's 127.0.0.1, e.g. through an SSH tunnel).
        #[arg(long)]
        no_browser: bool,
    },
    /// Forget the sign-in of SERVER (its tokens and client registration).
    Logout { server: String },
    /// Which remote servers are signed in, with the scopes granted and when the token expires.
    Status,
}

pub fn run(config: ConfigChoice, command: AuthCommand) -> ExitCode {
    mcp::with_engine(config, |engine| async move {
        let outcome = match command {
            AuthCommand::Login { server, no_browser } => {
                control::sign_in(&engine, &server, |url| show(url, no_browser))
                    .await
                    .map(|done| format!("{done}\n"))
            }
            AuthCommand::Logout { server } => control::sign_out(&engine, &server)
                .await
                .map(|()| format!("signed out of {server}\n")),
            AuthCommand::Status => Ok(status(&control::sign_ins(&engine).await)),
        };
        match outcome {
            Ok(text) => {
                print(&text);
                ExitCode::SUCCESS
            }
            Err(e) => {
                eprintln!("offload: {}", e.message);
                ExitCode::FAILURE
            }
        }
    })
}

/// Shows the authorization URL: `OFFLOAD_BROWSER` (a command given the URL), else the system
/// browser; the link is printed too, for when no browser comes up.
fn show(url: &str, no_browser: bool) -> Result<(), String> {
    eprintln!("Sign in in your browser. If it does not open, open this link:\n\n  {url}\n");
    if no_browser {
        return Ok(());
    }
    let opened = offload_engine::oauth::open_in_chosen_browser(url)
        .unwrap_or_else(|| open::that_detached(url).map_err(|e| e.to_string()));
    if let Err(e) = opened {
        eprintln!("(no browser could be opened: {e})");
    }
    Ok(())
}

fn status(servers: &[control::ServerSignIn]) -> String {
    if servers.is_empty() {
        return "no remote servers sign in (only \"type\": \"http\" servers without a fixed \"Authorization\" header do)\n".into();
    }
    let mut out = String::new();
    for s in servers {
        let i = &s.sign_in;
        let line = if i.signed_in {
            let expiry = match i.expires_in_secs {
                Some(secs) if secs > 0 => format!("token valid {}", minutes(secs)),
                Some(_) if i.refreshable => "token expired, refreshed on next use".into(),
                Some(_) => "token expired, sign in again".into(),
                None => "token without expiry".into(),
            };
            let scopes = if i.scopes.is_empty() {
                String::new()
            } else {
                format!(", scopes {}", i.scopes.join(" "))
            };
            let issuer = i
                .issuer
                .as_deref()
                .map(|x| format!(" with {x}"))
                .unwrap_or_default();
            format!("signed in{issuer} ({expiry}{scopes})")
        } else {
            format!("not signed in: run `offload auth login {}`", s.name)
        };
        let wanted = if i.wanted_scopes.is_empty() {
            String::new()
        } else {
            format!(
                "; it asked for more access ({}): sign in again",
                i.wanted_scopes.join(" ")
            )
        };
        out.push_str(&format!("{}  {}  {line}{wanted}\n", s.name, s.url));
    }
    out
}

fn minutes(secs: i64) -> String {
    match secs {
        s if s < 120 => format!("{s} s more"),
        s if s < 7200 => format!("{} min more", s / 60),
        s => format!("{} h more", s / 3600),
    }
}

#[allow(clippy::print_stdout)] // a human command: stdout is not a protocol stream here
fn print(text: &str) {
    print!("{text}");
}
