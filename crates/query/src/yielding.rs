//! A cancelled query stops between two batches of any operator.
//!
//! DataFusion's scans yield to the executor now and then, but an operator that loops over data
//! it already holds — a cross join feeding a filter that drops every row — can compute for
//! minutes inside one poll, and a cancellation that waits for the poll to return waits that
//! long. This rule, run after DataFusion's own, puts a [`Cancellable`] above every operator: its
//! stream checks the query's token before asking its input for the next batch and ends the
//! stream with an error once the token fires, which stops every operator above it at once.

use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use datafusion::arrow::record_batch::RecordBatch;
use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode, TreeNodeRecursion};
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use datafusion::physical_expr::PhysicalExpr;
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::{DisplayAs, DisplayFormatType, ExecutionPlan, PlanProperties};
use futures::Stream;
use tokio_util::sync::CancellationToken;

/// The message of the error a cancelled stream ends with.
pub const CANCELLED: &str = "offload: query cancelled";

/// Puts a [`Cancellable`] above every operator of a plan.
#[derive(Debug)]
pub struct CancelBetweenBatches(pub CancellationToken);

impl PhysicalOptimizerRule for CancelBetweenBatches {
    fn name(&self) -> &str {
        "CancelBetweenBatches"
    }

    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        plan.transform_up(|node| {
            if node.name() == Cancellable::NAME {
                return Ok(Transformed::no(node));
            }
            Ok(Transformed::yes(Arc::new(Cancellable {
                input: node,
                cancel: self.0.clone(),
            }) as Arc<dyn ExecutionPlan>))
        })
        .map(|t| t.data)
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// An operator's output, ended as soon as the query is cancelled.
#[derive(Debug)]
pub struct Cancellable {
    input: Arc<dyn ExecutionPlan>,
    cancel: CancellationToken,
}

impl Cancellable {
    const NAME: &str = "Cancellable";
}

impl DisplayAs for Cancellable {
    fn fmt_as(&self, _: DisplayFormatType, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}", Self::NAME)
    }
}

impl ExecutionPlan for Cancellable {
    fn name(&self) -> &str {
        Self::NAME
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
                Self::NAME,
                children.len()
            )));
        }
        Ok(Arc::new(Self {
            input: children.swap_remove(0),
            cancel: self.cancel.clone(),
        }))
    }

    fn execute(
        &self,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        Ok(Box::pin(CancellableStream {
            input: self.input.execute(partition, context)?,
            cancel: self.cancel.clone(),
        }))
    }
}

struct CancellableStream {
    input: SendableRecordBatchStream,
    cancel: CancellationToken,
}

impl Stream for CancellableStream {
    type Item = Result<RecordBatch>;

    fn poll_next(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Option<Self::Item>> {
        if self.cancel.is_cancelled() {
            return Poll::Ready(Some(Err(DataFusionError::Execution(CANCELLED.into()))));
        }
        self.input.as_mut().poll_next(cx)
    }
}

impl RecordBatchStream for CancellableStream {
    fn schema(&self) -> datafusion::arrow::datatypes::SchemaRef {
        self.input.schema()
    }
}
