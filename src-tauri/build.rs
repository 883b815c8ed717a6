include!("../crates/cli/build/relr.rs");

fn main() {
    link_packed_relocations();
    tauri_build::try_build(
        tauri_build::Attributes::new().capabilities_path_pattern("src-tauri/capabilities/**/*"),
    )
    .expect("tauri build script");
}
