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
//! first longer key or group past [`MOST`] hands the rest of the partition to DataFusion's stage
//! as planned (what was summed so far is emitted first: a partial stage may emit a group more
//! than once, the merge adds them up).

use std::sync::{Arc, Mutex};

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringViewArray};
use datafusion::arrow::buffer::{NullBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::{DataType, SchemaRef};
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::ScalarValue;
use datafusion::common::config::ConfigOptions;
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::logical_expr::{ColumnarValue, EmitTo, GroupsAccumulator};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::aggregates::{AggregateExec, AggregateMode};
use datafusion::physical_plan::stream::RecordBatchStreamAdapter;
use datafusion::physical_plan::streaming::{PartitionStream, StreamingTableExec};
use datafusion::physical_plan::{ExecutionPlan, InputOrderMode, replace_children_if_necessary};
use futures::{StreamExt, TryStreamExt};

use crate::around::{Around, around_each};

/// Groups a partition's partial stage keeps in its small table; past them, DataFusion's.
const MOST: usize = 1024;

/// Slots the table starts with (a power of two); it doubles when half are taken.
const FIRST_SLOTS: usize = 32;

/// A free slot's key: no view has it (a string of 2³² - 1 bytes in the 2³² - 1th buffer).
const FREE: u128 = u128::MAX;

/// The aggregates whose partial state per group stays small (so the stage, which does not
/// count its memory, holds no more than [`MOST`] groups' worth).
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

/// The groups of one partition's partial stage: their keys (string views of at most 12 bytes)
/// in the order found, which is the null one, where each is in the table, and the
/// accumulators with their arguments; the stage's output columns.
struct Table {
    schema: SchemaRef,
    key: Arc<dyn PhysicalExpr>,
    arguments: Vec<Vec<Argument>>,
    accumulators: Vec<Box<dyn GroupsAccumulator>>,
    keys: Vec<u128>,
    null: Option<usize>,
    slots: Slots,
    groups: Vec<usize>,
}

impl Table {
    fn new(agg: &AggregateExec) -> Result<Self> {
        Ok(Self {
            schema: agg.schema(),
            key: agg.group_expr().expr()[0].0.clone(),
            arguments: agg
                .aggr_expr()
                .iter()
                .map(|a| a.expressions().into_iter().map(Argument::new).collect())
                .collect(),
            accumulators: agg
                .aggr_expr()
                .iter()
                .map(|a| a.create_groups_accumulator())
                .collect::<Result<_>>()?,
            keys: Vec::new(),
            null: None,
            slots: Slots::new(),
            groups: Vec::new(),
        })
    }

    /// Adds `batch`'s rows to their groups; false, adding none, when a key is longer than 12
    /// bytes or the groups would pass [`MOST`].
    fn add(&mut self, batch: &RecordBatch) -> Result<bool> {
        let rows = batch.num_rows();
        let key = self.key.evaluate(batch)?.into_array(rows)?;
        let Some(key) = key.as_string_view_opt() else {
            return Ok(false);
        };
        let views = key.views();
        let before = self.keys.len();
        let Self {
            keys,
            null,
            slots,
            groups,
            ..
        } = self;
        groups.clear();
        groups.reserve(rows);
        match key.nulls().filter(|n| n.null_count() > 0) {
            None => groups.extend(
                views
                    .iter()
                    .map_while(|&view| slots.group_of(keys, *null, view)),
            ),
            Some(nulls) => groups.extend(views.iter().zip(nulls.iter()).map_while(
                |(&view, valid)| match valid {
                    true => slots.group_of(keys, *null, view),
                    false => null_group(keys, null),
                },
            )),
        }
        if self.groups.len() < rows {
            self.forget_from(before);
            return Ok(false);
        }
        let total = self.keys.len();
        for (accumulator, arguments) in self.accumulators.iter_mut().zip(&mut self.arguments) {
            let values = arguments
                .iter_mut()
                .map(|a| a.of(batch))
                .collect::<Result<Vec<ArrayRef>>>()?;
            accumulator.update_batch(&values, &self.groups, None, total)?;
        }
        Ok(true)
    }

    /// Drops the groups from `first` on, found in a batch that was not added: the table then
    /// only emits (its slots are not looked at again).
    fn forget_from(&mut self, first: usize) {
        self.keys.truncate(first);
        if self.null.is_some_and(|g| g >= first) {
            self.null = None;
        }
    }

    /// The partial state of every group, as DataFusion's stage emits it (none when no row
    /// came).
    fn emit(&mut self) -> Result<Option<RecordBatch>> {
        if self.keys.is_empty() {
            return Ok(None);
        }
        let nulls = self
            .null
            .map(|null| NullBuffer::from_iter((0..self.keys.len()).map(|group| group != null)));
        let views = ScalarBuffer::from(std::mem::take(&mut self.keys));
        let keys = StringViewArray::try_new(views, Vec::new(), nulls)?;
        let mut columns: Vec<ArrayRef> = vec![Arc::new(keys)];
        for accumulator in &mut self.accumulators {
            columns.extend(accumulator.state(EmitTo::All)?);
        }
        self.null = None;
        Ok(Some(RecordBatch::try_new(self.schema.clone(), columns)?))
    }
}

/// Open addressing over a partition's keys, each slot a key with its group ([`FREE`] when
/// free): a row's group is one comparison away, in a few cache lines for a few groups.
struct Slots {
    slots: Vec<(u128, usize)>,
    /// Bits of a key's hash that choose its first slot (the slots' count's log2).
    bits: u32,
}

impl Slots {
    fn new() -> Self {
        Self {
            slots: vec![(FREE, 0); FIRST_SLOTS],
            bits: FIRST_SLOTS.trailing_zeros(),
        }
    }

    /// The group of a key's view, made at the end of `keys` when new; `None` when the key is
    /// longer than 12 bytes (not inline: it matches no inline key in the slots) or would make
    /// a group past [`MOST`]. `null` is the null group's index in `keys` (its key is no view).
    #[inline]
    fn group_of(&mut self, keys: &mut Vec<u128>, null: Option<usize>, view: u128) -> Option<usize> {
        let mask = self.slots.len() - 1;
        let mut slot = first_slot(view, self.bits);
        loop {
            match self.slots[slot] {
                (key, group) if key == view => return Some(group),
                (FREE, _) => return self.add(keys, null, view, slot),
                _ => slot = (slot + 1) & mask,
            }
        }
    }

    /// Makes the group of an inline `view` in the free `slot`; the slots doubled once half are
    /// taken.
    #[cold]
    fn add(
        &mut self,
        keys: &mut Vec<u128>,
        null: Option<usize>,
        view: u128,
        slot: usize,
    ) -> Option<usize> {
        if view as u32 > 12 {
            return None;
        }
        let group = new_group(keys, view)?;
        self.slots[slot] = (view, group);
        if 2 * keys.len() > self.slots.len() {
            self.bits += 1;
            self.slots = vec![(FREE, 0); 1 << self.bits];
            let mask = self.slots.len() - 1;
            for (group, &key) in keys.iter().enumerate() {
                if Some(group) == null {
                    continue;
                }
                let mut slot = first_slot(key, self.bits);
                while self.slots[slot].0 != FREE {
                    slot = (slot + 1) & mask;
                }
                self.slots[slot] = (key, group);
            }
        }
        Some(group)
    }
}

/// The slot a key's probe starts at: `bits` bits of its hash.
#[inline]
fn first_slot(view: u128, bits: u32) -> usize {
    let mixed = (view as u64) ^ ((view >> 64) as u64).rotate_left(29);
    (mixed.wrapping_mul(0x9E37_79B9_7F4A_7C15) >> (64 - bits)) as usize
}

/// The null group, made at the end of `keys` (its key 0 is never looked up) when new.
fn null_group(keys: &mut Vec<u128>, null: &mut Option<usize>) -> Option<usize> {
    if null.is_none() {
        *null = Some(new_group(keys, 0)?);
    }
    *null
}

/// A new group of `key` at the end of `keys`; `None` past [`MOST`].
fn new_group(keys: &mut Vec<u128>, key: u128) -> Option<usize> {
    if keys.len() == MOST {
        return None;
    }
    keys.push(key);
    Some(keys.len() - 1)
}

/// An aggregate's argument, evaluated for each batch. A constant (`COUNT(*)` counts the
/// literal 1) is made into a column once and sliced for each batch after.
struct Argument {
    expr: Arc<dyn PhysicalExpr>,
    constant: Option<(ScalarValue, ArrayRef)>,
}

impl Argument {
    fn new(expr: Arc<dyn PhysicalExpr>) -> Self {
        Self {
            expr,
            constant: None,
        }
    }

    /// Its values for `batch`'s rows.
    fn of(&mut self, batch: &RecordBatch) -> Result<ArrayRef> {
        let rows = batch.num_rows();
        let value = match self.expr.evaluate(batch)? {
            ColumnarValue::Array(values) => return Ok(values),
            ColumnarValue::Scalar(value) => value,
        };
        match &self.constant {
            Some((made, column)) if *made == value && column.len() >= rows => {
                Ok(column.slice(0, rows))
            }
            _ => {
                let column = value.to_array_of_size(rows)?;
                self.constant = Some((value, column.clone()));
                Ok(column)
            }
        }
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
    use datafusion::arrow::array::{Float64Array, Int64Array};
    use datafusion::arrow::datatypes::{Field, Schema};
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

    /// A constant argument answers each batch with as many values as it has rows, shorter
    /// and longer batches alike; a column argument is the batch's own.
    #[test]
    fn a_constant_argument_fits_every_batch() {
        use datafusion::physical_expr::expressions::{Column, Literal};
        let schema = Arc::new(Schema::new(vec![Field::new("n", DataType::Int64, false)]));
        let batch = |rows: i64| {
            RecordBatch::try_new(
                schema.clone(),
                vec![Arc::new(Int64Array::from_iter_values(0..rows))],
            )
            .unwrap()
        };
        let mut one = Argument::new(Arc::new(Literal::new(ScalarValue::Int64(Some(1)))));
        let mut n = Argument::new(Arc::new(Column::new("n", 0)));
        for rows in [8, 3, 0, 20, 5] {
            let values = one.of(&batch(rows)).unwrap();
            assert_eq!(values.len(), rows as usize);
            let ones = values.as_primitive::<datafusion::arrow::datatypes::Int64Type>();
            assert!(ones.iter().all(|v| v == Some(1)), "{rows} rows");
            assert_eq!(n.of(&batch(rows)).unwrap().len(), rows as usize);
        }
    }
}
