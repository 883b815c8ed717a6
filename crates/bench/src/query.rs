//! `query_file` beside DuckDB: a group-by over a generated CSV of ~100 MB and over its Parquet
//! copy (written by DuckDB), each side run five times on a fresh process (Offload's asked a
//! model's turn after it read the file's columns), the median time and the peak RSS reported,
//! and beside them DataFusion's own Python build (the engine `query_file` runs, built by its
//! project) when it is installed, so a gap shows whether it is Offload's or the engine's; five
//! different questions of the CSV in turn on one session (the later ones read Offload's
//! columnar copy); then the bytes a model receives to learn the total per region with
//! `query_file` beside paging the CSV with `read_file`.

use std::io::{BufWriter, Write};
use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use offload_testkit::{TestContext, call, page, structured};
use serde_json::{Value, json};

use crate::offload::{peak_rss_mb, secs, spawn};
use crate::stats::median;

const SQL: &str =
    "SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM data GROUP BY region ORDER BY region";
const RUNS: usize = 5;

/// How long after reading a file's columns a model's question of them comes: a model's turn
/// (the schema sent to it, its SQL back) takes longer than this. Offload makes its query engine
/// ready meanwhile when the file is Parquet (`Querier::warm`).
const TURN: Duration = Duration::from_secs(1);

/// What a model does before its first question of `path`: list the allowed directories, read
/// the file's columns (`get_file_schema`), and take its turn.
async fn first_look(client: &offload_testkit::Client, path: &str) {
    call(client, "list_allowed_directories", json!({})).await;
    call(client, "get_file_schema", json!({"path": path})).await;
    tokio::time::sleep(TURN).await;
}

/// A model's questions of one file, in the order it asks them: the first is [`SQL`]; each later
/// one is another question (a month, the top ten, a filter, the extremes).
const QUESTIONS: [&str; 5] = [
    SQL,
    "SELECT COUNT(*) AS n, SUM(amount) AS total FROM data WHERE day >= '2024-06-01' AND day < '2024-07-01'",
    "SELECT id, amount FROM data ORDER BY amount DESC, id LIMIT 10",
    "SELECT region, AVG(amount) AS mean FROM data WHERE note <> 'plain' GROUP BY region ORDER BY region",
    "SELECT COUNT(DISTINCT region) AS regions, MIN(amount) AS low, MAX(amount) AS high, MAX(id) AS last FROM data",
];

/// A CSV of about `bytes` bytes: id, region, amount, day, and a quoted note (some with commas
/// and line breaks).
fn csv_file(path: &Path, bytes: u64) {
    let mut out = BufWriter::with_capacity(1 << 20, std::fs::File::create(path).unwrap());
    out.write_all(b"id,region,amount,day,note\n").unwrap();
    let regions = [
        "north", "south", "east", "west", "centre", "islands", "coast", "hills",
    ];
    let (mut written, mut i) = (0u64, 0u64);
    while written < bytes {
        let note = match i % 1000 {
            0 => "\"two\nlines\"",
            1..=9 => "\"with, comma\"",
            _ => "plain",
        };
        let row = format!(
            "{i},{},{}.{:02},2024-{:02}-{:02},{note}\n",
            regions[(i * 7 % 8) as usize],
            i * 37 % 10_000,
            i % 100,
            i % 12 + 1,
            i % 28 + 1
        );
        out.write_all(row.as_bytes()).unwrap();
        written += row.len() as u64;
        i += 1;
    }
    out.flush().unwrap();
}

fn python() -> std::path::PathBuf {
    offload_testkit::interop_dir().join(".venv/bin/python")
}

/// What a DuckDB script run in a fresh Python process printed, as JSON.
fn python_json(script: &str) -> anyhow::Result<Value> {
    let out = Command::new(python()).arg("-c").arg(script).output()?;
    anyhow::ensure!(
        out.status.success(),
        "duckdb: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Ok(serde_json::from_slice(&out.stdout)?)
}

/// DuckDB (Python) on `source` (an expression such as `read_csv('x')`): median seconds over
/// fresh processes, their peak RSS in MiB, and the rows it answered.
fn duckdb(source: &str) -> anyhow::Result<(Duration, f64, Value)> {
    let script = format!(
        r#"
import duckdb, json, resource, time
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
con.execute("CREATE VIEW data AS SELECT * FROM {source}")
t = time.perf_counter()
rows = con.execute("""{SQL}""").fetchall()
took = time.perf_counter() - t
print(json.dumps({{"secs": took, "rss_kb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, "rows": [[r[0], float(r[1]), r[2]] for r in rows]}}))
"#
    );
    let (mut times, mut peak, mut rows) = (Vec::new(), 0f64, Value::Null);
    for _ in 0..RUNS {
        let v = python_json(&script)?;
        times.push(v["secs"].as_f64().unwrap_or(f64::NAN));
        peak = peak.max(v["rss_kb"].as_f64().unwrap_or(0.0) / 1024.0);
        rows = v["rows"].clone();
    }
    Ok((Duration::from_secs_f64(median(&mut times)), peak, rows))
}

/// DataFusion's Python build on `path` (`csv` or `parquet`), as [`duckdb`] measures: median
/// seconds over fresh processes and the rows; `None` when the package is not installed.
fn datafusion(path: &Path, kind: &str) -> anyhow::Result<Option<(Duration, Value)>> {
    if version("datafusion").is_none() {
        return Ok(None);
    }
    let script = format!(
        r#"
import datafusion, json, time
config = datafusion.SessionConfig().set("datafusion.catalog.newlines_in_values", "true")
ctx = datafusion.SessionContext(config)
ctx.register_{kind}("data", "{}")
t = time.perf_counter()
rows = ctx.sql("""{SQL}""").to_pylist()
took = time.perf_counter() - t
print(json.dumps({{"secs": took, "rows": [[r["region"], float(r["total"]), r["n"]] for r in rows]}}))
"#,
        path.display()
    );
    let (mut times, mut rows) = (Vec::new(), Value::Null);
    for _ in 0..RUNS {
        let v = python_json(&script)?;
        times.push(v["secs"].as_f64().unwrap_or(f64::NAN));
        rows = v["rows"].clone();
    }
    Ok(Some((Duration::from_secs_f64(median(&mut times)), rows)))
}

/// Where `ctx`'s `offload` keeps its columnar copies.
fn copies_dir(ctx: &TestContext) -> std::path::PathBuf {
    ctx.home.join(".local/share/offload/columns")
}

/// Offload's `query_file` on `path`: median time over fresh `offload mcp` processes (each asked
/// its first question as a model asks it, [`first_look`]; none with a columnar copy), their
/// peak RSS in MiB, and the rows.
async fn offload(ctx: &TestContext, path: &str) -> anyhow::Result<(Duration, f64, Value)> {
    let (mut times, mut peak, mut rows) = (Vec::new(), 0f64, Value::Null);
    for _ in 0..RUNS {
        let _ = std::fs::remove_dir_all(copies_dir(ctx));
        let (client, pid) = spawn(ctx).await;
        first_look(&client, path).await;
        let t = Instant::now();
        let r = call(&client, "query_file", json!({"path": path, "sql": SQL})).await;
        times.push(t.elapsed().as_secs_f64());
        anyhow::ensure!(r.is_error != Some(true), "query_file: {:?}", r.content);
        peak = peak.max(peak_rss_mb(pid));
        rows = structured(&r)["rows"].clone();
        client.cancel().await?;
    }
    Ok((Duration::from_secs_f64(median(&mut times)), peak, rows))
}

/// DuckDB asking [`QUESTIONS`] in turn in one process (each reads the file again, as DuckDB
/// does over `read_csv`): the median seconds of each over fresh processes, and the answers.
fn duckdb_session(source: &str) -> anyhow::Result<(Vec<Duration>, Vec<Value>)> {
    let questions = serde_json::to_string(&QUESTIONS)?;
    let script = format!(
        r#"
import duckdb, json, time
con = duckdb.connect()
con.execute("SET enable_progress_bar = false")
con.execute("CREATE VIEW data AS SELECT * FROM {source}")
out = []
for q in json.loads({questions:?}):
    t = time.perf_counter()
    rows = con.execute(q).fetchall()
    out.append({{"secs": time.perf_counter() - t, "rows": json.loads(json.dumps(rows, default=str))}})
print(json.dumps(out))
"#
    );
    let mut times = vec![Vec::new(); QUESTIONS.len()];
    let mut answers = Vec::new();
    for _ in 0..RUNS {
        let v: Vec<Value> = serde_json::from_value(python_json(&script)?)?;
        for (i, q) in v.iter().enumerate() {
            times[i].push(q["secs"].as_f64().unwrap_or(f64::NAN));
        }
        answers = v.into_iter().map(|q| q["rows"].clone()).collect();
    }
    Ok((
        times
            .iter_mut()
            .map(|t| Duration::from_secs_f64(median(t)))
            .collect(),
        answers,
    ))
}

/// Offload asked [`QUESTIONS`] in turn on one `offload mcp`, cold (no columnar copy yet), the
/// first after a [`first_look`]; the second is asked once the first's copy is made, as a
/// model's next turn comes seconds later. Median seconds of each over fresh processes, the
/// answers, the peak RSS in MiB and the seconds the copy took to be made after the first
/// answer.
async fn offload_session(
    ctx: &TestContext,
    path: &str,
) -> anyhow::Result<(Vec<Duration>, Vec<Value>, f64, f64)> {
    let mut times = vec![Vec::new(); QUESTIONS.len()];
    let (mut answers, mut peak, mut made) = (Vec::new(), 0f64, Vec::new());
    for _ in 0..RUNS {
        let _ = std::fs::remove_dir_all(copies_dir(ctx));
        let (client, pid) = spawn(ctx).await;
        first_look(&client, path).await;
        answers.clear();
        for (i, sql) in QUESTIONS.iter().enumerate() {
            let t = Instant::now();
            let r = call(&client, "query_file", json!({"path": path, "sql": sql})).await;
            times[i].push(t.elapsed().as_secs_f64());
            anyhow::ensure!(r.is_error != Some(true), "query_file: {:?}", r.content);
            answers.push(structured(&r)["rows"].clone());
            if i == 0 {
                let t = Instant::now();
                while !has_copy(ctx) {
                    anyhow::ensure!(
                        t.elapsed() < Duration::from_secs(600),
                        "no columnar copy made within 10 minutes"
                    );
                    tokio::time::sleep(Duration::from_millis(20)).await;
                }
                made.push(t.elapsed().as_secs_f64());
            }
        }
        peak = peak.max(peak_rss_mb(pid));
        client.cancel().await?;
    }
    Ok((
        times
            .iter_mut()
            .map(|t| Duration::from_secs_f64(median(t)))
            .collect(),
        answers,
        peak,
        median(&mut made),
    ))
}

fn has_copy(ctx: &TestContext) -> bool {
    std::fs::read_dir(copies_dir(ctx)).is_ok_and(|d| {
        d.flatten()
            .any(|e| e.path().extension().is_some_and(|x| x == "parquet"))
    })
}

/// Whether two answers of any shape agree: the same cells, numbers within a millionth, dates
/// as text.
fn alike(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Array(a), Value::Array(b)) => {
            a.len() == b.len() && a.iter().zip(b).all(|(x, y)| alike(x, y))
        }
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().unwrap_or(0.0), y.as_f64().unwrap_or(1.0));
            (x - y).abs() <= 1e-6 * x.abs().max(y.abs()).max(1.0)
        }
        (Value::String(x), Value::String(y)) => {
            x.starts_with(y.as_str()) || y.starts_with(x.as_str())
        }
        (x, y) => x == y,
    }
}

/// Whether two answers agree (sums to a cent).
fn same(a: &Value, b: &Value) -> bool {
    let (Some(a), Some(b)) = (a.as_array(), b.as_array()) else {
        return false;
    };
    a.len() == b.len()
        && a.iter().zip(b).all(|(x, y)| {
            x[0] == y[0]
                && x[2] == y[2]
                && (x[1].as_f64().unwrap_or(0.0) - y[1].as_f64().unwrap_or(1.0)).abs() < 0.01
        })
}

pub async fn run(megabytes: u64) -> anyhow::Result<()> {
    anyhow::ensure!(
        python().exists(),
        "DuckDB comes from tests/interop/.venv: run scripts/setup-interop.sh"
    );
    let ctx = TestContext::new();
    ctx.write_servers(json!({}));
    let csv = ctx.root.join("sales.csv");
    let parquet = ctx.root.join("sales.parquet");
    csv_file(&csv, megabytes << 20);
    let size = std::fs::metadata(&csv)?.len();
    let status = Command::new(python())
        .arg("-c")
        .arg(format!(
            "import duckdb; duckdb.sql(\"COPY (SELECT * FROM read_csv('{}')) TO '{}' (FORMAT parquet)\")",
            csv.display(),
            parquet.display()
        ))
        .status()?;
    anyhow::ensure!(status.success(), "duckdb could not write the Parquet copy");
    let parquet_size = std::fs::metadata(&parquet)?.len();

    println!(
        "query_file beside DuckDB {} (Python), same files, median of {RUNS} fresh processes (Offload's first question {} s after the file's schema, a model's turn)",
        version("duckdb").unwrap_or_default(),
        TURN.as_secs()
    );
    println!("  {SQL}");
    println!(
        "(datafusion: DataFusion {} from PyPI, the engine query_file runs, built by its project; ratio beside DuckDB)",
        version("datafusion")
            .as_deref()
            .unwrap_or("(not installed)")
    );
    println!(
        "{:<20} {:>9} {:>9} {:>7} {:>20} {:>12} {:>12} {:>5}",
        "input", "offload", "duckdb", "ratio", "datafusion", "offload RSS", "duckdb RSS", "same"
    );
    for (label, path, source, kind) in [
        (
            format!("CSV {:.0} MB", size as f64 / 1e6),
            "sales.csv",
            format!("read_csv('{}')", csv.display()),
            "csv",
        ),
        (
            format!("Parquet {:.0} MB", parquet_size as f64 / 1e6),
            "sales.parquet",
            format!("read_parquet('{}')", parquet.display()),
            "parquet",
        ),
    ] {
        let (ours, our_rss, our_rows) = offload(&ctx, path).await?;
        let (theirs, their_rss, their_rows) = duckdb(&source)?;
        let engine = match datafusion(&ctx.root.join(path), kind)? {
            Some((t, rows)) => format!(
                "{} {:.2}x{}",
                secs(t),
                t.as_secs_f64() / theirs.as_secs_f64(),
                if same(&rows, &their_rows) { "" } else { " NO" }
            ),
            None => "not installed".to_owned(),
        };
        println!(
            "{label:<20} {:>9} {:>9} {:>6.2}x {engine:>20} {:>8.1} MiB {:>8.1} MiB {:>5}",
            secs(ours),
            secs(theirs),
            ours.as_secs_f64() / theirs.as_secs_f64(),
            our_rss,
            their_rss,
            if same(&our_rows, &their_rows) {
                "yes"
            } else {
                "NO"
            }
        );
    }

    // A model's questions of the CSV in turn: the first parses it, the next ones read its
    // columnar copy.
    let (ours, our_answers, our_rss, made) = offload_session(&ctx, "sales.csv").await?;
    let (theirs, their_answers) = duckdb_session(&format!("read_csv('{}')", csv.display()))?;
    println!();
    println!(
        "five questions of the CSV in turn, one session each side, median of {RUNS} (Offload's second asked once the first's columnar copy is made: {:.2} s after its answer; peak RSS {our_rss:.1} MiB)",
        made
    );
    println!(
        "{:<4} {:>10} {:>10} {:>8} {:>8} {:>5}  question",
        "#", "offload", "duckdb", "ratio", "target", "same"
    );
    for (i, sql) in QUESTIONS.iter().enumerate() {
        println!(
            "{:<4} {:>10} {:>10} {:>7.2}x {:>8} {:>5}  {sql}",
            i + 1,
            secs(ours[i]),
            secs(theirs[i]),
            ours[i].as_secs_f64() / theirs[i].as_secs_f64(),
            if i == 0 { "<= 1.0x" } else { "<= 0.2x" },
            if alike(&our_answers[i], &their_answers[i]) {
                "yes"
            } else {
                "NO"
            }
        );
    }

    // What a model receives: the answer, or every page of the file.
    let (client, _) = spawn(&ctx).await;
    let r = call(
        &client,
        "query_file",
        json!({"path": "sales.csv", "sql": SQL}),
    )
    .await;
    let answer = received(&r);
    let (mut paged, mut pages, mut offset) = (0u64, 0u64, 0u64);
    loop {
        let r = call(
            &client,
            "read_file",
            json!({"path": "sales.csv", "offset": offset, "length": 100_000}),
        )
        .await;
        paged += received(&r);
        pages += 1;
        match page(&r)["next_offset"].as_u64() {
            Some(next) => offset = next,
            None => break,
        }
    }
    client.cancel().await?;
    println!();
    println!("bytes the model receives to learn the total per region (text + structured content)");
    println!("  query_file: {answer} B in 1 call");
    println!(
        "  read_file paging the CSV: {paged} B in {pages} calls ({:.0}x more)",
        paged as f64 / answer as f64
    );
    Ok(())
}

fn received(r: &rmcp::model::CallToolResult) -> u64 {
    let text: usize = r
        .content
        .iter()
        .filter_map(|c| c.as_text().map(|t| t.text.len()))
        .sum();
    let structured = r
        .structured_content
        .as_ref()
        .map_or(0, |v| v.to_string().len());
    (text + structured) as u64
}

/// The version of the Python package `module` in the test venv; `None` when it is not there.
fn version(module: &str) -> Option<String> {
    Command::new(python())
        .args([
            "-c",
            &format!("import {module}; print({module}.__version__)"),
        ])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_owned())
}
