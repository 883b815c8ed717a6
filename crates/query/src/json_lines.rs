//! A JSON table rewritten as JSON lines for DataFusion, in one streaming pass.
//!
//! DataFusion reads newline-delimited JSON well (schema from the first rows, parallel ranges);
//! its reader for JSON arrays fails on pretty-printed arrays and on any array it would split
//! into ranges. So a JSON table — a list of objects, or the one list of objects inside a
//! top-level object (`{"result": [...]}`), as `get_file_schema` describes it — is copied once
//! into an unnamed temporary file, one object per line (whitespace outside strings dropped,
//! the list's commas become line ends), and read as JSON lines. A table sent as rows of values
//! (`{"columns": [...], "rows": [[...]]}`, `{"values": [[header...], ...]}`, see
//! [`crate::grid`]) is copied the same way, each row becoming an object of the columns' names
//! as it passes. Memory stays at one buffer whatever the file's size. Only the structure is
//! checked here; the objects themselves are parsed by Arrow, whose errors name the line (= the
//! item).

use std::io::{BufWriter, Read, Write};
use std::path::Path;
use std::sync::Arc;

use crate::blob::{Blob, BlobReader};
use crate::error::QueryError;
use crate::grid::Grid;

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
    let table = find_list(file.clone()).map_err(fail)?;
    let tmp = match dir {
        Some(dir) => tempfile::tempfile_in(dir).or_else(|_| tempfile::tempfile()),
        None => tempfile::tempfile(),
    }
    .map_err(QueryError::Io)?;
    let mut out = BufWriter::with_capacity(BUF, tmp);
    match table {
        Table::Objects { at, whole } => copy_items(
            BlobReader::at(file.clone(), at),
            &mut out,
            whole,
            Item::Object,
        ),
        Table::Rows { at, grid } => {
            let mut rows = Rows {
                grid,
                out: &mut out,
                row: 0,
            };
            copy_items(
                BlobReader::at(file.clone(), at),
                &mut rows,
                false,
                Item::List,
            )
        }
    }
    .map_err(fail)?;
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

/// Where a JSON text's table is.
enum Table {
    /// A list of objects: the top-level `[` (`whole`), or the `[` of the one field of a
    /// top-level object that holds a list of objects.
    Objects { at: u64, whole: bool },
    /// Rows of values (see [`crate::grid`]): the `[` of `rows` under `columns`, or of `values`
    /// whose first row is the header (`grid` is `None` until it is read).
    Rows { at: u64, grid: Option<Grid> },
}

fn find_list(file: Arc<dyn Blob>) -> Result<Table, String> {
    match first_byte(file.clone())? {
        (b'[', at) => Ok(Table::Objects { at, whole: true }),
        (b'{', at) => {
            let lists = object_lists(file.clone(), at)?;
            if let Some(rows) = rows_of_values(&file, &lists)? {
                return Ok(rows);
            }
            let of = |items| lists.iter().filter(move |l| l.items == items);
            let mut objects = of(Items::Objects);
            let table = |at| Table::Objects { at, whole: false };
            match (objects.next(), objects.next(), of(Items::Empty).next()) {
                (Some(one), None, _) => Ok(table(one.at)),
                (Some(first), Some(_), _) => Err(format!(
                    "it holds several lists of objects ({}); query one with jq (`.{}`), or store it as its own file",
                    names(of(Items::Objects)),
                    first.key,
                )),
                // Only empty lists: an empty table.
                (None, _, Some(empty)) => Ok(table(empty.at)),
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

/// A table sent as rows of values, when the top-level object holds one: `rows` (lists, or
/// none) beside `columns` that name them, or `values` whose items are lists.
fn rows_of_values(file: &Arc<dyn Blob>, lists: &[List]) -> Result<Option<Table>, String> {
    let named = |key: &str| lists.iter().find(|l| l.key == key);
    let rows = named("rows").filter(|l| matches!(l.items, Items::Lists | Items::Empty));
    if let (Some(rows), Some(columns)) = (rows, named("columns")) {
        let types = match named("columnTypes") {
            Some(t) => Some(value_at(file, t.at)?),
            None => None,
        };
        if let Some(grid) = Grid::of_columns(&value_at(file, columns.at)?, types.as_ref()) {
            return Ok(Some(Table::Rows {
                at: rows.at,
                grid: Some(grid),
            }));
        }
    }
    Ok(named("values")
        .filter(|l| l.items == Items::Lists)
        .map(|l| Table::Rows {
            at: l.at,
            grid: None,
        }))
}

/// The JSON value that starts at `at` (a small one: a list of column names or types).
fn value_at(file: &Arc<dyn Blob>, at: u64) -> Result<serde_json::Value, String> {
    let reader = std::io::BufReader::new(BlobReader::at(file.clone(), at));
    match serde_json::Deserializer::from_reader(reader)
        .into_iter()
        .next()
    {
        Some(Ok(value)) => Ok(value),
        Some(Err(e)) => Err(e.to_string()),
        None => Err("the text ends".into()),
    }
}

/// Rows of values written as objects, one a line: each row (a list, whitespace dropped) comes
/// in whole through `write` and leaves as an object of the columns' names.
struct Rows<'a, W: Write> {
    /// `None` until the header row (`values`) is read.
    grid: Option<Grid>,
    out: &'a mut W,
    row: u64,
}

impl<W: Write> Write for Rows<'_, W> {
    fn write(&mut self, lines: &[u8]) -> std::io::Result<usize> {
        let invalid = |why: String| std::io::Error::new(std::io::ErrorKind::InvalidData, why);
        for line in lines.split(|b| *b == b'\n').filter(|l| !l.is_empty()) {
            self.row += 1;
            let row: serde_json::Value = serde_json::from_slice(line)
                .map_err(|e| invalid(format!("row {}: {e}", self.row)))?;
            let Some(grid) = &self.grid else {
                self.grid = Grid::of_header(&row);
                if self.grid.is_none() {
                    return Err(invalid(
                        "the first row of `values` is not a header of column names; use jq to \
                         read it"
                            .into(),
                    ));
                }
                continue;
            };
            let cells = row.as_array().map_or(0, Vec::len);
            let object = grid.object(row).ok_or_else(|| {
                invalid(format!(
                    "row {} has {cells} cells for {} columns",
                    self.row,
                    grid.width()
                ))
            })?;
            serde_json::to_writer(&mut *self.out, &object)?;
            self.out.write_all(b"\n")?;
        }
        Ok(lines.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        self.out.flush()
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
    Lists,
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
                        b'[' if depth == 1 => Items::Lists,
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

/// What each item of a list must be.
#[derive(Clone, Copy, PartialEq)]
enum Item {
    Object,
    List,
}

/// Copies the items of the list whose `[` is the first byte of `input` as one line each
/// (whitespace outside strings dropped). `whole` says the list is the whole text, so nothing
/// but whitespace may follow it. A line is written whole, never split across two writes.
fn copy_items(
    mut input: impl Read,
    out: &mut impl Write,
    whole: bool,
    item: Item,
) -> Result<u64, String> {
    let (open, what) = match item {
        Item::Object => (b'{', "an object"),
        Item::List => (b'[', "a list"),
    };
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
                    b if b == open && want_item => {
                        line.push(b);
                        depth = 2;
                        want_item = false;
                        items += 1;
                    }
                    b',' if !want_item => want_item = true,
                    b']' if !want_item || items == 0 => ended = true,
                    b if b == open || b == b',' || b == b']' => {
                        return Err(format!("a misplaced {:?} after item {items}", b as char));
                    }
                    _ => {
                        return Err(format!(
                            "item {} is not {what} (it starts with {:?}); use jq to read it",
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
    fn rows_of_values_become_objects_of_their_columns() {
        // A database server's answer: columns first or last, names or {name, type}, DECIMAL
        // sent as text typed by columnTypes.
        let text = r#"{"columns": ["id", "amount"], "columnTypes": ["INTEGER", "DECIMAL(9,1)"],
            "rows": [[1, "1.5"], [2, null]], "rowCount": 2}"#;
        assert_eq!(
            lines(text).unwrap(),
            "{\"id\":1,\"amount\":1.5}\n{\"id\":2,\"amount\":null}\n"
        );
        let last = r#"{"rows": [ [ "a" , [1, 2] ] ], "columns": [{"name": "k"}, {"name": "k"}]}"#;
        assert_eq!(lines(last).unwrap(), "{\"k\":\"a\",\"k_2\":[1,2]}\n");
        assert_eq!(lines(r#"{"columns": ["a"], "rows": []}"#).unwrap(), "");
        // A spreadsheet server's: the first row is the header, short rows have empty cells.
        let sheet = r#"{"range": "A1:B3", "values": [["city", "n"], ["Oslo", 3], ["Rome"]]}"#;
        assert_eq!(
            lines(sheet).unwrap(),
            "{\"city\":\"Oslo\",\"n\":3}\n{\"city\":\"Rome\",\"n\":null}\n"
        );
    }

    #[test]
    fn rows_of_values_that_do_not_fit_are_refused_with_the_row() {
        let e = lines(r#"{"columns": ["a", "b"], "rows": [[1, 2], [3]]}"#).unwrap_err();
        assert!(e.contains("row 2 has 1 cells for 2 columns"), "{e}");
        let e = lines(r#"{"values": [[1, 2], [3, 4]]}"#).unwrap_err();
        assert!(e.contains("not a header of column names"), "{e}");
        let e = lines(r#"{"values": [["a"], [1, 2]]}"#).unwrap_err();
        assert!(e.contains("row 2 has 2 cells for 1 columns"), "{e}");
        let e = lines(r#"{"columns": ["a"], "rows": [[1], 2]}"#).unwrap_err();
        assert!(e.contains("item 2 is not a list"), "{e}");
        // `columns` that name nothing: not rows of values (and no list of objects either).
        let e = lines(r#"{"columns": [1], "rows": [[1]]}"#).unwrap_err();
        assert!(e.contains("do not hold objects"), "{e}");
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
