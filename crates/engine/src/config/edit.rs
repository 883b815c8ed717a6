//! Changes to `config.json` made on the user's behalf (by the desktop app): one server or the
//! list of roots at a time, on the file's JSON document, so everything else in it — unknown keys,
//! key order, other servers — stays as the user wrote it.
//!
//! A file that does not parse is never written over: the edit fails and says where the file is
//! broken. Writes go to a temporary file in the same directory that is then renamed over the
//! original ([`crate::whole_file`]), so the file is always whole, whoever reads it meanwhile.

use std::path::Path;

use serde_json::{Map, Value};

use super::{ConfigError, RootEntry, ServerEntry};

/// Why an edit was not made.
#[derive(Debug, thiserror::Error)]
pub enum EditError {
    #[error(transparent)]
    Config(#[from] ConfigError),
    #[error("{0}")]
    Invalid(String),
    #[error("cannot write {path}: {source}")]
    Write {
        path: std::path::PathBuf,
        source: std::io::Error,
    },
}

impl EditError {
    pub fn code(&self) -> crate::ErrorCode {
        match self {
            Self::Config(e) => e.code(),
            Self::Invalid(_) => crate::ErrorCode::InvalidArguments,
            Self::Write { .. } => crate::ErrorCode::WriteFailed,
        }
    }
}

/// Reads `path` as a JSON object (a missing or blank file is an empty one), lets `change` edit
/// it, and writes it back whole. Answers what `change` answered.
pub fn edit<T>(
    path: &Path,
    change: impl FnOnce(&mut Map<String, Value>) -> Result<T, EditError>,
) -> Result<T, EditError> {
    let text = read_text(path)?;
    // The whole file must be a valid configuration before anything is changed in it.
    super::Config::parse(&text, path)?;
    let mut doc = if text.trim().is_empty() {
        Map::new()
    } else {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(doc)) => doc,
            _ => {
                return Err(EditError::Invalid(format!(
                    "{} is not a JSON object",
                    path.display()
                )));
            }
        }
    };
    let answer = change(&mut doc)?;
    let updated = Value::Object(doc);
    super::Config::parse(&updated.to_string(), path)?;
    write_whole(path, &updated)?;
    Ok(answer)
}

/// The file's text; a file not made yet is empty.
fn read_text(path: &Path) -> Result<String, EditError> {
    match std::fs::read_to_string(path) {
        Ok(text) => Ok(text),
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(String::new()),
        Err(source) => Err(ConfigError::Read {
            path: path.to_owned(),
            source,
        }
        .into()),
    }
}

fn write_whole(path: &Path, doc: &Value) -> Result<(), EditError> {
    crate::whole_file::replace(path, |w| {
        serde_json::to_writer_pretty(&mut *w, doc).map_err(std::io::Error::other)?;
        w.write_all(b"\n")
    })
    .map_err(|source| EditError::Write {
        path: path.to_owned(),
        source,
    })
}

fn servers(doc: &mut Map<String, Value>) -> Result<&mut Map<String, Value>, EditError> {
    // A file written VS Code's way keeps its `servers`.
    let key = if !doc.contains_key("mcpServers") && doc.contains_key("servers") {
        "servers"
    } else {
        "mcpServers"
    };
    let servers = doc.entry(key).or_insert_with(|| Value::Object(Map::new()));
    servers
        .as_object_mut()
        .ok_or_else(|| EditError::Invalid(format!("\"{key}\" is not an object")))
}

fn check_name(name: &str) -> Result<(), EditError> {
    if name.trim().is_empty() || name.trim() != name {
        return Err(EditError::Invalid(
            "a server needs a name without leading or trailing spaces".into(),
        ));
    }
    Ok(())
}

/// Adds server `name`, or replaces the server `previous` (its old name when renaming, else
/// `name`) at the same place in the file. Keys of the old entry that Offload does not know are
/// kept. Adding a name that exists, or renaming onto one, is refused.
pub fn put_server(
    doc: &mut Map<String, Value>,
    previous: Option<&str>,
    name: &str,
    entry: &ServerEntry,
) -> Result<(), EditError> {
    check_name(name)?;
    entry.transport(name)?;
    let servers = servers(doc)?;
    let old_name = previous.unwrap_or(name);
    let exists = servers.contains_key(old_name);
    if previous.is_some() && !exists {
        return Err(EditError::Invalid(format!(
            "there is no server '{old_name}'"
        )));
    }
    if (previous.is_none() && servers.contains_key(name))
        || (old_name != name && servers.contains_key(name))
    {
        return Err(EditError::Invalid(format!(
            "a server called '{name}' exists already; choose another name"
        )));
    }
    let mut value = serde_json::to_value(entry).map_err(|e| EditError::Invalid(e.to_string()))?;
    if let (Some(Value::Object(old)), Value::Object(new)) = (servers.get(old_name), &mut value) {
        for (k, v) in old {
            if !is_known_entry_key(k) && !new.contains_key(k) {
                new.insert(k.clone(), v.clone());
            }
        }
    }
    if exists {
        // In place: the server keeps its position in the file.
        let mut value = Some(value);
        *servers = std::mem::take(servers)
            .into_iter()
            .map(|(k, v)| {
                if k == old_name {
                    (name.to_owned(), value.take().unwrap_or(v))
                } else {
                    (k, v)
                }
            })
            .collect();
    } else {
        servers.insert(name.to_owned(), value);
    }
    Ok(())
}

/// The keys the server editor owns: a key it does not send is removed. Anything else
/// (`expose`, `prefix`, `disabledTools`, ...) is kept as it is when the editor saves.
fn is_known_entry_key(key: &str) -> bool {
    matches!(
        key,
        "type"
            | "command"
            | "args"
            | "env"
            | "cwd"
            | "url"
            | "headers"
            | "disabled"
            | "timeoutSecs"
            | "startTimeoutSecs"
            | "sandbox"
    )
}

/// Removes server `name`.
pub fn remove_server(doc: &mut Map<String, Value>, name: &str) -> Result<(), EditError> {
    servers(doc)?
        .shift_remove(name)
        .map(|_| ())
        .ok_or_else(|| EditError::Invalid(format!("there is no server '{name}'")))
}

/// Turns server `name` on or off, touching only its `disabled` key.
pub fn set_server_enabled(
    doc: &mut Map<String, Value>,
    name: &str,
    enabled: bool,
) -> Result<(), EditError> {
    let entry = servers(doc)?
        .get_mut(name)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| EditError::Invalid(format!("there is no server '{name}'")))?;
    if enabled {
        entry.shift_remove("disabled");
    } else {
        entry.insert("disabled".into(), Value::Bool(true));
    }
    Ok(())
}

/// Server `name`'s `sandbox` object, made when it has none; `None` when it is `"off"`.
fn sandbox_of<'a>(
    doc: &'a mut Map<String, Value>,
    name: &str,
) -> Result<Option<&'a mut Map<String, Value>>, EditError> {
    let entry = servers(doc)?
        .get_mut(name)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| EditError::Invalid(format!("there is no server '{name}'")))?;
    Ok(entry
        .entry("sandbox")
        .or_insert_with(|| Value::Object(Map::new()))
        .as_object_mut())
}

/// Lets server `name` reach `host` (`api.github.com`, `host:port`): adds it to its network
/// allow-list, making one if its network is off. Nothing else of the entry changes; a server
/// whose network is open, or that runs unconfined, reaches it already and is left as it is.
pub fn allow_host(doc: &mut Map<String, Value>, name: &str, host: &str) -> Result<(), EditError> {
    let host = host.trim();
    let valid = !host.is_empty()
        && host.chars().all(|c| {
            c.is_ascii_alphanumeric() || matches!(c, '.' | '-' | ':' | '_' | '*' | '[' | ']')
        });
    if !valid {
        return Err(EditError::Invalid(format!(
            "'{host}' is not a host: write host, *.domain or host:port"
        )));
    }
    let Some(sandbox) = sandbox_of(doc, name)? else {
        return Ok(()); // "off": unconfined, it reaches every host
    };
    match sandbox.get_mut("network") {
        Some(Value::String(all)) if all == "all" => {}
        Some(Value::Object(network)) => match network.get_mut("allow") {
            Some(Value::Array(list)) => {
                if !list.iter().any(|h| h.as_str() == Some(host)) {
                    list.push(Value::String(host.to_owned()));
                }
            }
            _ => {
                return Err(EditError::Invalid(format!(
                    "the \"network\" of '{name}' is not an allow-list; fix it in config.json"
                )));
            }
        },
        // Off, or not said (off by default).
        _ => {
            sandbox.insert("network".into(), serde_json::json!({ "allow": [host] }));
        }
    }
    Ok(())
}

/// Lets server `name` read (or read and write) `path`: added to its sandbox's `read` (or
/// `write`). Nothing else of the entry changes; an unconfined server is left as it is.
pub fn allow_path(
    doc: &mut Map<String, Value>,
    name: &str,
    path: &str,
    write: bool,
) -> Result<(), EditError> {
    if !(path.starts_with('/') || path.starts_with("~/")) {
        return Err(EditError::Invalid(format!(
            "'{path}' is not an absolute path"
        )));
    }
    let Some(sandbox) = sandbox_of(doc, name)? else {
        return Ok(()); // "off": unconfined, it reaches every path
    };
    let key = if write { "write" } else { "read" };
    match sandbox
        .entry(key)
        .or_insert_with(|| Value::Array(Vec::new()))
    {
        Value::Array(list) => {
            if !list.iter().any(|p| p.as_str() == Some(path)) {
                list.push(Value::String(path.to_owned()));
            }
            Ok(())
        }
        _ => Err(EditError::Invalid(format!(
            "the \"{key}\" of '{name}' is not a list; fix it in config.json"
        ))),
    }
}

/// The `roots` of the document.
pub fn roots(doc: &Map<String, Value>) -> Result<Vec<RootEntry>, EditError> {
    match doc.get("roots") {
        None => Ok(Vec::new()),
        Some(v) => serde_json::from_value(v.clone())
            .map_err(|e| EditError::Invalid(format!("\"roots\" is not a list of roots: {e}"))),
    }
}

/// Replaces the `roots` of the document (the first writable one is the default directory).
pub fn set_roots(doc: &mut Map<String, Value>, roots: &[RootEntry]) -> Result<(), EditError> {
    let value = serde_json::to_value(roots).map_err(|e| EditError::Invalid(e.to_string()))?;
    match doc.get_mut("roots") {
        Some(slot) => *slot = value,
        // A new key goes first, where people look for it.
        None => {
            doc.shift_insert(0, "roots".into(), value);
        }
    }
    Ok(())
}

/// Turns one tool of `server` on or off (its `disabledTools`; an `enabledTools` allow-list gets
/// the tool added or removed too).
pub fn set_tool_enabled(
    doc: &mut Map<String, Value>,
    server: &str,
    tool: &str,
    enabled: bool,
) -> Result<(), EditError> {
    let entry = servers(doc)?
        .get_mut(server)
        .and_then(Value::as_object_mut)
        .ok_or_else(|| EditError::Invalid(format!("there is no server '{server}'")))?;
    let mut disabled: Vec<Value> = entry
        .get("disabledTools")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    disabled.retain(|t| t.as_str() != Some(tool));
    if !enabled {
        disabled.push(Value::String(tool.to_owned()));
    }
    if disabled.is_empty() {
        entry.shift_remove("disabledTools");
    } else {
        entry.insert("disabledTools".into(), Value::Array(disabled));
    }
    if let Some(Value::Array(allowed)) = entry.get_mut("enabledTools") {
        allowed.retain(|t| t.as_str() != Some(tool));
        if enabled {
            allowed.push(Value::String(tool.to_owned()));
        }
    }
    Ok(())
}

/// Where the configuration files already upgraded for confinement are listed.
const SANDBOX_UPGRADED: &str = "sandbox-upgraded";

/// Once per configuration file (listed in `<data>/sandbox-upgraded`), and only where an Offload
/// from before confinement ran — it left its data directory but no such list, which every
/// Offload since writes —: the stdio servers the file held then get `"sandbox": {"network":
/// "all"}`, so what worked keeps working (their files are confined from then on; the app offers
/// to close the network). A new user's files, hand-written or named with `--config`, and
/// entries added later, get the defaults. Answers the names upgraded; a file that does not
/// parse is left alone and tried again next time.
pub fn upgrade_for_sandbox(path: &Path, data_dir: &Path) -> Result<Vec<String>, EditError> {
    let marker = data_dir.join(SANDBOX_UPGRADED);
    // The file's real path; a file not made yet, by its directory's.
    let key = std::fs::canonicalize(path)
        .ok()
        .or_else(|| {
            let dir = std::fs::canonicalize(path.parent()?).ok()?;
            Some(dir.join(path.file_name()?))
        })
        .unwrap_or_else(|| path.to_owned())
        .display()
        .to_string();
    let done = std::fs::read_to_string(&marker).unwrap_or_default();
    if done.lines().any(|l| l == key) {
        return Ok(Vec::new());
    }
    let ran_before_confinement =
        !marker.exists() && std::fs::read_dir(data_dir).is_ok_and(|mut d| d.next().is_some());
    let text = if ran_before_confinement {
        read_text(path)?
    } else {
        String::new()
    };
    let before_confinement = |doc: &Map<String, Value>| -> Vec<String> {
        let servers = doc
            .get("mcpServers")
            .or_else(|| doc.get("servers"))
            .and_then(Value::as_object);
        servers
            .into_iter()
            .flatten()
            .filter(|(_, e)| {
                e.get("command").is_some_and(Value::is_string) && e.get("sandbox").is_none()
            })
            .map(|(name, _)| name.clone())
            .collect()
    };
    let waiting = if text.trim().is_empty() {
        Vec::new()
    } else {
        match serde_json::from_str::<Value>(&text) {
            Ok(Value::Object(doc)) => before_confinement(&doc),
            _ => {
                return Err(EditError::Invalid(format!(
                    "{} is not a JSON object",
                    path.display()
                )));
            }
        }
    };
    let upgraded = if waiting.is_empty() {
        Vec::new()
    } else {
        edit(path, |doc| {
            let names = before_confinement(doc);
            let servers = servers(doc)?;
            for name in &names {
                if let Some(Value::Object(entry)) = servers.get_mut(name) {
                    entry.insert("sandbox".into(), serde_json::json!({"network": "all"}));
                }
            }
            Ok(names)
        })?
    };
    std::fs::create_dir_all(data_dir)
        .and_then(|()| {
            use std::io::Write;
            let mut f = std::fs::OpenOptions::new()
                .create(true)
                .append(true)
                .open(&marker)?;
            writeln!(f, "{key}")
        })
        .map_err(|source| EditError::Write {
            path: marker,
            source,
        })?;
    Ok(upgraded)
}
