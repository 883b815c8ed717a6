//! Builds the word pieces' table into the crate compressed: `data/pieces.bin` and
//! `data/vocab.txt` are 2.3 MB as they are and 1.8 MB in zlib, which `meaning.rs` inflates once,
//! at the first search. The files in `data/` stay as `scripts/search-model.py` writes them.

use std::io::Write;
use std::path::{Path, PathBuf};

fn main() {
    let out = PathBuf::from(std::env::var_os("OUT_DIR").expect("cargo sets OUT_DIR"));
    for name in ["pieces.bin", "vocab.txt"] {
        let path = Path::new("data").join(name);
        println!("cargo::rerun-if-changed={}", path.display());
        let raw =
            std::fs::read(&path).unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
        let mut z = flate2::write::ZlibEncoder::new(Vec::new(), flate2::Compression::best());
        z.write_all(&raw).expect("compressing into memory");
        let packed = z.finish().expect("compressing into memory");
        std::fs::write(out.join(format!("{name}.z")), packed)
            .unwrap_or_else(|e| panic!("cannot write {name}.z into OUT_DIR: {e}"));
    }
}
