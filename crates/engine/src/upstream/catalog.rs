//! Each server's last tool list, remembered across restarts (`catalog.json` in the data
//! directory), so the first `tools/list` of a session answers at once with every server's
//! tools — as a direct connection would after waiting for its server — while the servers are
//! still starting. A remembered list belongs to what the server is (its command, arguments and
//! URL): a server whose entry now starts something else remembers nothing. It is shown only
//! until the server lists its tools itself; a stale one is corrected then (the pool's change
//! signal, and so each client's `list_changed`). Several Offload processes share the file: a
//! save reads it again and changes only the one server's entry.
//!
//! Must never: hold anything but tool definitions (no arguments, answers or secrets: the
//! entry's environment and headers are not part of the key), or fail a start or a listing.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};

use rmcp::model::Tool;
use serde::{Deserialize, Serialize};

use crate::config::ServerEntry;

/// What the catalog keeps of one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
struct Remembered {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    command: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    args: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    url: Option<String>,
    tools: Vec<Tool>,
}

impl Remembered {
    fn is_for(&self, entry: &ServerEntry) -> bool {
        self.command == entry.command && self.args == entry.args && self.url == entry.url
    }
}

#[derive(Debug, Default, Serialize, Deserialize)]
struct File {
    #[serde(default)]
    servers: BTreeMap<String, Remembered>,
}

/// The remembered tool lists of every server, by name.
#[derive(Default)]
pub struct Catalog {
    /// `None` until the engine says where the data directory is (tests of the pool alone, and
    /// *Test connection*, remember nothing).
    path: Mutex<Option<PathBuf>>,
    known: Mutex<BTreeMap<String, Arc<Remembered>>>,
    /// Held while the file is read, changed and written: servers listed together save one
    /// after the other, each keeping the others'.
    saving: Arc<Mutex<()>>,
}

impl Catalog {
    /// Reads the catalog kept at `path` (a missing or damaged file remembers nothing).
    pub fn open(&self, path: PathBuf) {
        let file = read(&path);
        *self.known.lock().unwrap_or_else(|p| p.into_inner()) = file
            .servers
            .into_iter()
            .map(|(name, r)| (name, Arc::new(r)))
            .collect();
        *self.path.lock().unwrap_or_else(|p| p.into_inner()) = Some(path);
    }

    /// The tools `name` listed last time, when it is still the same server.
    pub fn tools(&self, name: &str, entry: &ServerEntry) -> Option<Vec<Tool>> {
        let known = self.known.lock().unwrap_or_else(|p| p.into_inner());
        let r = known.get(name)?;
        r.is_for(entry).then(|| r.tools.clone())
    }

    /// Remembers what `name` just listed (written on a blocking task; nothing when unchanged).
    pub fn remember(&self, name: &str, entry: &ServerEntry, tools: &[Tool]) {
        let r = Remembered {
            command: entry.command.clone(),
            args: entry.args.clone(),
            url: entry.url.clone(),
            tools: tools.to_vec(),
        };
        {
            let mut known = self.known.lock().unwrap_or_else(|p| p.into_inner());
            if known.get(name).is_some_and(|old| **old == r) {
                return;
            }
            known.insert(name.to_owned(), Arc::new(r.clone()));
        }
        let Some(path) = self.path.lock().unwrap_or_else(|p| p.into_inner()).clone() else {
            return;
        };
        let name = name.to_owned();
        let saving = self.saving.clone();
        let save = move || {
            rewrite(&saving, &path, |file| {
                file.servers.insert(name, r);
            })
        };
        match tokio::runtime::Handle::try_current() {
            Ok(rt) => drop(rt.spawn_blocking(save)),
            Err(_) => save(),
        }
    }

    /// Forgets `name` (a server removed from the configuration).
    pub fn forget(&self, name: &str) {
        if self
            .known
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .remove(name)
            .is_none()
        {
            return;
        }
        let Some(path) = self.path.lock().unwrap_or_else(|p| p.into_inner()).clone() else {
            return;
        };
        rewrite(&self.saving, &path, |file| {
            file.servers.remove(name);
        });
    }
}

/// Reads the file again (another process may have saved its servers meanwhile), changes it
/// and writes it whole, one rewrite at a time in this process.
fn rewrite(saving: &Mutex<()>, path: &std::path::Path, change: impl FnOnce(&mut File)) {
    let _one_at_a_time = saving.lock().unwrap_or_else(|p| p.into_inner());
    let mut file = read(path);
    change(&mut file);
    let written = crate::whole_file::replace(path, |w| {
        serde_json::to_writer(w, &file).map_err(std::io::Error::other)
    });
    if let Err(e) = written {
        tracing::warn!(
            "the tool catalog could not be saved to {}: {e}",
            path.display()
        );
    }
}

fn read(path: &std::path::Path) -> File {
    match std::fs::read(path) {
        Ok(bytes) => serde_json::from_slice(&bytes).unwrap_or_else(|e| {
            tracing::warn!(
                "the tool catalog {} is damaged ({e}): starting afresh",
                path.display()
            );
            File::default()
        }),
        Err(_) => File::default(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tool(name: &str) -> Tool {
        serde_json::from_value(serde_json::json!({
            "name": name, "description": "d", "inputSchema": {"type": "object"}
        }))
        .unwrap()
    }

    fn entry(command: &str) -> ServerEntry {
        ServerEntry {
            command: Some(command.into()),
            args: vec!["a".into()],
            ..ServerEntry::default()
        }
    }

    #[test]
    fn a_list_is_remembered_across_processes_for_the_same_server_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.json");
        let one = Catalog::default();
        one.open(path.clone());
        one.remember("a", &entry("x"), &[tool("t1"), tool("t2")]);
        one.remember("b", &entry("y"), &[tool("u")]);

        let two = Catalog::default();
        two.open(path.clone());
        let names = |c: &Catalog, s: &str, e: &ServerEntry| {
            c.tools(s, e)
                .map(|t| t.iter().map(|t| t.name.to_string()).collect::<Vec<_>>())
        };
        assert_eq!(names(&two, "a", &entry("x")).unwrap(), ["t1", "t2"]);
        // The same name now starting another program: nothing remembered.
        assert_eq!(names(&two, "a", &entry("other")), None);
        assert_eq!(names(&two, "c", &entry("x")), None);

        // A second process saves one server without losing the first's others.
        two.remember("b", &entry("y"), &[tool("u"), tool("v")]);
        one.forget("a");
        let three = Catalog::default();
        three.open(path.clone());
        assert_eq!(names(&three, "a", &entry("x")), None);
        assert_eq!(names(&three, "b", &entry("y")).unwrap(), ["u", "v"]);
    }

    #[test]
    fn servers_listed_together_are_all_remembered() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.json");
        let c = Arc::new(Catalog::default());
        c.open(path.clone());
        let threads: Vec<_> = (0..8)
            .map(|i| {
                let c = c.clone();
                std::thread::spawn(move || {
                    c.remember(&format!("s{i}"), &entry("x"), &[tool("t")]);
                })
            })
            .collect();
        for t in threads {
            t.join().unwrap();
        }
        let again = Catalog::default();
        again.open(path);
        for i in 0..8 {
            assert!(again.tools(&format!("s{i}"), &entry("x")).is_some(), "s{i}");
        }
    }

    #[test]
    fn a_damaged_catalog_remembers_nothing_and_is_written_anew() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("catalog.json");
        std::fs::write(&path, b"{\"servers\": [not json").unwrap();
        let c = Catalog::default();
        c.open(path.clone());
        assert_eq!(c.tools("a", &entry("x")), None);
        c.remember("a", &entry("x"), &[tool("t")]);
        let again = Catalog::default();
        again.open(path);
        assert_eq!(again.tools("a", &entry("x")).unwrap().len(), 1);
    }
}
