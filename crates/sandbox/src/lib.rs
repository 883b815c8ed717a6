//! Confining the servers Offload starts. Offload re-executes itself as a small launcher
//! (`offload sandbox-exec`) that applies a [`Policy`] to itself — `no_new_privs`, rlimits,
//! Landlock, a seccomp filter — and then execs the server, which inherits every restriction and
//! can never lift one.
//!
//! Landlock is an allow-list: what the policy does not grant is denied. Where a restriction the
//! policy asks for cannot be applied (an old kernel, Landlock off), [`confine`] fails and the
//! server does not start: nothing is ever silently unconfined.
//!
//! Knows nothing of MCP, the engine or its configuration: the engine turns a server's entry into
//! a [`Policy`].

#[cfg(target_os = "linux")]
mod linux;
#[cfg(any(target_os = "macos", all(test, unix)))]
mod macos;
mod policy;

pub use policy::{Limits, Network, Policy, PrivateFolder};

/// Why a policy could not be applied.
#[derive(Debug, thiserror::Error)]
pub enum SandboxError {
    /// The kernel cannot enforce what the policy asks (no Landlock, an ABI too old for a
    /// network rule, no seccomp).
    #[error("{0}")]
    Unsupported(String),
    /// The policy names something that cannot be used (a path that does not exist, ...).
    #[error("{0}")]
    Invalid(String),
    #[error("{what}: {source}")]
    Os {
        what: &'static str,
        source: std::io::Error,
    },
}

/// What this machine can enforce (for `offload doctor` and error messages).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct Support {
    /// The kernel's Landlock ABI (0: none).
    pub landlock_abi: u32,
    /// TCP connections can be held to given ports: Landlock ABI ≥ 4, or macOS's Seatbelt.
    pub tcp_ports: bool,
    /// Landlock scopes signals and abstract unix sockets to the sandbox (ABI ≥ 6).
    pub scoping: bool,
    /// A server's processes can be counted apart from the user's others (a user namespace of
    /// its own), so a process limit holds: false when Offload runs as root (never held by it)
    /// or user namespaces are blocked (then processes are not limited).
    pub process_limits: bool,
    /// A server can get namespaces of its own (root, or a user namespace): a network one, so
    /// an allow-list holds by name, not by port; a mount one, so a repository's hooks stay
    /// read-only.
    pub namespaces: bool,
}

/// Whether this process runs as root, which no process limit holds.
pub fn runs_as_root() -> bool {
    #[cfg(unix)]
    {
        nix::unistd::getuid().is_root()
    }
    #[cfg(not(unix))]
    {
        false
    }
}

/// The machine's memory in bytes.
pub fn physical_memory() -> Option<u64> {
    #[cfg(target_os = "linux")]
    {
        linux::physical_memory()
    }
    #[cfg(not(target_os = "linux"))]
    {
        None
    }
}

/// What the kernel offers.
pub fn support() -> Support {
    #[cfg(target_os = "linux")]
    {
        linux::support()
    }
    #[cfg(not(target_os = "linux"))]
    {
        Support {
            landlock_abi: 0,
            tcp_ports: cfg!(target_os = "macos"),
            scoping: false,
            process_limits: false,
            namespaces: false,
        }
    }
}

/// What was applied.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Confined {
    pub landlock_abi: u32,
    /// Signals and abstract unix sockets are scoped to the sandbox.
    pub scoped: bool,
    /// The process limit holds (see [`Support::process_limits`]).
    pub processes_limited: bool,
    /// A [`Network::Proxy`] server got a network namespace of its own (else it is held to the
    /// proxy's port only).
    pub network_namespace: bool,
    /// [`Policy::read_only`] holds (a mount namespace could be made).
    pub read_only_held: bool,
    /// [`Policy::private_folders`] are mounted (a mount namespace could be made).
    pub private_folders_held: bool,
    /// The server has a process namespace of its own: its `/proc` shows its processes alone,
    /// each readable by itself, and they all end with it.
    pub process_namespace: bool,
}

/// Applies `policy` to this process, for good: what it execs next inherits it (Linux).
#[cfg(target_os = "linux")]
pub fn confine(policy: &Policy) -> Result<Confined, SandboxError> {
    linux::confine(policy)
}

/// What a Windows user is told: nothing confines an arbitrary program there without
/// privileges, so a server runs unconfined only when its entry says so.
pub const WINDOWS_CONSENT: &str = "Windows cannot confine the servers Offload starts; to run this one with your full rights, set \"sandbox\": \"off\" in its entry (the app's editor: untick Confined)";

/// Confines this process with `policy`, then replaces it with `program`; returns only on
/// failure. Linux: Landlock, seccomp and limits applied here, then the exec. macOS: the exec is
/// of `sandbox-exec` with the policy as a Seatbelt profile. Windows: refused (see
/// [`WINDOWS_CONSENT`]).
pub fn exec(
    policy: &Policy,
    program: &std::ffi::OsStr,
    args: &[std::ffi::OsString],
) -> SandboxError {
    #[cfg(target_os = "linux")]
    {
        use std::os::unix::process::CommandExt;
        if let Err(e) = confine(policy) {
            return e;
        }
        let e = std::process::Command::new(program).args(args).exec();
        SandboxError::Os {
            what: "cannot start the server",
            source: e,
        }
    }
    #[cfg(target_os = "macos")]
    {
        use std::os::unix::process::CommandExt;
        // No core dumps: a crash must not write the server's memory (tokens, files) to disk.
        if let Err(e) =
            nix::sys::resource::setrlimit(nix::sys::resource::Resource::RLIMIT_CORE, 0, 0)
        {
            return SandboxError::Os {
                what: "cannot limit core dumps",
                source: e.into(),
            };
        }
        let e = std::process::Command::new(macos::SANDBOX_EXEC)
            .arg("-p")
            .arg(macos::profile(policy))
            .arg("--")
            .arg(program)
            .args(args)
            .exec();
        SandboxError::Os {
            what: "cannot start the server under sandbox-exec",
            source: e,
        }
    }
    #[cfg(not(any(target_os = "linux", target_os = "macos")))]
    {
        let _ = (policy, program, args);
        SandboxError::Unsupported(WINDOWS_CONSENT.into())
    }
}

/// The small program installed beside `offload` that confined servers start through
/// (`offload-script-worker sandbox-exec`; `offload sandbox-exec` is the same launcher inside
/// the big program).
pub const LAUNCHER: &str = "offload-script-worker";

/// The launcher's subcommand, before `--policy JSON -- PROGRAM ARGS...`, in both programs.
pub const LAUNCH: &str = "sandbox-exec";

/// The exit code of a launcher that could not confine or start the server (as a shell's
/// "found but cannot run").
pub const CANNOT_RUN: u8 = 126;

/// The launcher of confined servers, `offload-script-worker sandbox-exec --policy JSON --
/// PROGRAM ARGS...` (and `offload sandbox-exec`, the same): applies the policy to this process
/// and execs the server, which inherits every restriction. If a restriction cannot be applied,
/// the server is not started: the reason goes to stderr, which the engine shows as the server's
/// error.
pub fn launch(policy: &str, command: &[std::ffi::OsString]) -> std::process::ExitCode {
    let e = match (Policy::from_json(policy), command.split_first()) {
        (Err(e), _) => e,
        (Ok(_), None) => SandboxError::Unsupported("no program to start".into()),
        (Ok(policy), Some((program, rest))) => exec(&policy, program, rest),
    };
    eprintln!("offload sandbox: {e}; the server was not started");
    std::process::ExitCode::from(CANNOT_RUN)
}
