//! A JSON table rewritten as JSON lines for DataFusion, in one streaming pass.
//!
//! DataFusion reads newline-delimited JSON well (schema from the first rows, parallel ranges);
//! its reader for JSON arrays fails on pretty-printed arrays and on any array it would split
//! into ranges. So a JSON table — a list of objects, or the one list of objects inside a
//! top-level object (`{"result": [...]}`), as `get_file_schema` describes it — is copied once
//! into an unnamed temporary file, one object per line (whitespace outside strings dropped,
//! the list's commas become line ends), and read as JSON lines. Memory stays at one buffer
//! whatever the file's size. Only the structure is checked here; the objects themselves are
//! parsed by Arrow, whose errors name the line (= the item).

use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::sync::Arc;

use crate::blob::{Blob, BlobReader};
use crate::error::QueryError;

const BUF: usize = 1 << 20;

/// The table in `file` (a JSON text) as a temporary JSON-lines file, made in `dir` when given.
pub(crate) fn to_lines(
    file: &Arc<dyn Blob>,
    label: &str,
    dir: Option<&Path>,
) -> Result<Arc<dyn Blob>, QueryError> {
    let fail = |why: String| {
        QueryError::Source(format!(
            "{label} cannot be read as a JSON array of objects: {why}"
        ))
    };
    let (start, whole) = find_list(file.clone()).map_err(fail)?;
    let tmp = match dir {
        Some(dir) => tempfile::tempfile_in(dir).or_else(|_| tempfile::tempfile()),
        None => tempfile::tempfile(),
    }
    .map_err(QueryError::Io)?;
    let mut out = BufWriter::with_capacity(BUF, tmp);
    copy_items(BlobReader::at(file.clone(), start), &mut out, whole).map_err(fail)?;
    let tmp = out
        .into_inner()
        .map_err(|e| QueryError::Io(e.into_error()))?;
    Ok(Arc::new(tmp))
}

/// The first byte that is not whitespace (after a UTF-8 byte order mark), and its offset.
fn first_byte(file: Arc<dyn Blob>) -> Result<(u8, u64), String> {
    let mut head = [0u8; 4096];
    let mut offset = 0u64;
    let mut reader = BlobReader::new(file);
    loop {
        let n = reader.read(&mut head).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the file is empty".into());
        }
        let mut from = 0;
        if offset == 0 && head[..n].starts_with(b"\xEF\xBB\xBF") {
            from = 3;
        }
        if let Some(i) = head[from..n].iter().position(|b| !b.is_ascii_whitespace()) {
            return Ok((head[from + i], offset + (from + i) as u64));
        }
        offset += n as u64;
    }
}

/// Where the list of objects starts: the top-level `[`, or the `[` of the one field of a
/// top-level object that holds a list of objects; and whether the list is the whole text.
fn find_list(file: Arc<dyn Blob>) -> Result<(u64, bool), String> {
    match first_byte(file.clone())? {
        (b'[', at) => Ok((at, true)),
        (b'{', at) => {
            let lists = object_lists(file, at)?;
            let of = |items| lists.iter().filter(move |l| l.items == items);
            let mut objects = of(Items::Objects);
            match (objects.next(), objects.next(), of(Items::Empty).next()) {
                (Some(one), None, _) => Ok((one.at, false)),
                (Some(first), Some(_), _) => Err(format!(
                    "it holds several lists of objects ({}); query one with jq (`.{}`), or store it as its own file",
                    names(of(Items::Objects)),
                    first.key,
                )),
                // Only empty lists: an empty table.
                (None, _, Some(empty)) => Ok((empty.at, false)),
                (None, _, None) if lists.is_empty() => {
                    Err("it is an object without a list of objects; use jq to read it".into())
                }
                (None, _, None) => Err(format!(
                    "its lists ({}) do not hold objects; use jq to read them",
                    names(lists.iter())
                )),
            }
        }
        (b, _) => Err(format!(
            "it starts with {:?}, not a list or an object; use jq to read it",
            b as char
        )),
    }
}

fn names<'a>(lists: impl Iterator<Item = &'a List>) -> String {
    lists
        .map(|l| format!("`{}`", l.key))
        .collect::<Vec<_>>()
        .join(", ")
}

/// A list held by a field of the top-level object.
struct List {
    key: String,
    /// Offset of its `[`.
    at: u64,
    items: Items,
}

#[derive(Clone, Copy, PartialEq)]
enum Items {
    Unknown,
    Objects,
    Other,
    Empty,
}

/// Where the scan of the top-level object is, at its own level.
#[derive(Clone, Copy, PartialEq)]
enum Field {
    Key,
    InKey,
    Colon,
    Value,
    /// Inside or after a value, until the comma.
    Rest,
}

/// The fields of the object at `at` whose values are lists.
fn object_lists(file: Arc<dyn Blob>, at: u64) -> Result<Vec<List>, String> {
    let mut reader = BlobReader::at(file, at + 1);
    let mut buf = vec![0u8; BUF];
    let mut lists: Vec<List> = Vec::new();
    let mut key = Vec::new();
    let mut field = Field::Key;
    // Nesting below the top-level object, and strings there.
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    let mut pos = at + 1;
    loop {
        let n = reader.read(&mut buf).map_err(|e| e.to_string())?;
        if n == 0 {
            return Err("the text ends inside the top-level object".into());
        }
        for (i, &b) in buf[..n].iter().enumerate() {
            if field == Field::InKey || in_string {
                let collect = field == Field::InKey;
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    if collect {
                        field = Field::Colon;
                    } else {
                        in_string = false;
                    }
                    continue;
                }
                if collect {
                    key.push(b);
                }
                continue;
            }
            if b.is_ascii_whitespace() {
                continue;
            }
            if depth > 0 {
                if let Some(list) = lists.last_mut().filter(|l| l.items == Items::Unknown) {
                    list.items = match b {
                        b'{' => Items::Objects,
                        b']' if depth == 1 => Items::Empty,
                        _ => Items::Other,
                    };
                }
                match b {
                    b'"' => in_string = true,
                    b'{' | b'[' => depth += 1,
                    b'}' | b']' => depth -= 1,
                    _ => {}
                }
                continue;
            }
            match (field, b) {
                (Field::Key, b'"') => {
                    key.clear();
                    field = Field::InKey;
                }
                (Field::Key | Field::Rest, b'}') => return Ok(lists),
                (Field::Colon, b':') => field = Field::Value,
                (Field::Value, _) => {
                    field = Field::Rest;
                    match b {
                        b'"' => in_string = true,
                        b'{' | b'[' => depth = 1,
                        _ => {}
                    }
                    if b == b'[' {
                        let quoted = [&b"\""[..], &key[..], b"\""].concat();
                        lists.push(List {
                            key: serde_json::from_slice(&quoted)
                                .unwrap_or_else(|_| String::from_utf8_lossy(&key).into_owned()),
                            at: pos + i as u64,
                            items: Items::Unknown,
                        });
                    }
                }
                (Field::Rest, b',') => field = Field::Key,
                (Field::Rest, _) => {}
                _ => {
                    return Err(format!(
                        "a misplaced {:?} in the top-level object",
                        b as char
                    ));
                }
            }
        }
        pos += n as u64;
    }
}

/// Copies the items of the list whose `[` is the first byte of `input` as one line each.
/// `whole` says the list is the whole text, so nothing but whitespace may follow it.
fn copy_items(mut input: impl Read, out: &mut impl Write, whole: bool) -> Result<u64, String> {
    let mut buf = vec![0u8; BUF];
    let mut line = Vec::with_capacity(BUF);
    let io = |e: std::io::Error| e.to_string();
    // 0 before the `[`; 1 between items; deeper inside an item.
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    // Between items: whether an item (rather than a comma or the end) must come next.
    let mut want_item = true;
    let mut items = 0u64;
    let mut ended = false;
    loop {
        let n = input.read(&mut buf).map_err(io)?;
        if n == 0 {
            break;
        }
        for &b in &buf[..n] {
            if ended {
                if whole && !b.is_ascii_whitespace() {
                    return Err(format!(
                        "something follows the list ({:?} after item {items})",
                        b as char
                    ));
                }
                continue;
            }
            if in_string {
                line.push(b);
                if escaped {
                    escaped = false;
                } else if b == b'\\' {
                    escaped = true;
                } else if b == b'"' {
                    in_string = false;
                }
                continue;
            }
            if b.is_ascii_whitespace() {
                continue;
            }
            match depth {
                0 => {
                    if b != b'[' {
                        return Err(format!("expected a list, found {:?}", b as char));
                    }
                    depth = 1;
                }
                1 => match b {
                    b'{' if want_item => {
                        line.push(b);
                        depth = 2;
                        want_item = false;
                        items += 1;
                    }
                    b',' if !want_item => want_item = true,
                    b']' if !want_item || items == 0 => ended = true,
                    b'{' | b',' | b']' => {
                        return Err(format!("a misplaced {:?} after item {items}", b as char));
                    }
                    _ => {
                        return Err(format!(
                            "item {} is not an object (it starts with {:?}); use jq to read it",
                            items + 1,
                            b as char
                        ));
                    }
                },
                _ => {
                    line.push(b);
                    match b {
                        b'"' => in_string = true,
                        b'{' | b'[' => depth += 1,
                        b'}' | b']' => {
                            depth -= 1;
                            if depth == 1 {
                                line.push(b'\n');
                                if line.len() >= BUF {
                                    out.write_all(&line).map_err(io)?;
                                    line.clear();
                                }
                            }
                        }
                        _ => {}
                    }
                }
            }
        }
    }
    if !ended {
        return Err(format!(
            "the text ends inside the list (after item {items})"
        ));
    }
    out.write_all(&line).map_err(io)?;
    out.flush().map_err(io)?;
    Ok(items)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(text: &str) -> Result<String, String> {
        let file: Arc<dyn Blob> = {
            let mut f = tempfile::tempfile().unwrap();
            f.write_all(text.as_bytes()).unwrap();
            Arc::new(f)
        };
        let blob = to_lines(&file, "t.json", None).map_err(|e| e.to_string())?;
        let mut s = String::new();
        BlobReader::new(blob).read_to_string(&mut s).unwrap();
        Ok(s)
    }

    #[test]
    fn arrays_pretty_or_compact_become_one_object_a_line() {
        let pretty = "\u{feff}[\n  {\n    \"a\": 1,\n    \"s\": \"x, ]} \\\" y\",\n    \"n\": [1, {\"b\": 2}]\n  },\n  {\"a\": 2}\n]\n";
        assert_eq!(
            lines(pretty).unwrap(),
            "{\"a\":1,\"s\":\"x, ]} \\\" y\",\"n\":[1,{\"b\":2}]}\n{\"a\":2}\n"
        );
        assert_eq!(lines("[{},{}]").unwrap(), "{}\n{}\n");
        assert_eq!(lines(" [ ] ").unwrap(), "");
    }

    #[test]
    fn the_one_list_of_objects_inside_an_object() {
        let text = r#"{"count": 2, "tags": ["x"], "next": {"items": [{"z": 1}]}, "result": [{"id": 1}, {"id": 2}], "done": true}"#;
        assert_eq!(lines(text).unwrap(), "{\"id\":1}\n{\"id\":2}\n");
        let keyed = r#"{"a\"b": [ {"id": 1} ]}"#;
        assert_eq!(lines(keyed).unwrap(), "{\"id\":1}\n");
    }

    #[test]
    fn what_is_not_a_table_is_refused_with_a_reason() {
        let e = lines(r#"{"a": [{"x": 1}], "b": [{"y": 2}]}"#).unwrap_err();
        assert!(e.contains("several lists of objects (`a`, `b`)"), "{e}");
        let e = lines(r#"{"a": [1, 2]}"#).unwrap_err();
        assert!(e.contains("do not hold objects"), "{e}");
        let e = lines(r#"{"a": 1}"#).unwrap_err();
        assert!(e.contains("without a list of objects"), "{e}");
        let e = lines("[1, 2]").unwrap_err();
        assert!(e.contains("item 1 is not an object"), "{e}");
        let e = lines(r#"[{"a": 1}, 3]"#).unwrap_err();
        assert!(e.contains("item 2 is not an object"), "{e}");
        let e = lines(r#"[{"a": 1},]"#).unwrap_err();
        assert!(e.contains("misplaced ']'"), "{e}");
        let e = lines(r#"[{"a": 1}] x"#).unwrap_err();
        assert!(e.contains("something follows the list"), "{e}");
        let e = lines(r#"[{"a": 1}"#).unwrap_err();
        assert!(e.contains("ends inside the list"), "{e}");
        let e = lines("").unwrap_err();
        assert!(e.contains("empty"), "{e}");
        let e = lines("\"text\"").unwrap_err();
        assert!(e.contains("not a list or an object"), "{e}");
        let e = lines("{\"a\": [{\"x\": 1}").unwrap_err();
        assert!(e.contains("ends inside the top-level object"), "{e}");
        assert!(
            e.starts_with("t.json cannot be read as a JSON array of objects"),
            "{e}"
        );
    }
}
