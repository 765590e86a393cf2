//! Job studies on the torus: application communication profiles, rank
//! placement policies, node and link failures, and batches of jobs placed
//! as nodes free up.
//!
//! * [`profile`]: a job's communication profile — ranks, and per iteration
//!   a list of phases, each a set of messages (source rank, destination
//!   rank, bytes). A phase starts when every message of the phase before it
//!   has been received, and an iteration's first phase waits for the
//!   previous iteration's last receives. Built-in generators (3D halo,
//!   data-flow graph, allreduce loop) and a CSV / JSON file format.
//! * [`route`]: the directed links a message crosses, walked hop by hop with
//!   the golden router's route compute (dimension order, shortest way round,
//!   the configured tie break), so a dead link kills exactly the jobs whose
//!   dimension-order paths use it.
//! * [`placement`]: linear, random, topology-aware and failure-aware maps
//!   of ranks onto free live nodes.
//! * [`batch`]: an event-driven run of a queue of jobs with node failures
//!   (exponential per node, from its MTBF), repairs and dead links; reports
//!   batch completion time and the aborted-run ratio. Deterministic from
//!   the seed.
//!
//! Time model (flow level, not cycle level): a phase lasts its compute time
//! plus the longest of (a) the busiest directed link's bytes at the link
//! rate, (b) the busiest rank's injected or ejected bytes at the NI rate,
//! and (c) the longest message path's zero-load latency (router cycles per
//! hop plus the link latency per hop). The paths, and so the link loads,
//! come from the golden route compute; the rates and latencies from the
//! config's `[link]`, `[clock]` and `[packet]` keys.

pub mod batch;
pub mod placement;
pub mod profile;
pub mod replay;
pub mod route;
pub mod sharing;

pub use batch::{run_batch, BatchParams, BatchReport, FailureModel, JobSpec};
pub use placement::{place, Placement, PlacementPolicy};
pub use profile::{Message, Profile};
pub use route::{Fabric, LinkId};
