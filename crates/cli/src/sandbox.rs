//! `offload sandbox-exec --policy JSON -- PROGRAM ARGS...`: the launcher of confined servers
//! (`offload_sandbox::launch`), as `offload-script-worker sandbox-exec` is; the engine starts
//! servers through the small one when it is installed.

use std::ffi::OsString;
use std::process::ExitCode;

#[derive(clap::Args)]
pub struct ExecArgs {
    /// The policy, as JSON.
    #[arg(long)]
    policy: String,
    /// The server's program and its arguments.
    #[arg(trailing_var_arg = true, allow_hyphen_values = true, required = true)]
    command: Vec<OsString>,
}

pub fn exec(args: ExecArgs) -> ExitCode {
    offload_sandbox::launch(&args.policy, &args.command)
}
