include!("build/link.rs");

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/link.rs");
    link_packed_relocations();
    fold_identical_code();
}
