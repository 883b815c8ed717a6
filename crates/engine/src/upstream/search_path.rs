//! Finding upstream commands (`npx`, `uvx`, `node`, ...) the way a login shell would.
//!
//! Desktop clients launch Offload with a minimal PATH. We search the process's PATH plus the
//! usual install places first (cheap), and only when a command is still missing ask the user's
//! login shell for its PATH (once, with a time limit). Errors say which command was not found and
//! where we looked.

use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::sync::OnceCell;

use crate::config::expand_tilde;

#[derive(Debug, Default)]
pub struct SearchPath {
    base: Vec<PathBuf>,
    shell: OnceCell<Vec<PathBuf>>,
}

/// A command that could not be found.
#[derive(Debug, Clone)]
pub struct NotFound {
    pub command: String,
    pub searched: Vec<PathBuf>,
}

impl std::fmt::Display for NotFound {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let dirs: Vec<String> = self
            .searched
            .iter()
            .map(|p| p.display().to_string())
            .collect();
        write!(
            f,
            "command '{}' was not found; looked in {} and the login shell's PATH. Install it, or put its absolute path in \"command\"",
            self.command,
            dirs.join(":")
        )
    }
}

impl SearchPath {
    /// The process's PATH followed by the usual install places that exist.
    pub fn from_env() -> Self {
        let mut base: Vec<PathBuf> = Vec::new();
        // PATH often names a directory twice; each is searched (and listed) once.
        for dir in std::env::var_os("PATH")
            .map(|p| std::env::split_paths(&p).collect::<Vec<_>>())
            .unwrap_or_default()
        {
            push_unique(&mut base, dir);
        }
        for extra in usual_places() {
            push_unique(&mut base, extra);
        }
        base.retain(|p| p.is_absolute());
        Self {
            base,
            shell: OnceCell::new(),
        }
    }

    /// The absolute path of `command`. Paths (with a separator) are taken as they are.
    pub async fn resolve(&self, command: &str, cwd: Option<&Path>) -> Result<PathBuf, NotFound> {
        let not_found = |searched: Vec<PathBuf>| NotFound {
            command: command.to_owned(),
            searched,
        };
        if command.contains('/') || command.contains(std::path::MAIN_SEPARATOR) {
            let p = expand_tilde(command);
            let p = match (p.is_absolute(), cwd) {
                (false, Some(cwd)) => cwd.join(p),
                _ => p,
            };
            return if p.is_file() {
                Ok(p)
            } else {
                Err(not_found(vec![]))
            };
        }
        let cwd = cwd
            .map(Path::to_path_buf)
            .unwrap_or_else(std::env::temp_dir);
        if let Ok(p) = which::which_in(command, Some(join(&self.base)), &cwd) {
            return Ok(p);
        }
        let all = self.all().await;
        which::which_in(command, Some(join(&all)), &cwd).map_err(|_| not_found(all))
    }

    /// PATH for upstream children: everything we know of.
    pub async fn child_path(&self) -> OsString {
        match self.shell.get() {
            Some(_) => join(&self.all().await),
            None => join(&self.base),
        }
    }

    async fn all(&self) -> Vec<PathBuf> {
        let shell = self.shell.get_or_init(login_shell_path).await;
        let mut all = self.base.clone();
        for p in shell {
            push_unique(&mut all, p.clone());
        }
        all
    }
}

fn join(paths: &[PathBuf]) -> OsString {
    std::env::join_paths(paths).unwrap_or_default()
}

/// Adds `p` unless it is there already (also when written with a trailing slash or `./`).
fn push_unique(v: &mut Vec<PathBuf>, p: PathBuf) {
    if !v.iter().any(|a| a.components().eq(p.components())) {
        v.push(p);
    }
}

fn usual_places() -> Vec<PathBuf> {
    let mut v = Vec::new();
    if let Some(home) = directories::BaseDirs::new().map(|d| d.home_dir().to_owned()) {
        for rel in [
            ".local/bin",
            ".cargo/bin",
            ".volta/bin",
            ".bun/bin",
            ".deno/bin",
            ".npm-global/bin",
            ".pyenv/shims",
            ".asdf/shims",
            ".nix-profile/bin",
        ] {
            v.push(home.join(rel));
        }
    }
    for abs in [
        "/opt/homebrew/bin",
        "/usr/local/bin",
        "/usr/bin",
        "/bin",
        "/opt/local/bin",
        "/snap/bin",
    ] {
        v.push(PathBuf::from(abs));
    }
    v.retain(|p| p.is_dir());
    v
}

/// Asks `$SHELL -lc` for its PATH; empty on any failure or after 3 s.
async fn login_shell_path() -> Vec<PathBuf> {
    #[cfg(unix)]
    {
        const MARK: &str = "__OFFLOAD_PATH__=";
        let shell = std::env::var("SHELL").unwrap_or_else(|_| "/bin/sh".into());
        let mut cmd = tokio::process::Command::new(shell);
        cmd.args(["-lc", &format!("printf '\\n{MARK}%s\\n' \"$PATH\"")])
            .stdin(std::process::Stdio::null())
            .stderr(std::process::Stdio::null())
            .kill_on_drop(true);
        let out = tokio::time::timeout(Duration::from_secs(3), cmd.output()).await;
        if let Ok(Ok(out)) = out {
            let text = String::from_utf8_lossy(&out.stdout);
            if let Some(line) = text.lines().find_map(|l| l.strip_prefix(MARK)) {
                return std::env::split_paths(line)
                    .filter(|p| p.is_absolute())
                    .collect();
            }
        }
        Vec::new()
    }
    #[cfg(not(unix))]
    {
        Vec::new()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn finds_commands_on_path_and_explains_missing_ones() {
        let sp = SearchPath::from_env();
        assert!(sp.resolve("sh", None).await.unwrap().is_absolute());
        let e = sp
            .resolve("surely-not-a-command-xyz", None)
            .await
            .unwrap_err();
        let msg = e.to_string();
        assert!(
            msg.contains("surely-not-a-command-xyz") && msg.contains("/usr/bin"),
            "{msg}"
        );
        assert!(sp.resolve("/nonexistent/bin/tool", None).await.is_err());
    }
}

#[cfg(test)]
mod dedup_tests {
    use super::*;

    #[test]
    fn a_directory_is_listed_once() {
        let mut v = Vec::new();
        for p in ["/usr/bin", "/usr/local/bin", "/usr/bin/", "/usr/./bin"] {
            push_unique(&mut v, PathBuf::from(p));
        }
        assert_eq!(
            v,
            [PathBuf::from("/usr/bin"), PathBuf::from("/usr/local/bin")]
        );
    }
}
