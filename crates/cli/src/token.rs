//! `offload token create|list|revoke`: access tokens for clients that reach Offload over HTTP
//! (`offload serve --http`). A token is printed once; Offload keeps only its hash.

use std::process::ExitCode;

use clap::Subcommand;
use offload_engine::access::{Tokens, parse_scopes, scope_list};
use offload_engine::keychain::Keychain;

use crate::mcp::ConfigChoice;

#[derive(Debug, Subcommand)]
pub enum TokenCommand {
    /// Make a token and print it (the only time it is shown).
    Create {
        name: String,
        /// What it may do: read (file tools, listings, resources), call (upstream tools),
        /// store (writing into roots). Comma-separated.
        #[arg(long, value_name = "SCOPES", default_value = "read,call")]
        scope: String,
    },
    /// The tokens: names, scopes, when they were made (never the tokens themselves).
    List,
    /// Delete a token; clients using it are refused from their next request.
    Revoke { name: String },
}

pub fn run(config: ConfigChoice, command: TokenCommand) -> ExitCode {
    // Where the tokens are kept: `http.state` of the configuration, else the data directory.
    crate::mcp::with_config(config, |dirs, config| async move {
        let tokens = Tokens::of_config(&dirs.data_dir, config.http.as_ref(), &Keychain::platform());
        answer(&tokens, command).await
    })
}

async fn answer(tokens: &Tokens, command: TokenCommand) -> ExitCode {
    let outcome = match command {
        TokenCommand::Create { name, scope } => match parse_scopes(&scope) {
            Ok(scopes) => tokens.create(&name, scopes).await,
            Err(e) => Err(e),
        }
        .map(|token| {
                eprintln!(
                    "Token '{name}' ({scope}). Copy it now: it is not shown again. Clients send it as `Authorization: Bearer <token>`."
                );
                format!("{token}\n")
            }),
        TokenCommand::List => tokens.list().await.map(|list| {
            list.iter()
            .map(|t| {
                format!(
                    "{}\t{}\t{}\n",
                    t.name,
                    scope_list(&t.scopes.iter().copied().collect()),
                    t.created.format("%Y-%m-%d %H:%M UTC")
                )
            })
            .collect()
        }),
        TokenCommand::Revoke { name } => tokens.revoke(&name).await.and_then(|found| {
            if found {
                Ok(format!("revoked '{name}'\n"))
            } else {
                Err(format!("no token named '{name}' (see `offload token list`)"))
            }
        }),
    };
    match outcome {
        Ok(text) => {
            // A human command: stdout is not a protocol stream here.
            #[allow(clippy::print_stdout)]
            {
                print!("{text}");
            }
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("offload: {e}");
            ExitCode::FAILURE
        }
    }
}
