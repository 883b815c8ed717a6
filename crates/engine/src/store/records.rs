//! The record of every stored response, in an append-only JSON-lines index in the data
//! directory. Lines that do not parse (a torn last write, hand edits) are skipped, never fatal;
//! a lost index is rebuilt from the stored files themselves, and a file whose process died
//! before recording it (`kill -9` between the write and the record) is recorded when the index
//! is next opened.

use std::collections::HashMap;
use std::io::{BufRead, BufReader, Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use chrono::{DateTime, Utc};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::names;
use super::summary::Summary;
use crate::config::looks_secret;
use offload_formats::Format;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct Record {
    pub id: String,
    pub time: DateTime<Utc>,
    pub server: String,
    pub tool: String,
    /// The call's arguments with secrets and large values elided.
    #[serde(default)]
    pub arguments: Value,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    #[serde(default)]
    pub duration_ms: u64,
    pub bytes: u64,
    pub format: String,
    pub mime_type: String,
    pub path: String,
    pub uri: String,
    /// Binary files written beside the main file (images, audio, blobs).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub files: Vec<SideFile>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub summary: Option<Summary>,
    /// True for records recovered from files after the index was lost (no arguments).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub recovered: bool,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, JsonSchema)]
pub struct SideFile {
    pub path: String,
    pub uri: String,
    pub mime_type: String,
    pub bytes: u64,
}

/// The index file and what has been read of it.
pub struct Index {
    path: PathBuf,
    records: Vec<Record>,
    /// Position of each path's record in `records` (one record per path).
    by_path: HashMap<String, usize>,
    read_up_to: u64,
    pub skipped_lines: usize,
}

impl Index {
    /// Opens (or starts) the index at `path`. When the file does not exist, records are rebuilt
    /// from default-named files in `dirs` and written out; when it does, default-named files in
    /// `dirs` that no record names (their process died before recording them) are recorded.
    pub fn open(path: PathBuf, dirs: &[PathBuf]) -> std::io::Result<Self> {
        let mut index = Self {
            path,
            records: Vec::new(),
            by_path: HashMap::new(),
            read_up_to: 0,
            skipped_lines: 0,
        };
        if index.path.exists() {
            index.refresh()?;
            for orphan in rebuild(dirs) {
                if !index.by_path.contains_key(&orphan.path) {
                    index.append(orphan)?;
                }
            }
        } else {
            for r in rebuild(dirs) {
                index.add(r);
            }
            if !index.records.is_empty() {
                index.rewrite()?;
            }
        }
        Ok(index)
    }

    /// Keeps one record per path: a real record replaces a recovered one (another process may
    /// have recovered a file while its writer was about to record it); a recovered one never
    /// replaces anything.
    fn add(&mut self, record: Record) {
        match self.by_path.get(&record.path) {
            Some(&i) if self.records[i].recovered && !record.recovered => self.records[i] = record,
            Some(_) => {}
            None => {
                self.by_path.insert(record.path.clone(), self.records.len());
                self.records.push(record);
            }
        }
    }

    /// Reads lines appended since the last read (by this or another Offload process).
    pub fn refresh(&mut self) -> std::io::Result<()> {
        let mut file = match std::fs::File::open(&self.path) {
            Ok(f) => f,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(()),
            Err(e) => return Err(e),
        };
        let len = file.metadata()?.len();
        if len < self.read_up_to {
            // Replaced or truncated: read it all again.
            self.records.clear();
            self.by_path.clear();
            self.read_up_to = 0;
        }
        if len == self.read_up_to {
            return Ok(());
        }
        file.seek(SeekFrom::Start(self.read_up_to))?;
        let mut reader = BufReader::new(file.take(len - self.read_up_to));
        let mut line = String::new();
        loop {
            line.clear();
            let n = reader.read_line(&mut line)?;
            if n == 0 || !line.ends_with('\n') {
                break; // an unfinished last line is read again next time
            }
            self.read_up_to += n as u64;
            match serde_json::from_str::<Record>(line.trim_end()) {
                Ok(r) => self.add(r),
                Err(_) if line.trim().is_empty() => {}
                Err(e) => {
                    self.skipped_lines += 1;
                    tracing::warn!("skipping a damaged line in {}: {e}", self.path.display());
                }
            }
        }
        Ok(())
    }

    /// Appends one record (one write of one line, with O_APPEND).
    pub fn append(&mut self, record: Record) -> std::io::Result<()> {
        self.refresh()?;
        let mut line = serde_json::to_vec(&record).map_err(std::io::Error::other)?;
        line.push(b'\n');
        if let Some(dir) = self.path.parent() {
            std::fs::create_dir_all(dir)?;
        }
        let mut file = crate::whole_file::open_private_append(&self.path)?;
        // A previous writer may have died mid-line: start ours on a fresh line.
        let len = file.metadata()?.len();
        if len > self.read_up_to {
            file.write_all(b"\n")?;
        }
        file.write_all(&line)?;
        file.flush()?;
        self.read_up_to = file.metadata()?.len();
        self.add(record);
        Ok(())
    }

    pub fn records(&self) -> &[Record] {
        &self.records
    }

    /// Writes the whole index anew (atomically).
    fn rewrite(&mut self) -> std::io::Result<()> {
        crate::whole_file::replace(&self.path, |w| {
            for r in &self.records {
                serde_json::to_writer(&mut *w, r).map_err(std::io::Error::other)?;
                w.write_all(b"\n")?;
            }
            Ok(())
        })?;
        self.read_up_to = std::fs::metadata(&self.path)?.len();
        Ok(())
    }
}

/// Records recovered from default-named files (`<server>-<tool>-<time>-<random>.<ext>`) in
/// `dirs` and their direct subdirectories, oldest first.
pub fn rebuild(dirs: &[PathBuf]) -> Vec<Record> {
    let mut out = Vec::new();
    for dir in dirs {
        scan(dir, 1, &mut out);
    }
    out.sort_by_key(|r| r.time);
    out
}

fn scan(dir: &Path, depth_left: usize, out: &mut Vec<Record>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        // file_type() does not follow symlinks: links are never recovered.
        let Ok(kind) = entry.file_type() else {
            continue;
        };
        let path = entry.path();
        if kind.is_dir() && depth_left > 0 {
            scan(&path, depth_left - 1, out);
        } else if kind.is_file()
            && let Ok(meta) = entry.metadata()
            && let Some(r) = recover(&path, meta.len())
        {
            out.push(r);
        }
    }
}

fn recover(path: &Path, bytes: u64) -> Option<Record> {
    let name = path.file_name()?.to_str()?;
    // `…csv.gz`: a CSV, compressed.
    let (plain, codec) = offload_formats::files::compressed::Codec::split(name);
    let (server, tool, time) = names::parse_default(plain)?;
    let format = Format::output(&names::extension(plain)?)?;
    let uri = url::Url::from_file_path(path).ok()?.to_string();
    Some(Record {
        id: name.to_owned(),
        time,
        server,
        tool,
        arguments: Value::Null,
        description: None,
        duration_ms: 0,
        bytes,
        format: match codec {
            Some(codec) => format!("{}.{}", format.name(), codec.extension()),
            None => format.name().to_owned(),
        },
        mime_type: codec
            .map_or(format.mime_type(), |c| c.mime_type())
            .to_owned(),
        path: path.display().to_string(),
        uri,
        files: Vec::new(),
        summary: None,
        recovered: true,
    })
}

/// The call's arguments as recorded: values under secret-looking keys replaced, long strings
/// and big lists shortened, deep nesting cut.
pub fn elide(value: &Value) -> Value {
    fn go(v: &Value, depth: usize) -> Value {
        if depth > 6 {
            return Value::String("[elided: nested too deep]".into());
        }
        match v {
            Value::String(s) if s.len() > 256 => {
                Value::String(format!("[elided: {} bytes]", s.len()))
            }
            Value::Array(items) if items.len() > 20 => {
                Value::String(format!("[elided: {} items]", items.len()))
            }
            Value::Array(items) => Value::Array(items.iter().map(|i| go(i, depth + 1)).collect()),
            Value::Object(m) => Value::Object(
                m.iter()
                    .map(|(k, v)| {
                        let v = if looks_secret(k) && !v.is_null() {
                            Value::String("[redacted]".into())
                        } else {
                            go(v, depth + 1)
                        };
                        (k.clone(), v)
                    })
                    .collect(),
            ),
            other => other.clone(),
        }
    }
    go(value, 0)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn record(id: &str) -> Record {
        Record {
            id: id.into(),
            time: Utc::now(),
            server: "s".into(),
            tool: "t".into(),
            arguments: json!({}),
            description: None,
            duration_ms: 1,
            bytes: 1,
            format: "json".into(),
            mime_type: "application/json".into(),
            path: format!("/x/{id}"),
            uri: format!("file:///x/{id}"),
            files: vec![],
            summary: None,
            recovered: false,
        }
    }

    #[test]
    fn appends_survive_reopen_and_damaged_lines_are_skipped() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("records.jsonl");
        let mut idx = Index::open(path.clone(), &[]).unwrap();
        idx.append(record("a")).unwrap();
        // A torn write from a crashed process, then another good record.
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"{\"id\": \"torn")
            .unwrap();
        idx.append(record("b")).unwrap();
        std::fs::OpenOptions::new()
            .append(true)
            .open(&path)
            .unwrap()
            .write_all(b"garbage\n")
            .unwrap();
        let again = Index::open(path, &[]).unwrap();
        let ids: Vec<&str> = again.records().iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["a", "b"]);
        assert_eq!(again.skipped_lines, 2);
    }

    #[test]
    fn a_lost_index_is_rebuilt_from_the_files() {
        let root = tempfile::tempdir().unwrap();
        std::fs::write(
            root.path().join("srv-list-20261121T101010Z-abcdef.csv"),
            "a\n1\n",
        )
        .unwrap();
        std::fs::create_dir(root.path().join("sub")).unwrap();
        std::fs::write(
            root.path().join("sub/srv-get-20261121T111111Z-ghijkm.json"),
            "{}",
        )
        .unwrap();
        std::fs::write(root.path().join("notes.txt"), "not ours").unwrap();
        let data = tempfile::tempdir().unwrap();
        let idx = Index::open(
            data.path().join("records.jsonl"),
            &[root.path().to_path_buf()],
        )
        .unwrap();
        let got: Vec<(&str, &str, &str)> = idx
            .records()
            .iter()
            .map(|r| (r.server.as_str(), r.tool.as_str(), r.format.as_str()))
            .collect();
        assert_eq!(got, [("srv", "list", "csv"), ("srv", "get", "json")]);
        assert!(idx.records().iter().all(|r| r.recovered));
        assert!(data.path().join("records.jsonl").exists(), "written out");
    }

    #[test]
    fn files_stored_but_never_recorded_are_recorded_on_the_next_open() {
        let root = tempfile::tempdir().unwrap();
        let root = std::fs::canonicalize(root.path()).unwrap();
        let data = tempfile::tempdir().unwrap();
        let path = data.path().join("records.jsonl");
        let recorded = root.join("srv-list-20261121T101010Z-abcdef.json");
        std::fs::write(&recorded, "[]").unwrap();
        let mut idx = Index::open(path.clone(), &[]).unwrap();
        let mut real = record("real");
        real.path = recorded.display().to_string();
        idx.append(real).unwrap();
        // A process killed after writing its file, before recording it.
        let orphan = root.join("srv-list-20261121T121212Z-ghijkm.json");
        std::fs::write(&orphan, "[1]").unwrap();
        let dirs = [root.clone()];
        let idx = Index::open(path.clone(), &dirs).unwrap();
        let got: Vec<(&str, bool)> = idx
            .records()
            .iter()
            .map(|r| (r.path.as_str(), r.recovered))
            .collect();
        assert_eq!(
            got,
            [
                (recorded.to_str().unwrap(), false),
                (orphan.to_str().unwrap(), true)
            ]
        );
        // Opening again adds nothing; the writer's own record, arriving late, replaces the
        // recovered one.
        let mut idx = Index::open(path.clone(), &dirs).unwrap();
        assert_eq!(idx.records().len(), 2);
        let mut late = record("late");
        late.path = orphan.display().to_string();
        idx.append(late).unwrap();
        let idx = Index::open(path, &dirs).unwrap();
        let ids: Vec<&str> = idx.records().iter().map(|r| r.id.as_str()).collect();
        assert_eq!(ids, ["real", "late"]);
    }

    #[test]
    fn arguments_are_elided() {
        let v = json!({"query": "x", "api_key": "sk-123", "Authorization": "Bearer t", "blob": "y".repeat(1000),
                       "ids": (0..100).collect::<Vec<_>>(), "nested": {"password": "p", "ok": [1, 2]}});
        let e = elide(&v);
        assert_eq!(e["query"], "x");
        assert_eq!(e["api_key"], "[redacted]");
        assert_eq!(e["Authorization"], "[redacted]");
        assert_eq!(e["blob"], "[elided: 1000 bytes]");
        assert_eq!(e["ids"], "[elided: 100 items]");
        assert_eq!(e["nested"]["password"], "[redacted]");
        assert_eq!(e["nested"]["ok"], json!([1, 2]));
        assert!(!e.to_string().contains("sk-123"));
    }
}
