// Shared by the build scripts of `offload` (crates/cli/build.rs) and the desktop app
// (src-tauri/build.rs), through `include!`.

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
