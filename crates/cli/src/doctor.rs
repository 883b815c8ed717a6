//! `offload doctor`: what this machine can enforce on the servers Offload starts, a hostile
//! self-test of the launcher on the real kernel, and which configured servers run unconfined.
//! One line each; the exit code says whether servers can be confined here.
//!
//! The self-test starts this program under the launcher (`offload sandbox-exec`), once under a
//! policy that denies an attempt and once, as the positive control, under one that grants it: a
//! refusal counts only when the same attempt works where it is allowed.

use std::net::TcpListener;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};

use offload_engine::config::{Config, Sandbox, SandboxNetwork};
use offload_sandbox::{Network, Policy};

use crate::mcp::ConfigChoice;

#[derive(clap::Args)]
pub struct DoctorArgs {
    /// Internal: make one attempt of the self-test (`read:PATH`, `write:PATH`, `tcp:PORT`,
    /// `unix:PATH`) and print `ok` or `refused: ...`.
    #[arg(long, hide = true)]
    attempt: Option<String>,
}

pub fn run(config: ConfigChoice, args: DoctorArgs) -> ExitCode {
    if let Some(attempt) = args.attempt {
        print(&format!("{}\n", try_attempt(&attempt)));
        return ExitCode::SUCCESS;
    }
    let support = offload_sandbox::support();
    let mut ok = true;
    let mut out = String::new();
    let mut line = |what: &str, text: String| out.push_str(&format!("{what:<16}{text}\n"));

    let confinable = kernel_lines(&support, &mut line);
    ok &= confinable;
    let exe = std::env::current_exe().ok();
    line(
        "launcher",
        exe.as_ref()
            .map_or("not found".into(), |e| e.display().to_string()),
    );
    if confinable {
        match exe.as_deref().map(self_test) {
            Some(Ok(n)) => line(
                "self-test",
                format!("{n} attempts, 0 escapes; each works when granted"),
            ),
            Some(Err(e)) => {
                ok = false;
                line("self-test", format!("FAILED: {e}"));
            }
            None => {}
        }
    }
    line("servers", servers_line(config));
    print(&out);
    if ok {
        ExitCode::SUCCESS
    } else {
        ExitCode::FAILURE
    }
}

/// What this system can enforce, a line each; whether servers can be confined here at all.
#[cfg(target_os = "linux")]
fn kernel_lines(support: &offload_sandbox::Support, line: &mut impl FnMut(&str, String)) -> bool {
    let mut ok = true;
    line(
        "Landlock",
        match support.landlock_abi {
            0 => {
                ok = false;
                "unavailable: servers cannot be confined here (enable Landlock: Linux ≥ 5.13 with `lsm=landlock` on the kernel command line), or set \"sandbox\": \"off\" on each server".into()
            }
            abi => format!(
                "ABI {abi}: files{}{}",
                if support.tcp_ports {
                    ", TCP ports"
                } else {
                    "; TCP ports not held (needs Linux 6.7): a network allow-list falls back to all"
                },
                if support.scoping {
                    ", signals and abstract sockets scoped"
                } else {
                    ""
                }
            ),
        },
    );
    line("seccomp", seccomp_line());
    line(
        "processes",
        if support.process_limits {
            "limited per server (a user namespace of its own)".into()
        } else if offload_sandbox::runs_as_root() {
            "not limited: Offload runs as root, which a process limit never holds".into()
        } else {
            "not limited: user namespaces are blocked here (memory is still limited)".into()
        },
    );
    line(
        "git hooks",
        if support.namespaces {
            "read-only in a repository a server may write (a mount namespace of its own)".into()
        } else {
            "writable: no user namespaces here, so a repository's hooks cannot be kept read-only"
                .into()
        },
    );
    line(
        "/proc",
        if support.namespaces {
            "a server's own processes alone, each reading its own entry (a process namespace of its own)".into()
        } else {
            "a server's first process's own entry alone: its children cannot read theirs (no namespaces here)".into()
        },
    );
    line(
        "named files",
        if support.namespaces {
            "saved beside themselves without their folder (a private folder of the server's own)"
                .into()
        } else {
            "written in place only: no mount namespaces here, so a server that saves by renaming or keeps a journal beside a named file fails (give it the folder in \"write\")".into()
        },
    );
    line(
        "network",
        if support.namespaces {
            "an allow-list holds by name: Offload's proxy is a server's only way out (a network namespace of its own)".into()
        } else if support.tcp_ports {
            "an allow-list holds by name through Offload's proxy, which a server reaches by its port only: the same port elsewhere is reachable too (no network namespaces here)".into()
        } else {
            ok = false;
            "an allow-list cannot be held here (no network namespaces, no Landlock TCP ports): servers with one do not start".into()
        },
    );
    ok
}

#[cfg(target_os = "macos")]
fn kernel_lines(_: &offload_sandbox::Support, line: &mut impl FnMut(&str, String)) -> bool {
    let present = std::path::Path::new("/usr/bin/sandbox-exec").exists();
    line(
        "Seatbelt",
        if present {
            "/usr/bin/sandbox-exec: files and the network by a generated profile; memory and processes not limited".into()
        } else {
            "/usr/bin/sandbox-exec is missing: servers cannot be confined here".into()
        },
    );
    present
}

#[cfg(not(any(target_os = "linux", target_os = "macos")))]
fn kernel_lines(_: &offload_sandbox::Support, line: &mut impl FnMut(&str, String)) -> bool {
    line("confinement", offload_sandbox::WINDOWS_CONSENT.into());
    false
}

fn seccomp_line() -> String {
    match std::fs::read_to_string("/proc/sys/kernel/seccomp/actions_avail") {
        Ok(actions) if actions.contains("errno") => {
            "on: ptrace, io_uring and the sockets a policy refuses are refused".into()
        }
        _ => "unavailable: the launcher cannot start confined servers".into(),
    }
}

/// The configured stdio servers: confined, confined with the network open, unconfined.
fn servers_line(config: ConfigChoice) -> String {
    let path = config
        .path
        .or_else(|| offload_engine::config::AppDirs::platform().map(|d| d.config_file()));
    let Some(path) = path else {
        return "no configuration found".into();
    };
    let config = match Config::load(&path) {
        Ok(c) => c,
        Err(e) => return format!("cannot read {}: {e}", path.display()),
    };
    let (mut confined, mut open, mut off) = (0, Vec::new(), Vec::new());
    for (name, entry) in &config.mcp_servers {
        if entry.command.is_none() || entry.disabled {
            continue;
        }
        match &entry.sandbox {
            Some(Sandbox::Off) => off.push(name.as_str()),
            Some(Sandbox::Confined(p)) if p.network == Some(SandboxNetwork::All) => {
                open.push(name.as_str())
            }
            _ => confined += 1,
        }
    }
    let mut text = format!("{confined} confined");
    if !open.is_empty() {
        text.push_str(&format!(
            ", {} with the network open ({})",
            open.len(),
            open.join(", ")
        ));
    }
    if !off.is_empty() {
        text.push_str(&format!(
            ", {} unconfined (\"sandbox\": \"off\": {})",
            off.len(),
            off.join(", ")
        ));
    }
    text
}

/// Each attempt denied, then granted; the number of attempts refused and allowed as they
/// should be, or what went wrong.
fn self_test(exe: &Path) -> Result<usize, String> {
    let dir = tempfile::tempdir().map_err(|e| format!("no temporary directory: {e}"))?;
    let secret = dir.path().join("secret");
    std::fs::write(&secret, "secret").map_err(|e| e.to_string())?;
    let outside = dir.path().join("out");
    std::fs::create_dir(&outside).map_err(|e| e.to_string())?;
    let socket_dir = dir.path().join("sock");
    std::fs::create_dir(&socket_dir).map_err(|e| e.to_string())?;
    let socket = socket_dir.join("agent.sock");
    let _agent = UnixListener::bind(&socket).map_err(|e| e.to_string())?;
    let listener = TcpListener::bind("127.0.0.1:0").map_err(|e| e.to_string())?;
    let port = listener.local_addr().map_err(|e| e.to_string())?.port();

    let base = Policy {
        read: ["/usr", "/lib", "/lib64", "/etc", "/proc/self"]
            .iter()
            .map(PathBuf::from)
            .chain(exe.parent().map(Path::to_owned))
            .filter(|p| p.exists())
            .collect(),
        write: vec!["/dev/null".into()],
        ..Policy::default()
    };
    let grant = |change: &dyn Fn(&mut Policy)| {
        let mut p = base.clone();
        change(&mut p);
        p
    };
    let attempts: [(&str, String, Policy); 4] = [
        (
            "read a secret",
            format!("read:{}", secret.display()),
            grant(&|p| p.read.push(secret.clone())),
        ),
        (
            "write outside the policy",
            format!("write:{}", outside.join("x").display()),
            grant(&|p| p.write.push(outside.clone())),
        ),
        (
            "connect to a loopback port",
            format!("tcp:{port}"),
            grant(&|p| p.network = Network::All),
        ),
        (
            "connect to a unix socket",
            format!("unix:{}", socket.display()),
            grant(&|p| {
                p.unix_sockets = true;
                p.write.push(socket_dir.clone());
            }),
        ),
    ];
    for (what, attempt, allowing) in &attempts {
        let denied = attempt_under(exe, &base, attempt)?;
        if !denied.starts_with("refused") {
            return Err(format!("{what}: not refused ({denied})"));
        }
        let allowed = attempt_under(exe, allowing, attempt)?;
        if allowed != "ok" {
            return Err(format!(
                "{what}: the control failed, so the refusal proves nothing ({allowed})"
            ));
        }
    }
    Ok(attempts.len())
}

fn attempt_under(exe: &Path, policy: &Policy, attempt: &str) -> Result<String, String> {
    let out = Command::new(exe)
        .args(["sandbox-exec", "--policy", &policy.to_json(), "--"])
        .arg(exe)
        .args(["doctor", "--attempt", attempt])
        .env_clear()
        .output()
        .map_err(|e| format!("cannot run the launcher: {e}"))?;
    let said = String::from_utf8_lossy(&out.stdout).trim().to_owned();
    if said.is_empty() {
        return Err(format!(
            "the launcher failed: {}",
            String::from_utf8_lossy(&out.stderr).trim()
        ));
    }
    Ok(said)
}

fn try_attempt(attempt: &str) -> String {
    let result = match attempt.split_once(':') {
        Some(("read", path)) => std::fs::read(path).map(drop),
        Some(("write", path)) => std::fs::write(path, "x"),
        Some(("tcp", port)) => port
            .parse::<u16>()
            .map_err(std::io::Error::other)
            .and_then(|p| std::net::TcpStream::connect(("127.0.0.1", p)).map(drop)),
        Some(("unix", path)) => std::os::unix::net::UnixStream::connect(path).map(drop),
        _ => Err(std::io::Error::other("unknown attempt")),
    };
    match result {
        Ok(()) => "ok".into(),
        Err(e) => format!("refused: {e}"),
    }
}

/// A human command: stdout is not a protocol stream here.
#[allow(clippy::print_stdout)]
fn print(text: &str) {
    print!("{text}");
}
