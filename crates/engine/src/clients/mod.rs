//! The MCP clients Offload knows (`spec/config.md`): where each keeps its configuration, whether
//! Offload is connected to it, connecting (one stdio entry running `offload mcp`, after a
//! timestamped backup, everything else in the file kept), disconnecting, and the servers it
//! could hand over to Offload.

mod document;

use std::path::{Path, PathBuf};

use serde::Serialize;
use serde_json::{Value, json};

pub use document::{Document, Shape};

/// The name of the entry Offload adds to a client.
pub const ENTRY: &str = "offload";

/// One client Offload knows.
#[derive(Debug, Clone, Copy)]
pub struct Known {
    pub id: &'static str,
    pub name: &'static str,
    pub shape: Shape,
    place: Place,
}

/// Where a client's file is: under the home directory, or under the platform's configuration
/// directory (`~/.config` on Linux, `~/Library/Application Support` on macOS, `%APPDATA%`).
#[derive(Debug, Clone, Copy)]
enum Place {
    Home(&'static str),
    Config(&'static str),
}

const fn standard(key: &'static str, typed: bool) -> Shape {
    Shape::Standard { key, typed }
}

pub const KNOWN: [Known; 9] = [
    Known {
        id: "claude-desktop",
        name: "Claude Desktop",
        shape: standard("mcpServers", false),
        place: Place::Config("Claude/claude_desktop_config.json"),
    },
    Known {
        id: "claude-code",
        name: "Claude Code",
        shape: standard("mcpServers", true),
        place: Place::Home(".claude.json"),
    },
    Known {
        id: "cursor",
        name: "Cursor",
        shape: standard("mcpServers", false),
        place: Place::Home(".cursor/mcp.json"),
    },
    Known {
        id: "vscode",
        name: "VS Code",
        shape: standard("servers", true),
        place: Place::Config("Code/User/mcp.json"),
    },
    Known {
        id: "windsurf",
        name: "Windsurf",
        shape: standard("mcpServers", false),
        place: Place::Home(".codeium/windsurf/mcp_config.json"),
    },
    Known {
        id: "zed",
        name: "Zed",
        shape: standard("context_servers", false),
        place: Place::Home(".config/zed/settings.json"),
    },
    Known {
        id: "codex",
        name: "Codex CLI",
        shape: Shape::Codex,
        place: Place::Home(".codex/config.toml"),
    },
    Known {
        id: "gemini",
        name: "Gemini CLI",
        shape: standard("mcpServers", false),
        place: Place::Home(".gemini/settings.json"),
    },
    Known {
        id: "opencode",
        name: "opencode",
        shape: Shape::Opencode,
        place: Place::Home(".config/opencode/opencode.json"),
    },
];

/// Where clients keep their files on this machine.
#[derive(Debug, Clone)]
pub struct Machine {
    pub home: PathBuf,
    pub config_dir: PathBuf,
}

impl Machine {
    /// The current user's directories.
    pub fn current() -> Option<Self> {
        let dirs = directories::BaseDirs::new()?;
        Some(Self {
            home: dirs.home_dir().to_owned(),
            config_dir: dirs.config_dir().to_owned(),
        })
    }

    pub fn path(&self, client: &Known) -> PathBuf {
        match client.place {
            Place::Home(p) => self.home.join(p),
            Place::Config(p) => self.config_dir.join(p),
        }
    }
}

pub fn known(id: &str) -> Option<&'static Known> {
    KNOWN.iter().find(|k| k.id == id)
}

/// A client as the Clients screen shows it.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClientView {
    pub id: String,
    pub name: String,
    pub path: String,
    /// The client seems installed (its file or its folder exists).
    pub present: bool,
    /// Offload is in its file.
    pub connected: bool,
    /// Its other server entries (what *Import* would copy).
    pub servers: Vec<String>,
    /// Why its file cannot be read (it is then never written).
    pub error: Option<String>,
}

/// The client's file, parsed (an absent file is an empty document).
pub fn read(machine: &Machine, client: &Known) -> Result<(PathBuf, Document), String> {
    let path = machine.path(client);
    let text = match std::fs::read_to_string(&path) {
        Ok(t) => t,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => String::new(),
        Err(e) => return Err(format!("cannot read {}: {e}", path.display())),
    };
    let doc = Document::parse(client.shape, &text).map_err(|e| {
        format!(
            "{} does not parse, so it is left alone: {e}",
            path.display()
        )
    })?;
    Ok((path, doc))
}

/// Whether an entry (in Offload's shape) runs Offload's shim.
pub fn is_offload(entry: &Value) -> bool {
    let command = entry["command"].as_str().unwrap_or_default();
    let program = Path::new(command)
        .file_stem()
        .and_then(|s| s.to_str())
        .unwrap_or_default();
    program == "offload" && entry["args"].get(0).and_then(Value::as_str) == Some("mcp")
}

pub fn view(machine: &Machine, client: &Known) -> ClientView {
    let path = machine.path(client);
    let present = path.exists()
        || path
            .parent()
            .is_some_and(|p| p != machine.home && p.is_dir());
    let mut view = ClientView {
        id: client.id.into(),
        name: client.name.into(),
        path: path.display().to_string(),
        present,
        connected: false,
        servers: Vec::new(),
        error: None,
    };
    match read(machine, client) {
        Ok((_, doc)) => {
            for (name, entry) in doc.entries(client.shape) {
                if is_offload(&entry) {
                    view.connected = true;
                } else {
                    view.servers.push(name);
                }
            }
        }
        Err(e) => view.error = Some(e),
    }
    view
}

pub fn views(machine: &Machine) -> Vec<ClientView> {
    KNOWN.iter().map(|k| view(machine, k)).collect()
}

/// Copies `path` to `<name>.offload-backup-<UTC time>` beside it; answers the copy's path.
pub fn backup(path: &Path) -> std::io::Result<Option<PathBuf>> {
    if !path.exists() {
        return Ok(None);
    }
    let stamp = chrono::Utc::now().format("%Y%m%dT%H%M%SZ");
    let name = path
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    for n in 0.. {
        let suffix = if n == 0 {
            String::new()
        } else {
            format!("-{n}")
        };
        let copy = path.with_file_name(format!("{name}.offload-backup-{stamp}{suffix}"));
        if !copy.exists() {
            std::fs::copy(path, &copy)?;
            return Ok(Some(copy));
        }
    }
    unreachable!("some backup name is free")
}

/// Writes `doc` to `path` (through a symlink to its target) after backing the file up.
pub fn write(path: &Path, doc: &Document) -> std::io::Result<Option<PathBuf>> {
    let target = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_owned());
    let saved = backup(&target)?;
    let text = doc.render();
    crate::whole_file::replace(&target, |w| w.write_all(text.as_bytes()))?;
    Ok(saved)
}

/// The installed `offload` binary: beside this program (the app ships it there), else on PATH.
pub fn installed_program() -> Option<PathBuf> {
    let name = format!("offload{}", std::env::consts::EXE_SUFFIX);
    let beside = std::env::current_exe().ok()?.parent()?.join(&name);
    if beside.is_file() {
        return Some(beside);
    }
    which::which("offload").ok()
}

/// The entry that runs `offload mcp` with the binary at `program` (and the client's choice of
/// how upstream tools are shown, when it makes one).
pub fn offload_entry(program: &Path, expose: Option<crate::gateway::Expose>) -> Value {
    let mut args = vec!["mcp".to_owned()];
    if let Some(expose) = expose {
        args.push("--expose".into());
        args.push(expose.as_str().into());
    }
    json!({"command": program.display().to_string(), "args": args})
}

/// What to paste into `client`'s configuration to add Offload by hand: the file's text with
/// only Offload's entry (in that client's format), and for Claude Code the command that adds it.
pub fn snippet(
    client: &Known,
    program: &Path,
    expose: Option<crate::gateway::Expose>,
) -> (String, Option<String>) {
    let entry = offload_entry(program, expose);
    let mut doc = Document::parse(client.shape, "").unwrap_or_else(|_| {
        Document::parse(client.shape, "{}").expect("an empty document of every shape parses")
    });
    doc.put(client.shape, ENTRY, &entry);
    let command = (client.id == "claude-code").then(|| {
        let args: Vec<String> = entry["args"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|a| a.as_str().map(str::to_owned))
            .collect();
        format!(
            "claude mcp add {ENTRY} -- {} {}",
            program.display(),
            args.join(" ")
        )
    });
    (doc.render(), command)
}

#[cfg(test)]
mod tests;
