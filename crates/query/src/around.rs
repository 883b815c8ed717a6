//! Operators Offload puts around DataFusion's: each passes its one input through unchanged and
//! changes only how it runs (see [`Around`]).

use std::sync::Arc;

use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};

/// How a [`Wrapped`] operator runs its input.
pub trait Around: std::fmt::Debug + Clone + Send + Sync + 'static {
    /// The operator's name in plans.
    fn name(&self) -> &'static str;

    fn execute(
        &self,
        input: &Arc<dyn ExecutionPlan>,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream>;
}

/// An operator with the same output as its input, run the way `A` says.
#[derive(Debug)]
pub struct Wrapped<A> {
    input: Arc<dyn ExecutionPlan>,
    around: A,
}

impl<A: Around> Wrapped<A> {
    pub fn plan(input: Arc<dyn ExecutionPlan>, around: A) -> Arc<dyn ExecutionPlan> {
        Arc::new(Self { input, around })
    }
}

/// `plan` with each operator for which `pick` gives an `A` put inside a [`Wrapped`] of it.
pub fn around_each<A: Around>(
    plan: Arc<dyn ExecutionPlan>,
    pick: impl Fn(&Arc<dyn ExecutionPlan>) -> Option<A>,
) -> Result<Arc<dyn ExecutionPlan>> {
    plan.transform_up(|node| {
        Ok(match pick(&node) {
            Some(around) => Transformed::yes(Wrapped::plan(node, around)),
            None => Transformed::no(node),
        })
    })
    .map(|t| t.data)
}

impl<A: Around> DisplayAs for Wrapped<A> {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", self.around.name())
    }
}

impl<A: Around> ExecutionPlan for Wrapped<A> {
    fn name(&self) -> &str {
        self.around.name()
    }

    fn properties(&self) -> &Arc<PlanProperties> {
        self.input.properties()
    }

    fn maintains_input_order(&self) -> Vec<bool> {
        vec![true]
    }

    fn children(&self) -> Vec<&Arc<dyn ExecutionPlan>> {
        vec![&self.input]
    }

    fn apply_expressions(
        &self,
        _: &mut dyn FnMut(&Arc<dyn PhysicalExpr>) -> Result<TreeNodeRecursion>,
    ) -> Result<TreeNodeRecursion> {
        // It holds no expressions of its own.
        Ok(TreeNodeRecursion::Continue)
    }

    fn with_new_children(
        self: Arc<Self>,
        mut children: Vec<Arc<dyn ExecutionPlan>>,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        if children.len() != 1 {
            return Err(DataFusionError::Internal(format!(
                "{} takes one input, not {}",
                self.around.name(),
                children.len()
            )));
        }
        Ok(Self::plan(children.swap_remove(0), self.around.clone()))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        self.around.execute(&self.input, partition, context)
    }
}
