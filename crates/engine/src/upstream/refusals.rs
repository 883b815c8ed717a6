//! What a confined server was refused, kept across its restarts for the app, which offers to
//! allow each: the hosts its network proxy turned away (see `egress`), and the paths it said it
//! could not open — read from its stderr, where runtimes name them (`EACCES: permission denied,
//! open '/path'`, `PermissionError: [Errno 13] Permission denied: '/path'`, `open /path:
//! permission denied`): Landlock refuses without telling anyone else.

use std::sync::Mutex;

use serde::Serialize;

/// How many refusals of each kind are kept (the oldest go first).
const KEPT: usize = 50;

#[derive(Debug, Default)]
pub struct Refusals {
    hosts: Mutex<Vec<Refusal>>,
    paths: Mutex<Vec<PathRefusal>>,
}

/// A host a server was refused, and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct Refusal {
    pub host: String,
    pub port: u16,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub times: u64,
}

/// A path a server said it was refused, and how often.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[cfg_attr(feature = "ts", derive(ts_rs::TS))]
pub struct PathRefusal {
    pub path: String,
    #[cfg_attr(feature = "ts", ts(type = "number"))]
    pub times: u64,
}

fn note<T>(
    kept: &Mutex<Vec<T>>,
    same: impl Fn(&T) -> bool,
    times: impl Fn(&mut T),
    new: impl FnOnce() -> T,
) {
    let mut kept = kept.lock().unwrap_or_else(|p| p.into_inner());
    if let Some(seen) = kept.iter_mut().find(|r| same(r)) {
        times(seen);
        return;
    }
    if kept.len() == KEPT {
        kept.remove(0);
    }
    kept.push(new());
}

impl Refusals {
    pub fn host(&self, host: &str, port: u16) {
        note(
            &self.hosts,
            |r| r.host == host && r.port == port,
            |r| r.times += 1,
            || Refusal {
                host: host.to_owned(),
                port,
                times: 1,
            },
        );
    }

    /// Notes the path a line of the server's stderr says it was refused, if it names one;
    /// whether it did.
    pub fn stderr_line(&self, line: &str) -> bool {
        let Some(path) = refused_path(line) else {
            return false;
        };
        note(
            &self.paths,
            |r| r.path == path,
            |r| r.times += 1,
            || PathRefusal {
                path: path.to_owned(),
                times: 1,
            },
        );
        true
    }

    /// The refused hosts, oldest first.
    pub fn hosts(&self) -> Vec<Refusal> {
        self.hosts.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The refused paths, oldest first.
    pub fn paths(&self) -> Vec<PathRefusal> {
        self.paths.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }
}

/// The absolute path a refusal on `line` names: quoted after the refusal (Node, Python), or
/// just before `: permission denied` (Go, C).
/// For a confined server that failed: the first path its stderr `lines` say it was refused,
/// with the entry change that allows it (what the app's *Allow* writes).
pub fn advice<'a>(lines: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let path = lines.into_iter().find_map(refused_path)?;
    Some(format!(
        "Offload confines this server and it was refused {path}: to allow it, add \"sandbox\": {{\"read\": [\"{path}\"]}} to its entry (\"write\" to write there)"
    ))
}

/// For a confined server whose proxy refused `host:port`: the entry change that allows it (a
/// bare host for HTTPS and HTTP, as the app's *Allow* writes).
pub fn host_advice(host: &str, port: u16) -> String {
    let allow = if matches!(port, 443 | 80) {
        host.to_owned()
    } else {
        format!("{host}:{port}")
    };
    format!(
        "Offload confines this server and its network proxy refused {host}:{port}: to allow it, add \"sandbox\": {{\"network\": {{\"allow\": [\"{allow}\"]}}}} to its entry"
    )
}

fn refused_path(line: &str) -> Option<&str> {
    let lower = line.to_ascii_lowercase();
    let at = [
        "permission denied",
        "eacces",
        "eperm",
        "read-only file system",
    ]
    .iter()
    .filter_map(|w| lower.find(w))
    .min()?;
    let after = &line[at..];
    for quote in ['\'', '"'] {
        if let Some(start) = after.find(&format!("{quote}/")) {
            let rest = &after[start + 1..];
            if let Some(end) = rest.find(quote) {
                return Some(&rest[..end]);
            }
        }
    }
    let before = line[..at].trim_end().trim_end_matches(':');
    before
        .rsplit(' ')
        .next()
        .filter(|p| p.starts_with('/') && p.len() > 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runtimes_name_the_path_they_were_refused() {
        for (line, path) in [
            (
                "Error: EACCES: permission denied, open '/home/me/.ssh/id_rsa'",
                Some("/home/me/.ssh/id_rsa"),
            ),
            (
                "PermissionError: [Errno 13] Permission denied: '/srv/data/x.csv'",
                Some("/srv/data/x.csv"),
            ),
            (
                "Error: EROFS: read-only file system, open '/repo/.git/hooks/pre-commit'",
                Some("/repo/.git/hooks/pre-commit"),
            ),
            ("open /etc/shadow: permission denied", Some("/etc/shadow")),
            ("failed: Permission denied (os error 13)", None),
            ("listening on 127.0.0.1:8080", None),
            ("permission denied, open 'relative/path'", None),
        ] {
            assert_eq!(refused_path(line), path, "{line}");
        }
        assert_eq!(
            advice(["starting", "cat: /srv/x: Permission denied"]).as_deref(),
            Some(
                "Offload confines this server and it was refused /srv/x: to allow it, add \"sandbox\": {\"read\": [\"/srv/x\"]} to its entry (\"write\" to write there)"
            )
        );
        assert_eq!(
            advice(["ready", "failed: Permission denied (os error 13)"]),
            None
        );
        assert!(host_advice("api.github.com", 443).ends_with(
            "add \"sandbox\": {\"network\": {\"allow\": [\"api.github.com\"]}} to its entry"
        ));
        assert!(host_advice("127.0.0.1", 8080).contains("[\"127.0.0.1:8080\"]"));
        let refusals = Refusals::default();
        assert!(refusals.stderr_line("PermissionError: [Errno 13] Permission denied: '/a'"));
        assert!(refusals.stderr_line("PermissionError: [Errno 13] Permission denied: '/a'"));
        assert!(!refusals.stderr_line("ready"));
        assert_eq!(
            refusals.paths(),
            [PathRefusal {
                path: "/a".into(),
                times: 2
            }]
        );
    }
}
