//! The macOS launcher: the policy as a Seatbelt profile (SBPL), applied by Apple's
//! `/usr/bin/sandbox-exec -p PROFILE -- program args...`, which the launcher execs in its place
//! (the server inherits the profile and can never lift it). Deny by default; what the policy
//! grants, and what any program needs to start (process and system queries, the system's IPC),
//! allowed.
//!
//! The profile is built on every platform, so its tests run where this project's CI does
//! (Linux); applying it needs macOS, which CI does not run.

use std::fmt::Write;
use std::path::{Path, PathBuf};

use crate::{Network, Policy};

/// Apple's launcher, by its full path (never looked up on `PATH`).
#[cfg(target_os = "macos")]
pub const SANDBOX_EXEC: &str = "/usr/bin/sandbox-exec";

/// What every program needs to start and run on macOS, whatever it is granted.
const BASE: &str = r#"(version 1)
(deny default)
(allow process-exec process-fork)
(allow signal (target same-sandbox))
(allow process-info* (target same-sandbox))
(allow sysctl-read)
(allow mach-lookup)
(allow ipc-posix-sem ipc-posix-shm)
(allow iokit-open)
(allow file-read-metadata)
(allow file-ioctl (literal "/dev/null") (literal "/dev/tty"))
(allow file-read* file-write-data (literal "/dev/null") (literal "/dev/zero") (literal "/dev/dtracehelper"))
(allow file-read* (literal "/dev/random") (literal "/dev/urandom"))
"#;

/// The profile for `policy`.
pub fn profile(policy: &Policy) -> String {
    let mut out = String::from(BASE);
    if policy.no_new_processes {
        // The launcher's own exec of the program is before the profile holds.
        let _ = writeln!(out, "(deny process-fork)");
    }
    let paths = |list: &[PathBuf]| {
        list.iter()
            .map(|p| format!(" (subpath {})", quoted(&resolved(p))))
            .collect::<String>()
    };
    if !policy.read.is_empty() {
        let _ = writeln!(out, "(allow file-read*{})", paths(&policy.read));
    }
    if !policy.write.is_empty() {
        let _ = writeln!(
            out,
            "(allow file-read* file-write*{})",
            paths(&policy.write)
        );
    }
    // Name lookups go through mDNSResponder's socket.
    let dns = r#"(allow network-outbound (remote unix-socket (path-literal "/private/var/run/mDNSResponder")))"#;
    match &policy.network {
        Network::Off => {}
        Network::All => {
            let _ = writeln!(out, "(allow network*)");
        }
        Network::Ports(ports) => {
            let _ = writeln!(out, "{dns}");
            for port in ports {
                let _ = writeln!(out, "(allow network-outbound (remote tcp \"*:{port}\"))");
            }
        }
        Network::Proxy { port, .. } => {
            let _ = writeln!(
                out,
                "(allow network-outbound (remote tcp \"localhost:{port}\"))"
            );
        }
    }
    if policy.unix_sockets {
        let _ = writeln!(out, "(allow network-outbound (remote unix-socket))");
        let _ = writeln!(out, "(allow network-bind (local unix-socket))");
    }
    out
}

/// A path as Seatbelt matches it: with its symlinks resolved (`/tmp` is `/private/tmp`).
fn resolved(path: &Path) -> PathBuf {
    std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned())
}

/// A string literal of SBPL.
fn quoted(path: &Path) -> String {
    let text = path.to_string_lossy();
    let mut out = String::with_capacity(text.len() + 2);
    out.push('"');
    for c in text.chars() {
        if c == '"' || c == '\\' {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_profile_denies_by_default_and_grants_what_the_policy_says() {
        let policy = Policy {
            read: vec!["/nonexistent/usr".into()],
            write: vec!["/nonexistent/state \"dir\"".into()],
            network: Network::Proxy {
                port: 3128,
                socket: "/tmp/p.sock".into(),
            },
            ..Policy::default()
        };
        let text = profile(&policy);
        assert!(text.starts_with("(version 1)\n(deny default)\n"));
        assert!(!text.contains("(deny process-fork)"));
        let worker = profile(&Policy {
            no_new_processes: true,
            ..Policy::default()
        });
        assert!(worker.contains("(deny process-fork)"), "{worker}");
        assert!(text.contains("(allow file-read* (subpath \"/nonexistent/usr\"))"));
        assert!(text.contains(
            "(allow file-read* file-write* (subpath \"/nonexistent/state \\\"dir\\\"\"))"
        ));
        assert!(text.contains("(remote tcp \"localhost:3128\")"));
        assert!(!text.contains("(allow network*)"));
        assert!(
            !text.contains("unix-socket))"),
            "no unix sockets unless asked"
        );

        let off = profile(&Policy::default());
        assert!(!off.contains("network"), "no network at all: {off}");
        let all = profile(&Policy {
            network: Network::All,
            unix_sockets: true,
            ..Policy::default()
        });
        assert!(all.contains("(allow network*)"));
        assert!(all.contains("(allow network-outbound (remote unix-socket))"));
        let ports = profile(&Policy {
            network: Network::Ports(vec![443]),
            ..Policy::default()
        });
        assert!(ports.contains("(remote tcp \"*:443\")") && ports.contains("mDNSResponder"));
    }

    #[test]
    fn symlinked_paths_are_granted_as_they_resolve() {
        let dir = tempfile::tempdir().unwrap();
        let real = dir.path().join("real");
        std::fs::create_dir(&real).unwrap();
        let link = dir.path().join("link");
        std::os::unix::fs::symlink(&real, &link).unwrap();
        let text = profile(&Policy {
            read: vec![link],
            ..Policy::default()
        });
        let real = std::fs::canonicalize(&real).unwrap();
        assert!(
            text.contains(&format!("(subpath \"{}\")", real.display())),
            "{text}"
        );
    }
}
