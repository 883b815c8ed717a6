//! `offload-sandbox-exec --policy JSON -- PROGRAM ARGS...`: the launcher of confined servers, a
//! program of its own beside `offload`. It is what every confined server's start runs first, so
//! it is small: the 60 MB `offload` takes milliseconds just to be loaded (its relocated pages
//! faulted in), this one a fraction of that. It applies the policy to itself and execs the
//! server (`offload_sandbox::launch`); `offload sandbox-exec` is the same launcher.

use std::ffi::OsString;
use std::process::ExitCode;

fn main() -> ExitCode {
    let args: Vec<OsString> = std::env::args_os().skip(1).collect();
    match args.as_slice() {
        [flag, policy, dashes, command @ ..] if flag == "--policy" && dashes == "--" => {
            match policy.to_str() {
                Some(policy) => offload_sandbox::launch(policy, command),
                None => usage("the policy is not UTF-8"),
            }
        }
        _ => usage("usage: offload-sandbox-exec --policy JSON -- PROGRAM [ARGS...]"),
    }
}

fn usage(why: &str) -> ExitCode {
    eprintln!("offload sandbox: {why}; the server was not started");
    ExitCode::from(offload_sandbox::CANNOT_RUN)
}
