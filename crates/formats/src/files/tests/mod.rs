//! Exactness tests of the file tools against independent references: a naive whole-file reading
//! (decode everything, split on line ends) and, for UTF-8 files, `sed -n` and `tail -n`.

use std::io::Write;
use std::path::Path;

use serde_json::json;

use super::text::Budget;
use super::*;

const BIG: Budget = Budget {
    total: 1 << 30,
    line: 1 << 30,
};

/// The reference: every line of the file, decoded the simple way.
fn reference_lines(bytes: &[u8], encoding: &'static encoding_rs::Encoding) -> Vec<String> {
    let (text, _) = encoding.decode_with_bom_removal(bytes);
    if text.is_empty() {
        return Vec::new();
    }
    let sep = if text.contains('\n') || !text.contains('\r') {
        '\n'
    } else {
        '\r'
    };
    let mut lines: Vec<String> = text
        .split(sep)
        .map(|l| l.strip_suffix('\r').unwrap_or(l).to_owned())
        .collect();
    if text.ends_with(sep) {
        lines.pop();
    }
    lines
}

fn write(dir: &Path, name: &str, bytes: &[u8]) -> std::path::PathBuf {
    let path = dir.join(name);
    std::fs::File::create(&path)
        .unwrap()
        .write_all(bytes)
        .unwrap();
    path
}

fn open(path: &Path) -> std::fs::File {
    std::fs::File::open(path).unwrap()
}

fn text_file(inspector: &Inspector, path: &Path) -> text::TextFile {
    let probe = Probe::new(open(path).into(), path).unwrap();
    inspector.text(probe).unwrap()
}

/// Checks every (offset, length) class and tails, cold and then with the index built.
fn check_exact(name: &str, bytes: &[u8], encoding: &'static encoding_rs::Encoding) {
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), name, bytes);
    let expected = reference_lines(bytes, encoding);
    let total = expected.len() as u64;
    for round in ["cold", "indexed"] {
        // A fresh inspector per round for cold reads; the same one reused for indexed reads.
        let inspector = Inspector::default();
        let runs = if round == "cold" { 1 } else { 2 };
        for _ in 0..runs {
            let tf = text_file(&inspector, &path);
            let offsets = [
                0,
                1,
                total / 2,
                total.saturating_sub(3),
                total.saturating_sub(1),
                total,
                total + 5,
            ];
            for &offset in &offsets {
                for length in [1u64, 7, 1000] {
                    let page = tf.page(offset, length, BIG, &Quiet).unwrap();
                    let end = (offset + length).min(total) as usize;
                    let want = expected.get(offset as usize..end).unwrap_or_default();
                    assert_eq!(
                        page.text,
                        want.join("\n"),
                        "{name} {round}: lines [{offset}, +{length})"
                    );
                    assert_eq!(page.lines, want.len() as u64, "{name}: count at {offset}");
                    assert_eq!(page.first_line, Some(offset), "{name}: first line");
                    let next = (end as u64) < total;
                    assert_eq!(
                        page.next_offset,
                        next.then_some(end as u64),
                        "{name}: next_offset at {offset}+{length}"
                    );
                    if let Some(t) = page.total_lines {
                        assert_eq!(t, total, "{name}: total");
                    }
                }
            }
            for n in [1u64, 5, 20, total, total + 10] {
                let page = tf.tail(n, BIG).unwrap();
                let from = total.saturating_sub(n) as usize;
                assert_eq!(
                    page.text,
                    expected[from..].join("\n"),
                    "{name} {round}: tail {n}"
                );
                assert_eq!(page.lines, total - from as u64, "{name}: tail count {n}");
                if let Some(first) = page.first_line {
                    assert_eq!(first, from as u64, "{name}: tail first line");
                }
            }
            assert_eq!(tf.count_lines(&Quiet).unwrap(), total, "{name}: line count");
        }
    }
}

fn variable_lines(n: usize, seed: u64, newline: &str) -> String {
    let mut rng = fastrand::Rng::with_seed(seed);
    let pieces = ["a", "é", "日本", "😀", " ", "x,y", "\t"];
    let mut out = String::new();
    for i in 0..n {
        out.push_str(&format!("{i}:"));
        for _ in 0..rng.usize(0..40) {
            out.push_str(pieces[rng.usize(..pieces.len())]);
        }
        out.push_str(newline);
    }
    out
}

#[test]
fn fixed_and_variable_width_lines_crossing_block_boundaries() {
    // ~1.3 MB each, so pages and tails cross the 1 MiB index blocks and 64 KiB read steps.
    let fixed: String = (0..120_000).map(|i| format!("line {i:06}\n")).collect();
    check_exact("fixed.txt", fixed.as_bytes(), encoding_rs::UTF_8);
    let variable = variable_lines(25_000, 1, "\n");
    assert!(variable.len() > 1 << 20);
    check_exact("variable.txt", variable.as_bytes(), encoding_rs::UTF_8);
}

#[test]
fn crlf_cr_no_trailing_newline_and_empty_files() {
    check_exact(
        "crlf.txt",
        variable_lines(3000, 2, "\r\n").as_bytes(),
        encoding_rs::UTF_8,
    );
    check_exact(
        "cr.txt",
        variable_lines(3000, 3, "\r").as_bytes(),
        encoding_rs::UTF_8,
    );
    let mut no_end = variable_lines(500, 4, "\n");
    no_end.push_str("last line without end");
    check_exact("noend.txt", no_end.as_bytes(), encoding_rs::UTF_8);
    check_exact("empty.txt", b"", encoding_rs::UTF_8);
    check_exact("newline.txt", b"\n", encoding_rs::UTF_8);
    check_exact("blank-lines.txt", b"\n\n\na\n\n", encoding_rs::UTF_8);
    check_exact("bom.txt", b"\xef\xbb\xbfone\ntwo\n", encoding_rs::UTF_8);
}

#[test]
fn utf16_and_latin1() {
    let text = variable_lines(4000, 5, "\n");
    let mut le = vec![0xFF, 0xFE];
    le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    check_exact("le.txt", &le, encoding_rs::UTF_16LE);
    let mut be = vec![0xFE, 0xFF];
    be.extend(text.encode_utf16().flat_map(u16::to_be_bytes));
    check_exact("be.txt", &be, encoding_rs::UTF_16BE);
    let latin: String = (0..5000)
        .map(|i| format!("{i} Caf\u{e9} cr\u{e8}me br\u{fb}l\u{e9}e, na\u{ef}ve\n"))
        .collect();
    let (bytes, _, _) = encoding_rs::WINDOWS_1252.encode(&latin);
    check_exact("latin1.txt", &bytes, encoding_rs::WINDOWS_1252);
    let dir = tempfile::tempdir().unwrap();
    let path = write(dir.path(), "latin1.txt", &bytes);
    let tf = text_file(&Inspector::default(), &path);
    assert_eq!(tf.encoding.name(), "windows-1252");
}

/// The same reads as `sed -n 'A,Bp'` and `tail -n N` on a UTF-8 file.
#[test]
fn agrees_with_sed_and_tail() {
    let dir = tempfile::tempdir().unwrap();
    let text = variable_lines(60_000, 6, "\n");
    let path = write(dir.path(), "t.txt", text.as_bytes());
    let inspector = Inspector::default();
    let tf = text_file(&inspector, &path);
    for (offset, length) in [(0u64, 10u64), (29_999, 10), (59_990, 20), (12_345, 1)] {
        let sed = std::process::Command::new("sed")
            .arg("-n")
            .arg(format!("{},{}p", offset + 1, offset + length))
            .arg(&path)
            .output()
            .unwrap();
        let page = tf.page(offset, length, BIG, &Quiet).unwrap();
        assert_eq!(
            format!("{}\n", page.text),
            String::from_utf8(sed.stdout).unwrap()
        );
    }
    for n in [1u64, 20, 500] {
        let tail = std::process::Command::new("tail")
            .arg("-n")
            .arg(n.to_string())
            .arg(&path)
            .output()
            .unwrap();
        let page = tf.tail(n, BIG).unwrap();
        assert_eq!(
            format!("{}\n", page.text),
            String::from_utf8(tail.stdout).unwrap()
        );
        assert_eq!(page.lines, n);
    }
}

#[test]
fn a_20_mb_line_is_cut_and_can_be_continued() {
    let dir = tempfile::tempdir().unwrap();
    let mut line = "é".repeat(10 << 20);
    line.push_str("END\nsecond\n");
    let path = write(dir.path(), "one-line.json", line.as_bytes());
    let inspector = Inspector::default();
    let tf = text_file(&inspector, &path);
    let budget = Budget::of(64 * 1024);
    let page = tf.page(0, 10, budget, &Quiet).unwrap();
    assert_eq!(page.cut, Some("long_line"));
    assert!(page.text.len() < 65 * 1024, "{}", page.text.len());
    let next = page.next_byte_offset.unwrap();
    assert!(page.text.contains(&format!("byte_offset={next}")));
    assert_eq!(page.next_offset, Some(1));
    // Continue inside the line: whole characters, from where the cut was.
    let slice = tf.slice(next, 64 * 1024).unwrap();
    assert!(slice.text.starts_with('é') && !slice.text.contains('\u{fffd}'));
    assert_eq!(slice.first_line, None); // not indexed that far: not claimed
    // The next page starts at the next line, exactly.
    let rest = tf.page(1, 10, budget, &Quiet).unwrap();
    assert_eq!(rest.text, "second");
    // The tail shows the end of the file, and the end of a line too long for it.
    let tail = tf.tail(1, budget).unwrap();
    assert_eq!(tail.text, "second");
    let tail2 = tf.tail(2, budget).unwrap();
    assert_eq!(tail2.lines, 1, "the long line does not fit beside it");
    assert_eq!(tail2.cut, Some("budget"));
    let end = tf.slice(line.len() as u64 - 12, 64 * 1024).unwrap();
    assert_eq!(end.text, "END\nsecond\n");
    assert_eq!(end.next_byte_offset, None);
}

#[test]
fn pages_stop_at_the_budget_and_say_where_to_go_on() {
    let dir = tempfile::tempdir().unwrap();
    let text: String = (0..10_000)
        .map(|i| format!("{i:05} {}\n", "x".repeat(90)))
        .collect();
    let path = write(dir.path(), "t.txt", text.as_bytes());
    let tf = text_file(&Inspector::default(), &path);
    let page = tf.page(100, 5000, Budget::of(64 * 1024), &Quiet).unwrap();
    assert_eq!(page.cut, Some("budget"));
    let got = page.lines;
    assert!(got > 500 && got < 700, "{got}");
    assert_eq!(page.next_offset, Some(100 + got));
    assert!(page.text.starts_with("00100 ") && page.text.len() <= 64 * 1024);
    let next = tf.page(100 + got, 1, BIG, &Quiet).unwrap();
    assert!(next.text.starts_with(&format!("{:05} ", 100 + got)));
}

#[test]
fn binary_files_are_described_not_dumped() {
    let dir = tempfile::tempdir().unwrap();
    let mut gz = vec![0x1f, 0x8b, 0x08, 0x00];
    gz.extend((0..1000u32).map(|i| (i * 7 % 251) as u8));
    let path = write(dir.path(), "data.bin", &gz);
    let inspector = Inspector::default();
    let err = inspector
        .read(open(&path), &path, &ReadRequest::default(), &Quiet)
        .unwrap_err();
    assert!(matches!(err, FileError::Binary(_)), "{err}");
    let summary = inspector.summarize(open(&path), &path, 20, &Quiet).unwrap();
    assert_eq!(summary.encoding, "binary");
    assert_eq!(summary.content_type, "application/gzip");
    assert!(summary.head.is_empty());
    let schema = inspector.schema(open(&path), &path, 5, &Quiet).unwrap();
    assert_eq!(schema.format, "binary");
}

#[test]
fn summaries_follow_the_contract() {
    let dir = tempfile::tempdir().unwrap();
    let inspector = Inspector::default();
    let summarize = |name: &str, text: &str, max: u64| {
        let path = write(dir.path(), name, text.as_bytes());
        inspector
            .summarize(open(&path), &path, max, &Quiet)
            .unwrap()
    };
    let long: String = (1..=100).map(|i| format!("row {i}\n")).collect();
    let s = summarize("long.txt", &long, 20);
    assert_eq!(s.line_count, 100);
    assert!(s.line_count_exact);
    assert_eq!(s.head.lines().count(), 20);
    assert_eq!(
        s.tail.as_deref(),
        Some("row 96\nrow 97\nrow 98\nrow 99\nrow 100")
    );
    assert!(s.truncated);
    let short: String = (1..=24).map(|i| format!("row {i}\n")).collect();
    let s = summarize("short.txt", &short, 20);
    assert_eq!(s.tail, None, "24 lines is not more than 20 + 5");
    assert!(s.truncated);
    let s = summarize("tiny.txt", "a\nb\n", 20);
    assert_eq!(
        (s.head.as_str(), s.truncated, s.line_count),
        ("a\nb", false, 2)
    );
    assert_eq!(s.content_type, "text/plain");
    let wide = format!("{}\nnext\n", "w".repeat(100_000));
    let s = summarize("wide.txt", &wide, 20);
    assert!(
        s.head.len() < 1000 && s.head.ends_with("\nnext"),
        "{}",
        s.head
    );
    assert!(s.truncated);
}

fn schema_of(inspector: &Inspector, path: &Path) -> serde_json::Value {
    let schema = inspector.schema(open(path), path, 3, &Quiet).unwrap();
    serde_json::to_value(schema).unwrap()
}

#[test]
fn large_csv_is_counted_exactly_and_typed_from_across_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let mut csv = String::from("id;label;flag\n");
    let rows = 60_000;
    for i in 0..rows {
        let label = if i % 97 == 0 {
            "\"semi;colon\nand \"\"quote\"\"\"".to_owned()
        } else {
            format!("l{i}")
        };
        // `flag` is boolean until row 45,000, then text: only a spread sample can see that.
        let flag = if i < 45_000 { "true" } else { "maybe" };
        csv.push_str(&format!("{i};{label};{flag}\n"));
    }
    let path = write(dir.path(), "big.csv", csv.as_bytes());
    let inspector = Inspector::new(Settings {
        full_scan_limit: 64 * 1024,
        ..Settings::default()
    });
    let s = schema_of(&inspector, &path);
    assert_eq!(s["format"], "csv");
    assert_eq!(s["delimiter"], ";");
    assert_eq!(s["row_count"], rows);
    assert_eq!(s["typed_from"], "sample");
    assert_eq!(s["columns"][0]["type"], "integer");
    assert_eq!(s["columns"][2]["type"], "string", "{s}");
    assert!(
        s["columns"][0].get("null_count").is_none(),
        "not exact from a sample"
    );
    // The same file scanned whole gives the same count.
    let s = schema_of(&Inspector::default(), &path);
    assert_eq!(
        (s["row_count"].clone(), s["typed_from"].clone()),
        (json!(rows), json!("all_rows"))
    );
}

#[test]
fn headerless_and_tab_separated_files() {
    let dir = tempfile::tempdir().unwrap();
    let inspector = Inspector::default();
    let path = write(dir.path(), "nohead.csv", b"1,2.5,x\n2,3.5,y\n3,4,z\n");
    let s = schema_of(&inspector, &path);
    assert_eq!(s["has_header"], false);
    assert_eq!(s["row_count"], 3);
    assert_eq!(s["columns"][1]["name"], "column_2");
    let path = write(dir.path(), "t.tsv", b"a\tb\n1\t\n2\t3\n");
    let s = schema_of(&inspector, &path);
    assert_eq!(s["format"], "tsv");
    assert_eq!(s["columns"][1]["null_count"], 1);
    assert_eq!(s["columns"][1]["nullable"], true);
}

/// Excel's "Unicode text" export (UTF-16 LE with a BOM, tab-separated) and a UTF-16 BE CSV get
/// typed schemas, counted exactly across quoted line breaks and large enough to span many reads.
#[test]
fn utf16_tables_are_typed() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("id\tcity\tamount\r\n");
    let rows = 30_000;
    for i in 0..rows {
        let city = if i % 1000 == 0 {
            "\"Zürich\r\nHöngg\"".to_owned()
        } else {
            format!("Köln {i}")
        };
        text.push_str(&format!("{i}\t{city}\t{i}.25\r\n"));
    }
    let mut le = vec![0xFF, 0xFE];
    le.extend(text.encode_utf16().flat_map(u16::to_le_bytes));
    let path = write(dir.path(), "export.tsv", &le);
    let s = schema_of(&Inspector::default(), &path);
    assert_eq!(s["format"], "tsv", "{s}");
    assert_eq!(s["encoding"], "utf-16le (bom)");
    assert_eq!(s["row_count"], rows);
    assert_eq!(s["typed_from"], "all_rows");
    let types: Vec<_> = s["columns"]
        .as_array()
        .unwrap()
        .iter()
        .map(|c| (c["name"].as_str().unwrap(), c["type"].as_str().unwrap()))
        .collect();
    assert_eq!(
        types,
        [("id", "integer"), ("city", "string"), ("amount", "number")]
    );
    assert_eq!(s["columns"][1]["samples"][0], "Zürich\r\nHöngg");

    let csv = "name,n\n\"Ünïcødé, quoted\",1\nplain,2\n";
    let be: Vec<u8> = csv.encode_utf16().flat_map(u16::to_be_bytes).collect();
    let path = write(dir.path(), "be.csv", &be);
    let s = schema_of(&Inspector::default(), &path);
    assert_eq!(
        (&s["format"], &s["encoding"], &s["row_count"]),
        (&json!("csv"), &json!("utf-16be"), &json!(2)),
        "{s}"
    );
    assert_eq!(s["columns"][1]["type"], "integer");
}

#[test]
fn json_jsonl_yaml_and_xml_structures() {
    let dir = tempfile::tempdir().unwrap();
    let inspector = Inspector::default();
    let path = write(
        dir.path(),
        "a.jsonl",
        b"{\"a\": 1}\n\n{\"a\": 2, \"b\": [true]}\n",
    );
    let s = schema_of(&inspector, &path);
    assert_eq!(s["element_count"], 2);
    assert_eq!(s["outline"], "2 lines of {a: integer, b?: [boolean]}");
    let path = write(dir.path(), "bad.jsonl", b"{\"a\": 1}\n{oops\n");
    let err = inspector.schema(open(&path), &path, 3, &Quiet).unwrap_err();
    assert!(err.to_string().contains("line 2"), "{err}");
    let path = write(
        dir.path(),
        "c.yaml",
        b"name: x\nitems:\n  - 1\n  - 2\n---\nname: y\n",
    );
    let s = schema_of(&inspector, &path);
    assert_eq!(s["documents"], 2);
    assert_eq!(s["outline"], "{name: string, items?: [integer]}");
    let path = write(
        dir.path(),
        "d.xml",
        b"<?xml version=\"1.0\"?><feed v=\"1\"><entry id=\"1\"><title>a</title></entry><entry id=\"2\"><title>b</title><link/></entry><meta/></feed>",
    );
    let s = schema_of(&inspector, &path);
    assert_eq!(s["root"], "feed");
    assert_eq!(s["children"][0]["name"], "entry");
    assert_eq!(s["children"][0]["count"], 2);
    assert_eq!(s["children"][0]["children"], json!(["link", "title"]));
    assert_eq!(s["element_count"], 7);
    let path = write(
        dir.path(),
        "dtd.xml",
        b"<!DOCTYPE x [<!ENTITY a \"b\">]><x>&a;</x>",
    );
    assert!(inspector.schema(open(&path), &path, 3, &Quiet).is_err());
    let path = write(dir.path(), "notes.md", b"# Title\n\ntext\n");
    let s = schema_of(&inspector, &path);
    assert_eq!(
        (s["format"].clone(), s["line_count"].clone()),
        (json!("text"), json!(3))
    );
    assert_eq!(s["content_type"], "text/markdown");
}

#[test]
fn a_pdf_past_its_deadline_is_stopped_with_a_clear_error() {
    let dir = tempfile::tempdir().unwrap();
    let path = write(
        dir.path(),
        "r.pdf",
        &offload_testkit::docs::pdf("r", &["Hello from page 1"]),
    );
    let inspector = Inspector::new(Settings {
        pdf_deadline: std::time::Duration::ZERO,
        ..Settings::default()
    });
    let err = inspector
        .read(open(&path), &path, &ReadRequest::default(), &Quiet)
        .unwrap_err();
    assert!(matches!(err, FileError::Deadline(_)), "{err}");
    let ok = Inspector::default()
        .read(open(&path), &path, &ReadRequest::default(), &Quiet)
        .unwrap();
    assert!(ok.content.unwrap().contains("Hello from page 1"));
}

mod scans;
