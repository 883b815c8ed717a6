//! Desktop notifications for what needs the user: a server that stopped working, a tool held
//! for review, a server to sign in to. Off unless `"notifications": true` is in `config.json`
//! (the app's switch writes it).
//!
//! [`Notices`] compares one [`Look`] at the servers with the next and says what is new. Each
//! thing is said once: a crash-looping server is reported when it first fails, not on every
//! retry, and again only after it has worked (or been turned off) in between. What is already
//! so when the app starts is not announced: the tray and the window show it.

use std::collections::{BTreeMap, BTreeSet};

use crate::Engine;
use crate::upstream::ServerState;

use super::edit::{ControlError, edit_config};

/// One look at what can need the user.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Look {
    /// Each server: its name, state and last error.
    pub servers: Vec<(String, ServerState, Option<String>)>,
    /// Tools held for review: (server, tool).
    pub held: Vec<(String, String)>,
}

impl Look {
    pub fn of(engine: &Engine) -> Self {
        Self {
            servers: engine
                .pool
                .servers()
                .iter()
                .map(|s| {
                    let status = s.status();
                    (s.name().to_owned(), status.status, status.error)
                })
                .collect(),
            held: crate::available::held_tools(engine),
        }
    }
}

/// A notification to show.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Notice {
    pub title: String,
    pub body: String,
}

/// Past this many at once they are said in one notification.
const AT_ONCE: usize = 3;

/// What has been said, to say only what is new.
#[derive(Debug, Default)]
pub struct Notices {
    started: bool,
    down: BTreeSet<String>,
    signing: BTreeSet<String>,
    held: BTreeSet<(String, String)>,
}

impl Notices {
    /// What `look` shows that needs the user and was not said before.
    pub fn changes(&mut self, look: &Look) -> Vec<Notice> {
        let first = !std::mem::replace(&mut self.started, true);
        let mut out = Vec::new();
        for (name, state, error) in &look.servers {
            match state {
                ServerState::Error => {
                    let news = self.down.insert(name.clone());
                    if news && !first {
                        out.push(Notice {
                            title: format!("{name} stopped working"),
                            body: format!(
                                "{}Offload tries it again; its output is in Servers.",
                                error
                                    .as_deref()
                                    .map(|e| format!("{}. ", first_line(e)))
                                    .unwrap_or_default()
                            ),
                        });
                    }
                }
                // Working again, or turned off: a later failure is news again.
                ServerState::Ready | ServerState::Disabled => {
                    self.down.remove(name);
                }
                _ => {}
            }
            if *state == ServerState::SignInRequired {
                if self.signing.insert(name.clone()) && !first {
                    out.push(Notice {
                        title: format!("Sign in to {name}"),
                        body: format!(
                            "{name}'s tools can be used once you sign in: in Servers, or from the tray menu."
                        ),
                    });
                }
            } else {
                self.signing.remove(name);
            }
        }
        let servers: BTreeSet<&str> = look.servers.iter().map(|(n, ..)| n.as_str()).collect();
        self.down.retain(|n| servers.contains(n.as_str()));
        self.signing.retain(|n| servers.contains(n.as_str()));

        let now: BTreeSet<(String, String)> = look.held.iter().cloned().collect();
        let mut new: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
        for (server, tool) in now.difference(&self.held) {
            new.entry(server).or_default().push(tool);
        }
        if !first {
            for (server, tools) in new {
                out.push(Notice {
                    title: match tools.len() {
                        1 => format!("{server} changed its tool {}", tools[0]),
                        n => format!("{server} changed {n} tools"),
                    },
                    body: format!(
                        "Held until you review the change in Servers: {}.",
                        tools.join(", ")
                    ),
                });
            }
        }
        self.held = now;

        if out.len() > AT_ONCE {
            let body = out
                .iter()
                .map(|n| n.title.as_str())
                .collect::<Vec<_>>()
                .join("; ");
            out = vec![Notice {
                title: format!("{} things need you in Offload", out.len()),
                body,
            }];
        }
        out
    }
}

fn first_line(text: &str) -> &str {
    let line = text.lines().next().unwrap_or_default().trim();
    line.strip_suffix('.').unwrap_or(line)
}

/// Whether desktop notifications are on (`notifications` in `config.json`; off by default).
pub fn notifications(engine: &Engine) -> bool {
    engine.config().notifications.unwrap_or(false)
}

/// Turns desktop notifications on or off; written to `config.json` (absent when off).
pub async fn set_notifications(engine: &Engine, on: bool) -> Result<(), ControlError> {
    edit_config(engine, |doc| {
        if on {
            doc.insert("notifications".into(), true.into());
        } else {
            doc.remove("notifications");
        }
        Ok(())
    })
    .await
}

#[cfg(test)]
mod tests {
    use super::*;

    fn look(servers: &[(&str, ServerState)], held: &[(&str, &str)]) -> Look {
        Look {
            servers: servers
                .iter()
                .map(|(n, s)| {
                    let error =
                        (*s == ServerState::Error).then(|| "exited with code 1.\nmore".into());
                    (n.to_string(), *s, error)
                })
                .collect(),
            held: held
                .iter()
                .map(|(s, t)| (s.to_string(), t.to_string()))
                .collect(),
        }
    }

    fn titles(notices: Vec<Notice>) -> Vec<String> {
        notices.into_iter().map(|n| n.title).collect()
    }

    #[test]
    fn a_crash_loop_is_said_once_until_the_server_works_again() {
        use ServerState::*;
        let mut n = Notices::default();
        assert!(n.changes(&look(&[("crm", Starting)], &[])).is_empty());
        let said = n.changes(&look(&[("crm", Error)], &[]));
        assert_eq!(said.len(), 1);
        assert_eq!(said[0].title, "crm stopped working");
        assert_eq!(
            said[0].body,
            "exited with code 1. Offload tries it again; its output is in Servers."
        );
        // Retried, failed again, and again: nothing new.
        for state in [Starting, Error, Starting, Error] {
            assert!(n.changes(&look(&[("crm", state)], &[])).is_empty());
        }
        // It worked, then failed: news again. Turned off and on, failing: news again.
        assert!(n.changes(&look(&[("crm", Ready)], &[])).is_empty());
        assert_eq!(
            titles(n.changes(&look(&[("crm", Error)], &[]))),
            ["crm stopped working"]
        );
        assert!(n.changes(&look(&[("crm", Disabled)], &[])).is_empty());
        assert_eq!(
            titles(n.changes(&look(&[("crm", Error)], &[]))),
            ["crm stopped working"]
        );
    }

    #[test]
    fn what_is_so_at_the_start_is_not_announced() {
        use ServerState::*;
        let mut n = Notices::default();
        let start = look(
            &[("crm", Error), ("cloud", SignInRequired)],
            &[("crm", "echo")],
        );
        assert!(n.changes(&start).is_empty());
        assert!(n.changes(&start).is_empty());
        // A server removed and added back failing is news.
        assert!(
            n.changes(&look(&[("cloud", SignInRequired)], &[]))
                .is_empty()
        );
        assert_eq!(
            titles(n.changes(&look(&[("crm", Error), ("cloud", SignInRequired)], &[]))),
            ["crm stopped working"]
        );
    }

    #[test]
    fn sign_ins_and_held_tools_are_said_when_they_become_so() {
        use ServerState::*;
        let mut n = Notices::default();
        assert!(
            n.changes(&look(&[("cloud", Ready), ("crm", Ready)], &[]))
                .is_empty()
        );
        let said = n.changes(&look(&[("cloud", SignInRequired), ("crm", Ready)], &[]));
        assert_eq!(titles(said.clone()), ["Sign in to cloud"]);
        assert!(said[0].body.contains("tray menu"));
        assert!(
            n.changes(&look(&[("cloud", SignInRequired)], &[]))
                .is_empty()
        );
        let said = n.changes(&look(
            &[("cloud", Ready), ("crm", Ready)],
            &[("crm", "echo"), ("crm", "sum")],
        ));
        assert_eq!(titles(said.clone()), ["crm changed 2 tools"]);
        assert_eq!(
            said[0].body,
            "Held until you review the change in Servers: echo, sum."
        );
        // Approved one, then the other changed again: news again for that one.
        assert!(
            n.changes(&look(&[("crm", Ready)], &[("crm", "sum")]))
                .is_empty()
        );
        assert_eq!(
            titles(n.changes(&look(&[("crm", Ready)], &[("crm", "echo"), ("crm", "sum")]))),
            ["crm changed its tool echo"]
        );
    }

    #[test]
    fn many_at_once_are_said_in_one() {
        use ServerState::*;
        let mut n = Notices::default();
        let names = ["a", "b", "c", "d", "e"];
        let ready: Vec<_> = names.iter().map(|s| (*s, Ready)).collect();
        let failing: Vec<_> = names.iter().map(|s| (*s, Error)).collect();
        assert!(n.changes(&look(&ready, &[])).is_empty());
        let said = n.changes(&look(&failing, &[]));
        assert_eq!(titles(said.clone()), ["5 things need you in Offload"]);
        assert!(
            said[0]
                .body
                .starts_with("a stopped working; b stopped working")
        );
    }
}
