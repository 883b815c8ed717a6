//! The query engine made ready before a model's first question of a Parquet file.
//!
//! A process's first query pays once for what later ones find done: the query runtime's
//! threads, DataFusion's functions and planner, the code that reads Parquet, groups and sorts
//! paged in from disk, the allocator's pools grown. That was a third of a first question of
//! a 12 MB Parquet file (38 ms beside 26 ms for the same question asked again). A model asks
//! its question a turn after it reads the file's columns, so the engine asks a small one of its
//! own then (see the engine's `get_file_schema`): the question models ask most (totals by
//! group, filtered and sorted) of a small Parquet file made in memory.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;

use crate::{Answer, Data, Format, Limits, Querier, Query, QueryError, Source, parquet};

/// Regions of the warm-up's file, and its rows (as many in each region).
const GROUPS: usize = 12;
const ROWS: usize = GROUPS * 170;
const SQL: &str = "SELECT region, SUM(amount) AS total, COUNT(*) AS n FROM warm \
                   WHERE amount >= 0 GROUP BY region ORDER BY total DESC, region LIMIT 10";

impl Querier {
    /// Asks the warm-up question, once in this querier's life (blocking); whether this call
    /// asked it. Its answer is dropped: only what it leaves ready counts.
    pub fn warm(&self) -> Result<bool, QueryError> {
        if self.warmed.swap(true, Ordering::AcqRel) {
            return Ok(false);
        }
        self.warm_answer().map(|_| true)
    }

    /// The warm-up question's answer.
    pub(crate) fn warm_answer(&self) -> Result<Answer, QueryError> {
        let rows: Vec<Value> = (0..ROWS)
            .map(|i| json!({"region": format!("region {}", i % GROUPS), "amount": i as f64 / 4.0}))
            .collect();
        let mut file = Vec::new();
        parquet::write_rows(&rows, &mut file)?;
        let source = Source {
            name: "warm".into(),
            label: "warm.parquet".into(),
            data: Data::File {
                file: Arc::new(bytes::Bytes::from(file)),
                format: Format::Parquet,
            },
        };
        let limits = Limits {
            rows: GROUPS,
            budget: 1 << 16,
            memory: 64 << 20,
            spill_dir: None,
        };
        self.answer(Query {
            sources: vec![source],
            sql: SQL,
            limits: &limits,
            cancel: &CancellationToken::new(),
            progress: &mut |_| {},
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The warm-up reads Parquet, filters, groups, sums, counts and sorts, and answers rightly;
    /// it runs once.
    #[test]
    fn warm_up_asks_a_real_question_once() {
        let q = Querier::new();
        let answer = q.warm_answer().unwrap();
        assert_eq!(answer.row_count, 10);
        // Region 11 holds the rows 11, 23, ..., 2039, as many as any: the largest total.
        let n = (ROWS / GROUPS) as f64;
        let total: f64 = (0..ROWS)
            .filter(|i| i % GROUPS == 11)
            .map(|i| i as f64 / 4.0)
            .sum();
        assert_eq!(answer.rows[0][0], json!("region 11"));
        assert_eq!(answer.rows[0][1].as_f64(), Some(total));
        assert_eq!(answer.rows[0][2].as_f64(), Some(n));

        let fresh = Querier::new();
        assert!(fresh.runtime.get().is_none());
        assert!(fresh.warm().unwrap(), "the first call asks");
        assert!(
            fresh.runtime.get().is_some(),
            "the query runtime is started"
        );
        assert!(!fresh.warm().unwrap(), "later calls do not");
    }
}
