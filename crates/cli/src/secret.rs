//! `offload secret set|delete NAME`: the keychain entries `${keyring:NAME}` reads, for machines
//! without the desktop app. The value is read from stdin (never from the command line, where
//! other users and the shell history would see it).

use std::io::Read;
use std::process::ExitCode;

use clap::Subcommand;
use offload_engine::config::SecretSource;
use offload_engine::keychain::Keychain;

#[derive(Debug, Subcommand)]
pub enum SecretCommand {
    /// Save the secret NAME, read from stdin (one trailing newline is dropped).
    Set { name: String },
    /// Remove the secret NAME.
    Delete { name: String },
}

pub fn run(command: SecretCommand) -> ExitCode {
    let keychain = Keychain::platform();
    let done = match &command {
        SecretCommand::Set { name } => {
            let mut value = String::new();
            match std::io::stdin().read_to_string(&mut value) {
                Err(e) => Err(format!("cannot read the value from stdin: {e}")),
                Ok(_) => {
                    let value = value.strip_suffix('\n').unwrap_or(&value);
                    let value = value.strip_suffix('\r').unwrap_or(value);
                    if value.is_empty() {
                        Err("the value on stdin is empty".into())
                    } else {
                        keychain.set_secret(name, value)
                    }
                }
            }
        }
        SecretCommand::Delete { name } => keychain.delete_secret(name),
    };
    match done {
        Ok(()) => {
            let (verb, name) = match &command {
                SecretCommand::Set { name } => ("saved", name),
                SecretCommand::Delete { name } => ("removed", name),
            };
            eprintln!("offload: {verb} ${{keyring:{name}}} (keychain service \"offload\")");
            ExitCode::SUCCESS
        }
        Err(e) => {
            eprintln!("offload: {e}");
            ExitCode::FAILURE
        }
    }
}
