// How the binaries are linked; shared by the build scripts of `offload` (crates/cli/build.rs)
// and the desktop app (src-tauri/build.rs), through `include!`.

/// Links the binaries with packed relative relocations (DT_RELR) where the C library that will
/// load them can (glibc 2.36 and later, probed on the building machine): a position-independent
/// binary's table of relative relocations, 3.5 MB for `offload`, becomes a few kilobytes. Nothing
/// changes elsewhere (another C library, an older glibc, a cross build).
fn link_packed_relocations() {
    let target = std::env::var("TARGET").unwrap_or_default();
    let host = std::env::var("HOST").unwrap_or_default();
    if target != host || !target.ends_with("-linux-gnu") {
        return;
    }
    let version = std::process::Command::new("getconf")
        .arg("GNU_LIBC_VERSION")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    // "glibc 2.36"
    let mut numbers = version
        .trim()
        .trim_start_matches("glibc ")
        .split('.')
        .map(|n| n.parse::<u32>().unwrap_or(0));
    let (major, minor) = (numbers.next().unwrap_or(0), numbers.next().unwrap_or(0));
    if (major, minor) >= (2, 36) {
        println!("cargo:rustc-link-arg-bins=-Wl,-z,pack-relative-relocs");
    }
}

/// Links the binaries with identical code folded (`--icf=all`) where the linker is rustc's own
/// LLD (x86_64 Linux since Rust 1.90, unless another linker is configured): functions whose
/// machine code came out byte for byte the same — generic code instantiated for types of one
/// layout, mostly — are kept once. Rust makes no promise that two functions have different
/// addresses, so nothing can tell. Optimised builds only: a debug build links faster without.
fn fold_identical_code() {
    let target = std::env::var("TARGET").unwrap_or_default();
    if std::env::var("OPT_LEVEL").is_ok_and(|l| l == "0") {
        return;
    }
    let flags = std::env::var("CARGO_ENCODED_RUSTFLAGS").unwrap_or_default();
    if target != "x86_64-unknown-linux-gnu"
        || std::env::var_os("RUSTC_LINKER").is_some()
        || flags.contains("linker")
    {
        return;
    }
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let version = std::process::Command::new(rustc)
        .arg("--version")
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).into_owned())
        .unwrap_or_default();
    // "rustc 1.95.0 (59807616e 2026-04-14)"
    let minor = version
        .split_whitespace()
        .nth(1)
        .and_then(|v| v.split('.').nth(1))
        .and_then(|m| m.parse::<u32>().ok())
        .unwrap_or(0);
    if version.starts_with("rustc 1.") && minor >= 90 {
        println!("cargo:rustc-link-arg-bins=-Wl,--icf=all");
    }
}
