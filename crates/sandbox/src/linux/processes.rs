//! A process namespace of the server's own: its `/proc` shows its own processes and no other
//! (a child reads its own `/proc/<pid>`, as browsers must; no process of the user's is listed),
//! and every process it leaves behind ends with it. Three processes: the launcher, which waits
//! and exits as the server does; the namespace's first process, which reaps orphans as an init
//! does and, when the server ends, ends the namespace; and the server.

use crate::SandboxError;

/// Enters a new process namespace with `/proc` mounted anew for it (in this process's own
/// mount namespace, which the caller made). Returns, true, only in the process that goes on to
/// confine itself and exec the server; the others exit as the server does. False where no
/// process namespace can be made (nothing changed).
#[allow(unsafe_code)]
pub fn enter() -> Result<bool, SandboxError> {
    use nix::unistd::{ForkResult, fork};
    if nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWPID).is_err() {
        return Ok(false);
    }
    let os = |what| {
        move |e: nix::Error| SandboxError::Os {
            what,
            source: e.into(),
        }
    };
    // SAFETY: the launcher is single-threaded: the child may allocate.
    match unsafe { fork() }.map_err(os("cannot start the server's process namespace"))? {
        ForkResult::Parent { child } => {
            let code = wait_for(child, false);
            std::process::exit(code)
        }
        ForkResult::Child => {}
    }
    // The namespace's first process.
    let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
    nix::mount::mount(
        Some("proc"),
        "/proc",
        Some("proc"),
        nix::mount::MsFlags::MS_NOSUID
            | nix::mount::MsFlags::MS_NODEV
            | nix::mount::MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(os("cannot mount /proc for the server's process namespace"))?;
    // SAFETY: as above.
    match unsafe { fork() }.map_err(os("cannot start the server in its process namespace"))? {
        ForkResult::Parent { child } => {
            let code = wait_for(child, true);
            std::process::exit(code)
        }
        ForkResult::Child => {
            let _ = nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGKILL);
            Ok(true)
        }
    }
}

/// Waits for `server` — reaping every other child meanwhile when `reaps` (orphans come to the
/// namespace's first process) — and gives its exit code (128 + a signal's number), with its
/// standard streams let go first: Offload must see the server's pipes close when it closes them.
fn wait_for(server: nix::unistd::Pid, reaps: bool) -> i32 {
    use nix::sys::wait::{WaitStatus, waitpid};
    super::let_go_of_stdio();
    // It runs nothing and opens nothing from here on: no file is its to reach.
    {
        use landlock::{ABI, Access, AccessFs, Ruleset, RulesetAttr};
        let _ = Ruleset::default()
            .handle_access(AccessFs::from_all(ABI::V6))
            .and_then(|r| r.create())
            .and_then(|r| r.restrict_self());
    }
    let whom = if reaps { None } else { Some(server) };
    loop {
        match waitpid(whom.unwrap_or(nix::unistd::Pid::from_raw(-1)), None) {
            Ok(WaitStatus::Exited(pid, code)) if pid == server => return code,
            Ok(WaitStatus::Signaled(pid, signal, _)) if pid == server => {
                return 128 + signal as i32;
            }
            Ok(_) | Err(nix::errno::Errno::EINTR) => continue,
            Err(_) => return 126,
        }
    }
}
