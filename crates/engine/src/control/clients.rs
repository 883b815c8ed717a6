//! The Clients screen: connecting Offload to the MCP clients on this machine, and importing
//! their servers. Client files are changed in place (see [`crate::clients`]) after a backup.

use std::path::Path;

use serde::Serialize;

use super::edit::{ControlError, edit_config};
use crate::clients::{self, ClientView, ENTRY, Known, Machine};
use crate::config::{ServerEntry, edit};
use crate::{Engine, ErrorCode};

/// What a change to a client's file did.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ClientChange {
    /// The copy of the file as it was (none when there was no file).
    pub backup: Option<String>,
    pub client: ClientView,
}

/// An imported server, or one left out and why.
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Imported {
    pub name: String,
    /// `None` when imported; otherwise why not.
    pub skipped: Option<String>,
}

#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct ImportReport {
    pub servers: Vec<Imported>,
    /// Set when the imported servers were removed from the client.
    pub backup: Option<String>,
}

pub fn clients(machine: &Machine) -> Vec<ClientView> {
    clients::views(machine)
}

fn client(id: &str) -> Result<&'static Known, ControlError> {
    clients::known(id)
        .ok_or_else(|| ControlError::invalid(format!("Offload does not know the client '{id}'")))
}

fn unreadable(e: String) -> ControlError {
    ControlError::new(ErrorCode::ConfigInvalid, e)
}

fn write_failed(path: &Path, e: std::io::Error) -> ControlError {
    ControlError::new(
        ErrorCode::WriteFailed,
        format!("cannot write {}: {e}", path.display()),
    )
}

/// Adds Offload to the client as one stdio entry running `program mcp` (replacing the entry
/// that runs Offload already, whatever its name), keeping everything else in the file.
pub fn connect(
    machine: &Machine,
    id: &str,
    program: &Path,
    expose: Option<crate::gateway::Expose>,
) -> Result<ClientChange, ControlError> {
    let known = client(id)?;
    let (path, mut doc) = clients::read(machine, known).map_err(unreadable)?;
    let existing = doc
        .entries(known.shape)
        .into_iter()
        .find(|(_, e)| clients::is_offload(e))
        .map(|(name, _)| name);
    let name = existing.as_deref().unwrap_or(ENTRY);
    doc.put(known.shape, name, &clients::offload_entry(program, expose));
    let backup = clients::write(&path, &doc).map_err(|e| write_failed(&path, e))?;
    Ok(ClientChange {
        backup: backup.map(|b| b.display().to_string()),
        client: clients::view(machine, known),
    })
}

/// The text to paste into a client's configuration by hand (and Claude Code's command).
#[derive(Debug, Clone, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Snippet {
    pub text: String,
    pub command: Option<String>,
}

pub fn snippet(
    id: &str,
    program: &Path,
    expose: Option<crate::gateway::Expose>,
) -> Result<Snippet, ControlError> {
    let (text, command) = clients::snippet(client(id)?, program, expose);
    Ok(Snippet { text, command })
}

/// Removes every entry that runs Offload from the client.
pub fn disconnect(machine: &Machine, id: &str) -> Result<ClientChange, ControlError> {
    let known = client(id)?;
    let (path, mut doc) = clients::read(machine, known).map_err(unreadable)?;
    let ours: Vec<String> = doc
        .entries(known.shape)
        .into_iter()
        .filter(|(_, e)| clients::is_offload(e))
        .map(|(n, _)| n)
        .collect();
    let mut backup = None;
    if !ours.is_empty() {
        for name in &ours {
            doc.remove(known.shape, name);
        }
        backup = clients::write(&path, &doc).map_err(|e| write_failed(&path, e))?;
    }
    Ok(ClientChange {
        backup: backup.map(|b| b.display().to_string()),
        client: clients::view(machine, known),
    })
}

/// Copies the client's servers into Offload, skipping names Offload has and servers it runs
/// already. With `remove_from_client`, the imported entries leave the client (after a backup),
/// so the model does not see each tool twice.
pub async fn import_servers(
    engine: &Engine,
    machine: &Machine,
    id: &str,
    remove_from_client: bool,
) -> Result<ImportReport, ControlError> {
    let known = client(id)?;
    // The document is not kept across the config edit below (it is not Send); the client's
    // file is read again to remove what was imported.
    let entries = clients::read(machine, known)
        .map_err(unreadable)?
        .1
        .entries(known.shape);
    let ours = engine.config().mcp_servers.clone();
    let same = |a: &ServerEntry, b: &ServerEntry| {
        (a.command.is_some() && a.command == b.command && a.args == b.args)
            || (a.url.is_some() && a.url == b.url)
    };
    let mut report = Vec::new();
    let mut taking: Vec<(String, ServerEntry)> = Vec::new();
    // Entries Offload runs already (imported before): removing them from the client is what
    // stops the model from seeing their tools twice.
    let mut running_already: Vec<String> = Vec::new();
    for (name, value) in entries {
        if clients::is_offload(&value) {
            continue;
        }
        let skipped = match serde_json::from_value::<ServerEntry>(value) {
            Err(e) => Some(format!("its entry is not one Offload reads: {e}")),
            Ok(entry) => {
                if let Some((n, _)) = ours.iter().find(|(_, e)| same(e, &entry)) {
                    running_already.push(name.clone());
                    Some(format!("Offload runs it already as '{n}'"))
                } else if ours.iter().any(|(n, _)| *n == name)
                    || taking.iter().any(|(n, _)| *n == name)
                {
                    Some("Offload has a server of that name".to_owned())
                } else if let Err(e) = entry.transport(&name) {
                    Some(e.to_string())
                } else {
                    taking.push((name.clone(), entry));
                    None
                }
            }
        };
        report.push(Imported { name, skipped });
    }
    if !taking.is_empty() {
        let adding = taking.clone();
        edit_config(engine, move |doc| {
            for (name, entry) in &adding {
                edit::put_server(doc, None, name, entry)?;
            }
            Ok(())
        })
        .await?;
    }
    let mut backup = None;
    if remove_from_client && !(taking.is_empty() && running_already.is_empty()) {
        let (path, mut doc) = clients::read(machine, known).map_err(unreadable)?;
        for name in taking.iter().map(|(n, _)| n).chain(&running_already) {
            doc.remove(known.shape, name);
        }
        for imported in report
            .iter_mut()
            .filter(|i| running_already.contains(&i.name))
        {
            if let Some(why) = &mut imported.skipped {
                why.push_str("; removed from the client");
            }
        }
        backup = clients::write(&path, &doc)
            .map_err(|e| write_failed(&path, e))?
            .map(|b| b.display().to_string());
    }
    Ok(ImportReport {
        servers: report,
        backup,
    })
}
