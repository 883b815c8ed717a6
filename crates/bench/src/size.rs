//! What a user downloads and keeps on disk: the release binaries as `cargo install` and the
//! app's package ship them, each split into machine code, read-only data and the rest (read
//! from the ELF section headers), and the Debian package when `scripts/package.sh` has built
//! one; beside the installed footprint of the peer gateways the other benches measure (their
//! `node_modules` or virtualenv, not counting Node.js or Python themselves), measured in the
//! same run. Target: `offload` ≤ 60 MB.

use std::path::{Path, PathBuf};

use object::{Object, ObjectSection, SectionKind};

/// The target for `offload` (and for the `.deb`), in bytes (1 MB = 10⁶ bytes).
const TARGET: u64 = 60_000_000;

/// How a binary's bytes are spent.
#[derive(Default)]
struct Parts {
    file: u64,
    code: u64,
    read_only: u64,
    other: u64,
}

fn parts(path: &Path) -> anyhow::Result<Parts> {
    let data = std::fs::read(path)?;
    let file = object::File::parse(&*data)?;
    let mut p = Parts {
        file: data.len() as u64,
        ..Parts::default()
    };
    for section in file.sections() {
        // Sections that take no room in the file (.bss) are left out.
        let Some((_, size)) = section.file_range() else {
            continue;
        };
        match section.kind() {
            SectionKind::Text => p.code += size,
            SectionKind::ReadOnlyData
            | SectionKind::ReadOnlyString
            | SectionKind::ReadOnlyDataWithRel => p.read_only += size,
            _ => p.other += size,
        }
    }
    Ok(p)
}

/// Bytes of every regular file below `dir` (links not followed).
fn footprint(dir: &Path) -> u64 {
    walk(dir).unwrap_or(0)
}

fn walk(dir: &Path) -> std::io::Result<u64> {
    let mut total = 0;
    for entry in std::fs::read_dir(dir)? {
        let entry = entry?;
        let kind = entry.file_type()?;
        if kind.is_dir() {
            total += walk(&entry.path())?;
        } else if kind.is_file() {
            total += entry.metadata()?.len();
        }
    }
    Ok(total)
}

fn mb(bytes: u64) -> String {
    format!("{:.1} MB", bytes as f64 / 1e6)
}

pub fn run(target_dir: PathBuf, peers: PathBuf) -> anyhow::Result<()> {
    let release = target_dir.join("release");
    println!(
        "release binaries ({}), as `cargo install` and the .deb ship them",
        release.display()
    );
    println!(
        "{:<24} {:>10} {:>14} {:>15} {:>10}",
        "binary", "file", "machine code", "read-only data", "other"
    );
    let mut offload = None;
    // The program `cargo install` puts down beside `offload`: its script worker, also the
    // launcher of confined servers.
    let mut worker = None;
    for name in ["offload", "offload-script-worker", "offload-app"] {
        let path = release.join(name);
        if !path.exists() {
            println!(
                "{name:<24} not built (cargo build --release -p {})",
                package(name)
            );
            continue;
        }
        let p = parts(&path)?;
        println!(
            "{name:<24} {:>10} {:>14} {:>15} {:>10}",
            mb(p.file),
            mb(p.code),
            mb(p.read_only),
            mb(p.other)
        );
        match name {
            "offload" => offload = Some(p.file),
            "offload-script-worker" => worker = Some(p.file),
            _ => {}
        }
    }
    let debs: Vec<PathBuf> = std::fs::read_dir(release.join("bundle/deb"))
        .map(|d| {
            d.filter_map(|e| e.ok().map(|e| e.path()))
                .filter(|p| p.extension().is_some_and(|x| x == "deb"))
                .collect()
        })
        .unwrap_or_default();
    for deb in &debs {
        let name = deb.file_name().unwrap_or_default().to_string_lossy();
        println!(
            "{name:<24} {:>10}   (download; both binaries inside, compressed)",
            mb(deb.metadata()?.len())
        );
    }
    if debs.is_empty() {
        println!("{:<24} not built (scripts/package.sh)", ".deb");
    }

    println!();
    println!(
        "peer gateways installed beside it ({}), without their runtime",
        peers.display()
    );
    let installed = [
        ("desktop-commander (npm)", "desktop-commander/node_modules"),
        ("mcp-hub (npm)", "mcp-hub/node_modules"),
        ("mcp-proxy (PyPI venv)", "mcp-proxy"),
        ("cloud-fs (npm)", "cloud-fs/node_modules"),
    ];
    for (label, dir) in installed {
        let dir = peers.join(dir);
        if dir.exists() {
            println!("{label:<24} {:>10}", mb(footprint(&dir)));
        } else {
            println!("{label:<24} not installed (scripts/bench.sh installs it)");
        }
    }

    println!();
    match offload {
        Some(bytes) => {
            // `cargo install` puts the two programs down: the target holds for them together.
            let installed = bytes + worker.unwrap_or(0);
            println!(
                "target (offload and its script worker, as `cargo install` puts them down, <= {}): {} ({})",
                mb(TARGET),
                mb(installed),
                if installed <= TARGET && worker.is_some() {
                    "met"
                } else {
                    "NOT met"
                }
            );
        }
        None => println!(
            "target (offload <= {}): not measured, offload is not built",
            mb(TARGET)
        ),
    }
    Ok(())
}

fn package(binary: &str) -> &str {
    if binary != "offload-app" {
        "offload-cli"
    } else {
        "offload-app"
    }
}
