//! SQL over each format: types, joins, errors, whole results.

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;

#[test]
fn group_by_over_a_csv_with_types_and_nulls() {
    let dir = tempfile::tempdir().unwrap();
    let a = ask(
        vec![csv(&dir, "sales.csv", SALES)],
        "SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM data GROUP BY region ORDER BY region NULLS LAST",
        &dir,
    )
    .unwrap();
    assert_eq!(
        a.columns
            .iter()
            .map(|c| (c.name.as_str(), c.kind.as_str()))
            .collect::<Vec<_>>(),
        [("region", "string"), ("total", "number"), ("n", "integer")]
    );
    assert_eq!(
        a.rows,
        vec![
            vec![json!("north"), json!(12.0), json!(2)],
            vec![json!("south"), json!(5.5), json!(1)],
            vec![json!(null), json!(1.0), json!(1)],
        ]
    );
    assert_eq!((a.row_count, a.truncated), (3, false));
}

#[test]
fn quoted_fields_with_line_breaks_and_a_late_type_change() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("id,note\n1,\"two\nlines, and a comma\"\n");
    for i in 2..30_000 {
        text.push_str(&format!("{i},x\n"));
    }
    text.push_str("not-a-number,late\n");
    let a = ask(
        vec![csv(&dir, "late.csv", &text)],
        "SELECT note, COUNT(*) AS n FROM data GROUP BY note ORDER BY n",
        &dir,
    )
    .unwrap();
    assert_eq!(a.rows[0], vec![json!("two\nlines, and a comma"), json!(1)]);
    assert_eq!(a.row_count, 3);
}

#[test]
fn unknown_columns_get_the_closest_name_and_the_position() {
    let dir = tempfile::tempdir().unwrap();
    let e = ask(
        vec![csv(&dir, "s.csv", SALES)],
        "SELECT regin, amount\nFROM data",
        &dir,
    )
    .unwrap_err();
    let m = e.to_string();
    assert!(m.contains("unknown column `regin`"), "{m}");
    assert!(m.contains("did you mean `region`?"), "{m}");
    assert!(m.contains("line 1, column 8"), "{m}");
    let e = ask(
        vec![csv(&dir, "t.csv", SALES)],
        "SELECT Region FROM data",
        &dir,
    )
    .unwrap_err();
    assert!(e.to_string().contains("did you mean `region`?"), "{e}");
}

#[test]
fn only_select_reads_and_nothing_outside_the_sources() {
    let dir = tempfile::tempdir().unwrap();
    let secret = dir.path().join("secret.csv");
    std::fs::write(&secret, "k\nsecret\n").unwrap();
    let s = secret.display();
    for sql in [
        format!("SELECT * FROM '{s}'"),
        format!("COPY data TO '{s}.out'"),
        format!("CREATE EXTERNAL TABLE x STORED AS CSV LOCATION '{s}'"),
        "CREATE TABLE x AS SELECT 1".to_owned(),
        "DROP TABLE data".to_owned(),
        "INSERT INTO data VALUES ('a', 1, NULL)".to_owned(),
        "SET datafusion.catalog.information_schema = true".to_owned(),
        "SELECT 1; SELECT 2".to_owned(),
        "EXPLAIN SELECT * FROM data".to_owned(),
        "SHOW TABLES".to_owned(),
        format!("SELECT * FROM read_csv('{s}')"),
        format!("SELECT * FROM read_parquet('{s}')"),
        "SELECT * FROM information_schema.tables".to_owned(),
        format!("SELECT * FROM \"file://{s}\""),
        "SELECT * FROM \"offload://files/t1.csv\"".to_owned(),
        "".to_owned(),
    ] {
        let r = ask(vec![csv(&dir, "s.csv", SALES)], &sql, &dir);
        match r {
            Err(QueryError::Query(_)) => {}
            other => panic!("{sql}: {other:?}"),
        }
    }
}

#[test]
fn joins_json_jsonl_parquet_and_rows() {
    let dir = tempfile::tempdir().unwrap();
    let regions = Source {
        name: "regions".into(),
        label: "regions.json".into(),
        data: Data::File {
            file: file(
                &dir,
                "regions.json",
                r#"[{"region":"north","manager":{"name":"Ann"}},{"region":"south","manager":{"name":"Bo"}}]"#,
            ),
            format: Format::Json,
        },
    };
    let targets = Source {
        name: "targets".into(),
        label: "targets.jsonl".into(),
        data: Data::File {
            file: file(
                &dir,
                "targets.jsonl",
                "{\"region\":\"north\",\"target\":20}\n{\"region\":\"south\",\"target\":3}\n",
            ),
            format: Format::Jsonl,
        },
    };
    let sheet = Source {
        name: "sheet".into(),
        label: "book.xlsx#S".into(),
        data: Data::Rows(vec![
            json!({"region": "north", "flag": true}),
            json!({"region": "south", "flag": false}),
        ]),
    };
    let a = ask(
        vec![csv(&dir, "s.csv", SALES), regions, targets, sheet],
        "SELECT d.region, r.manager['name'] AS manager, SUM(d.amount) > MAX(t.target) AS met, BOOL_AND(s.flag) AS flag \
         FROM data d JOIN regions r ON d.region = r.region JOIN targets t ON t.region = d.region \
         JOIN sheet s ON s.region = d.region GROUP BY d.region, r.manager['name'] ORDER BY d.region",
        &dir,
    )
    .unwrap();
    assert_eq!(
        a.rows,
        vec![
            vec![json!("north"), json!("Ann"), json!(false), json!(true)],
            vec![json!("south"), json!("Bo"), json!(true), json!(false)],
        ]
    );

    // Parquet: written from rows, read back by SQL, by offset, as objects, and its footer.
    let path = dir.path().join("t.parquet");
    let rows: Vec<_> = (0..1000)
        .map(|i| json!({"i": i, "s": format!("v{i}"), "f": null}))
        .collect();
    let mut out = File::create(&path).unwrap();
    let w = parquet::write_rows(&rows, &mut out).unwrap();
    out.flush().unwrap();
    assert_eq!(w.row_count, 1000);
    let schema = parquet::schema(File::open(&path).unwrap()).unwrap();
    assert_eq!(schema.rows, 1000);
    assert_eq!(schema.columns[0].name, "i");
    assert_eq!(schema.columns[0].kind, "integer");
    assert_eq!(schema.columns[0].min.as_deref(), Some("0"));
    assert_eq!(schema.columns[0].max.as_deref(), Some("999"));
    let page = parquet::read_rows(File::open(&path).unwrap(), 998, 10).unwrap();
    assert_eq!((page.columns.len(), page.total), (3, 1000));
    assert_eq!(
        page.rows,
        vec![
            vec![json!(998), json!("v998"), json!(null)],
            vec![json!(999), json!("v999"), json!(null)]
        ]
    );
    let p = Source {
        name: "data".into(),
        label: "t.parquet".into(),
        data: Data::File {
            file: Arc::new(File::open(&path).unwrap()),
            format: Format::Parquet,
        },
    };
    let a = ask(vec![p], "SELECT SUM(i) AS s, COUNT(f) AS f FROM data", &dir).unwrap();
    assert_eq!(a.rows, vec![vec![json!(499500), json!(0)]]);
}

#[test]
fn the_whole_result_is_written_in_each_format() {
    let dir = tempfile::tempdir().unwrap();
    let q = Querier::new();
    for (format, expected) in [
        (OutFormat::Csv, "region,total\nnorth,12.0\nsouth,5.5\n"),
        (OutFormat::Tsv, "region\ttotal\nnorth\t12.0\nsouth\t5.5\n"),
        (
            OutFormat::Jsonl,
            "{\"region\":\"north\",\"total\":12.0}\n{\"region\":\"south\",\"total\":5.5}\n",
        ),
        (
            OutFormat::Json,
            "[{\"region\":\"north\",\"total\":12.0},{\"region\":\"south\",\"total\":5.5}]",
        ),
    ] {
        let mut out: Vec<u8> = Vec::new();
        let w = q
            .write(
                Query {
                    sources: vec![csv(&dir, &format!("{format:?}.csv"), SALES)],
                    sql: "SELECT region, SUM(amount) AS total FROM data WHERE region IS NOT NULL GROUP BY region ORDER BY region",
                    limits: &limits(&dir),
                    cancel: &CancellationToken::new(),
                    progress: &mut |_| {},
                },
                format,
                &mut out,
            )
            .unwrap();
        assert_eq!(w.row_count, 2);
        assert_eq!(
            String::from_utf8(out).unwrap().trim_end(),
            expected.trim_end(),
            "{format:?}"
        );
    }
}

/// The JSON Offload stores big answers in: pretty-printed and compact arrays of any size (the
/// compact one spans several of DataFusion's file ranges), and an object holding one list of
/// objects (the Python SDK's `{"result": [...]}`), query like CSV does.
#[test]
fn json_arrays_pretty_compact_and_wrapped_query_like_csv() {
    let dir = tempfile::tempdir().unwrap();
    let rows: Vec<_> = (0..10)
        .map(|i| json!({"id": i, "region": if i % 2 == 0 { "north" } else { "south" }, "amount": i * 10}))
        .collect();
    let pretty = serde_json::to_string_pretty(&rows).unwrap();
    let a = ask(
        vec![json_table(&dir, "pretty.json", &pretty)],
        "SELECT region, COUNT(*) AS n, SUM(amount) AS total FROM data GROUP BY region ORDER BY region",
        &dir,
    )
    .unwrap();
    assert_eq!(
        a.rows,
        vec![
            vec![json!("north"), json!(5), json!(200)],
            vec![json!("south"), json!(5), json!(250)]
        ]
    );

    let many: Vec<_> = (0..50_000)
        .map(|i| json!({"id": i, "name": format!("user {i}"), "score": i % 7}))
        .collect();
    let compact = serde_json::to_string(&many).unwrap();
    assert!(compact.len() > 2_000_000, "spans several file ranges");
    let a = ask(
        vec![json_table(&dir, "compact.json", &compact)],
        "SELECT COUNT(*) AS n, SUM(score) AS s, MAX(name) AS last FROM data",
        &dir,
    )
    .unwrap();
    let sum: i64 = (0..50_000).map(|i| i % 7).sum();
    assert_eq!(
        a.rows,
        vec![vec![json!(50_000), json!(sum), json!("user 9999")]]
    );

    let wrapped = serde_json::to_string_pretty(&json!({"result": &many[..3]})).unwrap();
    let a = ask(
        vec![json_table(&dir, "wrapped.json", &wrapped)],
        "SELECT SUM(id) AS s FROM data",
        &dir,
    )
    .unwrap();
    assert_eq!(a.rows, vec![vec![json!(3)]]);

    // An empty list is an empty table; what is not a table says why.
    let e = ask(
        vec![json_table(&dir, "scalars.json", "[1, 2, 3]")],
        "SELECT * FROM data",
        &dir,
    )
    .unwrap_err()
    .to_string();
    assert!(
        e.contains(
            "scalars.json cannot be read as a JSON array of objects: item 1 is not an object"
        ),
        "{e}"
    );
    let e = ask(
        vec![json_table(&dir, "bad.json", "[{\"a\": 1}, {\"a\": ]")],
        "SELECT * FROM data",
        &dir,
    )
    .unwrap_err()
    .to_string();
    assert!(e.contains("bad.json"), "{e}");
}

/// A columnar copy answers as the file does: every row, types decided over the whole file (a
/// late decimal in an integer column, a quoted line break), LZ4 Parquet; a file that is not a
/// table makes no copy and says why.
#[test]
fn a_columnar_copy_answers_as_the_file_does() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("id,region,note\n");
    for i in 0..30_000 {
        text.push_str(&format!("{i},r{},plain\n", i % 3));
    }
    text.push_str("30000.5,r0,\"two\nlines\"\n");
    let copy_path = dir.path().join("copy.parquet");
    let mut out = File::create(&copy_path).unwrap();
    let written = Querier::new()
        .copy(
            csv(&dir, "late.csv", &text),
            &limits(&dir),
            &CancellationToken::new(),
            &mut out,
        )
        .unwrap();
    assert_eq!(written.row_count, 30_001);
    assert_eq!(written.columns[0].kind, "number");
    {
        use datafusion::parquet::file::reader::{FileReader, SerializedFileReader};
        let reader = SerializedFileReader::new(File::open(&copy_path).unwrap()).unwrap();
        let column = reader.metadata().row_group(0).column(0).compression();
        assert_eq!(column, datafusion::parquet::basic::Compression::LZ4_RAW);
    }
    let sql = "SELECT region, COUNT(*) AS n, SUM(id) AS s, MAX(note) AS m FROM data GROUP BY region ORDER BY region";
    let from_file = ask(vec![csv(&dir, "late2.csv", &text)], sql, &dir).unwrap();
    let copy = Source {
        name: "data".into(),
        label: "copy".into(),
        data: Data::File {
            file: Arc::new(File::open(&copy_path).unwrap()),
            format: Format::Parquet,
        },
    };
    let from_copy = ask(vec![copy], sql, &dir).unwrap();
    assert_eq!(from_copy.rows, from_file.rows);
    assert_eq!(from_copy.columns, from_file.columns);

    let e = Querier::new()
        .copy(
            json_table(&dir, "scalars.json", "[1, 2]"),
            &limits(&dir),
            &CancellationToken::new(),
            &mut Vec::new(),
        )
        .unwrap_err()
        .to_string();
    assert!(e.contains("scalars.json"), "{e}");
}

/// Long quoted values with line breaks: DataFusion's own type inference, which cut the file at
/// line ends in pieces, refused this file ("unequal lengths"); the types come from a reader that
/// follows the quotes.
#[test]
fn a_wide_csv_with_multi_line_values_is_typed_and_read() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("id,note,amount\n");
    for i in 0..30_000u64 {
        let width = 50 + (i * 7919) % 650;
        let words = "word ".repeat(width as usize / 10);
        text.push_str(&format!(
            "{i},\"{words}\nline two, with a comma {}\",{}\n",
            "x".repeat(width as usize / 2),
            i % 100
        ));
    }
    assert!(text.len() > 8 << 20, "wider than DataFusion's pieces");
    let a = ask(
        vec![csv(&dir, "wide.csv", &text)],
        "SELECT COUNT(*) AS n, SUM(amount) AS total, MAX(id) AS last FROM data",
        &dir,
    )
    .unwrap();
    let total: u64 = (0..30_000u64).map(|i| i % 100).sum();
    assert_eq!(a.rows[0], vec![json!(30_000), json!(total), json!(29_999)]);
}
