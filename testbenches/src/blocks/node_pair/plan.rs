//! A directed measurement instead of random traffic (`exanet reproduce`):
//! node 0 alone sends isolated RDMA writes of the plan's sizes to one
//! destination, one at a time (the next only once the previous one's
//! completion was read), with every check of the bench still on. Each
//! transfer's timestamps ([`PlanSample`]) come from the bench's own events:
//! the doorbell accepted, the last packet's `rx_commit`, its memory write's
//! B (the completion is visible the cycle after).

use super::{NodePairBench, Phase, LAND, REGION, SOURCES};
use serde::{Deserialize, Serialize};

/// What to measure: `samples` isolated RDMA writes of each size in `sizes`
/// (bytes, in order) from node 0 to node `dest`.
#[derive(Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeasurePlan {
    /// Destination node index (not 0).
    pub dest: usize,
    /// Transfer sizes, bytes (each 1 ..= [`MAX_PLAN_BYTES`]).
    pub sizes: Vec<u64>,
    /// Transfers of each size.
    pub samples: usize,
}

/// Largest transfer of a plan (the landing window is sized for it).
pub const MAX_PLAN_BYTES: u64 = 4 << 20;

impl MeasurePlan {
    /// Errors name the field and value.
    pub fn validate(&self, nodes: usize) -> anyhow::Result<()> {
        if self.dest == 0 || self.dest >= nodes {
            anyhow::bail!(
                "measure plan: dest = {}: must be a node other than 0, below {nodes}",
                self.dest
            );
        }
        if self.samples == 0 || self.sizes.is_empty() {
            anyhow::bail!(
                "measure plan: no transfers (samples = {}, sizes = {:?})",
                self.samples,
                self.sizes
            );
        }
        if let Some(s) = self.sizes.iter().find(|&&s| s == 0 || s > MAX_PLAN_BYTES) {
            anyhow::bail!("measure plan: size {s} B: must be 1 ..= {MAX_PLAN_BYTES}");
        }
        Ok(())
    }

    /// The landing window's size the plan needs.
    pub(super) fn window(&self) -> u64 {
        let max = self.sizes.iter().copied().max().unwrap_or(0);
        REGION.max(max.next_power_of_two())
    }
}

/// One measured transfer, cycles of the bench (node 0's PL clock in the
/// node bench).
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PlanSample {
    /// Bytes.
    pub bytes: u64,
    /// DOORBELL accepted at node 0 (the AXI4-Lite write handshake).
    pub doorbell: u64,
    /// `rx_commit` of its last packet at the destination.
    pub last_commit: u64,
    /// The B of the last packet's memory write at the destination.
    pub landed: u64,
    /// The WRITE_IN completion readable at the destination (`landed + 1`).
    pub visible: u64,
}

/// The plan's progress: the next transfer, the one in flight, the log.
#[derive(Clone, Debug, Default)]
pub(super) struct PlanState {
    pub(super) plan: Option<MeasurePlan>,
    pub(super) next: usize,
    pub(super) cur: Option<PlanSample>,
    pub(super) log: Vec<PlanSample>,
}

impl NodePairBench {
    /// The same bench measuring `plan` instead of the default latency
    /// samples and the random traffic (after the set-up).
    pub fn with_plan(mut self, plan: MeasurePlan) -> anyhow::Result<Self> {
        plan.validate(self.nodes.len())?;
        self.plan.plan = Some(plan);
        Ok(self)
    }

    /// The transfers measured so far.
    pub fn plan_samples(&self) -> &[PlanSample] {
        &self.plan.log
    }

    /// Every transfer of the plan measured and its completion read.
    pub fn plan_done(&self) -> bool {
        self.plan.plan.as_ref().is_some_and(|p| {
            self.plan.log.len() == p.sizes.len() * p.samples
                && self.plan.cur.is_none()
                && self.exp_cq.is_empty()
        })
    }

    /// The landing window's size (the plan's largest transfer, at least
    /// the region).
    pub(super) fn land_size(&self) -> u64 {
        self.plan.plan.as_ref().map_or(REGION, MeasurePlan::window)
    }

    /// Software of node `n` in a plan's measurement: node 0 posts the next
    /// transfer once nothing is outstanding; the destination reads the
    /// completion once the transfer has landed.
    pub(super) fn generate_plan(&mut self, n: usize) {
        let Some(plan) = self.plan.plan.clone() else {
            return;
        };
        let waiting = !self.exp_cq.is_empty();
        if n == 0 && !waiting && self.plan.cur.is_none() && self.t_door.is_empty() {
            let k = self.plan.next;
            if k < plan.sizes.len() * plan.samples {
                self.plan.next += 1;
                self.plan_write(plan.dest, plan.sizes[k / plan.samples]);
            }
        } else if n == plan.dest && waiting && self.plan.cur.is_none() {
            self.nodes[n].poll();
        }
    }

    /// Queue the RDMA write of `len` bytes from node 0's first source
    /// region to the start of `dest`'s landing window (channel 0, no
    /// notify).
    fn plan_write(&mut self, dest: usize, len: u64) {
        self.doorbell_write(0, 0, dest, (SOURCES[0], LAND, len), false);
    }

    /// A doorbell of `len` bytes accepted at `cycle` (measurement phase).
    pub(super) fn plan_doorbell(&mut self, len: u64, cycle: u64) {
        if self.plan.plan.is_some() && self.phase == Phase::Measure {
            self.plan.cur = Some(PlanSample {
                bytes: len,
                doorbell: cycle,
                ..PlanSample::default()
            });
        }
    }

    /// The measured transfer's last packet committed at `cycle`.
    pub(super) fn plan_commit(&mut self, cycle: u64) {
        if let Some(c) = &mut self.plan.cur {
            c.last_commit = cycle;
        }
    }

    /// The measured transfer's last write landed (B) at `cycle`.
    pub(super) fn plan_landed(&mut self, cycle: u64) {
        if let Some(mut c) = self.plan.cur.take() {
            c.landed = cycle;
            c.visible = cycle + 1;
            self.plan.log.push(c);
        }
    }
}
