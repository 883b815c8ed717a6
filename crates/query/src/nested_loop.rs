//! A nested-loop join that does not fit in memory says so, instead of failing inside.
//!
//! DataFusion 55's nested-loop join, when the side it holds outgrows the memory pool, falls
//! back to running that side a second time and spilling it to disk. Almost no input runs twice:
//! under a repartition it panics ("partition not used yet"), a file scan or another join yields
//! nothing ("Left side produced no data to spill"). DataFusion's main branch spills from the
//! first run instead (apache/datafusion#24676, #24677); no release has it yet. Until one does,
//! each such join runs without the disk, so it fails with DataFusion's own out-of-memory error —
//! answered as "needs more memory than it may use" — and its inputs get the disk back, so a sort
//! or an aggregation under the join still spills.

use std::sync::Arc;

use datafusion::common::config::ConfigOptions;
use datafusion::common::tree_node::{Transformed, TreeNode};
use datafusion::error::Result;
use datafusion::execution::disk_manager::{DiskManagerBuilder, DiskManagerMode};
use datafusion::execution::runtime_env::{RuntimeEnv, RuntimeEnvBuilder};
use datafusion::execution::{SendableRecordBatchStream, TaskContext};
use datafusion::physical_optimizer::PhysicalOptimizerRule;
use datafusion::physical_plan::joins::NestedLoopJoinExec;
use datafusion::physical_plan::{ExecutionPlan, replace_children_if_necessary};

use crate::around::{Around, Wrapped};

/// Runs each nested-loop join without the disk and its inputs with it, in queries run in
/// the runtime it holds.
#[derive(Debug)]
pub struct NestedLoopsInMemory(pub Arc<RuntimeEnv>);

/// `runtime` with the disk turned off (the same memory pool and files).
fn without_disk(runtime: &RuntimeEnv) -> Result<Arc<RuntimeEnv>> {
    let mut builder = RuntimeEnvBuilder::from_runtime_env(runtime);
    builder.disk_manager = None;
    builder
        .with_disk_manager_builder(
            DiskManagerBuilder::default().with_mode(DiskManagerMode::Disabled),
        )
        .build_arc()
}

impl PhysicalOptimizerRule for NestedLoopsInMemory {
    fn name(&self) -> &str {
        "NestedLoopsInMemory"
    }

    fn optimize(
        &self,
        plan: Arc<dyn ExecutionPlan>,
        _config: &ConfigOptions,
    ) -> Result<Arc<dyn ExecutionPlan>> {
        // The runtime without the disk is made for the first such join (most plans have none).
        let mut no_disk = None;
        plan.transform_up(|node| {
            if !node.is::<NestedLoopJoinExec>() {
                return Ok(Transformed::no(node));
            }
            let runtime = match &no_disk {
                Some(runtime) => Arc::clone(runtime),
                None => no_disk.insert(without_disk(&self.0)?).clone(),
            };
            let inputs = node
                .children()
                .into_iter()
                .map(|input| Wrapped::plan(input.clone(), InRuntime::new("WithDisk", &self.0)))
                .collect();
            let join = replace_children_if_necessary(node, inputs)?;
            let join_alone = InRuntime::new("WithoutDisk", &runtime);
            Ok(Transformed::yes(Wrapped::plan(join, join_alone)))
        })
        .map(|t| t.data)
    }

    fn schema_check(&self) -> bool {
        true
    }
}

/// Runs its input in a runtime of its own: a join without the disk, its inputs with it.
#[derive(Debug, Clone)]
struct InRuntime {
    name: &'static str,
    runtime: Arc<RuntimeEnv>,
}

impl InRuntime {
    fn new(name: &'static str, runtime: &Arc<RuntimeEnv>) -> Self {
        let runtime = runtime.clone();
        Self { name, runtime }
    }
}

impl Around for InRuntime {
    fn name(&self) -> &'static str {
        self.name
    }

    fn execute(
        &self,
        input: &Arc<dyn ExecutionPlan>,
        partition: usize,
        context: Arc<TaskContext>,
    ) -> Result<SendableRecordBatchStream> {
        input.execute(partition, in_runtime(&context, &self.runtime))
    }
}

/// The same task in another runtime (the same memory pool and files; the disk on or off).
fn in_runtime(context: &TaskContext, runtime: &Arc<RuntimeEnv>) -> Arc<TaskContext> {
    Arc::new(TaskContext::new(
        context.task_id(),
        context.session_id(),
        context.session_config().clone(),
        context.scalar_functions().clone(),
        context.higher_order_functions().clone(),
        context.aggregate_functions().clone(),
        context.window_functions().clone(),
        runtime.clone(),
    ))
}
