//! `offload sandbox-exec --policy JSON -- PROGRAM ARGS...`: the launcher of confined servers.
//! It applies the policy to itself and execs the server, which inherits every restriction. If
//! a restriction cannot be applied, the server is not started: the reason goes to stderr, which
//! the engine shows as the server's error.

use std::ffi::OsString;
use std::process::ExitCode;

use offload_sandbox::Policy;

#[derive(clap::Args)]
pub struct ExecArgs {
    /// The policy, as JSON.
    #[arg(long)]
    policy: String,
    /// The server's program and its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    command: Vec<OsString>,
}

/// The exit code of a launcher that could not confine or start the server (as a shell's
/// "found but cannot run").
const CANNOT_RUN: u8 = 126;

pub fn exec(args: ExecArgs) -> ExitCode {
    let policy = match Policy::from_json(&args.policy) {
        Ok(p) => p,
        Err(e) => return fail(&e),
    };
    let (program, rest) = args.command.split_first().expect("clap requires a command");
    fail(&offload_sandbox::exec(&policy, program, rest))
}

fn fail(e: &offload_sandbox::SandboxError) -> ExitCode {
    eprintln!("offload sandbox: {e}; the server was not started");
    ExitCode::from(CANNOT_RUN)
}
