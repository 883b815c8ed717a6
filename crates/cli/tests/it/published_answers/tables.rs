//! Tables published servers answer, stored as tables.

use offload_testkit::{Client, TestContext, call, structured, text};
use serde_json::{Value, json};

use crate::interop::interop_dir;
use crate::published::{node_server, python};

/// Stores `tool`'s answer as `format` and returns the structured answer and the main file.
async fn store(
    client: &Client,
    server: &str,
    tool: &str,
    args: Value,
    format: &str,
) -> (Value, String) {
    let r = call(
        client,
        "call_tool_and_store",
        json!({"server": server, "tool_name": tool, "tool_args": args, "file_format": format}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let s = structured(&r).clone();
    let path = s["path"].as_str().unwrap().to_owned();
    (s, path)
}

fn read_csv(path: &str) -> (Vec<String>, Vec<Vec<String>>) {
    let mut rdr = csv::Reader::from_path(path).unwrap();
    let header = rdr.headers().unwrap().iter().map(str::to_owned).collect();
    let rows = rdr
        .records()
        .map(|r| r.unwrap().iter().map(str::to_owned).collect())
        .collect();
    (header, rows)
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn json_wrapped_in_a_string_field_is_stored_as_data() {
    let ctx = TestContext::new();
    let tree = ctx.root.join("tree");
    std::fs::create_dir_all(tree.join("a/b")).unwrap();
    std::fs::write(tree.join("a/x.txt"), "x").unwrap();
    ctx.write_servers(json!({
        "py": {"command": python(), "args": [interop_dir().join("str_server.py")]},
        "fs": node_server("server-filesystem", &[tree.to_str().unwrap()]),
    }));
    let client = ctx.client().await;

    // The Python SDK's {"result": "<json>"}: a real table, not one cell holding JSON.
    let (answer, path) = store(&client, "py", "rows_json", json!({"n": 50}), "csv").await;
    let (header, rows) = read_csv(&path);
    assert_eq!(header, ["id", "name", "zip"]);
    assert_eq!(rows.len(), 50);
    assert_eq!(rows[7], ["7", "user 7", "00007"]);
    assert_eq!(answer["summary"]["kind"], "table");
    assert_eq!(answer["summary"]["rows"], 50);
    // JSON keeps the data itself, and a schema of the stored file sees the rows.
    let (_, path) = store(&client, "py", "rows_json", json!({"n": 3}), "json").await;
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(stored[2]["zip"], "00002");
    let schema = call(&client, "get_file_schema", json!({"path": path})).await;
    assert!(text(&schema).contains("3"), "{}", text(&schema));
    // A string that is not JSON is the text (issue 53: not one JSON string in an object).
    let (answer, _) = store(&client, "py", "greeting", json!({"name": "Ann"}), "json").await;
    assert_eq!(answer["summary"]["kind"], "text", "{answer}");

    // server-filesystem's directory_tree answers {"content": "<json>"}.
    let (answer, path) = store(
        &client,
        "fs",
        "directory_tree",
        json!({"path": tree.to_str().unwrap()}),
        "json",
    )
    .await;
    let stored: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
    assert_eq!(stored[0]["name"], "a", "{stored}");
    assert_eq!(stored[0]["children"][0]["name"], "b");
    assert_ne!(answer["summary"]["kind"], "object", "{answer}");
    client.cancel().await.unwrap();
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn python_repr_rows_from_mcp_server_sqlite_become_a_table() {
    let ctx = TestContext::new();
    let db = ctx.work.join("t.db");
    let sqlite = interop_dir().join(".venv-legacy/bin/mcp-server-sqlite");
    ctx.write_servers(json!({"sqlite": {"command": sqlite, "args": ["--db-path", db]}}));
    let client = ctx.client().await;
    for sql in [
        "create table people (id integer, name text, zip text, note text)",
        "insert into people values (1, 'O''Brien', '01234', null), (2, 'Bob \"B\"', '12345', 'tab\there')",
    ] {
        let r = call(
            &client,
            "call_tool",
            json!({"server": "sqlite", "tool_name": "write_query", "tool_args": {"query": sql}}),
        )
        .await;
        assert_ne!(r.is_error, Some(true), "{}", text(&r));
    }
    let (answer, path) = store(
        &client,
        "sqlite",
        "read_query",
        json!({"query": "select * from people order by id"}),
        "csv",
    )
    .await;
    let (header, rows) = read_csv(&path);
    assert_eq!(header, ["id", "name", "zip", "note"]);
    assert_eq!(rows[0], ["1", "O'Brien", "01234", ""]);
    assert_eq!(rows[1], ["2", "Bob \"B\"", "12345", "tab\there"]);
    assert_eq!(answer["summary"]["rows"], 2);
    client.cancel().await.unwrap();
}

fn entities(n: usize, observation_bytes: usize) -> Value {
    let note = "x".repeat(observation_bytes);
    Value::Array(
        (0..n)
            .map(|i| json!({"name": format!("person {i}"), "entityType": "person", "observations": [note]}))
            .collect(),
    )
}

#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn server_memory_answers_stay_within_the_inline_budget_and_keep_both_tables() {
    let ctx = TestContext::new();
    let memory_file = ctx.work.join("memory.jsonl");
    let mut memory = node_server("server-memory", &[]);
    memory["env"] = json!({"MEMORY_FILE_PATH": memory_file});
    ctx.write_config(json!({
        "roots": [ctx.root],
        "mcpServers": {"memory": memory},
        "limits": {"inlineBytes": 20000},
    }));
    let client = ctx.client().await;

    // read_graph with no relations yet: two tables all the same, entities and relations.
    std::fs::write(
        ctx.root.join("few.json"),
        serde_json::to_vec(&json!({"entities": entities(3, 10)})).unwrap(),
    )
    .unwrap();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "memory", "tool_name": "create_entities", "file_path": "few.json"}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let (answer, path) = store(&client, "memory", "read_graph", json!({}), "csv").await;
    let tables = answer["summary"]["tables"].as_array().unwrap().clone();
    let names: Vec<&str> = tables.iter().map(|t| t["name"].as_str().unwrap()).collect();
    assert_eq!(names, ["entities", "relations"], "{answer}");
    assert!(path.ends_with(".entities.csv"), "{path}");
    let (header, rows) = read_csv(&path);
    assert_eq!(header, ["name", "entityType", "observations"]);
    assert_eq!(rows.len(), 3);
    let relations = tables[1]["file"].as_str().unwrap();
    assert!(std::path::Path::new(relations).exists());
    assert_eq!(tables[1]["rows"], 0);
    // The same call once relations exist gives the same two files.
    let r = call(
        &client,
        "call_tool",
        json!({"server": "memory", "tool_name": "create_relations", "tool_args": {"relations": [
            {"from": "person 0", "to": "person 1", "relationType": "knows"}]}}),
    )
    .await;
    assert_ne!(r.is_error, Some(true), "{}", text(&r));
    let (answer, _) = store(&client, "memory", "read_graph", json!({}), "csv").await;
    let tables = answer["summary"]["tables"].as_array().unwrap();
    assert_eq!(tables[1]["rows"], 1);
    let (header, rows) = read_csv(tables[1]["file"].as_str().unwrap());
    assert_eq!(header, ["from", "to", "relationType"]);
    assert_eq!(rows[0], ["person 0", "person 1", "knows"]);
    // Markdown holds both, one section each.
    let (_, path) = store(&client, "memory", "read_graph", json!({}), "md").await;
    let md = std::fs::read_to_string(&path).unwrap();
    assert!(
        md.contains("## entities") && md.contains("## relations"),
        "{md}"
    );

    // create_entities echoes what it created: 200 entities of 500 bytes is ~110 KB, over the
    // 20 KB budget: stored and linked, with the reason, never put in the model's context.
    std::fs::write(
        ctx.root.join("many.json"),
        serde_json::to_vec(&json!({"entities": entities(200, 500)})).unwrap(),
    )
    .unwrap();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "memory", "tool_name": "create_entities", "file_path": "many.json"}),
    )
    .await;
    let size = serde_json::to_string(&r).unwrap().len();
    assert!(size < 20000, "{size} bytes");
    assert!(
        text(&r).contains("larger than the inline budget"),
        "{}",
        text(&r)
    );
    assert!(structured(&r)["path"].as_str().is_some());
    // Batch mode: the last batch's echo is over the budget too.
    let lines: Vec<String> = entities(400, 500)
        .as_array()
        .unwrap()
        .iter()
        .enumerate()
        .map(|(i, e)| {
            let mut e = e.clone();
            e["name"] = json!(format!("batch person {i}"));
            e.to_string()
        })
        .collect();
    std::fs::write(ctx.root.join("more.jsonl"), lines.join("\n")).unwrap();
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "memory", "tool_name": "create_entities", "file_path": "more.jsonl",
               "data_key": "entities", "batch_size": 200}),
    )
    .await;
    let size = serde_json::to_string(&r).unwrap().len();
    assert!(size < 20000, "{size} bytes: {}", text(&r));
    let s = structured(&r);
    assert_eq!(s["succeeded"], 2, "{s}");
    assert!(s["last_result"]["path"].as_str().is_some(), "{s}");
    assert!(text(&r).contains("was stored at"), "{}", text(&r));
    // output_format string is bounded the same way.
    let r = call(
        &client,
        "call_tool_with_file_content",
        json!({"server": "memory", "tool_name": "read_graph", "file_path": "few.json",
               "data_key": "ignored", "output_format": "string"}),
    )
    .await;
    let size = serde_json::to_string(&r).unwrap().len();
    assert!(size < 20000, "{size} bytes: {}", text(&r));
    client.cancel().await.unwrap();
}

fn tables_venv(bin: &str) -> std::path::PathBuf {
    interop_dir().join(".venv-tables/bin").join(bin)
}

/// Tables sent as rows of values by published servers — mcp-server-motherduck's `{columns,
/// rows: [[…]]}` (as JSON text inside the SDK's `{"result": …}`), excel-mcp-server's `{range,
/// values: [[header…], […]]}` — are stored as tables: CSV has a row per row, `query_file`'s SQL
/// and jq count and add up what the source holds (issue 53: the CSV had one row per field, and
/// `count(*)` answered 5 for 600 rows); and the same answers saved by a user as JSON files are
/// queried as tables too.
#[tokio::test]
#[ignore = "needs published peers: run scripts/setup-interop.sh"]
async fn rows_of_values_from_database_and_spreadsheet_servers_are_tables() {
    let ctx = TestContext::new();
    let db = ctx.root.join("sales.duckdb");
    let books = ctx.root.join("books");
    std::fs::create_dir_all(&books).unwrap();
    // The source files, written by the servers' own libraries (duckdb 1.5.6, openpyxl).
    let made = std::process::Command::new(tables_venv("python"))
        .arg("-c")
        .arg(
            "import sys, duckdb, openpyxl\n\
             c = duckdb.connect(sys.argv[1])\n\
             c.execute(\"create table t as select i as id, ['Paris','Berlin','Tokyo','Lima'][i % 4 + 1] as city, i * 1.5 as amount from range(1, 601) r(i)\")\n\
             c.close()\n\
             wb = openpyxl.Workbook(); ws = wb.active; ws.title = 'Sheet1'\n\
             ws.append(['id', 'city', 'amount'])\n\
             [ws.append([i, ['Paris','Berlin','Tokyo','Lima'][i % 4], i * 1.5]) for i in range(1, 601)]\n\
             wb.save(sys.argv[2] + '/sales.xlsx')\n",
        )
        .arg(&db)
        .arg(&books)
        .status()
        .unwrap();
    assert!(made.success());
    let ctx_servers = json!({
        "duck": {"command": tables_venv("mcp-server-motherduck"), "args": ["--db-path", db]},
        "excel": {"command": tables_venv("excel-mcp-server"), "args": ["stdio", "--allow-dir", books]},
    });
    ctx.write_servers(ctx_servers.clone());
    let client = ctx.client().await;
    let total = (1..=600).map(|i| f64::from(i) * 1.5).sum::<f64>();
    let sums = |path: String| {
        let client = &client;
        async move {
            let r = call(
                client,
                "query_file",
                json!({"path": path, "sql": "SELECT count(*) AS n, sum(amount) AS s, count(DISTINCT city) AS c FROM data"}),
            )
            .await;
            let head: String = std::fs::read_to_string(&path)
                .unwrap()
                .chars()
                .take(1500)
                .collect();
            assert_ne!(r.is_error, Some(true), "{}\n{path}:\n{head}", text(&r));
            structured(&r)["rows"][0].clone()
        }
    };
    let answers = [
        (
            "duck",
            "execute_query",
            json!({"sql": "SELECT * FROM t ORDER BY id"}),
        ),
        (
            "excel",
            "read_range",
            json!({"path": "sales.xlsx", "sheet": "Sheet1", "range": "A1:C601"}),
        ),
    ];
    for (server, tool, args) in answers {
        // The server's own answer, saved by a user as a JSON file (not through the store):
        // `query_file` reads its rows of values as the table they are.
        let entry = &ctx_servers[server];
        let mut direct = tokio::process::Command::new(entry["command"].as_str().unwrap());
        direct.args(
            entry["args"]
                .as_array()
                .unwrap()
                .iter()
                .map(|a| a.as_str().unwrap()),
        );
        let own = offload_testkit::connect(direct).await;
        let raw = text(&call(&own, tool, args.clone()).await);
        own.cancel().await.unwrap();
        let saved = ctx.root.join(format!("{server}-answer.json"));
        std::fs::write(&saved, &raw).unwrap();
        assert!(raw.trim_start().starts_with('{'), "{server}: {raw:.300}");
        let row = sums(saved.display().to_string()).await;
        assert_eq!(row[0], 600, "{server}'s own file: {row}");
        assert!(
            (row[1].as_f64().unwrap() - total).abs() < 1e-6,
            "{server}'s own file: {row}"
        );
        // Stored as the tool answers it (JSON): a table of 600 rows, summed exactly.
        let (answer, path) = store(&client, server, tool, args.clone(), "json").await;
        assert_eq!(answer["summary"]["kind"], "table", "{server}: {answer}");
        assert_eq!(answer["summary"]["rows"], 600, "{server}: {answer}");
        let row = sums(path.clone()).await;
        assert_eq!(row[0], 600, "{server}: {row}");
        assert!(
            (row[1].as_f64().unwrap() - total).abs() < 1e-6,
            "{server}: {row}"
        );
        assert_eq!(row[2], 4, "{server}: {row}");
        let field = answer["summary"]["table_path"].as_str().unwrap().to_owned();
        let r = call(
            &client,
            "query_file",
            json!({"path": path, "jq": format!(".{field} | map(.amount) | add")}),
        )
        .await;
        assert!(
            text(&r).contains(&total.to_string()),
            "{server}: {}",
            text(&r)
        );
        // As CSV: a row per row, the header from the columns.
        let (_, path) = store(&client, server, tool, args, "csv").await;
        let (header, rows) = read_csv(&path);
        assert_eq!(header, ["id", "city", "amount"], "{server}");
        assert_eq!(rows.len(), 600, "{server}");
        assert_eq!(rows[1][..2], ["2", "Tokyo"], "{server}: {:?}", rows[1]);
        let row = sums(path).await;
        assert_eq!(row[0], 600, "{server}: {row}");
    }
    client.cancel().await.unwrap();
}
