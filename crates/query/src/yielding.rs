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
use datafusion::error::{DataFusionError, Result};
use datafusion::execution::{RecordBatchStream, SendableRecordBatchStream, TaskContext};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::ExecutionPlan;
use futures::Stream;
use tokio_util::sync::CancellationToken;

use crate::around::{Around, around_each};

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
        around_each(plan, |node| {
            (node.name() != Cancellable::NAME).then(|| Cancellable(self.0.clone()))
        })
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// An operator's output, ended as soon as the query is cancelled.
#[derive(Debug, Clone)]
pub struct Cancellable(CancellationToken);

impl Cancellable {
    const NAME: &'static str = "Cancellable";
}

impl Around for Cancellable {
    fn name(&self) -> &'static str {
        Self::NAME
    }

    fn execute(
        &self,
        input: &Arc<dyn ExecutionPlan>,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        Ok(Box::pin(CancellableStream {
            input: input.execute(partition, context)?,
            cancel: self.0.clone(),
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
