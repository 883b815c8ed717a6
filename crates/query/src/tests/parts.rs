//! Big CSV files read in parts (`csv_parts`): the same answers as read whole, and the file's
//! order where the question depends on it.

use serde_json::json;

use super::*;

/// A CSV whose notes hold line breaks, commas and doubled quotes.
fn notes(rows: usize) -> String {
    let mut text = String::from("id,region,note,amount\n");
    for i in 0..rows {
        let note = match i % 3 {
            0 => "\"two\nlines, a comma\"".to_owned(),
            1 => format!("\"said \"\"{i}\"\"\""),
            _ => "plain".to_owned(),
        };
        let region = ["north", "south", "east", ""][i % 4];
        text.push_str(&format!("{i},{region},{note},{}\n", (i * 37) % 1000));
    }
    text
}

fn ask_with(q: &Querier, source: Source, sql: &str, dir: &tempfile::TempDir) -> Answer {
    q.answer(Query {
        sources: vec![source],
        sql,
        limits: &limits(dir),
        cancel: &CancellationToken::new(),
        progress: &mut |_| {},
    })
    .unwrap()
}

#[test]
fn answers_read_in_parts_are_those_read_whole() {
    let dir = tempfile::tempdir().unwrap();
    let text = notes(30_000);
    let parts = Querier::spreading_from(1024);
    let whole = Querier::new();
    for sql in [
        "SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM data GROUP BY region ORDER BY region",
        "SELECT id, note FROM data ORDER BY amount DESC, id LIMIT 5",
        "SELECT COUNT(DISTINCT note) AS n, MIN(amount), MAX(amount), AVG(amount) FROM data",
        "SELECT region, COUNT(*) FROM data WHERE note LIKE '%lines%' GROUP BY region ORDER BY 1",
    ] {
        let a = ask_with(&whole, csv(&dir, "a.csv", &text), sql, &dir);
        let b = ask_with(&parts, csv(&dir, "b.csv", &text), sql, &dir);
        assert_eq!(a.rows, b.rows, "{sql}");
        assert_eq!(a.row_count, b.row_count, "{sql}");
    }
    let a = ask_with(
        &parts,
        csv(&dir, "c.csv", &text),
        "SELECT COUNT(*), SUM(amount) FROM data",
        &dir,
    );
    let total: usize = (0..30_000).map(|i| (i * 37) % 1000).sum();
    assert_eq!(a.rows[0], vec![json!(30_000), json!(total)]);
}

#[test]
fn a_question_that_depends_on_row_order_gets_the_files_order() {
    let dir = tempfile::tempdir().unwrap();
    let parts = Querier::spreading_from(1024);
    let a = ask_with(
        &parts,
        csv(&dir, "a.csv", &notes(30_000)),
        "SELECT id FROM data WHERE amount >= 0 LIMIT 4",
        &dir,
    );
    assert_eq!(
        a.rows,
        vec![
            vec![json!(0)],
            vec![json!(1)],
            vec![json!(2)],
            vec![json!(3)]
        ]
    );
}
