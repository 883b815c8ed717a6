include!("build/relr.rs");

fn main() {
    println!("cargo:rerun-if-changed=build.rs");
    println!("cargo:rerun-if-changed=build/relr.rs");
    link_packed_relocations();
    fold_identical_code();
}
