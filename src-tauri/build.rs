include!("../crates/cli/build/link.rs");

fn main() {
    link_packed_relocations();
    fold_identical_code();
    tauri_build::try_build(
        tauri_build::Attributes::new().capabilities_path_pattern("src-tauri/capabilities/**/*"),
    )
    .expect("tauri build script");
}
