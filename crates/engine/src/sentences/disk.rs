//! The tools' vectors kept on disk (`search-vectors.bin` in the data directory), so that a new
//! Offload process — each session of an embedded `offload mcp` is one — ranks with the sentence
//! model at once instead of embedding its catalog again.
//!
//! The file is a header (a mark and the model file's identity: its length and modification
//! time) and records, each a text's digest and its vector. A file made with another model is
//! started afresh. Processes append whole records, one write each; a reader skips a last record
//! cut short and any vector that is not finite, so a damaged file costs vectors, never a search.

use std::io::{Read, Write};
use std::path::Path;

use sha2::{Digest, Sha256};

use offload_embed::DIMENSIONS;

/// What a text is known by: the first half of its SHA-256.
pub type Key = [u8; 16];
/// Which model made the vectors.
pub type Identity = [u8; 16];

/// Its number changes with the arithmetic that makes the vectors, so that a file an earlier
/// Offload made is started afresh (002: the products in 8-bit integers where the processor has
/// AVX-512 VNNI).
const MARK: &[u8; 8] = b"OFFSV002";
const HEADER: usize = MARK.len() + 16;
const RECORD: usize = 16 + DIMENSIONS * 4;

pub fn key(text: &str) -> Key {
    let digest = Sha256::digest(text.as_bytes());
    digest[..16].try_into().expect("16 bytes")
}

/// The model file's identity: its length and modification time.
pub fn identity(model: &Path) -> Option<Identity> {
    let meta = std::fs::metadata(model).ok()?;
    let modified = meta
        .modified()
        .ok()?
        .duration_since(std::time::UNIX_EPOCH)
        .ok()?
        .as_nanos() as u64;
    let mut id = [0u8; 16];
    id[..8].copy_from_slice(&meta.len().to_le_bytes());
    id[8..].copy_from_slice(&modified.to_le_bytes());
    Some(id)
}

/// The vectors kept at `path` by the model `identity`, at most `most` (none when the file is
/// missing, another model's, or not such a file).
pub fn read(path: &Path, identity: &Identity, most: usize) -> Vec<(Key, Vec<f32>)> {
    let Ok(mut file) = std::fs::File::open(path) else {
        return Vec::new();
    };
    let mut header = [0u8; HEADER];
    if file.read_exact(&mut header).is_err() || !is_header(&header, identity) {
        return Vec::new();
    }
    let mut found = Vec::new();
    let mut record = vec![0u8; RECORD];
    while found.len() < most && file.read_exact(&mut record).is_ok() {
        let key: Key = record[..16].try_into().expect("16 bytes");
        let vector: Vec<f32> = record[16..]
            .chunks_exact(4)
            .map(|b| f32::from_le_bytes(b.try_into().expect("4 bytes")))
            .collect();
        if vector.iter().all(|x| x.is_finite()) {
            found.push((key, vector));
        }
    }
    found
}

/// Appends `records` to the file at `path`, starting it afresh when it is another model's or
/// holds `most` records already.
pub fn append(
    path: &Path,
    identity: &Identity,
    records: &[(Key, &[f32])],
    most: usize,
) -> std::io::Result<()> {
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir)?;
    }
    let mut file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)?;
    let mut header = [0u8; HEADER];
    let len = file.metadata()?.len() as usize;
    let ours =
        len >= HEADER && file.read_exact(&mut header).is_ok() && is_header(&header, identity);
    if !ours || (len - HEADER) / RECORD + records.len() > most {
        file.set_len(0)?;
        let mut start = MARK.to_vec();
        start.extend_from_slice(identity);
        file.write_all(&start)?;
    }
    let mut line = Vec::with_capacity(RECORD);
    for (key, vector) in records {
        if vector.len() != DIMENSIONS {
            continue;
        }
        line.clear();
        line.extend_from_slice(key);
        for x in *vector {
            line.extend_from_slice(&x.to_le_bytes());
        }
        // One write a record: appends of other processes land between records, not inside.
        file.write_all(&line)?;
    }
    Ok(())
}

fn is_header(header: &[u8; HEADER], identity: &Identity) -> bool {
    &header[..MARK.len()] == MARK && &header[MARK.len()..] == identity
}

#[cfg(test)]
mod tests {
    use super::*;

    fn vector(seed: f32) -> Vec<f32> {
        (0..DIMENSIONS).map(|i| seed + i as f32).collect()
    }

    #[test]
    fn vectors_kept_are_read_back_by_the_same_model_only() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("search-vectors.bin");
        let (ours, other) = ([1u8; 16], [2u8; 16]);
        assert!(read(&path, &ours, 10).is_empty());
        let (a, b) = (vector(0.5), vector(1.5));
        append(&path, &ours, &[(key("a"), &a), (key("b"), &b)], 10).unwrap();
        append(&path, &ours, &[(key("c"), &a)], 10).unwrap();
        let kept = read(&path, &ours, 10);
        assert_eq!(kept.len(), 3);
        assert_eq!(kept[0], (key("a"), a.clone()));
        assert_eq!(kept[1], (key("b"), b.clone()));
        assert_eq!(read(&path, &ours, 2).len(), 2);
        // Another model's vectors are not this model's: none read, and its first append
        // starts the file afresh.
        assert!(read(&path, &other, 10).is_empty());
        append(&path, &other, &[(key("d"), &b)], 10).unwrap();
        assert!(read(&path, &ours, 10).is_empty());
        assert_eq!(read(&path, &other, 10), vec![(key("d"), b.clone())]);
        // Full: started afresh rather than grown past the bound.
        append(&path, &other, &[(key("e"), &a), (key("f"), &a)], 2).unwrap();
        assert_eq!(read(&path, &other, 10).len(), 2);
    }

    #[test]
    fn a_damaged_file_costs_vectors_not_a_search() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("search-vectors.bin");
        let id = [7u8; 16];
        let good = vector(0.0);
        let mut bad = vector(0.0);
        bad[3] = f32::NAN;
        append(&path, &id, &[(key("good"), &good), (key("bad"), &bad)], 10).unwrap();
        // A record cut short by a process that died while writing it.
        let mut bytes = std::fs::read(&path).unwrap();
        bytes.extend_from_slice(&[9u8; 100]);
        std::fs::write(&path, &bytes).unwrap();
        assert_eq!(read(&path, &id, 10), vec![(key("good"), good.clone())]);
        // Not such a file at all.
        std::fs::write(&path, b"{\"not\": \"vectors\"}").unwrap();
        assert!(read(&path, &id, 10).is_empty());
        append(&path, &id, &[(key("good"), &good)], 10).unwrap();
        assert_eq!(read(&path, &id, 10).len(), 1);
        // A folder where the file should be: nothing read, an error to log.
        let folder = dir.path().join("folder");
        std::fs::create_dir(&folder).unwrap();
        assert!(read(&folder, &id, 10).is_empty());
        assert!(append(&folder, &id, &[(key("x"), &good)], 10).is_err());
    }
}
