//! The names upstream tools are exposed under: `<server>__<tool>` (or the server's `prefix`, or
//! the tool's own name with `"prefix": false`), within MCP's tool-name rule
//! `^[A-Za-z0-9_-]{1,64}$`. A name that would be longer, or that two tools would share, is
//! shortened with a short stable hash of the server and tool, so the same tool always gets the
//! same name.

use crate::config::Prefix;
use sha2::{Digest, Sha256};

/// The longest tool name MCP clients accept.
pub const MAX: usize = 64;

/// `text` with every character outside `[A-Za-z0-9_-]` replaced by `_`.
pub fn sanitize(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '_' || c == '-' {
                c
            } else {
                '_'
            }
        })
        .collect()
}

/// Six hex digits that stand for `server`/`tool`, always the same for the same pair.
pub fn short_hash(server: &str, tool: &str) -> String {
    let digest = Sha256::digest(format!("{server}\u{0}{tool}").as_bytes());
    hex::encode(&digest[..3])
}

/// The name `tool` of `server` is exposed under, before collisions are looked at: within the
/// rule, cut with a hash when it would be longer.
pub fn exposed(server: &str, tool: &str, prefix: &Prefix) -> String {
    let wanted = match prefix {
        Prefix::Server => format!("{}__{}", sanitize(server), sanitize(tool)),
        Prefix::Custom(p) => format!("{}__{}", sanitize(p), sanitize(tool)),
        Prefix::None => sanitize(tool),
    };
    if !wanted.is_empty() && wanted.len() <= MAX {
        return wanted;
    }
    hashed(&wanted, server, tool)
}

/// `name` cut to fit with `_<hash>` at its end.
pub fn hashed(name: &str, server: &str, tool: &str) -> String {
    let hash = short_hash(server, tool);
    let keep = MAX - hash.len() - 1;
    let head: String = name.chars().take(keep).collect();
    format!("{head}_{hash}")
}

/// Whether `name` follows MCP's tool-name rule.
#[cfg(test)]
pub fn valid(name: &str) -> bool {
    !name.is_empty()
        && name.len() <= MAX
        && name
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_follow_the_rule_and_are_stable() {
        assert_eq!(
            exposed("github", "search_issues", &Prefix::Server),
            "github__search_issues"
        );
        assert_eq!(
            exposed("my server", "get.thing", &Prefix::Server),
            "my_server__get_thing"
        );
        assert_eq!(
            exposed("github", "search", &Prefix::Custom("gh".into())),
            "gh__search"
        );
        assert_eq!(exposed("github", "search", &Prefix::None), "search");
        let long = exposed(
            "a-very-long-server-name-indeed",
            &"tool".repeat(20),
            &Prefix::Server,
        );
        assert!(valid(&long) && long.len() == MAX, "{long}");
        assert_eq!(
            long,
            exposed(
                "a-very-long-server-name-indeed",
                &"tool".repeat(20),
                &Prefix::Server
            )
        );
        assert_ne!(
            exposed(
                "a-very-long-server-name-indeed",
                &"tool".repeat(20),
                &Prefix::Server
            ),
            exposed(
                "a-very-long-server-name-indeed",
                &"tool".repeat(21),
                &Prefix::Server
            ),
            "different tools, different names"
        );
        assert!(valid(&exposed("s", "", &Prefix::None)));
        for name in ["", "a b", &"x".repeat(65), "ü"] {
            assert!(!valid(name), "{name}");
        }
    }
}
