//! Which paths around a server it needs: its runtime, its script's project and interpreter,
//! the paths its entry names; and grants split around what is never granted.

use std::path::{Path, PathBuf};

use crate::config::expand_tilde;

/// The directories a program needs read around it: its own (and, through symlinks, the
/// real one's) installation prefix — `…/bin/node` → `…` — so an `nvm` or `pyenv` runtime runs.
pub(super) fn runtime_of(program: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    for p in [
        Some(program.to_owned()),
        std::fs::canonicalize(program).ok(),
    ]
    .into_iter()
    .flatten()
    {
        let prefix = match p.parent() {
            Some(bin) if bin.file_name().is_some_and(|n| n == "bin") => bin.parent(),
            other => other,
        };
        if let Some(prefix) = prefix
            && prefix.parent().is_some()
            && !out.iter().any(|o: &PathBuf| o == prefix)
        {
            out.push(prefix.to_owned());
        }
    }
    out
}

/// What a script needs read around it: the directory above its outermost `node_modules` (the
/// project: its packages and `package.json`s), else its own directory.
pub(super) fn script_home(script: &Path) -> Option<PathBuf> {
    let outermost = script
        .ancestors()
        .filter(|a| a.file_name().is_some_and(|n| n == "node_modules"))
        .last();
    match outermost {
        Some(modules) => modules.parent().map(Path::to_owned),
        None => script
            .parent()
            .filter(|p| p.parent().is_some())
            .map(Path::to_owned),
    }
}

/// The interpreter a script names on its first line (`#!/usr/bin/env node` names `env`).
pub(super) fn shebang(program: &Path) -> Option<PathBuf> {
    use std::io::Read;
    let mut head = [0u8; 256];
    let n = std::fs::File::open(program).ok()?.read(&mut head).ok()?;
    let line = head[..n].strip_prefix(b"#!")?;
    let line = &line[..line.iter().position(|&b| b == b'\n').unwrap_or(line.len())];
    let text = std::str::from_utf8(line).ok()?.trim();
    let interpreter = text.split_whitespace().next()?;
    interpreter
        .starts_with('/')
        .then(|| PathBuf::from(interpreter))
}

/// Directories too broad to grant for one file in them.
pub(super) fn too_broad(dir: &Path, home: Option<&Path>) -> bool {
    dir.parent().is_none_or(|p| p.parent().is_none())
        || Some(dir) == home
        || ["/tmp", "/var/tmp", "/dev", "/etc", "/usr", "/var"]
            .iter()
            .any(|d| dir == Path::new(d))
}

/// Where programs live: what is named there (a browser's binary, a server's own package, a
/// virtual environment) is read, never written — a server must not rewrite code that runs
/// later. System folders and installed packages.
pub(super) fn is_program_place(path: &Path) -> bool {
    const SYSTEM_PLACES: &[&str] = &[
        "/usr",
        "/bin",
        "/sbin",
        "/lib",
        "/lib32",
        "/lib64",
        "/opt",
        "/etc",
        "/boot",
        "/snap",
        "/nix/store",
        "/System",
        "/Library",
        "/Applications",
    ];
    SYSTEM_PLACES.iter().any(|s| path.starts_with(s))
        || path.components().any(|c| {
            matches!(
                c.as_os_str().to_str(),
                Some("node_modules" | "site-packages" | "dist-packages" | ".venv")
            )
        })
}

/// A program's own code: a script by its extension or its `#!` line.
fn is_script(path: &Path) -> bool {
    path.extension()
        .and_then(|e| e.to_str())
        .is_some_and(|e| matches!(e, "js" | "mjs" | "cjs" | "ts" | "py" | "pyc" | "rb" | "pl"))
        || shebang(path).is_some()
}

/// What the entry's paths grant.
#[derive(Debug, Default)]
pub(super) struct Named {
    pub write: Vec<PathBuf>,
    pub read: Vec<PathBuf>,
    /// Files the server saves (data files, named whether they exist yet or not): what saving
    /// needs beside them is the launch's to give (see `super::beside`).
    pub saved: Vec<PathBuf>,
}

/// Absolute or `~` paths in arguments and environment values (`--root=/srv/x` too): a
/// directory is granted; a data file is granted and saved (what its server makes beside it to
/// save it — a temporary file, a journal — is given without its folder's other contents); a
/// path that does not exist yet is saved, so the server can create it. A script, or anything in
/// a program place (`is_program_place`), is granted for reading alone: the user named a program
/// to run, not a place to write. Never a folder the user named a file in.
pub(super) fn named_paths<'a>(values: impl Iterator<Item = &'a String>) -> Named {
    let mut out = Named::default();
    for value in values {
        let text = value.rsplit_once('=').map_or(value.as_str(), |(_, v)| v);
        if !(text.starts_with('/') || text.starts_with("~/")) || text == "/" {
            continue;
        }
        let path = expand_tilde(text);
        let real = std::fs::canonicalize(&path).unwrap_or_else(|_| path.clone());
        if is_program_place(&path)
            || is_program_place(&real)
            || (path.is_file() && is_script(&path))
        {
            if path.exists() && !out.read.contains(&path) {
                out.read.push(path);
            }
            continue;
        }
        if path.exists() && !out.write.contains(&path) {
            out.write.push(path.clone());
        }
        if (path.is_file() || !path.exists()) && !out.saved.contains(&path) {
            out.saved.push(path);
        }
    }
    out
}

/// `grants` with every grant that holds a denied path replaced by its other children (level by
/// level down to the denied one); `allowed` (the server's own state directory) stays whole.
pub(super) fn carve(grants: Vec<PathBuf>, denied: &[PathBuf], allowed: &Path) -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut todo = grants;
    while let Some(grant) = todo.pop() {
        if grant == allowed {
            out.push(grant);
            continue;
        }
        if denied.iter().any(|d| grant.starts_with(d)) && !allowed.starts_with(&grant) {
            continue; // inside a denied place
        }
        let holds = denied.iter().any(|d| d != &grant && d.starts_with(&grant))
            || (allowed != grant
                && allowed.starts_with(&grant)
                && denied.iter().any(|d| allowed.starts_with(d)));
        if !holds {
            out.push(grant);
            continue;
        }
        match std::fs::read_dir(&grant) {
            Ok(children) => {
                for child in children.flatten() {
                    let path = child.path();
                    if !denied.iter().any(|d| &path == d) {
                        todo.push(path);
                    }
                }
            }
            // Not a directory (or unreadable): nothing inside it to carve.
            Err(_) => out.push(grant),
        }
    }
    out.sort();
    out.dedup();
    out
}
