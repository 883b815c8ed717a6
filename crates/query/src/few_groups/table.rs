//! The small table of [`super::FewGroups`]: a partition's groups by a key of at most 12 bytes,
//! each found by comparing the key's 16-byte string view in open-addressed slots, DataFusion's
//! own accumulators fed with them and their partial state emitted as its stage emits it.

use std::sync::Arc;

use datafusion::arrow::array::{Array, ArrayRef, AsArray, StringViewArray};
use datafusion::arrow::buffer::{NullBuffer, ScalarBuffer};
use datafusion::arrow::datatypes::SchemaRef;
use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::ScalarValue;
use datafusion::error::Result;
use datafusion::logical_expr::{ColumnarValue, EmitTo, GroupsAccumulator};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::ExecutionPlan;
use datafusion::physical_plan::aggregates::AggregateExec;

/// Groups a partition's partial stage keeps in its small table; past them, DataFusion's.
pub(super) const MOST: usize = 1024;

/// Slots the table starts with (a power of two); it doubles when half are taken.
const FIRST_SLOTS: usize = 32;

/// A free slot's key: no view has it (a string of 2³² - 1 bytes in the 2³² - 1th buffer).
const FREE: u128 = u128::MAX;

/// The groups of one partition's partial stage: their keys (string views of at most 12 bytes)
/// in the order found, which is the null one, where each is in the table, and the
/// accumulators with their arguments; the stage's output columns.
pub(super) struct Table {
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
    pub(super) fn new(agg: &AggregateExec) -> Result<Self> {
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
    pub(super) fn add(&mut self, batch: &RecordBatch) -> Result<bool> {
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
    pub(super) fn emit(&mut self) -> Result<Option<RecordBatch>> {
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

#[cfg(test)]
mod tests {
    use super::*;
    use datafusion::arrow::array::Int64Array;
    use datafusion::arrow::datatypes::{DataType, Field, Schema};

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
