//! Totals by one short text column — the question models ask most ("total per region") — with
//! its first stage made several times cheaper.
//!
//! DataFusion aggregates in two stages: each partition sums its rows per group (the partial
//! stage), then the partials are merged. For a text key the partial stage hashes every row's
//! string and looks it up in a general hash table: a third of a first question of a Parquet file
//! (`perf`, 2026-11-29). A key of at most 12 bytes is held whole in its 16-byte string view, so a
//! row's group is found by comparing two integers in a small table. This rule gives such a
//! partial stage ([`fits`]) a [`FewGroups`] around it: the groups found that way, DataFusion's
//! own accumulators fed with them, its own partial state emitted, the same stage merging it. The
//! first longer key or group past [`table::MOST`] hands the rest of the partition to
//! DataFusion's stage as planned (what was summed so far is emitted first: a partial stage may
//! emit a group more than once, the merge adds them up).

use std::sync::{Arc, Mutex};

use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::common::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::{ExecutionPlan, InputOrderMode, replace_children_if_necessary};
use futures::{StreamExt, TryStreamExt};

use crate::around::{Around, around_each};

mod table;

use table::Table;

/// The aggregates whose partial state per group stays small (so the stage, which does not
/// count its memory, holds no more than [`table::MOST`] groups' worth).
const SMALL_STATE: [&str; 5] = ["sum", "count", "avg", "min", "max"];

/// Gives each partial stage that [`fits`] a [`FewGroups`] around it. The last rule: a stage
/// must stay [`FewGroups`]'s own input (`CancelBetweenBatches` puts its checks around both).
#[derive(Debug)]
pub struct FewGroupsFirst;

impl PhysicalOptimizerRule for FewGroupsFirst {
    fn name(&self) -> &str {
        "FewGroupsFirst"
    }

    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        around_each(plan, |node| {
            node.downcast_ref::<AggregateExec>()
                .is_some_and(fits)
                .then_some(FewGroups)
        })
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// A partial stage grouped by one text value, of aggregates with small states, no FILTER, no
/// DISTINCT, no ORDER BY inside, no limit and no sorted input.
fn fits(agg: &AggregateExec) -> bool {
    let group_by = agg.group_expr();
    let input = agg.input().schema();
    *agg.mode() == AggregateMode::Partial
        && group_by.is_single()
        && group_by.expr().len() == 1
        && group_by.expr()[0].0.data_type(&input).ok() == Some(DataType::Utf8View)
        && *agg.input_order_mode() == InputOrderMode::Linear
        && agg.limit_options().is_none()
        && agg.dynamic_expressions_produced().is_empty()
        && agg.filter_expr().iter().all(Option::is_none)
        && agg.aggr_expr().iter().all(|a| {
            SMALL_STATE.contains(&a.fun().name())
                && !a.is_distinct()
                && a.order_bys().is_empty()
                && a.groups_accumulator_supported()
        })
}

/// Runs the partial stage it is put around with the small table while the keys allow.
#[derive(Debug, Clone)]
struct FewGroups;

impl Around for FewGroups {
    fn name(&self) -> &'static str {
        "FewGroups"
    }

    fn execute(
        &self,
        stage: &Arc<dyn ExecutionPlan>,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        let agg = stage
            .downcast_ref::<AggregateExec>()
            .ok_or_else(|| DataFusionError::Internal("FewGroups's input is not a stage".into()))?;
        let mut table = Table::new(agg)?;
        let mut rows = agg.input().execute(partition, context.clone())?;
        let (stage, input_schema) = (stage.clone(), agg.input().schema());
        let run = async move {
            while let Some(batch) = rows.next().await {
                let batch = batch?;
                if table.add(&batch)? {
                    continue;
                }
                // DataFusion's stage reads this batch and the rest.
                let rest = futures::stream::once(async { Ok(batch) }).chain(rows);
                let rest = RecordBatchStreamAdapter::new(input_schema.clone(), rest);
                let rest = Replay::plan(input_schema, Box::pin(rest))?;
                let tail = replace_children_if_necessary(stage, vec![rest])?.execute(0, context)?;
                let head = table.emit()?;
                return Ok(futures::stream::iter(head.map(Ok)).chain(tail).boxed());
            }
            Ok::<_, DataFusionError>(futures::stream::iter(table.emit()?.map(Ok)).boxed())
        };
        let stream = futures::stream::once(run).try_flatten();
        Ok(Box::pin(RecordBatchStreamAdapter::new(
            agg.schema(),
            stream,
        )))
    }
}

/// The rest of a partition's input, read once by DataFusion's stage.
struct Replay {
    schema: SchemaRef,
    rows: Mutex<Option<SendableRecordBatchStream>>,
}

impl Replay {
    fn plan(schema: SchemaRef, rows: SendableRecordBatchStream) -> Result<Arc<dyn ExecutionPlan>> {
        let replay = Arc::new(Replay {
            schema: schema.clone(),
            rows: Mutex::new(Some(rows)),
        });
        Ok(Arc::new(StreamingTableExec::try_new(
            schema,
            vec![replay],
            None,
            [],
            false,
            None,
        )?))
    }
}

impl std::fmt::Debug for Replay {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Replay")
    }
}

impl PartitionStream for Replay {
    fn schema(&self) -> &SchemaRef {
        &self.schema
    }

    fn execute(&self, _: Arc<TaskContext>) -> SendableRecordBatchStream {
        let taken = self.rows.lock().ok().and_then(|mut rows| rows.take());
        taken.unwrap_or_else(|| {
            let failed = futures::stream::once(async {
                Err(DataFusionError::Internal(
                    "a partition's rest is read once".into(),
                ))
            });
            Box::pin(RecordBatchStreamAdapter::new(self.schema.clone(), failed))
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::{Float64Array, Int64Array, StringViewArray};
    use datafusion::arrow::datatypes::{Field, Schema};
    use datafusion::arrow::record_batch::RecordBatch;
    use datafusion::arrow::util::pretty::pretty_format_batches;
    use datafusion::datasource::MemTable;
    use datafusion::execution::session_state::SessionStateBuilder;
    use datafusion::physical_plan::displayable;
    use datafusion::prelude::{SessionConfig, SessionContext};

    /// Rows of (region, amount, n) in four partitions of `batches` batches each: the key the
    /// `key` function gives a row number (None: null), amounts in quarters (sums exact in any
    /// order), some amounts null.
    fn partitions(batches: usize, key: impl Fn(u64) -> Option<String>) -> Vec<Vec<RecordBatch>> {
        let schema = Arc::new(Schema::new(vec![
            Field::new("region", DataType::Utf8View, true),
            Field::new("amount", DataType::Float64, true),
            Field::new("n", DataType::Int64, false),
        ]));
        let mut state = 7u64;
        let mut next = move || {
            state = state
                .wrapping_mul(6364136223846793005)
                .wrapping_add(1442695040888963407);
            state >> 33
        };
        let mut row = 0u64;
        (0..4)
            .map(|_| {
                (0..batches)
                    .map(|_| {
                        let (mut keys, mut amounts, mut ns) = (Vec::new(), Vec::new(), Vec::new());
                        for _ in 0..1000 {
                            let r = next();
                            keys.push(key(row));
                            amounts.push((r % 17 != 0).then_some((r % 40_000) as f64 / 4.0));
                            ns.push((r % 1000) as i64 - 100);
                            row += 1;
                        }
                        RecordBatch::try_new(
                            schema.clone(),
                            vec![
                                Arc::new(StringViewArray::from_iter(keys)),
                                Arc::new(Float64Array::from(amounts)),
                                Arc::new(Int64Array::from(ns)),
                            ],
                        )
                        .unwrap()
                    })
                    .collect()
            })
            .collect()
    }

    /// `sql`'s answer over `data` as table `t` (lines sorted), and whether its plan ran a
    /// partial stage with the small table; DataFusion's own plans when `few` is false.
    async fn answer(sql: &str, data: &[Vec<RecordBatch>], few: bool) -> (Vec<String>, bool) {
        let mut state = SessionStateBuilder::new()
            .with_config(SessionConfig::new().with_target_partitions(4))
            .with_default_features();
        if few {
            state = state.with_physical_optimizer_rule(Arc::new(FewGroupsFirst));
        }
        let ctx = SessionContext::new_with_state(state.build());
        let table = MemTable::try_new(data[0][0].schema(), data.to_vec()).unwrap();
        ctx.register_table("t", Arc::new(table)).unwrap();
        let plan = ctx
            .sql(sql)
            .await
            .unwrap()
            .create_physical_plan()
            .await
            .unwrap();
        let used = displayable(plan.as_ref())
            .indent(true)
            .to_string()
            .contains("FewGroups");
        let batches = datafusion::physical_plan::collect(plan, ctx.task_ctx())
            .await
            .unwrap();
        let mut lines: Vec<String> = pretty_format_batches(&batches)
            .unwrap()
            .to_string()
            .lines()
            .map(str::to_owned)
            .collect();
        lines.sort();
        (lines, used)
    }

    async fn same_answer(sql: &str, data: &[Vec<RecordBatch>]) -> bool {
        let (theirs, _) = answer(sql, data, false).await;
        let (ours, used) = answer(sql, data, true).await;
        assert_eq!(ours, theirs, "{sql}");
        assert!(theirs.len() > 4, "{sql}: an answer with rows");
        used
    }

    const REGIONS: [&str; 9] = [
        "north",
        "south",
        "east",
        "west",
        "",
        "twelve bytes",
        "Nord",
        "nord",
        "é-ü",
    ];

    /// Keys of up to 12 bytes (the empty one and a 12-byte one among them) and nulls, a few
    /// groups or hundreds: the same answers as DataFusion's, for each aggregate kept and a key
    /// computed from a column.
    #[tokio::test]
    async fn the_small_table_answers_as_datafusion_does() {
        let data = partitions(6, |row| {
            (row % 23 != 5).then(|| REGIONS[(row * 7 % 9) as usize].to_owned())
        });
        for sql in [
            "SELECT region, SUM(amount), COUNT(*), COUNT(amount), AVG(amount), MIN(n), MAX(n), \
             MIN(amount), MAX(amount) FROM t GROUP BY region",
            "SELECT lower(region) AS r, SUM(n) AS total FROM t WHERE n > 10 GROUP BY lower(region)",
            "SELECT region, MIN(region), MAX(region), SUM(n) FROM t GROUP BY region \
             ORDER BY SUM(n) DESC",
        ] {
            assert!(
                same_answer(sql, &data).await,
                "{sql}: the small table was used"
            );
        }
        // Hundreds of groups (the slots doubled several times) with the null group among
        // them, and the empty key (whose view is the null group's placeholder) coming after.
        let grown = partitions(2, |row| match row {
            r if r % 13 == 0 => None,
            r if r > 1500 && r % 17 == 1 => Some(String::new()),
            r => Some(format!("k{}", r * 7 % 600)),
        });
        assert!(
            same_answer(
                "SELECT region, SUM(amount), COUNT(*) FROM t GROUP BY region",
                &grown
            )
            .await
        );
        // No row left for any partition: no group, as DataFusion answers.
        let none = "SELECT region, SUM(n) FROM t WHERE n > 5000 GROUP BY region";
        let (ours, used) = answer(none, &data, true).await;
        assert!(used);
        assert_eq!(ours, answer(none, &data, false).await.0);
    }

    /// A longer key after short ones, and more groups than the table keeps: DataFusion's stage
    /// takes over mid-partition, the answers unchanged.
    #[tokio::test]
    async fn longer_keys_and_many_groups_go_to_datafusions_stage() {
        let sql = "SELECT region, SUM(amount), COUNT(*), MAX(n) FROM t GROUP BY region";
        let longer = partitions(5, |row| {
            Some(match row % 4000 {
                3500.. => "a region with a long name".to_owned(),
                r => REGIONS[(r % 9) as usize].to_owned(),
            })
        });
        assert!(same_answer(sql, &longer).await);
        let many = partitions(3, |row| Some(format!("k{}", row * 31 % 3000)));
        assert!(same_answer(sql, &many).await);
        let first_batch = partitions(2, |row| Some(format!("long key number {}", row % 5)));
        assert!(same_answer(sql, &first_batch).await);
    }

    /// Aggregates with a filter, DISTINCT, or a state that grows keep DataFusion's stage.
    #[tokio::test]
    async fn other_aggregates_keep_datafusions_stage() {
        let data = partitions(2, |row| Some(REGIONS[(row % 9) as usize].to_owned()));
        for sql in [
            "SELECT region, COUNT(DISTINCT n), COUNT(DISTINCT amount) FROM t GROUP BY region",
            "SELECT region, SUM(n) FILTER (WHERE n > 0) FROM t GROUP BY region",
            "SELECT region, array_length(array_agg(n)) FROM t GROUP BY region",
            "SELECT n % 10 AS d, SUM(amount) FROM t GROUP BY n % 10",
        ] {
            assert!(!same_answer(sql, &data).await, "{sql}");
        }
    }
}
