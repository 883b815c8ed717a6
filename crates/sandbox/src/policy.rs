//! What one server may touch, resolved to paths: the engine turns a server's entry, the allowed
//! roots and the runtime's needs into this; the launcher applies it.

use std::path::PathBuf;

use serde::{Deserialize, Serialize};

/// A server's confinement.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Policy {
    /// Read (and execute) beneath these paths.
    #[serde(default)]
    pub read: Vec<PathBuf>,
    /// Read, write, create, rename and remove beneath these paths.
    #[serde(default)]
    pub write: Vec<PathBuf>,
    #[serde(default)]
    pub network: Network,
    /// Named unix sockets may be created and connected to (an ssh-agent, the session bus):
    /// off unless asked for, since a socket is a door to whatever listens on it.
    #[serde(default)]
    pub unix_sockets: bool,
    #[serde(default)]
    pub limits: Limits,
    /// Paths inside `write` grants kept read-only (a repository's `.git/hooks`): read-only bind
    /// mounts in a mount namespace of the server's own, where one can be made (see
    /// [`crate::Confined::read_only_held`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub read_only: Vec<PathBuf>,
    /// Folders the server sees through a directory of its own: where the user named a file in a
    /// folder the server may not write (the home folder, `/tmp`), the server saves it there —
    /// a temporary file renamed over it, a journal, a WAL — without reaching the folder's other
    /// contents. In a mount namespace of its own, each `private` directory is mounted over its
    /// `folder`, the grants beneath the folder are mounted back at their places (read grants
    /// read-only), and the folder is granted for writing: what the server makes there stays in
    /// `private` (the engine links the named file back). Where no mount namespace can be made,
    /// nothing is mounted or granted (see [`crate::Confined::private_folders_held`]).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub private_folders: Vec<PrivateFolder>,
    /// No new processes and no programs run: threads only (a script worker; a server would
    /// not start with this).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub no_new_processes: bool,
}

/// A folder the server sees as a directory of its own (see [`Policy::private_folders`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PrivateFolder {
    /// Where the server sees it.
    pub folder: PathBuf,
    /// What it sees there.
    pub private: PathBuf,
}

/// What a server may use, held by rlimits; `None`: no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Limits {
    /// Bytes of memory it may allocate (`RLIMIT_DATA`: its heap and private mappings).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory: Option<u64>,
    /// Processes and threads it may run at once. Counted in a user namespace of its own, so
    /// only its own count (where user namespaces work and Offload is not root: root is never
    /// held by this limit; see [`crate::Support::process_limits`]).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub processes: Option<u64>,
}

impl Limits {
    /// What a server gets unless its entry says otherwise: half the machine's memory, and
    /// 1024 processes and threads (a fork bomb stops there).
    pub fn default_for_servers() -> Limits {
        Limits {
            memory: crate::physical_memory().map(|m| m / 2),
            processes: Some(1024),
        }
    }
}

/// Where a server may connect.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Network {
    /// No IP sockets at all (TCP, UDP, raw).
    #[default]
    Off,
    /// Anywhere.
    All,
    /// TCP connections to these ports only; no UDP.
    Ports(Vec<u16>),
    /// Only Offload's egress proxy, which holds the server to its allow-list. Where a network
    /// namespace can be made, the server gets one of its own, with nothing in it but loopback
    /// and, on `port`, a relay to the proxy's unix `socket`: no address outside is reachable,
    /// whatever the server does. Elsewhere, TCP to `port` only — which the same port on another
    /// address also satisfies (see [`crate::Confined::network_namespace`]).
    Proxy { port: u16, socket: PathBuf },
}

impl Policy {
    /// The policy as the launcher's argument.
    pub fn to_json(&self) -> String {
        serde_json::to_string(self).expect("a policy serialises")
    }

    pub fn from_json(text: &str) -> Result<Self, crate::SandboxError> {
        serde_json::from_str(text)
            .map_err(|e| crate::SandboxError::Invalid(format!("not a sandbox policy: {e}")))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_policy_goes_to_the_launcher_and_back_unchanged() {
        let policy = Policy {
            read: vec!["/usr".into()],
            write: vec!["/tmp/state".into()],
            network: Network::Ports(vec![8080]),
            unix_sockets: false,
            limits: Limits {
                memory: Some(1 << 30),
                processes: None,
            },
            read_only: vec!["/srv/repo/.git/hooks".into()],
            private_folders: vec![PrivateFolder {
                folder: "/home/me".into(),
                private: "/tmp/state/beside/home/me".into(),
            }],
            no_new_processes: true,
        };
        assert_eq!(Policy::from_json(&policy.to_json()).unwrap(), policy);
        let proxied = Policy {
            network: Network::Proxy {
                port: 3128,
                socket: "/tmp/egress.sock".into(),
            },
            ..Policy::default()
        };
        assert_eq!(Policy::from_json(&proxied.to_json()).unwrap(), proxied);
        assert_eq!(Policy::from_json("{}").unwrap().network, Network::Off);
        assert!(
            Policy::from_json(r#"{"raed": []}"#).is_err(),
            "typos are refused"
        );
    }
}
