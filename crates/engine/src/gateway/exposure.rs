//! Which upstream tools a client sees as tools of their own, and under which names.
//!
//! `direct`: every enabled upstream tool is listed as `<server>__<tool>` (see `names`) beside
//! Offload's storage and file tools; `meta`: Offload's eleven tools only, upstream tools through
//! `call_tool`; `auto`: direct while the enabled upstream tools number at most `directLimit`.
//! Per server, `expose: false` keeps it behind `call_tool`, `disabledTools` hides tools
//! everywhere, `enabledTools` is an allow-list, `prefix` names its tools. Pure: it decides from
//! the configuration and the tool lists it is given.

use rmcp::model::Tool;
use serde::Serialize;

use super::names;
pub use crate::config::{Expose, Prefix};

/// The mode in effect for a session.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Mode {
    Direct,
    Meta,
}

/// One server's tools and how it wants them shown.
pub struct ServerInput<'a> {
    pub name: &'a str,
    pub tools: &'a [Tool],
    /// `expose: false` keeps the server behind `call_tool`.
    pub expose: bool,
    pub prefix: Prefix,
    pub disabled_tools: &'a [String],
    pub enabled_tools: Option<&'a [String]>,
    /// While it starts (no tools listed yet): the tools it listed last time (from the pins),
    /// so that `auto` decides from what is known rather than from who started first.
    pub expected: &'a [String],
}

impl ServerInput<'_> {
    /// Whether `tool` may be used at all (listing and calling, in every mode).
    pub fn allows(&self, tool: &str) -> bool {
        !self.disabled_tools.iter().any(|t| t == tool)
            && self
                .enabled_tools
                .is_none_or(|allowed| allowed.iter().any(|t| t == tool))
    }
}

/// An upstream tool listed under a name of Offload's.
#[derive(Debug, Clone)]
pub struct Exposed {
    pub name: String,
    pub server: String,
    pub tool: Tool,
}

/// What a session shows, and why.
#[derive(Debug, Clone)]
pub struct Exposure {
    pub mode: Mode,
    /// In words, for the app and the log (`auto`: why it chose).
    pub why: String,
    pub tools: Vec<Exposed>,
    /// Tools that could not be listed under a name of their own, and why.
    pub skipped: Vec<String>,
}

impl Exposure {
    /// The upstream tool behind an exposed name.
    pub fn find(&self, name: &str) -> Option<&Exposed> {
        self.tools.iter().find(|e| e.name == name)
    }
}

/// Decides the mode and the exposed tools. `own` are Offload's own tool names in direct mode
/// (an upstream tool never takes one of them).
pub fn decide(
    expose: Expose,
    direct_limit: usize,
    servers: &[ServerInput<'_>],
    own: &[&str],
) -> Exposure {
    let candidates: Vec<(&ServerInput<'_>, &Tool)> = servers
        .iter()
        .filter(|s| s.expose)
        .flat_map(|s| {
            s.tools
                .iter()
                .filter(|t| s.allows(&t.name))
                .map(move |t| (s, t))
        })
        .collect();
    // Servers still starting count with the tools they listed last time.
    let starting: Vec<&ServerInput<'_>> = servers
        .iter()
        .filter(|s| s.expose && s.tools.is_empty() && !s.expected.is_empty())
        .collect();
    let expected: usize = starting
        .iter()
        .map(|s| s.expected.iter().filter(|t| s.allows(t)).count())
        .sum();
    let count = candidates.len() + expected;
    let known = if starting.is_empty() {
        format!("{count} upstream tools")
    } else {
        format!(
            "{count} upstream tools ({expected} of them on {}, still starting, as they were last time)",
            starting
                .iter()
                .map(|s| s.name)
                .collect::<Vec<_>>()
                .join(", ")
        )
    };
    let (mode, why) = match expose {
        Expose::Direct => (Mode::Direct, "direct (configured)".to_owned()),
        Expose::Meta => (Mode::Meta, "meta (configured)".to_owned()),
        Expose::Auto if count <= direct_limit => (
            Mode::Direct,
            format!(
                "auto: {known}, at most {direct_limit} (\"directLimit\"), so each is listed as a tool"
            ),
        ),
        Expose::Auto => (
            Mode::Meta,
            format!(
                "auto: {known}, more than {direct_limit} (\"directLimit\"), so they are found with list_available_tools"
            ),
        ),
    };
    let mut exposure = Exposure {
        mode,
        why,
        tools: Vec::new(),
        skipped: Vec::new(),
    };
    if mode == Mode::Meta {
        return exposure;
    }
    // Names in order: first come, first served; a clash is resolved with a stable hash (or,
    // for a server's own names, by not listing the later tool).
    let mut taken: Vec<String> = own.iter().map(|s| (*s).to_owned()).collect();
    for (server, tool) in candidates {
        let wanted = names::exposed(server.name, &tool.name, &server.prefix);
        let name = if !taken.contains(&wanted) {
            wanted
        } else if server.prefix == Prefix::None {
            exposure.skipped.push(format!(
                "{}/{}: its name is taken by another tool (\"prefix\": false); reach it through call_tool or give the server a prefix",
                server.name, tool.name
            ));
            continue;
        } else {
            names::hashed(&wanted, server.name, &tool.name)
        };
        if taken.contains(&name) {
            exposure
                .skipped
                .push(format!("{}/{}: no free name", server.name, tool.name));
            continue;
        }
        taken.push(name.clone());
        exposure.tools.push(Exposed {
            name,
            server: server.name.to_owned(),
            tool: tool.clone(),
        });
    }
    exposure
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc;

    fn tools(names: &[&str]) -> Vec<Tool> {
        names
            .iter()
            .map(|n| {
                Tool::new(
                    (*n).to_owned(),
                    "d".to_owned(),
                    Arc::new(Default::default()),
                )
            })
            .collect()
    }

    fn input<'a>(name: &'a str, tools: &'a [Tool], prefix: Prefix) -> ServerInput<'a> {
        ServerInput {
            name,
            tools,
            expose: true,
            prefix,
            disabled_tools: &[],
            enabled_tools: None,
            expected: &[],
        }
    }

    #[test]
    fn auto_chooses_by_the_count_and_says_why() {
        let a = tools(&["one", "two"]);
        let servers = [input("a", &a, Prefix::Server)];
        let e = decide(Expose::Auto, 2, &servers, &[]);
        assert_eq!(e.mode, Mode::Direct);
        assert!(e.why.contains("2 upstream tools"), "{}", e.why);
        let names: Vec<&str> = e.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["a__one", "a__two"]);
        let e = decide(Expose::Auto, 1, &servers, &[]);
        assert_eq!(e.mode, Mode::Meta);
        assert!(e.tools.is_empty());
        assert_eq!(decide(Expose::Direct, 1, &servers, &[]).tools.len(), 2);
    }

    /// A server still starting counts with the tools it listed last time, so the mode does
    /// not flip when it is ready (its turned-off tools do not count).
    #[test]
    fn auto_counts_servers_still_starting_as_they_were() {
        let a = tools(&["one", "two"]);
        let before = ["x".to_owned(), "y".to_owned(), "off".to_owned()];
        let off = ["off".to_owned()];
        let mut slow = input("slow", &[], Prefix::Server);
        slow.expected = &before;
        slow.disabled_tools = &off;
        let servers = [input("a", &a, Prefix::Server), slow];
        let e = decide(Expose::Auto, 3, &servers, &[]);
        assert_eq!(e.mode, Mode::Meta, "{}", e.why);
        assert!(
            e.why
                .contains("4 upstream tools (2 of them on slow, still starting"),
            "{}",
            e.why
        );
        let e = decide(Expose::Auto, 4, &servers, &[]);
        assert_eq!(e.mode, Mode::Direct);
        // Only what is listed is exposed.
        assert_eq!(e.tools.len(), 2);
    }

    #[test]
    fn filters_prefixes_and_collisions() {
        let a = tools(&["read", "write", "exec"]);
        let b = tools(&["read", "read_file"]);
        let mut first = input("a", &a, Prefix::None);
        first.disabled_tools = &[];
        let allow = ["read".to_owned(), "write".to_owned()];
        first.enabled_tools = Some(&allow);
        let deny = ["read".to_owned()];
        let mut second = input("b", &b, Prefix::None);
        second.disabled_tools = &deny;
        let e = decide(Expose::Direct, 40, &[first, second], &["read_file"]);
        let names: Vec<&str> = e.tools.iter().map(|t| t.name.as_str()).collect();
        assert_eq!(names, ["read", "write"], "{:?}", e.skipped);
        assert_eq!(
            e.skipped.len(),
            1,
            "b's read_file clashes with Offload's own: {:?}",
            e.skipped
        );
        // With prefixes, a clash gets a hashed name instead.
        let c = tools(&["x"]);
        let d = tools(&["x"]);
        let e = decide(
            Expose::Direct,
            40,
            &[
                input("s", &c, Prefix::Custom("p".into())),
                input("t", &d, Prefix::Custom("p".into())),
            ],
            &[],
        );
        assert_eq!(e.tools[0].name, "p__x");
        assert!(e.tools[1].name.starts_with("p__x_") && names::valid(&e.tools[1].name));
        assert_eq!(e.find("p__x").unwrap().server, "s");
    }
}
