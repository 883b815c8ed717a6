//! The processes a test started and their children, read from /proc (Linux).

use std::path::Path;

/// The parent of `pid` (Linux: /proc).
pub fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    stat[stat.rfind(')')? + 2..]
        .split_whitespace()
        .nth(1)?
        .parse()
        .ok()
}

/// Every process's id (Linux: /proc).
fn pids() -> impl Iterator<Item = u32> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse::<u32>().ok())
}

/// `pid`'s command line, its arguments joined by spaces.
pub fn command_line(pid: u32) -> Option<String> {
    let raw = std::fs::read(format!("/proc/{pid}/cmdline")).ok()?;
    let args: Vec<String> = raw
        .split(|b| *b == 0)
        .filter(|a| !a.is_empty())
        .map(|a| String::from_utf8_lossy(a).into_owned())
        .collect();
    Some(args.join(" "))
}

/// The processes whose parent is `parent` and whose command line holds `needle` (Linux: /proc).
pub fn children_running(parent: u32, needle: &str) -> Vec<u32> {
    pids()
        .filter(|pid| command_line(*pid).is_some_and(|c| c.contains(needle)))
        .filter(|pid| parent_of(*pid) == Some(parent))
        .collect()
}

/// The processes started from `pid`, their children and theirs (Linux: /proc): a confined
/// server's launcher, and the server inside its process namespace, by their pids here.
pub fn descendants(pid: u32) -> Vec<u32> {
    let all: Vec<(u32, Option<u32>)> = pids().map(|p| (p, parent_of(p))).collect();
    let mut found = vec![pid];
    let mut i = 0;
    while i < found.len() {
        let parent = found[i];
        found.extend(
            all.iter()
                .filter(|(_, pp)| *pp == Some(parent))
                .map(|(p, _)| *p),
        );
        i += 1;
    }
    found.remove(0);
    found
}

/// The live processes whose command line holds `needle`.
pub fn running_with(needle: &str) -> Vec<u32> {
    pids()
        .filter(|pid| command_line(*pid).is_some_and(|c| c.contains(needle)))
        .filter(|pid| process_alive(*pid))
        .collect()
}

/// The live processes whose command line, its arguments joined by spaces, is `command`.
pub fn running(command: &str) -> Vec<u32> {
    pids()
        .filter(|pid| command_line(*pid).is_some_and(|c| c == command))
        .filter(|pid| process_alive(*pid))
        .collect()
}

/// True when a process with this id exists (Linux: /proc).
pub fn process_alive(pid: u32) -> bool {
    Path::new(&format!("/proc/{pid}")).exists()
        && !std::fs::read_to_string(format!("/proc/{pid}/stat"))
            .map(|s| {
                s.split(") ")
                    .nth(1)
                    .is_some_and(|rest| rest.starts_with('Z'))
            })
            .unwrap_or(true)
}
