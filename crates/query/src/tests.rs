use std::fs::File;
use std::io::Write as _;

use serde_json::json;
use tokio_util::sync::CancellationToken;

use super::*;

fn file(dir: &tempfile::TempDir, name: &str, text: &str) -> Arc<dyn Blob> {
    let path = dir.path().join(name);
    std::fs::write(&path, text).unwrap();
    Arc::new(std::fs::File::open(path).unwrap())
}

fn csv(dir: &tempfile::TempDir, name: &str, text: &str) -> Source {
    Source {
        name: "data".into(),
        label: name.into(),
        data: Data::File {
            file: file(dir, name, text),
            format: Format::Delimited { delimiter: b',' },
        },
    }
}

fn limits(dir: &tempfile::TempDir) -> Limits {
    Limits {
        rows: 100,
        budget: 64 * 1024,
        memory: 256 << 20,
        spill_dir: Some(dir.path().to_owned()),
    }
}

fn ask(sources: Vec<Source>, sql: &str, dir: &tempfile::TempDir) -> Result<Answer, QueryError> {
    Querier::new().answer(Query {
        sources,
        sql,
        limits: &limits(dir),
        cancel: &CancellationToken::new(),
        progress: &mut |_| {},
    })
}

const SALES: &str =
    "region,amount,day\nnorth,10,2024-01-01\nsouth,5.5,2024-01-02\nnorth,2,2024-01-03\n,1,\n";

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
fn limit_and_budget_bound_the_rows_but_not_the_count() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("n\n");
    for i in 0..5000 {
        text.push_str(&format!("{i}\n"));
    }
    let mut l = limits(&dir);
    l.rows = 10;
    let q = Querier::new();
    let a = q
        .answer(Query {
            sources: vec![csv(&dir, "n.csv", &text)],
            sql: "SELECT n FROM data",
            limits: &l,
            cancel: &CancellationToken::new(),
            progress: &mut |_| {},
        })
        .unwrap();
    assert_eq!((a.rows.len(), a.row_count, a.truncated), (10, 5000, true));
    l.rows = 1000;
    l.budget = 40;
    let a = q
        .answer(Query {
            sources: vec![csv(&dir, "m.csv", &text)],
            sql: "SELECT n FROM data ORDER BY n",
            limits: &l,
            cancel: &CancellationToken::new(),
            progress: &mut |_| {},
        })
        .unwrap();
    assert_eq!(a.rows.len(), 10, "ten rows of `[d]\\n` fit 40 bytes");
    assert!(a.truncated);
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

#[test]
fn a_cancelled_query_stops() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    cancel.cancel();
    let r = Querier::new().answer(Query {
        sources: vec![csv(&dir, "s.csv", SALES)],
        sql: "SELECT * FROM data",
        limits: &limits(&dir),
        cancel: &cancel,
        progress: &mut |_| {},
    });
    assert!(matches!(r, Err(QueryError::Cancelled)), "{r:?}");
}

#[test]
fn jq_over_json_jsonl_and_yaml() {
    let dir = tempfile::tempdir().unwrap();
    let cancel = CancellationToken::new();
    let a = run_jq(
        "[.items[] | select(.n > 1) | .name]",
        JqInput::Json(file(
            &dir,
            "a.json",
            r#"{"items":[{"name":"a","n":1},{"name":"b","n":2}]}"#,
        )),
        100,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap();
    assert_eq!(a.results, vec![json!(["b"])]);
    let a = run_jq(
        ".n",
        JqInput::Jsonl(file(&dir, "a.jsonl", "{\"n\":1}\n\n{\"n\":2}\n{\"n\":3}\n")),
        2,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap();
    assert_eq!(
        (a.results, a.count, a.truncated),
        (vec![json!(1), json!(2)], 3, true)
    );
    let a = run_jq(
        ".a.b | length",
        JqInput::Yaml(file(&dir, "a.yaml", "a:\n  b: [1, 2, 3]\n")),
        10,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap();
    assert_eq!(a.results, vec![json!(3)]);
    let e = run_jq(
        ".a | nosuch",
        JqInput::Yaml(file(&dir, "b.yaml", "a: 1\n")),
        10,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap_err();
    assert!(
        e.to_string().contains("undefined")
            && e.to_string().contains("nosuch")
            && e.to_string().contains("column 6"),
        "{e}"
    );
    let e = run_jq(
        ".a | (",
        JqInput::Yaml(file(&dir, "c.yaml", "a: 1\n")),
        10,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap_err();
    assert!(e.to_string().starts_with("jq syntax"), "{e}");
    let e = run_jq(
        ".",
        JqInput::Json(file(&dir, "big.json", "[1,2,3]")),
        10,
        1 << 20,
        3,
        &cancel,
    )
    .unwrap_err();
    assert!(e.to_string().contains("up to 3 bytes"), "{e}");
    let e = run_jq(
        ".",
        JqInput::Jsonl(file(&dir, "bad.jsonl", "{\"a\":1}\nnot json\n")),
        10,
        1 << 20,
        1 << 30,
        &cancel,
    )
    .unwrap_err();
    assert!(e.to_string().contains("line 2"), "{e}");
}

#[test]
fn a_three_way_self_join_plans_and_runs() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("n,group\n");
    for i in 0..300 {
        text.push_str(&format!("{i},g{}\n", i % 7));
    }
    let a = ask(
        vec![csv(&dir, "n.csv", &text)],
        "SELECT COUNT(*) AS c FROM data a, data b, data c WHERE a.n + b.n + c.n = 3",
        &dir,
    )
    .unwrap();
    assert_eq!(a.rows, vec![vec![json!(10)]]);
    eprintln!("ok");
}

#[test]
fn a_long_join_reports_progress_and_cancels() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("n,group\n");
    for i in 0..1500 {
        text.push_str(&format!("{i},g{}\n", i % 7));
    }
    let cancel = CancellationToken::new();
    let stop = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(std::time::Duration::from_secs(3));
        stop.cancel();
    });
    let mut seen = Vec::new();
    let started = std::time::Instant::now();
    // 3.4 billion rows to filter, holding 2.25 million (within the pool).
    let r = Querier::new().answer(Query {
        sources: vec![csv(&dir, "n.csv", &text)],
        sql: "SELECT COUNT(*) FROM data a, data b, data c WHERE a.n + b.n + c.n = -1",
        limits: &limits(&dir),
        cancel: &cancel,
        progress: &mut |n| seen.push(n),
    });
    assert!(matches!(r, Err(QueryError::Cancelled)), "{r:?}");
    // Cancelled at 3 s: the caller hears of it at once, whatever the operators are doing.
    assert!(
        started.elapsed() < std::time::Duration::from_secs(6),
        "{:?}",
        started.elapsed()
    );
    // Heard while it ran, each report above the last.
    assert!(!seen.is_empty());
    assert!(seen.windows(2).all(|w| w[0] < w[1]), "{seen:?}");
}

fn json_table(dir: &tempfile::TempDir, name: &str, text: &str) -> Source {
    Source {
        name: "data".into(),
        label: name.into(),
        data: Data::File {
            file: file(dir, name, text),
            format: Format::Json,
        },
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

/// A nested-loop join whose held side does not fit in memory says so, answered and written
/// alike (DataFusion 55's own way out panics or fails inside: see `nested_loop`); with room it
/// answers; a sort under such a join still spills to disk.
#[test]
fn a_join_too_big_for_memory_says_so_and_its_inputs_still_spill() {
    let dir = tempfile::tempdir().unwrap();
    let mut text = String::from("n,group\n");
    for i in 0..200 {
        text.push_str(&format!("{i},g{}\n", i % 7));
    }
    let sql = "SELECT COUNT(*) AS c FROM data a, data b, data c WHERE a.n + b.n + c.n = 3";
    let q = Querier::new();
    let run = |limits: &Limits, sql: &str| {
        let answer = q.answer(Query {
            sources: vec![csv(&dir, "n.csv", &text)],
            sql,
            limits,
            cancel: &CancellationToken::new(),
            progress: &mut |_| {},
        });
        let mut out: Vec<u8> = Vec::new();
        let written = q
            .write(
                Query {
                    sources: vec![csv(&dir, "n.csv", &text)],
                    sql,
                    limits,
                    cancel: &CancellationToken::new(),
                    progress: &mut |_| {},
                },
                OutFormat::Csv,
                &mut out,
            )
            .map(|w| (w.row_count, String::from_utf8(out).unwrap()));
        (answer, written)
    };
    let tight = Limits {
        memory: 1 << 20,
        ..limits(&dir)
    };
    let (answer, written) = run(&tight, sql);
    for e in [answer.unwrap_err(), written.unwrap_err()] {
        assert!(matches!(e, QueryError::Memory(_)), "{e:?}");
        assert!(
            e.to_string().contains("raise limits.queryMemoryBytes"),
            "{e}"
        );
    }
    let (answer, written) = run(&limits(&dir), sql);
    assert_eq!(answer.unwrap().rows, vec![vec![json!(10)]]);
    assert_eq!(written.unwrap(), (1, "c\n10\n".into()));

    // The sort of 40,000 rows needs more than the pool: it spills, under the join too (the
    // window ranks by group, then n downwards: groups 0-2 hold 17,144, and 3 is group 3's last).
    let mut many = String::from("n,group\n");
    for i in 0..40_000 {
        many.push_str(&format!("{i},g{}\n", i % 7));
    }
    let sorted = "SELECT MAX(a.r) AS r FROM (SELECT 3 AS k) b, (SELECT n, ROW_NUMBER() OVER (ORDER BY \"group\", n DESC) AS r FROM data) a WHERE a.n + b.k = 6";
    let a = q
        .answer(Query {
            sources: vec![csv(&dir, "many.csv", &many)],
            sql: sorted,
            limits: &Limits {
                memory: 1 << 20,
                ..limits(&dir)
            },
            cancel: &CancellationToken::new(),
            progress: &mut |_| {},
        })
        .unwrap();
    assert_eq!(a.rows, vec![vec![json!(22_858)]]);
}
