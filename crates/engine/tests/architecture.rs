//! ARCHITECTURE.md states what the code is: its crate table's "uses" column is each crate's
//! Offload dependencies, read from the manifests both ways; its engine table names every module
//! `src/lib.rs` declares and no other; no table row runs past a short paragraph.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

/// The longest a table row may be, in characters: a newcomer reads a row, not an essay.
const LONGEST_ROW: usize = 350;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn map() -> String {
    std::fs::read_to_string(root().join("ARCHITECTURE.md")).expect("ARCHITECTURE.md")
}

/// The rows of the table under `## {heading}`, each as its cells.
fn table(map: &str, heading: &str) -> Vec<Vec<String>> {
    let section = map
        .split("\n## ")
        .find(|s| s.starts_with(heading))
        .unwrap_or_else(|| panic!("ARCHITECTURE.md has no `## {heading}`"));
    section
        .lines()
        .filter(|l| l.starts_with('|') && !l.starts_with("|---"))
        .skip(1)
        .map(|l| {
            l.trim_matches('|')
                .split(" | ")
                .map(|c| c.trim().to_owned())
                .collect()
        })
        .collect()
}

/// The names between backticks in a cell.
fn quoted(cell: &str) -> Vec<&str> {
    cell.split('`').skip(1).step_by(2).collect()
}

/// The Offload crates a manifest's `[dependencies]` name.
fn offload_dependencies(manifest: &Path) -> BTreeSet<String> {
    let text =
        std::fs::read_to_string(manifest).unwrap_or_else(|e| panic!("{}: {e}", manifest.display()));
    let mut in_dependencies = false;
    let mut found = BTreeSet::new();
    for line in text.lines() {
        if line.starts_with('[') {
            in_dependencies = line.trim() == "[dependencies]";
        } else if in_dependencies
            && let Some(name) = line.split(['=', '.', ' ']).next()
            && name.starts_with("offload-")
        {
            found.insert(name.to_owned());
        }
    }
    found
}

#[test]
fn every_crate_uses_what_the_map_says() {
    let map = map();
    let rows = table(&map, "Crates");
    let mut checked = 0;
    for row in &rows {
        let names = quoted(&row[0]);
        let Some(package) = names.iter().find(|n| n.starts_with("offload-")) else {
            continue;
        };
        let manifest = match names[0] {
            "src-tauri/" => root().join("Cargo.toml"),
            path => root().join(path).join("Cargo.toml"),
        };
        let text = std::fs::read_to_string(&manifest).unwrap();
        assert!(
            text.contains(&format!("name = \"{package}\"")),
            "{} is not the package {package}",
            manifest.display()
        );
        let stated: BTreeSet<String> = quoted(&row[2]).iter().map(|s| s.to_string()).collect();
        assert_eq!(
            stated,
            offload_dependencies(&manifest),
            "ARCHITECTURE.md's `uses` of {package} differs from {}",
            manifest.display()
        );
        checked += 1;
    }
    assert!(checked >= 12, "only {checked} crates read from the table");
}

#[test]
fn the_engine_table_names_every_module_and_no_other() {
    let map = map();
    let stated: BTreeSet<String> = table(&map, "Engine modules")
        .iter()
        .flat_map(|row| quoted(&row[0]).into_iter().map(str::to_owned))
        .collect();
    let lib = std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("src/lib.rs"))
        .expect("lib.rs");
    let declared: BTreeSet<String> = lib
        .lines()
        .filter_map(|l| {
            let l = l.trim_start_matches("pub ");
            l.strip_prefix("mod ")?.strip_suffix(';').map(str::to_owned)
        })
        .collect();
    assert!(declared.len() > 30, "{declared:?}");
    assert_eq!(stated, declared, "ARCHITECTURE.md's engine modules");
}

#[test]
fn no_row_is_an_essay() {
    let long: Vec<String> = map()
        .lines()
        .filter(|l| l.starts_with('|') && l.chars().count() > LONGEST_ROW)
        .map(|l| l.chars().take(80).collect())
        .collect();
    assert!(
        long.is_empty(),
        "rows over {LONGEST_ROW} characters: {long:#?}"
    );
}
