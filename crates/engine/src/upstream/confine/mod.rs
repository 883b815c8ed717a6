//! What a confined server may touch, worked out from its entry and Offload's settings, and the
//! launcher that applies it (`offload sandbox-exec`, see `offload_sandbox`).
//!
//! A confined server gets: the allowed roots (read-only ones read-only); the paths its entry
//! names in `args` and `env` (the user telling it where to work); a private state directory,
//! also its `HOME` and `TMPDIR`; read-only, the system's libraries and certificates, its
//! command and the runtime around it; and what its `sandbox` entry adds. Never, whatever is
//! granted above them: Offload's own files and other servers' state, credentials (`~/.ssh`,
//! cloud and registry tokens), shell start-up files, the MCP clients' configurations, the
//! keychain. Landlock only grants, so a grant that holds one of those is split into its other
//! children (a file created later directly in that directory is then out of reach). A file the
//! entry names in a folder the server may not write is saved through a private folder (see
//! [`beside`]).

use std::path::{Path, PathBuf};

use offload_sandbox::{Limits, Network, Policy};

use super::egress::{Allow, Egress};
use crate::config::{SandboxNetwork, SandboxPolicy, expand_tilde};

pub mod beside;
mod paths;
#[cfg(test)]
mod tests;

use paths::{carve, named_paths, runtime_of, script_home, shebang, too_broad};

/// What the engine hands the pool for confining servers (set with the roots).
#[derive(Debug, Clone, Default)]
pub struct Setting {
    /// The `offload` program that confines and starts a server; `None`: none was found, and a
    /// confined server does not start.
    pub launcher: Option<PathBuf>,
    /// The allowed roots on disk, and whether each is read-only.
    pub roots: Vec<(PathBuf, bool)>,
    /// Where the servers' state directories go (`<data>/servers/<name>`).
    pub state_root: PathBuf,
    /// Offload's own files and directories (configuration, data, logs, keychain exports).
    pub own: Vec<PathBuf>,
    /// The user's home, for the credential files and start-up files denied in it.
    pub home: Option<PathBuf>,
}

/// How one server is started confined.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Launch {
    pub launcher: PathBuf,
    pub policy: Policy,
    /// Its `HOME` and `TMPDIR` (made if missing).
    pub state_dir: PathBuf,
    /// The files it saves through a private folder, linked back by [`beside::Saves`].
    pub saved: Vec<beside::Saved>,
}

/// Read-only for every server: what programs need to run at all. Of `/proc`, only the
/// server's own entry (`/proc/self`, opened by the launcher, whose process becomes the server)
/// and the machine-wide facts runtimes read: other processes' entries — Offload's `environ`
/// among them — stay out of reach.
const SYSTEM: &[&str] = &[
    "/usr",
    "/lib",
    "/lib32",
    "/lib64",
    "/bin",
    "/sbin",
    "/etc",
    "/opt",
    "/proc/self",
    "/proc/cpuinfo",
    "/proc/meminfo",
    "/proc/stat",
    "/proc/loadavg",
    "/proc/uptime",
    "/proc/version",
    "/proc/filesystems",
    "/proc/sys",
    "/sys/fs/cgroup",
    "/sys/devices/system/cpu",
    "/run/systemd/resolve",
    "/dev/urandom",
    "/dev/random",
    // macOS (what does not exist is left out).
    "/System",
    "/Library/Frameworks",
    "/Library/Preferences",
    "/private/etc",
    "/private/var/db/timezone",
    "/opt/homebrew",
];
/// Read and written by every server: the null devices.
const DEVICES: &[&str] = &["/dev/null", "/dev/zero", "/dev/full"];
/// In the user's home: never reached, even under a granted parent, unless named in `read`.
const DENIED_IN_HOME: &[&str] = &[
    ".ssh",
    ".gnupg",
    ".aws",
    ".azure",
    ".kube",
    ".docker",
    ".config/gcloud",
    ".npmrc",
    ".pypirc",
    ".netrc",
    ".git-credentials",
    ".cargo/credentials",
    ".cargo/credentials.toml",
    ".bashrc",
    ".bash_profile",
    ".bash_login",
    ".profile",
    ".zshrc",
    ".zprofile",
    ".zshenv",
    ".config/fish",
    ".config/autostart",
    ".config/systemd/user",
    "Library/LaunchAgents",
    ".local/share/keyrings",
    ".password-store",
    ".claude.json",
    ".claude",
    ".cursor",
    ".codeium",
    ".config/Claude",
    ".config/Code/User",
    ".gemini",
    ".codex",
];

/// One stdio server as it is about to start: its entry with `${...}` replaced and its command
/// resolved.
#[derive(Debug, Clone, Copy)]
pub struct Server<'a> {
    pub name: &'a str,
    pub sandbox: &'a SandboxPolicy,
    pub program: &'a Path,
    pub args: &'a [String],
    pub env_values: &'a [String],
    pub cwd: Option<&'a Path>,
    /// The `PATH` it gets.
    pub path_var: &'a std::ffi::OsStr,
    /// Its egress proxy, started for its allow-list (see [`allow_list`]).
    pub egress: Option<&'a Egress>,
}

/// How `server` is launched under `setting`.
pub fn launch(server: Server<'_>, setting: &Setting) -> Result<Launch, String> {
    let Server {
        name,
        sandbox,
        program,
        args,
        env_values,
        cwd,
        path_var,
        egress,
    } = server;
    let launcher = setting.launcher.clone().ok_or_else(|| {
        "sandbox: the `offload` program that confines servers was not found beside this one; reinstall Offload, or set \"sandbox\": \"off\" for this server".to_owned()
    })?;
    let state_dir = setting.state_root.join(name);
    let mut read: Vec<PathBuf> = SYSTEM.iter().map(PathBuf::from).collect();
    read.extend(runtime_of(program));
    // A script's interpreter (`#!/path/to/venv/bin/python`) and the programs on its `PATH`.
    if let Some(interpreter) = shebang(program) {
        read.extend(runtime_of(&interpreter));
    }
    // A program inside a project's `node_modules` (`node_modules/.bin/<bin>`, or a package's
    // script run as the command): the project around it, where Node finds what it imports.
    for p in [
        Some(program.to_owned()),
        std::fs::canonicalize(program).ok(),
    ]
    .into_iter()
    .flatten()
    {
        if p.ancestors()
            .any(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        {
            read.extend(script_home(&p));
        }
    }
    for dir in std::env::split_paths(path_var) {
        if dir.is_absolute() {
            let broad = |p: &PathBuf| too_broad(p, setting.home.as_deref());
            read.extend(
                runtime_of(&dir.join("program"))
                    .into_iter()
                    .filter(|p| !broad(p)),
            );
        }
    }
    let mut write: Vec<PathBuf> = DEVICES.iter().map(PathBuf::from).collect();
    write.push(state_dir.clone());
    for (root, read_only) in &setting.roots {
        if *read_only { &mut read } else { &mut write }.push(root.clone());
    }
    let named = named_paths(args.iter().chain(env_values));
    // A script the entry names runs with what sits around it: its directory (not the home
    // folder or `/tmp` for a script lying there), and the project whose `node_modules` holds it
    // (where Node finds its packages).
    read.extend(
        named
            .read
            .iter()
            .filter(|p| p.is_file())
            .filter_map(|p| script_home(p))
            .filter(|p| !too_broad(p, setting.home.as_deref())),
    );
    read.extend(named.read);
    write.extend(named.write);
    write.extend(cwd.map(Path::to_owned));
    let (more_read, more_write): (Vec<PathBuf>, Vec<PathBuf>) = (
        sandbox.read.iter().map(|p| expand_tilde(p)).collect(),
        sandbox.write.iter().map(|p| expand_tilde(p)).collect(),
    );
    let explicit: Vec<PathBuf> = more_read.iter().chain(&more_write).cloned().collect();
    let mut denied: Vec<PathBuf> = setting.own.clone();
    // Other servers' state directories: the whole state root, but for this server's own.
    denied.push(setting.state_root.clone());
    if let Some(home) = &setting.home {
        denied.extend(DENIED_IN_HOME.iter().map(|d| home.join(d)));
    }
    denied.retain(|d| !explicit.iter().any(|e| d.starts_with(e) || e == d));
    let keep = |p: &PathBuf| p.exists();
    // What the entry's `sandbox` names is granted as named, even inside a place denied (its
    // `read: ["~/.kube/config"]`); everything else is carved around the denied places.
    let mut read = carve(read.into_iter().filter(keep).collect(), &denied, &state_dir);
    let mut write = carve(
        write
            .into_iter()
            .filter(|p| p == &state_dir || keep(p))
            .collect(),
        &denied,
        &state_dir,
    );
    read.extend(more_read.into_iter().filter(keep));
    write.extend(more_write.into_iter().filter(keep));
    read.dedup();
    write.dedup();
    let read_only = git_doors(&write);
    // Never saved through a private folder, which would put it where the server reads: what no
    // server gets unless its `sandbox` names it (a kube config named in `KUBECONFIG`).
    let saved: Vec<PathBuf> = named
        .saved
        .into_iter()
        .filter(|f| !denied.iter().any(|d| f.starts_with(d)))
        .collect();
    let (private_folders, saved) = beside::plan(&saved, &read, &write, &state_dir);
    Ok(Launch {
        launcher,
        policy: Policy {
            read,
            write,
            network: network_of(sandbox.network.as_ref(), program, egress)?,
            unix_sockets: sandbox.unix_sockets,
            limits: limits(sandbox),
            read_only,
            private_folders,
            no_new_processes: false,
        },
        state_dir,
        saved,
    })
}

/// In a repository a server may write (a root, its working directory), what runs code the next
/// time the user uses git: its hooks and its config (`core.hooksPath`, `core.fsmonitor`, ...),
/// kept read-only. Repositories at the top of a grant only: the launcher cannot search a whole
/// tree at every start.
fn git_doors(write: &[PathBuf]) -> Vec<PathBuf> {
    write
        .iter()
        .flat_map(|grant| [grant.join(".git/hooks"), grant.join(".git/config")])
        .filter(|p| p.exists())
        .collect()
}

/// Whether `path` is inside what no confined server gets unless its entry names it.
pub fn withheld(path: &Path, setting: &Setting) -> bool {
    let home = setting
        .home
        .iter()
        .flat_map(|h| DENIED_IN_HOME.iter().map(move |d| h.join(d)));
    setting
        .own
        .iter()
        .cloned()
        .chain(std::iter::once(setting.state_root.clone()))
        .chain(home)
        .any(|d| path.starts_with(d))
}

/// The defaults, with what the entry sets instead.
fn limits(sandbox: &SandboxPolicy) -> Limits {
    static DEFAULT: std::sync::OnceLock<Limits> = std::sync::OnceLock::new();
    let default = DEFAULT.get_or_init(Limits::default_for_servers);
    Limits {
        memory: sandbox
            .memory_mb
            .map(|mb| mb.saturating_mul(1 << 20))
            .or(default.memory),
        processes: sandbox.processes.or(default.processes),
    }
}

/// Offload's own variables a confined server gets (beside its entry's `env`, its `HOME` and
/// `TMPDIR`, and `PATH`): no session bus, no runtime directory, no XDG homes that point back at
/// the user's files.
const BASELINE_ENV: &[&str] = &[
    "USER",
    "LOGNAME",
    "LANG",
    "LANGUAGE",
    "LC_ALL",
    "LC_CTYPE",
    "TZ",
    "TERM",
    "SSL_CERT_FILE",
    "SSL_CERT_DIR",
    "NODE_EXTRA_CA_CERTS",
];

/// The launcher's command for `launch`: `offload-script-worker sandbox-exec --policy … --
/// program args…`, with the baseline environment, the variables `pass` names, and the state
/// directory (made if missing, private) as `HOME` and `TMPDIR`.
pub fn command(
    launch: &Launch,
    program: &Path,
    args: &[String],
    pass: &[String],
) -> Result<tokio::process::Command, String> {
    std::fs::create_dir_all(&launch.state_dir)
        .and_then(|()| private(&launch.state_dir))
        .map_err(|e| {
            format!(
                "sandbox: cannot make the server's state directory {}: {e}",
                launch.state_dir.display()
            )
        })?;
    let policy = launch.policy.to_json();
    tracing::debug!(policy, "starting a confined server");
    let mut cmd = tokio::process::Command::new(&launch.launcher);
    cmd.arg(offload_sandbox::LAUNCH)
        .args(["--policy", &policy, "--"])
        .arg(program)
        .args(args);
    cmd.env_clear();
    for name in BASELINE_ENV
        .iter()
        .copied()
        .chain(pass.iter().map(String::as_str))
    {
        if let Some(value) = std::env::var_os(name) {
            cmd.env(name, value);
        }
    }
    cmd.env("HOME", &launch.state_dir)
        .env("TMPDIR", &launch.state_dir);
    if let Network::Proxy { port, .. } = &launch.policy.network {
        // Read by curl, Python (urllib, requests, httpx), npm, pip, uv, Go; Node's own `fetch`
        // from Node 24 with NODE_USE_ENV_PROXY.
        let proxy = format!("http://127.0.0.1:{port}");
        for name in ["HTTPS_PROXY", "HTTP_PROXY", "https_proxy", "http_proxy"] {
            cmd.env(name, &proxy);
        }
        cmd.env("NODE_USE_ENV_PROXY", "1");
    }
    Ok(cmd)
}

#[cfg(unix)]
fn private(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(0o700))
}

#[cfg(not(unix))]
fn private(_: &Path) -> std::io::Result<()> {
    Ok(())
}

/// Programs that fetch the server before they run it (`npx -y`, `uvx`, ...).
const PACKAGE_RUNNERS: &[&str] = &[
    "npx", "npm", "pnpm", "pnpx", "yarn", "bunx", "bun", "uvx", "uv", "pipx",
];

fn is_package_runner(program: &Path) -> bool {
    program
        .file_stem()
        .and_then(|s| s.to_str())
        .is_some_and(|s| PACKAGE_RUNNERS.contains(&s))
}

/// The allow-list a server's egress proxy holds it to, when its network is one: its entry's
/// `{"allow": [...]}` (and for a package runner the registries it installs from too: it fetches
/// the server before the server reaches anything), or for a package runner without a `network`
/// of its own, those registries alone — where the kernel can hold it to the proxy (a network
/// namespace, or Landlock's TCP ports from Linux 6.7); elsewhere a runner gets the network
/// (see [`launch`]) and an allow-list cannot start.
pub fn allow_list(sandbox: &SandboxPolicy, program: &Path) -> Result<Option<Allow>, String> {
    match &sandbox.network {
        Some(SandboxNetwork::Allow(list)) => {
            let allow = Allow::parse(list)?;
            Ok(Some(if is_package_runner(program) {
                allow.and(Allow::registries())
            } else {
                allow
            }))
        }
        None if is_package_runner(program) && proxy_holds() => Ok(Some(Allow::registries())),
        _ => Ok(None),
    }
}

/// Whether this machine can hold a server to its proxy.
fn proxy_holds() -> bool {
    static HOLDS: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *HOLDS.get_or_init(|| {
        let support = offload_sandbox::support();
        support.tcp_ports || support.namespaces
    })
}

fn network_of(
    network: Option<&SandboxNetwork>,
    program: &Path,
    egress: Option<&Egress>,
) -> Result<Network, String> {
    Ok(match (network, egress) {
        (_, Some(egress)) => Network::Proxy {
            port: egress.port,
            socket: egress.socket.clone(),
        },
        // A runner where no proxy can hold it (see `allow_list`).
        (None, None) if is_package_runner(program) => Network::All,
        (None | Some(SandboxNetwork::Off), None) => Network::Off,
        (Some(SandboxNetwork::All), None) => Network::All,
        (Some(SandboxNetwork::Allow(_)), None) => {
            return Err(
                "sandbox: a network allow-list needs Offload's proxy, and this kernel can hold a server to it neither by a network namespace nor by port (Linux 6.7)".into(),
            );
        }
    })
}
